/* SPDX-License-Identifier: MIT */
/*
 * The driver's memory-management functions, wrapped so that the shim knows
 * when what it learned about memory kinds may have become false
 * (operands.c keeps that knowledge across batches).
 *
 * Every function that can create, destroy or change the kind of a mapping
 * or a CUarray is wrapped, and cuStreamDestroy (batch.c keeps what it
 * learned about a stream handle across batches too): the wrapper adds one to cbt_mem_generation,
 * calls the real function, adds one again and returns its result.  So are
 * the functions that begin a stream capture, for GPU time (gputime.c):
 * until one is called, no stream of the process can be being captured
 * (their wrappers leave the generation as it is).  A batch
 * that read the generation before a change, or while one was under way,
 * finds it different afterwards and forgets what it learned.
 *
 * The wrappers are reached through every door the batch functions are:
 *   - exported under the real names, so direct links bind them; these
 *     forward to the next definition, as the program's call would have gone;
 *   - cuGetProcAddress(_v2): cbt_wrap_proc hands out a wrapper when the
 *     driver hands out the real export of a wrapped function; it forwards to
 *     exactly that export;
 *   - dlsym on the driver: the same, through cbt_dlsym_hook.
 * When cuGetProcAddress answers a wrapped name with anything else (an
 * internal address, an export the shim does not wrap), calls through that
 * pointer would go unseen: the cross-batch cache is then turned off for the
 * rest of the process (cbt_kind_cache_disable).  It is also never turned on
 * when this library's exports do not come first in the global scope (the
 * shim dlopened rather than preloaded: direct links then bind the driver).
 *
 * Adding a function is one line of MEMWRAP_LIST: its exported name, the name
 * cuGetProcAddress is asked for, its parameters, the arguments passed on and
 * what to do before the call and after a successful one, and whether memory
 * may change (MW_NONE: nothing, memory may change).  The legacy
 * exports (cuMemAlloc, cuMemFree, ... with 32-bit sizes), which
 * cuGetProcAddress still hands out for old versions, are wrapped too.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "gputime.h"
#include "memwrap.h"
#include "settings.h"

/* cuda.h renames these to their current ABI; the legacy exports of the
 * driver (still reachable through cuGetProcAddress at old versions) keep the
 * plain names and their old parameter types. */
#undef cuMemAlloc
#undef cuMemAllocPitch
#undef cuMemFree
#undef cuMemAllocHost
#undef cuMemHostRegister
#undef cuIpcOpenMemHandle
#undef cuArrayCreate
#undef cuArray3DCreate
#undef cuCtxDestroy
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuStreamDestroy
#undef cuStreamBeginCapture
#undef cuStreamBeginCaptureToGraph

typedef unsigned int cbt_devptr_v1;
struct cbt_array_desc_v1 { unsigned int Width, Height; CUarray_format Format; unsigned int NumChannels; };
struct cbt_array3d_desc_v1 {
    unsigned int Width, Height, Depth;
    CUarray_format Format;
    unsigned int NumChannels, Flags;
};

