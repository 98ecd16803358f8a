/* SPDX-License-Identifier: MIT */
/*
 * bench/drvclock: the driver's own time in each batch call, for
 * bench/overhead --libcuda.
 *
 * A library that stands for libcuda.so.1: it defines the two batch functions
 * bench/overhead calls (cuMemcpy3DBatchAsync_v2, cuMemcpyBatchAsync_v2), and
 * depends on libcuda.so.1, so that every other function looked up through
 * its handle (dlopen, then dlsym) is the driver's own.  Each batch call is
 * timed around the real driver's (CLOCK_MONOTONIC), and
 * cbt_drvclock_last_ns() gives the calling thread's last such time.
 *
 * Before the clock starts, the op list (or the 1D call's arrays) is read
 * through once, as the driver itself reads it first: the first read of a
 * list that has gone cold since it was written falls outside the driver's
 * time for every contender alike.  The shim's own read before the call (its
 * lookup) then meets the same cost that the bare call and the floor pay
 * here, and not nothing while the driver takes the list warm.
 *
 * With it as the driver of the bare call, the shim (CUBATCHTRACE_LIBCUDA) and
 * the floor, bench/overhead subtracts the driver's time from each call and
 * shows what each contender adds outside the driver: the driver's scatter,
 * which is most of a large batch's, leaves that figure.  What a contender
 * costs the driver itself (the caches it leaves) is not in it; the judged
 * columns, which time the whole call, still hold that.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cuda.h>

#define DRVCLOCK_EXPORT __attribute__((visibility("default")))

typedef CUresult (*batch3d_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*batch1d_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                               CUstream);

static batch3d_fn real3d;
static batch1d_fn real1d;
static __thread uint64_t last_ns;

/* Every 64-bit word of [p, p + bytes), summed so that it is read. */
static void read_through(const void *p, size_t bytes)
{
    const uint64_t *w = p;
    uint64_t sum = 0;
    if (!p)
        return;
    for (size_t i = 0; i < bytes / 8; i++)
        sum += w[i];
    __asm__ volatile("" : : "r"(sum)); /* the sum is used: the reads stay */
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Named here so that the link keeps libcuda.so.1 as a dependency (the
 * other functions are only ever looked up through this library's handle). */
void *const drvclock_needs_libcuda = (void *)cuInit;

/* The driver's definitions: libcuda.so.1 is this library's dependency, so
 * it is loaded already and dlopen only finds it. */
__attribute__((constructor)) static void drvclock_init(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h)
        return;
    real3d = (batch3d_fn)dlsym(h, "cuMemcpy3DBatchAsync_v2");
    real1d = (batch1d_fn)dlsym(h, "cuMemcpyBatchAsync_v2");
}

DRVCLOCK_EXPORT uint64_t cbt_drvclock_last_ns(void) { return last_ns; }

DRVCLOCK_EXPORT CUresult cuMemcpy3DBatchAsync_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
                                                 CUstream stream)
{
    if (!real3d)
        return CUDA_ERROR_NOT_FOUND;
    if (n < (size_t)1 << 24)
        read_through(ops, n * sizeof *ops);
    uint64_t t0 = now_ns();
    CUresult r = real3d(n, ops, flags, stream);
    last_ns = now_ns() - t0;
    return r;
}

DRVCLOCK_EXPORT CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                               CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t num_attrs,
                                               CUstream stream)
{
    if (!real1d)
        return CUDA_ERROR_NOT_FOUND;
    if (count < (size_t)1 << 24) {
        read_through(dsts, count * sizeof *dsts);
        read_through(srcs, count * sizeof *srcs);
        read_through(sizes, count * sizeof *sizes);
        if (num_attrs <= count) {
            read_through(attrs, num_attrs * sizeof *attrs);
            read_through(attrs_idxs, num_attrs * sizeof *attrs_idxs);
        }
    }
    uint64_t t0 = now_ns();
    CUresult r = real1d(dsts, srcs, sizes, count, attrs, attrs_idxs, num_attrs, stream);
    last_ns = now_ns() - t0;
    return r;
}
