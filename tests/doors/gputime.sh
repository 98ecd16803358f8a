#!/bin/sh
# SPDX-License-Identifier: MIT
# GPU time (CUBATCHTRACE_GPU_TIME=1, src/gputime.c) over the test double,
# whose timing events are host clock readings: every batch forwarded gets its
# GPU time in a cubatchtrace:gpu_time event (several batches' per event),
# read back later (by the shim's reader thread while the program runs, or at
# exit), or says why it has none; the program's own results are unchanged.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
PY=${PYTHON3:-python3}
command -v "$PY" >/dev/null 2>&1 || skip_all "python3 not installed"
C="$CLIENTS/client_gputime"

# g NAME [N]: the summary line of tests/doors/gpu_events.py for the traced run NAME
# (pid of its first process, or of its Nth), the batches as show decodes them
g() {
    _p=$(sed -n 's/^pid //p' "$CBT_TMP/$1.out" | sed -n "${2:-1}p")
    gpu_events "$1" "$_p"
}
# gpu_events NAME PID: tests/doors/gpu_events.py for process PID of the traced run NAME
gpu_events() {
    "$top_builddir/tools/cubatchtrace" show --records --pid "$2" "$CBT_TMP/$1" >"$CBT_TMP/$1.$2.show" 2>&1
    "$PY" "$top_srcdir/tests/doors/gpu_events.py" "$CBT_TMP/$1.all" "$2" "$CBT_TMP/$1.$2.show"
}
has() { case " $1 " in *" $2 "*) echo 0 ;; *) echo 1 ;; esac; }

traced gt-ok env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_LAG=3 "$C" ok 5
is "$st" 0 "ok: the client exits 0"
r=$(g gt-ok)
diag "$r"
for w in batches=5 events=5 timed=5 tids_match=1 ids_unique=1 bytes=25600 ops=10 fields_ok=1 marks_ok=1 start_ok=1 process_gpu=1; do
    ok "$(has "$r" $w)" "ok: $w (batches read back at exit, events 3 queries late)"
done

# 64 batches made at once: the read-back writes the GPU times it finds in
# one turn, up to 32, in one gpu_time event (an event per batch slowed the
# calling thread), so there are far fewer events than batches
traced gt-many env CUBATCHTRACE_GPU_TIME=1 "$C" ok 64
r=$(g gt-many)
for w in batches=64 events=64 timed=64 ids_unique=1 fields_ok=1 marks_ok=1; do ok "$(has "$r" $w)" "64 at once: $w"; done
_p=$(sed -n 's/^pid //p' "$CBT_TMP/gt-many.out")
ne=$(pid_events "$CBT_TMP/gt-many.all" "$_p" | grep -c ' cubatchtrace:gpu_time: ')
ok "$([ "$ne" -ge 2 ] && [ "$ne" -le 32 ] && echo 0 || echo 1)" \
    "64 at once: their GPU times in 2 to 32 gpu_time events ($ne), up to 32 batches each"