/* X(exported name, name asked of cuGetProcAddress, parameters, arguments, check after success) */
#define MEMWRAP_LIST(X)                                                                                      \
    X(cuMemAlloc_v2, "cuMemAlloc", (CUdeviceptr * a, size_t b), (a, b), MW_NONE)                                      \
    X(cuMemAlloc, "cuMemAlloc", (cbt_devptr_v1 * a, unsigned int b), (a, b), MW_NONE)                                 \
    X(cuMemAllocPitch_v2, "cuMemAllocPitch", (CUdeviceptr * a, size_t *b, size_t c, size_t d, unsigned int e),        \
      (a, b, c, d, e), MW_NONE)                                                                                       \
    X(cuMemAllocPitch, "cuMemAllocPitch", (cbt_devptr_v1 * a, unsigned int *b, unsigned int c, unsigned int d, unsigned int e), \
      (a, b, c, d, e), MW_NONE)                                                                                       \
    X(cuMemFree_v2, "cuMemFree", (CUdeviceptr a), (a), MW_NONE)                                                       \
    X(cuMemFree, "cuMemFree", (cbt_devptr_v1 a), (a), MW_NONE)                                                        \
    X(cuMemAllocHost_v2, "cuMemAllocHost", (void **a, size_t b), (a, b), MW_NONE)                                     \
    X(cuMemAllocHost, "cuMemAllocHost", (void **a, unsigned int b), (a, b), MW_NONE)                                  \
    X(cuMemHostAlloc, "cuMemHostAlloc", (void **a, size_t b, unsigned int c), (a, b, c), MW_NONE)                     \
    X(cuMemFreeHost, "cuMemFreeHost", (void *a), (a), MW_NONE)                                                        \
    X(cuMemHostRegister_v2, "cuMemHostRegister", (void *a, size_t b, unsigned int c), (a, b, c), MW_REGISTER(a, b))   \
    X(cuMemHostRegister, "cuMemHostRegister", (void *a, size_t b, unsigned int c), (a, b, c), MW_REGISTER(a, b))      \
    X(cuMemHostUnregister, "cuMemHostUnregister", (void *a), (a), MW_NONE)                                            \
    X(cuMemAllocManaged, "cuMemAllocManaged", (CUdeviceptr * a, size_t b, unsigned int c), (a, b, c), MW_NONE)        \
    X(cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr * a, size_t b, CUstream c), (a, b, c), MW_NONE)                \
    X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", (CUdeviceptr * a, size_t b, CUstream c), (a, b, c), MW_NONE)           \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", (CUdeviceptr * a, size_t b, CUmemoryPool c, CUstream d),    \
      (a, b, c, d), MW_NONE)                                                                                          \
    X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", (CUdeviceptr * a, size_t b, CUmemoryPool c, CUstream d), \
      (a, b, c, d), MW_NONE)                                                                                          \
    X(cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr a, CUstream b), (a, b), MW_NONE)                                 \
    X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", (CUdeviceptr a, CUstream b), (a, b), MW_NONE)                            \
    X(cuMemPoolTrimTo, "cuMemPoolTrimTo", (CUmemoryPool a, size_t b), (a, b), MW_NONE)                                \
    X(cuMemPoolDestroy, "cuMemPoolDestroy", (CUmemoryPool a), (a), MW_NONE)                                           \
    X(cuMemPoolImportPointer, "cuMemPoolImportPointer", (CUdeviceptr * a, CUmemoryPool b, CUmemPoolPtrExportData *c), \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuMemAddressReserve, "cuMemAddressReserve", (CUdeviceptr * a, size_t b, size_t c, CUdeviceptr d, unsigned long long e), \
      (a, b, c, d, e), MW_NONE)                                                                                       \
    X(cuMemAddressFree, "cuMemAddressFree", (CUdeviceptr a, size_t b), (a, b), MW_NONE)                               \
    X(cuMemMap, "cuMemMap", (CUdeviceptr a, size_t b, size_t c, CUmemGenericAllocationHandle d, unsigned long long e), \
      (a, b, c, d, e), MW_NONE)                                                                                       \
    X(cuMemUnmap, "cuMemUnmap", (CUdeviceptr a, size_t b), (a, b), MW_NONE)                                           \
    X(cuMemRelease, "cuMemRelease", (CUmemGenericAllocationHandle a), (a), MW_NONE)                                   \
    X(cuMemMapArrayAsync, "cuMemMapArrayAsync", (CUarrayMapInfo * a, unsigned int b, CUstream c), (a, b, c), MW_NONE) \
    X(cuMemMapArrayAsync_ptsz, "cuMemMapArrayAsync", (CUarrayMapInfo * a, unsigned int b, CUstream c),                \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuIpcOpenMemHandle_v2, "cuIpcOpenMemHandle", (CUdeviceptr * a, CUipcMemHandle b, unsigned int c),               \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle", (CUdeviceptr * a, CUipcMemHandle b, unsigned int c),                  \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr a), (a), MW_NONE)                                      \
    X(cuArrayCreate_v2, "cuArrayCreate", (CUarray * a, const CUDA_ARRAY_DESCRIPTOR *b), (a, b), MW_NONE)              \
    X(cuArrayCreate, "cuArrayCreate", (CUarray * a, const struct cbt_array_desc_v1 *b), (a, b), MW_NONE)              \
    X(cuArray3DCreate_v2, "cuArray3DCreate", (CUarray * a, const CUDA_ARRAY3D_DESCRIPTOR *b), (a, b), MW_NONE)        \
    X(cuArray3DCreate, "cuArray3DCreate", (CUarray * a, const struct cbt_array3d_desc_v1 *b), (a, b), MW_NONE)        \
    X(cuArrayDestroy, "cuArrayDestroy", (CUarray a), (a), MW_NONE)                                                    \
    X(cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy", (CUmipmappedArray a), (a), MW_NONE)                         \
    X(cuCtxDestroy_v2, "cuCtxDestroy", (CUcontext a), (a), MW_CTX_GONE(a, -1))                                                   \
    X(cuCtxDestroy, "cuCtxDestroy", (CUcontext a), (a), MW_CTX_GONE(a, -1))                                                      \
    X(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease", (CUdevice a), (a), MW_CTX_GONE(NULL, a))                          \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", (CUdevice a), (a), MW_CTX_GONE(NULL, a))                             \
    X(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", (CUdevice a), (a), MW_CTX_GONE(NULL, a))                              \
    X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", (CUdevice a), (a), MW_CTX_GONE(NULL, a))                                 \
    X(cuGraphicsMapResources, "cuGraphicsMapResources", (unsigned int a, CUgraphicsResource *b, CUstream c),          \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuGraphicsMapResources_ptsz, "cuGraphicsMapResources", (unsigned int a, CUgraphicsResource *b, CUstream c),     \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuGraphicsUnmapResources, "cuGraphicsUnmapResources", (unsigned int a, CUgraphicsResource *b, CUstream c),      \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuGraphicsUnmapResources_ptsz, "cuGraphicsUnmapResources", (unsigned int a, CUgraphicsResource *b, CUstream c), \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuGraphicsUnregisterResource, "cuGraphicsUnregisterResource", (CUgraphicsResource a), (a), MW_NONE)             \
    X(cuImportExternalMemory, "cuImportExternalMemory", (CUexternalMemory * a, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *b), \
      (a, b), MW_NONE)                                                                                                \
    X(cuDestroyExternalMemory, "cuDestroyExternalMemory", (CUexternalMemory a), (a), MW_NONE)                         \
    X(cuExternalMemoryGetMappedBuffer, "cuExternalMemoryGetMappedBuffer", (CUdeviceptr * a, CUexternalMemory b, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *c), \
      (a, b, c), MW_NONE)                                                                                             \
    X(cuStreamDestroy_v2, "cuStreamDestroy", (CUstream a), (a), MW_NONE)                                              \
    X(cuStreamDestroy, "cuStreamDestroy", (CUstream a), (a), MW_NONE)                                                 \
    X(cuStreamBeginCapture_v2, "cuStreamBeginCapture", (CUstream a, CUstreamCaptureMode b), (a, b), MW_CAPTURE)        \
    X(cuStreamBeginCapture_v2_ptsz, "cuStreamBeginCapture", (CUstream a, CUstreamCaptureMode b), (a, b), MW_CAPTURE)   \
    X(cuStreamBeginCapture, "cuStreamBeginCapture", (CUstream a), (a), MW_CAPTURE)                                    \
    X(cuStreamBeginCapture_ptsz, "cuStreamBeginCapture", (CUstream a), (a), MW_CAPTURE)                               \
    X(cuStreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph",                                                     \
      (CUstream a, CUgraph b, const CUgraphNode *c, const CUgraphEdgeData *d, size_t e, CUstreamCaptureMode f),        \
      (a, b, c, d, e, f), MW_CAPTURE)                                                                                 \
    X(cuStreamBeginCaptureToGraph_ptsz, "cuStreamBeginCaptureToGraph",                                                \
      (CUstream a, CUgraph b, const CUgraphNode *c, const CUgraphEdgeData *d, size_t e, CUstreamCaptureMode f),        \
      (a, b, c, d, e, f), MW_CAPTURE)

enum {
#define MW_ENUM(name, gpa, params, args, post) MW_##name,
    MEMWRAP_LIST(MW_ENUM)
#undef MW_ENUM
    MW_COUNT_
};

static const char *const mw_export[MW_COUNT_] = {
#define MW_NAME(name, gpa, params, args, post) [MW_##name] = #name,
    MEMWRAP_LIST(MW_NAME)
#undef MW_NAME
};

static const char *const mw_gpa_name[MW_COUNT_] = {
#define MW_GPA(name, gpa, params, args, post) [MW_##name] = gpa,
    MEMWRAP_LIST(MW_GPA)
#undef MW_GPA
};

CBT_HOT uint64_t cbt_mem_generation;
CBT_HOT int cbt_kind_cache_off;
CBT_HOT int cbt_capture_begun;

/*
 * The two targets of each wrapped function, found with the driver
 * (cbt_memwrap_load, under the driver's lock, published with it):
 *   mw_real  the driver's function; the wrapper handed out in its place by
 *            cuGetProcAddress or dlsym forwards to it, exactly what the
 *            caller was given;
 *   mw_next  what the exported function forwards to: the next definition
 *            after the shim (another interposer, or the program's own
 *            libcuda), or the driver's (cbt_export_target).
 */
static void *mw_real[MW_COUNT_];
static void *mw_next[MW_COUNT_];

static inline void mem_changing(void) { __atomic_fetch_add(&cbt_mem_generation, 1, __ATOMIC_ACQ_REL); }

/*
 * A registration that starts or ends inside a page leaves that page part
 * pinned, part pageable, while the cache knows pageable memory by whole
 * pages (operands.c): the cross-batch cache is turned off instead.
 */
#define MW_NONE (((void)0), ((void)0), 1)
#define MW_REGISTER(p, size) (((void)0), register_check((uintptr_t)(p), (size)), 1)
/* A context going (or a device's primary one, maybe): GPU time reads back
 * what is done before, and forgets the context's events after. */
#define MW_CTX_GONE(ctx, device) (cbt_gpu_context_going(), cbt_gpu_context_gone((ctx), (device)), 1)
/* A stream capture begins (it may, whatever the result): from now on GPU
 * time asks the driver whether a batch's stream is being captured before
 * it records an event there (gputime.c).  No memory changes: what was
 * learned of memory kinds holds. */
#define MW_CAPTURE (__atomic_store_n(&cbt_capture_begun, 1, __ATOMIC_SEQ_CST), ((void)0), 0)
/* The last column of MEMWRAP_LIST is (what to do before the call, what to do
 * after it succeeded, whether memory may change: cbt_mem_generation moves). */
#define MW_BEFORE_(before, after, mem) before
#define MW_AFTER_(before, after, mem) after
#define MW_MEM_(before, after, mem) mem
#define MW_BEFORE(hooks) MW_BEFORE_ hooks
#define MW_AFTER(hooks) MW_AFTER_ hooks
#define MW_MEM(hooks) MW_MEM_ hooks

static void register_check(uintptr_t p, size_t size)
{
    static uintptr_t page;
    if (!page)
        page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if ((p | size) & (page - 1))
        cbt_kind_cache_disable();
}

static int mw_missing_warned;

static CUresult mw_missing(const char *name)
{
    if (!cbt_real()->handle)
        cbt_warn_no_driver(name);
    else
        cbt_warn_once(&mw_missing_warned, "the CUDA driver lacks %s; the call returns CUDA_ERROR_NOT_FOUND", name);
    return cbt_real()->handle ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
}

static void mw_ensure(void);

#define MW_BODY(name, params, args, post, target)                                                            \
    {                                                                                                           \
        mw_ensure();                                                                                            \
        CUresult(*fn_) params = (CUresult(*) params)target[MW_##name];                                          \
        if (cbt_unlikely(!fn_))                                                                                 \
            return mw_missing(#name);                                                                           \
        MW_BEFORE(post);                                                                                        \
        if (MW_MEM(post))                                                                                       \
            mem_changing();                                                                                     \
        CUresult r_ = fn_ args;                                                                                 \
        if (r_ == CUDA_SUCCESS)                                                                                 \
            MW_AFTER(post);                                                                                     \
        if (MW_MEM(post))                                                                                       \
            mem_changing();                                                                                     \
        return r_;                                                                                              \
    }
/* The exported function, and the one handed out in place of the driver's. */
#define MW_DEFINE(name, gpa, params, args, post)                                                                \
    CBT_EXPORT CUresult name params;                                                                            \
    CUresult name params MW_BODY(name, params, args, post, mw_next)                                             \
    static CUresult handed_##name params MW_BODY(name, params, args, post, mw_real)
MEMWRAP_LIST(MW_DEFINE)
#undef MW_DEFINE
#undef MW_BODY

static void *const mw_wrapper[MW_COUNT_] = {
#define MW_WRAPPER(name, gpa, params, args, post) [MW_##name] = (void *)handed_##name,
    MEMWRAP_LIST(MW_WRAPPER)
#undef MW_WRAPPER
};

/* Real pointer -> wrapper, sorted by the real pointer for bsearch; the
 * exported and the cuGetProcAddress names, sorted for bsearch too. */
struct mw_ptr { void *real, *wrapper; };
static struct mw_ptr mw_by_ptr[MW_COUNT_];
static size_t mw_nptr;
static int mw_by_export[MW_COUNT_]; /* indices, sorted by mw_export */
static const char *mw_gpa_sorted[MW_COUNT_];
static size_t mw_ngpa;

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct mw_ptr *)a)->real, y = (uintptr_t)((const struct mw_ptr *)b)->real;
    return x < y ? -1 : x > y;
}
static int cmp_export(const void *a, const void *b)
{
    return strcmp(mw_export[*(const int *)a], mw_export[*(const int *)b]);
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void after_fork_child(void) { mem_changing(); }

/* The names are sorted whether or not a driver is found: the dlsym hook uses
 * them before and without one. */
static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static void sort_names(void)
{
    for (int i = 0; i < MW_COUNT_; i++)
        mw_by_export[i] = i;
    qsort(mw_by_export, MW_COUNT_, sizeof mw_by_export[0], cmp_export);
    size_t n = 0;
    for (int i = 0; i < MW_COUNT_; i++)
        mw_gpa_sorted[n++] = mw_gpa_name[i];
    qsort(mw_gpa_sorted, n, sizeof mw_gpa_sorted[0], cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || strcmp(mw_gpa_sorted[u - 1], mw_gpa_sorted[i]))
            mw_gpa_sorted[u++] = mw_gpa_sorted[i];
    mw_ngpa = u;
}

static void mw_load_from(void *handle)
{
    pthread_once(&names_once, sort_names);
    size_t n = 0;
    for (int i = 0; i < MW_COUNT_; i++) {
        mw_real[i] = handle ? cbt_real_dlsym(handle, mw_export[i]) : NULL;
        if (cbt_in_shim(mw_real[i]))
            mw_real[i] = NULL; /* never forward to ourselves */
        if (mw_real[i])
            mw_by_ptr[n++] = (struct mw_ptr){ mw_real[i], mw_wrapper[i] };
        mw_next[i] = cbt_export_target(mw_real[i], mw_export[i]);
    }
    qsort(mw_by_ptr, n, sizeof mw_by_ptr[0], cmp_ptr);
    mw_nptr = n;
    /* A child of fork keeps this thread's cache but not the driver's state. */
    (void)pthread_atfork(NULL, NULL, after_fork_child);
}

/*
 * The targets are found once the driver is: on the first wrapped call or
 * lookup after it loaded.  A call made while it is still loading (from the
 * driver's own constructor) finds none and answers an error, as the driver
 * itself, not yet loaded, could not have served it.
 */
static pthread_once_t mw_once = PTHREAD_ONCE_INIT;
static int mw_loaded;

static void mw_load(void)
{
    mw_load_from(cbt_real()->handle);
    __atomic_store_n(&mw_loaded, 1, __ATOMIC_RELEASE);
}

static void mw_ensure(void)
{
    if (cbt_likely(__atomic_load_n(&mw_loaded, __ATOMIC_ACQUIRE)))
        return;
    (void)cbt_real();
    if (__atomic_load_n(&cbt_real_state, __ATOMIC_ACQUIRE) == 2)
        pthread_once(&mw_once, mw_load);
}

void *cbt_memwrap_for_pointer(const void *p)
{
    mw_ensure();
    size_t lo = 0, hi = mw_nptr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)mw_by_ptr[mid].real < (uintptr_t)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < mw_nptr && mw_by_ptr[lo].real == p ? mw_by_ptr[lo].wrapper : NULL;
}

