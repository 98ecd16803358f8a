#!/bin/sh
# SPDX-License-Identifier: MIT
# The compact record as the shim writes it, cbt-gen format=F (F the shim's
# event format, CBT_EV_FORMAT) calling the shim's own writer (src/record.c):
# `summary --json` reports exactly what the specs hold (expect.py's figures,
# as summary-totals.sh checks them for format 2): small 3D batches and
# batches of several chunks, refs that repeat the previous batch's, CUDA
# arrays, a batch recorded pending and its batch_end, ops the driver never
# read, small and large 1D batches whose copies the reader makes ops,
# findings of each kind of op.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not found"
F=$(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top_srcdir/include/cubatchtrace/events.h")

S1="n=3,ops=300,src=host_pinned,dst=device,bytes=4096,format=$F"
S2="n=5,ops=7,api=cuMemcpy3DBatchAsync_v2_ptsz,door=getprocaddress,src=device,dst=host_pageable,bytes=100,order=DURING_API_CALL,format=$F"
S3="n=4,ops=2,src=managed,dst=device,order=ANY,violate=overlap_dst_dst,format=$F"
S4="n=2,ops=8,src=array,dst=device,shape=8x2x1,elem=4,format=$F"
S5="n=2,ops=70,src=unmapped,dst=device,shape=32x8x2,order=ANY,pending=1,driver_ns=5000,format=$F"
S6="n=1,ops=6,numops=10,stream=0x2000,stream_id=9,format=$F"
S7="n=4,ops=1,copies=1,api=cuMemcpyBatchAsync_v2,src=host_pageable,dst=device,bytes=65536,order=ANY,format=$F"
S8="n=2,ops=500,copies=1,api=cuMemcpyBatchAsync_v2_ptsz,src=device,dst=host_pinned,bytes=256,format=$F"
S9="n=3,ops=3,copies=1,api=cuMemcpyBatchAsync_v2,src=device,dst=device,violate=overlap_dst_dst@1,format=$F"
set -- "$S1" "$S2" "$S3" "$S4" "$S5" "$S6" "$S7" "$S8" "$S9"

gen_session a || { ok 1 "session a starts"; done_testing; }
gen_run a "$@"; ok $? "generator ran"
gen_stop a
TA=$(trace_of a)

# the trace is the compact record: b and c events, with the dictionaries' entries, no
# batch event of format 2 (batch, batch1d, batch_ops, batch_attrs)
"$BABELTRACE2" "$TA" >"$CBT_TMP/trace.all" 2>&1
grep -F "vpid = $(cat "$CBT_TMP/a.pids")," "$CBT_TMP/trace.all" |
    sed -n 's/.* cubatchtrace:\([a-z_0-9]*\): .*/\1/p' | sort -u >"$CBT_TMP/names"
is "$(grep -cxE 'b|c|operand|stream|process' "$CBT_TMP/names")" 5 "the events are b and c, operand, stream, process"
is "$(grep -cxE 'batch|batch1d|batch_ops|batch_attrs' "$CBT_TMP/names")" 0 "no batch event of format 2"

"$CBT" summary --json $(pids_of a) "$TA" >"$CBT_TMP/a.json" 2>"$CBT_TMP/err"
is $? 0 "summary --json exits 0"
compare_expect "$CBT_TMP/a.json" "$@"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["processes"], d["threads"], d["discarded_events"], d["unpaired"]["orphan_ops"], d["unpaired"]["incomplete_batches"])' "$CBT_TMP/a.json")" \
   "1 1 0 0 0" "one process, one thread, nothing discarded, unpaired or incomplete"
done_testing
