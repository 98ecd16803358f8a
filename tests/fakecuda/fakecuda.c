/* SPDX-License-Identifier: MIT */
/*
 * fakecuda: a test double of the NVIDIA driver (libcuda.so.1).
 *
 * It exists so that the shim, its tests and the demo run on machines without
 * a GPU.  "Device" memory is host memory kept in a registry, so that pointer
 * attributes, allocation bounds and the batch copies behave like the real
 * driver's.  The accept/reject rules of the cuMemcpy3DBatchAsync entry points
 * follow the table measured on an H200 (shared/facts/h200-driver.md) and are
 * pinned by tests/fakecuda/test_fakecuda_table.c; those of the 1D batch,
 * cuMemcpyBatchAsync, follow tests/gpu/measured/table1d-h200.txt and are
 * pinned by tests/fakecuda/table1d.sh, which runs the client that measured
 * it (tests/gpu/clients/table1d.c) over the double: change both together.
 *
 * Ground rules, because the double runs inside other people's processes:
 *  - never print, never exit or abort: report through CUresult only;
 *  - every shared structure is behind one mutex;
 *  - what cuGetProcAddress hands out is the library's own address of the
 *    exported symbol, never an interposed one (see FC_ENTRY).
 */
#include <cuda.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>

/* The copy a GPU makes is no access of the program's: under AddressSanitizer
 * it is libc's own memmove, not the runtime's checked one, so that a bad
 * batch a test sends on purpose reads or faults as it would on the device
 * (docs/sanitizers.md). */
#ifdef __SANITIZE_ADDRESS__
static void fc_dma(void *dst, const void *src, size_t n)
{
    static void *(*libc_memmove)(void *, const void *, size_t);
    if (!libc_memmove) {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        libc_memmove = (void *(*)(void *, const void *, size_t))(libc ? dlsym(libc, "memmove") : NULL);
        if (!libc_memmove)
            libc_memmove = memmove;
    }
    libc_memmove(dst, src, n);
}
#else
#define fc_dma memmove
#endif
#include <time.h>
#include <unistd.h>

#include <cubatchtrace/cuda13x.h>

#include "fakecuda.h"

/*
 * cuda.h renames these to their newest versions; the double also exports the
 * old spellings (the CUDA 12.8 batch ABI, the 4-argument cuGetProcAddress),
 * so it needs the plain names back.
 */
#undef cuMemcpy3DBatchAsync
#undef cuMemcpyBatchAsync
#undef cuGetProcAddress
#undef cuGraphAddNode

/*
 * The driver the double stands for.  13050 (tests/fakecuda/lib): a CUDA 13.5
 * driver, with the 13.2 single-op calls (cuMemcpy3DWithAttributesAsync,
 * cuMemcpyWithAttributesAsync) and the 13.5 cuFabricCpyBatchAsync, modelled
 * on what the 13.5 cuda.h documents (no driver that has them was measured:
 * docs/fakecuda.md).  13000 (tests/fakecuda/lib13.0, built with
 * -DFAKECUDA_CUDA_VERSION=13000): the measured 13.0 driver, which neither
 * exports them nor hands them out through cuGetProcAddress.
 */
#ifndef FAKECUDA_CUDA_VERSION
#define FAKECUDA_CUDA_VERSION 13050
#endif
#include <cubatchtrace/cuda13x.h>
#undef cuMemcpy3DWithAttributesAsync
#undef cuMemcpyWithAttributesAsync
#undef cuFabricCpyBatchAsync

#define FC_DRIVER_VERSION FAKECUDA_CUDA_VERSION
static bool fc_capture_batches(void);
#define FC_MAX_DEVICES 8

/*
 * FC_ENTRY(ret, name, params) { body } defines the static function fc_<name>
 * and exports <name> as an alias of it.  Inside the library we only ever take
 * the address of fc_<name>: with default visibility, &name would go through
 * the GOT and yield whatever a preloaded library (the shim) interposes, and
 * cuGetProcAddress would then hand the shim its own wrapper back.
 */
