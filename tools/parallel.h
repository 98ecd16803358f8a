/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): reading many trace directories at once, one
 * thread each, merged into one aggregate (parallel.c).
 */
#ifndef CBT_PARALLEL_H
#define CBT_PARALLEL_H

#include "analyse/agg.h"
#include "read/reader.h"

/* The CPUs this process may run on. */
int cbt_jobs_default(void);
/* cbt_read with the trace directories under o's inputs read on up to `jobs`
 * threads (0: cbt_jobs_default()); live URLs are read as cbt_read does.
 * The aggregate is the same whatever `jobs` is.  o->batch and o->gpu are
 * not called (o->tick: read as one graph). */
int cbt_read_parallel(const struct cbt_read_opts *o, struct cbt_agg *a, int jobs);

#endif
