/* SPDX-License-Identifier: MIT */
/*
 * GPU test client for programs built by nvcc against the CUDA runtime.
 * Built four ways by tests/gpu/build: static runtime (nvcc's default) and
 * --cudart shared, each with and without --default-stream per-thread.
 * Everything is allocated with the runtime API; the program never links
 * libcuda, so the runtime's dlopen/cuGetProcAddress_v2 path is the only way
 * it reaches the driver.
 *
 *   rt batch        cudaMemcpy3DBatchAsync
 *   rt entry        cudaGetDriverEntryPoint("cuMemcpy3DBatchAsync", cudaEnableDefault)
 *   rt entry_ptds   cudaGetDriverEntryPoint(..., cudaEnablePerThreadDefaultStream)
 *   rt bv12080      cudaGetDriverEntryPointByVersion(..., 12080, cudaEnableDefault): the 12.8 ABI with failIdx
 *   rt bv13000      cudaGetDriverEntryPointByVersion(..., 13000, cudaEnableDefault)
 *
 * Output: the manifest of cbt_gpu.h, plus "BUILD static|shared ptds=0|1".
 */
#include <cuda_runtime.h>

#define CBT_GPU_NO_DRIVER_BACKEND
#include "cbt_gpu.h"

typedef CUresult (*v2_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);

/* ---- the runtime backend ---- */

static const char *rt_err_name(int rc) { return cudaGetErrorName((cudaError_t)rc); }

#define RT(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            printf("CHECK setup FAIL %s -> %s\n", #call, cudaGetErrorName(e_));               \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

static int rt_dev_alloc(CUdeviceptr *p, size_t n)
{
    void *q;
    RT(cudaMalloc(&q, n));
    *p = (CUdeviceptr)(uintptr_t)q;
    return 0;
}
static int rt_host_alloc(void **p, size_t n) { RT(cudaMallocHost(p, n)); return 0; }
static int rt_managed_alloc(CUdeviceptr *p, size_t n)
{
    void *q;
    RT(cudaMallocManaged(&q, n, cudaMemAttachGlobal));
    *p = (CUdeviceptr)(uintptr_t)q;
    return 0;
}
static int rt_array3d(CUarray *a, size_t w, size_t h, size_t d, int channels)
{
    cudaChannelFormatDesc desc = channels == 4 ? cudaCreateChannelDesc<float4>() : cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    RT(cudaMalloc3DArray(&arr, &desc, make_cudaExtent(w, h, d), 0));
    *a = (CUarray)arr; /* "Memcpy operand is a CUarray": the runtime's arrays are the driver's */
    return 0;
}
static int rt_sync(CUstream s) { RT(cudaStreamSynchronize((cudaStream_t)s)); return 0; }
static int rt_dtoh(void *dst, CUdeviceptr src, size_t n)
{
    return (int)cudaMemcpy(dst, (const void *)(uintptr_t)src, n, cudaMemcpyDeviceToHost);
}

static const struct backend rt_backend = {rt_err_name, rt_dev_alloc, rt_host_alloc, rt_managed_alloc,
                                          rt_array3d, rt_sync, rt_dtoh};

/* ---- the doors ---- */

static cudaMemcpy3DOperand to_rt(const CUmemcpy3DOperand &o)
{
    cudaMemcpy3DOperand r;
    memset(&r, 0, sizeof r);
    r.type = (cudaMemcpy3DOperandType)o.type;
    if (o.type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
        r.op.array.array = (cudaArray_t)o.op.array.array;
        r.op.array.offset.x = o.op.array.offset.x;
        r.op.array.offset.y = o.op.array.offset.y;
        r.op.array.offset.z = o.op.array.offset.z;
    } else {
        r.op.ptr.ptr = (void *)(uintptr_t)o.op.ptr.ptr;
        r.op.ptr.rowLength = o.op.ptr.rowLength;
        r.op.ptr.layerHeight = o.op.ptr.layerHeight;
        r.op.ptr.locHint.type = (cudaMemLocationType)o.op.ptr.locHint.type;
        r.op.ptr.locHint.id = o.op.ptr.locHint.id;
    }
    return r;
}

