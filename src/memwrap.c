/* SPDX-License-Identifier: MIT */
/*
 * The driver's memory-management functions, wrapped so that the shim knows
 * when what it learned about memory kinds may have become false
 * (operands.c keeps that knowledge across batches).
 *
 * Every function that can create, destroy or change the kind of a mapping
 * or a CUarray is wrapped, and cuStreamDestroy (batch.c keeps what it
 * learned about a stream handle across batches too).  Once the real call
 * returns, the wrapper logs what it may have changed (memwrap.h: an address
 * range, a CUarray handle, or everything when its arguments do not tell)
 * and moves cbt_mem_generation on; a thread's next batch sees the
 * generation moved and drops from its cache what the logged changes touch,
 * and nothing else: a program that allocates and frees between batches
 * keeps what it learned of its other buffers.  cuStreamDestroy logs the
 * stream handle in a log of its own (cbt_stream_log), which a context's
 * destruction and a fork fill with "everything" too.  So are wrapped the
 * functions that begin a stream capture, for GPU time (gputime.c): until
 * one is called, no stream of the process can be being captured (they
 * change no memory).
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
 * what to do before the call, after a successful one and what to log once
 * it returned (MW_NEW, MW_AT, ... below).  The legacy
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

/* X(exported name, name asked of cuGetProcAddress, parameters, arguments, hooks: see MW_NEW below) */
#define MEMWRAP_LIST(X)                                                                                      \
    X(cuMemAlloc_v2, "cuMemAlloc", (CUdeviceptr * a, size_t b), (a, b), MW_NEW(a, b))                                      \
    X(cuMemAlloc, "cuMemAlloc", (cbt_devptr_v1 * a, unsigned int b), (a, b), MW_NEW(a, b))                                 \
    X(cuMemAllocPitch_v2, "cuMemAllocPitch", (CUdeviceptr * a, size_t *b, size_t c, size_t d, unsigned int e),        \
      (a, b, c, d, e), MW_NEW(a, (uint64_t)*b * d))                                                                                       \
    X(cuMemAllocPitch, "cuMemAllocPitch", (cbt_devptr_v1 * a, unsigned int *b, unsigned int c, unsigned int d, unsigned int e), \
      (a, b, c, d, e), MW_NEW(a, (uint64_t)*b * d))                                                                                       \
    X(cuMemFree_v2, "cuMemFree", (CUdeviceptr a), (a), MW_AT(a))                                                       \
    X(cuMemFree, "cuMemFree", (cbt_devptr_v1 a), (a), MW_AT(a))                                                        \
    X(cuMemAllocHost_v2, "cuMemAllocHost", (void **a, size_t b), (a, b), MW_NEW(a, b))                                     \
    X(cuMemAllocHost, "cuMemAllocHost", (void **a, unsigned int b), (a, b), MW_NEW(a, b))                                  \
    X(cuMemHostAlloc, "cuMemHostAlloc", (void **a, size_t b, unsigned int c), (a, b, c), MW_NEW(a, b))                     \
    X(cuMemFreeHost, "cuMemFreeHost", (void *a), (a), MW_AT(a))                                                        \
    X(cuMemHostRegister_v2, "cuMemHostRegister", (void *a, size_t b, unsigned int c), (a, b, c), MW_REGISTER(a, b))   \
    X(cuMemHostRegister, "cuMemHostRegister", (void *a, size_t b, unsigned int c), (a, b, c), MW_REGISTER(a, b))      \
    X(cuMemHostUnregister, "cuMemHostUnregister", (void *a), (a), MW_AT(a))                                            \
    X(cuMemAllocManaged, "cuMemAllocManaged", (CUdeviceptr * a, size_t b, unsigned int c), (a, b, c), MW_NEW(a, b))        \
    X(cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr * a, size_t b, CUstream c), (a, b, c), MW_NEW(a, b))                \
    X(cuMemAllocAsync_ptsz, "cuMemAllocAsync", (CUdeviceptr * a, size_t b, CUstream c), (a, b, c), MW_NEW(a, b))           \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", (CUdeviceptr * a, size_t b, CUmemoryPool c, CUstream d),    \
      (a, b, c, d), MW_NEW(a, b))                                                                                          \
    X(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", (CUdeviceptr * a, size_t b, CUmemoryPool c, CUstream d), \
      (a, b, c, d), MW_NEW(a, b))                                                                                          \
    X(cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr a, CUstream b), (a, b), MW_AT(a))                                 \
    X(cuMemFreeAsync_ptsz, "cuMemFreeAsync", (CUdeviceptr a, CUstream b), (a, b), MW_AT(a))                            \
    X(cuMemPoolTrimTo, "cuMemPoolTrimTo", (CUmemoryPool a, size_t b), (a, b), MW_ALL)                                \
    X(cuMemPoolDestroy, "cuMemPoolDestroy", (CUmemoryPool a), (a), MW_ALL)                                           \
    X(cuMemPoolImportPointer, "cuMemPoolImportPointer", (CUdeviceptr * a, CUmemoryPool b, CUmemPoolPtrExportData *c), \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuMemAddressReserve, "cuMemAddressReserve", (CUdeviceptr * a, size_t b, size_t c, CUdeviceptr d, unsigned long long e), \
      (a, b, c, d, e), MW_NEW(a, b))                                                                                       \
    X(cuMemAddressFree, "cuMemAddressFree", (CUdeviceptr a, size_t b), (a, b), MW_SPAN(a, b))                               \
    X(cuMemMap, "cuMemMap", (CUdeviceptr a, size_t b, size_t c, CUmemGenericAllocationHandle d, unsigned long long e), \
      (a, b, c, d, e), MW_SPAN(a, b))                                                                                       \
    X(cuMemUnmap, "cuMemUnmap", (CUdeviceptr a, size_t b), (a, b), MW_SPAN(a, b))                                           \
    X(cuMemRelease, "cuMemRelease", (CUmemGenericAllocationHandle a), (a), MW_ALL)                                   \
    X(cuMemMapArrayAsync, "cuMemMapArrayAsync", (CUarrayMapInfo * a, unsigned int b, CUstream c), (a, b, c), MW_ALL) \
    X(cuMemMapArrayAsync_ptsz, "cuMemMapArrayAsync", (CUarrayMapInfo * a, unsigned int b, CUstream c),                \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuIpcOpenMemHandle_v2, "cuIpcOpenMemHandle", (CUdeviceptr * a, CUipcMemHandle b, unsigned int c),               \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle", (CUdeviceptr * a, CUipcMemHandle b, unsigned int c),                  \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr a), (a), MW_AT(a))                                      \
    X(cuArrayCreate_v2, "cuArrayCreate", (CUarray * a, const CUDA_ARRAY_DESCRIPTOR *b), (a, b), MW_ARRAY_NEW(a))              \
    X(cuArrayCreate, "cuArrayCreate", (CUarray * a, const struct cbt_array_desc_v1 *b), (a, b), MW_ARRAY_NEW(a))              \
    X(cuArray3DCreate_v2, "cuArray3DCreate", (CUarray * a, const CUDA_ARRAY3D_DESCRIPTOR *b), (a, b), MW_ARRAY_NEW(a))        \
    X(cuArray3DCreate, "cuArray3DCreate", (CUarray * a, const struct cbt_array3d_desc_v1 *b), (a, b), MW_ARRAY_NEW(a))        \
    X(cuArrayDestroy, "cuArrayDestroy", (CUarray a), (a), MW_ARRAY_GONE(a))                                                    \
    X(cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy", (CUmipmappedArray a), (a), MW_ALL)                         \
    X(cuCtxDestroy_v2, "cuCtxDestroy", (CUcontext a), (a), MW_CTX_GONE(a, -1))                                                   \
    X(cuCtxDestroy, "cuCtxDestroy", (CUcontext a), (a), MW_CTX_GONE(a, -1))                                                      \
    X(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease", (CUdevice a), (a), MW_CTX_GONE(NULL, a))                          \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", (CUdevice a), (a), MW_CTX_GONE(NULL, a))                             \
    X(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", (CUdevice a), (a), MW_CTX_GONE(NULL, a))                              \
    X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset", (CUdevice a), (a), MW_CTX_GONE(NULL, a))                                 \
    X(cuGraphicsMapResources, "cuGraphicsMapResources", (unsigned int a, CUgraphicsResource *b, CUstream c),          \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuGraphicsMapResources_ptsz, "cuGraphicsMapResources", (unsigned int a, CUgraphicsResource *b, CUstream c),     \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuGraphicsUnmapResources, "cuGraphicsUnmapResources", (unsigned int a, CUgraphicsResource *b, CUstream c),      \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuGraphicsUnmapResources_ptsz, "cuGraphicsUnmapResources", (unsigned int a, CUgraphicsResource *b, CUstream c), \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuGraphicsUnregisterResource, "cuGraphicsUnregisterResource", (CUgraphicsResource a), (a), MW_ALL)             \
    X(cuImportExternalMemory, "cuImportExternalMemory", (CUexternalMemory * a, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *b), \
      (a, b), MW_ALL)                                                                                                \
    X(cuDestroyExternalMemory, "cuDestroyExternalMemory", (CUexternalMemory a), (a), MW_ALL)                         \
    X(cuExternalMemoryGetMappedBuffer, "cuExternalMemoryGetMappedBuffer", (CUdeviceptr * a, CUexternalMemory b, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *c), \
      (a, b, c), MW_ALL)                                                                                             \
    X(cuStreamDestroy_v2, "cuStreamDestroy", (CUstream a), (a), MW_STREAM_GONE(a))                                              \
    X(cuStreamDestroy, "cuStreamDestroy", (CUstream a), (a), MW_STREAM_GONE(a))                                                 \
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
CBT_HOT uint64_t cbt_stream_generation;
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

