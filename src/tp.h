/* SPDX-License-Identifier: MIT */
/* The shim's side of tracing (src/tp.c defines the tracepoints). */
#ifndef CBT_SRC_TP_H
#define CBT_SRC_TP_H

#include <stdint.h>

#include "cubatchtrace_tp.h"
#include "batch.h"

/* True once the provider is loaded and a session enables the event. */
#define cbt_tp_enabled(name) lttng_ust_tracepoint_enabled(cubatchtrace, name)
#define cbt_tp(name, ...) lttng_ust_do_tracepoint(cubatchtrace, name, __VA_ARGS__)

/* Nobody listens and nothing is asked of the shim: a door may go straight to
 * the driver.  False until the first batch has read the configuration. */
static inline bool cbt_quiet(void)
{
    return __atomic_load_n(&cbt_ready, __ATOMIC_RELAXED) && !__atomic_load_n(&cbt_always_validate, __ATOMIC_RELAXED) && !cbt_tp_enabled(b);
}

/* The same for the 1D batch, whose events are enabled on their own. */
static inline bool cbt_quiet1d(void)
{
    return __atomic_load_n(&cbt_ready, __ATOMIC_RELAXED) && !__atomic_load_n(&cbt_always_validate, __ATOMIC_RELAXED) && !cbt_tp_enabled(c);
}

/* Load the provider on first use (a program that never makes a batch never loads LTTng-UST). */
void cbt_tracing_init(void);

void cbt_trace_lookup(const char *via, const char *symbol, int version, uint64_t flags, int api, void *ip);

#endif
