/* SPDX-License-Identifier: MIT */
/*
 * The timeline written as a Chrome trace-event file (trace_event.c).
 */
#ifndef CBT_TRACE_EVENT_H
#define CBT_TRACE_EVENT_H

#include <stdio.h>

#include "analyse/timeline.h"
#include "read/reader.h"

/* The ordered model t (cbt_timeline_order) of the reading ro, written to out
 * whole; the caller checks out for errors. */
void cbt_render_trace_events(FILE *out, struct cbt_timeline *t, const struct cbt_read_opts *ro);

#endif
