/* SPDX-License-Identifier: MIT */
/*
 * Finding the real driver.
 *
 * The shim never links libcuda: it opens "libcuda.so.1" (or the path in
 * CUBATCHTRACE_LIBCUDA) the first time a door is used, from whatever thread
 * and whatever constructor that happens in.  Lookups here go through glibc's
 * dlsym, never the shim's own (src/dlsym_stub.S), so they cannot recurse.
 *
 * The shim may come before or after other libraries that define the same
 * functions, and may be preloaded or dlopened by a program that already has
 * libcuda: the driver is told apart from the shim by address, never by the
 * shim's own exported names (another library's definition may have taken
 * them), and the exported functions forward to the definition that comes
 * after the shim, as the program's call would have gone without it.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cubatchtrace/events.h>

#include "driver.h"

static void *(*real_dlsym_fn)(void *, const char *);
static void *(*next_dlsym_fn)(void *, const char *);

__attribute__((no_sanitize_address, no_sanitize_thread)) /* runs inside a sanitizer's start-up (doors.c) */
bool cbt_in_shim(const void *p)
{
    static void *base;
    Dl_info info;
    if (!p)
        return false;
    void *b = __atomic_load_n(&base, __ATOMIC_RELAXED);
    if (cbt_unlikely(!b)) {
        if (!dladdr((void *)cbt_in_shim, &info) || !info.dli_fbase)
            return false;
        b = info.dli_fbase;
        __atomic_store_n(&base, b, __ATOMIC_RELAXED);
    }
    return dladdr(p, &info) && info.dli_fbase == b;
}

/*
 * glibc's dlsym.  The shim exports dlsym under glibc's versions too
 * (src/libcubatchtrace.map), so a versioned lookup could find the shim's;
 * RTLD_NEXT starts after the shim, and whatever answers is checked not to be
 * the shim's own.  dlvsym is not hooked.
 */
__attribute__((no_sanitize_address, no_sanitize_thread)) /* runs inside a sanitizer's start-up (doors.c) */
void *cbt_real_dlsym_fn(void)
{
    void *(*fn)(void *, const char *) = __atomic_load_n(&real_dlsym_fn, __ATOMIC_ACQUIRE);
    if (cbt_unlikely(!fn)) {
        /* The versions glibc gave dlsym over time, newest first. */
        static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
        for (size_t i = 0; !fn && i < sizeof versions / sizeof *versions; i++) {
            fn = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", versions[i]);
            if (cbt_in_shim((void *)fn))
                fn = NULL;
        }
        if (fn)
            __atomic_store_n(&real_dlsym_fn, fn, __ATOMIC_RELEASE);
    }
    return (void *)fn;
}

/*
 * The dlsym that comes after the shim, which the shim's dlsym (the stub in
 * src/dlsym_stub.S) hands every lookup to: another library's dlsym wrapper
 * loaded after the shim, else glibc's.  Found by an unversioned lookup, as
 * a program's own reference would bind it.
 */
__attribute__((no_sanitize_address, no_sanitize_thread)) /* runs inside a sanitizer's start-up (doors.c) */
void *cbt_next_dlsym_fn(void)
{
    void *(*fn)(void *, const char *) = __atomic_load_n(&next_dlsym_fn, __ATOMIC_ACQUIRE);
    if (cbt_unlikely(!fn)) {
        void *(*real)(void *, const char *) = (void *(*)(void *, const char *))cbt_real_dlsym_fn();
        if (!real)
            return NULL;
        fn = (void *(*)(void *, const char *))real(RTLD_NEXT, "dlsym");
        if (!fn || cbt_in_shim((void *)fn))
            fn = real;
        __atomic_store_n(&next_dlsym_fn, fn, __ATOMIC_RELEASE);
    }
    return (void *)fn;
}

void *cbt_real_dlsym(void *handle, const char *name)
{
    void *(*fn)(void *, const char *) = (void *(*)(void *, const char *))cbt_real_dlsym_fn();
    return fn ? fn(handle, name) : NULL;
}

void *cbt_next_definition(const char *name)
{
    void *p = cbt_real_dlsym(RTLD_NEXT, name);
    return cbt_in_shim(p) ? NULL : p;
}

void cbt_warn_once(int *once, const char *fmt, ...)
{
    if (once && __atomic_exchange_n(once, 1, __ATOMIC_ACQ_REL))
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    /* One write(2), so lines from several threads never interleave. */
    char out[540];
    int m = snprintf(out, sizeof out, "cubatchtrace: %.*s", n, line);
    if (m > 0)
        (void)!write(2, out, (size_t)m < sizeof out ? (size_t)m : sizeof out - 1);
}

/* ---- the real driver ---- */

