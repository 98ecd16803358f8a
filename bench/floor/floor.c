/* SPDX-License-Identifier: MIT */
/*
 * bench/floor: LTTng's floor for recording a batch, the yardstick the shim
 * is judged against (bench/overhead, bench/README.md).
 *
 * A preload-shaped library with five doors, cuMemcpy3DBatchAsync_v2, the
 * 1D cuMemcpyBatchAsync_v2 (cbtfloor:batch1d: the arrays as raw bytes), the
 * CUDA 13.2 single-op calls cuMemcpy3DWithAttributesAsync and
 * cuMemcpyWithAttributesAsync (recorded as the batch of one they are: a
 * cbtfloor:batch of one op, a cbtfloor:batch1d of one copy) and
 * cuGraphLaunch (cbtfloor:launch, for bench/graph-launch.sh: every launch
 * recorded, with its graph, stream, result and driver_ns).  A batch: it reads
 * the clock, forwards to the real driver, reads the clock again and records
 * one cbtfloor:batch event (num_ops, flags, stream, result, driver_ns and the
 * numOps * sizeof(CUDA_MEMCPY3D_BATCH_OP) bytes of the op list).  Nothing
 * else: no validation, no memory kinds, no stream queries, no chunking.
 *
 * With CUBATCHTRACE_GPU_TIME=N (the shim's own setting, which bench/overhead-run's
 * GPU-time passes set for the whole process) it also records two timing
 * events on the batch's stream around one call in N of the thread: the
 * least GPU time can cost (cuEventRecord twice), never read back.
 *
 * The real function is found once, with dlopen("libcuda.so.1") (or
 * $CUBATCHTRACE_LIBCUDA, the driver the shim is told to use) and dlsym: in
 * a constructor, and again on first call in case another library's
 * constructor calls the door before this one ran.  The provider is compiled
 * into this library.
 */
#define _GNU_SOURCE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "cbtfloor_tp.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>

typedef CUresult (*batch_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);

typedef CUresult (*batch1d_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                               CUstream);

typedef CUresult (*launch_fn)(CUgraphExec, CUstream);
typedef CUresult (*single_fn)(CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*single1d_fn)(CUdeviceptr, CUdeviceptr, size_t, CUmemcpyAttributes *, CUstream);

static batch_fn real_batch;
static batch1d_fn real_batch1d;
static launch_fn real_launch;
static single_fn real_single;     /* NULL: a driver older than CUDA 13.2 */
static single1d_fn real_single1d;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

/* CUBATCHTRACE_GPU_TIME=N: two events around one call in N (0: none). */
static unsigned gpu_every;
static CUresult (*ev_create)(CUevent *, unsigned);
static CUresult (*ev_record)(CUevent, CUstream);
static __thread CUevent ev_start, ev_end;
static __thread unsigned ev_calls;
static __thread int ev_broken;

