/* SPDX-License-Identifier: MIT */
/*
 * One rank of a job, for tests/tool/hosts.sh and tests/tool/job-kill.sh:
 * N batches of K device-to-device ops of 4 KiB each, over the test double of
 * the driver, with an optional pause between batches (a rank that runs while
 * another is killed).
 *
 *   client_rank N K [PAUSE_MS]
 *
 * With a pause, prints "batch I" after each batch (I from 1, flushed), so a
 * test knows how far it came.  Prints "rank: N batches, N*K ops" and exits 0 when every batch succeeded,
 * 2 when a call failed.
 *
 * With CLIENT_RANK_GO=FILE, it waits (up to 120 s) until FILE exists before
 * its first batch: a test can attach a live reader once the ranks are set up
 * and before any of them has made a batch.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(x)                                                               \
    do {                                                                    \
        CUresult r_ = (x);                                                  \
        if (r_ != CUDA_SUCCESS) {                                           \
            fprintf(stderr, "client_rank: %s failed (%d)\n", #x, (int)r_);  \
            exit(2);                                                        \
        }                                                                   \
    } while (0)

#define OPB 4096u

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: client_rank N K [PAUSE_MS]\n");
        return 2;
    }
    long n = atol(argv[1]), k = atol(argv[2]), pause_ms = argc > 3 ? atol(argv[3]) : 0;
    if (n < 0 || k < 1 || k > 4096) {
        fprintf(stderr, "client_rank: N >= 0, 1 <= K <= 4096\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr src, dst;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, 0));
    CK(cuMemAlloc(&src, (size_t)k * OPB));
    CK(cuMemAlloc(&dst, (size_t)k * OPB));
    CUDA_MEMCPY3D_BATCH_OP *ops = calloc((size_t)k, sizeof(*ops));
    if (!ops)
        return 2;
    for (long i = 0; i < k; i++) {
        CUDA_MEMCPY3D_BATCH_OP *o = &ops[i];
        o->src.type = o->dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        o->src.op.ptr.ptr = src + (CUdeviceptr)i * OPB;
        o->dst.op.ptr.ptr = dst + (CUdeviceptr)i * OPB;
        o->extent.width = OPB;
        o->extent.height = o->extent.depth = 1;
        o->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    const char *go = getenv("CLIENT_RANK_GO");
    if (go && *go) {
        int waited = 0;
        while (access(go, F_OK) != 0) {
            if (++waited > 6000) {
                fprintf(stderr, "client_rank: %s did not appear within 120 s\n", go);
                return 2;
            }
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    for (long b = 0; b < n; b++) {
        CK(cuMemcpy3DBatchAsync(k, ops, 0, s));
        CK(cuStreamSynchronize(s));
        if (pause_ms > 0) {
            printf("batch %ld\n", b + 1);
            fflush(stdout);
            struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    printf("rank: %ld batches, %ld ops\n", n, n * k);
    free(ops);
    return 0;
}
