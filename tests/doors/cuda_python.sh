#!/bin/sh
# SPDX-License-Identifier: MIT
# cuda-python itself (cuda-bindings 13.5.0) over the double:
# cuda.bindings.driver.cuMemcpy3DBatchAsync resolves the batch through
# cuGetProcAddress_v2 (found by dlsym: hooks dlsym + getprocaddress
# wrappers), with and without CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM; and
# cuda.bindings._v2.driver.memcpy_3d_batch_async_v2 calls the same resolved
# pointer.  Without the hooks no batch is recorded.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not found by configure"
cbt_run_bare "$PYTHON3" -c 'import cuda.bindings.driver' 2>/dev/null ||
    skip_all "cuda.bindings not importable by $PYTHON3 (pip install cuda-bindings==13.5.0)"

script="$CLIENTS_SRC/cuda_python_client.py"
for mode in driver v2; do
    for ptds in 0 1; do
        if [ $ptds = 1 ]; then
            set -- env CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1; api=cuMemcpy3DBatchAsync_v2_ptsz; what="with CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1"
        else
            set -- env -u CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM; api=cuMemcpy3DBatchAsync_v2; what="without CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"
        fi
        name="cuda-python $mode $what"
        n="cp$mode$ptds"
        bare "$n" "$@" "$PYTHON3" "$script" $mode
        if [ "$bst" = 77 ]; then
            diag "$(cat "$CBT_TMP/$n.bare.err")"
            ok 0 "# SKIP $name: module missing (see above)"
            continue
        fi
        traced "$n-$$" "$@" "$PYTHON3" "$script" $mode
        is "$st" 0 "$name: exits 0 (bytes checked)"
        is "$(out "$n-$$")" "$(bare_out "$n")" "$name: same output as without the shim"
        is "$(batches "$CBT_TMP/$n-$$.trace")" "$api getprocaddress forwarded CUDA_SUCCESS 2 -
$api getprocaddress forwarded CUDA_SUCCESS 1 -" "$name: recorded as $api via getprocaddress"
    done
done
done_testing
