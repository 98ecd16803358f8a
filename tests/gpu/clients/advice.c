/* SPDX-License-Identifier: MIT */
/*
 * GPU test client for the advice (docs/rules.md § Advice): makes the pattern
 * a rule advises against, and measures what doing what the advice says buys.
 *
 *   advice PATTERN trace     the pattern, under the shim and a session: the
 *                            tool's advice on this trace gives the estimate
 *   advice PATTERN measure   without the shim: the pattern and the advised
 *                            change, interleaved, each timed REPS times; the
 *                            measured saving, in the quantity the rule's
 *                            estimate is of
 *
 * PATTERN and what is measured (docs/rules.md says how each saving is
 * estimated; the measurement is the same quantity):
 *
 *   unbatched  trace: 3 runs of 128 batches of one 64 KiB device-to-device
 *              copy each, back to back on one stream (a synchronisation and
 *              2 ms between runs).  measure: the host time of the 128 calls
 *              against one batch of the same 128 copies (median of REPS);
 *              PERCALL: a one-copy call alone, and the batch's time per copy.
 *   tiny       trace: 5 batches of 4096 copies of 256 bytes, device to device,
 *              contiguous (after a warm-up batch of 4096 copies of 4 KiB).  measure: the host time of that batch call against
 *              one batch of the one 1 MiB copy they make (median of REPS).
 *   pageable   trace: one batch of 8 copies of 8 MiB from pageable (malloc'd,
 *              touched) host memory to the device, srcAccessOrder
 *              DURING_API_CALL.  measure: the wall time from the call to the
 *              end of cuStreamSynchronize, on a drained stream (the cost
 *              table's quantity, bench/advice-costs.c), from that memory
 *              against from pinned memory (best of REPS).
 *   engine     trace: one batch of 8 copies of 8 MiB, device to device on one
 *              GPU, flags PREFER_OVERLAP_WITH_COMPUTE.  measure: wall time as
 *              for pageable of that batch, of the same batch without the flag,
 *              and of the same copies as cuMemcpyDtoDAsync calls (an SM copy
 *              where the driver makes one; cuGetProcAddress, so that the client
 *              links against the test double, which lacks the call).
 *
 * Prints PID, DEVICE_NAME, DRIVER_VERSION, then for trace TRACED lines and
 * for measure one line per comparison:
 *   MEASURED rule=R as_is_ns=T advised_ns=T saving_ns=T reps=N stat=median|best time=host|wall
 * (or MEASURED rule=R unavailable=WHY), then RESULT ok.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        const char *n = NULL;
        cuGetErrorName(r, &n);
        printf("RESULT fail %s: %s (%d)\n", what, n ? n : "?", (int)r);
        fflush(stdout);
        exit(1);
    }
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static CUstream S;

/* ops copies of `bytes` each from src to dst, op i at i * bytes */
static CUDA_MEMCPY3D_BATCH_OP *ops_of(size_t n, size_t bytes, CUdeviceptr src, CUdeviceptr dst,
                                      CUmemcpySrcAccessOrder order, unsigned flags)
{
    CUDA_MEMCPY3D_BATCH_OP *l = calloc(n, sizeof *l);
    if (!l) {
        printf("RESULT fail out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        l[i].src.type = l[i].dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        l[i].src.op.ptr.ptr = src + i * bytes;
        l[i].dst.op.ptr.ptr = dst + i * bytes;
        l[i].extent.width = bytes;
        l[i].extent.height = l[i].extent.depth = 1;
        l[i].srcAccessOrder = order;
        l[i].flags = flags;
    }
    return l;
}

static void batch(size_t n, CUDA_MEMCPY3D_BATCH_OP *l) { check(cuMemcpy3DBatchAsync(n, l, 0, S), "cuMemcpy3DBatchAsync"); }

static void drain(void) { check(cuStreamSynchronize(S), "cuStreamSynchronize"); }

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double best(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[0];
}

static void measured(const char *rule, double as_is, double advised, int reps, const char *stat, const char *time)
{
    printf("MEASURED rule=%s as_is_ns=%.0f advised_ns=%.0f saving_ns=%.0f reps=%d stat=%s time=%s\n", rule, as_is,
           advised, as_is - advised, reps, stat, time);
}

/* ---------------------------------------------------------------- unbatched_run */

#define RUN_CALLS 128
#define RUN_BYTES (64u << 10)

static void unbatched(int trace, int reps, CUdeviceptr a, CUdeviceptr b)
{
    CUDA_MEMCPY3D_BATCH_OP *l = ops_of(RUN_CALLS, RUN_BYTES, a, b, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    /* warm-up: one batch of them all (more copies than a run's batch may have) */
    batch(RUN_CALLS, l);
    drain();
    usleep(2000);
    if (trace) {
        for (int r = 0; r < 3; r++) {
            for (int i = 0; i < RUN_CALLS; i++)
                batch(1, &l[i]);
            drain();
            usleep(2000);
        }
        printf("TRACED rule=unbatched_run runs=3 calls=%d copy_bytes=%u\n", RUN_CALLS, RUN_BYTES);
    } else {
        double *x = calloc((size_t)reps, sizeof *x), *y = calloc((size_t)reps, sizeof *y);
        double *z = calloc((size_t)reps, sizeof *z);
        for (int r = -2; r < reps; r++) {
            drain();
            double t0 = now_ns();
            for (int i = 0; i < RUN_CALLS; i++)
                batch(1, &l[i]);
            double t1 = now_ns();
            drain();
            double t2 = now_ns();
            batch(RUN_CALLS, l);
            double t3 = now_ns();
            drain();
            double t4 = now_ns();
            batch(1, l); /* one call on a drained stream: what the driver's cost per call is made of */
            double t5 = now_ns();
            drain();
            if (r >= 0) {
                x[r] = t1 - t0;
                y[r] = t3 - t2;
                z[r] = t5 - t4;
            }
        }
        const double one = median(z, reps), all = median(y, reps);
        measured("unbatched_run", median(x, reps), all, reps, "median", "host");
        /* the calls' cost, split: a one-copy call, and a copy within the batch of them all */
        printf("PERCALL one_call_ns=%.0f per_copy_in_batch_ns=%.0f\n", one, all / RUN_CALLS);
        free(x);
        free(y);
        free(z);
    }
    free(l);
}

/* ---------------------------------------------------------------- tiny_copies */

#define TINY_OPS 4096
#define TINY_BYTES 256

static void tiny(int trace, int reps, CUdeviceptr a, CUdeviceptr b)
{
    CUDA_MEMCPY3D_BATCH_OP *l = ops_of(TINY_OPS, TINY_BYTES, a, b, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    CUDA_MEMCPY3D_BATCH_OP *one = ops_of(1, (size_t)TINY_OPS * TINY_BYTES, a, b, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    /* warm-up, below the rule's thresholds: as many copies of 4 KiB (not tiny: the
     * driver's path for a list this long taken once), 63 of the tiny copies, the packed copy */
    CUDA_MEMCPY3D_BATCH_OP *warm = ops_of(TINY_OPS, 4096, a, b, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    batch(TINY_OPS, warm);
    drain();
    free(warm);
    batch(63, l);
    batch(1, one);
    drain();
    if (trace) {
        for (int r = 0; r < 5; r++) {
            batch(TINY_OPS, l);
            drain();
        }
        printf("TRACED rule=tiny_copies batches=5 copies=%d copy_bytes=%d\n", TINY_OPS, TINY_BYTES);
    } else {
        double *x = calloc((size_t)reps, sizeof *x), *y = calloc((size_t)reps, sizeof *y);
        for (int r = -2; r < reps; r++) {
            drain();
            double t0 = now_ns();
            batch(TINY_OPS, l);
            double t1 = now_ns();
            drain();
            double t2 = now_ns();
            batch(1, one);
            double t3 = now_ns();
            drain();
            if (r >= 0) {
                x[r] = t1 - t0;
                y[r] = t3 - t2;
            }
        }
        measured("tiny_copies", median(x, reps), median(y, reps), reps, "median", "host");
        free(x);
        free(y);
    }
    free(l);
    free(one);
}

/* ---------------------------------------------------------------- wall-time patterns */

#define BIG_OPS 8
#define BIG_BYTES (8u << 20)

/* wall time from the call to the end of cuStreamSynchronize, on a drained stream */
static double wall_batch(CUDA_MEMCPY3D_BATCH_OP *l)
{
    drain();
    double t0 = now_ns();
    batch(BIG_OPS, l);
    drain();
    return now_ns() - t0;
}

static void pageable(int trace, int reps, CUdeviceptr a)
{
    const size_t total = (size_t)BIG_OPS * BIG_BYTES;
    unsigned char *pg = malloc(total);
    void *pinned;
    if (!pg) {
        printf("RESULT fail out of memory\n");
        exit(1);
    }
    memset(pg, 1, total); /* touched: its pages exist */
    check(cuMemAllocHost(&pinned, total), "cuMemAllocHost");
    memset(pinned, 2, total);
    CUDA_MEMCPY3D_BATCH_OP *lp = ops_of(BIG_OPS, BIG_BYTES, (CUdeviceptr)(uintptr_t)pg, a,
                                        CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL, 0);
    CUDA_MEMCPY3D_BATCH_OP *lq = ops_of(BIG_OPS, BIG_BYTES, (CUdeviceptr)(uintptr_t)pinned, a,
                                        CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    if (trace) {
        wall_batch(lp);
        printf("TRACED rule=pageable_source batches=1 copies=%d copy_bytes=%u\n", BIG_OPS, BIG_BYTES);
    } else {
        double *x = calloc((size_t)reps, sizeof *x), *y = calloc((size_t)reps, sizeof *y);
        for (int r = -2; r < reps; r++) {
            double p = wall_batch(lp), q = wall_batch(lq);
            if (r >= 0) {
                x[r] = p;
                y[r] = q;
            }
        }
        measured("pageable_source", best(x, reps), best(y, reps), reps, "best", "wall");
        free(x);
        free(y);
    }
    free(lp);
    free(lq);
    check(cuMemFreeHost(pinned), "cuMemFreeHost");
    free(pg);
}

typedef CUresult (*dtod_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);

static void engine(int trace, int reps, CUdeviceptr a, CUdeviceptr b)
{
    CUDA_MEMCPY3D_BATCH_OP *lf = ops_of(BIG_OPS, BIG_BYTES, a, b, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
                                        CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
    CUDA_MEMCPY3D_BATCH_OP *l0 = ops_of(BIG_OPS, BIG_BYTES, a, b, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0);
    if (trace) {
        wall_batch(lf);
        printf("TRACED rule=overlap_flag_large_copy,same_device_engine_copy batches=1 copies=%d copy_bytes=%u\n",
               BIG_OPS, BIG_BYTES);
        free(lf);
        free(l0);
        return;
    }
    void *fp = NULL;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rc = cuGetProcAddress("cuMemcpyDtoDAsync", &fp, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q);
    dtod_fn dtod = rc == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS ? (dtod_fn)fp : NULL;
    double *x = calloc((size_t)reps, sizeof *x), *y = calloc((size_t)reps, sizeof *y), *z = calloc((size_t)reps, sizeof *z);
    for (int r = -2; r < reps; r++) {
        double f = wall_batch(lf), p = wall_batch(l0), s = 0;
        if (dtod) {
            drain();
            double t0 = now_ns();
            for (int i = 0; i < BIG_OPS; i++)
                check(dtod(b + (CUdeviceptr)i * BIG_BYTES, a + (CUdeviceptr)i * BIG_BYTES, BIG_BYTES, S),
                      "cuMemcpyDtoDAsync");
            drain();
            s = now_ns() - t0;
        }
        if (r >= 0) {
            x[r] = f;
            y[r] = p;
            z[r] = s;
        }
    }
    double f = best(x, reps), p = best(y, reps);
    measured("overlap_flag_large_copy", f, p, reps, "best", "wall");
    if (dtod)
        measured("same_device_engine_copy", p, best(z, reps), reps, "best", "wall");
    else
        printf("MEASURED rule=same_device_engine_copy unavailable=cuGetProcAddress(cuMemcpyDtoDAsync)_rc_%d_status_%d\n",
               (int)rc, (int)q);
    free(x);
    free(y);
    free(z);
    free(lf);
    free(l0);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "trace") && strcmp(argv[2], "measure"))) {
        fprintf(stderr, "usage: advice unbatched|tiny|pageable|engine trace|measure [REPS]\n");
        return 2;
    }
    const char *what = argv[1];
    const int trace = strcmp(argv[2], "trace") == 0;
    int reps = argc > 3 ? atoi(argv[3]) : 15;
    if (reps < 1 || reps > 1000)
        reps = 15;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("PID %d\n", (int)getpid());
    CUdevice dev;
    CUcontext ctx;
    int version = 0;
    char name[256] = "";
    check(cuInit(0), "cuInit");
    check(cuDriverGetVersion(&version), "cuDriverGetVersion");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDeviceGetName(name, (int)sizeof name, dev), "cuDeviceGetName");
    printf("DEVICE_NAME %s\nDRIVER_VERSION %d\n", name, version);
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cuStreamCreate(&S, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    const size_t total = (size_t)BIG_OPS * BIG_BYTES;
    CUdeviceptr a, b;
    check(cuMemAlloc(&a, total), "cuMemAlloc");
    check(cuMemAlloc(&b, total), "cuMemAlloc");
    check(cuMemsetD8(a, 3, total), "cuMemsetD8");
    if (strcmp(what, "unbatched") == 0)
        unbatched(trace, reps, a, b);
    else if (strcmp(what, "tiny") == 0)
        tiny(trace, reps, a, b);
    else if (strcmp(what, "pageable") == 0)
        pageable(trace, reps, a);
    else if (strcmp(what, "engine") == 0)
        engine(trace, reps, a, b);
    else {
        fprintf(stderr, "advice: unknown pattern %s\n", what);
        return 2;
    }
    drain();
    check(cuMemFree(a), "cuMemFree");
    check(cuMemFree(b), "cuMemFree");
    check(cuStreamDestroy(S), "cuStreamDestroy");
    check(cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease");
    printf("RESULT ok\n");
    return 0;
}
