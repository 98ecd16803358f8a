#!/bin/sh
# SPDX-License-Identifier: MIT
# The CUDA runtime's sequence (client_runtime_seq, no libcuda link): dlopen,
# one dlsym(h, "cuGetProcAddress_v2") (hook: the shim's dlsym), then
# cuGetProcAddress asked for itself at 11030/12000 (hook: cbt_wrap_proc hands
# out the shim's cuGetProcAddress(_v2)), then the batch at four
# (version, flags) pairs (hook: the getprocaddress wrappers).  If any of these
# hooks were removed the runtime would hold the driver's own pointers and the
# trace would lack these batches.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

bare rt "$CLIENTS/client_runtime_seq"
traced "rt-$$" "$CLIENTS/client_runtime_seq"
is "$st" 0 "runtime sequence: exits 0 under the shim (bytes checked)"
is "$(out "rt-$$")" "$(bare_out rt)" "runtime sequence: same output as without the shim"
is "$(bare_out rt)" "batches=4 ops=10 bytes=2560" "runtime sequence: four batches of 1, 2, 3, 4 ops"
is "$(nbatches "$CBT_TMP/rt-$$.trace")" 4 "runtime sequence: exactly 4 batch events for its vpid"
b="$CBT_TMP/rt-$$.trace"
is "$(batches "$b" | sed -n 1p)" "cuMemcpy3DBatchAsync_v2 getprocaddress forwarded CUDA_SUCCESS 1 -" \
    "runtime sequence: batch at (13000,0) recorded as cuMemcpy3DBatchAsync_v2 via getprocaddress"
is "$(batches "$b" | sed -n 2p)" "cuMemcpy3DBatchAsync_v2_ptsz getprocaddress forwarded CUDA_SUCCESS 2 -" \
    "runtime sequence: batch at (13000,2) recorded as cuMemcpy3DBatchAsync_v2_ptsz via getprocaddress"
is "$(batches "$b" | sed -n 3p)" "cuMemcpy3DBatchAsync getprocaddress forwarded CUDA_SUCCESS 3 -" \
    "runtime sequence: batch at (12080,0) recorded as cuMemcpy3DBatchAsync (12.8 ABI, fail_idx SIZE_MAX) via getprocaddress"
is "$(batches "$b" | sed -n 4p)" "cuMemcpy3DBatchAsync_ptsz getprocaddress forwarded CUDA_SUCCESS 4 -" \
    "runtime sequence: batch at (12080,2) recorded as cuMemcpy3DBatchAsync_ptsz via getprocaddress"

# The 4-argument cuGetProcAddress the 11030 request returned (hook: cuGetProcAddress wrapper).
bare rt4 "$CLIENTS/client_runtime_seq" gpa4
traced "rt4-$$" "$CLIENTS/client_runtime_seq" gpa4
is "$st $(out "rt4-$$")" "0 $(bare_out rt4)" "4-argument cuGetProcAddress: exits 0, same output as without the shim"
is "$(batches "$CBT_TMP/rt4-$$.trace")" "cuMemcpy3DBatchAsync_v2 getprocaddress forwarded CUDA_SUCCESS 1 -
cuMemcpy3DBatchAsync getprocaddress forwarded CUDA_SUCCESS 3 -" \
    "4-argument cuGetProcAddress: batches at (13000,0) and (12080,0) recorded via getprocaddress"
done_testing
