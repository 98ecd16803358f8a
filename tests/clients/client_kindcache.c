/* SPDX-License-Identifier: MIT */
/*
 * Memory kinds kept across batches (src/operands.c, src/memwrap.c): the
 * same batch again and again while memory changes kind between batches,
 * the changes made through one door of the driver:
 *
 *   client_kindcache symbol|gpa|dlsym [munmap]
 *
 * symbol: direct calls; gpa: pointers from cuGetProcAddress_v2; dlsym:
 * pointers from dlsym on the driver's handle.  Every batch has six ops into
 * a device buffer: op 0 from the address R, ops 1-4 from the four pages of
 * the pageable buffer B, op 5 from a CUDA array.  R is memory this program
 * keeps mapped; the test double is told to place an allocation there, so
 * one address is device memory, then pageable (freed), then pinned
 * (registered), then device memory of one page and of two (each allocation
 * at R freed before the next); B is registered, unregistered, then a pinned
 * allocation the double places there (as the driver may map pinned memory
 * where pageable pages were), then freed; R device memory once more, then
 * more allocations and frees than the shim's log of changes holds, then R
 * freed.  After each batch it prints "NAME queries=N": the pointer
 * queries (cuPointerGetAttributes) the batch made, from the double's count.
 * With "munmap", B is then unmapped behind the driver's back and one more
 * batch is made from it (run it in strict mode only: forwarded, it crashes).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fakecuda/fakecuda.h"
#include "opbuild.h"

#define CK(x)                                                                     \
    do {                                                                          \
        CUresult r_ = (x);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                 \
            fprintf(stderr, "client_kindcache: %s failed (%d)\n", #x, (int)r_);   \
            exit(2);                                                              \
        }                                                                         \
    } while (0)

#define PAGE 4096
#define RSIZE (16 * PAGE)
#define BPAGES 4

/* The memory functions, reached through the door under test. */
static struct {
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*host_register)(void *, size_t, unsigned int);
    CUresult (*host_unregister)(void *);
    CUresult (*alloc_host)(void **, size_t);
    CUresult (*free_host)(void *);
    CUresult (*array3d_create)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
    CUresult (*array_destroy)(CUarray);
    CUresult (*begin_capture)(CUstream, CUstreamCaptureMode); /* wrapped too, but changes no memory */
} mw;

static void *by_gpa(const char *name)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    CK(cuGetProcAddress_v2(name, &p, 13000, 0, &st));
    return p;
}

static void *by_dlsym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "client_kindcache: dlsym %s: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static void pick_door(const char *door)
{
    if (!strcmp(door, "symbol")) {
        mw.alloc = cuMemAlloc;
        mw.free = cuMemFree;
        mw.host_register = cuMemHostRegister;
        mw.host_unregister = cuMemHostUnregister;
        mw.alloc_host = cuMemAllocHost;
        mw.free_host = cuMemFreeHost;
        mw.array3d_create = cuArray3DCreate;
        mw.array_destroy = cuArrayDestroy;
        mw.begin_capture = cuStreamBeginCapture;
    } else if (!strcmp(door, "gpa")) {
        *(void **)&mw.alloc = by_gpa("cuMemAlloc");
        *(void **)&mw.free = by_gpa("cuMemFree");
        *(void **)&mw.host_register = by_gpa("cuMemHostRegister");
        *(void **)&mw.host_unregister = by_gpa("cuMemHostUnregister");
        *(void **)&mw.alloc_host = by_gpa("cuMemAllocHost");
        *(void **)&mw.free_host = by_gpa("cuMemFreeHost");
        *(void **)&mw.array3d_create = by_gpa("cuArray3DCreate");
        *(void **)&mw.array_destroy = by_gpa("cuArrayDestroy");
        *(void **)&mw.begin_capture = by_gpa("cuStreamBeginCapture");
    } else if (!strcmp(door, "dlsym")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (!h) {
            fprintf(stderr, "client_kindcache: dlopen libcuda.so.1: %s\n", dlerror());
            exit(2);
        }
        *(void **)&mw.alloc = by_dlsym(h, "cuMemAlloc_v2");
        *(void **)&mw.free = by_dlsym(h, "cuMemFree_v2");
        *(void **)&mw.host_register = by_dlsym(h, "cuMemHostRegister_v2");
        *(void **)&mw.host_unregister = by_dlsym(h, "cuMemHostUnregister");
        *(void **)&mw.alloc_host = by_dlsym(h, "cuMemAllocHost_v2");
        *(void **)&mw.free_host = by_dlsym(h, "cuMemFreeHost");
        *(void **)&mw.array3d_create = by_dlsym(h, "cuArray3DCreate_v2");
        *(void **)&mw.array_destroy = by_dlsym(h, "cuArrayDestroy");
        *(void **)&mw.begin_capture = by_dlsym(h, "cuStreamBeginCapture_v2");
    } else {
        fprintf(stderr, "client_kindcache: unknown door %s\n", door);
        exit(2);
    }
}

static fakecuda_pointer_queries_fn queries;
static fakecuda_place_next_alloc_fn place_next_alloc;
static CUstream stream;
static CUdeviceptr dst;
static unsigned char *R, *B;
static CUarray array;

