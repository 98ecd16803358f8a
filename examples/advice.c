/* SPDX-License-Identifier: MIT */
/*
 * Batched copies that draw cubatchtrace's advice (docs/rules.md § Advice),
 * each pattern followed by what its advice says to do instead, for
 * `cubatchtrace run` and scripts/readme-examples:
 *
 *   unbatched  64 batches of one 4 KiB copy, back to back on one stream
 *              (unbatched_run); then the 64 copies as one batch
 *   pageable   one batch of 4 MiB from pageable memory (pageable_source);
 *              then the same from pinned memory
 *   overlap    32 copies of 512 KiB device to device with
 *              PREFER_OVERLAP_WITH_COMPUTE (overlap_flag_large_copy); then
 *              without the flag
 *   tiny       one batch of 256 copies of 256 bytes (tiny_copies); then the
 *              same bytes as one copy
 *
 *   advice [PATTERN...]   (default: all four, in this order)
 *
 * Every destination is read back and checked.  Exits 0 when every byte arrived.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        CUresult r_ = (call);                                                              \
        if (r_ != CUDA_SUCCESS) {                                                          \
            const char *n_ = NULL;                                                         \
            cuGetErrorName(r_, &n_);                                                       \
            fprintf(stderr, "advice: %s failed: %s (%d)\n", #call, n_ ? n_ : "?", (int)r_); \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static CUstream s;
static size_t bad;

static CUDA_MEMCPY3D_BATCH_OP copy_op(CUdeviceptr dst, CUdeviceptr src, size_t bytes, unsigned flags)
{
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = src;
    op.dst.op.ptr.ptr = dst;
    op.extent.width = bytes;
    op.extent.height = op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    op.flags = flags;
    return op;
}

static void batch(CUDA_MEMCPY3D_BATCH_OP *ops, size_t n)
{
    CHECK(cuMemcpy3DBatchAsync(n, ops, 0, s));
}

/* Device memory d holds `bytes` equal to host memory want? */
static void expect(CUdeviceptr d, const unsigned char *want, size_t bytes)
{
    unsigned char *got = malloc(bytes);
    if (!got)
        exit(1);
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemcpyDtoH(got, d, bytes));
    bad += memcmp(got, want, bytes) != 0;
    free(got);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed);
}

static void unbatched(void)
{
    enum { N = 64, SZ = 4096 };
    unsigned char *host;
    CUdeviceptr d;
    CHECK(cuMemAllocHost((void **)&host, N * SZ));
    CHECK(cuMemAlloc(&d, N * SZ));
    fill(host, N * SZ, 1);
    CUDA_MEMCPY3D_BATCH_OP ops[N];
    for (int i = 0; i < N; i++)
        ops[i] = copy_op(d + (size_t)i * SZ, (CUdeviceptr)(host + (size_t)i * SZ), SZ, 0);
    for (int i = 0; i < N; i++) /* a batch per copy */
        batch(&ops[i], 1);
    expect(d, host, N * SZ);
    batch(ops, N); /* as the advice says: one batch */
    expect(d, host, N * SZ);
    CHECK(cuMemFree(d));
    CHECK(cuMemFreeHost(host));
}

static void pageable(void)
{
    enum { SZ = 4 << 20 };
    unsigned char *pg = malloc(SZ), *pinned;
    CUdeviceptr d;
    if (!pg)
        exit(1);
    CHECK(cuMemAllocHost((void **)&pinned, SZ));
    CHECK(cuMemAlloc(&d, SZ));
    fill(pg, SZ, 2);
    memcpy(pinned, pg, SZ);
    CUDA_MEMCPY3D_BATCH_OP op = copy_op(d, (CUdeviceptr)pg, SZ, 0);
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL; /* the order meant for pageable memory */
    batch(&op, 1);
    expect(d, pg, SZ);
    op = copy_op(d, (CUdeviceptr)pinned, SZ, 0); /* as the advice says: pinned */
    batch(&op, 1);
    expect(d, pinned, SZ);
    CHECK(cuMemFree(d));
    CHECK(cuMemFreeHost(pinned));
    free(pg);
}

static void overlap(void)
{
    enum { N = 32, SZ = 512 << 10 };
    unsigned char *host = malloc((size_t)N * SZ);
    CUdeviceptr a, b;
    if (!host)
        exit(1);
    CHECK(cuMemAlloc(&a, (size_t)N * SZ));
    CHECK(cuMemAlloc(&b, (size_t)N * SZ));
    fill(host, (size_t)N * SZ, 3);
    CHECK(cuMemcpyHtoD(a, host, (size_t)N * SZ));
    CUDA_MEMCPY3D_BATCH_OP ops[N];
    for (unsigned flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;; flags = 0) { /* then as the advice says: no flag */
        for (int i = 0; i < N; i++)
            ops[i] = copy_op(b + (size_t)i * SZ, a + (size_t)i * SZ, SZ, flags);
        batch(ops, N);
        expect(b, host, (size_t)N * SZ);
        if (!flags)
            break;
    }
    CHECK(cuMemFree(a));
    CHECK(cuMemFree(b));
    free(host);
}

static void tiny(void)
{
    enum { N = 256, SZ = 256 };
    unsigned char *host;
    CUdeviceptr d;
    CHECK(cuMemAllocHost((void **)&host, N * SZ));
    CHECK(cuMemAlloc(&d, N * SZ));
    fill(host, N * SZ, 4);
    CUDA_MEMCPY3D_BATCH_OP ops[N];
    for (int i = 0; i < N; i++)
        ops[i] = copy_op(d + (size_t)i * SZ, (CUdeviceptr)(host + (size_t)i * SZ), SZ, 0);
    batch(ops, N);
    expect(d, host, N * SZ);
    CUDA_MEMCPY3D_BATCH_OP one = copy_op(d, (CUdeviceptr)host, N * SZ, 0); /* as the advice says: one copy */
    batch(&one, 1);
    expect(d, host, N * SZ);
    CHECK(cuMemFree(d));
    CHECK(cuMemFreeHost(host));
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } patterns[] = {{"unbatched", unbatched}, {"pageable", pageable}, {"overlap", overlap}, {"tiny", tiny}};
    const size_t np = sizeof patterns / sizeof *patterns;
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int i = 1; i < argc; i++) {
        size_t k = 0;
        while (k < np && strcmp(argv[i], patterns[k].name) != 0)
            k++;
        if (k == np) {
            fprintf(stderr, "usage: advice [unbatched|pageable|overlap|tiny]...\n");
            return 2;
        }
    }
    for (size_t k = 0; k < np; k++) {
        int wanted = argc == 1;
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], patterns[k].name) == 0;
        if (wanted)
            patterns[k].fn();
    }
    printf("advice: %s\n", bad ? "DATA MISMATCH" : "all checked bytes arrived");
    CHECK(cuStreamDestroy(s));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    return bad ? 1 : 0;
}