/*
 * The logs of changes (memwrap.h): rings the wrappers write once their call
 * has returned, each slot a seqlock.  A writer takes its position, marks
 * the slot being written (seq 0), writes it, publishes it (seq = position
 * + 1), and only then moves the log's generation on: a reader that sees the
 * new generation finds the entry.
 */
struct cbt_log {
    uint64_t head;
    uint64_t *generation;
    struct {
        uint64_t seq, lo, hi, what;
    } e[CBT_MEM_LOG_SIZE];
};
struct cbt_log cbt_mem_log = {.generation = &cbt_mem_generation};
struct cbt_log cbt_stream_log = {.generation = &cbt_stream_generation};

static void log_put(struct cbt_log *log, unsigned what, uint64_t lo, uint64_t hi)
{
    uint64_t i = __atomic_fetch_add(&log->head, 1, __ATOMIC_ACQ_REL);
    __typeof__(&log->e[0]) e = &log->e[i % CBT_MEM_LOG_SIZE];
    __atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&e->lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&e->hi, hi, __ATOMIC_RELAXED);
    __atomic_store_n(&e->what, what, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, i + 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(log->generation, 1, __ATOMIC_ACQ_REL);
}

/* The change at position i: 1 (*out filled); 0 not written yet (its call
 * returned; the generation moves on once it is); -1 written over (lost). */
