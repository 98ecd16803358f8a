#!/bin/sh
# `summary --json` reports exactly what the generator was asked to issue:
# batches, ops, bytes, failed/refused batches, driver time, and the rows of
# by_api, by_door, by_direction, by_memkinds, by_access_order, both
# histograms and findings (expected figures computed by expect.py, not by the tool).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not found"

# A: every API variant and door, all directions, a batch of 1000 ops (4 events),
#    failed and refused batches, a NULL op list, findings of each severity
A1="n=3,ops=1000,src=host_pinned,dst=device,bytes=4096"
A2="n=5,ops=7,api=cuMemcpy3DBatchAsync_v2_ptsz,door=getprocaddress,src=device,dst=host_pageable,bytes=100,order=DURING_API_CALL"
A3="n=2,ops=3,api=cuMemcpy3DBatchAsync,door=binding,src=device,dst=device,srcdev=0,dstdev=1,result=CUDA_ERROR_INVALID_VALUE"
A4="n=4,ops=2,api=cuMemcpy3DBatchAsync_ptsz,src=managed,dst=device,order=ANY,finding=overlap_dst_dst"
A5="n=1,ops=5,src=array,dst=host_pinned,outcome=refused,finding=pointer_unmapped,bytes=0"
A6="n=2,ops=9,src=host_pageable,dst=host_pinned,finding=pageable_stream_order,site=1,driver_ns=12345"
A7="n=1,ops=4,numops=4,oplist=0,finding=op_list_null,outcome=refused"
A8="n=2,ops=256,src=device,dst=array,bytes=65536"
A9="n=1,ops=1,src=unknown,dst=device"
# B: a second process in the same trace
B1="n=6,ops=33,src=device,dst=device,bytes=8"
# C: a second trace, its generator changing CPU between the events of each batch,
#    so a batch's events land in different streams (pairing without a muxer)
C1="n=20,ops=700,src=host_pinned,dst=device,bytes=1024"

gen_session a || { ok 1 "session a starts"; done_testing; }
gen_run a "$A1" "$A2" "$A3" "$A4" "$A5" "$A6" "$A7" "$A8" "$A9"; ok $? "generator A ran"
gen_run b "$B1"; ok $? "generator B ran"
gen_stop a
gen_session c && gen_run c --hop "$C1" && gen_stop c; ok $? "generator C ran"
TA=$(trace_of a) TC=$(trace_of c)

"$CBT" summary --json $(pids_of a) "$TA" >"$CBT_TMP/a.json" 2>"$CBT_TMP/err"
is $? 0 "summary --json A exits 0"
compare_expect "$CBT_TMP/a.json" "$A1" "$A2" "$A3" "$A4" "$A5" "$A6" "$A7" "$A8" "$A9"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["processes"], d["threads"], d["discarded_events"], d["unpaired"]["orphan_ops"])' "$CBT_TMP/a.json")" \
   "1 1 0 0" "A: one process, one thread, nothing discarded or unpaired"

# two processes of one trace, and two traces at once
"$CBT" summary --json $(pids_of a) $(pids_of b) "$TA" >"$CBT_TMP/ab.json"
compare_expect "$CBT_TMP/ab.json" "$A1" "$A2" "$A3" "$A4" "$A5" "$A6" "$A7" "$A8" "$A9" "$B1"
"$CBT" summary --json $(pids_of b) $(pids_of c) "$TA" "$TC" >"$CBT_TMP/bc.json"
compare_expect "$CBT_TMP/bc.json" "$B1" "$C1"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["processes"], d["unpaired"])' "$CBT_TMP/bc.json")" \
   "2 {'orphan_ops': 0, 'incomplete_batches': 0, 'pending_overflow': 0, 'tables_full': False}" \
   "B+C: two processes, every batch_ops paired with its batch across streams"

# the text summary: discarded events first, the totals, named call sites
"$CBT" summary --by process,thread,stream $(pids_of a) "$TA" >"$CBT_TMP/a.txt"
is $? 0 "summary (text) exits 0"
is "$(head -n 1 "$CBT_TMP/a.txt")" "# discarded events: 0" "the first line reports discarded events"
grep -q '^# batches: 21$' "$CBT_TMP/a.txt"; ok $? "text: batches"
grep -q '^# failed batches: 2 ' "$CBT_TMP/a.txt"; ok $? "text: failed batches"
grep -q '^# refused batches: 2 ' "$CBT_TMP/a.txt"; ok $? "text: refused batches"
grep -q '^Name *| *Batches | *Ops | *Bytes | *% | *Avg | *Min | *Max$' "$CBT_TMP/a.txt"; ok $? "text: THAPI-style columns"
grep -q '^cbt-gen+0x[0-9a-f]* (gen_site_a+0x1) *| *19 |' "$CBT_TMP/a.txt"; ok $? "text: call site gen_site_a named (19 batches)"
grep -q '^cbt-gen+0x[0-9a-f]* (gen_site_b+0x1) *| *2 |' "$CBT_TMP/a.txt"; ok $? "text: call site gen_site_b named (2 batches)"
grep -q "pid $(cat "$CBT_TMP/a.pids") cbt-gen *| *21 |" "$CBT_TMP/a.txt"; ok $? "text: --by process row"
grep -q "stream 0x1000 (id 7) *| *21 |" "$CBT_TMP/a.txt"; ok $? "text: --by stream row"
grep -q '^overlap_dst_dst *| hazard *| *4 | batch 10 / pid ' "$CBT_TMP/a.txt"; ok $? "text: findings table with first seen"
done_testing