struct cbt_real cbt_real_table __attribute__((aligned(64))); /* next_batch, first, in one line */
CBT_HOT int cbt_real_state; /* 0: not loaded, 1: loading, 2: loaded (or failed for good) */
static pthread_mutex_t real_lock = PTHREAD_MUTEX_INITIALIZER;
static CBT_TLS int real_loading_here;

static const char *const api_symbol[CBT_API_COUNT_] = {
#define CBT_SYM_(ID, val, name) [val] = name,
    CBT_API_LIST(CBT_SYM_)
#undef CBT_SYM_
};

static const char *real_error(void)
{
    return cbt_real_table.error[0] ? cbt_real_table.error : "the CUDA driver lacks this function";
}

static int no_driver_warned;

void cbt_warn_no_driver(const char *function)
{
    cbt_warn_once(&no_driver_warned, "%s; %s returns CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
                  real_error(), function);
}

static void *lookup(void *h, const char *name) { return h ? cbt_real_dlsym(h, name) : NULL; }

/* Does the object behind `h` answer with the shim's own functions (the shim
 * itself, or an object that depends on it)? */
static bool answers_with_shim(void *h)
{
    return cbt_in_shim(lookup(h, "cuMemcpy3DBatchAsync_v2")) || cbt_in_shim(lookup(h, "cuGetProcAddress_v2"));
}

/* Open `path` as the driver; NULL (and cbt_real_table.error says why) when it cannot
 * be loaded, is the shim, or is no CUDA driver. */
static void *open_driver(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(cbt_real_table.error, sizeof cbt_real_table.error, "cannot load the CUDA driver %s: %s", path, e ? e : "not found");
        return NULL;
    }
    const char *wrong = answers_with_shim(h) ? "is cubatchtrace itself, not the CUDA driver"
                        : !lookup(h, "cuInit") ? "is not a CUDA driver (it has no cuInit)"
                                               : NULL;
    if (wrong) {
        snprintf(cbt_real_table.error, sizeof cbt_real_table.error, "%s %s", path, wrong);
        dlclose(h);
        return NULL;
    }
    return h;
}

/*
 * Where an exported function of the shim forwards.  By default to the next
 * definition after the shim, so that an interposer loaded after it, or the
 * program's own libcuda, is called as it would be without the shim; to the
 * chosen driver when CUBATCHTRACE_LIBCUDA names one.  A function of the
 * driver that is missing falls back to the other.
 */
void *cbt_export_target(void *driver_fn, const char *name)
{
    void *next = cbt_next_definition(name);
    if (cbt_real_table.chosen)
        return driver_fn ? driver_fn : next;
    return next ? next : driver_fn;
}