static int log_at(const struct cbt_log *log, uint64_t i, struct cbt_mem_change *out)
{
    const __typeof__(log->e[0]) *e = &log->e[i % CBT_MEM_LOG_SIZE];
    uint64_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
    if (s != i + 1)
        return s > i + 1 ? -1 : 0;
    out->lo = __atomic_load_n(&e->lo, __ATOMIC_RELAXED);
    out->hi = __atomic_load_n(&e->hi, __ATOMIC_RELAXED);
    out->what = (unsigned)__atomic_load_n(&e->what, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    /* still this entry, and no later writer that may be writing it over */
    if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != i + 1 ||
        __atomic_load_n(&log->head, __ATOMIC_ACQUIRE) - i > CBT_MEM_LOG_SIZE)
        return -1;
    return 1;
}

int cbt_log_next(const struct cbt_log *log, uint64_t *pos, struct cbt_mem_change *out)
{
    const uint64_t head = __atomic_load_n(&log->head, __ATOMIC_ACQUIRE), i = *pos;
    if (i == head)
        return 0;
    int got = head - i > CBT_MEM_LOG_SIZE ? -1 : log_at(log, i, out);
    if (got == 0)
        return 0; /* read later: the generation moves once it is written */
    if (got < 0 || out->what == CBT_MEM_CHANGE_ALL) {
        /* every change before the head has returned: what is learned from
         * now on holds after them all */
        *pos = head;
        return -1;
    }
    *pos = i + 1;
    return 1;
}

void cbt_mem_forget_all(void)
{
    log_put(&cbt_stream_log, CBT_MEM_CHANGE_ALL, 0, UINT64_MAX);
    log_put(&cbt_mem_log, CBT_MEM_CHANGE_ALL, 0, UINT64_MAX);
}

/* Who is told of a context going (cbt_mem_tell_contexts): set once, read
 * by the wrappers that destroy one. */
static struct {
    void (*going)(void);
    void (*gone)(CUcontext ctx, int device);
} ctx_watch;

void cbt_mem_tell_contexts(void (*going)(void), void (*gone)(CUcontext ctx, int device))
{
    __atomic_store_n(&ctx_watch.gone, gone, __ATOMIC_RELAXED);
    __atomic_store_n(&ctx_watch.going, going, __ATOMIC_RELEASE);
}

static void ctx_going(void)
{
    void (*f)(void) = __atomic_load_n(&ctx_watch.going, __ATOMIC_ACQUIRE);
    if (f)
        f();
}

