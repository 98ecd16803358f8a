/* SPDX-License-Identifier: MIT */
/*
 * A program that never links libcuda calls the shim's exported batch entry
 * points, found with dlsym(RTLD_DEFAULT).  Run with no usable driver, every
 * call must come back as an error CUresult (the shim says why once on
 * stderr) and the program must go on to exit normally.
 */
#define _GNU_SOURCE
#include <cuda.h>
#undef cuMemcpy3DBatchAsync

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*v2_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);

int main(void)
{
    v2_fn v2 = (v2_fn)dlsym(RTLD_DEFAULT, "cuMemcpy3DBatchAsync_v2");
    v1_fn v1 = (v1_fn)dlsym(RTLD_DEFAULT, "cuMemcpy3DBatchAsync");
    if (!v2 || !v1) {
        printf("no cuMemcpy3DBatchAsync in the process\n");
        return 0;
    }
    static unsigned char src[256], dst[256];
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)src;
    op.dst.op.ptr.ptr = (CUdeviceptr)(uintptr_t)dst;
    op.extent.width = 256;
    op.extent.height = op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_ANY;
    printf("cuMemcpy3DBatchAsync_v2: %d\n", (int)v2(1, &op, 0, CU_STREAM_PER_THREAD));
    printf("cuMemcpy3DBatchAsync_v2 again: %d\n", (int)v2(1, &op, 0, CU_STREAM_PER_THREAD));
    size_t fail = 7;
    printf("cuMemcpy3DBatchAsync: %d\n", (int)v1(1, &op, &fail, 0, CU_STREAM_PER_THREAD));
    printf("exiting normally\n");
    return 0;
}
