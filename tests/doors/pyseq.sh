#!/bin/sh
# SPDX-License-Identifier: MIT
# cuda-python's sequence in C (client_pyseq): dlopen, dlsym(h,
# "cuGetProcAddress_v2") (hook: the shim's dlsym hands out its own
# cuGetProcAddress_v2), then ("cuMemcpy3DBatchAsync", 13000, 0 or 2) (hook:
# the getprocaddress wrappers).  Without them no batch event appears.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

for v in 0:cuMemcpy3DBatchAsync_v2 1:cuMemcpy3DBatchAsync_v2_ptsz; do
    ptds=${v%%:*}; api=${v#*:}
    if [ "$ptds" = 1 ]; then set -- env CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1; what="with CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"; else set -- env -u CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM; what="without CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"; fi
    bare "py$ptds" "$@" "$CLIENTS/client_pyseq"
    traced "py$ptds-$$" "$@" "$CLIENTS/client_pyseq"
    is "$st" 0 "cuda-python sequence $what: exits 0 (bytes checked)"
    is "$(out "py$ptds-$$")" "$(bare_out "py$ptds")" "cuda-python sequence $what: same summary as without the shim"
    is "$(batches "$CBT_TMP/py$ptds-$$.trace")" "$api getprocaddress forwarded CUDA_SUCCESS 8 -
$api getprocaddress forwarded CUDA_SUCCESS 6 -
$api getprocaddress forwarded CUDA_SUCCESS 8 -" \
        "cuda-python sequence $what: batch at (13000,$((ptds * 2))) recorded as $api via getprocaddress"
done
done_testing
