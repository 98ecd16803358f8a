/* SPDX-License-Identifier: MIT */
/*
 * The two ways of timing batches on the GPU, measured side by side on one
 * program (docs/PERFORMANCE.md, "GPU time"): no shim, no tracing.
 *
 *   gpu-time-cupti [N]
 *
 * 1. Cost on the calling thread of a small batch (1 op of 4 KiB, device to
 *    device, cuMemcpy3DBatchAsync_v2): bare; with two timing events recorded
 *    around it on its stream (what the shim does); with CUPTI's memcpy
 *    activity records enabled.  Median and mean of N calls, ns.
 * 2. What CUPTI records for a batch: memcpy records per op of a batch of 4
 *    ops, and for a batch of 4 x 64 MiB device to device its records' span
 *    (first start to last end) against the program's own event timing.
 *    Prints "cupti_records", "large ... client_ns events_ns cupti_span_ns", and
 *    as a control the records of plain cuMemcpyAsync copies ("control").
 */
#include <cuda.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PART (64u << 20)

static void check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "gpu-time-cupti: %s failed (%d)\n", what, (int)r);
        exit(1);
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t nrec, rec_min_start = UINT64_MAX, rec_max_end;

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max)
{
    *size = 16u << 20;
    *buffer = aligned_alloc(8, *size);
    *max = 0;
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind != CUPTI_ACTIVITY_KIND_MEMCPY)
            continue;
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
        nrec++;
        if (m->start < rec_min_start)
            rec_min_start = m->start;
        if (m->end > rec_max_end)
            rec_max_end = m->end;
    }
    free(buffer);
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static CUDA_MEMCPY3D_BATCH_OP op(CUdeviceptr src, CUdeviceptr dst, size_t bytes)
{
    CUDA_MEMCPY3D_BATCH_OP o;
    memset(&o, 0, sizeof o);
    o.src.type = o.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.src.op.ptr.ptr = src;
    o.dst.op.ptr.ptr = dst;
    o.extent.width = bytes;
    o.extent.height = o.extent.depth = 1;
    o.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    return o;
}

/* N small batches; mode 0 bare, 1 with two events around each; median and mean per call */
static void small(CUstream s, CUdeviceptr a, size_t n, int mode, CUevent *ev, uint64_t *med, uint64_t *mean)
{
    uint64_t *t = calloc(n, sizeof *t), sum = 0;
    for (size_t i = 0; i < n; i++) {
        CUDA_MEMCPY3D_BATCH_OP o = op(a, a + 8192, 4096);
        uint64_t t0 = now_ns();
        if (mode == 1)
            check(cuEventRecord(ev[2 * (i % 64)], s), "cuEventRecord");
        check(cuMemcpy3DBatchAsync(1, &o, 0, s), "batch");
        if (mode == 1)
            check(cuEventRecord(ev[2 * (i % 64) + 1], s), "cuEventRecord");
        t[i] = now_ns() - t0;
        sum += t[i];
        if (i % 64 == 63)
            check(cuStreamSynchronize(s), "cuStreamSynchronize");
    }
    check(cuStreamSynchronize(s), "cuStreamSynchronize");
    qsort(t, n, sizeof *t, cmp);
    *med = t[n / 2];
    *mean = sum / n;
    free(t);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr a, b;
    CUevent ev[128], e0, e1;
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    check(cuMemAlloc(&a, 4 * (size_t)PART), "cuMemAlloc");
    check(cuMemAlloc(&b, 4 * (size_t)PART), "cuMemAlloc");
    for (int i = 0; i < 128; i++)
        check(cuEventCreate(&ev[i], 0), "cuEventCreate");
    check(cuEventCreate(&e0, 0), "cuEventCreate");
    check(cuEventCreate(&e1, 0), "cuEventCreate");
    uint64_t med[3], mean[3];
    small(s, a, n / 10, 0, ev, &med[0], &mean[0]); /* warm-up */
    small(s, a, n, 0, ev, &med[0], &mean[0]);
    small(s, a, n, 1, ev, &med[1], &mean[1]);
    if (cuptiActivityRegisterCallbacks(buf_request, buf_complete) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS) {
        printf("cupti unavailable (another profiler holds it?)\n");
        return 0;
    }
    small(s, a, n / 10, 0, ev, &med[2], &mean[2]); /* warm-up */
    cuptiActivityFlushAll(1);
    nrec = 0;
    small(s, a, n, 0, ev, &med[2], &mean[2]);
    cuptiActivityFlushAll(1);
    uint64_t small_records = nrec;
    printf("cost_per_batch_ns bare_median=%llu bare_mean=%llu events_median=%llu events_mean=%llu "
           "cupti_median=%llu cupti_mean=%llu\n",
           (unsigned long long)med[0], (unsigned long long)mean[0], (unsigned long long)med[1],
           (unsigned long long)mean[1], (unsigned long long)med[2], (unsigned long long)mean[2]);
    printf("cupti_records small_batches=%zu records=%llu\n", n, (unsigned long long)small_records);
    for (int rep = 0; rep < 5; rep++) {
        CUDA_MEMCPY3D_BATCH_OP o[4];
        for (int i = 0; i < 4; i++)
            o[i] = op(a + (size_t)i * PART, b + (size_t)i * PART, PART);
        nrec = 0;
        rec_min_start = UINT64_MAX;
        rec_max_end = 0;
        check(cuEventRecord(e0, s), "cuEventRecord");
        check(cuEventRecord(ev[0], s), "cuEventRecord");
        check(cuMemcpy3DBatchAsync(4, o, 0, s), "batch");
        check(cuEventRecord(ev[1], s), "cuEventRecord");
        check(cuEventRecord(e1, s), "cuEventRecord");
        check(cuEventSynchronize(e1), "cuEventSynchronize");
        cuptiActivityFlushAll(1);
        float ms_client, ms_inner;
        check(cuEventElapsedTime(&ms_client, e0, e1), "cuEventElapsedTime");
        check(cuEventElapsedTime(&ms_inner, ev[0], ev[1]), "cuEventElapsedTime");
        printf("large rep=%d ops=4 bytes=%llu client_ns=%.0f events_ns=%.0f cupti_records=%llu cupti_span_ns=%llu\n",
               rep, 4ull * PART, (double)ms_client * 1e6, (double)ms_inner * 1e6, (unsigned long long)nrec,
               (unsigned long long)(nrec ? rec_max_end - rec_min_start : 0));
    }
    /* control: CUPTI's records of plain copies, which it does record */
    nrec = 0;
    for (int i = 0; i < 4; i++)
        check(cuMemcpyAsync(b + (size_t)i * PART, a + (size_t)i * PART, PART, s), "cuMemcpyAsync");
    check(cuStreamSynchronize(s), "cuStreamSynchronize");
    cuptiActivityFlushAll(1);
    printf("control cuMemcpyAsync copies=4 cupti_records=%llu\n", (unsigned long long)nrec);
    return 0;
}
