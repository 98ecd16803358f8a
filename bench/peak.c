/* SPDX-License-Identifier: MIT */
/*
 * The GPU's copy bandwidth per direction, for comparison with the bandwidth
 * the summary reports (docs/PERFORMANCE.md): 256 MiB copies with
 * cuMemcpyAsync on one stream, device to device, pinned host to device and
 * device to pinned host, each timed with CUDA events; the best and the median
 * of REPS.  Needs a GPU; no shim, no tracing.
 *
 *   peak [REPS]   prints "peak DIR bytes=N best_ns=T median_ns=T best_gbps=X median_gbps=Y"
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define BYTES (256u << 20)

static void check(CUresult r, const char *what)
{
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "peak: %s failed (%d)\n", what, (int)r);
        exit(1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    if (reps < 1 || reps > 1000)
        reps = 20;
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr a, b;
    void *host;
    CUevent e0, e1;
    check(cuInit(0), "cuInit");
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    check(cuMemAlloc(&a, BYTES), "cuMemAlloc");
    check(cuMemAlloc(&b, BYTES), "cuMemAlloc");
    check(cuMemAllocHost(&host, BYTES), "cuMemAllocHost");
    check(cuEventCreate(&e0, 0), "cuEventCreate");
    check(cuEventCreate(&e1, 0), "cuEventCreate");
    static const char *const dirs[] = {"DtoD", "HtoD", "DtoH"};
    double *ns = calloc((size_t)reps, sizeof *ns);
    if (!ns)
        return 1;
    for (int d = 0; d < 3; d++) {
        for (int r = -2; r < reps; r++) { /* two warm-ups */
            check(cuEventRecord(e0, s), "cuEventRecord");
            if (d == 0)
                check(cuMemcpyAsync(b, a, BYTES, s), "cuMemcpyAsync");
            else if (d == 1)
                check(cuMemcpyHtoDAsync(a, host, BYTES, s), "cuMemcpyHtoDAsync");
            else
                check(cuMemcpyDtoHAsync(host, a, BYTES, s), "cuMemcpyDtoHAsync");
            check(cuEventRecord(e1, s), "cuEventRecord");
            check(cuEventSynchronize(e1), "cuEventSynchronize");
            float ms;
            check(cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
            if (r >= 0)
                ns[r] = (double)ms * 1e6;
        }
        qsort(ns, (size_t)reps, sizeof *ns, cmp);
        double best = ns[0], med = ns[reps / 2];
        printf("peak %s bytes=%u best_ns=%.0f median_ns=%.0f best_gbps=%.1f median_gbps=%.1f\n", dirs[d], BYTES, best,
               med, BYTES / best, BYTES / med);
    }
    free(ns);
    return 0;
}