bool cbt_memwrap_exports(const char *name)
{
    pthread_once(&names_once, sort_names);
    size_t lo = 0, hi = MW_COUNT_;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(mw_export[mw_by_export[mid]], name);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool cbt_memwrap_gpa_name(const char *name)
{
    pthread_once(&names_once, sort_names);
    const char *const *hit = bsearch(&name, mw_gpa_sorted, mw_ngpa, sizeof mw_gpa_sorted[0], cmp_str);
    return hit != NULL;
}

void cbt_kind_cache_disable(void) { __atomic_store_n(&cbt_kind_cache_off, 1, __ATOMIC_RELEASE); }

/* Off for good once something the shim cannot see may change memory, and
 * never on when the exports here are not the ones the program binds. */
CBT_HOT_FN bool cbt_kind_cache_enabled(void)
{
    CBT_HOT static int interposing; /* 0: not known yet, 1: yes, 2: no */
    if (cbt_unlikely(__atomic_load_n(&cbt_kind_cache_off, __ATOMIC_ACQUIRE)))
        return false;
    int i = __atomic_load_n(&interposing, __ATOMIC_RELAXED);
    if (cbt_unlikely(!i)) {
        /* By address: the shim's own name may be bound to another library's. */
        i = cbt_in_shim(cbt_real_dlsym(RTLD_DEFAULT, "cuMemFree_v2")) ? 1 : 2;
        __atomic_store_n(&interposing, i, __ATOMIC_RELAXED);
    }
    return i == 1;
}
