/* SPDX-License-Identifier: MIT */
/*
 * A program linked to libcuda that uses the driver's memory functions, its
 * lookups and the batch, and prints the CUresult of each call, whatever it
 * is.  Run with CUBATCHTRACE_LIBCUDA naming no usable driver, only the lines
 * of the batch calls ("batch ...") may differ from a run without the shim.
 *
 *   memory:      cuMemAlloc, cuMemAllocHost, cuArray3DCreate, cuMemFree...
 *   lookups:     cuGetProcAddress_v2("cuMemAlloc"), dlsym(libcuda, "cuMemFree_v2"),
 *                each called
 *   batches:     the linked cuMemcpy3DBatchAsync_v2, the one cuGetProcAddress
 *                hands out, the one dlsym on libcuda finds
 */
#include <cuda.h>
#undef cuGetProcAddress

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*batch_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);

static unsigned char src[256], dst[256];

static CUresult batch(batch_fn fn)
{
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = (CUdeviceptr)(uintptr_t)src;
    op.dst.op.ptr.ptr = (CUdeviceptr)(uintptr_t)dst;
    op.extent.width = sizeof src;
    op.extent.height = op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    return fn ? fn(1, &op, 0, CU_STREAM_PER_THREAD) : CUDA_ERROR_NOT_FOUND;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    printf("cuInit: %d\n", (int)cuInit(0));
    printf("cuDeviceGet: %d\n", (int)cuDeviceGet(&dev, 0));
    printf("cuDevicePrimaryCtxRetain: %d\n", (int)cuDevicePrimaryCtxRetain(&ctx, dev));
    printf("cuCtxSetCurrent: %d\n", (int)cuCtxSetCurrent(ctx));

    CUdeviceptr d = 0;
    void *pinned = NULL;
    CUarray arr = NULL;
    CUDA_ARRAY3D_DESCRIPTOR desc;
    memset(&desc, 0, sizeof desc);
    desc.Width = 16;
    desc.Height = 4;
    desc.Format = CU_AD_FORMAT_FLOAT;
    desc.NumChannels = 1;
    printf("cuMemAlloc: %d\n", (int)cuMemAlloc(&d, 4096));
    printf("cuMemAllocHost: %d\n", (int)cuMemAllocHost(&pinned, 4096));
    printf("cuArray3DCreate: %d\n", (int)cuArray3DCreate(&arr, &desc));
    printf("cuMemHostRegister: %d\n", (int)cuMemHostRegister(src, sizeof src, 0));
    printf("cuMemHostUnregister: %d\n", (int)cuMemHostUnregister(src));
    printf("cuArrayDestroy: %d\n", (int)cuArrayDestroy(arr));
    printf("cuMemFreeHost: %d\n", (int)cuMemFreeHost(pinned));
    printf("cuMemFree: %d\n", (int)cuMemFree(d));

    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    CUresult r = cuGetProcAddress_v2("cuMemAlloc", &p, 12000, 0, &st);
    printf("cuGetProcAddress_v2(cuMemAlloc): %d, %s\n", (int)r, p ? "found" : "NULL");
    if (p) {
        CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))p;
        printf("  its cuMemAlloc: %d\n", (int)alloc(&d, 512));
        printf("  cuMemFree: %d\n", (int)cuMemFree(d));
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CUresult (*free_fn)(CUdeviceptr) = h ? (CUresult(*)(CUdeviceptr))dlsym(h, "cuMemFree_v2") : NULL;
    printf("dlsym(libcuda, cuMemFree_v2): %s\n", free_fn ? "found" : "NULL");
    if (free_fn) {
        cuMemAlloc(&d, 256);
        printf("  its cuMemFree_v2: %d\n", (int)free_fn(d));
    }

    void *gpa_batch = NULL;
    r = cuGetProcAddress_v2("cuMemcpy3DBatchAsync", &gpa_batch, 13000, 0, &st);
    printf("cuGetProcAddress_v2(cuMemcpy3DBatchAsync): %d, %s\n", (int)r, gpa_batch ? "found" : "NULL");
    batch_fn dl_batch = h ? (batch_fn)dlsym(h, "cuMemcpy3DBatchAsync_v2") : NULL;
    printf("dlsym(libcuda, cuMemcpy3DBatchAsync_v2): %s\n", dl_batch ? "found" : "NULL");
    printf("batch linked: %d\n", (int)batch(cuMemcpy3DBatchAsync_v2));
    printf("batch via cuGetProcAddress: %d\n", (int)batch((batch_fn)gpa_batch));
    printf("batch via dlsym: %d\n", (int)batch(dl_batch));
    printf("cuCtxSynchronize: %d\n", (int)cuCtxSynchronize());
    printf("exiting normally\n");
    return 0;
}
