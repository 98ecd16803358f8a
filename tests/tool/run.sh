#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace run -- PROGRAM`: records the program, prints the summary,
# exits with the program's status (128+N when killed by signal N), and leaves
# no session and no daemon of its own behind.
# The program is the generator and the "shim" the tracepoint provider (a
# harmless stand-in: the shim and its test double get their own test).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
CUBATCHTRACE_SHIM="$top_builddir/src/.libs/libcubatchtrace-tp.so"; export CUBATCHTRACE_SHIM
[ -f "$CUBATCHTRACE_SHIM" ] || skip_all "libcubatchtrace-tp.so not built"

run_bg() { # run_bg OUT-DIR CBT-RUN-ARGS...: runs in the background, sets $st and $runpid
    _o=$1; shift
    "$CBT" run -o "$_o" "$@" >"$CBT_TMP/run.out" 2>"$CBT_TMP/run.err" &
    runpid=$!
    wait $runpid
    st=$?
}

# 4 small batches, then 2 batches of 130 ops whose every operand is distinct
# (the largest chunk events: 64 ops, 128 operands), with two ops writing the same bytes
run_bg "$CBT_TMP/t1" --json -- "$GEN" --pidfile "$CBT_TMP/t1.pid" n=4,ops=3,bytes=10 \
    n=2,ops=130,distinct=1,violate=overlap_dst_dst@5 --exit 3
is "$st" 3 "the program's exit status 3 is propagated"
grep -q "^cubatchtrace: trace written to $CBT_TMP/t1\$" "$CBT_TMP/run.err"; ok $? "one line on stderr says where the trace is"
"$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["batches"] >= 6 and d["ops"] >= 272))' "$CBT_TMP/run.out"
ok $? "run --json prints the summary (at least the program's 6 batches)"
"$CBT" summary --json --pid "$(cat "$CBT_TMP/t1.pid")" "$CBT_TMP/t1" >"$CBT_TMP/t1.json"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["batches"], d["ops"], d["bytes"], d["discarded_events"])' "$CBT_TMP/t1.json")" \
   "6 272 1065080 0" "the trace holds exactly the program's batches (4 x 3 x 10 + 2 x 130 x 4096 bytes), none discarded"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(f["rule"], f["count"]) for f in d["findings"]])' "$CBT_TMP/t1.json")" \
   "[('overlap_dst_dst', 2)]" "the overlap of each large batch is found when the trace is read"
"$LTTNG" list 2>/dev/null | grep -q "cubatchtrace-$runpid-"; is $? 1 "no session of ours is left"

# the channel run creates: blocking, with the contexts and events asked for
"$BABELTRACE2" "$CBT_TMP/t1" 2>/dev/null | grep "vpid = $(cat "$CBT_TMP/t1.pid")" | grep -q 'cubatchtrace:batch.*ip = [0-9]'
ok $? "events carry the vpid and ip contexts"
"$BABELTRACE2" "$CBT_TMP/t1" 2>/dev/null | grep "vpid = $(cat "$CBT_TMP/t1.pid")" | grep -q 'lttng_ust_statedump:bin_info'
ok $? "the statedump is recorded"

# the largest events (64 ops, 128 distinct operands: a batch and a batch_ops)
# fit the smallest sub-buffer the event format is made for, 16 KiB
run_bg "$CBT_TMP/t4" --subbuf-size 16384 -- "$GEN" --pidfile "$CBT_TMP/t4.pid" n=1,ops=128,distinct=1
"$CBT" summary --json --pid "$(cat "$CBT_TMP/t4.pid")" "$CBT_TMP/t4" >"$CBT_TMP/t4.json" 2>&1
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["batches"], d["ops"], d["discarded_events"], d["read"]["incomplete_batches"])' "$CBT_TMP/t4.json" 2>&1)" \
   "1 128 0 0" "16 KiB sub-buffers: the largest chunk events are all recorded"

# the shim learns the channel's sub-buffer size (a large batch in as few
# events as one holds: tests/doors/chunks.sh); a value of the caller's own is kept
run_bg "$CBT_TMP/t5" -- sh -c 'echo "$CUBATCHTRACE_SUBBUF_SIZE" >"$0"' "$CBT_TMP/t5.sb"
is "$(cat "$CBT_TMP/t5.sb")" 1048576 "run tells the program's shim the sub-buffer size (default 1M)"
run_bg "$CBT_TMP/t6" --subbuf-size 64K -- sh -c 'echo "$CUBATCHTRACE_SUBBUF_SIZE" >"$0"' "$CBT_TMP/t6.sb"
is "$(cat "$CBT_TMP/t6.sb")" 65536 "run tells the program's shim the sub-buffer size it was given (64K)"
env CUBATCHTRACE_SUBBUF_SIZE=16K "$CBT" run -o "$CBT_TMP/t7" -- sh -c 'echo "$CUBATCHTRACE_SUBBUF_SIZE" >"$0"' \
    "$CBT_TMP/t7.sb" >/dev/null 2>&1
