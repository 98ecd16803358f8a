/*
 * One batch with an operand of every memory kind, as the shim must record
 * them (src/operands.c): pageable, array, pinned, managed, device.  The
 * pageable source is taken from the very page that holds the CUarray
 * handle's storage, so a cache that mixed CUarray handles with addresses
 * would call the array "host_pageable" (and lose its element size).
 * Prints what it copied; exits 1 if the bytes are wrong.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                     \
    do {                                                                          \
        CUresult r_ = (x);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                 \
            fprintf(stderr, "client_kinds: %s failed (%d)\n", #x, (int)r_);       \
            exit(2);                                                              \
        }                                                                         \
    } while (0)

static CUmemcpy3DOperand ptr(CUdeviceptr p)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p;
    return o;
}

static CUDA_MEMCPY3D_BATCH_OP op(CUmemcpy3DOperand s, CUmemcpy3DOperand d, size_t w, size_t h)
{
    CUDA_MEMCPY3D_BATCH_OP o;
    memset(&o, 0, sizeof o);
    o.src = s;
    o.dst = d;
    o.extent.width = w;
    o.extent.height = h;
    o.extent.depth = 1;
    o.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    return o;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    CUDA_ARRAY3D_DESCRIPTOR d = {16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    CUarray arr;
    CK(cuArray3DCreate(&arr, &d));
    /* The page holding the handle: mapped, readable, not CUDA memory. */
    unsigned char *page = (unsigned char *)((uintptr_t)arr & ~(uintptr_t)4095);
    CUdeviceptr dev_buf, managed;
    void *pinned;
    unsigned char *pageable = calloc(1, 4096);
    CK(cuMemAlloc(&dev_buf, 1 << 16));
    CK(cuMemAllocHost(&pinned, 4096));
    CK(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL));
    memset(pinned, 0x5a, 4096);

    CUmemcpy3DOperand a;
    memset(&a, 0, sizeof a);
    a.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    a.op.array.array = arr;
    CUDA_MEMCPY3D_BATCH_OP ops[5] = {
        op(ptr((CUdeviceptr)page), ptr(dev_buf), 64, 1),          /* host_pageable -> device */
        op(a, ptr(dev_buf + 4096), 16, 16),                        /* array -> device */
        op(ptr((CUdeviceptr)pinned), ptr(dev_buf + 8192), 128, 1), /* host_pinned -> device */
        op(ptr(managed), ptr(dev_buf + 12288), 128, 1),            /* managed -> device */
        op(ptr(dev_buf + 8192), ptr((CUdeviceptr)pageable), 128, 1), /* device -> host_pageable */
    };
    ops[4].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    CK(cuMemcpy3DBatchAsync(5, ops, 0, s));
    CK(cuStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < 128; i++)
        bad += pageable[i] != 0x5a;
    printf("kinds: 5 ops %s\n", bad ? "DATA MISMATCH" : "copied");
    return bad ? 1 : 0;
}