static void batch(const char *name)
{
    const CUmemcpySrcAccessOrder during = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    CUDA_MEMCPY3D_BATCH_OP ops[2 + BPAGES];
    ops[0] = ob_op(ob_ptr((CUdeviceptr)R, 0, 0), ob_ptr(dst, 0, 0), 64, 1, 1, during);
    for (int i = 0; i < BPAGES; i++)
        ops[1 + i] = ob_op(ob_ptr((CUdeviceptr)(B + i * PAGE + 8 * i), 0, 0), ob_ptr(dst + (1 + i) * PAGE, 0, 0),
                           64, 1, 1, during);
    ops[1 + BPAGES] = ob_op(ob_array(array, 0, 0, 0), ob_ptr(dst + (2 + BPAGES) * PAGE, 0, 0), 16, 1, 1, during);
    unsigned long long q0 = queries();
    CUresult r = cuMemcpy3DBatchAsync(2 + BPAGES, ops, 0, stream);
    printf("%s queries=%llu result=%d\n", name, queries() - q0, (int)r);
    fflush(stdout);
}

static CUarray new_array(CUarray_format format)
{
    CUDA_ARRAY3D_DESCRIPTOR d = {16, 1, 0, format, 1, 0};
    CUarray a;
    CK(mw.array3d_create(&a, &d));
    return a;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: client_kindcache symbol|gpa|dlsym [munmap]\n");
        return 2;
    }
    void *fc = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!fc || !(*(void **)&queries = dlsym(fc, "fakecuda_pointer_queries")) ||
        !(*(void **)&place_next_alloc = dlsym(fc, "fakecuda_place_next_alloc"))) {
        fprintf(stderr, "client_kindcache: run over the test double\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    pick_door(argv[1]);

    R = mmap(NULL, RSIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    B = mmap(NULL, BPAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (R == MAP_FAILED || B == MAP_FAILED)
        return 2;
    CK(cuMemAlloc(&dst, 8 * PAGE));
    array = new_array(CU_AD_FORMAT_FLOAT);

    /* R becomes device memory: the double places the allocation there. */
    CUdeviceptr d;
    place_next_alloc(R);
    CK(mw.alloc(&d, RSIZE));
    if (d != (CUdeviceptr)R) {
        fprintf(stderr, "client_kindcache: the double did not place the allocation\n");
        return 2;
    }
    batch("learn");
    batch("again");
    CK(mw.free(d)); /* R: pageable memory again, at the same address */
    batch("freed");
    CK(mw.host_register(R, RSIZE, 0)); /* R: pinned */
    batch("registered");
    batch("again2");
    /* a capture of another stream, begun and ended: memory is as it was */
    CUstream other;
    CUgraph g = NULL;
    CK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CK(mw.begin_capture(other, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(cuStreamEndCapture(other, &g));
    batch("captured");
    CK(cuStreamDestroy(other)); /* after: a stream destroyed moves the memory generation */
    CK(mw.host_register(B, BPAGES * PAGE, 0)); /* B: pinned */
    batch("registered-b");
    CK(mw.host_unregister(B)); /* B: pageable again */
    batch("unregistered-b");
    /* A new array, most likely with the handle just freed, of 1-byte elements. */
    CUarray old = array;
    CK(mw.array_destroy(array));
    array = new_array(CU_AD_FORMAT_UNSIGNED_INT8);
    printf("array handle reused: %s\n", array == old ? "yes" : "no");
    batch("new-array");
    /* R: device memory again, one page of it, then two (a new size at the
     * same address: the allocation's bounds must follow) */
    CK(mw.host_unregister(R));
    place_next_alloc(R);
    CK(mw.alloc(&d, PAGE));
    batch("realloc-small");
    CK(mw.free(d));
    place_next_alloc(R);
    CK(mw.alloc(&d, 2 * PAGE));
    batch("realloc-large");
    CK(mw.free(d)); /* R: pageable */
    /* B: a pinned allocation where the pageable pages were learned */
    void *h;
    place_next_alloc(B);
    CK(mw.alloc_host(&h, BPAGES * PAGE));
    if (h != B) {
        fprintf(stderr, "client_kindcache: the double did not place the host allocation\n");
        return 2;
    }
    batch("hostalloc-b");
    CK(mw.free_host(h)); /* B: pageable again (the double leaves it mapped) */
    batch("freehost-b");
    /* more changes between two batches than the log holds (memwrap.h): the
     * thread cannot tell which were lost and forgets everything */
    place_next_alloc(R);
    CK(mw.alloc(&d, PAGE));
    batch("before-overflow");
    CK(mw.free(d)); /* R: pageable, told by a change the log will no longer hold */
    for (int i = 0; i < 300; i++) {
        CUdeviceptr x;
        CK(mw.alloc(&x, PAGE));
        CK(mw.free(x));
    }
    batch("after-overflow");
    if (argc > 2 && !strcmp(argv[2], "munmap")) {
        munmap(B, BPAGES * PAGE); /* no CUDA call tells the shim */
        batch("unmapped-b");
    }
    return 0;
}
