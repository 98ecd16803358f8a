#!/bin/sh
# SPDX-License-Identifier: MIT
# `summary --json` reports exactly what the generator's batches hold: batches,
# ops, bytes, failed/refused/no-driver batches, driver time, the rows of every
# table (by_api, by_door, by_api_door, by_direction, by_device, by_memkinds,
# by_access_order, both histograms) and the findings the reader computes from
# the ops, by rule.  Expected figures come from expect.py, which lays the ops
# out again from the specs; the same figures are first checked against the
# events themselves (babeltrace2's text), so a wrong generator cannot pass.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not found"

# A: every API variant, door and outcome, every direction and memory kind,
#    1D, 2D and 3D extents, CUDA arrays with a known and an unknown element
#    size, a batch of 1000 ops (16 events), a NULL op list, a batch recorded
#    before forwarding (batch + batch_end), ops the driver never read, and ops
#    that break rules of each severity
A1="n=3,ops=1000,src=host_pinned,dst=device,bytes=4096"
A2="n=5,ops=7,api=cuMemcpy3DBatchAsync_v2_ptsz,door=getprocaddress,src=device,dst=host_pageable,bytes=100,order=DURING_API_CALL"
A3="n=2,ops=3,api=cuMemcpy3DBatchAsync,door=binding,src=device,dst=device,srcdev=0,dstdev=1,result=CUDA_ERROR_INVALID_VALUE"
A4="n=4,ops=2,api=cuMemcpy3DBatchAsync_ptsz,src=managed,dst=device,order=ANY,violate=overlap_dst_dst"
A5="n=1,ops=5,src=array,dst=host_pinned,elem=0,outcome=refused,violate=array_null@2"
A6="n=2,ops=9,src=host_pageable,dst=host_pinned,site=1,driver_ns=12345"
A7="n=1,ops=4,oplist=0,outcome=refused"
A8="n=2,ops=256,src=device,dst=array,bytes=65536,elem=2"
A9="n=1,ops=1,src=unknown,dst=device"
A10="n=2,ops=70,src=unmapped,dst=device,shape=32x8x2,order=ANY,pending=1,driver_ns=5000"
A11="n=1,ops=12,shape=64x4x2,violate=overlap_src_dst@0+overlap_self@2+row_length_too_small@3+layer_height_too_small@4+extent_zero@5+access_order_invalid@6+op_flags_invalid@7+pointer_null@8+device_out_of_bounds@9+lochint_ignored@10+lochint_invalid@11"
A12="n=1,ops=3,src=array,dst=array,shape=8x2x1,elem=4,violate=array_out_of_bounds@2+overlap_dst_dst@0"
A13="n=1,ops=2,flags=1,stream=1,srcdev=1,dstdev=1"
A14="n=1,ops=1,stream=0,src=managed,dst=managed,srcdev=1,dstdev=0"
A15="n=1,ops=0,numops=0,outcome=no_driver,result=CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,driver_ns=0"
A16="n=1,ops=6,numops=10,stream=0x2000,stream_id=9"
set -- "$A1" "$A2" "$A3" "$A4" "$A5" "$A6" "$A7" "$A8" "$A9" "$A10" "$A11" "$A12" "$A13" "$A14" "$A15" "$A16"
# B: a second process in the same trace
B1="n=6,ops=33,src=device,dst=device,bytes=8"
# C: a second trace, its generator changing CPU between the events of each
#    batch (findings, batch, batch_ops, batch_end), so they land in different
#    streams (pairing without a muxer); validated inline, findings agreeing
C1="n=20,ops=300,src=host_pageable,dst=device,bytes=1024,pending=1,inline=1"
# D: the reader's own checks, a third process of trace A: inline findings that
#    agree, disagree (a finding left out, one made up), were made with older
#    or newer rules (not compared: the read-time ones count), ops_not_read
#    (the reader's own, never compared); a process that ended inside the driver
#    (no batch_end), a batch missing ops, a chunk reaching past ops_recorded
D1="n=2,ops=4,src=host_pageable,violate=overlap_dst_dst@1,inline=1"
D2="n=3,ops=3,src=host_pageable,inline=wrong"
D3="n=2,ops=2,src=host_pageable,rules=1,inline=wrong"
# the catalogue version of this build, and one newer
RULES=$(sed -n 's/^#define CBT_RULES_VERSION \([0-9]*\).*/\1/p' "$top_srcdir/include/cubatchtrace/catalog.h")
D4="n=1,ops=1,src=host_pageable,rules=$((RULES + 1)),inline=1"
D5="n=1,ops=6,numops=10,src=host_pageable,inline=1"
D6="n=3,ops=2,src=host_pageable,pending=lost"
D7="n=2,ops=5,recorded=8,numops=10"
D8="n=1,ops=5,recorded=3"
# E: a trace written in an event format newer than the tool's
E1="n=1,ops=1,format=$(($(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top_srcdir/include/cubatchtrace/events.h") + 1))"
# F: a whole batch (its header's 64 ops), then a chunk of 6 more past its ops_recorded
F1="n=1,ops=70,recorded=64"

