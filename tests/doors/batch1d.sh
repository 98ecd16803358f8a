#!/bin/sh
# SPDX-License-Identifier: MIT
# The 1D batch (cuMemcpyBatchAsync) through every door of the shim: the
# exported functions (CUDA 13 and 12.8 ABIs, per-thread variants), dlsym on
# the driver, cuGetProcAddress at 13000 and 12080, and the binding-shaped
# memcpy_batch_async_v2.  Each door's client checks every byte; the trace
# must hold its four batches with their copies and attributes.  Without a
# door's hook the client reaches the double directly and no 1D batch event
# appears (or, for the binding, the client cannot find the entry).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

want_out="batches=4 copies=24 bytes=21504"
bare bare1d "$CLIENTS/client_1d" v2
is "$bst $(bare_out bare1d)" "0 $want_out" "client_1d without the shim: four batches, every byte arrives"

for spec in v2:cuMemcpyBatchAsync_v2:symbol:- v2_ptsz:cuMemcpyBatchAsync_v2_ptsz:symbol:- \
            v1:cuMemcpyBatchAsync:symbol:$SIZE_MAX v1_ptsz:cuMemcpyBatchAsync_ptsz:symbol:$SIZE_MAX \
            dlsym_v2:cuMemcpyBatchAsync_v2:symbol:- dlsym_v1:cuMemcpyBatchAsync:symbol:$SIZE_MAX \
            gpa13000:cuMemcpyBatchAsync_v2:getprocaddress:- \
            gpa13000_ptsz:cuMemcpyBatchAsync_v2_ptsz:getprocaddress:- \
            gpa12080:cuMemcpyBatchAsync:getprocaddress:$SIZE_MAX \
            gpa12080_ptsz:cuMemcpyBatchAsync_ptsz:getprocaddress:$SIZE_MAX \
            binding:cuMemcpyBatchAsync_v2:binding:-; do
    door=${spec%%:*}; rest=${spec#*:}
    api=${rest%%:*}; rest=${rest#*:}
    via=${rest%%:*}
    t="d1_$door-$$"
    traced "$t" "$CLIENTS/client_1d" "$door"
    is "$st $(out "$t")" "0 $want_out" "$door: under the shim the client exits 0 with the same totals"
    is "$(nbatches1d "$CBT_TMP/$t.trace")" 4 "$door: four 1D batch events (cubatchtrace:c) for its vpid"
    is "$(batches1d "$CBT_TMP/$t.trace")" "$api $via forwarded CUDA_SUCCESS 3 -
$api $via forwarded CUDA_SUCCESS 8 -
$api $via forwarded CUDA_SUCCESS 2 -
$api $via forwarded CUDA_SUCCESS 11 -" "$door: recorded as $api via $via, counts 3/8/2/11, CUDA_SUCCESS, failIdx SIZE_MAX where the ABI has it"
    is "$(grep -c '^op ' "$CBT_TMP/$t.show")" 24 "$door: show decodes every copy"
    is "$(grep '^attr ' "$CBT_TMP/$t.show" | sed 's/.* k=\([0-9]*\) idx=\([0-9]*\) order=\([A-Z_]*\) flags=\(0x[0-9a-f]*\).*/\1 \2 \3 \4/' | tr '\n' ';')" \
        "0 0 STREAM 0x0;0 0 STREAM 0x0;1 5 ANY 0x1;0 0 DURING_API_CALL 0x0;0 0 STREAM 0x0;" \
        "$door: every attribute recorded with its start index, order and flags"
    is "$(grep '^op ' "$CBT_TMP/$t.show" | awk '{print $7, $8}' | sort | uniq -c | awk '{print $1, $2, $3}' | tr '\n' ';')" \
        "14 extent=1024x1x1 order=STREAM;2 extent=2048x1x1 order=DURING_API_CALL;3 extent=384x1x1 order=ANY;5 extent=384x1x1 order=STREAM;" \
        "$door: each copy an op of extent SIZEx1x1 with the order of the attribute it falls under"
    is "$(grep '^op ' "$CBT_TMP/$t.show" | awk '{split($5, a, ":"); split($6, b, ":"); print a[2] ">" b[2]}' | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ';')" \
        "8 device>device;7 device>host_pinned;2 host_pageable>managed;3 host_pinned>device;4 managed>host_pinned;" \
        "$door: the memory kind of both sides of every copy"
    is "$(grep -c '^finding ' "$CBT_TMP/$t.show")" 0 "$door: no finding for these valid batches"
done
done_testing
