#!/bin/sh
# SPDX-License-Identifier: MIT
# A library constructor makes a batch through the exported
# cuMemcpy3DBatchAsync_v2 before main() and before anything else has used the
# shim: the driver and the trace provider must be set up on that first call
# (cbt_real(), cbt_tracing_init() from a constructor).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

bare ctor "$CLIENTS/client_ctor"
traced "ctor-$$" "$CLIENTS/client_ctor"
is "$st" 0 "constructor batch: exits 0"
is "$(out "ctor-$$")" "constructor batch: result=0 bytes=ok
main: batches=1 ops=2 bytes=512" "constructor batch: the batch made in a constructor succeeds and copies its bytes under the shim"
is "$(out "ctor-$$")" "$(bare_out ctor)" "constructor batch: same output as without the shim"
is "$(batches "$CBT_TMP/ctor-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 2 -
cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 2 -" \
    "constructor batch: recorded (first of the two batch events), as cuMemcpy3DBatchAsync_v2 via symbol"
done_testing
