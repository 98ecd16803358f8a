#!/bin/sh
# SPDX-License-Identifier: MIT
# The summary's GPU time (the "gpu" member of summary --json, the text
# summary's GPU section) is exactly what the cubatchtrace:gpu_time events
# say: totals, statuses, batches never read back, the rows by direction
# (mixed ones too), memory kinds, op size, direction and op size together,
# stream and device, and the grid over time (more than 16 streams:
# "other").  The figures are computed again from the events as babeltrace2
# prints them (gpuexpect.py).  Read on one
# thread or three, the summary is byte for byte the same; the text tables
# are in human units, or exact with --raw.  First over the generator's
# events (every row and status on demand), then over programs run under the
# shim with CUBATCHTRACE_GPU_TIME=1 over the test double (whose timing events
# are host clock readings): batches timed, a failing call, a process killed
# before its batches were read back.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not found"
GPUEXPECT="$top_srcdir/tests/tool/gpuexpect.py"

# compare_gpu NAME TRACE-TEXT JSON [gpuexpect.py options]: one test per figure (--show SHOW-TEXT: the
# batches of the short gpu_time events, as `cubatchtrace show` decodes them)
compare_gpu() {
    _l=$1; shift
    "$PYTHON3" "$GPUEXPECT" "$CATALOG" "$@" >"$CBT_TMP/gpuexpect.out" || { ok 1 "$_l: gpuexpect.py ran"; return; }
    while IFS="$(printf '\t')" read -r _k _want _got; do
        is "$_got" "$_want" "$_l: $_k"
    done <"$CBT_TMP/gpuexpect.out"
}
# trace_text TRACE PIDS-NAME...: babeltrace2 text (seconds from the clock's origin) of those processes
trace_text() {
    _t=$1; shift
    "$BABELTRACE2" --clock-seconds "$_t" >"$CBT_TMP/all.txt" 2>&1 || { echo "babeltrace2 failed" >&2; return 1; }
    for _n in "$@"; do
        for _p in $(cat "$CBT_TMP/$_n.pids"); do grep -F "vpid = $_p," "$CBT_TMP/all.txt"; done
    done
}

# G: a process that asked for GPU time (its process event says gpu_time 1):
#    timed batches of every kind of row (HtoD, DtoH on another stream and
#    device, a peer copy started 3 ms before its event, mixed memory kinds,
#    device to device with mixed devices, ops of unknown memory), every status
#    that is not "timed", and 3 batches forwarded with CUDA_SUCCESS whose GPU
#    time never came (not read back)
G1="n=3,ops=4,src=host_pinned,dst=device,bytes=4096,gpu=timed,gpu_ns=2000,gpu_start=-5000"
G2="n=2,ops=2,src=device,dst=host_pageable,bytes=1000,stream=0x2000,stream_id=9,device=1,srcdev=1,gpu=timed,gpu_ns=700"
G3="n=2,ops=3,src=device,dst=device,srcdev=0,dstdev=1,bytes=65536,gpu=timed,gpu_ns=3000,gpu_start=-3000000"
G4="n=1,ops=5,src=device,dst=device,last_src=host_pinned,gpu=timed,gpu_ns=4321"
G5="n=1,ops=2,src=device,dst=device,last_srcdev=1,gpu=timed,gpu_ns=10"
G6="n=1,ops=1,src=unknown,dst=host_pinned,device=-1,gpu=timed,gpu_ns=77"
G7="n=1,ops=2,result=CUDA_ERROR_INVALID_VALUE,gpu=call_failed"
G8="n=2,ops=1,gpu=capturing"
G9="n=1,ops=1,gpu=no_events"
G10="n=1,ops=1,gpu=lost"
G11="n=1,ops=1,gpu=overflow"
G12="n=3,ops=1,gpu=none"
# H: a second process in a second trace, its batches timed but its process
#    event not written (no process asks: not_read_back stays)
H1="n=4,ops=8,bytes=512,stream=0x3000,stream_id=3,gpu=timed,gpu_ns=900,gpu_start=-1000"
H2="n=2,ops=8,gpu=none"
# K: a third trace, 18 streams (over time: the 16 of most GPU time, then "other")
set --
for i in $(seq 1 18); do set -- "$@" "n=1,ops=1,stream=$((0x4000 + i)),stream_id=$((100 + i)),gpu=timed,gpu_ns=$((i * 100 + 5))"; done

