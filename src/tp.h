/* SPDX-License-Identifier: MIT */
/* The shim's side of tracing (src/tp.c defines the tracepoints). */
#ifndef CBT_SRC_TP_H
#define CBT_SRC_TP_H

#include <stdint.h>

#include "cubatchtrace_tp.h"
#include "util.h"

/* True once the provider is loaded and a session enables the event. */
#define cbt_tp_enabled(name) lttng_ust_tracepoint_enabled(cubatchtrace, name)
#define cbt_tp(name, ...) lttng_ust_do_tracepoint(cubatchtrace, name, __VA_ARGS__)

/* Load the provider on first use (a program that never makes a batch never loads LTTng-UST). */
void cbt_tracing_init(void);

void cbt_trace_lookup(const char *via, const char *symbol, int version, uint64_t flags, int api, void *ip);

#endif