gen_session a || { ok 1 "session a starts"; done_testing; }
gen_run a "$@"; ok $? "generator A ran"
gen_run b "$B1"; ok $? "generator B ran"
gen_run d "$D1" "$D2" "$D3" "$D4" "$D5" "$D6" "$D7" "$D8"; ok $? "generator D ran"
gen_run f "$F1"; ok $? "generator F ran"
gen_stop a
gen_session e && gen_run e "$E1" && gen_stop e; ok $? "generator E ran"
gen_session c && gen_run c --hop "$C1" && gen_stop c; ok $? "generator C ran"
TA=$(trace_of a) TC=$(trace_of c)

# the events hold what the specs say
compare_trace "$TA" a -- "$@"
compare_trace "$TC" c -- "$C1"
cp "$CBT_TMP/trace.txt" "$CBT_TMP/c.txt"
if [ "$(nproc)" -ge 2 ]; then
    # cpu_id of each event of C, by batch: --hop really spread every batch over CPUs (streams)
    is "$("$PYTHON3" -c 'import re,sys
cpus = {}
for l in open(sys.argv[1]):
    m = re.search(r"cubatchtrace:\w+: \{ cpu_id = (\d+) \}.*?\bbatch_id = (\d+)", l)
    if m: cpus.setdefault(m.group(2), set()).add(m.group(1))
print(len(cpus), min(len(c) for c in cpus.values()))' "$CBT_TMP/c.txt")" "20 2" "C: each of the 20 batches has events on 2 CPUs or more"
fi
compare_trace "$TA" d -- "$D1" "$D2" "$D3" "$D4" "$D5" "$D6" "$D7" "$D8"
compare_trace "$TA" f -- "$F1"

"$CBT" summary --json $(pids_of a) "$TA" >"$CBT_TMP/a.json" 2>"$CBT_TMP/err"
is $? 0 "summary --json A exits 0"
compare_expect "$CBT_TMP/a.json" "$@"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["processes"], d["threads"], d["discarded_events"], d["unpaired"]["orphan_ops"])' "$CBT_TMP/a.json")" \
   "1 1 0 0" "A: one process, one thread, nothing discarded or unpaired"

# two processes of one trace, and two traces at once
"$CBT" summary --json $(pids_of a) $(pids_of b) "$TA" >"$CBT_TMP/ab.json"
compare_expect "$CBT_TMP/ab.json" "$@" "$B1"
"$CBT" summary --json $(pids_of b) $(pids_of c) "$TA" "$TC" >"$CBT_TMP/bc.json"
compare_expect "$CBT_TMP/bc.json" "$B1" "$C1"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["processes"], d["unpaired"])' "$CBT_TMP/bc.json")" \
   "2 {'orphan_ops': 0, 'incomplete_batches': 0, 'pending_overflow': 0, 'tables_full': False}" \
   "B+C: two processes, every batch_ops and batch_end paired with its batch across streams"