#define FC_ENTRY(ret, name, params)                                                               \
    static ret fc_##name params;                                                                  \
    extern __typeof__(fc_##name) name __attribute__((alias("fc_" #name), visibility("default"))); \
    static ret fc_##name params

#define FC_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ state */

enum fc_mem_kind { FC_MEM_DEVICE, FC_MEM_PINNED, FC_MEM_MANAGED };

struct fc_alloc {
    uintptr_t base;
    size_t size;
    enum fc_mem_kind kind;
    int device;
    CUcontext ctx;
    unsigned long long buffer_id;
    bool owned;      /* the double's own heap block, freed with the allocation */
    bool registered; /* cuMemHostRegister'd memory of the caller's */
};

/* Contexts, streams and arrays are validated by membership in these lists,
 * never by dereferencing a handle the caller made up. */
struct fc_ctx {
    int device;
    bool primary;
    unsigned retain;
    unsigned peers; /* bit d: cuCtxEnablePeerAccess granted this context device d's memory */
    unsigned long long id; /* cuCtxGetId: given on first ask; a primary context's anew after its release */
    struct fc_ctx *next;
};

struct fc_graph;
struct fc_stream {
    struct fc_ctx *ctx;
    unsigned long long id;
    struct fc_stream *next;
    /* Graph capture (cuStreamBeginCapture): CU_STREAM_CAPTURE_STATUS_*, the
     * mode it was begun in, the graph being built and the sequence's id. */
    CUstreamCaptureStatus cap_status;
    CUstreamCaptureMode cap_mode;
    struct fc_graph *cap_graph;
    unsigned long long cap_id;
};

struct fc_array {
    CUDA_ARRAY3D_DESCRIPTOR desc;
    size_t w, h, d; /* Height/Depth 0 counted as 1 */
    size_t elem;    /* bytes per element: format size x channels */
    unsigned char *data;
    struct fc_ctx *ctx;
    struct fc_array *next;
};

static pthread_mutex_t fc_lock = PTHREAD_MUTEX_INITIALIZER;

/* Sorted by base, non-overlapping (they are real heap blocks), so a binary
 * search finds the allocation that contains an interior pointer. */
static struct fc_alloc *fc_allocs;
static size_t fc_nallocs, fc_cap_allocs;

static struct fc_ctx fc_primary[FC_MAX_DEVICES];
static struct fc_ctx *fc_contexts; /* created with cuCtxCreate */
static struct fc_stream *fc_streams;
static struct fc_array *fc_arrays;
static struct fc_array *fc_spare_array; /* the last destroyed, reused by the next cuArray3DCreate */

static __thread struct fc_ctx *fc_current;
static __thread unsigned long long fc_ptds_id; /* per-thread stream's id, 0 until asked */

static atomic_ullong fc_batch_count;
static atomic_ullong fc_pointer_queries;
static atomic_ullong fc_mode_exchanges; /* cuThreadExchangeStreamCaptureMode calls */
static __thread unsigned long long fc_thread_exchanges; /* the calling thread's share of them */
static atomic_ullong fc_ctx_pushes;     /* cuCtxPushCurrent calls */
/* fakecuda_place_next_alloc: where the next allocation goes (NULL: the heap). */
static void *_Atomic fc_next_place;
static atomic_ullong fc_next_id = 16; /* stream and buffer ids; small ids reserved */
#define FC_LEGACY_STREAM_ID 1ULL

static pthread_once_t fc_once = PTHREAD_ONCE_INIT;
static int fc_ndevices = 1;

static void fc_read_env(void)
{
    const char *s = getenv("FAKECUDA_DEVICE_COUNT");
    if (s && *s) {
        char *end;
        errno = 0;
        long n = strtol(s, &end, 10);
        if (!errno && *end == '\0' && n >= 0)
            fc_ndevices = n > FC_MAX_DEVICES ? FC_MAX_DEVICES : (int)n;
    }
    for (int i = 0; i < FC_MAX_DEVICES; i++) {
        fc_primary[i].device = i;
        fc_primary[i].primary = true;
    }
}

static int fc_device_count(void)
{
    pthread_once(&fc_once, fc_read_env);
    return fc_ndevices;
}

static bool fc_device_ok(CUdevice dev) { return dev >= 0 && dev < fc_device_count(); }

/* Callers hold fc_lock. */
static bool fc_ctx_known_locked(CUcontext c)
{
    struct fc_ctx *x = (struct fc_ctx *)c;
    if (x >= &fc_primary[0] && x < &fc_primary[FC_MAX_DEVICES])
        return x->device < fc_ndevices;
    for (struct fc_ctx *p = fc_contexts; p; p = p->next)
        if (p == x)
            return true;
    return false;
}

static struct fc_stream *fc_stream_find_locked(CUstream s)
{
    for (struct fc_stream *p = fc_streams; p; p = p->next)
        if ((CUstream)p == s)
            return p;
    return NULL;
}

static struct fc_array *fc_array_find_locked(CUarray a)
{
    for (struct fc_array *p = fc_arrays; p; p = p->next)
        if ((CUarray)p == a)
            return p;
    return NULL;
}

/* Index of the last allocation whose base is <= p, or fc_nallocs when none. */
static size_t fc_alloc_floor_locked(uintptr_t p)
{
    size_t lo = 0, hi = fc_nallocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fc_allocs[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? fc_nallocs : lo - 1;
}

/* Copies out the allocation containing p; false for memory the driver does
 * not know (pageable host memory, or nothing at all). */
static bool fc_alloc_lookup(uintptr_t p, struct fc_alloc *out)
{
    bool found = false;
    pthread_mutex_lock(&fc_lock);
    size_t i = fc_alloc_floor_locked(p);
    if (i < fc_nallocs && p - fc_allocs[i].base < fc_allocs[i].size) {
        *out = fc_allocs[i];
        found = true;
    }
    pthread_mutex_unlock(&fc_lock);
    return found;
}

/* [off, off+len) lies within [0, limit). */
static bool fc_fits(size_t off, size_t len, size_t limit)
{
    return off <= limit && len <= limit - off;
}

/* Inserts [base, base+size) in the sorted registry; false when it overlaps
 * a known allocation or memory runs out.  Callers hold fc_lock. */
static bool fc_alloc_insert_locked(uintptr_t base, size_t size, enum fc_mem_kind kind, struct fc_ctx *ctx,
                                   bool owned, bool registered)
{
    if (fc_nallocs == fc_cap_allocs) {
        size_t cap = fc_cap_allocs ? fc_cap_allocs * 2 : 64;
        struct fc_alloc *grown = realloc(fc_allocs, cap * sizeof *grown);
        if (!grown)
            return false;
        fc_allocs = grown;
        fc_cap_allocs = cap;
    }
    size_t i = fc_alloc_floor_locked(base);
    if (i < fc_nallocs && base - fc_allocs[i].base < fc_allocs[i].size)
        return false;
    i = i == fc_nallocs ? 0 : i + 1;
    if (i < fc_nallocs && fc_allocs[i].base - base < size)
        return false;
    memmove(&fc_allocs[i + 1], &fc_allocs[i], (fc_nallocs - i) * sizeof *fc_allocs);
    fc_allocs[i] = (struct fc_alloc){ .base = base, .size = size, .kind = kind,
                                      .device = ctx->device, .ctx = (CUcontext)ctx,
                                      .buffer_id = atomic_fetch_add(&fc_next_id, 1),
                                      .owned = owned, .registered = registered };
    fc_nallocs++;
    return true;
}

static CUresult fc_alloc_new(size_t size, size_t align, enum fc_mem_kind kind, void **out)
{
    struct fc_ctx *ctx = fc_current;
    if (!out || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* A test may have said where the next allocation goes (memory it keeps mapped). */
    void *mem = atomic_exchange(&fc_next_place, NULL);
    bool owned = mem == NULL;
    /* Whole pages of their own, as the driver's allocations lie apart from
     * the heap: no malloc'd (pageable) byte shares a page with them. */
    size_t whole = size > SIZE_MAX - 4095 ? size : (size + 4095) & ~(size_t)4095;
    if (owned && posix_memalign(&mem, align > 4096 ? align : 4096, whole) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;

    pthread_mutex_lock(&fc_lock);
    bool ok = fc_alloc_insert_locked((uintptr_t)mem, size, kind, ctx, owned, false);
    pthread_mutex_unlock(&fc_lock);
    if (!ok) {
        if (owned)
            free(mem);
        return owned ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
    }
    *out = mem;
    return CUDA_SUCCESS;
}

/* Frees the allocation that starts exactly at p if its kind is allowed;
 * interior pointers and foreign memory are INVALID_VALUE, as in the driver. */
enum fc_free_api { FC_FREE_DEVICE, FC_FREE_HOST, FC_FREE_UNREGISTER };

static CUresult fc_alloc_free(uintptr_t p, enum fc_free_api api)
{
    pthread_mutex_lock(&fc_lock);
    size_t i = fc_alloc_floor_locked(p);
    bool ok = i < fc_nallocs && fc_allocs[i].base == p;
    if (ok && api == FC_FREE_UNREGISTER)
        ok = fc_allocs[i].registered;
    else if (ok)
        ok = !fc_allocs[i].registered && (fc_allocs[i].kind == FC_MEM_PINNED) == (api == FC_FREE_HOST);
    if (!ok) {
        pthread_mutex_unlock(&fc_lock);
        return api == FC_FREE_UNREGISTER ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : CUDA_ERROR_INVALID_VALUE;
    }
    bool owned = fc_allocs[i].owned;
    memmove(&fc_allocs[i], &fc_allocs[i + 1], (fc_nallocs - i - 1) * sizeof *fc_allocs);
    fc_nallocs--;
    pthread_mutex_unlock(&fc_lock);
    if (owned)
        free((void *)p);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------- introspection (tests) */

FC_EXPORT unsigned long long fakecuda_batch_calls(void) { return atomic_load(&fc_batch_count); }

FC_EXPORT unsigned long long fakecuda_pointer_queries(void) { return atomic_load(&fc_pointer_queries); }

FC_EXPORT unsigned long long fakecuda_mode_exchanges(void) { return atomic_load(&fc_mode_exchanges); }
FC_EXPORT unsigned long long fakecuda_thread_mode_exchanges(void) { return fc_thread_exchanges; }

FC_EXPORT unsigned long long fakecuda_ctx_pushes(void) { return atomic_load(&fc_ctx_pushes); }

FC_EXPORT void fakecuda_reset_counts(void)
{
    atomic_store(&fc_batch_count, 0);
    atomic_store(&fc_pointer_queries, 0);
}

FC_EXPORT void fakecuda_place_next_alloc(void *addr) { atomic_store(&fc_next_place, addr); }

/* ------------------------------------------------------- errors, version */

static const struct {
    CUresult code;
    const char *name, *text;
} fc_errors[] = {
    { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
    { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
    { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
    { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
    { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
    { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
    { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
    { CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
      "part or all of the requested memory range is already mapped" },
    { CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
      "pointer does not correspond to a registered memory region" },
    { CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices" },
    { CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled" },
    { CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled" },
};

FC_ENTRY(CUresult, cuGetErrorName, (CUresult error, const char **pStr))
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof fc_errors / sizeof fc_errors[0]; i++)
        if (fc_errors[i].code == error) {
            *pStr = fc_errors[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

FC_ENTRY(CUresult, cuGetErrorString, (CUresult error, const char **pStr))
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof fc_errors / sizeof fc_errors[0]; i++)
        if (fc_errors[i].code == error) {
            *pStr = fc_errors[i].text;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

FC_ENTRY(CUresult, cuInit, (unsigned int Flags))
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_device_count() > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

FC_ENTRY(CUresult, cuDriverGetVersion, (int *driverVersion))
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = FC_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- devices */

FC_ENTRY(CUresult, cuDeviceGetCount, (int *count))
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = fc_device_count();
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuDeviceGet, (CUdevice *device, int ordinal))
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_device_ok(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuDeviceGetName, (char *name, int len, CUdevice dev))
{
    static const char fake[] = "NVIDIA H200 (fakecuda)";
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_device_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    size_t n = (size_t)len - 1 < sizeof fake - 1 ? (size_t)len - 1 : sizeof fake - 1;
    memcpy(name, fake, n);
    name[n] = '\0';
    return CUDA_SUCCESS;
}

/* --------------------------------------------------------------- contexts */

FC_ENTRY(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev))
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_device_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fc_lock);
    fc_primary[dev].retain++;
    pthread_mutex_unlock(&fc_lock);
    *pctx = (CUcontext)&fc_primary[dev];
    return CUDA_SUCCESS;
}

/* The primary context object lives for the whole process, so a handle kept
 * past the last release stays harmless (the real one is merely inactive). */
FC_ENTRY(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice dev))
{
    if (!fc_device_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fc_lock);
    if (fc_primary[dev].retain == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--fc_primary[dev].retain == 0)
        fc_primary[dev].id = 0;
    pthread_mutex_unlock(&fc_lock);
    return r;
}

static CUresult fc_ctx_create(CUcontext *pctx, CUdevice dev)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_device_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    struct fc_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->device = dev;
    pthread_mutex_lock(&fc_lock);
    c->next = fc_contexts;
    fc_contexts = c;
    pthread_mutex_unlock(&fc_lock);
    fc_current = c; /* a new context is made current, as cuCtxCreate does */
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev))
{
    return fc_ctx_create(pctx, dev);
}

FC_ENTRY(CUresult, cuCtxCreate_v3,
         (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags, CUdevice dev))
{
    return fc_ctx_create(pctx, dev);
}

FC_ENTRY(CUresult, cuCtxCreate_v4,
         (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev))
{
    return fc_ctx_create(pctx, dev);
}

/* Destroying a context frees what was made in it, like the driver; other
 * threads that still have it current are the caller's problem, as there. */
FC_ENTRY(CUresult, cuCtxDestroy_v2, (CUcontext ctx))
{
    struct fc_ctx *c = (struct fc_ctx *)ctx;
    pthread_mutex_lock(&fc_lock);
    struct fc_ctx **pp = &fc_contexts;
    while (*pp && *pp != c)
        pp = &(*pp)->next;
    if (!c || !*pp) {
        pthread_mutex_unlock(&fc_lock);
        return CUDA_ERROR_INVALID_CONTEXT; /* unknown, or a primary context */
    }
    *pp = c->next;
    for (struct fc_stream **sp = &fc_streams; *sp;) {
        struct fc_stream *s = *sp;
        if (s->ctx == c) {
            *sp = s->next;
            free(s);
        } else {
            sp = &s->next;
        }
    }
    for (struct fc_array **ap = &fc_arrays; *ap;) {
        struct fc_array *a = *ap;
        if (a->ctx == c) {
            *ap = a->next;
            free(a->data);
            free(a);
        } else {
            ap = &a->next;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < fc_nallocs; i++) {
        if (fc_allocs[i].ctx == ctx) {
            if (fc_allocs[i].owned)
                free((void *)fc_allocs[i].base);
        }
        else
            fc_allocs[kept++] = fc_allocs[i];
    }
    fc_nallocs = kept;
    pthread_mutex_unlock(&fc_lock);
    if (fc_current == c)
        fc_current = NULL;
    free(c);
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuCtxSetCurrent, (CUcontext ctx))
{
    if (ctx) {
        pthread_once(&fc_once, fc_read_env);
        pthread_mutex_lock(&fc_lock);
        bool ok = fc_ctx_known_locked(ctx);
        pthread_mutex_unlock(&fc_lock);
        if (!ok)
            return CUDA_ERROR_INVALID_CONTEXT;
    }
    fc_current = (struct fc_ctx *)ctx;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuCtxGetCurrent, (CUcontext *pctx))
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)fc_current;
    return CUDA_SUCCESS;
}

/* NULL means the calling thread's current context (CUDA 13 _v2 APIs). */
static CUresult fc_ctx_resolve(CUcontext ctx, struct fc_ctx **out)
{
    if (!ctx) {
        if (!fc_current)
            return CUDA_ERROR_INVALID_CONTEXT;
        *out = fc_current;
        return CUDA_SUCCESS;
    }
    pthread_once(&fc_once, fc_read_env);
    pthread_mutex_lock(&fc_lock);
    bool ok = fc_ctx_known_locked(ctx);
    pthread_mutex_unlock(&fc_lock);
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = (struct fc_ctx *)ctx;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuCtxGetDevice, (CUdevice *device))
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = fc_current->device;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuCtxGetId, (CUcontext ctx, unsigned long long *ctxId))
{
    struct fc_ctx *c;
    if (!ctxId)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_ctx_resolve(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fc_lock);
    if (!c->id)
        c->id = atomic_fetch_add(&fc_next_id, 1);
    *ctxId = c->id;
    pthread_mutex_unlock(&fc_lock);
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuCtxGetDevice_v2, (CUdevice *device, CUcontext ctx))
{
    struct fc_ctx *c;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_ctx_resolve(ctx, &c);
    if (r == CUDA_SUCCESS)
        *device = c->device;
    return r;
}

/* Every operation completes before its call returns, so there is nothing to
 * wait for. */
FC_ENTRY(CUresult, cuCtxSynchronize, (void))
{
    return fc_current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

FC_ENTRY(CUresult, cuCtxSynchronize_v2, (CUcontext ctx))
{
    struct fc_ctx *c;
    return fc_ctx_resolve(ctx, &c);
}

/*
 * Peer access.  The double says every pair of distinct devices can reach each
 * other and records what was enabled; its copies do not depend on it (how the
 * real driver treats a batch between devices without peer access is measured
 * by tests/gpu's peer cases, not modelled here).
 */
FC_ENTRY(CUresult, cuDeviceCanAccessPeer, (int *canAccessPeer, CUdevice dev, CUdevice peerDev))
{
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_device_ok(dev) || !fc_device_ok(peerDev))
        return CUDA_ERROR_INVALID_DEVICE;
    *canAccessPeer = dev != peerDev;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuCtxEnablePeerAccess, (CUcontext peerContext, unsigned int Flags))
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_ctx *self = fc_current, *peer;
    if (!self || !peerContext)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult r = fc_ctx_resolve(peerContext, &peer);
    if (r != CUDA_SUCCESS)
        return r;
    if (peer->device == self->device)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fc_lock);
    if (self->peers & (1u << peer->device))
        r = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    else
        self->peers |= 1u << peer->device;
    pthread_mutex_unlock(&fc_lock);
    return r;
}

FC_ENTRY(CUresult, cuCtxDisablePeerAccess, (CUcontext peerContext))
{
    struct fc_ctx *self = fc_current, *peer;
    if (!self || !peerContext)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult r = fc_ctx_resolve(peerContext, &peer);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fc_lock);
    if (!(self->peers & (1u << peer->device)))
        r = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    else
        self->peers &= ~(1u << peer->device);
    pthread_mutex_unlock(&fc_lock);
    return r;
}

/* ----------------------------------------------------------------- memory */

/* Device allocations of the real driver are at least 256-byte aligned;
 * callers may rely on it for vector accesses. */
FC_ENTRY(CUresult, cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize))
{
    void *p;
    CUresult r = fc_alloc_new(bytesize, 256, FC_MEM_DEVICE, &p);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return r;
}

FC_ENTRY(CUresult, cuMemFree_v2, (CUdeviceptr dptr))
{
    if (dptr == 0)
        return CUDA_SUCCESS;
    return fc_alloc_free((uintptr_t)dptr, FC_FREE_DEVICE);
}

FC_ENTRY(CUresult, cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags))
{
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    void *p;
    CUresult r = fc_alloc_new(bytesize, 4096, FC_MEM_MANAGED, &p);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return r;
}

FC_ENTRY(CUresult, cuMemAllocHost_v2, (void **pp, size_t bytesize))
{
    return fc_alloc_new(bytesize, 4096, FC_MEM_PINNED, pp);
}

FC_ENTRY(CUresult, cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags))
{
    return fc_alloc_new(bytesize, 4096, FC_MEM_PINNED, pp);
}

FC_ENTRY(CUresult, cuMemFreeHost, (void *p)) { return fc_alloc_free((uintptr_t)p, FC_FREE_HOST); }

/* Page-locks the caller's memory: it becomes pinned memory of the current
 * context's device, [p, p+bytesize) exactly, until cuMemHostUnregister(p). */
FC_ENTRY(CUresult, cuMemHostRegister_v2, (void *p, size_t bytesize, unsigned int Flags))
{
    struct fc_ctx *ctx = fc_current;
    if (!p || bytesize == 0 || (uintptr_t)p + bytesize < (uintptr_t)p)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&fc_lock);
    bool ok = fc_alloc_insert_locked((uintptr_t)p, bytesize, FC_MEM_PINNED, ctx, false, true);
    pthread_mutex_unlock(&fc_lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
}

FC_ENTRY(CUresult, cuMemHostUnregister, (void *p)) { return fc_alloc_free((uintptr_t)p, FC_FREE_UNREGISTER); }

FC_ENTRY(CUresult, cuMemGetAddressRange_v2, (CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr))
{
    struct fc_alloc a;
    if (!fc_alloc_lookup((uintptr_t)dptr, &a))
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = (CUdeviceptr)a.base;
    if (psize)
        *psize = a.size;
    return CUDA_SUCCESS;
}

/*
 * The synchronous copies and memset of the driver API, enough for a program
 * to fill and read back its "device" memory.  The device side must lie within
 * one allocation the driver knows (device, managed or pinned); a pageable
 * host pointer there is an error, as on the H200 (table1d's copies into
 * pageable memory cannot be read back with cuMemcpyDtoH).  The host side is
 * simply touched, like the driver's.
 */
static bool fc_span_in_alloc(CUdeviceptr p, size_t n)
{
    struct fc_alloc a;
    return p != 0 && fc_alloc_lookup((uintptr_t)p, &a) && fc_fits((uintptr_t)p - a.base, n, a.size);
}

FC_ENTRY(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount))
{
    if (!fc_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!srcHost || !fc_span_in_alloc(dstDevice, ByteCount))
        return CUDA_ERROR_INVALID_VALUE;
    memmove((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount))
{
    if (!fc_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!dstHost || !fc_span_in_alloc(srcDevice, ByteCount))
        return CUDA_ERROR_INVALID_VALUE;
    memmove(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N))
{
    if (!fc_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!fc_span_in_alloc(dstDevice, N))
        return CUDA_ERROR_INVALID_VALUE;
    memset((void *)(uintptr_t)dstDevice, uc, N);
    return CUDA_SUCCESS;
}

/*
 * One attribute of one pointer.  known == false is memory the driver does not
 * know: cuPointerGetAttribute reports INVALID_VALUE for it, cuPointerGetAttributes
 * writes the documented "NULL" defaults instead.  Boolean attributes are
 * written as one byte (C bool), so callers must not read them into an
 * uninitialised int.
 */
static CUresult fc_pointer_attr(void *data, CUpointer_attribute attr, CUdeviceptr ptr, bool known,
                                const struct fc_alloc *a, bool defaults)
{
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    if (!known && !defaults)
        return CUDA_ERROR_INVALID_VALUE;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = known ? a->ctx : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = !known ? 0u
                                : a->kind == FC_MEM_PINNED ? (unsigned)CU_MEMORYTYPE_HOST
                                                           : (unsigned)CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = known ? ptr : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        /* Plain device memory has no host address. */
        if (known && a->kind == FC_MEM_DEVICE && !defaults)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = known && a->kind != FC_MEM_DEVICE ? (void *)(uintptr_t)ptr : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(bool *)data = known && a->kind == FC_MEM_MANAGED;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = known ? a->device : -2; /* -2: the runtime's cudaInvalidDeviceId */
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = known ? (CUdeviceptr)a->base : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = known ? a->size : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = known ? a->buffer_id : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(bool *)data = known;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        *(bool *)data = false;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        *(bool *)data = known && a->kind == FC_MEM_DEVICE;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

FC_ENTRY(CUresult, cuPointerGetAttribute, (void *data, CUpointer_attribute attribute, CUdeviceptr ptr))
{
    atomic_fetch_add(&fc_pointer_queries, 1);
    struct fc_alloc a;
    bool known = fc_alloc_lookup((uintptr_t)ptr, &a);
    return fc_pointer_attr(data, attribute, ptr, known, &a, false);
}

FC_ENTRY(CUresult, cuPointerGetAttributes,
         (unsigned int numAttributes, CUpointer_attribute *attributes, void **data, CUdeviceptr ptr))
{
    atomic_fetch_add(&fc_pointer_queries, 1);
    if (numAttributes == 0 || !attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_alloc a;
    bool known = fc_alloc_lookup((uintptr_t)ptr, &a);
    for (unsigned i = 0; i < numAttributes; i++) {
        CUresult r = fc_pointer_attr(data[i], attributes[i], ptr, known, &a, true);
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- streams */

/*
 * Destroyed streams are kept (a few) and their handles handed out again by
 * the next cuStreamCreate, last destroyed first, as a driver may: whatever
 * else the process allocates in between, a program that destroys a stream
 * and creates the next gets the freed handle back.
 */
#define FC_STREAMS_KEPT 8
static unsigned fc_env_uint(const char *name);
static CUresult fc_begin_capture(CUstream h, CUstreamCaptureMode mode);
static struct fc_stream *fc_streams_freed; /* under fc_lock, through ->next */
static int fc_nstreams_freed;

FC_ENTRY(CUresult, cuStreamCreate, (CUstream *phStream, unsigned int Flags))
{
    if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&fc_lock);
    struct fc_stream *s = fc_streams_freed;
    if (s) {
        fc_streams_freed = s->next;
        fc_nstreams_freed--;
        memset(s, 0, sizeof *s);
    }
    pthread_mutex_unlock(&fc_lock);
    if (!s && !(s = calloc(1, sizeof *s)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->ctx = fc_current;
    s->id = atomic_fetch_add(&fc_next_id, 1);
    pthread_mutex_lock(&fc_lock);
    s->next = fc_streams;
    fc_streams = s;
    pthread_mutex_unlock(&fc_lock);
    *phStream = (CUstream)s;
    if (fc_env_uint("FAKECUDA_CAPTURING"))
        (void)fc_begin_capture((CUstream)s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuStreamDestroy_v2, (CUstream hStream))
{
    pthread_mutex_lock(&fc_lock);
    struct fc_stream **pp = &fc_streams;
    while (*pp && (CUstream)*pp != hStream)
        pp = &(*pp)->next;
    struct fc_stream *s = *pp;
    bool kept = false;
    if (s) {
        *pp = s->next;
        if (fc_nstreams_freed < FC_STREAMS_KEPT) {
            s->next = fc_streams_freed;
            fc_streams_freed = s;
            fc_nstreams_freed++;
            kept = true;
        }
    }
    pthread_mutex_unlock(&fc_lock);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!kept)
        free(s);
    return CUDA_SUCCESS;
}

enum fc_stream_kind { FC_STREAM_LEGACY, FC_STREAM_PTDS, FC_STREAM_USER };

/*
 * Classifies a handle for the stream queries.  NULL is the default stream:
 * the legacy one for the plain entry points, the per-thread one for _ptsz.
 */
static CUresult fc_stream_classify(CUstream h, bool ptsz, enum fc_stream_kind *kind, struct fc_stream *copy)
{
    if (h == NULL)
        *kind = ptsz ? FC_STREAM_PTDS : FC_STREAM_LEGACY;
    else if (h == CU_STREAM_LEGACY)
        *kind = FC_STREAM_LEGACY;
    else if (h == CU_STREAM_PER_THREAD)
        *kind = FC_STREAM_PTDS;
    else {
        pthread_mutex_lock(&fc_lock);
        struct fc_stream *s = fc_stream_find_locked(h);
        if (s && copy)
            *copy = *s;
        pthread_mutex_unlock(&fc_lock);
        if (!s)
            return CUDA_ERROR_INVALID_HANDLE;
        *kind = FC_STREAM_USER;
    }
    return CUDA_SUCCESS;
}

static CUresult fc_stream_sync(CUstream h, bool ptsz)
{
    enum fc_stream_kind k;
    return fc_stream_classify(h, ptsz, &k, NULL);
}

FC_ENTRY(CUresult, cuStreamSynchronize, (CUstream hStream)) { return fc_stream_sync(hStream, false); }
FC_ENTRY(CUresult, cuStreamSynchronize_ptsz, (CUstream hStream)) { return fc_stream_sync(hStream, true); }

static CUresult fc_stream_get_ctx(CUstream h, bool ptsz, CUcontext *pctx, CUgreenCtx *pgreen)
{
    enum fc_stream_kind k;
    struct fc_stream s;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_stream_classify(h, ptsz, &k, &s);
    if (r != CUDA_SUCCESS)
        return r;
    struct fc_ctx *c = k == FC_STREAM_USER ? s.ctx : fc_current;
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    *pctx = (CUcontext)c;
    if (pgreen)
        *pgreen = NULL; /* the double has no green contexts */
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuStreamGetCtx, (CUstream hStream, CUcontext *pctx))
{
    return fc_stream_get_ctx(hStream, false, pctx, NULL);
}
FC_ENTRY(CUresult, cuStreamGetCtx_ptsz, (CUstream hStream, CUcontext *pctx))
{
    return fc_stream_get_ctx(hStream, true, pctx, NULL);
}
FC_ENTRY(CUresult, cuStreamGetCtx_v2, (CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx))
{
    return fc_stream_get_ctx(hStream, false, pCtx, pGreenCtx);
}
FC_ENTRY(CUresult, cuStreamGetCtx_v2_ptsz, (CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx))
{
    return fc_stream_get_ctx(hStream, true, pCtx, pGreenCtx);
}

static bool fc_capture_break(CUstream h);

/* Ids are unique in the process; each thread's per-thread stream has its own.
 * Asked of a stream being captured, the H200 answers
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture. */
static CUresult fc_stream_get_id(CUstream h, bool ptsz, unsigned long long *id)
{
    enum fc_stream_kind k;
    struct fc_stream s;
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_stream_classify(h, ptsz, &k, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (k == FC_STREAM_USER && fc_capture_break(h))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    switch (k) {
    case FC_STREAM_LEGACY:
        *id = FC_LEGACY_STREAM_ID;
        break;
    case FC_STREAM_PTDS:
        if (!fc_ptds_id)
            fc_ptds_id = atomic_fetch_add(&fc_next_id, 1);
        *id = fc_ptds_id;
        break;
    case FC_STREAM_USER:
        *id = s.id;
        break;
    }
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuStreamGetId, (CUstream hStream, unsigned long long *streamId))
{
    return fc_stream_get_id(hStream, false, streamId);
}
FC_ENTRY(CUresult, cuStreamGetId_ptsz, (CUstream hStream, unsigned long long *streamId))
{
    return fc_stream_get_id(hStream, true, streamId);
}

/* An unsigned number from the environment, 0 when unset. */
static unsigned fc_env_uint(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? (unsigned)strtoul(s, NULL, 10) : 0;
}

/* ------------------------------------------------------------ graph capture */

/*
 * Stream capture into a graph, as the H200 does it (measured with
 * tests/gpu/clients/capture.c; pinned by tests/fakecuda/capture.sh):
 *  - cuStreamBeginCapture on a stream of the program's (the double captures
 *    no special stream); cuStreamEndCapture hands over a graph of the work
 *    captured, or CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and no graph when
 *    the capture was invalidated;
 *  - a batch copy (3D or 1D) on a stream being captured is refused with
 *    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and the capture goes on: the
 *    graph simply lacks the copy (see fc_batch and fc_batch1d for where in
 *    their checks it comes);
 *  - cuStreamGetId or cuStreamQuery of a stream being captured answer
 *    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate its capture;
 *  - cuEventQuery and cuEventSynchronize are "potentially unsafe": made by a
 *    thread whose interaction mode (cuThreadExchangeStreamCaptureMode) is not
 *    RELAXED while any capture begun in GLOBAL or THREAD_LOCAL mode is under
 *    way, on any thread, they answer CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 *    and invalidate those captures; captures begun RELAXED are never broken
 *    that way;
 *  - cuMemsetD8Async on a capturing stream adds a node; a graph launched
 *    runs its nodes at once (the double's work is synchronous).
 * FAKECUDA_CAPTURING=1: every stream the program creates starts out captured
 * in GLOBAL mode.
 */
/*
 * Graph nodes (struct fc_node): a memset (n > 0) or an event record (n 0),
 * both only from capture; a 1D batch of copies (CUDA 13.5's
 * CU_GRAPH_NODE_TYPE_MEMCPY_BATCH: cuGraphAddNode, or a batch call captured
 * under FAKECUDA_CAPTURE_BATCH=1); a child graph (cuGraphAddChildGraphNode,
 * or cuGraphAddNode of type GRAPH), which holds a copy of the graph given.
 * A node is a handle of its own (its address), so handles stay valid as a
 * graph grows.  An executable graph is a copy of its graph whose nodes name
 * the node they were copied from (orig), which cuGraphExecNodeSetParams
 * looks them up by.
 */
struct fc_graph;
struct fc_batch_node {
    size_t count, numAttrs;
    CUdeviceptr *dsts, *srcs;
    size_t *sizes, *attrsIdxs;
    CUmemcpyAttributes *attrs;
    CUcontext ctx;
};
struct fc_node {
    CUgraphNodeType type;
    struct fc_graph *owner;
    const struct fc_node *orig; /* in an executable graph: the node it was made from */
    CUdeviceptr dst;            /* memset */
    unsigned char value;
    size_t n;
    struct fc_batch_node b;     /* memcpy batch */
    struct fc_graph *child;     /* child graph */
};
struct fc_graph {
    struct fc_node **nodes;
    size_t nnodes, cap;
};
struct fc_exec {
    struct fc_graph g;
};

static __thread CUstreamCaptureMode fc_thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static unsigned long long fc_next_capture_id = 1; /* under fc_lock */

/* Invalidate the capture of stream h, if it is being captured (true). */
static bool fc_capture_break(CUstream h)
{
    bool was = false;
    pthread_mutex_lock(&fc_lock);
    struct fc_stream *s = fc_stream_find_locked(h);
    if (s && s->cap_status != CU_STREAM_CAPTURE_STATUS_NONE) {
        was = true;
        s->cap_status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
    }
    pthread_mutex_unlock(&fc_lock);
    return was;
}

/* A potentially unsafe call: false (and the captures it breaks invalidated)
 * when the calling thread may not make it now. */
static bool fc_unsafe_call_ok(void)
{
    if (fc_thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return true;
    bool ok = true;
    pthread_mutex_lock(&fc_lock);
    for (struct fc_stream *s = fc_streams; s; s = s->next)
        if (s->cap_status == CU_STREAM_CAPTURE_STATUS_ACTIVE && s->cap_mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
            s->cap_status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
            ok = false;
        }
    pthread_mutex_unlock(&fc_lock);
    return ok;
}

/* Is stream h being captured (ACTIVE or INVALIDATED)? */
static bool fc_capturing(CUstream h)
{
    pthread_mutex_lock(&fc_lock);
    struct fc_stream *s = fc_stream_find_locked(h);
    bool c = s && s->cap_status != CU_STREAM_CAPTURE_STATUS_NONE;
    pthread_mutex_unlock(&fc_lock);
    return c;
}

static void fc_graph_free(struct fc_graph *g);

static void fc_batch_node_free(struct fc_batch_node *b)
{
    free(b->dsts);
    free(b->srcs);
    free(b->sizes);
    free(b->attrsIdxs);
    free(b->attrs);
    memset(b, 0, sizeof *b);
}

/* Node handles come back: a node destroyed is the next node made, as a
 * driver may reuse a handle (a shim that keeps knowledge by handle must
 * forget it when the node goes). */
static struct fc_node *fc_nodes_free; /* under fc_nodes_lock, linked through owner */
static pthread_mutex_t fc_nodes_lock = PTHREAD_MUTEX_INITIALIZER;

static struct fc_node *fc_node_new(void)
{
    pthread_mutex_lock(&fc_nodes_lock);
    struct fc_node *x = fc_nodes_free;
    if (x)
        fc_nodes_free = (struct fc_node *)(void *)x->owner;
    pthread_mutex_unlock(&fc_nodes_lock);
    if (x)
        memset(x, 0, sizeof *x);
    return x ? x : calloc(1, sizeof *x);
}

static void fc_node_free(struct fc_node *n)
{
    if (!n)
        return;
    fc_batch_node_free(&n->b);
    fc_graph_free(n->child);
    pthread_mutex_lock(&fc_nodes_lock);
    n->owner = (struct fc_graph *)(void *)fc_nodes_free;
    fc_nodes_free = n;
    pthread_mutex_unlock(&fc_nodes_lock);
}

static void fc_graph_free(struct fc_graph *g)
{
    if (g) {
        for (size_t i = 0; i < g->nnodes; i++)
            fc_node_free(g->nodes[i]);
        free(g->nodes);
        free(g);
    }
}

/* Append node n to g (false: out of memory, n not taken). */
static bool fc_graph_append(struct fc_graph *g, struct fc_node *n)
{
    if (g->nnodes == g->cap) {
        size_t c = g->cap ? 2 * g->cap : 4;
        struct fc_node **p = realloc(g->nodes, c * sizeof *p);
        if (!p)
            return false;
        g->nodes = p;
        g->cap = c;
    }
    n->owner = g;
    g->nodes[g->nnodes++] = n;
    return true;
}

/* A memset or event record node appended to a capture's graph. */
static CUresult fc_graph_append_memset(struct fc_graph *g, CUdeviceptr dst, unsigned char v, size_t n)
{
    struct fc_node *x = fc_node_new();
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->type = n ? CU_GRAPH_NODE_TYPE_MEMSET : CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    x->dst = dst;
    x->value = v;
    x->n = n;
    if (!fc_graph_append(g, x)) {
        free(x);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

static CUresult fc_begin_capture(CUstream h, CUstreamCaptureMode mode)
{
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_graph *g = calloc(1, sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fc_lock);
    struct fc_stream *s = fc_stream_find_locked(h);
    if (!s)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (s->cap_status != CU_STREAM_CAPTURE_STATUS_NONE)
        r = CUDA_ERROR_ILLEGAL_STATE;
    else {
        s->cap_status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
        s->cap_mode = mode;
        s->cap_graph = g;
        s->cap_id = fc_next_capture_id++;
        g = NULL;
    }
    pthread_mutex_unlock(&fc_lock);
    fc_graph_free(g);
    return r;
}

FC_ENTRY(CUresult, cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode))
{
    return fc_begin_capture(hStream, mode);
}
FC_ENTRY(CUresult, cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode))
{
    return fc_begin_capture(hStream, mode);
}

static CUresult fc_end_capture(CUstream h, CUgraph *phGraph)
{
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    *phGraph = NULL;
    CUresult r = CUDA_SUCCESS;
    struct fc_graph *g = NULL;
    pthread_mutex_lock(&fc_lock);
    struct fc_stream *s = fc_stream_find_locked(h);
    if (!s)
        r = h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD ? CUDA_ERROR_ILLEGAL_STATE
                                                                           : CUDA_ERROR_INVALID_HANDLE;
    else if (s->cap_status == CU_STREAM_CAPTURE_STATUS_NONE)
        r = CUDA_ERROR_ILLEGAL_STATE;
    else {
        if (s->cap_status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
            r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        g = s->cap_graph;
        s->cap_graph = NULL;
        s->cap_status = CU_STREAM_CAPTURE_STATUS_NONE;
    }
    pthread_mutex_unlock(&fc_lock);
    if (r == CUDA_SUCCESS)
        *phGraph = (CUgraph)g;
    else
        fc_graph_free(g);
    return r;
}

FC_ENTRY(CUresult, cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph)) { return fc_end_capture(hStream, phGraph); }
FC_ENTRY(CUresult, cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph))
{
    return fc_end_capture(hStream, phGraph);
}

FC_ENTRY(CUresult, cuThreadExchangeStreamCaptureMode, (CUstreamCaptureMode *mode))
{
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    atomic_fetch_add(&fc_mode_exchanges, 1);
    fc_thread_exchanges++;
    CUstreamCaptureMode old = fc_thread_mode;
    fc_thread_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

static CUresult fc_stream_is_capturing(CUstream h, bool ptsz, CUstreamCaptureStatus *st)
{
    enum fc_stream_kind k;
    struct fc_stream s;
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_stream_classify(h, ptsz, &k, &s);
    if (r == CUDA_SUCCESS)
        *st = k == FC_STREAM_USER ? s.cap_status : CU_STREAM_CAPTURE_STATUS_NONE;
    return r;
}

FC_ENTRY(CUresult, cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus))
{
    return fc_stream_is_capturing(hStream, false, captureStatus);
}
FC_ENTRY(CUresult, cuStreamIsCapturing_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus))
{
    return fc_stream_is_capturing(hStream, true, captureStatus);
}

static CUresult fc_capture_info(CUstream h, bool ptsz, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph,
                                const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    enum fc_stream_kind k;
    struct fc_stream s;
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_stream_classify(h, ptsz, &k, &s);
    if (r != CUDA_SUCCESS)
        return r;
    bool cap = k == FC_STREAM_USER && s.cap_status != CU_STREAM_CAPTURE_STATUS_NONE;
    *st = cap ? s.cap_status : CU_STREAM_CAPTURE_STATUS_NONE;
    if (id && cap)
        *id = s.cap_id;
    if (graph)
        *graph = cap ? (CUgraph)s.cap_graph : NULL;
    if (deps)
        *deps = NULL;
    if (edges)
        *edges = NULL;
    if (ndeps)
        *ndeps = 0;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuStreamGetCaptureInfo_v3,
         (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out,
          const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out))
{
    return fc_capture_info(hStream, false, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                           numDependencies_out);
}
FC_ENTRY(CUresult, cuStreamGetCaptureInfo_v3_ptsz,
         (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out,
          const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out))
{
    return fc_capture_info(hStream, true, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                           numDependencies_out);
}

/* Asked of a stream being captured, the H200 invalidates the capture. */
static CUresult fc_stream_query(CUstream h, bool ptsz)
{
    enum fc_stream_kind k;
    CUresult r = fc_stream_classify(h, ptsz, &k, NULL);
    if (r == CUDA_SUCCESS && k == FC_STREAM_USER && fc_capture_break(h))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return r;
}
FC_ENTRY(CUresult, cuStreamQuery, (CUstream hStream)) { return fc_stream_query(hStream, false); }
FC_ENTRY(CUresult, cuStreamQuery_ptsz, (CUstream hStream)) { return fc_stream_query(hStream, true); }

/* A memset is the one kind of node the double captures. */
static CUresult fc_memset_async(CUdeviceptr dst, unsigned char v, size_t n, CUstream h, bool ptsz)
{
    enum fc_stream_kind k;
    CUresult r = fc_stream_classify(h, ptsz, &k, NULL);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fc_lock);
    struct fc_stream *s = k == FC_STREAM_USER ? fc_stream_find_locked(h) : NULL;
    if (s && s->cap_status != CU_STREAM_CAPTURE_STATUS_NONE) {
        r = CUDA_SUCCESS;
        if (s->cap_status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
            r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        else
            r = fc_graph_append_memset(s->cap_graph, dst, v, n);
        pthread_mutex_unlock(&fc_lock);
        return r;
    }
    pthread_mutex_unlock(&fc_lock);
    return fc_cuMemsetD8_v2(dst, v, n);
}
FC_ENTRY(CUresult, cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))
{
    return fc_memset_async(dstDevice, uc, N, hStream, false);
}
FC_ENTRY(CUresult, cuMemsetD8Async_ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream))
{
    return fc_memset_async(dstDevice, uc, N, hStream, true);
}

static bool fc_attr1d_ok(const CUmemcpyAttributes *a);
static bool fc_side1d_ok(CUdeviceptr p, size_t n);

/* FAKECUDA_CAPTURE_BATCH=1 (the 13.5 double): a 1D batch call on a stream
 * being captured is taken into the graph as a batch node (what a driver with
 * batch nodes may do; the 13.5 header does not say). */
static bool fc_capture_batches(void)
{
    const char *s = getenv("FAKECUDA_CAPTURE_BATCH");
    return FC_DRIVER_VERSION >= 13050 && s && !strcmp(s, "1");
}

/* The checks of a batch node's parameters (cuGraphAddNode, cuGraphNodeSetParams),
 * as the batch call makes them, but that a size of 0 disables a copy. */
static bool fc_batch_params_ok(const CUDA_MEMCPY_BATCH_NODE_PARAMS *p)
{
    if (!p->count || !p->dsts || !p->srcs || !p->sizes || !p->attrs || !p->attrsIdxs || !p->numAttrs ||
        p->numAttrs > p->count)
        return false;
    for (size_t k = 0; k < p->numAttrs; k++) {
        size_t idx = p->attrsIdxs[k];
        if (k == 0 ? idx != 0 : (idx <= p->attrsIdxs[k - 1] || idx >= p->count))
            return false;
        if (!fc_attr1d_ok(&p->attrs[k]))
            return false;
    }
    for (size_t i = 0; i < p->count; i++)
        if (p->sizes[i] && (!fc_side1d_ok(p->srcs[i], p->sizes[i]) || !fc_side1d_ok(p->dsts[i], p->sizes[i])))
            return false;
    return true;
}

static void *fc_dup(const void *p, size_t n)
{
    void *q = malloc(n ? n : 1);
    if (q && n)
        memcpy(q, p, n);
    return q;
}

/* The node's own copy of p (false: out of memory, b left empty). */
static bool fc_batch_node_set(struct fc_batch_node *b, const CUDA_MEMCPY_BATCH_NODE_PARAMS *p)
{
    struct fc_batch_node x = {
        .count = p->count, .numAttrs = p->numAttrs, .ctx = p->ctx,
        .dsts = fc_dup(p->dsts, p->count * sizeof *p->dsts), .srcs = fc_dup(p->srcs, p->count * sizeof *p->srcs),
        .sizes = fc_dup(p->sizes, p->count * sizeof *p->sizes),
        .attrsIdxs = fc_dup(p->attrsIdxs, p->numAttrs * sizeof *p->attrsIdxs),
        .attrs = fc_dup(p->attrs, p->numAttrs * sizeof *p->attrs),
    };
    fc_batch_node_free(b);
    *b = x;
    if (!x.dsts || !x.srcs || !x.sizes || !x.attrsIdxs || !x.attrs) {
        fc_batch_node_free(b);
        return false;
    }
    return true;
}

static struct fc_graph *fc_graph_copy(const struct fc_graph *g, bool exec);

/* A copy of node n (exec: it names n as its origin). */
static struct fc_node *fc_node_copy(const struct fc_node *n, bool exec)
{
    struct fc_node *x = fc_node_new();
    if (!x)
        return NULL;
    x->type = n->type;
    x->dst = n->dst;
    x->value = n->value;
    x->n = n->n;
    x->orig = exec ? n : NULL;
    if (n->type == CU_GRAPH_NODE_TYPE_MEMCPY_BATCH) {
        CUDA_MEMCPY_BATCH_NODE_PARAMS p = {
            .count = n->b.count, .dsts = n->b.dsts, .srcs = n->b.srcs, .sizes = n->b.sizes, .attrs = n->b.attrs,
            .attrsIdxs = n->b.attrsIdxs, .numAttrs = n->b.numAttrs, .ctx = n->b.ctx,
        };
        if (!fc_batch_node_set(&x->b, &p)) {
            free(x);
            return NULL;
        }
    }
    if (n->child && !(x->child = fc_graph_copy(n->child, exec))) {
        fc_node_free(x);
        return NULL;
    }
    return x;
}

static struct fc_graph *fc_graph_copy(const struct fc_graph *g, bool exec)
{
    struct fc_graph *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    for (size_t i = 0; i < g->nnodes; i++) {
        struct fc_node *x = fc_node_copy(g->nodes[i], exec);
        if (!x || !fc_graph_append(c, x)) {
            fc_node_free(x);
            fc_graph_free(c);
            return NULL;
        }
    }
    return c;
}

/* The node of executable graph g made from node `orig`, at any depth. */
static struct fc_node *fc_exec_node(struct fc_graph *g, const struct fc_node *orig)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        if (g->nodes[i]->orig == orig)
            return g->nodes[i];
        struct fc_node *x = g->nodes[i]->child ? fc_exec_node(g->nodes[i]->child, orig) : NULL;
        if (x)
            return x;
    }
    return NULL;
}

/* Run g's nodes in order (the double's work is synchronous). */
static CUresult fc_graph_run(const struct fc_graph *g)
{
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; r == CUDA_SUCCESS && i < g->nnodes; i++) {
        const struct fc_node *n = g->nodes[i];
        if (n->type == CU_GRAPH_NODE_TYPE_MEMSET)
            r = fc_cuMemsetD8_v2(n->dst, n->value, n->n);
        else if (n->type == CU_GRAPH_NODE_TYPE_MEMCPY_BATCH) {
            for (size_t k = 0; k < n->b.count; k++)
                if (n->b.sizes[k]) /* a size of 0 disables the copy */
                    memmove((void *)(uintptr_t)n->b.dsts[k], (const void *)(uintptr_t)n->b.srcs[k], n->b.sizes[k]);
        } else if (n->type == CU_GRAPH_NODE_TYPE_GRAPH)
            r = fc_graph_run(n->child);
        /* an event record node does nothing here */
    }
    return r;
}

FC_ENTRY(CUresult, cuGraphCreate, (CUgraph *phGraph, unsigned int flags))
{
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_graph *g = calloc(1, sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraph = (CUgraph)g;
    return CUDA_SUCCESS;
}

/* cuGraphAddNode: batch nodes and child graph nodes; other types are not
 * modelled (CUDA_ERROR_NOT_SUPPORTED).  Dependencies are not kept: the
 * double runs a graph's nodes in the order they were added. */
static CUresult fc_add_node(CUgraphNode *ph, CUgraph hGraph, CUgraphNodeParams *p)
{
    struct fc_graph *g = (struct fc_graph *)hGraph;
    if (!ph || !g || !p)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_node *x = fc_node_new();
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->type = p->type;
    CUresult r = CUDA_SUCCESS;
    if (p->type == CU_GRAPH_NODE_TYPE_MEMCPY_BATCH) {
        const CUDA_MEMCPY_BATCH_NODE_PARAMS *b = cbt_node_params_memcpy_batch(p);
        if (FC_DRIVER_VERSION < 13050) /* a node type the 13.0 driver does not know (its answer not measured) */
            r = CUDA_ERROR_INVALID_VALUE;
        else if (!fc_batch_params_ok(b))
            r = CUDA_ERROR_INVALID_VALUE;
        else if (!fc_batch_node_set(&x->b, b))
            r = CUDA_ERROR_OUT_OF_MEMORY;
    } else if (p->type == CU_GRAPH_NODE_TYPE_GRAPH) {
        if (!p->graph.graph)
            r = CUDA_ERROR_INVALID_VALUE;
        else if (!(x->child = fc_graph_copy((struct fc_graph *)p->graph.graph, false)))
            r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        r = CUDA_ERROR_NOT_SUPPORTED;
    }
    if (r == CUDA_SUCCESS && !fc_graph_append(g, x))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r != CUDA_SUCCESS) {
        fc_node_free(x);
        return r;
    }
    *ph = (CUgraphNode)x;
    return CUDA_SUCCESS;
}

/* The CUDA 12.2 ABI (without edge data), which cuda.h 13 no longer declares. */
CUresult cuGraphAddNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraphNodeParams *);
FC_ENTRY(CUresult, cuGraphAddNode,
         (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
          CUgraphNodeParams *nodeParams))
{
    (void)dependencies, (void)numDependencies;
    return fc_add_node(phGraphNode, hGraph, nodeParams);
}
FC_ENTRY(CUresult, cuGraphAddNode_v2,
         (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *edges,
          size_t numDependencies, CUgraphNodeParams *nodeParams))
{
    (void)dependencies, (void)edges, (void)numDependencies;
    return fc_add_node(phGraphNode, hGraph, nodeParams);
}
#if FAKECUDA_CUDA_VERSION >= 13050
FC_ENTRY(CUresult, cuGraphAddNode_v3,
         (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *edges,
          size_t numDependencies, CUgraphNodeParams *nodeParams))
{
    (void)dependencies, (void)edges, (void)numDependencies;
    return fc_add_node(phGraphNode, hGraph, nodeParams);
}
#endif

