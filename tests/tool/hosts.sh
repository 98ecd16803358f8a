#!/bin/sh
# SPDX-License-Identifier: MIT
# A job on two hosts, played on this machine: two session daemons, each in
# its own UTS and mount namespace (hostnames cbt-host-a and cbt-host-b, own
# /var/run/lttng and LTTNG_HOME), both streaming through `cubatchtrace run
# --relayd` to one local lttng-relayd; four ranks per host
# (OMPI_COMM_WORLD_RANK 0-3 on one, 4-7 on the other), rank r making r+1
# batches of r+2 ops, each timed on the GPU (CUBATCHTRACE_GPU_TIME=1).
# `summary` of the relay's output must show both hosts and all eight ranks
# with exactly their ops, the totals their sum, every batch GPU-timed, the
# same summary (GPU time included) read on one thread and on four; each host's daemon must be gone
# once its last rank ended, the relay must stop.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
. "$top_srcdir/tests/tool/job.sh"
need_hosts

relay_start || { echo "Bail out! lttng-relayd did not start: $(cat "$CBT_TMP/relayd.log")"; exit 1; }
RANKS='
    for r in $RANKS; do
        OMPI_COMM_WORLD_RANK=$r CUBATCHTRACE_GPU_TIME=1 timeout -s KILL 60 "$CBT" run --relayd "$RELAY_URL" --session job -- \
            "$RANK_CLIENT" $((r + 1)) $((r + 2)) >"$HOST_DIR/rank$r.out" 2>"$HOST_DIR/rank$r.err" &
    done
    wait
'
RANKS="0 1 2 3" on_host cbt-host-a "$RANKS$HOST_END" &
a=$!
RANKS="4 5 6 7" on_host cbt-host-b "$RANKS$HOST_END" &
b=$!
wait $a; sa=$?
wait $b; sb=$?
is "$sa $sb" "0 0" "both hosts ran their ranks"
for r in 0 1 2 3 4 5 6 7; do
    h=cbt-host-a; [ $r -ge 4 ] && h=cbt-host-b
    is "$(cat "$CBT_TMP/$h/rank$r.out" 2>/dev/null)" "rank: $((r + 1)) batches, $(((r + 1) * (r + 2))) ops" "rank $r ran on $h"
    grep -q "traced in session job of host $h, streamed to $RELAY_URL" "$CBT_TMP/$h/rank$r.err"; ok $? "rank $r says where its trace went"
done
for h in cbt-host-a cbt-host-b; do
    is "$(tr '\n' ' ' <"$CBT_TMP/$h/end" 2>/dev/null)" "keeper gone daemon gone " "$h: the session's keeper and the daemon it started are gone after the last rank"
    [ -f "$CBT_TMP/$h/home/.lttng/cubatchtrace-keeper.log" ] || [ -f "$CBT_TMP/$h/end" ]
done
relay_stop; ok $? "the relay daemon stops on SIGTERM"
is "$(ls "$CBT_TMP/relay" 2>/dev/null | tr '\n' ' ')" "cbt-host-a cbt-host-b " "the relay wrote one directory per host"

for jobs in 1 4; do
    "$CBT" summary --json --jobs $jobs "$CBT_TMP/relay" >"$CBT_TMP/s$jobs.json" 2>"$CBT_TMP/s$jobs.err"
    is $? 0 "summary --jobs $jobs of the relay's output exits 0"
done
"$PYTHON3" - "$CBT_TMP/s1.json" >"$CBT_TMP/check.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("hosts", " ".join(d["hosts"]))
print("by_host", " ".join("%s:%d/%d/%d" % (h["host"], h["processes"], h["ranks"], h["ops"]) for h in d["by_host"]))
for p in d["by_process_rank"]:
    print("rank", p["rank"], p["host"], p["rank_var"], p["procname"], p["batches"], p["ops"])
