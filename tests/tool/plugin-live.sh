#!/bin/sh
# SPDX-License-Identifier: MIT
# The babeltrace2 plugin on a live session: a local lttng-relayd, a live
# session streaming to it, babeltrace2 reading it as it is recorded
# (source.ctf.lttng-live) through filter.cubatchtrace.expand.  A first
# program makes the session's streams; the reader attaches, at the streams'
# ends (babeltrace2 asks the relay daemon to seek to the last packet), so
# what it sees of that program depends on when the relay daemon got its
# packets and is not compared; once the relay daemon counts the reader as
# attached, two more programs run and the reader reads them as they run.
# Once the session is destroyed the live reader ends; what it expanded of
# those two equals, event for event and in count, what the plugin expands
# from the finished trace the relay daemon wrote, and what `cubatchtrace
# show` prints for it.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
. "$top_srcdir/tests/tool/job.sh"
[ -n "${BABELTRACE2:-}" ] || skip_all "babeltrace2 not installed"
need_sessiond
RELAYD=${LTTNG_RELAYD:-$(command -v lttng-relayd 2>/dev/null || true)}
[ -n "$RELAYD" ] || skip_all "lttng-relayd (lttng-tools) not installed"
PLUG="$top_builddir/tools/plugin/.libs"
XS="$PYTHON3 $top_srcdir/tests/tool/expand_show.py"
C="$top_builddir/tests/clients"
LD_LIBRARY_PATH="$C/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; export LD_LIBRARY_PATH
unset BABELTRACE_PLUGIN_PATH

relay_start || { echo "Bail out! lttng-relayd did not start: $(cat "$CBT_TMP/relayd.log")"; exit 1; }
S=pl-live-$$
session_alone "$S" --live "$RELAY_URL" || { echo "Bail out! cannot set up the live session"; exit 1; }

# a first program, so that the session's streams exist (a reader that
# attaches to a session still without any can wait past its end), then the
# live reader; then, once it is attached, the programs it is checked on
traced_alone "$S" "$C/client_threads" >"$CBT_TMP/threads0.out" 2>&1
host=$(hostname)
timeout -s KILL 120 "$BABELTRACE2" --plugin-path="$PLUG" --no-delta \
    -i lttng-live "$RELAY_LIVE/host/$host/$S" --params 'session-not-found-action="end"' \
    -c filter.cubatchtrace.expand >"$CBT_TMP/live.bt" 2>"$CBT_TMP/live.err" &
reader=$!
# the relay daemon's count of the session's live readers
clients() { sh "$top_srcdir/tests/tool/relay-readers.sh" "$RELAY_LIVE" "$S"; }
i=0
while [ "$(clients)" != 1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
is "$(clients)" 1 "the live reader is attached to the session before the programs it is checked on run"
traced_alone "$S" "$C/client_threads" >"$CBT_TMP/threads.out" 2>&1
p1=$pid
traced_alone "$S" env CUBATCHTRACE_MODE=strict "$C/client_strict" table >"$CBT_TMP/strict.out" 2>&1
p2=$pid
"$LTTNG" stop "$S" >/dev/null
"$LTTNG" destroy "$S" >/dev/null
wait $reader
st=$?
is "$st" 0 "the live reader through the filter ends by itself, status 0, once the session is destroyed"
[ -s "$CBT_TMP/live.err" ] && sed 's/^/#   stderr: /' "$CBT_TMP/live.err" | head -20
[ "$st" = 137 ] && { diag "the live reader was stopped at the time-out; it had written $(wc -l <"$CBT_TMP/live.bt") lines"
                     sed 's/^/#   relayd: /' "$CBT_TMP/relayd.log" | tail -5; }

T=$(dirname "$(dirname "$(find "$CBT_TMP/relay" -name metadata | head -1)")")
[ -d "$T" ]; ok $? "the relay daemon wrote the finished trace"
"$BABELTRACE2" --plugin-path="$PLUG" --no-delta "$CBT_TMP/relay" -c filter.cubatchtrace.expand >"$CBT_TMP/done.bt" 2>"$CBT_TMP/done.err"
is "$?" 0 "the finished trace through the filter: status 0"
for p in $p1 $p2; do
    $XS bt "$p" <"$CBT_TMP/live.bt" >"$CBT_TMP/live.$p"
    $XS bt "$p" <"$CBT_TMP/done.bt" >"$CBT_TMP/done.$p"
    "$CBT" show --records --pid "$p" "$CBT_TMP/relay" | $XS show >"$CBT_TMP/show.$p"
    for k in batch op finding; do
        n=$(grep -c "^$k " "$CBT_TMP/done.$p")
        is "$(grep -c "^$k " "$CBT_TMP/live.$p")" "$n" "pid $p: live, as many $k events as in the finished trace ($n)"
    done
    [ "$(grep -c '^batch ' "$CBT_TMP/done.$p")" -gt 0 ]; ok $? "pid $p: the finished trace has batches"
    is "$(cat "$CBT_TMP/live.$p")" "$(cat "$CBT_TMP/done.$p")" "pid $p: live, the same expanded events as the finished trace"
    is "$(cat "$CBT_TMP/done.$p")" "$(cat "$CBT_TMP/show.$p")" "pid $p: the finished trace's expanded events are show's records"
done
relay_stop; ok $? "the relay daemon stops"
done_testing
