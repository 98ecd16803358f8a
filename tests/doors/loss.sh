#!/bin/sh
# SPDX-License-Identifier: MIT
# Nothing is lost: every batch whose call returned is in the trace, however
# the process ends right after it (a forked child's _exit, abort, SIGKILL,
# exec, many threads then _exit), counted exactly.  The shim writes each batch
# into LTTng's ring buffer on the calling thread before the call returns.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

# count ALL PID...: batch events (cubatchtrace:b, bs) of those processes in the whole trace text ALL
count() {
    _f=$1; shift
    _n=0
    for _p in "$@"; do _n=$((_n + $(pid_events "$_f" "$_p" | grep -cE ' cubatchtrace:bs?: '))); done
    echo $_n
}
pids() { sed -n 's/^pid \([0-9]*\)$/\1/p' "$CBT_TMP/$1.out" | tr '\n' ' '; }

traced "lfork-$$" "$CLIENTS/client_loss" fork 500
is "$st" 0 "fork: the parent exits 0"
is "$(pids "lfork-$$" | wc -w)" 2 "fork: parent and child both made batches"
is "$(count "$CBT_TMP/lfork-$$.all" $(pids "lfork-$$"))" 501 \
    "fork: the parent's batch and all 500 of the child that _exit()ed are in the trace"

traced "labort-$$" "$CLIENTS/client_loss" abort 10000
is "$st" 134 "abort: the program ends with SIGABRT (status 134)"
is "$(count "$CBT_TMP/labort-$$.all" $(pids "labort-$$"))" 10000 \
    "abort: all 10000 batches made before abort() are in the trace"

traced "lkill-$$" "$CLIENTS/client_loss" kill 5000
is "$st" 137 "kill: the program ends with SIGKILL (status 137)"
said=$(grep -c '^returned ' "$CBT_TMP/lkill-$$.out")
is "$said" 5000 "kill: the program said 5000 batches returned"
is "$(count "$CBT_TMP/lkill-$$.all" $(pids "lkill-$$"))" "$said" \
    "kill: every batch it said returned is in the trace"
pid_events "$CBT_TMP/lkill-$$.all" "$(pids "lkill-$$" | tr -d ' ')" >"$CBT_TMP/lkill.pid"
ids=$(batch_events "$CBT_TMP/lkill.pid" | awk '$1 == "b" {print $3}' | sort -n | uniq | awk 'NR == 1 {a = $1} END {print a, $1, NR}')
is "$ids" "0 4999 5000" "kill: batch ids 0 to 4999, each exactly once"

for i in 1 2 3; do
    traced "lexec$i-$$" "$CLIENTS/client_loss" exec 4800
    is "$st" 0 "exec (run $i): the program exec()s /bin/true after its batches, which exits 0"
    is "$(count "$CBT_TMP/lexec$i-$$.all" $(pids "lexec$i-$$"))" 4800 \
        "exec (run $i): all 4800 batches made before the exec are in the trace"
done

# 32 threads of 500 batches into a tiny channel of its own (per-process buffers,
# four 16 KiB sub-buffers per CPU, where cubatchtrace run uses eight of 1 MiB) in
# blocking mode: the calling threads wait for room, nothing is discarded.
tiny_session() {
    "$LTTNG" --no-sessiond create "$1" --output="$CBT_TMP/$1" >/dev/null || return 1
    _cbt_sessions="$_cbt_sessions $1"
    "$LTTNG" enable-channel -u -s "$1" --buffers-pid --blocking-timeout=inf --subbuf-size=16384 --num-subbuf=4 tiny >/dev/null &&
        "$LTTNG" enable-event -u -s "$1" -c tiny 'cubatchtrace:*' >/dev/null &&
        "$LTTNG" add-context -u -s "$1" -c tiny -t vpid -t vtid >/dev/null &&
        "$LTTNG" start "$1" >/dev/null
}
t=lthr-$$
tiny_session "$t" || { echo "Bail out! cannot create the LTTng session $t"; exit 1; }
cbt_run "$CLIENTS/client_loss" threads 32 500 >"$CBT_TMP/$t.out" 2>"$CBT_TMP/$t.err"
st=$?
cbt_session_stop "$t"
# the trace's text apart from what babeltrace2 says on stderr, which a line
# of the text could otherwise be cut by (said below, if anything)
"$BABELTRACE2" "$CBT_TMP/$t" >"$CBT_TMP/$t.all" 2>"$CBT_TMP/$t.bterr"
[ -s "$CBT_TMP/$t.bterr" ] && diag "babeltrace2 said: $(head -c 2000 "$CBT_TMP/$t.bterr")"
is "$st" 0 "threads: 32 threads x 500 batches, joined, then _exit(0)"
p=$(pids "$t" | tr -d ' ')
is "$(count "$CBT_TMP/$t.all" "$p")" 16000 "threads: all 16000 batches are in the trace (tiny blocking channel)"
pid_events "$CBT_TMP/$t.all" "$p" >"$CBT_TMP/$t.pid"
per=$(batch_events "$CBT_TMP/$t.pid" | awk '$1 == "b" {print $2}' | sort | uniq -c | awk '{print $1}' | sort -u | tr '\n' ' ')
is "$per" "500 " "threads: 500 batches from each of the 32 threads"
[ "$per" = "500 " ] ||
    diag "batch events whose vtid and head words could not be read: $(grep -E ' cubatchtrace:bs?: ' "$CBT_TMP/$t.pid" |
        grep -vE 'vtid = [0-9]+[ ,].* t = \[ \[0\] = [0-9]+, \[1\] = [0-9]+,' | head -n 3)"
"$top_builddir/tools/cubatchtrace" summary "$CBT_TMP/$t" >"$CBT_TMP/$t.sum" 2>&1
is "$(sed -n 's/^# discarded events: //p' "$CBT_TMP/$t.sum")" 0 "threads: the tool counts no discarded event"
done_testing
