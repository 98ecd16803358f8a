/* SPDX-License-Identifier: MIT */
/*
 * The tracepoint provider, built as its own library (libcubatchtrace-tp.so)
 * that the shim loads on the first batch.  A process that never makes a batch
 * never loads LTTng-UST.
 */
#include "config.h"
#define CBT_TP_VERSION PACKAGE_VERSION
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
/* The `ip` argument of every event is the caller's return address. */
#define LTTNG_UST_TP_IP_PARAM ip
#include "cubatchtrace_tp.h"