static void ctx_gone(CUcontext ctx, int device)
{
    void (*f)(CUcontext, int) = __atomic_load_n(&ctx_watch.gone, __ATOMIC_ACQUIRE);
    if (f)
        f(ctx, device);
}

/* What a call changed, logged after it returned (whatever its result). */
static void log_range(uint64_t lo, uint64_t size)
{
    log_put(&cbt_mem_log, CBT_MEM_CHANGE_RANGE, lo, lo + (size ? size : 1));
}
static void log_all(void) { log_put(&cbt_mem_log, CBT_MEM_CHANGE_ALL, 0, UINT64_MAX); }
static void log_array(uint64_t h) { log_put(&cbt_mem_log, CBT_MEM_CHANGE_ARRAY, h, h + 1); }
static void log_stream(uint64_t h) { log_put(&cbt_stream_log, CBT_MEM_CHANGE_STREAM, h, h + 1); }

/*
 * The last column of MEMWRAP_LIST: (what to do before the call, what to do
 * after it succeeded, what to log once it returned: r_ is its result).
 *   MW_NEW(p, size)    memory made at *p (read only on success): its range
 *                      (a failed call: everything);
 *   MW_AT(p)           memory at p released or changed: what holds p (the
 *                      cache keeps an allocation as [base, base + size),
 *                      and such calls take the base);
 *   MW_SPAN(p, size)   the range [p, p + size);
 *   MW_ARRAY_NEW(pa), MW_ARRAY_GONE(a)   a CUarray handle made or destroyed;
 *   MW_ALL             what the call may change is not told by its
 *                      arguments: everything;
 *   MW_STREAM_GONE(s)  no memory, but the stream handle s (in the log of
 *                      streams) may name another stream from now on;
 *   MW_CTX_GONE        everything, streams too, and GPU time's hooks.
 * A registration that starts or ends inside a page leaves that page part
 * pinned, part pageable, while the cache knows pageable memory by whole
 * pages (operands.c): the cross-batch cache is turned off instead.
 */
#define MW_PTR_(p) ((uint64_t)(uintptr_t)*(p))
#define MW_NEW(p, size) (((void)0), ((void)0), r_ == CUDA_SUCCESS ? log_range(MW_PTR_(p), (size)) : log_all())
/* (a failed call made nothing, most likely: everything, the rare case kept simple) */
#define MW_AT(p) (((void)0), ((void)0), log_range((uint64_t)(uintptr_t)(p), 1))
#define MW_SPAN(p, size) (((void)0), ((void)0), log_range((uint64_t)(uintptr_t)(p), (size)))
#define MW_ARRAY_NEW(pa) (((void)0), ((void)0), r_ == CUDA_SUCCESS ? log_array(MW_PTR_(pa)) : log_all())
#define MW_ARRAY_GONE(a) (((void)0), ((void)0), log_array((uint64_t)(uintptr_t)(a)))
#define MW_ALL (((void)0), ((void)0), log_all())
#define MW_STREAM_GONE(s) (((void)0), ((void)0), log_stream((uint64_t)(uintptr_t)(s)))
#define MW_REGISTER(p, size) (((void)0), register_check((uintptr_t)(p), (size)), log_range((uint64_t)(uintptr_t)(p), (size)))
/* A context going (or a device's primary one, maybe): GPU time reads back
 * what is done before, and forgets the context's events after. */
#define MW_CTX_GONE(ctx, device) (ctx_going(), ctx_gone((ctx), (device)), cbt_mem_forget_all())
/* A stream capture begins (it may, whatever the result): from now on GPU
 * time asks the driver whether a batch's stream is being captured before
 * it records an event there (gputime.c).  No memory changes: what was
 * learned of memory kinds holds. */
#define MW_CAPTURE (__atomic_store_n(&cbt_capture_begun, 1, __ATOMIC_SEQ_CST), ((void)0), ((void)0))
#define MW_BEFORE_(before, after, change) before
#define MW_AFTER_(before, after, change) after
#define MW_CHANGE_(before, after, change) change
#define MW_BEFORE(hooks) MW_BEFORE_ hooks
#define MW_AFTER(hooks) MW_AFTER_ hooks
#define MW_CHANGE(hooks) MW_CHANGE_ hooks

static void register_check(uintptr_t p, size_t size)
{
    uintptr_t page = (uintptr_t)cbt_page_size();
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
        CUresult r_ = fn_ args;                                                                                 \
        if (r_ == CUDA_SUCCESS)                                                                                 \
            MW_AFTER(post);                                                                                     \
        MW_CHANGE(post);                                                                                        \
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
