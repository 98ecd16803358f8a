/* SPDX-License-Identifier: MIT */
/*
 * libctorbatch: a library whose constructor makes a batch through the
 * exported cuMemcpy3DBatchAsync_v2 while the program is still being loaded,
 * before the shim has been initialised by anything else (dependencies'
 * constructors run before the preloaded shim's).  Self-contained on purpose:
 * it runs before main() and shares nothing with the client.
 */
#include <cuda.h>

#include <string.h>

static int ctor_result = -1, ctor_bytes_ok;

__attribute__((constructor)) static void batch_at_load(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    unsigned char *src = NULL, *dst = NULL;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuStreamCreate(&s, 0) || cuMemAllocHost((void **)&src, 1024) || cuMemAllocHost((void **)&dst, 1024))
        return;
    for (int i = 0; i < 1024; i++) {
        src[i] = (unsigned char)(i * 3 + 1);
        dst[i] = 0;
    }
    CUDA_MEMCPY3D_BATCH_OP op[2];
    memset(op, 0, sizeof op);
    for (int i = 0; i < 2; i++) {
        op[i].src.type = op[i].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        op[i].src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)(src + 512 * i);
        op[i].dst.op.ptr.ptr = (CUdeviceptr)(uintptr_t)(dst + 512 * (1 - i));
        op[i].extent.width = 512;
        op[i].extent.height = op[i].extent.depth = 1;
        op[i].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    ctor_result = cuMemcpy3DBatchAsync_v2(2, op, 0, s);
    cuStreamSynchronize(s);
    ctor_bytes_ok = !memcmp(dst, src + 512, 512) && !memcmp(dst + 512, src, 512);
    cuMemFreeHost(src);
    cuMemFreeHost(dst);
}

/* What the constructor's batch returned (-1: it could not run), and whether the bytes arrived. */
int ctor_batch_result(int *bytes_ok)
{
    *bytes_ok = ctor_bytes_ok;
    return ctor_result;
}
