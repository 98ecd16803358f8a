#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace timeline`: the Chrome trace-event file.  First the checker
# (tests/tool/check_trace_events.py) fails on broken files; then a handmade
# trace whose times are known (tests/tool/mkbatches.py timed: GPU times read
# back late, in reverse order) gives exact timestamps, flows and the
# --max-batches cut; two hosts with one pid get distinct pids; then clients
# under the shim over the test double (CUBATCHTRACE_GPU_TIME=1), counted
# against `summary --json`, `check --format json` and the trace's own
# gpu_time events; the window; bad input and unwritable output.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
CHECK="$top_srcdir/tests/tool/check_trace_events.py"
MK="$top_srcdir/tests/tool/mkbatches.py"

# jget FILE EXPR: a Python expression over the document d
jget() { "$PYTHON3" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# events FILE PH: the events of that phase, one line each: pid tid ts dur name batch_id
events() {
    "$PYTHON3" -c '
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] == sys.argv[2]:
        print(e["pid"], e["tid"], "%.3f" % e["ts"], "%.3f" % e.get("dur", 0), e["name"], e.get("args", {}).get("batch_id"))
' "$1" "$2"
}
checker() { "$PYTHON3" "$CHECK" "$@" >"$CBT_TMP/chk.out" 2>"$CBT_TMP/chk.err"; }
tl() { "$CBT" timeline "$@" >"$CBT_TMP/tl.out" 2>"$CBT_TMP/tl.err"; }

# ---- the checker fails on broken files, one way each
mkdir -p "$CBT_TMP/broken"
M='{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"p"}},{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}}'
X='{"ph":"X","name":"a","pid":1,"tid":1,"ts":1.0,"dur":2.0}'
printf '{"traceEvents":[%s,%s]}\n' "$M" "$X" >"$CBT_TMP/broken/good.json"
checker "$CBT_TMP/broken/good.json" --expect-host-spans 1 --expect-gpu-spans 0
is "$?:$(cat "$CBT_TMP/chk.out")" "0:events=3 findings=0 flows=0 gpu_spans=0 gpu_tracks=0 host_spans=1 host_tracks=1 instants=0" \
    "checker: a good file passes, with its counts"
broken() { # broken NAME WHAT-STDERR-SAYS CONTENT [CHECKER-ARGS]
    printf '%s\n' "$3" >"$CBT_TMP/broken/$1.json"
    _f=$CBT_TMP/broken/$1.json; _n=$1 _w=$2; shift 3
    checker "$_f" "$@"
    _st=$?
    is "$_st" 1 "checker: $_n fails"
    grep -q -- "$_w" "$CBT_TMP/chk.err"; ok $? "checker: $_n: says '$_w'"
}
broken not-json "not valid JSON" '{"traceEvents":[' 
broken no-list "no traceEvents list" '{"events":[]}'
broken no-dur "ph X without dur" "{\"traceEvents\":[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1}]}"
broken negative-dur "dur -1 < 0" "{\"traceEvents\":[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":-1}]}"
broken no-ts "ph i without ts" "{\"traceEvents\":[$M,{\"ph\":\"i\",\"name\":\"a\",\"pid\":1,\"tid\":1}]}"
broken unnamed-tid "pid 1 tid 2 has no thread_name" "{\"traceEvents\":[$M,{\"ph\":\"i\",\"s\":\"t\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":1}]}"
broken unnamed-pid "pid 3 has no process_name" "{\"traceEvents\":[$M,{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":3,\"tid\":1,\"args\":{\"name\":\"t\"}},{\"ph\":\"i\",\"name\":\"a\",\"pid\":3,\"tid\":1,\"ts\":1}]}"
broken backwards "ts 1.0 before 3.0 on track pid 1 tid 1" "{\"traceEvents\":[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":3.0,\"dur\":1},$X]}"
broken lone-flow "flow start id 7 has no finish" "{\"traceEvents\":[$M,$X,{\"ph\":\"s\",\"cat\":\"c\",\"id\":7,\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":1.0}]}"
broken flow-twice "flow id 7 (cat c) used twice" "{\"traceEvents\":[$M,$X,{\"ph\":\"s\",\"cat\":\"c\",\"id\":7,\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":1.0},{\"ph\":\"s\",\"cat\":\"c\",\"id\":7,\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":1.0},{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"c\",\"id\":7,\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":2.0}]}"
broken flow-no-cat "ph f without cat" "{\"traceEvents\":[$M,$X,{\"ph\":\"f\",\"id\":7,\"name\":\"f\",\"pid\":1,\"tid\":1,\"ts\":2.0}]}"
broken count "host_spans: 1, expected 2" "{\"traceEvents\":[$M,$X]}" --expect-host-spans 2

