#!/bin/sh
# SPDX-License-Identifier: MIT
# Door "symbol", direct link: cuMemcpy3DBatchAsync_v2 and _v2_ptsz exported by
# the shim (src/doors.c).  Without those exports the client binds the double's
# functions and no batch event appears: every trace check fails.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

for variant in direct:cuMemcpy3DBatchAsync_v2 direct_ptsz:cuMemcpy3DBatchAsync_v2_ptsz; do
    c=${variant%%:*}
    api=${variant#*:}
    bare "sym_$c" "$CLIENTS/client_$c"
    is "$bst $(bare_out "sym_$c")" "0 batches=3 ops=22 bytes=77744" \
        "client_$c without the shim: the mixed batch copies every byte"
    traced "sym_$c-$$" "$CLIENTS/client_$c"
    is "$st" 0 "client_$c under the shim: exits 0 (every byte checked)"
    is "$(out "sym_$c-$$")" "$(bare_out "sym_$c")" "client_$c under the shim: same summary as without"
    is "$(nbatches "$CBT_TMP/sym_$c-$$.trace")" 3 "client_$c: exactly 3 batch events for its vpid"
    is "$(batches "$CBT_TMP/sym_$c-$$.trace")" "$api symbol forwarded CUDA_SUCCESS 8 -
$api symbol forwarded CUDA_SUCCESS 6 -
$api symbol forwarded CUDA_SUCCESS 8 -" \
        "client_$c: linked call recorded as $api via symbol, num_ops 8/6/8, CUDA_SUCCESS"
    is "$(findings "$CBT_TMP/sym_$c-$$.trace" | grep -c ' error ')" 0 \
        "client_$c: the valid mixed batch (D2D pitched, H2D pinned/pageable, D2A, A2D, A2A) has no error finding"
done
done_testing
