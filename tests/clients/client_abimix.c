/* SPDX-License-Identifier: MIT */
/*
 * The 12.8 and 13.0 signatures of cuMemcpyBatchAsync mixed up, as programs
 * that keep one function pointer type for both get them wrong.
 *
 *   client_abimix
 *
 * 1. a valid batch on stream s through cuMemcpyBatchAsync_v2 (the shim now
 *    knows s as this thread's stream)
 * 2. cuMemcpyBatchAsync_v2 called with the 12.8 arguments: its stream is
 *    then &failIdx, an address on this thread's stack
 * 3. cuMemcpyBatchAsync (12.8) called with the 13.0 arguments: its failIdx
 *    is then s, and its stream the ninth argument, given here as 0
 * Prints "call N rc=R" for each, then (over the test double) how many batch
 * calls reached the driver; exits 0 (the results are the test's to judge).
 */
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#undef cuMemcpyBatchAsync
extern CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                                      size_t, CUstream);
extern CUresult cuMemcpyBatchAsync(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                                   size_t, size_t *, CUstream);
typedef CUresult (*v1_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                          size_t *, CUstream);

int main(void)
{
    cc_load_direct();
    CUstream s = cc_setup();
    CUdeviceptr a, b;
    cc_check(cc.MemAlloc(&a, 4096), "cuMemAlloc");
    cc_check(cc.MemAlloc(&b, 4096), "cuMemAlloc");
    CUdeviceptr dsts[1] = {b}, srcs[1] = {a};
    size_t sizes[1] = {1024}, idxs[1] = {0};
    CUmemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;

    CUresult r = cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 1, &attr, idxs, 1, s);
    printf("call 1 rc=%d\n", (int)r);
    fflush(stdout);

    size_t fail = 12345;
    /* the 13.0 function through a 12.8-shaped pointer */
    r = ((v1_fn)(void *)cuMemcpyBatchAsync_v2)(dsts, srcs, sizes, 1, &attr, idxs, 1, &fail, s);
    printf("call 2 rc=%d\n", (int)r);
    fflush(stdout);

    /* the 12.8 function with the 13.0 arguments (and a ninth of 0) */
    typedef CUresult (*v1x_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *,
                               size_t, CUstream, CUstream);
    r = ((v1x_fn)(void *)cuMemcpyBatchAsync)(dsts, srcs, sizes, 1, &attr, idxs, 1, s, NULL);
    printf("call 3 rc=%d\n", (int)r);
    /* how many batch calls reached the driver (the test double counts them) */
    unsigned long long (*calls)(void) = (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "fakecuda_batch_calls");
    if (calls)
        printf("driver calls=%llu\n", calls());
    return 0;
}
