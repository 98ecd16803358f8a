#!/bin/sh
# SPDX-License-Identifier: MIT
# Door "binding": memcpy_3d_batch_async_v2(num_ops, op_list, flags, h_stream)
# exported by the shim (src/doors.c), called from Python ctypes with the
# structures built by ctypes.Structure.  Without that export ctypes cannot
# find the function and the client fails.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not found by configure"

script="$CLIENTS_SRC/binding_ctypes.py"
bare bind "$PYTHON3" "$script"
traced "bind-$$" "$PYTHON3" "$script"
is "$st" 0 "binding from ctypes: exits 0 (bytes checked)"
is "$(out "bind-$$")" "batches=2 ops=3 bytes=4096" "binding from ctypes: two batches, 3 ops, 4096 bytes"
is "$(out "bind-$$")" "$(bare_out bind)" "binding from ctypes: same output when the shim is only dlopened by ctypes"
is "$(batches "$CBT_TMP/bind-$$.trace")" "cuMemcpy3DBatchAsync_v2 binding forwarded CUDA_SUCCESS 2 -
cuMemcpy3DBatchAsync_v2 binding forwarded CUDA_SUCCESS 1 -" \
    "binding from ctypes: recorded as cuMemcpy3DBatchAsync_v2 via binding"
done_testing
