/*
 * Finding the real driver.
 *
 * The shim never links libcuda: it opens "libcuda.so.1" (or the path in
 * CUBATCHTRACE_LIBCUDA) the first time a door is used, from whatever thread
 * and whatever constructor that happens in.  Lookups here go through the real
 * dlsym, never the shim's own (src/dlsym.c), so they cannot recurse.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

static void *(*real_dlsym_fn)(void *, const char *);

/* The real dlsym's address (also used by src/dlsym_stub.S). */
void *cbt_real_dlsym_fn(void) __attribute__((visibility("hidden")));
void *cbt_real_dlsym_fn(void)
{
    void *(*fn)(void *, const char *) = __atomic_load_n(&real_dlsym_fn, __ATOMIC_ACQUIRE);
    if (cbt_unlikely(!fn)) {
        /* dlvsym is not hooked; these are the versions glibc gave dlsym over time. */
        fn = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!fn)
            fn = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (fn)
            __atomic_store_n(&real_dlsym_fn, fn, __ATOMIC_RELEASE);
    }
    return (void *)fn;
}

void *cbt_real_dlsym(void *handle, const char *name)
{
    void *(*fn)(void *, const char *) = (void *(*)(void *, const char *))cbt_real_dlsym_fn();
    return fn ? fn(handle, name) : NULL;
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

/* ---- configuration ---- */

struct cbt_config cbt_config_table;
int cbt_config_ready;
#define config cbt_config_table
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void read_config(void)
{
    const char *m = secure_getenv("CUBATCHTRACE_MODE");
    config.mode = CBT_MODE_OBSERVE;
    if (m && *m) {
        if (!strcmp(m, "off"))
            config.mode = CBT_MODE_OFF;
        else if (!strcmp(m, "strict"))
            config.mode = CBT_MODE_STRICT;
        else if (strcmp(m, "observe"))
            cbt_warn_once(NULL, "CUBATCHTRACE_MODE=%s is not one of observe, strict, off: using observe", m);
    }
    const char *s = secure_getenv("CUBATCHTRACE_STRICT");
    config.strict_hazards = s && !strcmp(s, "hazards");
    const char *r = secure_getenv("CUBATCHTRACE_REPORT");
    config.report_stderr = r && !strcmp(r, "stderr");
    if (r && *r && !config.report_stderr)
        cbt_warn_once(NULL, "CUBATCHTRACE_REPORT=%s is not supported (only 'stderr'): no report", r);
    /* Settings of earlier versions, now without effect: say so once. */
    static const char *const gone[] = {"CUBATCHTRACE_RECORD", "CUBATCHTRACE_QUEUE_KB"};
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
        if (secure_getenv(gone[i]))
            cbt_warn_once(NULL, "%s is no longer read: every batch is recorded on its calling thread", gone[i]);
}

const struct cbt_config *cbt_config_slow(void)
{
    pthread_once(&config_once, read_config);
    __atomic_store_n(&cbt_config_ready, 1, __ATOMIC_RELEASE);
    return &config;
}

/* ---- the real driver ---- */

struct cbt_real cbt_real_table;
int cbt_real_state; /* 0: not loaded, 1: loading, 2: loaded (or failed for good) */
#define real cbt_real_table
#define real_state cbt_real_state
static pthread_mutex_t real_lock = PTHREAD_MUTEX_INITIALIZER;
static CBT_TLS int real_loading_here;

static const char *const api_symbol[CBT_API_COUNT_] = {
#define CBT_SYM_(ID, val, name) [val] = name,
    CBT_API_LIST(CBT_SYM_)
#undef CBT_SYM_
};

static const char *real_error(void)
{
    return real.error[0] ? real.error : "the CUDA driver lacks this function";
}

static int no_driver_warned;

void cbt_warn_no_driver(const char *function)
{
    cbt_warn_once(&no_driver_warned, "%s; %s returns CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
                  real_error(), function);
}

static void *lookup(void *h, const char *name) { return h ? cbt_real_dlsym(h, name) : NULL; }

/* The exported batch function of this very library, to tell it apart from the driver's. */
extern CUresult cuMemcpy3DBatchAsync_v2(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);

static void load_real(void)
{
    const char *path = secure_getenv("CUBATCHTRACE_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(real.error, sizeof real.error, "cannot load the CUDA driver %s: %s", path, e ? e : "not found");
        return;
    }
    void *v2 = lookup(h, "cuMemcpy3DBatchAsync_v2");
    if (v2 == (void *)cuMemcpy3DBatchAsync_v2) {
        snprintf(real.error, sizeof real.error, "%s is cubatchtrace itself, not the CUDA driver", path);
        dlclose(h);
        return;
    }
    for (int a = 0; a < CBT_API_COUNT_; a++)
        real.batch[a] = lookup(h, api_symbol[a]);
    real.gpa4 = (cbt_gpa4_fn)lookup(h, "cuGetProcAddress");
    real.gpa5 = (cbt_gpa5_fn)lookup(h, "cuGetProcAddress_v2");
    real.pointer_get_attributes = lookup(h, "cuPointerGetAttributes");
    real.mem_get_address_range = lookup(h, "cuMemGetAddressRange_v2");
    real.array3d_get_descriptor = lookup(h, "cuArray3DGetDescriptor_v2");
    real.device_get_count = lookup(h, "cuDeviceGetCount");
    real.stream_get_ctx[0] = lookup(h, "cuStreamGetCtx");
    real.stream_get_ctx[1] = lookup(h, "cuStreamGetCtx_ptsz");
    real.stream_get_id[0] = lookup(h, "cuStreamGetId");
    real.stream_get_id[1] = lookup(h, "cuStreamGetId_ptsz");
    real.stream_is_capturing[0] = lookup(h, "cuStreamIsCapturing");
    real.stream_is_capturing[1] = lookup(h, "cuStreamIsCapturing_ptsz");
    real.ctx_get_device_v2 = lookup(h, "cuCtxGetDevice_v2");
    for (int i = 0; i < 2; i++) {
        /* Older drivers lack some _ptsz entries: the plain one then serves. */
        if (!real.stream_get_ctx[i]) real.stream_get_ctx[i] = real.stream_get_ctx[0];
        if (!real.stream_get_id[i]) real.stream_get_id[i] = real.stream_get_id[0];
        if (!real.stream_is_capturing[i]) real.stream_is_capturing[i] = real.stream_is_capturing[0];
    }
    cbt_memwrap_load(h);
    if (!real.batch[CBT_API_V2] && !real.batch[CBT_API_V1])
        snprintf(real.error, sizeof real.error, "the CUDA driver %s has no cuMemcpy3DBatchAsync (older than 12.8)", path);
    real.handle = h;
}

const struct cbt_real *cbt_real_slow(void)
{
    /* Re-entered from inside load_real (the driver's own constructor calling a
     * hooked name): answer with what is known so far instead of deadlocking. */
    if (real_loading_here)
        return &real;
    pthread_mutex_lock(&real_lock);
    if (real_state != 2) {
        real_loading_here = 1;
        real_state = 1;
        load_real();
        real_loading_here = 0;
        __atomic_store_n(&real_state, 2, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&real_lock);
    return &real;
}
