#!/bin/sh
# SPDX-License-Identifier: MIT
# A rank killed with SIGKILL in the middle of a job: one host (played in its
# own namespaces, tests/tool/job.sh), four ranks under `cubatchtrace run
# --relayd` making 60 batches of 2 ops, 30 ms apart; once rank 2 has made 5
# batches, its `cubatchtrace run` and its program are killed with SIGKILL.
# The other ranks must be traced in full, rank 2 up to where it was killed,
# the host's session daemon and keeper gone once the last rank ended, the
# relay daemon stop, and all of it within the time limit (nothing hangs).
# Meanwhile `summary --refresh` reads the host's session live from the relay
# daemon: summaries while the job runs, and a final one, equal to the
# summary of the relay's output, once the session ends.  A live reader reads
# what the relay daemon receives after it attaches, so the ranks wait
# (client_rank's CLIENT_RANK_GO) until the relay daemon counts the reader
# attached to their session before they make their first batch.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
. "$top_srcdir/tests/tool/job.sh"
need_hosts

relay_start || { echo "Bail out! lttng-relayd did not start: $(cat "$CBT_TMP/relayd.log")"; exit 1; }
start=$(date +%s)
export BABELTRACE2 top_srcdir
HOST_LIMIT=90 on_host cbt-kill '
    # the relay daemon'"'"'s count of the live readers of session kill (empty: not listed yet)
    readers() { sh "$top_srcdir/tests/tool/relay-readers.sh" "$RELAY_LIVE" kill; }
    for r in 0 1 2 3; do
        CLIENT_RANK_GO=$HOST_DIR/go OMPI_COMM_WORLD_RANK=$r "$CBT" run --relayd "$RELAY_URL" --session kill -- \
            "$RANK_CLIENT" 60 2 30 >"$HOST_DIR/rank$r.out" 2>"$HOST_DIR/rank$r.err" &
        echo $! >"$HOST_DIR/rank$r.pid"
    done
    i=0
    while [ -z "$(readers)" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    "$CBT" summary --refresh 0.5 "$RELAY_LIVE/host/cbt-kill/kill" >"$HOST_DIR/live.out" 2>"$HOST_DIR/live.err" &
    live=$!
    i=0
    while [ "$(readers)" != 1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    echo "readers $(readers)" >"$HOST_DIR/attached"
    : >"$HOST_DIR/go"
    w=$(cat "$HOST_DIR/rank2.pid") i=0
    while [ "$(grep -c "^batch" "$HOST_DIR/rank2.out")" -lt 5 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    prog=$(echo $(cat "/proc/$w/task/$w/children" 2>/dev/null))
    kill -KILL "$w" $prog
    echo "killed $w $prog" >"$HOST_DIR/killed"
    for r in 0 1 2 3; do wait "$(cat "$HOST_DIR/rank$r.pid")"; echo $? >"$HOST_DIR/rank$r.status"; done
    wait $live; echo $? >"$HOST_DIR/live.status"
'"$HOST_END"
st=$?
elapsed=$(($(date +%s) - start))
is "$st" 0 "the host's ranks and its daemon ended by themselves (not stopped by the time limit)"
is "$(cat "$CBT_TMP/cbt-kill/attached" 2>/dev/null)" "readers 1" "the live summary was attached to the session before the ranks made their first batch"
diag "the host ran for $elapsed s; $(cat "$CBT_TMP/cbt-kill/killed" 2>/dev/null)"
grep -q '^killed [0-9]* [0-9]*$' "$CBT_TMP/cbt-kill/killed"; ok $? "rank 2's cubatchtrace run and its program were killed"
is "$(cat "$CBT_TMP/cbt-kill/rank2.status")" 137 "rank 2 ended by SIGKILL"
for r in 0 1 3; do
    is "$(cat "$CBT_TMP/cbt-kill/rank$r.status") $(tail -n 1 "$CBT_TMP/cbt-kill/rank$r.out")" "0 rank: 60 batches, 120 ops" "rank $r ran to its end"
done
is "$(tr '\n' ' ' <"$CBT_TMP/cbt-kill/end")" "keeper gone daemon gone " "the keeper and the daemon it started are gone after the last rank"
relay_stop; ok $? "the relay daemon stops on SIGTERM"

"$CBT" summary --json "$CBT_TMP/relay" >"$CBT_TMP/s.json" 2>"$CBT_TMP/s.err"
is $? 0 "summary of the relay's output exits 0"
"$PYTHON3" - "$CBT_TMP/s.json" >"$CBT_TMP/ranks" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["by_process_rank"]:
    print(p["rank"], p["batches"], p["ops"])
PY
for r in 0 1 3; do
    is "$(grep "^$r " "$CBT_TMP/ranks")" "$r 60 120" "rank $r: every batch traced"
done
is "$(cat "$CBT_TMP/cbt-kill/live.status")" 0 "the live summary ended by itself when the session ended, status 0"
[ "$(grep -c '^# live summary [0-9]* at ' "$CBT_TMP/cbt-kill/live.out")" -ge 1 ]; ok $? "it printed the summary so far while the job ran ($(grep -c '^# live summary' "$CBT_TMP/cbt-kill/live.out") times)"
"$CBT" summary "$CBT_TMP/relay" >"$CBT_TMP/s.txt" 2>&1
is "$(grep '^# \(batches\|ops\|processes\):' "$CBT_TMP/cbt-kill/live.out" | tail -n 3 | tr '\n' ' ')" \
   "$(grep '^# \(batches\|ops\|processes\):' "$CBT_TMP/s.txt" | tr '\n' ' ')" "the final live summary has the processes, batches and ops of the relay's output"
set -- $(grep '^2 ' "$CBT_TMP/ranks")
[ $# -eq 3 ] && [ "$2" -ge 5 ] && [ "$2" -lt 60 ] && [ "$3" -eq $(($2 * 2)) ]; ok $? "rank 2: the batches it made before it was killed, at least 5 and not 60 (${2:-?} batches, ${3:-?} ops)"
done_testing
