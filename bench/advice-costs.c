/* SPDX-License-Identifier: MIT */
/*
 * The cost table of the advice's savings (cubatchtrace --advice-costs,
 * docs/rules.md § Advice): the bandwidth, in GiB/s, of a batch of OPS copies
 * of BYTES each (cuMemcpy3DBatchAsync, one stream), per direction, with and
 * without PREFER_OVERLAP_WITH_COMPUTE; of the same batch from pageable host
 * memory (srcAccessOrder DURING_API_CALL, the order meant for it) and from
 * pinned memory; and of the same device-to-device bytes as cuMemcpyDtoDAsync
 * calls (an SM copy where the driver makes one).  Each figure is the best of
 * REPS (after two warm-ups) of the wall time from the call to the end of
 * cuStreamSynchronize, on a drained stream: the cost a program pays, host
 * staging included.  Needs a GPU; no shim, no tracing.
 *
 *   advice-costs [--bytes B] [--ops N] [--reps R]   (defaults 4 MiB, 16, 20)
 *
 * Prints the table, KEY=VALUE lines that cubatchtrace reads (`#` lines are
 * comments): gpu=, cuda_driver_api=, then one bandwidth per line.
 * bench/advice-costs.sh adds the driver's version and the date.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        const char *n = NULL;
        cuGetErrorName(r, &n);
        fprintf(stderr, "advice-costs: %s failed: %s (%d)\n", what, n ? n : "?", (int)r);
        exit(1);
    }
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static CUmemcpy3DOperand pointer(CUdeviceptr p)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p;
    return o;
}

struct setup {
    CUstream s;
    size_t bytes, ops;
    int reps;
    CUDA_MEMCPY3D_BATCH_OP *list;
};

/* The batch of ops copies from src to dst (each op `bytes` further on), timed: GiB/s, best of reps. */
static double batch_gibps(struct setup *u, CUdeviceptr src, CUdeviceptr dst, CUmemcpySrcAccessOrder order,
                          unsigned flags)
{
    for (size_t i = 0; i < u->ops; i++) {
        CUDA_MEMCPY3D_BATCH_OP *op = &u->list[i];
        memset(op, 0, sizeof *op);
        op->src = pointer(src + i * u->bytes);
        op->dst = pointer(dst + i * u->bytes);
        op->extent.width = u->bytes;
        op->extent.height = op->extent.depth = 1;
        op->srcAccessOrder = order;
        op->flags = flags;
    }
    double best = 0;
    for (int r = -2; r < u->reps; r++) {
        check(cuStreamSynchronize(u->s), "cuStreamSynchronize");
        double t0 = now_ns();
        check(cuMemcpy3DBatchAsync(u->ops, u->list, 0, u->s), "cuMemcpy3DBatchAsync");
        check(cuStreamSynchronize(u->s), "cuStreamSynchronize");
        double t = now_ns() - t0;
        if (r >= 0 && (best == 0 || t < best))
            best = t;
    }
    return (double)(u->bytes * u->ops) / best * 1e9 / 1073741824.0;
}

/* The same device-to-device bytes as one cuMemcpyDtoDAsync per op: GiB/s, best of reps. */
static double dtod_gibps(struct setup *u, CUdeviceptr src, CUdeviceptr dst)
{
    double best = 0;
    for (int r = -2; r < u->reps; r++) {
        check(cuStreamSynchronize(u->s), "cuStreamSynchronize");
        double t0 = now_ns();
        for (size_t i = 0; i < u->ops; i++)
            check(cuMemcpyDtoDAsync(dst + i * u->bytes, src + i * u->bytes, u->bytes, u->s), "cuMemcpyDtoDAsync");
        check(cuStreamSynchronize(u->s), "cuStreamSynchronize");
        double t = now_ns() - t0;
        if (r >= 0 && (best == 0 || t < best))
            best = t;
    }
    return (double)(u->bytes * u->ops) / best * 1e9 / 1073741824.0;
}

/* The host time of one cuMemcpy3DBatchAsync of n device-to-device copies of
 * `bytes` each (the call alone, its stream drained before it): the median of
 * 101, in ns.  What a batch call costs the calling thread, which
 * unbatched_run's saving is made of. */