FC_ENTRY(CUresult, cuGraphAddChildGraphNode,
         (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies,
          CUgraph childGraph))
{
    (void)dependencies, (void)numDependencies;
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_GRAPH;
    p.graph.graph = childGraph;
    return fc_add_node(phGraphNode, hGraph, &p);
}

FC_ENTRY(CUresult, cuGraphChildGraphNodeGetGraph, (CUgraphNode hNode, CUgraph *phGraph))
{
    struct fc_node *n = (struct fc_node *)hNode;
    if (!n || !phGraph || n->type != CU_GRAPH_NODE_TYPE_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    *phGraph = (CUgraph)n->child;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuGraphNodeGetType, (CUgraphNode hNode, CUgraphNodeType *type))
{
    struct fc_node *n = (struct fc_node *)hNode;
    if (!n || !type)
        return CUDA_ERROR_INVALID_VALUE;
    *type = n->type;
    return CUDA_SUCCESS;
}

#if FAKECUDA_CUDA_VERSION >= 13050
/* The header: "Any pointers returned in *nodeParams point to driver-owned
 * memory associated with the node." */
FC_ENTRY(CUresult, cuGraphNodeGetParams, (CUgraphNode hNode, CUgraphNodeParams *nodeParams))
{
    struct fc_node *n = (struct fc_node *)hNode;
    if (!n || !nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    memset(nodeParams, 0, sizeof *nodeParams);
    nodeParams->type = n->type;
    if (n->type == CU_GRAPH_NODE_TYPE_MEMCPY_BATCH)
        *cbt_node_params_memcpy_batch(nodeParams) = (CUDA_MEMCPY_BATCH_NODE_PARAMS){
            .count = n->b.count, .dsts = n->b.dsts, .srcs = n->b.srcs, .sizes = n->b.sizes, .attrs = n->b.attrs,
            .attrsIdxs = n->b.attrsIdxs, .numAttrs = n->b.numAttrs, .ctx = n->b.ctx,
        };
    else if (n->type == CU_GRAPH_NODE_TYPE_GRAPH)
        nodeParams->graph.graph = (CUgraph)n->child;
    else if (n->type == CU_GRAPH_NODE_TYPE_MEMSET) {
        nodeParams->memset.dst = n->dst;
        nodeParams->memset.value = n->value;
        nodeParams->memset.elementSize = 1;
        nodeParams->memset.width = n->n;
        nodeParams->memset.height = 1;
    }
    return CUDA_SUCCESS;
}
#endif

static CUresult fc_node_set_params(CUgraphNode hNode, CUgraphNodeParams *p)
{
    struct fc_node *n = (struct fc_node *)hNode;
    if (!n || !p || p->type != n->type)
        return CUDA_ERROR_INVALID_VALUE;
    if (n->type != CU_GRAPH_NODE_TYPE_MEMCPY_BATCH)
        return CUDA_ERROR_NOT_SUPPORTED;
    const CUDA_MEMCPY_BATCH_NODE_PARAMS *b = cbt_node_params_memcpy_batch(p);
    if (!fc_batch_params_ok(b))
        return CUDA_ERROR_INVALID_VALUE;
    return fc_batch_node_set(&n->b, b) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
FC_ENTRY(CUresult, cuGraphNodeSetParams, (CUgraphNode hNode, CUgraphNodeParams *nodeParams))
{
    return fc_node_set_params(hNode, nodeParams);
}
#if FAKECUDA_CUDA_VERSION >= 13050
FC_ENTRY(CUresult, cuGraphNodeSetParams_v2, (CUgraphNode hNode, CUgraphNodeParams *nodeParams))
{
    return fc_node_set_params(hNode, nodeParams);
}
#endif

/* In an executable graph only dsts, srcs and sizes may change: count,
 * numAttrs and the contents of attrs and attrsIdxs must be the node's. */
FC_ENTRY(CUresult, cuGraphExecNodeSetParams, (CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams *nodeParams))
{
    struct fc_exec *e = (struct fc_exec *)hGraphExec;
    if (!e || !hNode || !nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_node *x = fc_exec_node(&e->g, (const struct fc_node *)hNode);
    if (!x || x->type != nodeParams->type)
        return CUDA_ERROR_INVALID_VALUE;
    if (x->type != CU_GRAPH_NODE_TYPE_MEMCPY_BATCH)
        return CUDA_ERROR_NOT_SUPPORTED;
    const CUDA_MEMCPY_BATCH_NODE_PARAMS *b = cbt_node_params_memcpy_batch(nodeParams);
    if (b->count != x->b.count || b->numAttrs != x->b.numAttrs || !b->attrs || !b->attrsIdxs ||
        memcmp(b->attrs, x->b.attrs, b->numAttrs * sizeof *b->attrs) ||
        memcmp(b->attrsIdxs, x->b.attrsIdxs, b->numAttrs * sizeof *b->attrsIdxs) || !fc_batch_params_ok(b))
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(x->b.dsts, b->dsts, b->count * sizeof *b->dsts);
    memcpy(x->b.srcs, b->srcs, b->count * sizeof *b->srcs);
    memcpy(x->b.sizes, b->sizes, b->count * sizeof *b->sizes);
    return CUDA_SUCCESS;
}

/* Can executable graph x take graph g's parameters (same nodes, types and
 * batch shapes, in order, child graphs alike)?  The node that differs in *bad. */
static bool fc_same_topology(const struct fc_graph *x, const struct fc_graph *g, const struct fc_node **bad)
{
    if (x->nnodes != g->nnodes) {
        *bad = NULL;
        return false;
    }
    for (size_t i = 0; i < g->nnodes; i++) {
        const struct fc_node *a = x->nodes[i], *b = g->nodes[i];
        if (a->type != b->type || a->b.count != b->b.count || a->b.numAttrs != b->b.numAttrs ||
            (a->child && !fc_same_topology(a->child, b->child, bad))) {
            if (!(a->child && a->type == b->type))
                *bad = b;
            return false;
        }
    }
    return true;
}

/* x takes g's parameters (fc_same_topology held); its nodes now name g's. */
static bool fc_update_from(struct fc_graph *x, const struct fc_graph *g)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        struct fc_node *a = x->nodes[i];
        const struct fc_node *b = g->nodes[i];
        a->orig = b;
        a->dst = b->dst, a->value = b->value, a->n = b->n;
        if (b->type == CU_GRAPH_NODE_TYPE_MEMCPY_BATCH) {
            CUDA_MEMCPY_BATCH_NODE_PARAMS p = {
                .count = b->b.count, .dsts = b->b.dsts, .srcs = b->b.srcs, .sizes = b->b.sizes,
                .attrs = b->b.attrs, .attrsIdxs = b->b.attrsIdxs, .numAttrs = b->b.numAttrs, .ctx = b->b.ctx,
            };
            if (!fc_batch_node_set(&a->b, &p))
                return false;
        }
        if (a->child && !fc_update_from(a->child, b->child))
            return false;
    }
    return true;
}

/* cuGraphExecUpdate: the executable graph takes hGraph's parameters when the
 * two have the same nodes (the double keeps no edges: in the same order). */
FC_ENTRY(CUresult, cuGraphExecUpdate_v2, (CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *info))
{
    struct fc_exec *e = (struct fc_exec *)hGraphExec;
    const struct fc_graph *g = (const struct fc_graph *)hGraph;
    if (!e || !g || !info)
        return CUDA_ERROR_INVALID_VALUE;
    memset(info, 0, sizeof *info);
    const struct fc_node *bad = NULL;
    if (!fc_same_topology(&e->g, g, &bad)) {
        info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        info->errorNode = (CUgraphNode)bad;
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    if (!fc_update_from(&e->g, g))
        return CUDA_ERROR_OUT_OF_MEMORY;
    info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuGraphDestroyNode, (CUgraphNode hNode))
{
    struct fc_node *n = (struct fc_node *)hNode;
    if (!n || !n->owner)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_graph *g = n->owner;
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i] == n) {
            memmove(&g->nodes[i], &g->nodes[i + 1], (g->nnodes - i - 1) * sizeof *g->nodes);
            g->nnodes--;
            break;
        }
    fc_node_free(n);
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuGraphClone, (CUgraph *phGraphClone, CUgraph originalGraph))
{
    if (!phGraphClone || !originalGraph)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_graph *c = fc_graph_copy((struct fc_graph *)originalGraph, false);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraphClone = (CUgraph)c;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuGraphGetNodes, (CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes))
{
    struct fc_graph *g = (struct fc_graph *)hGraph;
    if (!g || !numNodes)
        return CUDA_ERROR_INVALID_VALUE;
    if (nodes)
        for (size_t i = 0; i < *numNodes && i < g->nnodes; i++)
            nodes[i] = (CUgraphNode)g->nodes[i];
    *numNodes = g->nnodes;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuGraphDestroy, (CUgraph hGraph))
{
    if (!hGraph)
        return CUDA_ERROR_INVALID_VALUE;
    fc_graph_free((struct fc_graph *)hGraph);
    return CUDA_SUCCESS;
}

static CUresult fc_instantiate(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    struct fc_graph *g = (struct fc_graph *)hGraph;
    if (!phGraphExec || !g || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct fc_exec *e = calloc(1, sizeof *e);
    struct fc_graph *c = e ? fc_graph_copy(g, true) : NULL;
    if (!c) {
        free(e);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->g = *c;
    free(c);
    *phGraphExec = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuGraphInstantiateWithFlags, (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags))
{
    return fc_instantiate(phGraphExec, hGraph, flags);
}

static CUresult fc_instantiate_with_params(CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_instantiate(ph, g, p->flags);
    p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}
FC_ENTRY(CUresult, cuGraphInstantiateWithParams, (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p))
{
    return fc_instantiate_with_params(phGraphExec, hGraph, p);
}
FC_ENTRY(CUresult, cuGraphInstantiateWithParams_ptsz,
         (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p))
{
    return fc_instantiate_with_params(phGraphExec, hGraph, p);
}

static CUresult fc_graph_launch(CUgraphExec hExec, CUstream h, bool ptsz)
{
    struct fc_exec *e = (struct fc_exec *)hExec;
    enum fc_stream_kind k;
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_stream_classify(h, ptsz, &k, NULL);
    if (r != CUDA_SUCCESS)
        return r;
    /* Onto a stream being captured: the graph becomes a child graph node of
     * the capture's graph (the double's model: the header does not say) */
    struct fc_node *x = NULL;
    if (k == FC_STREAM_USER && fc_capturing(h)) {
        if (!(x = fc_node_new()))
            return CUDA_ERROR_OUT_OF_MEMORY;
        x->type = CU_GRAPH_NODE_TYPE_GRAPH;
        if (!(x->child = fc_graph_copy(&e->g, false))) {
            fc_node_free(x);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        pthread_mutex_lock(&fc_lock);
        struct fc_stream *s = fc_stream_find_locked(h);
        r = !s || s->cap_status != CU_STREAM_CAPTURE_STATUS_ACTIVE ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
            : fc_graph_append(s->cap_graph, x)                    ? CUDA_SUCCESS
                                                                    : CUDA_ERROR_OUT_OF_MEMORY;
        pthread_mutex_unlock(&fc_lock);
        if (r != CUDA_SUCCESS)
            fc_node_free(x);
        return r;
    }
    return fc_graph_run(&e->g);
}
FC_ENTRY(CUresult, cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream))
{
    return fc_graph_launch(hGraphExec, hStream, false);
}
FC_ENTRY(CUresult, cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream))
{
    return fc_graph_launch(hGraphExec, hStream, true);
}

FC_ENTRY(CUresult, cuGraphExecDestroy, (CUgraphExec hGraphExec))
{
    struct fc_exec *e = (struct fc_exec *)hGraphExec;
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < e->g.nnodes; i++)
        fc_node_free(e->g.nodes[i]);
    free(e->g.nodes);
    free(e);
    return CUDA_SUCCESS;
}

/* A 1D batch taken into the graph of stream h's capture (FAKECUDA_CAPTURE_BATCH=1). */
static CUresult fc_capture_batch_node(CUstream h, const CUDA_MEMCPY_BATCH_NODE_PARAMS *p)
{
    struct fc_node *x = fc_node_new();
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->type = CU_GRAPH_NODE_TYPE_MEMCPY_BATCH;
    CUresult r = fc_batch_node_set(&x->b, p) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fc_lock);
    struct fc_stream *s = fc_stream_find_locked(h);
    if (r == CUDA_SUCCESS && (!s || s->cap_status != CU_STREAM_CAPTURE_STATUS_ACTIVE))
        r = s && s->cap_status == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                                                                       : CUDA_ERROR_ILLEGAL_STATE;
    if (r == CUDA_SUCCESS && !fc_graph_append(s->cap_graph, x))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&fc_lock);
    if (r != CUDA_SUCCESS)
        fc_node_free(x);
    return r;
}