gen_session g || { ok 1 "session g starts"; done_testing; }
gen_run g --gpu-process "$G1" "$G2" "$G3" "$G4" "$G5" "$G6" "$G7" "$G8" "$G9" "$G10" "$G11" "$G12"; ok $? "generator G ran"
gen_stop g
gen_session h && gen_run h "$H1" "$H2" && gen_stop h; ok $? "generator H ran"
gen_session k && gen_run k "$@" && gen_stop k; ok $? "generator K ran"
TG=$(trace_of g) TH=$(trace_of h) TK=$(trace_of k)
PIDS="$(pids_of g) $(pids_of h) $(pids_of k)"

# G alone, then the three traces at once
trace_text "$TG" g >"$CBT_TMP/g.txt"
"$CBT" summary --json $(pids_of g) "$TG" >"$CBT_TMP/g.json" 2>"$CBT_TMP/err"
is $? 0 "summary --json G exits 0"
"$CBT" show --records $(pids_of g) "$TG" >"$CBT_TMP/g.show" 2>"$CBT_TMP/err"
compare_gpu G "$CBT_TMP/g.txt" "$CBT_TMP/g.json" --show "$CBT_TMP/g.show"
is "$("$PYTHON3" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]
print(" ".join("%s:%s" % (r["name"], r["batches"]) for r in g["by_direction"]), g["not_timed"]["not_read_back"], g["not_timed"]["call_failed"])' "$CBT_TMP/g.json")" \
   "HtoD:3 DtoH:2 peer:2 unknown:1 mixed:2 3 1" \
   "G: the directions the specs make, in table order; 3 batches not read back, 1 failed call"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(list(d).index("gpu") == list(d).index("by_device") + 1)' "$CBT_TMP/g.json")" \
   True "the gpu member comes right after by_device"

# the form of earlier traces, one batch per gpu_time event, its fields
# integers (tests/tool/gpu1.tar.xz: G recorded so by the generator of an
# earlier version): read, its figures what its events say, and its gpu
# member G's of now but for over_time (the events' times differ)
( cd "$CBT_TMP" && xz -dc "$top_srcdir/tests/tool/gpu1.tar.xz" | tar xf - ) ||
    { echo "Bail out! cannot unpack tests/tool/gpu1.tar.xz"; exit 1; }
