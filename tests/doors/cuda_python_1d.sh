#!/bin/sh
# SPDX-License-Identifier: MIT
# cuda-python's 1D batch over the double: cuda.bindings.driver.cuMemcpyBatchAsync
# and cuda.bindings._v2.driver.memcpy_batch_async_v2 (tests/gpu/clients/py1d.py,
# which the GPU suite runs on the real driver too) resolve cuMemcpyBatchAsync
# through cuGetProcAddress_v2, with and without
# CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM.  Without the hooks no 1D batch
# event is recorded.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
[ -n "${PYTHON3:-}" ] || skip_all "python3 not found by configure"
cbt_run_bare "$PYTHON3" -c 'import cuda.bindings.driver' 2>/dev/null ||
    skip_all "cuda.bindings not importable by $PYTHON3 (pip install cuda-bindings==13.5.0)"

# batches1d FILE: api door outcome result num_ops num_attrs, one line per 1D batch (show)
batches1d() { show_batches "$1" 1d | show_field api door outcome result num_ops num_attrs; }

script="$top_srcdir/tests/gpu/clients/py1d.py"
for mode in driver v2; do
    for ptds in 0 1; do
        if [ $ptds = 1 ]; then
            set -- env CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1; api=cuMemcpyBatchAsync_v2_ptsz; what="with CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1"
        else
            set -- env -u CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM; api=cuMemcpyBatchAsync_v2; what="without CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM"
        fi
        na=2
        [ $mode = v2 ] && na=1
        name="cuda-python 1D $mode $what"
        n="cp1d$mode$ptds"
        bare "$n" "$@" "$PYTHON3" "$script" $mode
        is "$bst $(grep -c '^RESULT ok' "$CBT_TMP/$n.bare.out")" "0 1" "$name: without the shim every byte arrives"
        traced "$n-$$" "$@" "$PYTHON3" "$script" $mode
        is "$st" 0 "$name: exits 0 under the shim (bytes checked)"
        is "$(grep -v '^PID' "$CBT_TMP/$n-$$.out")" "$(grep -v '^PID' "$CBT_TMP/$n.bare.out")" "$name: same output as without the shim"
        is "$(batches1d "$CBT_TMP/$n-$$.trace")" "$api getprocaddress forwarded CUDA_SUCCESS 8 $na
$api getprocaddress forwarded CUDA_SUCCESS 8 $na" "$name: both batches recorded as $api via getprocaddress, 8 copies, $na attribute(s)"
    done
done
done_testing