/* Work on a stream is done when its call returns, so a host function runs at
 * once, in the caller's thread, after everything enqueued before it. */
static CUresult fc_launch_host_func(CUstream h, bool ptsz, CUhostFn fn, void *userData)
{
    enum fc_stream_kind k;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_stream_classify(h, ptsz, &k, NULL);
    if (r != CUDA_SUCCESS)
        return r;
    fn(userData);
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData))
{
    return fc_launch_host_func(hStream, false, fn, userData);
}
FC_ENTRY(CUresult, cuLaunchHostFunc_ptsz, (CUstream hStream, CUhostFn fn, void *userData))
{
    return fc_launch_host_func(hStream, true, fn, userData);
}

/* ----------------------------------------------------------------- events */

/*
 * Timing events.  Work on a stream is done when its call returns, so an
 * event's "GPU" time is the host's CLOCK_MONOTONIC when it is recorded.
 * FAKECUDA_EVENT_LAG=N: an event reads as not complete (cuEventQuery,
 * cuEventElapsedTime answer CUDA_ERROR_NOT_READY) for its first N queries
 * after each record, as on a GPU still busy.  FAKECUDA_EVENT_FAIL=1: events
 * cannot be created.
 */
struct fc_event {
    struct fc_ctx *ctx;
    unsigned flags;
    bool recorded;
    unsigned queries;
    uint64_t ns;
};