# ---- usage
"$CBT" timeline --help >"$CBT_TMP/out" 2>&1; is $? 0 "timeline --help exits 0"
grep -q -- '--max-batches' "$CBT_TMP/out"; ok $? "timeline --help documents --max-batches"
"$CBT" --help | grep -q '^  timeline '; ok $? "cubatchtrace --help lists timeline"
tl "$CBT_TMP"; usage_error_lines "timeline without -o" $? "$CBT_TMP/tl.out" "$CBT_TMP/tl.err" "no output given" timeline
tl -o "$CBT_TMP/x.json"; usage_error_lines "timeline without a trace" $? "$CBT_TMP/tl.out" "$CBT_TMP/tl.err" "no trace given" timeline
tl -o - --max-batches 0 "$CBT_TMP"
usage_error_lines "--max-batches 0" $? "$CBT_TMP/tl.out" "$CBT_TMP/tl.err" "--max-batches 0: expected a number" timeline
tl -o - --max-batchs 3 "$CBT_TMP"
usage_error_lines "--max-batchs" $? "$CBT_TMP/tl.out" "$CBT_TMP/tl.err" "did you mean '--max-batches'" timeline

# ---- bad input, unwritable output: one line, exit 2, no file
tl -o "$CBT_TMP/none.json" "$CBT_TMP/no-such-trace"
one_line_error "a missing trace" $? "$CBT_TMP/tl.out" "$CBT_TMP/tl.err" "no-such-trace"
grep -q '^cubatchtrace timeline: ' "$CBT_TMP/tl.err"; ok $? "a missing trace: the line names the command"
"$PYTHON3" "$top_srcdir/tests/tool/mkctf.py" "$CBT_TMP/other" other:event 3
tl -o "$CBT_TMP/none.json" "$CBT_TMP/other"
one_line_error "a trace without cubatchtrace events" $? "$CBT_TMP/tl.out" "$CBT_TMP/tl.err" "no cubatchtrace events"
is "$(ls "$CBT_TMP" | grep -c '^none\.json')" 0 "failed reads leave no FILE and no temporary file beside it"
"$PYTHON3" "$MK" "$CBT_TMP/timed" timed 6
tl -o "$CBT_TMP/no-dir/x.json" "$CBT_TMP/timed"
one_line_error "-o in a missing directory" $? "$CBT_TMP/tl.out" "$CBT_TMP/tl.err" "cannot write $CBT_TMP/no-dir/x.json: No such file"
tl -o "$CBT_TMP" "$CBT_TMP/timed"
one_line_error "-o a directory" $? "$CBT_TMP/tl.out" "$CBT_TMP/tl.err" "cannot write $CBT_TMP: Is a directory"

# ---- a handmade trace with known times (mkbatches.py timed 6): batch i at
# (i + 1) ms on thread 4242 + i % 2, its call 1000 ns (driver_ns), its GPU
# span from 500 ns before the batch event, 250 * (i + 1) ns long, on stream
# 0x5000 + i % 2; the gpu_time events come later, in reverse order, with one
# for a batch never made (id 1000, at 11 ms - 100 ns, 50 ns) and one not timed.
tl -o "$CBT_TMP/t.json" "$CBT_TMP/timed"
is "$?:$(cat "$CBT_TMP/tl.err")" "0:" "timed trace: exit 0, nothing on stderr"
is "$(cat "$CBT_TMP/tl.out")" "" "timed trace: nothing on stdout with -o FILE"
checker "$CBT_TMP/t.json" --expect-host-spans 6 --expect-gpu-spans 7 --expect-flows 6 --expect-findings 0 \
    --expect-host-tracks 2 --expect-gpu-tracks 2
