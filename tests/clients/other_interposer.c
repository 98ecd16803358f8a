/* SPDX-License-Identifier: MIT */
/*
 * libcbtother: another library that interposes on the driver, as profilers
 * and memory limiters do: it defines cuMemcpy3DBatchAsync_v2, cuMemAlloc_v2
 * and cuMemFree_v2, counts the calls and forwards each to the definition
 * that comes after it, found with dlsym(RTLD_NEXT, ...).  At exit it prints
 * its counts on stdout, so a run shows whether every call went through it.
 *
 * Preloaded before the shim, its RTLD_NEXT lookup reaches the shim's dlsym,
 * which must not hand it back its own function (it would call itself until
 * the stack overflows: a call that comes back in is refused with
 * CUDA_ERROR_UNKNOWN and counted instead).  Preloaded after the shim, the
 * shim's exported functions must forward to it, not past it.
 */
#define _GNU_SOURCE
#include <cuda.h>
#undef cuMemcpy3DBatchAsync
#undef cuMemAlloc
#undef cuMemFree

#include <dlfcn.h>
#include <stdio.h>

static unsigned long batches, allocs, frees, reentered;
static __thread int depth;

/* The next definition of `name`, or NULL when the call came back in. */
static void *next(const char *name, void *self)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p || p == self || depth > 0) {
        reentered++;
        return NULL;
    }
    return p;
}

CUresult cuMemcpy3DBatchAsync_v2(size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags, CUstream s)
{
    batches++;
    CUresult (*fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream) =
        (CUresult(*)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream))next(
            "cuMemcpy3DBatchAsync_v2", (void *)cuMemcpy3DBatchAsync_v2);
    if (!fn)
        return CUDA_ERROR_UNKNOWN;
    depth++;
    CUresult r = fn(n, ops, flags, s);
    depth--;
    return r;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
    allocs++;
    CUresult (*fn)(CUdeviceptr *, size_t) =
        (CUresult(*)(CUdeviceptr *, size_t))next("cuMemAlloc_v2", (void *)cuMemAlloc_v2);
    if (!fn)
        return CUDA_ERROR_UNKNOWN;
    depth++;
    CUresult r = fn(p, size);
    depth--;
    return r;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
    frees++;
    CUresult (*fn)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))next("cuMemFree_v2", (void *)cuMemFree_v2);
    if (!fn)
        return CUDA_ERROR_UNKNOWN;
    depth++;
    CUresult r = fn(p);
    depth--;
    return r;
}

__attribute__((destructor)) static void report(void)
{
    printf("other interposer: batches=%lu allocs=%lu frees=%lu came_back_in=%lu\n", batches, allocs, frees,
           reentered);
    fflush(stdout);
}
