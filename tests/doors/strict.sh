#!/bin/sh
# SPDX-License-Identifier: MIT
# Strict mode (src/batch.c: refuse): a batch with an error finding is not
# forwarded (fakecuda_batch_calls() does not move), the door returns
# CUDA_ERROR_INVALID_VALUE, the 12.8 ABI gets failIdx = the first bad op;
# CUBATCHTRACE_STRICT=hazards also refuses an overlapping batch; a source at
# 0xdead0000 crashes the process without the shim and in observe mode, but
# is refused in strict mode (finding pointer_unmapped, outcome refused).
# In observe mode that batch is written before it is forwarded (pending),
# and so is one whose source lies in a page mapped PROT_NONE.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

# -- a bad op 1 of 3
traced "refuse-$$" env CUBATCHTRACE_MODE=strict "$CLIENTS/client_strict" refuse
is "$st" 0 "strict: the client exits 0"
is "$(out "refuse-$$")" "v2 bad op 1: result=1 forwarded=0
12.8 bad op 1: result=1 fail_idx=1 forwarded=0
v2 good: result=0 forwarded=1" \
    "strict: a batch with an error is not forwarded, returns INVALID_VALUE, failIdx = first bad op (1); a good batch is forwarded"
is "$(batches "$CBT_TMP/refuse-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol refused CUDA_ERROR_INVALID_VALUE 3 -
cuMemcpy3DBatchAsync symbol refused CUDA_ERROR_INVALID_VALUE 3 1
cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 3 -" "strict: the trace shows outcome refused, then forwarded"
is "$(findings "$CBT_TMP/refuse-$$.trace")" "0 ops_not_read warning -
0 row_length_too_small error 1
1 ops_not_read warning -
1 row_length_too_small error 1" \
    "strict: finding row_length_too_small on op 1 of each refused batch; op 2, past it, is not read (ops_not_read)"
is "$(inline_findings "$CBT_TMP/refuse-$$.trace")" "$(findings "$CBT_TMP/refuse-$$.trace")" \
    "strict: the calling thread's findings and those computed when the trace is read are the same"
traced "observe-$$" env CUBATCHTRACE_MODE=observe "$CLIENTS/client_strict" refuse
is "$(out "observe-$$")" "v2 bad op 1: result=1 forwarded=1
12.8 bad op 1: result=1 fail_idx=1 forwarded=1
v2 good: result=0 forwarded=1" "observe (the contrast): the same bad batches reach the driver"

# -- hazards
traced "ovs-$$" env CUBATCHTRACE_MODE=strict "$CLIENTS/client_strict" overlap
is "$(out "ovs-$$")" "overlapping destinations: result=0 forwarded=1" "strict: an overlapping batch (a hazard) is forwarded by default"
traced "ovh-$$" env CUBATCHTRACE_MODE=strict CUBATCHTRACE_STRICT=hazards "$CLIENTS/client_strict" overlap
is "$(out "ovh-$$")" "overlapping destinations: result=1 forwarded=0" "strict + CUBATCHTRACE_STRICT=hazards: the overlapping batch is refused with INVALID_VALUE"
is "$(findings "$CBT_TMP/ovh-$$.trace" | awk '{print $2, $3}' | sort -u)" "overlap_dst_dst hazard" \
    "strict + hazards: the refusal is the finding overlap_dst_dst (hazard)"
is "$(batches "$CBT_TMP/ovh-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol refused CUDA_ERROR_INVALID_VALUE 2 -" \
    "strict + hazards: the trace shows outcome refused"

# -- the crash: src 0xdead0000
bare crash "$CLIENTS/client_strict" crash 2>/dev/null
is "$bst" 139 "unmapped source without the shim: the process dies of SIGSEGV (status 139)"
traced "crobs-$$" env CUBATCHTRACE_MODE=observe "$CLIENTS/client_strict" crash
is "$st" 139 "unmapped source under the shim in observe mode: still dies of SIGSEGV (observe forwards)"
is "$(findings "$CBT_TMP/crobs-$$.trace" | grep ' error ')" "0 pointer_unmapped error 0" \
    "unmapped source in observe mode: the finding pointer_unmapped is in the trace although the process died"
is "$(batches "$CBT_TMP/crobs-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol pending CUDA_SUCCESS 1 -" \
    "unmapped source in observe mode: the batch was written before it was forwarded (outcome pending), no result after"
is "$(batch_events "$CBT_TMP/crobs-$$.trace" | awk '{print $1, $5}') $(grep -c ' cubatchtrace:batch_end: ' "$CBT_TMP/crobs-$$.trace")" "b pending 0" \
    "unmapped source in observe mode: the batch event says pending and no batch_end follows"
is "$(grep -c '^batch .*outcome=pending' "$CBT_TMP/crobs-$$.show")" 1 \
    "unmapped source in observe mode: cubatchtrace show reports the batch as pending (the process ended inside the call)"
# -- a source in a page mapped PROT_NONE (a guard page): the driver
# crashes on it as on an unmapped one, so observe mode writes the batch
# ahead too (the learn step reads the page as the footprint check does)
traced "crg-$$" env CUBATCHTRACE_MODE=observe "$CLIENTS/client_strict" guard
is "$st" 139 "PROT_NONE source in observe mode: the process dies of SIGSEGV"
is "$(batches "$CBT_TMP/crg-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol pending CUDA_SUCCESS 1 -" \
    "PROT_NONE source in observe mode: the batch was written before it was forwarded (outcome pending)"
is "$(findings "$CBT_TMP/crg-$$.trace" | grep ' error ')" "0 pointer_unmapped error 0" \
    "PROT_NONE source in observe mode: the finding pointer_unmapped is in the trace although the process died"
traced "crs-$$" env CUBATCHTRACE_MODE=strict "$CLIENTS/client_strict" crash
is "$st" 0 "unmapped source in strict mode: the process survives and exits 0"
is "$(out "crs-$$" | tail -n 1)" "unmapped source: result=1 forwarded=0" "unmapped source in strict mode: INVALID_VALUE, never forwarded"
is "$(batches "$CBT_TMP/crs-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol refused CUDA_ERROR_INVALID_VALUE 1 -" \
    "unmapped source in strict mode: the trace shows outcome refused"
is "$(findings "$CBT_TMP/crs-$$.trace" | grep ' error ')" "0 pointer_unmapped error 0" \
    "unmapped source in strict mode: the finding pointer_unmapped names op 0"
done_testing