# the reader's own checks
"$CBT" summary --json $(pids_of d) "$TA" >"$CBT_TMP/d.json" 2>"$CBT_TMP/err"
is $? 0 "summary --json D exits 0"
compare_expect "$CBT_TMP/d.json" "$D1" "$D2" "$D3" "$D4" "$D5" "$D6" "$D7" "$D8"
"$CBT" summary $(pids_of d) "$TA" >"$CBT_TMP/d.txt"
grep -q '^# inline findings checked: 25, disagreeing: 6$' "$CBT_TMP/d.txt"; ok $? "text D: inline findings checked and disagreeing"
grep -q "^# rules: recorded with catalogue v$RULES, v1, v$((RULES + 1)), checked with v$RULES\$" "$CBT_TMP/d.txt"; ok $? "text D: rules recorded and checked"
grep -q '^# pending batches: 3 ' "$CBT_TMP/d.txt"; ok $? "text D: pending batches"
grep -q '^# malformed batches: 1 ' "$CBT_TMP/d.txt"; ok $? "text D: malformed batches"
grep -q '^# incomplete batches: 2 ' "$CBT_TMP/d.txt"; ok $? "text D: incomplete batches"
# F's chunk does not fit the batch its header made whole: whichever event the
# reader meets first, the batch is malformed and no op is an orphan
"$CBT" summary --json $(pids_of f) "$TA" >"$CBT_TMP/f.json"
compare_expect "$CBT_TMP/f.json" "$F1"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["unpaired"]["orphan_ops"], [r["name"] for r in d["by_api"]])' "$CBT_TMP/f.json")" \
   "0 ['cuMemcpy3DBatchAsync_v2']" "F: no orphan op, no row of an unseen batch"
for cmd in summary check; do
    "$CBT" $cmd $(pids_of e) "$(trace_of e)" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    one_line_error "$cmd of a newer event format" $? "$CBT_TMP/out" "$CBT_TMP/err" "event format $(echo "$E1" | sed 's/.*format=//'), newer"
done

# the text summary: discarded events first, the totals, named call sites
"$CBT" summary --by process,thread,stream $(pids_of a) "$TA" >"$CBT_TMP/a.txt"
is $? 0 "summary (text) exits 0"
is "$(head -n 1 "$CBT_TMP/a.txt")" "# discarded events: 0" "the first line reports discarded events"
grep -q '^# batches: 29$' "$CBT_TMP/a.txt"; ok $? "text: batches"
grep -q '^# ops: 3749$' "$CBT_TMP/a.txt"; ok $? "text: ops"
grep -q '^# failed batches: 2 ' "$CBT_TMP/a.txt"; ok $? "text: failed batches"
grep -q '^# refused batches: 2 ' "$CBT_TMP/a.txt"; ok $? "text: refused batches"
grep -q '^# no-driver batches: 1$' "$CBT_TMP/a.txt"; ok $? "text: no-driver batches"
grep -q '^Name *| *Batches | *Ops | *Bytes | *% | *Avg | *Min | *Max$' "$CBT_TMP/a.txt"; ok $? "text: THAPI-style columns"
# the generator's call sites are its functions' first bytes: their lines are those of the definitions
la=$(grep -n '^void gen_site_a(' "$top_srcdir/tests/tool/cbt-gen.c" | cut -d: -f1)
lb=$(grep -n '^void gen_site_b(' "$top_srcdir/tests/tool/cbt-gen.c" | cut -d: -f1)
grep -q "^cbt-gen.c:$la (gen_site_a, cbt-gen+0x[0-9a-f]*) *| *27 |" "$CBT_TMP/a.txt"; ok $? "text: call site gen_site_a named cbt-gen.c:$la (27 batches)"
grep -q "^cbt-gen.c:$lb (gen_site_b, cbt-gen+0x[0-9a-f]*) *| *2 |" "$CBT_TMP/a.txt"; ok $? "text: call site gen_site_b named cbt-gen.c:$lb (2 batches)"
grep -q "pid $(cat "$CBT_TMP/a.pids") cbt-gen *| *29 |" "$CBT_TMP/a.txt"; ok $? "text: --by process row"
grep -q "stream 0x1000 (id 7) *| *26 |" "$CBT_TMP/a.txt"; ok $? "text: --by stream row (stream 0x1000)"
grep -q "stream 0x2000 (id 9) *| *1 |" "$CBT_TMP/a.txt"; ok $? "text: --by stream row (stream 0x2000)"
grep -q "^hazard overlap_dst_dst: 5 findings; the first at cbt-gen.c:$la (gen_site_a, cbt-gen+0x[0-9a-f]*), batch 10 of pid " "$CBT_TMP/a.txt"
ok $? "text: the findings with their count and first call site, batch and process"
grep -A1 '^hazard overlap_dst_dst: 5 findings' "$CBT_TMP/a.txt" | grep -q '^  ops 0 and 1 write the same bytes: both destinations cover byte 0x'
ok $? "text: the first finding in words"
grep -q "^# every finding, with its call site: cubatchtrace check $TA\$" "$CBT_TMP/a.txt"; ok $? "text: how to see every finding"
done_testing
