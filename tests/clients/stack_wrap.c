/* SPDX-License-Identifier: MIT */
/*
 * libstackwrap: a wrapper library that makes its users' batches through two
 * helper functions of its own (stackwrap_outer -> wrap_inner ->
 * cuMemcpy3DBatchAsync_v2): the short stack (--stack N) names the three
 * lines, and --skip-frames libstackwrap.so its user's line.  Built without
 * inlining and without sibling calls, so that each helper keeps its frame.
 * The lines the tests look for carry a STACK-LINE mark.
 */
#include <cuda.h>

#include <string.h>

static CUstream s;
static unsigned char *src, *dst;

int stackwrap_setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuStreamCreate(&s, 0) || cuMemAllocHost((void **)&src, 4096) || cuMemAllocHost((void **)&dst, 4096))
        return -1;
    return 0;
}

/* One op of 512x2 bytes; rowLength `row` on the source (0: packed; below 512: row_length_too_small). */
__attribute__((noinline)) static int wrap_inner(size_t row)
{
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)src;
    op.src.op.ptr.rowLength = row;
    op.dst.op.ptr.ptr = (CUdeviceptr)(uintptr_t)dst;
    op.extent.width = 512;
    op.extent.height = 2;
    op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    volatile int r = cuMemcpy3DBatchAsync_v2(1, &op, 0, s); /* STACK-LINE-inner */
    return r;
}

__attribute__((noinline)) int stackwrap_outer(size_t row)
{
    volatile int r = wrap_inner(row); /* STACK-LINE-outer */
    return r;
}
