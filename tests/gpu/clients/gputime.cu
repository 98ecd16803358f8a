/* SPDX-License-Identifier: MIT */
/*
 * GPU test client for GPU time (CUBATCHTRACE_GPU_TIME=1): batches of large
 * copies, each timed by the client itself with CUDA events recorded on the
 * same stream right before and after the call, for comparison with the GPU
 * time the shim writes.
 *
 *   gputime DOOR KIND REPS
 *     DOOR  drv     cuMemcpy3DBatchAsync_v2 (the driver, linked)
 *           rt      cudaMemcpy3DBatchAsync (the runtime)
 *           drv1d   cuMemcpyBatchAsync_v2
 *           rt1d    cudaMemcpyBatchAsync
 *     KIND  d2d     256 MiB device to device, 4 copies of 64 MiB
 *           h2d     256 MiB pinned host to device, 4 copies of 64 MiB
 *           d2h     256 MiB device to pinned host, 4 copies of 64 MiB
 * A first batch (batch id 0 in the shim) is a warm-up, not reported.  Before
 * each timed batch the stream is kept busy by a 1 GiB device copy, so that the
 * client's start event, the batch and its end event are all queued before the
 * GPU reaches them: the client's timing is then the GPU's, without the host's
 * time between the calls.  Prints "pid P", then for each timed batch
 * "ROW rep=I batch=ID bytes=N client_ns=T", then a check of the bytes that
 * arrived ("CHECK data ok") and "RESULT ok".
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCOPY 4
#define PART (64u << 20)

static void die(const char *what)
{
    printf("CHECK %s FAIL\nRESULT FAIL\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: gputime drv|rt|drv1d|rt1d d2d|h2d|d2h REPS\n");
        return 2;
    }
    const char *door = argv[1], *kind = argv[2];
    int reps = atoi(argv[3]);
    const size_t total = (size_t)NCOPY * PART;
    unsigned char *dsrc, *ddst, *host, *busy;
    cudaStream_t s;
    const size_t busy_bytes = (size_t)1 << 30;
    if (cudaSetDevice(0) || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) || cudaMalloc(&dsrc, total) ||
        cudaMalloc(&ddst, total) || cudaMallocHost(&host, total) || cudaMalloc(&busy, 2 * busy_bytes))
        die("setup");
    for (size_t i = 0; i < total; i += 4096)
        host[i] = (unsigned char)(i / 4096 * 7 + 1);
    if (cudaMemcpy(dsrc, host, total, cudaMemcpyHostToDevice) || cudaMemset(ddst, 0, total))
        die("setup copies");
    unsigned char *src = !strcmp(kind, "h2d") ? host : dsrc;
    unsigned char *dst = !strcmp(kind, "d2h") ? host : ddst;
    if (!strcmp(kind, "d2h") && cudaMemset(dsrc, 0x5a, total))
        die("setup memset");
    cudaEvent_t e0, e1;
    if (cudaEventCreate(&e0) || cudaEventCreate(&e1))
        die("events");
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    for (int rep = -1; rep < reps; rep++) {
        int rc = 0;
        if (rep >= 0 && cudaMemcpyAsync(busy + busy_bytes, busy, busy_bytes, cudaMemcpyDeviceToDevice, s))
            die("busy copy");
        if (cudaEventRecord(e0, s))
            die("record");
        if (!strcmp(door, "drv") || !strcmp(door, "rt")) {
            CUDA_MEMCPY3D_BATCH_OP ops[NCOPY];
            cudaMemcpy3DBatchOp rops[NCOPY];
            memset(ops, 0, sizeof ops);
            memset(rops, 0, sizeof rops);
            for (int i = 0; i < NCOPY; i++) {
                ops[i].src.type = ops[i].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
                ops[i].src.op.ptr.ptr = (CUdeviceptr)(src + (size_t)i * PART);
                ops[i].dst.op.ptr.ptr = (CUdeviceptr)(dst + (size_t)i * PART);
                ops[i].extent.width = PART;
                ops[i].extent.height = ops[i].extent.depth = 1;
                ops[i].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
                rops[i].src.type = rops[i].dst.type = cudaMemcpyOperandTypePointer;
                rops[i].src.op.ptr.ptr = src + (size_t)i * PART;
                rops[i].dst.op.ptr.ptr = dst + (size_t)i * PART;
                rops[i].extent = make_cudaExtent(PART, 1, 1);
                rops[i].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
            }
            rc = !strcmp(door, "drv") ? (int)cuMemcpy3DBatchAsync(NCOPY, ops, 0, (CUstream)s)
                                      : (int)cudaMemcpy3DBatchAsync(NCOPY, rops, 0, s);
        } else {
            CUdeviceptr cd[NCOPY], cs[NCOPY];
            void *rd[NCOPY], *rs[NCOPY];
            size_t sz[NCOPY], idx = 0;
            for (int i = 0; i < NCOPY; i++) {
                rs[i] = src + (size_t)i * PART;
                rd[i] = dst + (size_t)i * PART;
                cs[i] = (CUdeviceptr)rs[i];
                cd[i] = (CUdeviceptr)rd[i];
                sz[i] = PART;
            }
            CUmemcpyAttributes ca;
            cudaMemcpyAttributes ra;
            memset(&ca, 0, sizeof ca);
            memset(&ra, 0, sizeof ra);
            ca.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
            ra.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
            rc = !strcmp(door, "drv1d") ? (int)cuMemcpyBatchAsync(cd, cs, sz, NCOPY, &ca, &idx, 1, (CUstream)s)
                                        : (int)cudaMemcpyBatchAsync((const void **)rd, (const void **)rs, sz, NCOPY,
                                                                    &ra, &idx, 1, s);
        }
        if (rc)
            die("batch");
        if (cudaEventRecord(e1, s) || cudaEventSynchronize(e1))
            die("sync");
        float ms = 0;
        if (cudaEventElapsedTime(&ms, e0, e1))
            die("elapsed");
        if (rep >= 0)
            printf("ROW rep=%d batch=%d bytes=%zu client_ns=%.0f\n", rep, rep + 1, total, (double)ms * 1e6);
        fflush(stdout);
    }
    /* the bytes that arrived: every 4096th */
    int same = 1;
    if (!strcmp(kind, "d2h")) {
        for (size_t i = 0; i < total; i += 4096)
            same &= host[i] == 0x5a;
    } else {
        unsigned char *back = (unsigned char *)malloc(total);
        if (!back || cudaMemcpy(back, ddst, total, cudaMemcpyDeviceToHost))
            die("read back");
        for (size_t i = 0; i < total; i += 4096)
            same &= back[i] == (unsigned char)(i / 4096 * 7 + 1);
        free(back);
    }
    printf("CHECK data %s\nRESULT %s\n", same ? "ok" : "FAIL", same ? "ok" : "FAIL");
    return same ? 0 : 1;
}
