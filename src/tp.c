/* SPDX-License-Identifier: MIT */
/*
 * Tracepoint definitions and the loading of the provider.
 *
 * The probes live in libcubatchtrace-tp.so (tracepoints/), which links
 * LTTng-UST.  The shim loads it at its first batch, so a program that never
 * makes a batch never starts LTTng-UST's threads; without the provider (no
 * LTTng-UST on the machine) every tracepoint stays disabled and the shim
 * still validates, reports and forwards.
 */
#include "config.h"

#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "tp.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

static pthread_once_t provider_once = PTHREAD_ONCE_INIT;

/* Defined by the provider (LTTng-UST 2.13's probe registration for the
 * "cubatchtrace" provider): tells it apart from any other library. */
#define PROVIDER_SYMBOL "lttng_ust_tracepoint_provider_cubatchtrace"
static int provider_warned;

static void load_provider(void)
{
    /* Register the shim's tracepoints now: when a batch comes from another
     * library's constructor, the shim's own constructors (which normally do
     * this) may not have run yet.  Both functions count their calls, so the
     * constructors running later change nothing. */
    lttng_ust__tracepoints__init();
    lttng_ust__tracepoints__ptrs_init();

    char path[PATH_MAX];
    const char *env = secure_getenv("CUBATCHTRACE_TP_LIB");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        /* Checked before it is opened RTLD_GLOBAL: the shim itself, loaded
         * once more that way, would put its exports in the global scope. */
        void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            bool self = cbt_in_shim(cbt_real_dlsym(h, "cuMemcpy3DBatchAsync_v2"));
            dlclose(h);
            if (self) {
                cbt_warn_once(&provider_warned, "tracing off: CUBATCHTRACE_TP_LIB=%s is cubatchtrace itself, "
                              "not its tracepoint provider (libcubatchtrace-tp.so)", path);
                return;
            }
        }
    } else {
        /* Beside the shim itself, wherever it was installed or built. */
        Dl_info info;
        if (!dladdr((void *)load_provider, &info) || !info.dli_fname) {
            cbt_warn_once(&provider_warned, "tracing off: cannot tell where libcubatchtrace.so is");
            return;
        }
        const char *slash = strrchr(info.dli_fname, '/');
        int dirlen = slash ? (int)(slash - info.dli_fname) : 1;
        snprintf(path, sizeof path, "%.*s/libcubatchtrace-tp.so", dirlen, slash ? info.dli_fname : ".");
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        cbt_warn_once(&provider_warned, "tracing off: cannot load %s: %s", path, e ? e : "?");
        return;
    }
    /* Any other library loads too, and registers no probe. */
    if (!cbt_real_dlsym(h, PROVIDER_SYMBOL)) {
        cbt_warn_once(&provider_warned, "tracing off: %s is not the cubatchtrace tracepoint provider "
                      "(it has no " PROVIDER_SYMBOL ")", path);
        dlclose(h);
        return;
    }
}

void cbt_tracing_init(void) { pthread_once(&provider_once, load_provider); }

void cbt_trace_lookup(const char *via, const char *symbol, int version, uint64_t flags, int api, void *ip)
{
    if (cbt_tp_enabled(lookup))
        cbt_tp(lookup, via, symbol, version, flags, api, ip);
}
