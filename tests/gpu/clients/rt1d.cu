/* SPDX-License-Identifier: MIT */
/*
 * GPU test client: cudaMemcpyBatchAsync, the CUDA runtime's 1D batch.
 * Built by tests/gpu/build like rt.cu: static runtime and --cudart shared,
 * each with and without --default-stream per-thread.  The program never
 * links libcuda: the runtime reaches the driver through cuGetProcAddress.
 *
 *   rt1d            two batches on a non-blocking stream: 8 device-to-device
 *                   copies under two attributes ({0, 5}), then the read-back
 *                   of every destination into pinned memory; every byte checked
 *
 * Prints "PID <pid>", "BUILD static|shared ptds=0|1", "BATCH <k> count=<n> rc=<cudaError>"
 * per batch, "CHECK data ok|FAIL" and "RESULT ok|FAIL".
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 8
#define CHUNK 4096

static int failed;

static void batch(int k, void **dsts, void **srcs, size_t *sizes, size_t count, cudaMemcpyAttributes *attrs,
                  size_t *idxs, size_t nattrs, cudaStream_t s)
{
    cudaError_t e = cudaMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, idxs, nattrs, s);
    printf("BATCH %d count=%zu rc=%d\n", k, count, (int)e);
    if (e != cudaSuccess)
        failed = 1;
}

int main(void)
{
    printf("PID %d\n", (int)getpid());
#ifdef CBT_GPU_CUDART_SHARED
    const char *how = "shared";
#else
    const char *how = "static";
#endif
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    printf("BUILD %s ptds=1\n", how);
#else
    printf("BUILD %s ptds=0\n", how);
#endif
    cudaStream_t s;
    unsigned char *src, *dst, *host_in, *host_out;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess || cudaMalloc(&src, N * CHUNK) ||
        cudaMalloc(&dst, N * CHUNK) || cudaMallocHost(&host_in, N * CHUNK) || cudaMallocHost(&host_out, N * CHUNK)) {
        printf("CHECK setup FAIL runtime allocation\nRESULT FAIL\n");
        return 1;
    }
    for (size_t i = 0; i < N * CHUNK; i++)
        host_in[i] = (unsigned char)(i * 11 + 3);
    memset(host_out, 0, N * CHUNK);
    if (cudaMemcpy(src, host_in, N * CHUNK, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemset(dst, 0, N * CHUNK) != cudaSuccess) {
        printf("CHECK setup FAIL cudaMemcpy/cudaMemset\nRESULT FAIL\n");
        return 1;
    }
    void *d[N], *sr[N];
    size_t z[N], idx[2] = {0, 5};
    cudaMemcpyAttributes a[2];
    memset(a, 0, sizeof a);
    a[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    a[1].srcAccessOrder = cudaMemcpySrcAccessOrderAny;
    a[1].flags = cudaMemcpyFlagPreferOverlapWithCompute;
    for (int i = 0; i < N; i++) { /* copy i: chunk i to chunk N-1-i */
        sr[i] = src + (size_t)i * CHUNK;
        d[i] = dst + (size_t)(N - 1 - i) * CHUNK;
        z[i] = CHUNK;
    }
    batch(0, d, sr, z, N, a, idx, 2, s);
    for (int i = 0; i < N; i++) {
        sr[i] = dst + (size_t)i * CHUNK;
        d[i] = host_out + (size_t)i * CHUNK;
    }
    batch(1, d, sr, z, N, a, idx, 1, s);
    if (cudaStreamSynchronize(s) != cudaSuccess)
        failed = 1;
    int same = 1;
    for (int i = 0; i < N; i++)
        same &= !memcmp(host_out + (size_t)(N - 1 - i) * CHUNK, host_in + (size_t)i * CHUNK, CHUNK);
    printf("CHECK data %s\n", same ? "ok" : "FAIL");
    if (!same)
        failed = 1;
    printf("RESULT %s\n", failed ? "FAIL" : "ok");
    return failed;
}
