#!/bin/sh
# SPDX-License-Identifier: MIT
# The 12.8 and 13.0 signatures of cuMemcpyBatchAsync mixed up (client_abimix):
# the 13.0 function given a failIdx where its stream goes (an address on the
# caller's stack: stream_on_stack), the 12.8 function given the stream where
# its failIdx goes (fail_idx_is_stream).  On the H200 the driver crashes on
# both (tests/gpu/measured/table1d-h200.txt, doors v2as1 and v1as2-*); the
# shim must say so in the trace before the driver is called, and strict mode
# must refuse both without calling it.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

# rule per batch id, from show
rules_of() { awk '$1 == "finding" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } print v["id"], v["rule"], v["severity"] }' "$CBT_TMP/$1.show"; }
outcomes() { sed -n 's/^batch .* id=\([0-9]*\) .* outcome=\([a-z_]*\) result=\([A-Z_]*\).*/\1 \2 \3/p' "$CBT_TMP/$1.show"; }

t="abimix_strict-$$"
traced "$t" env CUBATCHTRACE_MODE=strict "$CLIENTS/client_abimix"
is "$st" 0 "strict: the client runs to its end"
is "$(out "$t")" "call 1 rc=0
call 2 rc=1
call 3 rc=1
driver calls=1" "strict: both mixed-up calls refused with CUDA_ERROR_INVALID_VALUE; only the valid one reached the driver"
is "$(rules_of "$t")" "1 stream_on_stack error
2 stream_null error
2 fail_idx_is_stream error" "strict: the 13.0 call with 12.8 arguments is stream_on_stack, the reverse fail_idx_is_stream (and its stray ninth argument, 0, a NULL stream)"
is "$(outcomes "$t")" "0 forwarded CUDA_SUCCESS
1 refused CUDA_ERROR_INVALID_VALUE
2 refused CUDA_ERROR_INVALID_VALUE" "strict: both recorded as refused"

t="abimix_observe-$$"
traced "$t" "$CLIENTS/client_abimix"
is "$st" 0 "observe: the client runs to its end over the double"
is "$(sed -n 's/^driver calls=//p' "$CBT_TMP/$t.out")" 3 "observe: every call reaches the driver"
is "$(rules_of "$t")" "1 stream_on_stack error
2 stream_null error
2 fail_idx_is_stream error" "observe: the same findings, made when the trace is read"
is "$(batch_events "$CBT_TMP/$t.trace" | awk '$1 == "c" && $5 == "pending" {print $3}' | tr '\n' ' ')" "1 2 " \
    "observe: both mixed-up calls written to the trace before the driver was called (outcome pending, then batch_end)"
is "$(sed -n 's/.* cubatchtrace:batch_end: .* batch_id = \([0-9]*\),.*/\1/p' "$CBT_TMP/$t.trace" | id_numbers | tr '\n' ' ')" "1 2 " \
    "observe: and their results after"
is "$(grep -o ' cubatchtrace:\(c\|batch_end\): ' "$CBT_TMP/$t.trace" | tr -d ' ' | tr '\n' ' ')" \
    "cubatchtrace:c: cubatchtrace:c: cubatchtrace:batch_end: cubatchtrace:c: cubatchtrace:batch_end: " \
    "observe: each pending batch event followed by its batch_end"
done_testing