ok $? "timed trace: the checker passes (6 calls, 7 GPU spans, 6 flows, 2 threads, 2 streams)"
[ $_tap_failed -eq 0 ] || sed 's/^/#   /' "$CBT_TMP/chk.err"
# origin: the earliest event, batch 0's call at 1 ms - 1000 ns; µs from it
want_host=$(for i in 0 1 2 3 4 5; do
    printf '4242 %d %d.000 1.000 cuMemcpy3DBatchAsync_v2 %d\n' $((4242 + i % 2)) $((i * 1000)) $i; done | sort)
is "$(events "$CBT_TMP/t.json" X | grep ' 424[23] ' | sort)" "$want_host" \
    "timed trace: each call on its thread, from (i + 1) ms - driver_ns, driver_ns long, µs from the origin"
want_gpu=$("$PYTHON3" -c '
for i in range(6):
    print("%d %.3f %.3f %d" % (0x5000 + i % 2, (i * 1000000 + 500) / 1000, 250 * (i + 1) / 1000, i))
print("%d %.3f %.3f %d" % (0x5000, (11000000 - 100 - 999000) / 1000, 0.05, 1000))' | sort)
# GPU tracks by name: tid -> stream handle
tracks=$("$PYTHON3" -c '
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"].startswith("GPU stream"):
        print(e["tid"], int(e["args"]["name"].split()[2], 16))' "$CBT_TMP/t.json")
is "$(events "$CBT_TMP/t.json" X | grep -v ' 424[23] ' | while read -r p t ts d n b; do
        printf '%s %s %s %s\n' "$(echo "$tracks" | awk -v t="$t" '$1 == t { print $2 }')" "$ts" "$d" "$b"; done | sort)" \
    "$want_gpu" "timed trace: each GPU span on its stream's track, at event time + start_rel_ns, gpu_ns long"
is "$(echo "$tracks" | awk '{ print ($1 >= 1073741824) }' | sort -u)" 1 "GPU tracks have synthetic tids above any real one"
is "$(jget "$CBT_TMP/t.json" 'sorted(e["args"]["name"] for e in d["traceEvents"] if e["name"] == "thread_name")')" \
    "['GPU stream 0x5000 (id 0, device 0)', 'GPU stream 0x5001 (id 1, device 0)', 'tid 4242', 'tid 4243']" \
    "timed trace: tracks named by thread_name"
is "$(jget "$CBT_TMP/t.json" '[e["args"]["GB/s"] for e in d["traceEvents"] if e["ph"] == "X" and e["args"]["batch_id"] == 3 and "GB/s" in e["args"]]')" \
    "[0.512]" "timed trace: batch 3's GPU span: 512 bytes in 1000 ns, 0.512 GB/s"
is "$(jget "$CBT_TMP/t.json" 'sorted((e["args"]["batch_id"], e["ph"], e["tid"] < 1073741824) for e in d["traceEvents"] if e["ph"] in "sf")')" \
    "$("$PYTHON3" -c 'print(sorted(x for i in range(6) for x in ((i, "f", False), (i, "s", True))))')" \
    "timed trace: one flow per batch, from the thread (s) to the stream track (f)"
is "$(jget "$CBT_TMP/t.json" 'all(e["cat"] == "cubatchtrace" and (e["ph"] == "s" or e.get("bp") == "e") for e in d["traceEvents"] if e["ph"] in "sf")')" \
    True "flows: category cubatchtrace, the finish binds to its enclosing slice (bp e)"
is "$(jget "$CBT_TMP/t.json" 'sorted(set((e["ts"], e["pid"], e["tid"]) for e in d["traceEvents"] if e["ph"] in "sf") - set((e["ts"], e["pid"], e["tid"]) for e in d["traceEvents"] if e["ph"] == "X"))')" \
    "[]" "flows: each at the start of its span, on its track"
o='d["otherData"]'
is "$(jget "$CBT_TMP/t.json" "($o['origin_ns'], $o['batches'], $o['gpu_spans'], $o['flows'], $o['gpu_status']['timed'], $o['gpu_status']['capturing'], $o['gpu_spans_without_batch'])")" \
    "('1764500000000999000', 6, 7, 6, 7, 1, 1)" \
    "otherData: the origin (ns), batches, GPU spans, flows, GPU statuses (one not timed), a GPU span without its batch"
tl -o - "$CBT_TMP/timed"
cmp -s "$CBT_TMP/tl.out" "$CBT_TMP/t.json"; ok $? "-o - writes the same to the standard output"

# the size stays bounded per batch (bench/timeline-size.sh measures it: docs/PERFORMANCE.md)
"$PYTHON3" "$MK" "$CBT_TMP/timed200" timed 200
tl -o "$CBT_TMP/t200.json" "$CBT_TMP/timed200"
sz=$(wc -c <"$CBT_TMP/t200.json")
checker "$CBT_TMP/t200.json" --expect-host-spans 200 --expect-gpu-spans 201 --expect-flows 200
ok $? "200 GPU-timed batches: the checker passes"
diag "timeline size: $sz bytes for 200 handmade batches, their GPU spans, flows and findings ($(sed 's/.*findings=\([0-9]*\) .*/\1/' "$CBT_TMP/chk.out")): $((sz / 200)) bytes per batch"
[ $((sz / 200)) -le 1500 ]; ok $? "200 GPU-timed batches: at most 1500 bytes per batch ($((sz / 200)))"

# --max-batches: the first N batches put back together, their GPU spans only
tl -o "$CBT_TMP/m.json" --max-batches 2 "$CBT_TMP/timed"
is "$?:$(cat "$CBT_TMP/tl.err")" "0:cubatchtrace timeline: stopped after 2 batches (--max-batches): 4 more left out" \
    "--max-batches 2: exit 0, said once on stderr"
checker "$CBT_TMP/m.json" --expect-host-spans 2 --expect-gpu-spans 2 --expect-flows 2
ok $? "--max-batches 2: 2 calls, their 2 GPU spans and flows"
is "$(jget "$CBT_TMP/m.json" "($o['max_batches'], $o['stopped_at_max_batches'], $o['batches_left_out'], $o['gpu_spans_left_out'])")" \
    "(2, True, 4, 5)" "--max-batches 2: otherData says so (4 batches and 5 GPU spans left out)"

# two hosts, one pid: distinct synthetic pids, the real one in the name
"$PYTHON3" "$MK" "$CBT_TMP/hosts/a" timed 2
"$PYTHON3" "$MK" "$CBT_TMP/hosts/b" timed 3
sed -i 's/hostname = "handmade"/hostname = "other"/' "$CBT_TMP/hosts/b/metadata"
tl -o "$CBT_TMP/h.json" "$CBT_TMP/hosts"
checker "$CBT_TMP/h.json" --expect-host-spans 5 --expect-flows 5 --expect-host-tracks 4
ok $? "two hosts: the checker passes (5 calls, 5 flows, 4 threads)"
is "$(jget "$CBT_TMP/h.json" 'sorted((e["pid"] > 4242, e["args"]["name"]) for e in d["traceEvents"] if e["name"] == "process_name")')" \
    "[(True, 'process (pid 4242, host handmade)'), (True, 'process (pid 4242, host other)')]" \
    "two hosts, pid 4242 on both: two synthetic pids, named with the real pid and the host"
is "$(jget "$CBT_TMP/h.json" 'len(set(e["pid"] for e in d["traceEvents"]))')" 2 "two hosts: two pids"

# ---- clients under the shim over the test double, GPU time asked for
if ! want_sessiond; then
    ok 0 "# SKIP clients under the shim: $CBT_NO_SESSIOND"
    done_testing
fi
. "$top_srcdir/tests/doors/doors.sh"
# counts NAME PID: figures from other sources than the timeline: batches
# (summary --json), findings (check --format json), batches timed (their
# GPU times in the gpu_time events of babeltrace2's text of the trace)
counts() {
    "$CBT" summary --json --pid "$2" "$CBT_TMP/$1" >"$CBT_TMP/$1.sum.json" 2>/dev/null
    "$CBT" check --format json --pid "$2" "$CBT_TMP/$1" >"$CBT_TMP/$1.check.json" 2>/dev/null
    nb=$(jget "$CBT_TMP/$1.sum.json" 'd["batches"]')
    nf=$(jget "$CBT_TMP/$1.check.json" 'd["totals"]["findings"]')
    ng=$("$PYTHON3" -c 'import sys; sys.path.insert(0, sys.argv[1]); import gputimes
print(sum(e["status"] == 0 for l in open(sys.argv[2]) if " cubatchtrace:gpu_time: " in l for e in gputimes.entries(l)))' \
        "$top_srcdir/tests" "$CBT_TMP/$1.trace")
}

traced "demo-$$" env CUBATCHTRACE_GPU_TIME=1 "$top_builddir/examples/demo"
counts "demo-$$" "$pid"
tl -o "$CBT_TMP/demo.json" --pid "$pid" "$CBT_TMP/demo-$$"
is "$?:$(cat "$CBT_TMP/tl.err")" "0:" "demo: exit 0, nothing on stderr"
checker "$CBT_TMP/demo.json" --expect-host-spans "$nb" --expect-findings "$nf" --expect-gpu-spans "$ng" --expect-flows "$ng"
ok $? "demo: the checker passes: $nb calls (summary --json), $nf findings (check --format json), $ng GPU spans and flows (batches timed)"
[ $_tap_failed -eq 0 ] || sed 's/^/#   /' "$CBT_TMP/chk.err"
is "$nb $nf" "6 1" "demo: 6 batches, 1 finding (the demo's overlap)"
is "$(jget "$CBT_TMP/demo.json" '[(e["name"], e["args"]["severity"], e["args"]["op"], e["s"]) for e in d["traceEvents"] if e["ph"] == "i"]')" \
    "[('overlap_dst_dst', 'hazard', 0, 't')]" "demo: the finding, an instant on its thread"
# the call site as `check` names it (file:line with the statedump, else the address)
"$CBT" check --pid "$pid" "$CBT_TMP/demo-$$" 2>/dev/null | sed -n 's/^hazard overlap_dst_dst: .* batch=\([0-9]*\) .* caller=\(.*\): ops 0 and 1 write the same bytes: .*/\1 \2/p' >"$CBT_TMP/site"
is "$(jget "$CBT_TMP/demo.json" '" ".join("%d %s" % (e["args"]["batch_id"], e["args"]["call_site"]) for e in d["traceEvents"] if e["ph"] == "X" and "door" in e["args"] and e["args"]["batch_id"] == 5)')" \
    "$(cat "$CBT_TMP/site")" "demo: the call with the finding names its call site as check does"
is "$(jget "$CBT_TMP/demo.json" '[e["args"]["name"] for e in d["traceEvents"] if e["name"] == "process_name"]')" \
    "['demo (pid $pid)']" "demo: the process named by procname and pid"
# bytes of each call: what summary --json counts
is "$(jget "$CBT_TMP/demo.json" 'sum(e["args"]["bytes"] for e in d["traceEvents"] if e["ph"] == "X" and "door" in e["args"])')" \
    "$(jget "$CBT_TMP/demo-$$.sum.json" 'd["bytes"]')" "demo: the calls' bytes add up to the summary's"

K=20
traced "thr-$$" env CUBATCHTRACE_GPU_TIME=1 "$top_builddir/tests/clients/client_threads" $K 4
counts "thr-$$" "$pid"
tl -o "$CBT_TMP/thr.json" --pid "$pid" "$CBT_TMP/thr-$$"
checker "$CBT_TMP/thr.json" --expect-host-spans "$nb" --expect-gpu-spans "$ng" --expect-flows "$ng" --expect-host-tracks 8
ok $? "8 threads: the checker passes: $nb calls on 8 thread tracks, $ng GPU spans and flows"
[ $_tap_failed -eq 0 ] || sed 's/^/#   /' "$CBT_TMP/chk.err"
is "$nb" $((8 * K)) "8 threads: 8 x $K batches"
# the calling thread of each batch: the high 32 bits of its event's packed word w (t's second word)
is "$(jget "$CBT_TMP/thr.json" 'sorted(set(e["tid"] for e in d["traceEvents"] if e["ph"] == "X" and "door" in e["args"]))')" \
    "$(grep -E ' cubatchtrace:(b|bs|c|cs): ' "$CBT_TMP/thr-$$.trace" | sed -n 's/.* t = \[ \[0\] = [0-9]*, \[1\] = \([0-9]*\),.*/\1/p' |
        "$PYTHON3" -c 'import sys; print(sorted(set(int(l) >> 32 for l in sys.stdin)))')" \
    "8 threads: the thread tracks are the batches' calling threads"
if [ "$ng" -gt 0 ]; then
    is "$(jget "$CBT_TMP/thr.json" 'len(set(e["tid"] for e in d["traceEvents"] if e["ph"] == "X" and "GB/s" in e["args"]))')" 8 \
        "8 threads: 8 GPU stream tracks (one stream each)"
else
    ok 0 "# SKIP 8 threads: no GPU stream track: the shim timed no batch"
fi
sz=$(wc -c <"$CBT_TMP/thr.json")
diag "timeline size: $sz bytes for $nb batches of 8 threads, $ng GPU spans and flows: $((sz / nb)) bytes per batch"
[ $((sz / nb)) -le 2000 ]; ok $? "8 threads: at most 2000 bytes per batch ($((sz / nb)))"

# --max-batches on a real trace; --begin/--end: the batches summary counts in the same window
tl -o "$CBT_TMP/thr5.json" --max-batches 5 --pid "$pid" "$CBT_TMP/thr-$$"
checker "$CBT_TMP/thr5.json" --expect-host-spans 5
ok $? "8 threads, --max-batches 5: 5 calls"
g5=$(sed -n 's/.* gpu_spans=\([0-9]*\) .*/\1/p' "$CBT_TMP/chk.out"); f5=$(sed -n 's/.* flows=\([0-9]*\) .*/\1/p' "$CBT_TMP/chk.out")
is "$([ "$ng" -eq 0 ] || [ "${g5:-9}" -le 5 ] && echo "$f5")" "$g5" \
    "8 threads, --max-batches 5: only the GPU spans of those calls ($g5), each with its flow"
grep -q "stopped after 5 batches (--max-batches): $((nb - 5)) more left out" "$CBT_TMP/tl.err"
ok $? "8 threads, --max-batches 5: stderr says how many were left out"
ts=$(grep -E ' cubatchtrace:(b|bs|c|cs): ' "$CBT_TMP/thr-$$.trace" | sed -n 's/^\[\([0-9:.]*\)\].*/\1/p' | sort)
b=$(echo "$ts" | sed -n "$((nb / 4))p"); e=$(echo "$ts" | sed -n "$((3 * nb / 4))p")
"$CBT" summary --json --pid "$pid" --begin "$b" --end "$e" "$CBT_TMP/thr-$$" >"$CBT_TMP/win.sum.json" 2>/dev/null
nw=$(jget "$CBT_TMP/win.sum.json" 'd["batches"]')
tl -o "$CBT_TMP/win.json" --pid "$pid" --begin "$b" --end "$e" "$CBT_TMP/thr-$$"
checker "$CBT_TMP/win.json" --expect-host-spans "$nw"
ok $? "--begin $b --end $e: $nw calls, as summary counts in that window"
is "$([ "$nw" -gt 0 ] && [ "$nw" -lt "$nb" ] && echo inside)" inside "the window holds some batches, not all ($nw of $nb)"
is "$(jget "$CBT_TMP/win.json" "($o['begin'], $o['end'])")" "('$b', '$e')" "otherData says the window"

# a batch written before its call (outcome pending; cubatchtrace:batch_end
# once the call returned): its call ends when the call returned, at its
# batch_end's time, as other calls end at their batch event's
F=$(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top_srcdir/include/cubatchtrace/events.h")
gen_session pend || { ok 1 "session pend starts"; done_testing; }
gen_run pend "n=1,ops=2,src=device,dst=device,pending=1,driver_ns=5000,format=$F"
ok $? "pending: the generator ran"
gen_stop pend
tl -o "$CBT_TMP/pend.json" $(pids_of pend) "$(trace_of pend)"
"$BABELTRACE2" --clock-seconds "$(trace_of pend)" 2>/dev/null >"$CBT_TMP/pend.txt"
is "$(jget "$CBT_TMP/pend.json" '" ".join("%d %d" % (round(e["dur"] * 1000), int(d["otherData"]["origin_ns"]) + round((e["ts"] + e["dur"]) * 1000)) for e in d["traceEvents"] if e["ph"] == "X" and "door" in e["args"])')" \
    "5000 $(grep -F "vpid = $(cat "$CBT_TMP/pend.pids")," "$CBT_TMP/pend.txt" |
        sed -n 's/^\[\([0-9]*\)\.\([0-9]*\)\].* cubatchtrace:batch_end: .*/\1\2/p')" \
    "pending: the call lasts its driver_ns and ends at its batch_end's time"
done_testing