print("totals", d["batches"], d["ops"], d["processes"])
print("sums", sum(p["batches"] for p in d["by_process_rank"]), sum(p["ops"] for p in d["by_process_rank"]))
g = d["gpu"]
print("gpu", g["processes_timed"], g["batches_timed"], g["ops"], sum(r["batches"] for r in g["by_stream"]))
PY
grep -q . "$CBT_TMP/check.out"; ok $? "the summary is JSON with hosts and processes"
is "$(sed -n 's/^hosts //p' "$CBT_TMP/check.out")" "cbt-host-a cbt-host-b" "both hosts, by their recorded hostnames"
ops() { echo $((($1 + 1) * ($1 + 2))); }
is "$(sed -n 's/^by_host //p' "$CBT_TMP/check.out")" \
   "cbt-host-a:4/4/$(($(ops 0) + $(ops 1) + $(ops 2) + $(ops 3))) cbt-host-b:4/4/$(($(ops 4) + $(ops 5) + $(ops 6) + $(ops 7)))" \
   "per host: 4 processes, 4 ranks and the ops of its ranks"
for r in 0 1 2 3 4 5 6 7; do
    h=cbt-host-a; [ $r -ge 4 ] && h=cbt-host-b
    is "$(grep "^rank $r " "$CBT_TMP/check.out")" "rank $r $h OMPI_COMM_WORLD_RANK client_rank $((r + 1)) $(ops $r)" "rank $r: its host, variable, batches and ops"
done
tb=0 to=0
for r in 0 1 2 3 4 5 6 7; do tb=$((tb + r + 1)); to=$((to + $(ops $r))); done
is "$(sed -n 's/^totals //p' "$CBT_TMP/check.out")" "$tb $to 8" "the totals: every rank's batches and ops, 8 processes"
is "$(sed -n 's/^sums //p' "$CBT_TMP/check.out")" "$tb $to" "the per-process rows add up to the totals"
is "$(sed -n 's/^gpu //p' "$CBT_TMP/check.out")" "8 $tb $to $tb" "GPU time: 8 processes timed, every batch and op timed, each on its stream"
cmp -s "$CBT_TMP/s1.json" "$CBT_TMP/s4.json"; ok $? "the summary read on 4 threads is the one read on 1"
"$CBT" summary "$CBT_TMP/relay" >"$CBT_TMP/s.txt" 2>&1
grep -q '^# Batches by host' "$CBT_TMP/s.txt" && grep -q '^# Batches by process (Rank' "$CBT_TMP/s.txt"; ok $? "the text summary has the host and process tables"
is "$(grep -c '^cbt-host-[ab] *| *[0-9]* *| *[0-7] *| client_rank' "$CBT_TMP/s.txt")" 8 "the text summary lists the 8 ranks"
# usage: --session needs --relayd, --relayd takes no --output; a relay daemon
# that is not there costs one line and status 2 before the program runs
"$CBT" run --session x -- true >"$CBT_TMP/u.out" 2>"$CBT_TMP/u.err"
one_line_error "run --session without --relayd" $? "$CBT_TMP/u.out" "$CBT_TMP/u.err" "give --relayd too"
"$CBT" run --relayd "$RELAY_URL" -o "$CBT_TMP/x" -- true >"$CBT_TMP/u.out" 2>"$CBT_TMP/u.err"
one_line_error "run --relayd with --output" $? "$CBT_TMP/u.out" "$CBT_TMP/u.err" "the relay daemon decides"
on_host cbt-nowhere '
    "$CBT" run --relayd net://127.0.0.1:1:2 -- sh -c "echo ran >$HOST_DIR/ran" >"$HOST_DIR/out" 2>"$HOST_DIR/err"
    echo $? >"$HOST_DIR/status"
'"$HOST_END"
one_line_error "run --relayd to no relay daemon" "$(cat "$CBT_TMP/cbt-nowhere/status")" "$CBT_TMP/cbt-nowhere/out" "$CBT_TMP/cbt-nowhere/err" "failed (status"
[ ! -e "$CBT_TMP/cbt-nowhere/ran" ]; ok $? "the program did not run"
is "$(tr '\n' ' ' <"$CBT_TMP/cbt-nowhere/end")" "keeper gone daemon gone " "the daemon started for it is gone"
done_testing