static void load_real(void)
{
    const char *path = secure_getenv("CUBATCHTRACE_LIBCUDA");
    cbt_real_table.chosen = path && *path;
    if (!cbt_real_table.chosen)
        path = "libcuda.so.1";
    /* By name: a libcuda the program already has (linked, or dlopened
     * under any path) answers to its soname, so this is the program's own. */
    void *h = open_driver(path);
    if (h) {
        for (int a = 0; a < CBT_API_COUNT_; a++)
            cbt_real_table.batch[a] = lookup(h, api_symbol[a]);
        cbt_real_table.gpa4 = (cbt_gpa4_fn)lookup(h, "cuGetProcAddress");
        cbt_real_table.gpa5 = (cbt_gpa5_fn)lookup(h, "cuGetProcAddress_v2");
        cbt_real_table.pointer_get_attributes = lookup(h, "cuPointerGetAttributes");
        cbt_real_table.mem_get_address_range = lookup(h, "cuMemGetAddressRange_v2");
        cbt_real_table.array3d_get_descriptor = lookup(h, "cuArray3DGetDescriptor_v2");
        cbt_real_table.device_get_count = lookup(h, "cuDeviceGetCount");
        cbt_real_table.stream_get_ctx[0] = lookup(h, "cuStreamGetCtx");
        cbt_real_table.stream_get_ctx[1] = lookup(h, "cuStreamGetCtx_ptsz");
        cbt_real_table.stream_get_id[0] = lookup(h, "cuStreamGetId");
        cbt_real_table.stream_get_id[1] = lookup(h, "cuStreamGetId_ptsz");
        cbt_real_table.stream_is_capturing[0] = lookup(h, "cuStreamIsCapturing");
        cbt_real_table.stream_is_capturing[1] = lookup(h, "cuStreamIsCapturing_ptsz");
        cbt_real_table.ctx_get_device_v2 = lookup(h, "cuCtxGetDevice_v2");
        cbt_real_table.ctx_get_id = lookup(h, "cuCtxGetId");
        cbt_real_table.ctx_get_current = lookup(h, "cuCtxGetCurrent");
        cbt_real_table.ctx_push = lookup(h, "cuCtxPushCurrent_v2");
        cbt_real_table.ctx_pop = lookup(h, "cuCtxPopCurrent_v2");
        cbt_real_table.event_create = lookup(h, "cuEventCreate");
        cbt_real_table.event_record[0] = lookup(h, "cuEventRecord");
        cbt_real_table.event_record[1] = lookup(h, "cuEventRecord_ptsz");
        cbt_real_table.event_query = lookup(h, "cuEventQuery");
        cbt_real_table.thread_exchange_capture_mode = lookup(h, "cuThreadExchangeStreamCaptureMode");
        cbt_real_table.event_synchronize = lookup(h, "cuEventSynchronize");
        cbt_real_table.event_elapsed = lookup(h, "cuEventElapsedTime_v2");
        if (!cbt_real_table.event_elapsed)
            cbt_real_table.event_elapsed = lookup(h, "cuEventElapsedTime");
        cbt_real_table.stream_create = lookup(h, "cuStreamCreate");
        cbt_real_table.driver_get_version = lookup(h, "cuDriverGetVersion");
        cbt_real_table.graph_get_nodes = lookup(h, "cuGraphGetNodes");
        cbt_real_table.graph_node_get_type = lookup(h, "cuGraphNodeGetType");
        cbt_real_table.graph_node_get_params = lookup(h, "cuGraphNodeGetParams");
        cbt_real_table.graph_child_graph = lookup(h, "cuGraphChildGraphNodeGetGraph");
        cbt_real_table.stream_get_capture_info[0] = lookup(h, "cuStreamGetCaptureInfo_v3");
        cbt_real_table.stream_get_capture_info[1] = lookup(h, "cuStreamGetCaptureInfo_v3_ptsz");
        for (int i = 0; i < 2; i++) {
            /* Older drivers lack some _ptsz entries: the plain one then serves. */
            if (!cbt_real_table.stream_get_ctx[i]) cbt_real_table.stream_get_ctx[i] = cbt_real_table.stream_get_ctx[0];
            if (!cbt_real_table.stream_get_id[i]) cbt_real_table.stream_get_id[i] = cbt_real_table.stream_get_id[0];
            if (!cbt_real_table.stream_is_capturing[i]) cbt_real_table.stream_is_capturing[i] = cbt_real_table.stream_is_capturing[0];
            if (!cbt_real_table.event_record[i]) cbt_real_table.event_record[i] = cbt_real_table.event_record[0];
            if (!cbt_real_table.stream_get_capture_info[i])
                cbt_real_table.stream_get_capture_info[i] = cbt_real_table.stream_get_capture_info[0];
        }
        if (!cbt_real_table.batch[CBT_API_V2] && !cbt_real_table.batch[CBT_API_V1])
            snprintf(cbt_real_table.error, sizeof cbt_real_table.error, "the CUDA driver %s has no cuMemcpy3DBatchAsync (older than 12.8)",
                     path);
        cbt_real_table.handle = h;
        /* The batch doors forward only to a driver the shim could load. */
        for (int a = 0; a < CBT_API_COUNT_; a++)
            cbt_real_table.next_batch[a] = cbt_export_target(cbt_real_table.batch[a], api_symbol[a]);
    }
    /* A driver named by CUBATCHTRACE_LIBCUDA that cannot be had is said at
     * once, whichever function found it out (the batch doors say it otherwise). */
    if (!h && cbt_real_table.chosen)
        cbt_warn_once(&no_driver_warned, "%s; the batch functions return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
                      cbt_real_table.error);
    /* Without a driver, every other function still reaches the program's own
     * (the next definition): only the batch doors answer an error. */
    cbt_real_table.next_gpa4 = (cbt_gpa4_fn)cbt_export_target((void *)cbt_real_table.gpa4, "cuGetProcAddress");
    cbt_real_table.next_gpa5 = (cbt_gpa5_fn)cbt_export_target((void *)cbt_real_table.gpa5, "cuGetProcAddress_v2");
}

const struct cbt_real *cbt_real_slow(void)
{
    /* Re-entered from inside load_real (the driver's own constructor calling a
     * hooked name): answer with what is known so far instead of deadlocking. */
    if (real_loading_here)
        return &cbt_real_table;
    pthread_mutex_lock(&real_lock);
    if (cbt_real_state != 2) {
        real_loading_here = 1;
        __atomic_store_n(&cbt_real_state, 1, __ATOMIC_RELAXED); /* read outside the lock (driver.h) */
        load_real();
        real_loading_here = 0;
        __atomic_store_n(&cbt_real_state, 2, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&real_lock);
    return &cbt_real_table;
}