static void find_real_batch(void)
{
    const char *path = getenv("CUBATCHTRACE_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    batch_fn fn = h ? (batch_fn)dlsym(h, "cuMemcpy3DBatchAsync_v2") : NULL;
    batch1d_fn fn1d = h ? (batch1d_fn)dlsym(h, "cuMemcpyBatchAsync_v2") : NULL;
    if (!fn || !fn1d)
        fprintf(stderr, "cbtfloor: cannot find cuMemcpy3DBatchAsync_v2 and cuMemcpyBatchAsync_v2 in %s\n", path);
    const char *gt = getenv("CUBATCHTRACE_GPU_TIME");
    if (h && gt && atoi(gt) > 0) {
        ev_create = (CUresult(*)(CUevent *, unsigned))dlsym(h, "cuEventCreate");
        ev_record = (CUresult(*)(CUevent, CUstream))dlsym(h, "cuEventRecord");
        if (ev_create && ev_record)
            gpu_every = (unsigned)atoi(gt);
        else
            fprintf(stderr, "cbtfloor: no cuEventCreate or cuEventRecord in %s: no timing events\n", path);
    }
    __atomic_store_n(&real_single, h ? (single_fn)dlsym(h, "cuMemcpy3DWithAttributesAsync") : NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&real_single1d, h ? (single1d_fn)dlsym(h, "cuMemcpyWithAttributesAsync") : NULL, __ATOMIC_RELEASE);
    /* a driver older than CUDA 10 lacks it: the launch door then answers NOT_INITIALIZED */
    __atomic_store_n(&real_launch, h ? (launch_fn)dlsym(h, "cuGraphLaunch") : NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&real_batch1d, fn1d, __ATOMIC_RELEASE);
    __atomic_store_n(&real_batch, fn, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void floor_init(void) { pthread_once(&real_once, find_real_batch); }

static inline uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Timing events for this call (one in gpu_every of the thread), made in the
 * current context on first use; false: this call is not timed. */
static inline bool timed(void)
{
    if (!gpu_every || ev_broken || ev_calls++ % gpu_every)
        return false;
    if (!ev_end && (ev_create(&ev_start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
                    ev_create(&ev_end, CU_EVENT_DEFAULT) != CUDA_SUCCESS)) {
        ev_broken = 1;
        ev_end = NULL;
        return false;
    }
    return true;
}

/* The driver's function behind a door (`real`, found once: again here in
 * case another library's constructor calls the door before this one ran);
 * NULL where the driver lacks it. */
#define REAL_FN(real)                                                                                                  \
    ({                                                                                                                 \
        __typeof__(real) f_ = __atomic_load_n(&(real), __ATOMIC_ACQUIRE);                                              \
        if (!f_) {                                                                                                     \
            pthread_once(&real_once, find_real_batch);                                                                 \
            f_ = __atomic_load_n(&(real), __ATOMIC_ACQUIRE);                                                           \
        }                                                                                                              \
        f_;                                                                                                            \
    })

/* A copy's driver call between two clock reads (its driver_ns), with the
 * two timing events around it where this call is timed (CUBATCHTRACE_GPU_TIME). */
#define TIMED_CALL(stream, call, driver_ns)                                                                            \
    do {                                                                                                               \
        bool gt_ = timed();                                                                                            \
        if (gt_)                                                                                                       \
            (void)ev_record(ev_start, (stream));                                                                       \
        uint64_t t0_ = monotonic_ns();                                                                                 \
        call;                                                                                                          \
        (driver_ns) = monotonic_ns() - t0_;                                                                            \
        if (gt_)                                                                                                       \
            (void)ev_record(ev_end, (stream));                                                                         \
    } while (0)

/* The op list as recorded: its bytes, or none where they cannot be read or
 * would not fit the sequence's 32-bit length. */
static inline uint32_t ops_bytes(size_t num_ops, const CUDA_MEMCPY3D_BATCH_OP *ops)
{
    if (!ops || num_ops > UINT32_MAX / sizeof *ops)
        return 0;
    return (uint32_t)(num_ops * sizeof *ops);
}

__attribute__((visibility("default"))) CUresult cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                                                       unsigned long long flags, CUstream hStream)
{
    batch_fn fn = REAL_FN(real_batch);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r;
    uint64_t driver_ns;
    TIMED_CALL(hStream, r = fn(numOps, opList, flags, hStream), driver_ns);
    lttng_ust_tracepoint(cbtfloor, batch, numOps, flags, (uint64_t)(uintptr_t)hStream, (uint32_t)r, driver_ns,
                         (const uint8_t *)opList, ops_bytes(numOps, opList));
    return r;
}

/* Bytes of n elements of `size` as recorded, or none beyond the sequence's 32-bit length. */
static inline uint32_t array_bytes(const void *p, size_t n, size_t size)
{
    if (!p || n > UINT32_MAX / size)
        return 0;
    return (uint32_t)(n * size);
}

__attribute__((visibility("default"))) CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                                                     size_t *sizes, size_t count,
                                                                     CUmemcpyAttributes *attrs, size_t *attrsIdxs,
                                                                     size_t numAttrs, CUstream hStream)
{
    batch1d_fn fn = REAL_FN(real_batch1d);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r;
    uint64_t driver_ns;
    TIMED_CALL(hStream, r = fn(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream), driver_ns);
    struct cbtfloor_1d a = {
        .count = count, .stream = (uint64_t)(uintptr_t)hStream, .driver_ns = driver_ns, .result = (uint32_t)r,
        .array_bytes = dsts && srcs && sizes ? array_bytes(dsts, count, 8) : 0,
        .attrs_bytes = array_bytes(attrs, numAttrs, sizeof *attrs),
        .idxs_bytes = array_bytes(attrsIdxs, numAttrs, sizeof *attrsIdxs),
        .dsts = (const uint8_t *)dsts, .srcs = (const uint8_t *)srcs, .sizes = (const uint8_t *)sizes,
        .attrs = (const uint8_t *)attrs, .idxs = (const uint8_t *)attrsIdxs,
    };
    lttng_ust_tracepoint(cbtfloor, batch1d, &a);
    return r;
}

/* The CUDA 13.2 single-op calls, as the batch of one each is (NOT_FOUND
 * where the driver lacks them). */
__attribute__((visibility("default"))) CUresult cuMemcpy3DWithAttributesAsync(CUDA_MEMCPY3D_BATCH_OP *op,
                                                                             unsigned long long flags,
                                                                             CUstream hStream)
{
    single_fn fn = REAL_FN(real_single);
    if (!fn)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r;
    uint64_t driver_ns;
    TIMED_CALL(hStream, r = fn(op, flags, hStream), driver_ns);
    lttng_ust_tracepoint(cbtfloor, batch, 1, flags, (uint64_t)(uintptr_t)hStream, (uint32_t)r, driver_ns,
                         (const uint8_t *)op, ops_bytes(1, op));
    return r;
}

__attribute__((visibility("default"))) CUresult cuMemcpyWithAttributesAsync(CUdeviceptr dst, CUdeviceptr src,
                                                                           size_t size, CUmemcpyAttributes *attr,
                                                                           CUstream hStream)
{
    single1d_fn fn = REAL_FN(real_single1d);
    if (!fn)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r;
    uint64_t driver_ns;
    TIMED_CALL(hStream, r = fn(dst, src, size, attr, hStream), driver_ns);
    const size_t idx0 = 0;
    struct cbtfloor_1d a = {
        .count = 1, .stream = (uint64_t)(uintptr_t)hStream, .driver_ns = driver_ns, .result = (uint32_t)r,
        .array_bytes = 8, .attrs_bytes = array_bytes(attr, 1, sizeof *attr),
        .idxs_bytes = attr ? (uint32_t)sizeof idx0 : 0,
        .dsts = (const uint8_t *)&dst, .srcs = (const uint8_t *)&src, .sizes = (const uint8_t *)&size,
        .attrs = (const uint8_t *)attr, .idxs = (const uint8_t *)&idx0,
    };
    lttng_ust_tracepoint(cbtfloor, batch1d, &a);
    return r;
}

__attribute__((visibility("default"))) CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    launch_fn fn = REAL_FN(real_launch);
    if (!fn)
        return CUDA_ERROR_NOT_INITIALIZED;
    uint64_t t0 = monotonic_ns();
    CUresult r = fn(hGraphExec, hStream);
    uint64_t t1 = monotonic_ns();
    lttng_ust_tracepoint(cbtfloor, launch, (uint64_t)(uintptr_t)hGraphExec, (uint64_t)(uintptr_t)hStream, (uint32_t)r,
                         t1 - t0);
    return r;
}