/* The live events, a set of their handles (open addressing; FC_GONE marks
 * a destroyed one's place), so that finding one costs the same however many
 * the program made; and the GPU's progress: every event recorded at or
 * before fc_done_ns is done (the GPU works in order).  Under fc_lock. */
#define FC_GONE ((struct fc_event *)1)
static struct fc_event **fc_ev_set;
static size_t fc_ev_cap, fc_ev_used; /* used: places taken, live or gone */
static uint64_t fc_done_ns;

static size_t fc_ev_home(const void *h, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)h * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 20) & (cap - 1);
}

static struct fc_event **fc_event_place_locked(CUevent h)
{
    if (!fc_ev_cap || !h || h == (CUevent)FC_GONE)
        return NULL;
    for (size_t i = fc_ev_home(h, fc_ev_cap);; i = (i + 1) & (fc_ev_cap - 1)) {
        if (!fc_ev_set[i])
            return NULL;
        if ((CUevent)fc_ev_set[i] == h)
            return &fc_ev_set[i];
    }
}

static struct fc_event *fc_event_find_locked(CUevent h)
{
    struct fc_event **p = fc_event_place_locked(h);
    return p ? *p : NULL;
}

static bool fc_event_add_locked(struct fc_event *e)
{
    if (2 * (fc_ev_used + 1) > fc_ev_cap) {
        size_t cap = fc_ev_cap ? 2 * fc_ev_cap : 64;
        struct fc_event **set = calloc(cap, sizeof *set);
        if (!set)
            return false;
        size_t used = 0;
        for (size_t k = 0; k < fc_ev_cap; k++) {
            struct fc_event *p = fc_ev_set[k];
            if (!p || p == FC_GONE)
                continue;
            size_t i = fc_ev_home(p, cap);
            while (set[i])
                i = (i + 1) & (cap - 1);
            set[i] = p;
            used++;
        }
        free(fc_ev_set);
        fc_ev_set = set;
        fc_ev_cap = cap;
        fc_ev_used = used;
    }
    size_t i = fc_ev_home(e, fc_ev_cap);
    while (fc_ev_set[i])
        i = (i + 1) & (fc_ev_cap - 1);
    fc_ev_set[i] = e;
    fc_ev_used++;
    return true;
}