O=$CBT_TMP/gpu1/g
"$BABELTRACE2" --clock-seconds "$O" >"$CBT_TMP/o.txt" 2>&1
is "$(grep -c ' cubatchtrace:gpu_time: .* batch_id = [0-9]' "$CBT_TMP/o.txt")" 16 "gpu1: 16 gpu_time events of one batch each"
"$CBT" summary --json --pid "$(cat "$O/pid")" "$O" >"$CBT_TMP/o.json" 2>"$CBT_TMP/err"
is $? 0 "gpu1: summary --json exits 0"
"$CBT" show --records --pid "$(cat "$O/pid")" "$O" >"$CBT_TMP/o.show" 2>"$CBT_TMP/err"
compare_gpu "gpu1" "$CBT_TMP/o.txt" "$CBT_TMP/o.json" --show "$CBT_TMP/o.show"
but_over_time() { "$PYTHON3" -c 'import json,re,sys; g=json.load(open(sys.argv[1]))["gpu"]; g.pop("over_time")
print(re.sub(r"pid \d+", "pid P", json.dumps(g, sort_keys=True)))' "$1"; }
is "$(but_over_time "$CBT_TMP/o.json")" "$(but_over_time "$CBT_TMP/g.json")" "gpu1: the gpu member of G now, over_time and pids aside"
is "$(grep -c ' cubatchtrace:gpu_time: .* batch_id = \[ \[0\] = [0-9]*, \[1\]' "$CBT_TMP/g.txt")" 4 \
   "G now: the GPU times of a spec's batches in one gpu_time event (4 specs of several batches)"

# * 3 traces: one thread or three, the same summary
for j in 1 3; do
    "$CBT" summary --json --jobs $j $PIDS "$TG" "$TH" "$TK" >"$CBT_TMP/all$j.json" 2>"$CBT_TMP/err"
    is $? 0 "summary --json --jobs $j of three traces exits 0"
    "$CBT" summary --all --raw --jobs $j $PIDS "$TG" "$TH" "$TK" >"$CBT_TMP/all$j.raw" 2>"$CBT_TMP/err"
    "$CBT" summary --all --jobs $j $PIDS "$TG" "$TH" "$TK" >"$CBT_TMP/all$j.txt" 2>"$CBT_TMP/err"
done
cmp -s "$CBT_TMP/all1.json" "$CBT_TMP/all3.json"; ok $? "--jobs 3: the JSON summary is the one of --jobs 1"
cmp -s "$CBT_TMP/all1.raw" "$CBT_TMP/all3.raw"; ok $? "--jobs 3: the --raw text summary is the one of --jobs 1"
cmp -s "$CBT_TMP/all1.txt" "$CBT_TMP/all3.txt"; ok $? "--jobs 3: the text summary is the one of --jobs 1"
# by direction and op size: the parts' rows merged (HtoD rows from G and H), in both
dos() { "$PYTHON3" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["gpu"]["by_direction_op_size"]))' "$1"; }
is "$(dos "$CBT_TMP/all3.json")" "$(dos "$CBT_TMP/all1.json")" "--jobs 3: by_direction_op_size is the one of --jobs 1"
is "$("$PYTHON3" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]; d=[]
[d.append(r["direction"]) for r in g["by_direction_op_size"] if r["direction"] not in d]
print(d == [r["name"] for r in g["by_direction"]], "mixed" in d, len(g["by_direction_op_size"]) > len(d))' "$CBT_TMP/all1.json")" \
   "True True True" "by_direction_op_size: the directions of by_direction in its order (mixed too), some with several sizes"
{ trace_text "$TG" g; trace_text "$TH" h; trace_text "$TK" k; } >"$CBT_TMP/all.trace"
"$CBT" show --records $PIDS "$TG" "$TH" "$TK" >"$CBT_TMP/all.show" 2>"$CBT_TMP/err"
compare_gpu "G+H+K" "$CBT_TMP/all.trace" "$CBT_TMP/all3.json" --show "$CBT_TMP/all.show" --text "$CBT_TMP/all3.txt"
compare_gpu "G+H+K" "$CBT_TMP/all.trace" "$CBT_TMP/all3.json" --show "$CBT_TMP/all.show" --text "$CBT_TMP/all3.raw" --raw
is "$("$PYTHON3" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]; print(len(g["over_time"]["streams"]), g["over_time"]["streams"][-1]["name"], g["processes_timed"])' "$CBT_TMP/all3.json")" \
   "17 other 1" "over time: 16 streams and other; one process asked for GPU time"
grep -q '^# not timed: capturing 2, no_events 1, call_failed 1, lost 1, overflow 1, not_read_back 3$' "$CBT_TMP/all3.txt"
ok $? "text: the not-timed counts"
grep -q '^Name  *| Batches | Ops | *Bytes | Host time | GPU time | *GB/s$' "$CBT_TMP/all3.txt"; ok $? "text: the GPU tables' columns"
# human units elsewhere too: the op table's bytes, the driver time per batch
grep -q '^HtoD  *| *3 | *12 | *48.0 KiB | ' "$CBT_TMP/all3.txt"; ok $? "text: by_direction's bytes in KiB"
grep -q '^HtoD  *| *3 | *12 | *49152 | ' "$CBT_TMP/all3.raw"; ok $? "--raw: by_direction's bytes exact"
"$CBT" summary --all $(pids_of g) "$TG" >"$CBT_TMP/g.sum"
grep -q '^cuMemcpy3DBatchAsync_v2 .* | 1.00 µs | 1.00 µs | 1.00 µs$' "$CBT_TMP/g.sum"; ok $? "text: the driver time per batch in µs"
"$CBT" summary --all --raw $(pids_of g) "$TG" >"$CBT_TMP/g.raw"
grep -q '^cuMemcpy3DBatchAsync_v2 .* | 1000 | 1000 | 1000$' "$CBT_TMP/g.raw"
ok $? "--raw: the driver time per batch in ns, an integer, as the help says"
grep -q '^# host time in the driver: [0-9]* ns$' "$CBT_TMP/g.raw"; ok $? "--raw: the total host time in the driver in ns"
grep -v '^#' "$CBT_TMP/g.raw" | grep -q ' | [0-9]*\.[0-9]* | [0-9]*\.[0-9]* | [0-9]*\.[0-9]*$\| µs\| ms\| KiB\| MiB'
is $? 1 "--raw: no decimals in the Avg/Min/Max columns, no human unit in a table"

