#!/bin/sh
# SPDX-License-Identifier: MIT
# The CUDA 12.8 ABI (failIdx): the shim's exported cuMemcpy3DBatchAsync and
# cuMemcpy3DBatchAsync_ptsz (door symbol, src/doors.c), and the wrappers
# cuGetProcAddress_v2 hands out at version 12080 (gpa_v1, gpa_v1_ptsz via
# cbt_wrap_proc).  The caller must still see the driver's failIdx.  Without
# those hooks no batch event appears for the client.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

for m in symbol:cuMemcpy3DBatchAsync:symbol symbol_ptsz:cuMemcpy3DBatchAsync_ptsz:symbol \
         gpa:cuMemcpy3DBatchAsync:getprocaddress gpa_ptsz:cuMemcpy3DBatchAsync_ptsz:getprocaddress; do
    mode=${m%%:*}; rest=${m#*:}; api=${rest%%:*}; door=${rest#*:}
    bare "abi_$mode" "$CLIENTS/client_abi128" "$mode"
    traced "abi_$mode-$$" "$CLIENTS/client_abi128" "$mode"
    is "$st" 0 "12.8 ABI ($mode): exits 0 under the shim"
    is "$(out "abi_$mode-$$")" "good: result=0 fail_idx=SIZE_MAX
bad third op: result=1 fail_idx=2
batches=1 ops=4 bytes=2048" "12.8 ABI ($mode): the caller sees failIdx SIZE_MAX on success, INVALID_VALUE and failIdx 2 for a bad third op"
    is "$(out "abi_$mode-$$")" "$(bare_out "abi_$mode")" "12.8 ABI ($mode): output identical without the shim"
    is "$(batches "$CBT_TMP/abi_$mode-$$.trace")" "$api $door forwarded CUDA_SUCCESS 4 -
$api $door forwarded CUDA_ERROR_INVALID_VALUE 4 2" \
        "12.8 ABI ($mode): recorded as $api via $door, fail_idx SIZE_MAX then 2"
    is "$(findings "$CBT_TMP/abi_$mode-$$.trace" | grep ' error ')" "1 row_length_too_small error 2" \
        "12.8 ABI ($mode): the bad batch's finding names op 2"
done
done_testing