FC_ENTRY(CUresult, cuEventCreate, (CUevent *phEvent, unsigned int Flags))
{
    if (!phEvent)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fc_env_uint("FAKECUDA_EVENT_FAIL"))
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct fc_event *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->ctx = fc_current;
    e->flags = Flags;
    pthread_mutex_lock(&fc_lock);
    bool added = fc_event_add_locked(e);
    pthread_mutex_unlock(&fc_lock);
    if (!added) {
        free(e);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *phEvent = (CUevent)e;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuEventDestroy_v2, (CUevent hEvent))
{
    pthread_mutex_lock(&fc_lock);
    struct fc_event **pp = fc_event_place_locked(hEvent);
    struct fc_event *e = pp ? *pp : NULL;
    if (pp)
        *pp = FC_GONE;
    pthread_mutex_unlock(&fc_lock);
    free(e);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult fc_event_record(CUevent hEvent, CUstream h, bool ptsz)
{
    enum fc_stream_kind k;
    struct fc_stream st;
    CUresult r = fc_stream_classify(h, ptsz, &k, &st);
    if (r != CUDA_SUCCESS)
        return r;
    struct fc_ctx *sc = k == FC_STREAM_USER ? st.ctx : fc_current;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    pthread_mutex_lock(&fc_lock);
    struct fc_event *e = fc_event_find_locked(hEvent);
    /* on a stream being captured, the record is a node of the graph (as the
     * driver makes an event record node), not a record now */
    struct fc_stream *cs = k == FC_STREAM_USER ? fc_stream_find_locked(h) : NULL;
    if (e && e->ctx == sc && cs && cs->cap_status == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        CUresult r2 = fc_graph_append_memset(cs->cap_graph, 0, 0, 0);
        pthread_mutex_unlock(&fc_lock);
        return r2;
    }
    if (e && e->ctx == sc) {
        e->recorded = true;
        e->queries = 0;
        e->ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    pthread_mutex_unlock(&fc_lock);
    return !e ? CUDA_ERROR_INVALID_HANDLE : e->ctx != sc ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}
FC_ENTRY(CUresult, cuEventRecord, (CUevent hEvent, CUstream hStream)) { return fc_event_record(hEvent, hStream, false); }
FC_ENTRY(CUresult, cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream)) { return fc_event_record(hEvent, hStream, true); }

/* Is e complete (one query counted)?  Callers hold fc_lock. */
static CUresult fc_event_done_locked(struct fc_event *e)
{
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!e->recorded || e->ns <= fc_done_ns)
        return CUDA_SUCCESS;
    if (e->queries < fc_env_uint("FAKECUDA_EVENT_LAG")) {
        e->queries++;
        return CUDA_ERROR_NOT_READY;
    }
    /* the GPU works in order: what was recorded before is done too */
    fc_done_ns = e->ns;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuEventQuery, (CUevent hEvent))
{
    if (!fc_unsafe_call_ok())
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    pthread_mutex_lock(&fc_lock);
    CUresult r = fc_event_done_locked(fc_event_find_locked(hEvent));
    pthread_mutex_unlock(&fc_lock);
    return r;
}

FC_ENTRY(CUresult, cuEventSynchronize, (CUevent hEvent))
{
    if (!fc_unsafe_call_ok())
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    pthread_mutex_lock(&fc_lock);
    struct fc_event *e = fc_event_find_locked(hEvent);
    if (e)
        e->queries = UINT_MAX;
    pthread_mutex_unlock(&fc_lock);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FC_ENTRY(CUresult, cuEventElapsedTime_v2, (float *pMilliseconds, CUevent hStart, CUevent hEnd))
{
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fc_lock);
    struct fc_event *a = fc_event_find_locked(hStart), *b = fc_event_find_locked(hEnd);
    CUresult r = !a || !b ? CUDA_ERROR_INVALID_HANDLE
               : !a->recorded || !b->recorded || (a->flags | b->flags) & CU_EVENT_DISABLE_TIMING ? CUDA_ERROR_INVALID_HANDLE
               : a->ctx != b->ctx ? CUDA_ERROR_INVALID_CONTEXT
               /* a poll like cuEventQuery's: the end first (what was recorded before it is done with it) */
               : fc_event_done_locked(b) != CUDA_SUCCESS || fc_event_done_locked(a) != CUDA_SUCCESS
                   ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        *pMilliseconds = (float)(((double)b->ns - (double)a->ns) / 1e6);
    pthread_mutex_unlock(&fc_lock);
    return r;
}

/* The context stack (cuCtxPushCurrent/cuCtxPopCurrent): the current context
 * is its top. */
#define FC_CTX_STACK 16
static __thread struct fc_ctx *fc_ctx_stack[FC_CTX_STACK];
static __thread int fc_ctx_depth;

FC_ENTRY(CUresult, cuCtxPushCurrent_v2, (CUcontext ctx))
{
    atomic_fetch_add(&fc_ctx_pushes, 1);
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&fc_lock);
    bool ok = fc_ctx_known_locked(ctx);
    pthread_mutex_unlock(&fc_lock);
    if (!ok)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fc_ctx_depth == FC_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_ctx_stack[fc_ctx_depth++] = fc_current;
    fc_current = (struct fc_ctx *)ctx;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuCtxPopCurrent_v2, (CUcontext *pctx))
{
    if (!fc_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx)
        *pctx = (CUcontext)fc_current;
    fc_current = fc_ctx_depth ? fc_ctx_stack[--fc_ctx_depth] : NULL;
    return CUDA_SUCCESS;
}

/* ----------------------------------------------------------------- arrays */

static size_t fc_format_size(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4;
    default:
        return 0; /* packed, YUV and block-compressed formats: not modelled */
    }
}