static int call_runtime(const struct door *, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *, CUstream s)
{
    cudaMemcpy3DBatchOp rops[8];
    if (n > 8)
        return -1;
    for (size_t i = 0; i < n; i++) {
        memset(&rops[i], 0, sizeof rops[i]);
        rops[i].src = to_rt(ops[i].src);
        rops[i].dst = to_rt(ops[i].dst);
        rops[i].extent = make_cudaExtent(ops[i].extent.width, ops[i].extent.height, ops[i].extent.depth);
        rops[i].srcAccessOrder = (cudaMemcpySrcAccessOrder)ops[i].srcAccessOrder;
        rops[i].flags = ops[i].flags;
    }
    return (int)cudaMemcpy3DBatchAsync(n, rops, 0, (cudaStream_t)s);
}

static int call_v2(const struct door *d, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *, CUstream s)
{
    return (int)((v2_fn)d->fn)(n, ops, 0, s);
}

static int call_v1(const struct door *d, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, CUstream s)
{
    return (int)((v1_fn)d->fn)(n, ops, fail_idx, 0, s);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "batch";
    printf("PID %d\n", (int)getpid());
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    const int ptds = 1;
#else
    const int ptds = 0;
#endif
#ifdef CBT_GPU_CUDART_SHARED
    printf("BUILD shared ptds=%d\n", ptds);
#else
    printf("BUILD static ptds=%d\n", ptds);
#endif
    int rv = 0;
    cudaRuntimeGetVersion(&rv);
    printf("RUNTIME %d\n", rv);

    cudaStream_t s;
    if (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess ||
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        setup_fail("cudaSetDevice/cudaFree/cudaStreamCreateWithFlags", cudaGetErrorName(cudaGetLastError()), __LINE__);

    struct door d;
    memset(&d, 0, sizeof d);
    d.name = mode;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e = cudaSuccess;
    if (!strcmp(mode, "batch")) {
        d.call = call_runtime;
    } else if (!strcmp(mode, "entry") || !strcmp(mode, "entry_ptds")) {
        unsigned long long flags = !strcmp(mode, "entry") ? cudaEnableDefault : cudaEnablePerThreadDefaultStream;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        e = cudaGetDriverEntryPoint("cuMemcpy3DBatchAsync", &d.fn, flags, &q);
#pragma GCC diagnostic pop
        check("resolve", e == cudaSuccess && d.fn && q == cudaDriverEntryPointSuccess,
              "cudaGetDriverEntryPoint(cuMemcpy3DBatchAsync, %llu) -> %s, %p, %d", flags, cudaGetErrorName(e), d.fn,
              (int)q);
        d.call = call_v2;
    } else if (!strcmp(mode, "bv12080") || !strcmp(mode, "bv13000")) {
        unsigned ver = !strcmp(mode, "bv12080") ? 12080 : 13000;
        e = cudaGetDriverEntryPointByVersion("cuMemcpy3DBatchAsync", &d.fn, ver, cudaEnableDefault, &q);
        check("resolve", e == cudaSuccess && d.fn && q == cudaDriverEntryPointSuccess,
              "cudaGetDriverEntryPointByVersion(cuMemcpy3DBatchAsync, %u) -> %s, %p, %d", ver, cudaGetErrorName(e),
              d.fn, (int)q);
        d.call = ver == 12080 ? call_v1 : call_v2;
        d.has_fail_idx = ver == 12080;
    } else {
        printf("CHECK mode FAIL unknown mode %s\n", mode);
        return 2;
    }
    if (d.call != call_runtime && !d.fn)
        return finish();
    data_suite(&rt_backend, &d, (CUstream)s);
    return finish();
}