traced gt-sync env CUBATCHTRACE_GPU_TIME=1 "$C" sync 6
r=$(g gt-sync)
for w in events=6 timed=6 fields_ok=1 start_ok=1; do ok "$(has "$r" $w)" "sync: $w"; done
# read back while the program runs, by a thread of the shim's own: with
# 50 ms between batches, batch i's gpu_time comes after its own batch event
# (queued only once that is written) and before batch i+1's, and it was
# written by another thread than the batch's
traced gt-paced env CUBATCHTRACE_GPU_TIME=1 "$C" paced 4
r=$(g gt-paced)
for w in events=4 timed=4 tids_match=1 fields_ok=1 start_ok=1; do ok "$(has "$r" $w)" "paced: $w"; done
# a timed batch on a stream the program made, once its thread holds two
# events of its context, switches no capture mode (its records break no
# capture): the first batch and the exit do (the read-back's queries), and
# the reader once; without that, each batch would make four exchanges
xch=$(sed -n 's/^exchanges //p' "$CBT_TMP/gt-paced.out")
ok "$([ -n "$xch" ] && [ "$xch" -lt 8 ] && echo 0 || echo 1)" "paced: fewer than 8 capture-mode exchanges for 4 timed batches (${xch:-none})"
_p=$(sed -n 's/^pid //p' "$CBT_TMP/gt-paced.out")
verdict=$(pid_events "$CBT_TMP/gt-paced.all" "$_p" | id_numbers |
    "$PYTHON3" -c '
import re, sys
sys.path.insert(0, sys.argv[1])
import gputimes
seq, batch_tid = [], {}
for line in sys.stdin:
    tid = re.search(r"vtid = (\d+)", line)
    tid = tid.group(1) if tid else None
    m = re.search(r" cubatchtrace:bs?: .* t = \[ \[0\] = (\d+),", line)
    if m:  # the batch id: the first word of t
        batch_tid[int(m.group(1))] = tid
        seq.append(("batch", int(m.group(1)), tid))
    if " cubatchtrace:gpu_time: " in line:
        seq += [("gpu_time", e["batch_id"], tid) for e in gputimes.entries(line)]
where = {(k, i): n for n, (k, i, _) in enumerate(seq)}
bad = []
for i in sorted(batch_tid):
    g = where.get(("gpu_time", i))
    if g is None:
        bad.append("no gpu_time %d" % i)
        continue
    if g < where[("batch", i)]:
        bad.append("gpu_time %d before its batch" % i)
    nxt = where.get(("batch", i + 1))
    if nxt is not None and g > nxt:
        bad.append("gpu_time %d after batch %d" % (i, i + 1))
    if seq[g][2] is None or seq[g][2] == batch_tid[i]:
        bad.append("gpu_time %d on the batch thread" % i)
print("ok" if len(batch_tid) == 4 and not bad else "%d batches; %s" % (len(batch_tid), ", ".join(bad)))' "$top_srcdir/tests")
is "$verdict" ok "paced: each batch is read back after its batch event and before the next, by a thread of the shim's own"

# a window that begins between batch 1's record and its gpu_time: its GPU
# time is outside the window with its batch (the event alone would not
# say what the batch moved); batches 2 and 3, recorded in it, are timed
_p=$(sed -n 's/^pid //p' "$CBT_TMP/gt-paced.out")
"$BABELTRACE2" --clock-seconds "$CBT_TMP/gt-paced" 2>/dev/null | grep "vpid = $_p," >"$CBT_TMP/paced.lines"
begin=$("$PY" -c '
import re, sys
sys.path.insert(0, sys.argv[2])
import gputimes
t = []  # (b or gpu_time, its time): one gpu_time per batch GPU time it carries
for line in open(sys.argv[1]):
    m = re.match(r"^\[([0-9.]*)\].* cubatchtrace:(b|bs|gpu_time): ", line)
    if m:
        t += [(m.group(2), m.group(1))] * (len(gputimes.entries(line)) if m.group(2) == "gpu_time" else 1)
b = [float(v) for k, v in t if k != "gpu_time"]
g = [float(v) for k, v in t if k == "gpu_time"]
print("%.9f" % ((b[1] + g[1]) / 2) if len(b) == 4 and len(g) == 4 and b[1] < g[1] else "none")' "$CBT_TMP/paced.lines" "$top_srcdir/tests")
r=$("$top_builddir/tools/cubatchtrace" summary --json --pid "$_p" --begin "$begin" "$CBT_TMP/gt-paced" 2>&1 |
    "$PY" -c 'import json,sys; d=json.load(sys.stdin); g=d["gpu"]; print(d["batches"], g["batches_timed"], g["ops"], g["bytes"])' 2>&1)
is "$r" "2 2 4 10240" "paced, --begin between batch 1 and its read-back ($begin): 2 batches, both timed, with their ops and bytes"

# batches 5 ms apart, each synchronized: the queue empties after each, and
# the reader keeps looking at its pace for a while before it sleeps for good,
# so the calling thread does not wake it per batch (a futex wake that wakes a
# thread, counted by strace: one per batch when the reader sleeps at once)
if command -v strace >/dev/null 2>&1 && strace -f -qq -o /dev/null true 2>/dev/null; then
    traced gt-spaced strace -f -qq -e trace=futex -o "$CBT_TMP/gt-spaced.strace" \
        env CUBATCHTRACE_GPU_TIME=1 "$C" paced 30 5
    is "$st" 0 "spaced: the client exits 0 (under strace)"
    r=$(g gt-spaced)
    for w in events=30 timed=30 fields_ok=1; do ok "$(has "$r" $w)" "spaced: $w"; done
    _p=$(sed -n 's/^pid //p' "$CBT_TMP/gt-spaced.out")
    woke=$(grep -c "^$_p  *futex(.*FUTEX_WAKE.*= [1-9]" "$CBT_TMP/gt-spaced.strace")
    ok "$([ "$woke" -le 10 ] && echo 0 || echo 1)" "spaced: the calling thread woke another thread $woke times for 30 batches (at most 10; lock contention under strace can make a few)"
else
    diag "SKIP the spaced case: strace not installed or not allowed to trace"
fi

# 40 batches 3 ms apart, each synchronized: each turn of the reader finds
# a batch or none, so it slows down (its period doubling to 16 ms) and
# reads several batches a turn; each turn with something to read makes
# their context current once (cuCtxPushCurrent, counted by the test
# double): at a millisecond a turn, about one per batch
traced gt-pace env CUBATCHTRACE_GPU_TIME=1 "$C" paced 40 3
is "$st" 0 "pace: the client exits 0"
r=$(g gt-pace)
for w in events=40 timed=40 fields_ok=1; do ok "$(has "$r" $w)" "pace: $w"; done
pu=$(sed -n 's/^pushes //p' "$CBT_TMP/gt-pace.out")
ok "$([ -n "$pu" ] && [ "$pu" -lt 25 ] && echo 0 || echo 1)" \
    "pace: the reader read 40 batches 3 ms apart in fewer than 25 turns (${pu:-no} contexts made current)"

# CUBATCHTRACE_GPU_TIME=4: one batch in 4 of the stream timed, the first and
# then every 4th (batches 0, 4, 8 of 10); the process event, the summary and
# the timeline say how they were chosen
traced gt-n4 env CUBATCHTRACE_GPU_TIME=4 "$C" sync 10
is "$st" 0 "one in 4: the client exits 0"
r=$(g gt-n4)
for w in batches=10 events=3 timed=3 timed_ids=0,4,8 fields_ok=1 marks_ok=1 start_ok=1; do ok "$(has "$r" $w)" "one in 4: $w"; done
_p=$(sed -n 's/^pid //p' "$CBT_TMP/gt-n4.out")
grep -F "vpid = $_p," "$CBT_TMP/gt-n4.all" | grep -q ' cubatchtrace:process: .* gpu_time = 1, gpu_every = 4,'
ok $? "one in 4: the process event says gpu_every 4"
"$top_builddir/tools/cubatchtrace" summary --json --pid "$_p" "$CBT_TMP/gt-n4" >"$CBT_TMP/gt-n4.json" 2>&1
is "$("$PY" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]
print(g["batches_timed"], g["chosen"]["every"], g["chosen"]["processes_sampled"], g["chosen"]["not_sampled"], g["not_timed"]["not_read_back"])' "$CBT_TMP/gt-n4.json")" \
    "3 4 1 7 0" "one in 4: summary --json: 3 timed, chosen one in 4, 7 not chosen, none counted as not read back"
"$top_builddir/tools/cubatchtrace" summary --pid "$_p" "$CBT_TMP/gt-n4" | grep -q '^# chosen: one batch in 4 of each stream, per calling thread (1 process; 7 batches'
ok $? "one in 4: the text summary says how the timed batches were chosen"
"$top_builddir/tools/cubatchtrace" timeline -o "$CBT_TMP/gt-n4.tl.json" --pid "$_p" "$CBT_TMP/gt-n4" >/dev/null 2>&1
grep -q '"gpu_timed_every":4,"gpu_not_sampled":7' "$CBT_TMP/gt-n4.tl.json"; ok $? "one in 4: the timeline says so too"

traced gt-fail env CUBATCHTRACE_GPU_TIME=1 "$C" fail 3
r=$(g gt-fail)
for w in events=3 call_failed=3 timed=0; do ok "$(has "$r" $w)" "fail: $w"; done
# strict mode refuses the malformed batches before the driver sees them: no copy to time either
traced gt-refused env CUBATCHTRACE_GPU_TIME=1 CUBATCHTRACE_MODE=strict "$C" fail 3
r=$(g gt-refused)
for w in events=3 call_failed=3 timed=0 lost=0; do ok "$(has "$r" $w)" "refused in strict mode: $w"; done

# a burst of batches whose GPU work never ends (in the test double): the
# thread's ring of batches in flight fills, and the batches after that are
# not timed ("overflow"); those queued are written as lost at exit, after
# the wait for them; every batch has its gpu_time event, the program exits 0
traced gt-burst env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_LAG=1000000000 "$C" ok 700
is "$st" 0 "burst: the client exits 0"
r=$(g gt-burst)
for w in batches=700 events=700 timed=0; do ok "$(has "$r" $w)" "burst: $w"; done
ov=$(echo "$r" | sed -n 's/.* overflow=\([0-9]*\) .*/\1/p')
lo=$(echo "$r" | sed -n 's/.* lost=\([0-9]*\) .*/\1/p')
ok "$([ "${ov:-0}" -ge 1 ] && [ "${lo:-0}" -ge 1 ] && [ $((ov + lo)) = 700 ] && echo 0 || echo 1)" \
    "burst: the batches beyond the ring say overflow, those in it lost (overflow=$ov lost=$lo)"

traced gt-kill env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_LAG=1000000 "$C" kill 4
r=$(g gt-kill)
for w in batches=4 events=0 process_gpu=1; do ok "$(has "$r" $w)" "kill: $w (nothing read back; the process event says GPU time was on)"; done

# events 50 queries late: when its context is destroyed, at least the last
# batch made in it is not done; what is done is read back first
traced gt-ctx env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_LAG=50 "$C" ctx 3
is "$st" 0 "ctx: the client exits 0"
r=$(g gt-ctx)
for w in batches=6 events=6 fields_ok=1; do ok "$(has "$r" $w)" "ctx: $w"; done
lost=$(echo "$r" | sed -n 's/.* lost=\([0-9]*\) .*/\1/p')
ok "$([ "${lost:-0}" -ge 1 ] && echo 0 || echo 1)" "ctx: the destroyed context's unfinished batches are lost ($lost)"
ok "$(case "$r" in *"timed_ids="*"3,4,5 "*) echo 0 ;; *) echo 1 ;; esac)" "ctx: the primary context's batches 3-5 are timed"

# a program that synchronizes, then releases its primary context: every
# batch is read back before the context goes
traced gt-rel env CUBATCHTRACE_GPU_TIME=1 "$C" release 3
is "$st" 0 "release: the client exits 0"
r=$(g gt-rel)
for w in batches=3 events=3 timed=3 lost=0; do ok "$(has "$r" $w)" "release: $w"; done

# a context destroyed, then another made (the test double's allocator gives
# it the same handle): the second's batches are timed in their own context,
# none of the first's state (events, anchor, context id) is used for them
traced gt-recr env CUBATCHTRACE_GPU_TIME=1 "$C" recreate 3
is "$st" 0 "recreate: the client exits 0"
grep -q '^same handle$' "$CBT_TMP/gt-recr.out" || diag "recreate: the second context got another handle"
r=$(g gt-recr)
for w in batches=6 events=6 timed=6 lost=0 fields_ok=1 start_ok=1; do ok "$(has "$r" $w)" "recreate: $w"; done

# the same, each batch waited for and 5 ms apart: the thread holds two
# events of the first context for its next batch when that context goes;
# the second context's batches are all timed, none lost
traced gt-recr2 env CUBATCHTRACE_GPU_TIME=1 "$C" recreate 4 5
is "$st" 0 "recreate, paced: the client exits 0"
r=$(g gt-recr2)
for w in batches=8 events=8 timed=8 lost=0 fields_ok=1 start_ok=1; do ok "$(has "$r" $w)" "recreate, paced: $w"; done

traced gt-thr env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_LAG=1 "$C" threads 4 25
r=$(g gt-thr)
diag "$r"
for w in batches=100 events=100 timed=100 tids_match=1 ids_unique=1 fields_ok=1 marks_ok=1 start_ok=1; do ok "$(has "$r" $w)" "threads: $w"; done

# a batch on a stream being captured into a graph (refused by the driver),
# then the same batch once the capture ended (tests/gpu/clients/capture.c)
# where the shim cannot see every call that could destroy a context (the
# kind cache off: another library binds the driver's memory functions before
# it), a thread keeps no events: it takes them from the pool and queues on
# the shared ring, under the lock, switching to RELAXED capture mode around
# them each time (more than 2 exchanges a batch); every batch is timed,
# from one thread and from four at once
other="$CLIENTS/.libs/libcbtother.so"
traced gt-shared env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_LAG=2 LD_PRELOAD="$other:$CBT_SHIM" "$C" sync 6
is "$st" 0 "shared ring: the client exits 0"
r=$(g gt-shared)
for w in batches=6 events=6 timed=6 fields_ok=1 marks_ok=1 start_ok=1; do ok "$(has "$r" $w)" "shared ring: $w"; done
xch=$(sed -n 's/^exchanges //p' "$CBT_TMP/gt-shared.out")
ok "$([ -n "$xch" ] && [ "$xch" -ge 12 ] && echo 0 || echo 1)" "shared ring: the pool's way, in RELAXED mode each batch (${xch:-none} exchanges)"
traced gt-shared4 env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_LAG=1 LD_PRELOAD="$other:$CBT_SHIM" "$C" threads 4 25
r=$(g gt-shared4)
for w in batches=100 events=100 timed=100 tids_match=1 ids_unique=1 fields_ok=1 start_ok=1; do
    ok "$(has "$r" $w)" "shared ring, four threads: $w"
done

# 600 batches, each synchronized, then, the ring gone round (every slot
# holds events), a context made and destroyed elsewhere moves the epoch: the next
# batch finds every slot's events still its context's at once, and the
# batches after it take the usual way (no capture-mode exchange): at most
# one slow way (2 exchanges) in 100
traced gt-gone env CUBATCHTRACE_GPU_TIME=1 "$C" gone 600 100
is "$st" 0 "context gone elsewhere: the client exits 0"
r=$(g gt-gone)
for w in batches=700 events=700; do ok "$(has "$r" $w)" "context gone elsewhere: $w"; done
# the calling thread's exchanges alone: the reader's own (its mode set
# once, its queries in RELAXED mode) fall in one window or the next
x=$(sed -n 's/^thread_exchanges //p' "$CBT_TMP/gt-gone.out" | tr '\n' ' ')
ok "$(echo "$x" | awk '{ exit !(NF == 3 && $3 - $2 <= 2) }' && echo 0 || echo 1)" \
    "context gone elsewhere: the 100 batches after it switch capture mode at most twice (the calling thread's exchanges: $x)"

traced gt-cap env CUBATCHTRACE_GPU_TIME=1 "$top_builddir/tests/gpu/capture" batch global 3d
r=$(gpu_events gt-cap "$pid")
for w in events=2 capturing=1 timed=1; do ok "$(has "$r" $w)" "capturing stream: $w (no event recorded on it)"; done

traced gt-noev env CUBATCHTRACE_GPU_TIME=1 FAKECUDA_EVENT_FAIL=1 "$C" ok 2
is "$st" 0 "events cannot be created: the client exits 0"
r=$(g gt-noev)
for w in events=2 no_events=2; do ok "$(has "$r" $w)" "events cannot be created: $w"; done

if [ -n "${CBT_LTTNG_UST_FORK_LIB:-}" ]; then
    # a forked child traces with liblttng-ust-fork (as tests/doors/fork.sh)
    traced gt-fork env CUBATCHTRACE_GPU_TIME=1 LD_PRELOAD="$CBT_SHIM:$CBT_LTTNG_UST_FORK_LIB" "$C" fork 2
    is "$st" 0 "fork: the client exits 0"
    r=$(g gt-fork 1)
    for w in batches=4 events=4 timed=4; do ok "$(has "$r" $w)" "fork, parent: $w"; done
    # the child _exits: what its own reader read back before that, none of the parent's queue
    r=$(g gt-fork 2)
    diag "$r"
    for w in batches=2 fields_ok=1 process_gpu=1 tids_match=1; do ok "$(has "$r" $w)" "fork, child: $w"; done
    ev=$(echo "$r" | sed -n 's/.* events=\([0-9]*\) .*/\1/p')
    tm=$(echo "$r" | sed -n 's/.* timed=\([0-9]*\) .*/\1/p')
    ok "$([ -n "$ev" ] && [ "$ev" -le 2 ] && [ "$ev" = "$tm" ] && echo 0 || echo 1)" \
        "fork, child: at most its own 2 batches read back, each timed (events=$ev timed=$tm)"
else
    diag "SKIP the fork case: liblttng-ust-fork.so not found by configure"
fi

traced gt-off "$C" ok 3
r=$(g gt-off)
for w in batches=3 events=0 process_gpu=0; do ok "$(has "$r" $w)" "GPU time off: $w"; done

# The program's own output is the same with and without: the bytes its
# batches wrote (its "data" line), but the test double's counts of
# capture-mode exchanges and of contexts made current (the shim's reader
# makes them on its own schedule)
cbt_run_bare "$C" ok 5 >"$CBT_TMP/bare.out" 2>&1
grep -q '^data [0-9a-f]\{16\}$' "$CBT_TMP/bare.out"; ok $? "the client prints a hash of what its batches wrote"
is "$(sed 's/^pid .*/pid/; /^exchanges /d; /^thread_exchanges /d; /^pushes /d' "$CBT_TMP/gt-ok.out")" \
    "$(sed 's/^pid .*/pid/; /^exchanges /d; /^thread_exchanges /d; /^pushes /d' "$CBT_TMP/bare.out")" \
    "the client prints the same with GPU time as without the shim"
done_testing