FC_ENTRY(CUresult, cuArray3DCreate_v2, (CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc))
{
    if (!pHandle || !desc)
        return CUDA_ERROR_INVALID_VALUE;
    size_t fsize = fc_format_size(desc->Format);
    unsigned ch = desc->NumChannels;
    if (fsize == 0 || (ch != 1 && ch != 2 && ch != 4) || desc->Width == 0 ||
        (desc->Height == 0 && desc->Depth != 0 && !(desc->Flags & CUDA_ARRAY3D_LAYERED)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_current)
        return CUDA_ERROR_INVALID_CONTEXT;

    /* The handle destroyed last is handed out again, as a driver may: tests
     * rely on it to see that a reused handle is not mistaken for the old array. */
    pthread_mutex_lock(&fc_lock);
    struct fc_array *a = fc_spare_array;
    fc_spare_array = NULL;
    pthread_mutex_unlock(&fc_lock);
    if (a)
        memset(a, 0, sizeof *a);
    else if (!(a = calloc(1, sizeof *a)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->desc = *desc;
    a->w = desc->Width;
    a->h = desc->Height ? desc->Height : 1;
    a->d = desc->Depth ? desc->Depth : 1;
    a->elem = fsize * ch;
    a->ctx = fc_current;
    size_t bytes;
    if (__builtin_mul_overflow(a->w, a->h, &bytes) || __builtin_mul_overflow(bytes, a->d, &bytes) ||
        __builtin_mul_overflow(bytes, a->elem, &bytes) || !(a->data = calloc(1, bytes))) {
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&fc_lock);
    a->next = fc_arrays;
    fc_arrays = a;
    pthread_mutex_unlock(&fc_lock);
    *pHandle = (CUarray)a;
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuArray3DGetDescriptor_v2, (CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray))
{
    if (!pArrayDescriptor)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fc_lock);
    struct fc_array *a = fc_array_find_locked(hArray);
    if (a)
        *pArrayDescriptor = a->desc;
    pthread_mutex_unlock(&fc_lock);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FC_ENTRY(CUresult, cuArrayDestroy, (CUarray hArray))
{
    pthread_mutex_lock(&fc_lock);
    struct fc_array **pp = &fc_arrays;
    while (*pp && (CUarray)*pp != hArray)
        pp = &(*pp)->next;
    struct fc_array *a = *pp;
    if (a)
        *pp = a->next;
    pthread_mutex_unlock(&fc_lock);
    if (!a)
        return CUDA_ERROR_INVALID_HANDLE;
    free(a->data);
    pthread_mutex_lock(&fc_lock);
    if (!fc_spare_array) {
        fc_spare_array = a;
        a = NULL;
    }
    pthread_mutex_unlock(&fc_lock);
    free(a);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------- the batch */

/* Where one side of an op starts and how it steps, in bytes. */
struct fc_side {
    unsigned char *origin;
    size_t row_pitch, layer_pitch;
};

/* An array operand, looked up and copied out under the lock. */
struct fc_array_ref {
    size_t w, h, d, elem;
    unsigned char *data;
};

static bool fc_array_ref(CUarray h, struct fc_array_ref *out)
{
    if (!h)
        return false;
    pthread_mutex_lock(&fc_lock);
    struct fc_array *a = fc_array_find_locked(h);
    if (a)
        *out = (struct fc_array_ref){ a->w, a->h, a->d, a->elem, a->data };
    pthread_mutex_unlock(&fc_lock);
    return a != NULL;
}

/*
 * A pointer operand.  Only device and managed allocations are bounds-checked:
 * pinned memory is not, and memory the driver does not know is pageable host
 * memory that is simply touched (an unmapped address crashes, as on the H200).
 */
static CUresult fc_resolve_pointer(const CUmemcpy3DOperand *o, const CUextent3D *ext, size_t elem,
                                   struct fc_side *side)
{
    if (o->op.ptr.ptr == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (o->op.ptr.rowLength != 0 && o->op.ptr.rowLength < ext->width)
        return CUDA_ERROR_INVALID_VALUE;
    if (o->op.ptr.layerHeight != 0 && o->op.ptr.layerHeight < ext->height)
        return CUDA_ERROR_INVALID_VALUE;
    size_t row_len = o->op.ptr.rowLength ? o->op.ptr.rowLength : ext->width;
    size_t layer_h = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : ext->height;
    size_t row_pitch, layer_pitch, rows, span, row_bytes, footprint;
    if (__builtin_mul_overflow(row_len, elem, &row_pitch) ||
        __builtin_mul_overflow(layer_h, row_pitch, &layer_pitch) ||
        __builtin_mul_overflow(ext->depth - 1, layer_h, &rows) ||
        __builtin_add_overflow(rows, ext->height - 1, &rows) ||
        __builtin_mul_overflow(rows, row_pitch, &span) ||
        __builtin_mul_overflow(ext->width, elem, &row_bytes) ||
        __builtin_add_overflow(span, row_bytes, &footprint))
        return CUDA_ERROR_INVALID_VALUE;

    uintptr_t p = (uintptr_t)o->op.ptr.ptr;
    struct fc_alloc a;
    if (fc_alloc_lookup(p, &a) && a.kind != FC_MEM_PINNED && !fc_fits(p - a.base, footprint, a.size))
        return CUDA_ERROR_INVALID_VALUE;
    *side = (struct fc_side){ (unsigned char *)p, row_pitch, layer_pitch };
    return CUDA_SUCCESS;
}

/* An array operand: offset and extent are in elements. */
static CUresult fc_resolve_array(const CUmemcpy3DOperand *o, const CUextent3D *ext, const struct fc_array_ref *a,
                                 struct fc_side *side)
{
    const CUoffset3D *off = &o->op.array.offset;
    if (!fc_fits(off->x, ext->width, a->w) || !fc_fits(off->y, ext->height, a->h) ||
        !fc_fits(off->z, ext->depth, a->d))
        return CUDA_ERROR_INVALID_VALUE;
    size_t row_pitch = a->w * a->elem, layer_pitch = row_pitch * a->h;
    side->origin = a->data + off->z * layer_pitch + off->y * row_pitch + off->x * a->elem;
    side->row_pitch = row_pitch;
    side->layer_pitch = layer_pitch;
    return CUDA_SUCCESS;
}

/* Checks one op as the H200 does; on success fills in what the copy needs. */
static CUresult fc_resolve_op(const CUDA_MEMCPY3D_BATCH_OP *op, struct fc_side *src, struct fc_side *dst,
                              size_t *row_bytes)
{
    const CUextent3D *ext = &op->extent;
    if (op->srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || op->srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY)
        return CUDA_ERROR_INVALID_VALUE;
    if (op->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)
        return CUDA_ERROR_INVALID_VALUE;
    if (ext->width == 0 || ext->height == 0 || ext->depth == 0)
        return CUDA_ERROR_INVALID_VALUE;

    const CUmemcpy3DOperand *ops[2] = { &op->src, &op->dst };
    struct fc_array_ref arr[2];
    size_t elem = 1; /* pointer <-> pointer copies count in bytes */
    for (int i = 0; i < 2; i++) {
        if (ops[i]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
            if (!fc_array_ref(ops[i]->op.array.array, &arr[i]))
                return CUDA_ERROR_INVALID_VALUE;
            elem = arr[i].elem;
        } else if (ops[i]->type != CU_MEMCPY_OPERAND_TYPE_POINTER) {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (ops[0]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY && ops[1]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY &&
        arr[0].elem != arr[1].elem)
        return CUDA_ERROR_INVALID_VALUE;

    struct fc_side *sides[2] = { src, dst };
    for (int i = 0; i < 2; i++) {
        CUresult r = ops[i]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY
                         ? fc_resolve_array(ops[i], ext, &arr[i], sides[i])
                         : fc_resolve_pointer(ops[i], ext, elem, sides[i]);
        if (r != CUDA_SUCCESS)
            return r;
    }
    *row_bytes = ext->width * elem; /* cannot overflow: checked for the operands */
    return CUDA_SUCCESS;
}

/*
 * What the H200 checks op by op first, in one pass over the batch; its
 * failures are the ones the 12.8 ABI reports with the op's index (measured
 * by tests/gpu).  A NULL pointer and footprints past an allocation or an
 * array are found afterwards (fc_resolve_op) and leave failIdx at SIZE_MAX.
 */
static bool fc_op_well_formed(const CUDA_MEMCPY3D_BATCH_OP *op)
{
    const CUextent3D *ext = &op->extent;
    if (op->srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || op->srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY)
        return false;
    if (op->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)
        return false;
    if (ext->width == 0 || ext->height == 0 || ext->depth == 0)
        return false;
    const CUmemcpy3DOperand *ops[2] = { &op->src, &op->dst };
    struct fc_array_ref arr[2];
    for (int i = 0; i < 2; i++) {
        if (ops[i]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
            if (!fc_array_ref(ops[i]->op.array.array, &arr[i]))
                return false;
        } else if (ops[i]->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
            if (ops[i]->op.ptr.rowLength != 0 && ops[i]->op.ptr.rowLength < ext->width)
                return false;
            if (ops[i]->op.ptr.layerHeight != 0 && ops[i]->op.ptr.layerHeight < ext->height)
                return false;
        } else {
            return false;
        }
    }
    if (ops[0]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY && ops[1]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY &&
        arr[0].elem != arr[1].elem)
        return false;
    return true;
}

/* Every batch call, 3D or 1D, counted and slowed down alike. */
static void fc_batch_enter(void)
{
    atomic_fetch_add(&fc_batch_count, 1);
    /* FAKECUDA_BATCH_SLEEP_US: every batch call takes at least that long (tests of driver_ns). */
    static long sleep_us_once = -1; /* relaxed atomics: threads may each set it (the same value) */
    long sleep_us = __atomic_load_n(&sleep_us_once, __ATOMIC_RELAXED);
    if (sleep_us < 0) {
        const char *e = getenv("FAKECUDA_BATCH_SLEEP_US");
        sleep_us = e ? atol(e) : 0;
        __atomic_store_n(&sleep_us_once, sleep_us, __ATOMIC_RELAXED);
    }
    if (sleep_us > 0) {
        struct timespec ts = {sleep_us / 1000000, (sleep_us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
    }
}

/* A stream a batch may be enqueued on: neither NULL nor the legacy stream
 * (checked by the callers, with their own failIdx rules), the per-thread
 * stream, or one created and not destroyed. */
static bool fc_batch_stream_known(CUstream hStream)
{
    if (hStream == CU_STREAM_PER_THREAD)
        return true;
    pthread_mutex_lock(&fc_lock);
    bool known = fc_stream_find_locked(hStream) != NULL;
    pthread_mutex_unlock(&fc_lock);
    return known;
}

/*
 * The common body of the four entry points.  All ops are checked before any
 * is copied, so a rejected batch leaves memory as it was; the copies are
 * synchronous, so every stream is always idle.
 */
static CUresult fc_batch(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags,
                         CUstream hStream)
{
    fc_batch_enter();
    /* The H200 returns before touching *failIdx for a NULL stream. */
    if (hStream == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    size_t fail_was = failIdx ? *failIdx : 0;
    if (failIdx)
        *failIdx = SIZE_MAX;
    if (numOps == 0 || !opList || flags != 0 || hStream == CU_STREAM_LEGACY)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_batch_stream_known(hStream))
        return CUDA_ERROR_INVALID_HANDLE;

    for (size_t i = 0; i < numOps; i++) {
        if (!fc_op_well_formed(&opList[i])) {
            if (failIdx)
                *failIdx = i;
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    /* A stream being captured: refused once the ops' form is checked (a bad
     * op still gives INVALID_VALUE), before any memory is looked at (an
     * unmapped source does not crash), failIdx as it was. */
    if (fc_capturing(hStream)) {
        if (failIdx)
            *failIdx = fail_was;
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    struct fc_side src, dst;
    size_t row_bytes;
    for (size_t i = 0; i < numOps; i++) {
        CUresult r = fc_resolve_op(&opList[i], &src, &dst, &row_bytes);
        if (r != CUDA_SUCCESS)
            return r; /* failIdx stays SIZE_MAX */
    }
    for (size_t i = 0; i < numOps; i++) {
        fc_resolve_op(&opList[i], &src, &dst, &row_bytes);
        for (size_t z = 0; z < opList[i].extent.depth; z++)
            for (size_t y = 0; y < opList[i].extent.height; y++)
                fc_dma(dst.origin + z * dst.layer_pitch + y * dst.row_pitch,
                        src.origin + z * src.layer_pitch + y * src.row_pitch, row_bytes);
    }
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuMemcpy3DBatchAsync_v2,
         (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream))
{
    return fc_batch(numOps, opList, NULL, flags, hStream);
}

FC_ENTRY(CUresult, cuMemcpy3DBatchAsync_v2_ptsz,
         (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags, CUstream hStream))
{
    return fc_batch(numOps, opList, NULL, flags, hStream);
}

/* The CUDA 12.8 ABI, still exported by the 13.0 driver. */
FC_ENTRY(CUresult, cuMemcpy3DBatchAsync,
         (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream))
{
    return fc_batch(numOps, opList, failIdx, flags, hStream);
}

FC_ENTRY(CUresult, cuMemcpy3DBatchAsync_ptsz,
         (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx, unsigned long long flags, CUstream hStream))
{
    return fc_batch(numOps, opList, failIdx, flags, hStream);
}

/* ------------------------------------------------------- the 1D batch */

/*
 * cuMemcpyBatchAsync: `count` copies of sizes[i] bytes from srcs[i] to
 * dsts[i]; attribute k applies to the copies from attrsIdxs[k] on.  What the
 * H200 does (tests/gpu/measured/table1d-h200.txt), in order:
 *
 *  1. without reading any array: a NULL stream is INVALID_VALUE with failIdx
 *     untouched; then failIdx = SIZE_MAX, and count 0, a NULL array,
 *     numAttrs 0 or above count, or the legacy stream are INVALID_VALUE
 *     (a stream the double does not know is INVALID_HANDLE, as for the 3D
 *     call; the table has no such row);
 *  2. every attribute and its index, all numAttrs of them before any copy:
 *     indices start at 0, strictly increase and stay below count; the access
 *     order is STREAM, DURING_API_CALL or ANY; flags hold no bit but
 *     PREFER_OVERLAP_WITH_COMPUTE; a location hint is of a known type (up to
 *     HOST_NUMA_CURRENT) and, for DEVICE, names an existing device.  Any
 *     failure is INVALID_VALUE with failIdx SIZE_MAX and nothing copied;
 *  3. the copies in order, each read (dsts[i], srcs[i], sizes[i]) only when
 *     its turn comes: one of 0 bytes, with a NULL pointer, or reaching past
 *     its device or managed allocation is INVALID_VALUE with failIdx = i; the
 *     copies before it are done, the ones after it are not, and no entry past
 *     it is read.  Host memory the driver does not know is touched as it is:
 *     an unmapped address kills the process with SIGSEGV, as on the H200.
 *
 * The double copies at call time, whatever the access order: a STREAM-ordered
 * copy that the H200 reads later, in stream order, is read here during the
 * call (the table's deferred_* rows show the difference).
 */
static bool fc_lochint_ok(const CUmemLocation *l)
{
    if ((unsigned)l->type > (unsigned)CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
        return false;
    return l->type != CU_MEM_LOCATION_TYPE_DEVICE || fc_device_ok(l->id);
}

static bool fc_attr1d_ok(const CUmemcpyAttributes *a)
{
    if (a->srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || a->srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY)
        return false;
    if (a->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)
        return false;
    return fc_lochint_ok(&a->srcLocHint) && fc_lochint_ok(&a->dstLocHint);
}

/* Device and managed memory is bounded by its allocation; pinned memory and
 * memory the driver does not know are not checked. */
static bool fc_side1d_ok(CUdeviceptr p, size_t n)
{
    struct fc_alloc a;
    if (p == 0)
        return false;
    if (fc_alloc_lookup((uintptr_t)p, &a) && a.kind != FC_MEM_PINNED && !fc_fits((uintptr_t)p - a.base, n, a.size))
        return false;
    return true;
}

static CUresult fc_batch1d(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                           CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                           CUstream hStream)
{
    fc_batch_enter();
    if (hStream == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (failIdx)
        *failIdx = SIZE_MAX;
    if (count == 0 || !dsts || !srcs || !sizes || !attrs || !attrsIdxs || numAttrs == 0 || numAttrs > count ||
        hStream == CU_STREAM_LEGACY)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_batch_stream_known(hStream))
        return CUDA_ERROR_INVALID_HANDLE;
    /* A stream being captured: refused before any copy is read (a copy of 0
     * bytes gives the same answer), failIdx SIZE_MAX.  Where the attribute
     * checks stand against it is not measured: here, before them. */
    const bool captured = fc_capturing(hStream);
    if (captured && !fc_capture_batches())
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;

    for (size_t k = 0; k < numAttrs; k++) {
        size_t idx = attrsIdxs[k];
        if (k == 0 ? idx != 0 : (idx <= attrsIdxs[k - 1] || idx >= count))
            return CUDA_ERROR_INVALID_VALUE;
        if (!fc_attr1d_ok(&attrs[k]))
            return CUDA_ERROR_INVALID_VALUE;
    }

    for (size_t i = 0; i < count; i++) {
        CUdeviceptr dst = dsts[i], src = srcs[i];
        size_t n = sizes[i];
        if (n == 0 || !fc_side1d_ok(src, n) || !fc_side1d_ok(dst, n)) {
            if (failIdx)
                *failIdx = i;
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (!captured)
            memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    }
    if (captured) {
        const CUDA_MEMCPY_BATCH_NODE_PARAMS p = {.count = count, .dsts = dsts, .srcs = srcs, .sizes = sizes,
                                                 .attrs = attrs, .attrsIdxs = attrsIdxs, .numAttrs = numAttrs};
        return fc_capture_batch_node(hStream, &p);
    }
    return CUDA_SUCCESS;
}

FC_ENTRY(CUresult, cuMemcpyBatchAsync_v2,
         (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
          size_t *attrsIdxs, size_t numAttrs, CUstream hStream))
{
    return fc_batch1d(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream);
}

FC_ENTRY(CUresult, cuMemcpyBatchAsync_v2_ptsz,
         (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
          size_t *attrsIdxs, size_t numAttrs, CUstream hStream))
{
    return fc_batch1d(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream);
}

/* The CUDA 12.8 ABI, still exported by the 13.0 driver. */
FC_ENTRY(CUresult, cuMemcpyBatchAsync,
         (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
          size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream))
{
    return fc_batch1d(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream);
}

FC_ENTRY(CUresult, cuMemcpyBatchAsync_ptsz,
         (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
          size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream hStream))
{
    return fc_batch1d(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream);
}

/* ------------------------------------------ the single-op forms (13.2) */

#if FAKECUDA_CUDA_VERSION >= 13020
/*
 * cuMemcpy3DWithAttributesAsync takes one op of the batch's own struct and
 * cuMemcpyWithAttributesAsync one copy with its attribute; the 13.2 header
 * refers to the batch calls for what they accept.  The double answers each
 * as the batch of one it describes: the 3D op through fc_batch (a NULL op is
 * a NULL opList), the copy through fc_batch1d with count 1, numAttrs 1 and
 * attrsIdxs {0} (a NULL attribute is a NULL attrs).  From the header alone.
 */
static CUresult fc_one1d(CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes *attr, CUstream hStream)
{
    size_t idx0 = 0;
    return fc_batch1d(&dst, &src, &size, 1, attr, &idx0, 1, NULL, hStream);
}

FC_ENTRY(CUresult, cuMemcpy3DWithAttributesAsync, (CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags, CUstream hStream))
{
    return fc_batch(1, op, NULL, flags, hStream);
}

FC_ENTRY(CUresult, cuMemcpy3DWithAttributesAsync_ptsz,
         (CUDA_MEMCPY3D_BATCH_OP *op, unsigned long long flags, CUstream hStream))
{
    return fc_batch(1, op, NULL, flags, hStream);
}

FC_ENTRY(CUresult, cuMemcpyWithAttributesAsync,
         (CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes *attr, CUstream hStream))
{
    return fc_one1d(dst, src, size, attr, hStream);
}

FC_ENTRY(CUresult, cuMemcpyWithAttributesAsync_ptsz,
         (CUdeviceptr dst, CUdeviceptr src, size_t size, CUmemcpyAttributes *attr, CUstream hStream))
{
    return fc_one1d(dst, src, size, attr, hStream);
}
#endif

#if FAKECUDA_CUDA_VERSION >= 13050
/*
 * cuFabricCpyBatchAsync: the double has no fabric, so it answers
 * CUDA_ERROR_NOT_SUPPORTED, as the 13.5 header says of a platform without
 * logical endpoints, to a call whose arguments are well formed; numOps 0, a
 * NULL opList, flags other than 0 (reserved) and a NULL or legacy stream
 * are INVALID_VALUE first (the order of those checks is the double's guess).
 * Counted as a batch call.  From the header alone.
 */
static CUresult fc_fabric(size_t numOps, CUDA_FABRIC_COPY_BATCH_OP *opList, unsigned long long flags, CUstream h)
{
    fc_batch_enter();
    if (numOps == 0 || !opList || flags != 0 || h == NULL || h == CU_STREAM_LEGACY)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_batch_stream_known(h))
        return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_ERROR_NOT_SUPPORTED;
}

FC_ENTRY(CUresult, cuFabricCpyBatchAsync,
         (size_t numOps, CUDA_FABRIC_COPY_BATCH_OP *opList, unsigned long long flags, CUstream hStream))
{
    return fc_fabric(numOps, opList, flags, hStream);
}

FC_ENTRY(CUresult, cuFabricCpyBatchAsync_ptsz,
         (size_t numOps, CUDA_FABRIC_COPY_BATCH_OP *opList, unsigned long long flags, CUstream hStream))
{
    return fc_fabric(numOps, opList, flags, hStream);
}
#endif

/* ------------------------------------------------------ cuGetProcAddress */

/*
 * name, the first CUDA version at which this ABI is handed out, and the
 * function for the legacy and the per-thread default stream.  A name may
 * appear several times: the entry with the highest version not above the
 * caller's wins, as in the driver (e.g. "cuCtxGetDevice" becomes the
 * two-argument cuCtxGetDevice_v2 from 13000 on, "cuStreamGetCtx" the
 * three-argument cuStreamGetCtx_v2 from 12050 on).
 */
static CUresult fc_get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status);

FC_ENTRY(CUresult, cuGetProcAddress_v2,
         (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus))
{
    return fc_get_proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/* The 4-argument form, measured on the 580 driver for names it lacks:
 * CUDA_ERROR_NOT_FOUND, and *pfn not written (the caller's value stays). */
FC_ENTRY(CUresult, cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags))
{
    void *keep = pfn ? *pfn : NULL;
    CUresult r = fc_get_proc(symbol, pfn, cudaVersion, flags, NULL);
    if (r == CUDA_SUCCESS && pfn && !*pfn) {
        *pfn = keep;
        return CUDA_ERROR_NOT_FOUND;
    }
    return r;
}

#define FC_FN(f) ((void *)(f))
static const struct fc_proc {
    const char *name;
    int since;
    void *fn, *fn_ptsz;
} fc_procs[] = {
    { "cuGetErrorString", 6000, FC_FN(fc_cuGetErrorString), NULL },
    { "cuGetErrorName", 6000, FC_FN(fc_cuGetErrorName), NULL },
    { "cuInit", 2000, FC_FN(fc_cuInit), NULL },
    { "cuDriverGetVersion", 2020, FC_FN(fc_cuDriverGetVersion), NULL },
    { "cuDeviceGet", 2000, FC_FN(fc_cuDeviceGet), NULL },
    { "cuDeviceGetCount", 2000, FC_FN(fc_cuDeviceGetCount), NULL },
    { "cuDeviceGetName", 2000, FC_FN(fc_cuDeviceGetName), NULL },
    { "cuDevicePrimaryCtxRetain", 7000, FC_FN(fc_cuDevicePrimaryCtxRetain), NULL },
    { "cuDevicePrimaryCtxRelease", 11000, FC_FN(fc_cuDevicePrimaryCtxRelease_v2), NULL },
    { "cuCtxCreate", 3020, FC_FN(fc_cuCtxCreate_v2), NULL },
    { "cuCtxCreate", 11040, FC_FN(fc_cuCtxCreate_v3), NULL },
    { "cuCtxCreate", 12050, FC_FN(fc_cuCtxCreate_v4), NULL },
    { "cuCtxDestroy", 4000, FC_FN(fc_cuCtxDestroy_v2), NULL },
    { "cuCtxSetCurrent", 4000, FC_FN(fc_cuCtxSetCurrent), NULL },
    { "cuCtxGetCurrent", 4000, FC_FN(fc_cuCtxGetCurrent), NULL },
    { "cuCtxGetDevice", 2000, FC_FN(fc_cuCtxGetDevice), NULL },
    { "cuCtxGetId", 12000, FC_FN(fc_cuCtxGetId), NULL },
    { "cuCtxGetDevice", 13000, FC_FN(fc_cuCtxGetDevice_v2), NULL },
    { "cuCtxSynchronize", 2000, FC_FN(fc_cuCtxSynchronize), NULL },
    { "cuCtxSynchronize", 13000, FC_FN(fc_cuCtxSynchronize_v2), NULL },
    { "cuDeviceCanAccessPeer", 4000, FC_FN(fc_cuDeviceCanAccessPeer), NULL },
    { "cuCtxEnablePeerAccess", 4000, FC_FN(fc_cuCtxEnablePeerAccess), NULL },
    { "cuCtxDisablePeerAccess", 4000, FC_FN(fc_cuCtxDisablePeerAccess), NULL },
    { "cuMemAlloc", 3020, FC_FN(fc_cuMemAlloc_v2), NULL },
    { "cuMemFree", 3020, FC_FN(fc_cuMemFree_v2), NULL },
    { "cuMemGetAddressRange", 3020, FC_FN(fc_cuMemGetAddressRange_v2), NULL },
    { "cuMemAllocHost", 3020, FC_FN(fc_cuMemAllocHost_v2), NULL },
    { "cuMemFreeHost", 2000, FC_FN(fc_cuMemFreeHost), NULL },
    { "cuMemHostAlloc", 2020, FC_FN(fc_cuMemHostAlloc), NULL },
    { "cuMemAllocManaged", 6000, FC_FN(fc_cuMemAllocManaged), NULL },
    { "cuMemHostRegister", 6050, FC_FN(fc_cuMemHostRegister_v2), NULL },
    { "cuMemHostUnregister", 4000, FC_FN(fc_cuMemHostUnregister), NULL },
    { "cuPointerGetAttribute", 4000, FC_FN(fc_cuPointerGetAttribute), NULL },
    { "cuPointerGetAttributes", 7000, FC_FN(fc_cuPointerGetAttributes), NULL },
    { "cuStreamCreate", 2000, FC_FN(fc_cuStreamCreate), NULL },
    { "cuStreamDestroy", 4000, FC_FN(fc_cuStreamDestroy_v2), NULL },
    { "cuStreamSynchronize", 2000, FC_FN(fc_cuStreamSynchronize), FC_FN(fc_cuStreamSynchronize_ptsz) },
    { "cuStreamGetCtx", 9020, FC_FN(fc_cuStreamGetCtx), FC_FN(fc_cuStreamGetCtx_ptsz) },
    { "cuStreamGetCtx", 12050, FC_FN(fc_cuStreamGetCtx_v2), FC_FN(fc_cuStreamGetCtx_v2_ptsz) },
    { "cuStreamGetId", 12000, FC_FN(fc_cuStreamGetId), FC_FN(fc_cuStreamGetId_ptsz) },
    { "cuStreamIsCapturing", 10000, FC_FN(fc_cuStreamIsCapturing), FC_FN(fc_cuStreamIsCapturing_ptsz) },
    { "cuStreamBeginCapture", 10010, FC_FN(fc_cuStreamBeginCapture_v2), FC_FN(fc_cuStreamBeginCapture_v2_ptsz) },
    { "cuStreamEndCapture", 10000, FC_FN(fc_cuStreamEndCapture), FC_FN(fc_cuStreamEndCapture_ptsz) },
    { "cuStreamGetCaptureInfo", 12030, FC_FN(fc_cuStreamGetCaptureInfo_v3), FC_FN(fc_cuStreamGetCaptureInfo_v3_ptsz) },
    { "cuStreamQuery", 2000, FC_FN(fc_cuStreamQuery), FC_FN(fc_cuStreamQuery_ptsz) },
    { "cuThreadExchangeStreamCaptureMode", 10010, FC_FN(fc_cuThreadExchangeStreamCaptureMode), NULL },
    { "cuMemsetD8Async", 3020, FC_FN(fc_cuMemsetD8Async), FC_FN(fc_cuMemsetD8Async_ptsz) },
    { "cuGraphGetNodes", 10000, FC_FN(fc_cuGraphGetNodes), NULL },
    { "cuGraphCreate", 10000, FC_FN(fc_cuGraphCreate), NULL },
    { "cuGraphExecUpdate", 12000, FC_FN(fc_cuGraphExecUpdate_v2), NULL },
    { "cuGraphAddNode", 12020, FC_FN(fc_cuGraphAddNode), NULL },
    { "cuGraphAddNode", 12030, FC_FN(fc_cuGraphAddNode_v2), NULL },
    { "cuGraphNodeSetParams", 12020, FC_FN(fc_cuGraphNodeSetParams), NULL },
#if FAKECUDA_CUDA_VERSION >= 13050
    { "cuGraphAddNode", 13050, FC_FN(fc_cuGraphAddNode_v3), NULL },
    { "cuGraphNodeSetParams", 13050, FC_FN(fc_cuGraphNodeSetParams_v2), NULL },
    { "cuGraphNodeGetParams", 13050, FC_FN(fc_cuGraphNodeGetParams), NULL },
#endif
    { "cuGraphExecNodeSetParams", 12020, FC_FN(fc_cuGraphExecNodeSetParams), NULL },
    { "cuGraphDestroyNode", 10000, FC_FN(fc_cuGraphDestroyNode), NULL },
    { "cuGraphClone", 10000, FC_FN(fc_cuGraphClone), NULL },
    { "cuGraphAddChildGraphNode", 10000, FC_FN(fc_cuGraphAddChildGraphNode), NULL },
    { "cuGraphChildGraphNodeGetGraph", 10000, FC_FN(fc_cuGraphChildGraphNodeGetGraph), NULL },
    { "cuGraphNodeGetType", 10000, FC_FN(fc_cuGraphNodeGetType), NULL },
    { "cuGraphInstantiateWithParams", 12000, FC_FN(fc_cuGraphInstantiateWithParams), FC_FN(fc_cuGraphInstantiateWithParams_ptsz) },
    { "cuGraphDestroy", 10000, FC_FN(fc_cuGraphDestroy), NULL },
    { "cuGraphInstantiate", 11040, FC_FN(fc_cuGraphInstantiateWithFlags), NULL },
    { "cuGraphInstantiateWithFlags", 11040, FC_FN(fc_cuGraphInstantiateWithFlags), NULL },
    { "cuGraphLaunch", 10000, FC_FN(fc_cuGraphLaunch), FC_FN(fc_cuGraphLaunch_ptsz) },
    { "cuGraphExecDestroy", 10000, FC_FN(fc_cuGraphExecDestroy), NULL },
    { "cuArray3DCreate", 3020, FC_FN(fc_cuArray3DCreate_v2), NULL },
    { "cuArray3DGetDescriptor", 3020, FC_FN(fc_cuArray3DGetDescriptor_v2), NULL },
    { "cuArrayDestroy", 2000, FC_FN(fc_cuArrayDestroy), NULL },
    { "cuMemcpy3DBatchAsync", 12080, FC_FN(fc_cuMemcpy3DBatchAsync), FC_FN(fc_cuMemcpy3DBatchAsync_ptsz) },
    { "cuMemcpy3DBatchAsync", 13000, FC_FN(fc_cuMemcpy3DBatchAsync_v2), FC_FN(fc_cuMemcpy3DBatchAsync_v2_ptsz) },
    { "cuMemcpyBatchAsync", 12080, FC_FN(fc_cuMemcpyBatchAsync), FC_FN(fc_cuMemcpyBatchAsync_ptsz) },
    { "cuMemcpyBatchAsync", 13000, FC_FN(fc_cuMemcpyBatchAsync_v2), FC_FN(fc_cuMemcpyBatchAsync_v2_ptsz) },
#if FAKECUDA_CUDA_VERSION >= 13020
    /* handed out from 13020, the first version whose header declares them */
    { "cuMemcpy3DWithAttributesAsync", 13020, FC_FN(fc_cuMemcpy3DWithAttributesAsync),
      FC_FN(fc_cuMemcpy3DWithAttributesAsync_ptsz) },
    { "cuMemcpyWithAttributesAsync", 13020, FC_FN(fc_cuMemcpyWithAttributesAsync),
      FC_FN(fc_cuMemcpyWithAttributesAsync_ptsz) },
#endif
#if FAKECUDA_CUDA_VERSION >= 13050
    { "cuFabricCpyBatchAsync", 13050, FC_FN(fc_cuFabricCpyBatchAsync), FC_FN(fc_cuFabricCpyBatchAsync_ptsz) },
#endif
    { "cuMemcpyHtoD", 3020, FC_FN(fc_cuMemcpyHtoD_v2), NULL },
    { "cuMemcpyDtoH", 3020, FC_FN(fc_cuMemcpyDtoH_v2), NULL },
    { "cuMemsetD8", 3020, FC_FN(fc_cuMemsetD8_v2), NULL },
    { "cuEventCreate", 2000, FC_FN(fc_cuEventCreate), NULL },
    { "cuEventDestroy", 4000, FC_FN(fc_cuEventDestroy_v2), NULL },
    { "cuEventRecord", 2000, FC_FN(fc_cuEventRecord), FC_FN(fc_cuEventRecord_ptsz) },
    { "cuEventQuery", 2000, FC_FN(fc_cuEventQuery), NULL },
    { "cuEventSynchronize", 2000, FC_FN(fc_cuEventSynchronize), NULL },
    { "cuEventElapsedTime", 12080, FC_FN(fc_cuEventElapsedTime_v2), NULL },
    { "cuCtxPushCurrent", 4000, FC_FN(fc_cuCtxPushCurrent_v2), NULL },
    { "cuCtxPopCurrent", 4000, FC_FN(fc_cuCtxPopCurrent_v2), NULL },
    { "cuLaunchHostFunc", 10000, FC_FN(fc_cuLaunchHostFunc), FC_FN(fc_cuLaunchHostFunc_ptsz) },
    { "cuGetProcAddress", 11030, FC_FN(fc_cuGetProcAddress), NULL },
    { "cuGetProcAddress", 12000, FC_FN(fc_cuGetProcAddress_v2), NULL },
};

/*
 * FAKECUDA_GPA_INTERNAL=1: cuGetProcAddress hands out, for these memory
 * functions, an internal address instead of the exported symbol's, as a
 * driver may; calls through it behave the same.
 */
static CUresult fc_internal_cuMemFree(CUdeviceptr p) { return fc_cuMemFree_v2(p); }
static CUresult fc_internal_cuMemHostRegister(void *p, size_t n, unsigned f) { return fc_cuMemHostRegister_v2(p, n, f); }
static const struct {
    void *exported, *internal;
} fc_internal[] = {
    { FC_FN(fc_cuMemFree_v2), FC_FN(fc_internal_cuMemFree) },
    { FC_FN(fc_cuMemHostRegister_v2), FC_FN(fc_internal_cuMemHostRegister) },
};

static bool fc_gpa_internal(void)
{
    const char *s = getenv("FAKECUDA_GPA_INTERNAL");
    return s && !strcmp(s, "1");
}

/*
 * FAKECUDA_GPA_LOG=FILE: every cuGetProcAddress request is appended to FILE
 * as "symbol version flags", so a test can compare what a program asked
 * for with and without the shim.  One write(2) per line.
 */
static void fc_gpa_log(const char *symbol, int version, cuuint64_t flags)
{
    const char *path = getenv("FAKECUDA_GPA_LOG");
    if (!path || !*path)
        return;
    char line[512];
    int n = snprintf(line, sizeof line, "%s %d %llu\n", symbol ? symbol : "(null)", version,
                     (unsigned long long)flags);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (n > 0)
        (void)!write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    close(fd);
}

static CUresult fc_get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status)
{
    fc_gpa_log(symbol, version, flags);
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    const struct fc_proc *best = NULL;
    bool named = false;
    for (size_t i = 0; i < sizeof fc_procs / sizeof fc_procs[0]; i++) {
        const struct fc_proc *p = &fc_procs[i];
        if (strcmp(p->name, symbol) != 0)
            continue;
        named = true;
        if (p->since <= version && (!best || p->since > best->since))
            best = p;
    }
    void *fn = NULL;
    if (best)
        fn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best->fn_ptsz ? best->fn_ptsz : best->fn;
    if (fn && fc_gpa_internal())
        for (size_t i = 0; i < sizeof fc_internal / sizeof fc_internal[0]; i++)
            if (fn == fc_internal[i].exported)
                fn = fc_internal[i].internal;
    *pfn = fn;
    if (status)
        *status = fn ? CU_GET_PROC_ADDRESS_SUCCESS
                : named ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                        : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    /* Measured (580.159.04, CUDA 13.0; docs/gpu-results*.md): cuGetProcAddress_v2
     * answers a name the driver lacks, or a version below a function's, with
     * CUDA_SUCCESS and NULL, symbolStatus saying which (a version above the
     * driver's own is not measured: the same assumed). */
    return CUDA_SUCCESS;
}