# a process that asked for GPU time whose batches were never read back: the text says so
gen_session n && gen_run n --gpu-process "n=5,ops=2" && gen_stop n; ok $? "generator N ran"
"$CBT" summary --json $(pids_of n) "$(trace_of n)" >"$CBT_TMP/n.json"
is "$("$PYTHON3" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]; print(g["processes_timed"], g["batches_timed"], g["not_timed"]["not_read_back"], g["by_direction"], g["over_time"])' "$CBT_TMP/n.json")" \
   "1 0 5 [] {'bucket_ns': 0, 'start_ns': 0, 'streams': []}" "N: one process timed, none of its 5 batches read back"
"$CBT" summary $(pids_of n) "$(trace_of n)" >"$CBT_TMP/n.txt"
grep -q '^# no batch was timed: 1 process asked for GPU time, but no gpu_time event was read (5 batches forwarded with CUDA_SUCCESS not read back)$' \
    "$CBT_TMP/n.txt"; ok $? "N: the text says why no batch was timed"
# and a trace without GPU time: the member is there, empty; the text has no GPU section
gen_session z && gen_run z "n=2,ops=3" && gen_stop z; ok $? "generator Z ran"
is "$("$CBT" summary --json $(pids_of z) "$(trace_of z)" | "$PYTHON3" -c 'import json,sys; print(json.load(sys.stdin)["gpu"])')" \
   "{'processes_timed': 0, 'batches_timed': 0, 'chosen': {'every': 1, 'every_min': 1, 'processes_sampled': 0, 'not_sampled': 0}, 'gpu_ns': 0, 'bytes': 0, 'ops': 0, 'host_ns': 0, 'not_timed': {'capturing': 0, 'no_events': 0, 'call_failed': 0, 'lost': 0, 'overflow': 0, 'not_read_back': 0}, 'by_direction': [], 'by_memkinds': [], 'by_op_size': [], 'by_direction_op_size': [], 'by_stream': [], 'by_device': [], 'over_time': {'bucket_ns': 0, 'start_ns': 0, 'streams': []}}" \
   "no gpu_time event: the gpu member with zeros and empty arrays"
"$CBT" summary $(pids_of z) "$(trace_of z)" | grep -q '^# GPU time'; is $? 1 "no gpu_time event: no GPU section in the text"
# the first screen: the GPU totals and the table by direction; the other GPU tables with --all
"$CBT" summary $PIDS "$TG" "$TH" "$TK" >"$CBT_TMP/first.txt" 2>&1
grep -q '^# GPU time by direction' "$CBT_TMP/first.txt" && grep -q '^# batches timed: ' "$CBT_TMP/first.txt"
ok $? "default summary: the GPU totals and the GPU time by direction"
grep -q '^# GPU time by \(memory kinds\|op size\|CUDA stream\|device\)' "$CBT_TMP/first.txt"; is $? 1 "default summary: the other GPU tables left for --all"

# ---- under the shim, CUBATCHTRACE_GPU_TIME=1, over the test double
GT="$top_builddir/tests/clients/client_gputime" PEER="$top_builddir/tests/tool/client_peer"
# shim_run SESSION [VAR=VALUE...] PROGRAM ARGS...: PROGRAM under the shim with GPU time on, its pid
# (the subshell execs env, which execs the program) appended to $CBT_TMP/SESSION.pids
shim_run() {
    _s=$1; shift
    ( env() { exec env "$@"; }; cbt_run env CUBATCHTRACE_GPU_TIME=1 "$@" ) >>"$CBT_TMP/$_s.out" 2>>"$CBT_TMP/$_s.err" &
    _p=$!
    wait $_p
    _st=$?
    echo $_p >>"$CBT_TMP/$_s.pids"
    return $_st
}
gen_session s1 || { ok 1 "session s1 starts"; done_testing; }
shim_run s1 FAKECUDA_DEVICE_COUNT=2 "$PEER"; ok $? "client_peer under the shim, GPU time on, exits 0"
shim_run s1 FAKECUDA_EVENT_LAG=3 "$GT" ok 5; ok $? "client_gputime ok 5 exits 0"
gen_stop s1
gen_session s2 || { ok 1 "session s2 starts"; done_testing; }
shim_run s2 "$GT" fail 3; ok $? "client_gputime fail 3 exits 0"
shim_run s2 FAKECUDA_EVENT_LAG=1000000 "$GT" kill 4; is $? 137 "client_gputime kill 4: killed before its batches were read back"
gen_stop s2
T1=$(trace_of s1) T2=$(trace_of s2)
SPIDS="$(pids_of s1) $(pids_of s2)"
{ trace_text "$T1" s1; trace_text "$T2" s2; } >"$CBT_TMP/shim.trace"
is "$("$PYTHON3" -c 'import sys; sys.path.insert(0, sys.argv[1]); import gputimes
print(sum(len(gputimes.entries(l)) for l in open(sys.argv[2]) if " cubatchtrace:gpu_time: " in l))' "$top_srcdir/tests" "$CBT_TMP/shim.trace")" 11 \
   "the shim wrote the GPU times of 11 batches: 3 + 5 read back, 3 failed calls, none of the killed process's 4"