static double call_host_ns(struct setup *u, CUdeviceptr src, CUdeviceptr dst, size_t n, size_t bytes)
{
    enum { REPS = 101 };
    double t[REPS];
    for (size_t i = 0; i < n; i++) {
        memset(&u->list[i], 0, sizeof u->list[i]);
        u->list[i].src = pointer(src + i * bytes);
        u->list[i].dst = pointer(dst + i * bytes);
        u->list[i].extent.width = bytes;
        u->list[i].extent.height = u->list[i].extent.depth = 1;
        u->list[i].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    for (int r = -5; r < REPS; r++) {
        check(cuStreamSynchronize(u->s), "cuStreamSynchronize");
        double t0 = now_ns();
        check(cuMemcpy3DBatchAsync(n, u->list, 0, u->s), "cuMemcpy3DBatchAsync");
        double dt = now_ns() - t0;
        if (r >= 0)
            t[r] = dt;
    }
    check(cuStreamSynchronize(u->s), "cuStreamSynchronize");
    for (int i = 1; i < REPS; i++) /* insertion sort: 101 values */
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[REPS / 2];
}

int main(int argc, char **argv)
{
    struct setup u = {.bytes = 4u << 20, .ops = 16, .reps = 20};
    for (int i = 1; i + 1 < argc; i += 2) {
        long long v = atoll(argv[i + 1]);
        if (strcmp(argv[i], "--bytes") == 0 && v > 0)
            u.bytes = (size_t)v;
        else if (strcmp(argv[i], "--ops") == 0 && v > 0 && v <= 4096)
            u.ops = (size_t)v;
        else if (strcmp(argv[i], "--reps") == 0 && v > 0 && v <= 1000)
            u.reps = (int)v;
        else {
            fprintf(stderr, "usage: advice-costs [--bytes B] [--ops N] [--reps R]\n");
            return 2;
        }
    }
    if ((argc - 1) % 2) {
        fprintf(stderr, "usage: advice-costs [--bytes B] [--ops N] [--reps R]\n");
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr a, b;
    void *pinned;
    int version = 0;
    char name[256] = "";
    check(cuInit(0), "cuInit");
    check(cuDriverGetVersion(&version), "cuDriverGetVersion");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDeviceGetName(name, (int)sizeof name, dev), "cuDeviceGetName");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cuStreamCreate(&u.s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    const size_t total = u.bytes * u.ops;
    check(cuMemAlloc(&a, total), "cuMemAlloc");
    check(cuMemAlloc(&b, total), "cuMemAlloc");
    check(cuMemAllocHost(&pinned, total), "cuMemAllocHost");
    unsigned char *pageable = malloc(total);
    u.list = calloc(u.ops, sizeof *u.list);
    if (!pageable || !u.list) {
        fprintf(stderr, "advice-costs: out of memory\n");
        return 1;
    }
    memset(pageable, 1, total); /* touched: its pages exist */
    memset(pinned, 2, total);
    const CUdeviceptr hp = (CUdeviceptr)(uintptr_t)pinned, hq = (CUdeviceptr)(uintptr_t)pageable;
    const unsigned flag = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
    const CUmemcpySrcAccessOrder stream = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    printf("# bench/advice-costs: GiB/s of a batch of %zu copies of %zu bytes (cuMemcpy3DBatchAsync), best of %d,\n"
           "# the wall time from the call to the end of cuStreamSynchronize\n",
           u.ops, u.bytes, u.reps);
    printf("gpu=%s\n", name);
    printf("cuda_driver_api=%d\n", version);
    printf("copies=%zu\ncopy_bytes=%zu\n", u.ops, u.bytes);
    printf("batch_h2d_gibps=%.3f\n", batch_gibps(&u, hp, a, stream, 0));
    printf("batch_h2d_overlap_gibps=%.3f\n", batch_gibps(&u, hp, a, stream, flag));
    printf("batch_d2h_gibps=%.3f\n", batch_gibps(&u, a, hp, stream, 0));
    printf("batch_d2h_overlap_gibps=%.3f\n", batch_gibps(&u, a, hp, stream, flag));
    printf("batch_d2d_gibps=%.3f\n", batch_gibps(&u, a, b, stream, 0));
    printf("batch_d2d_overlap_gibps=%.3f\n", batch_gibps(&u, a, b, stream, flag));
    printf("batch_h2d_pageable_gibps=%.3f\n", batch_gibps(&u, hq, a, CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL, 0));
    printf("sm_d2d_gibps=%.3f\n", dtod_gibps(&u, a, b));
    /* A call's host time grows with its copies: what one batch instead of
     * many saves is the part each call pays once, the line through a call
     * of 1 and of 64 copies of 64 KiB taken at 0 copies. */
    const size_t many = 64, kib64 = 64u << 10;
    if (total >= many * kib64) {
        free(u.list);
        u.list = calloc(many, sizeof *u.list);
        if (!u.list) {
            fprintf(stderr, "advice-costs: out of memory\n");
            return 1;
        }
        double t1 = call_host_ns(&u, a, b, 1, kib64), tn = call_host_ns(&u, a, b, many, kib64);
        double copy = (tn - t1) / (double)(many - 1), call = t1 - copy;
        printf("# the host time of a cuMemcpy3DBatchAsync call of 1 and of %zu copies of %zu bytes (device to device),\n"
               "# median of 101: %.0f and %.0f ns; a call's own part, and each copy's\n",
               many, kib64, t1, tn);
        printf("batch_call_ns=%.0f\nbatch_copy_ns=%.0f\n", call > 1 ? call : 1, copy > 1 ? copy : 1);
    }
    check(cuMemFreeHost(pinned), "cuMemFreeHost");
    check(cuMemFree(a), "cuMemFree");
    check(cuMemFree(b), "cuMemFree");
    check(cuStreamDestroy(u.s), "cuStreamDestroy");
    check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    free(pageable);
    free(u.list);
    return 0;
}