is "$(cat "$CBT_TMP/t7.sb")" 16K "a CUBATCHTRACE_SUBBUF_SIZE of the caller's own is kept"

run_bg "$CBT_TMP/t2" -- "$GEN" n=1 --raise 15
is "$st" 143 "a program killed by SIGTERM gives 128+15"
run_bg "$CBT_TMP/t3" -- "$CBT_TMP/no-such-program"
is "$st" 127 "a program that cannot be found gives 127"
"$LTTNG" list 2>/dev/null | grep -q "cubatchtrace-$runpid-"; is $? 1 "no session left after a failed exec"
run_bg "$CBT_TMP/t1" -- "$GEN" n=1
is "$st" 2 "an output directory that is not empty is refused"

# the private daemon path: as a user with no daemon of their own
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$CBT" 2>/dev/null; then
    mkdir -p "$CBT_TMP/nobody/tmp" && chmod -R 777 "$CBT_TMP/nobody" && chmod 755 "$CBT_TMP"
    before=$(pgrep -u nobody -x lttng-sessiond | wc -l)
    # (a sanitizer build's settings pass: scripts/check-sanitizers)
    env -i PATH="$PATH" HOME=/nonexistent TMPDIR="$CBT_TMP/nobody/tmp" CUBATCHTRACE_SHIM="$CUBATCHTRACE_SHIM" \
        ${ASAN_OPTIONS:+"ASAN_OPTIONS=$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+"UBSAN_OPTIONS=$UBSAN_OPTIONS"} \
        ${LSAN_OPTIONS:+"LSAN_OPTIONS=$LSAN_OPTIONS"} ${LIBBABELTRACE2_NO_DLCLOSE:+"LIBBABELTRACE2_NO_DLCLOSE=1"} \
        setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$CBT" run -o "$CBT_TMP/nobody/t" --json -- "$GEN" n=2,ops=5 --exit 5 >"$CBT_TMP/nobody.json" 2>"$CBT_TMP/nobody.err"
    st=$?
    is $st 5 "private daemon: exit status propagated"
    [ $st -eq 5 ] || sed 's/^/#   stderr: /' "$CBT_TMP/nobody.err"
    is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["batches"], d["ops"])' "$CBT_TMP/nobody.json")" \
       "2 10" "private daemon: the summary holds the program's batches"
    is "$(pgrep -u nobody -x lttng-sessiond | wc -l)" "$before" "private daemon: stopped afterwards"
    is "$(ls -A "$CBT_TMP/nobody/tmp" | wc -l)" 0 "private daemon: its temporary LTTNG_HOME is removed"
else
    diag "private-daemon path not tested (needs root, setpriv and a build tree user nobody can read)"
fi
# liblttng-ust-fork by a bare name: looked for in the folders of LD_LIBRARY_PATH
# (LTTng installed outside the prefix configure saw), else left out, said once
if [ -n "${CBT_LTTNG_UST_FORK_LIB:-}" ] && [ -f "$CBT_LTTNG_UST_FORK_LIB" ]; then
    mkdir -p "$CBT_TMP/forkdir" "$CBT_TMP/nofork"
    cp "$CBT_LTTNG_UST_FORK_LIB" "$CBT_TMP/forkdir/liblttng-ust-fork.so.1"
    CUBATCHTRACE_UST_FORK_LIB=liblttng-ust-fork.so.1 LD_LIBRARY_PATH="$CBT_TMP/nofork:$CBT_TMP/forkdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$CBT" run -o "$CBT_TMP/fk1" -- sh -c 'printf "%s\n" "$LD_PRELOAD" >"$1"' sh "$CBT_TMP/fk1.preload" \
        >/dev/null 2>"$CBT_TMP/fk1.err"
    is "$(sed 's/.*://' "$CBT_TMP/fk1.preload")" "$(cd "$CBT_TMP/forkdir" && pwd -P)/liblttng-ust-fork.so.1" \
        "a bare fork library name: found in LD_LIBRARY_PATH, preloaded after the shim by its absolute path"
    grep -q 'liblttng-ust-fork.*not found' "$CBT_TMP/fk1.err"; is $? 1 "found: no warning"
    CUBATCHTRACE_UST_FORK_LIB=liblttng-ust-fork.so.1 LD_LIBRARY_PATH="$CBT_TMP/nofork" \
        "$CBT" run -o "$CBT_TMP/fk2" -- sh -c 'printf "%s\n" "$LD_PRELOAD" >"$1"' sh "$CBT_TMP/fk2.preload" \
        >/dev/null 2>"$CBT_TMP/fk2.err"
    is "$(sed 's/.*://' "$CBT_TMP/fk2.preload")" "$CUBATCHTRACE_SHIM" "not in LD_LIBRARY_PATH: the shim preloaded last, no fork library"
    is "$(grep -c 'run: liblttng-ust-fork.so.1 not found in LD_LIBRARY_PATH: children the program forks are not traced' \
        "$CBT_TMP/fk2.err")" 1 "not found: one line says so"
else
    diag "fork library search not tested (configure found no liblttng-ust-fork)"
fi
done_testing
