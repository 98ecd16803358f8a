/* SPDX-License-Identifier: MIT */
/*
 * bench/costs: what the building blocks of the shim's calling-thread path
 * cost on this machine, one by one: the driver queries it may make per
 * batch or per operand, the clock it reads around the driver call, the
 * system call it makes for host memory, an uncontended mutex and
 * compare-and-swap, a 64-bit division.
 *
 *   bench/costs [--libcuda PATH] [--cpu N]
 *
 * Each line: the median over 31 rounds of the mean over 20000 calls, in ns.
 * Loads the driver with dlopen (the real one on a GPU machine, the test
 * double where LD_LIBRARY_PATH names it); says which.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define ROUNDS 31
#define CALLS 20000

static void *need(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "costs: the driver lacks %s\n", name);
        exit(1);
    }
    return p;
}

static inline uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MEASURE(label, stmt)                                                    \
    do {                                                                        \
        double r[ROUNDS];                                                       \
        for (int k = 0; k < ROUNDS; k++) {                                      \
            uint64_t t0 = now();                                                \
            for (int i = 0; i < CALLS; i++) {                                   \
                stmt;                                                           \
                __asm__ volatile("" ::: "memory");                              \
            }                                                                   \
            r[k] = (double)(now() - t0) / CALLS;                                \
        }                                                                       \
        qsort(r, ROUNDS, sizeof *r, cmp);                                       \
        printf("%-62s %8.1f\n", label, r[ROUNDS / 2]);                          \
    } while (0)

int main(int argc, char **argv)
{
    const char *lib = "libcuda.so.1";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--libcuda") && i + 1 < argc)
            lib = argv[++i];
        else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
            cpu_set_t s;
            CPU_ZERO(&s);
            CPU_SET(atoi(argv[++i]), &s);
            sched_setaffinity(0, sizeof s, &s);
        } else {
            fprintf(stderr, "usage: bench/costs [--libcuda PATH] [--cpu N]\n");
            return 2;
        }
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "costs: cannot load %s: %s\n", lib, dlerror());
        return 1;
    }
    CUresult (*init)(unsigned) = need(h, "cuInit");
    CUresult (*dev_get)(CUdevice *, int) = need(h, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) = need(h, "cuDevicePrimaryCtxRetain");
    CUresult (*set_current)(CUcontext) = need(h, "cuCtxSetCurrent");
    CUresult (*stream_create)(CUstream *, unsigned) = need(h, "cuStreamCreate");
    CUresult (*mem_alloc)(CUdeviceptr *, size_t) = need(h, "cuMemAlloc_v2");
    CUresult (*get_id)(CUstream, unsigned long long *) = need(h, "cuStreamGetId");
    CUresult (*get_ctx)(CUstream, CUcontext *) = need(h, "cuStreamGetCtx");
    CUresult (*ctx_dev)(CUdevice *, CUcontext) = need(h, "cuCtxGetDevice_v2");
    CUresult (*capturing)(CUstream, CUstreamCaptureStatus *) = need(h, "cuStreamIsCapturing");
    CUresult (*ptr_attrs)(unsigned, CUpointer_attribute *, void **, CUdeviceptr) =
        need(h, "cuPointerGetAttributes");
    CUresult (*version)(int *) = need(h, "cuDriverGetVersion");
    /* what CUBATCHTRACE_GPU_TIME adds per timed batch (src/gputime.c) */
    CUresult (*ctx_id)(CUcontext, unsigned long long *) = need(h, "cuCtxGetId");
    CUresult (*ev_create)(CUevent *, unsigned) = need(h, "cuEventCreate");
    CUresult (*ev_record)(CUevent, CUstream) = need(h, "cuEventRecord");
    CUresult (*ev_query)(CUevent) = need(h, "cuEventQuery");
    CUresult (*ev_sync)(CUevent) = need(h, "cuEventSynchronize");
    CUresult (*ev_elapsed)(float *, CUevent, CUevent) =
        dlsym(h, "cuEventElapsedTime_v2") ? need(h, "cuEventElapsedTime_v2") : need(h, "cuEventElapsedTime");
    CUresult (*exchange)(CUstreamCaptureMode *) = need(h, "cuThreadExchangeStreamCaptureMode");
    int v = 0;
    Dl_info di;
    version(&v);
    dladdr((void *)init, &di);
    printf("# bench/costs: host cost of the shim's building blocks, ns per call (median of %d rounds of %d)\n",
           ROUNDS, CALLS);
    printf("# driver: %s, cuDriverGetVersion %d, %s\n", dlsym(h, "fakecuda_batch_calls") ? "TEST DOUBLE" : "real",
           v, di.dli_fname ? di.dli_fname : lib);
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr d;
    if (init(0) || dev_get(&dev, 0) || retain(&ctx, dev) || set_current(ctx) || stream_create(&s, 0) ||
        mem_alloc(&d, 1 << 20)) {
        fprintf(stderr, "costs: cannot set up a context, a stream and an allocation\n");
        return 1;
    }
    long page = sysconf(_SC_PAGESIZE);
    char *host = malloc(1 << 20);
    memset(host, 1, 1 << 20);
    unsigned long long id;
    CUcontext c;
    CUdevice dv;
    CUstreamCaptureStatus cs;
    unsigned memtype, managed;
    int ordinal;
    CUdeviceptr start;
    size_t size;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[] = {&memtype, &managed, &ordinal, &start, &size};
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    unsigned char vec;
    struct timespec ts;
    volatile uint64_t sink = 0;

    MEASURE("clock_gettime(CLOCK_MONOTONIC)", clock_gettime(CLOCK_MONOTONIC, &ts));
    MEASURE("rdtsc", sink += __rdtsc());
    MEASURE("pthread_mutex_lock + unlock (uncontended)", (pthread_mutex_lock(&mu), pthread_mutex_unlock(&mu)));
    uint64_t word = 0;
    MEASURE("compare-and-swap (uncontended)", ({
                uint64_t w = word;
                __atomic_compare_exchange_n(&word, &w, w + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
            }));
    volatile uint64_t big = 1ull << 22, off = 12345;
    MEASURE("64-bit division (a modulo by a variable)", sink += off % big);
    MEASURE("mincore (one page)", mincore((void *)((uintptr_t)host & ~(uintptr_t)(page - 1)), 1, &vec));
    MEASURE("cuStreamGetId", get_id(s, &id));
    MEASURE("cuStreamGetCtx", get_ctx(s, &c));
    MEASURE("cuCtxGetDevice_v2", ctx_dev(&dv, ctx));
    MEASURE("cuStreamIsCapturing", capturing(s, &cs));
    MEASURE("cuPointerGetAttributes (5 attributes), device pointer", ptr_attrs(5, attrs, data, d));
    MEASURE("cuPointerGetAttributes (5 attributes), pageable host pointer",
            ptr_attrs(5, attrs, data, (CUdeviceptr)(uintptr_t)(host + 4096)));
    CUevent e0, e1;
    float ms;
    if (ev_create(&e0, CU_EVENT_DEFAULT) || ev_create(&e1, CU_EVENT_DEFAULT) || ev_record(e0, s) ||
        ev_record(e1, s) || ev_sync(e1)) {
        fprintf(stderr, "costs: cannot make two events\n");
        return 1;
    }
    MEASURE("cuCtxGetId", ctx_id(ctx, &id));
    MEASURE("cuThreadExchangeStreamCaptureMode, twice (to RELAXED and back)", ({
                CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
                exchange(&m);
                exchange(&m);
            }));
    MEASURE("cuEventQuery, an event that completed", ev_query(e1));
    MEASURE("cuEventElapsedTime, two events that completed", ev_elapsed(&ms, e0, e1));
    MEASURE("cuEventRecord on an idle stream", ev_record(e0, s));
    (void)sink;
    return 0;
}