for j in 1 2; do
    "$CBT" summary --json --jobs $j $SPIDS "$T1" "$T2" >"$CBT_TMP/shim$j.json" 2>"$CBT_TMP/err"
    is $? 0 "summary --json --jobs $j of the shim's traces exits 0"
    "$CBT" summary --all --raw --jobs $j $SPIDS "$T1" "$T2" >"$CBT_TMP/shim$j.raw" 2>"$CBT_TMP/err"
    "$CBT" summary --all --jobs $j $SPIDS "$T1" "$T2" >"$CBT_TMP/shim$j.txt" 2>"$CBT_TMP/err"
done
cmp -s "$CBT_TMP/shim1.json" "$CBT_TMP/shim2.json"; ok $? "shim traces, --jobs 2: the JSON summary is the one of --jobs 1"
cmp -s "$CBT_TMP/shim1.txt" "$CBT_TMP/shim2.txt"; ok $? "shim traces, --jobs 2: the text summary is the one of --jobs 1"
is "$(dos "$CBT_TMP/shim2.json")" "$(dos "$CBT_TMP/shim1.json")" "shim traces, --jobs 2: by_direction_op_size is the one of --jobs 1"
"$CBT" show --records $SPIDS "$T1" "$T2" >"$CBT_TMP/shim.show" 2>"$CBT_TMP/err"
compare_gpu shim "$CBT_TMP/shim.trace" "$CBT_TMP/shim2.json" --show "$CBT_TMP/shim.show" --text "$CBT_TMP/shim2.txt"
compare_gpu shim "$CBT_TMP/shim.trace" "$CBT_TMP/shim2.json" --show "$CBT_TMP/shim.show" --text "$CBT_TMP/shim2.raw" --raw
is "$("$PYTHON3" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]
print(g["processes_timed"], g["batches_timed"], g["not_timed"]["call_failed"], g["not_timed"]["not_read_back"], g["gpu_ns"] > 0, g["bytes"])' "$CBT_TMP/shim2.json")" \
   "4 8 3 4 True $((5 * (4096 + 1024) + $(sed -n 's/^peer: [0-9]* batches, [0-9]* ops, \([0-9]*\) bytes.*/\1/p' "$CBT_TMP/s1.out")))" \
   "shim: 4 processes timed, the 8 batches that completed timed with all their bytes, 3 failed calls, 4 batches not read back"
# client_peer's batches: fill (pinned host to devices 0 and 1), the peer
# batch (device to device, both ways: mixed), readback (devices to pinned host)
"$CBT" summary --json --pid "$(head -1 "$CBT_TMP/s1.pids")" "$T1" >"$CBT_TMP/peer.json"
is "$("$PYTHON3" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]; print(" ".join("%s:%d" % (r["name"], r["batches"]) for r in g["by_direction"]))' "$CBT_TMP/peer.json")" \
   "HtoD:1 DtoH:1 mixed:1" "client_peer: by_direction HtoD, DtoH and, for the batch copying both ways, mixed"
grep -q '^# not timed: capturing 0, no_events 0, call_failed 3, lost 0, overflow 0, not_read_back 4$' "$CBT_TMP/shim2.txt"
ok $? "shim: the text's not-timed counts"
done_testing
