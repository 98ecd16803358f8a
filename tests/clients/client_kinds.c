/* SPDX-License-Identifier: MIT */
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

#include "opbuild.h"

#define CK(x)                                                                     \
    do {                                                                          \
        CUresult r_ = (x);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                 \
            fprintf(stderr, "client_kinds: %s failed (%d)\n", #x, (int)r_);       \
            exit(2);                                                              \
        }                                                                         \
    } while (0)

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

    const CUmemcpySrcAccessOrder during = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    CUDA_MEMCPY3D_BATCH_OP ops[5] = {
        ob_op(ob_ptr((CUdeviceptr)page, 0, 0), ob_ptr(dev_buf, 0, 0), 64, 1, 1, during),             /* host_pageable -> device */
        ob_op(ob_array(arr, 0, 0, 0), ob_ptr(dev_buf + 4096, 0, 0), 16, 16, 1, during),              /* array -> device */
        ob_op(ob_ptr((CUdeviceptr)pinned, 0, 0), ob_ptr(dev_buf + 8192, 0, 0), 128, 1, 1, during),   /* host_pinned -> device */
        ob_op(ob_ptr(managed, 0, 0), ob_ptr(dev_buf + 12288, 0, 0), 128, 1, 1, during),              /* managed -> device */
        ob_op(ob_ptr(dev_buf + 8192, 0, 0), ob_ptr((CUdeviceptr)pageable, 0, 0), 128, 1, 1, during), /* device -> host_pageable */
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
