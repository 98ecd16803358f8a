/* SPDX-License-Identifier: MIT */
/*
 * The aggregate's GPU time (agg_gpu.c): the cubatchtrace:gpu_time events in
 * tables, and over time.
 */
#ifndef CBT_AGG_GPU_H
#define CBT_AGG_GPU_H

#include <stdbool.h>
#include <stdint.h>

#include "analyse/agg.h"
#include "analyse/classes.h"
#include "analyse/ktab.h"

/* GPU time (agg_gpu.c): the timed batches by direction (DIR_COUNT: "mixed"),
 * memory kinds, mean bytes per op, direction and mean bytes per op together,
 * stream and device, and over time. */
#define GPU_STATUS_N 7  /* the statuses of CBT_GPU_STATUS_LIST, then out of range */
#define GPU_BUCKETS 128 /* over time: buckets per stream */
#define GPU_TIME_STREAMS 16 /* over time: streams shown, then "other" */
struct gpudev {
    uint32_t host;
    int32_t dev;
    struct gpurow r;
};
struct gpu_time {
    uint64_t events, status[GPU_STATUS_N];
    struct gpurow total;
    struct gpurow dir[DIR_COUNT + 1], kind[NKIND][NKIND], kind_mixed, osize[NHIST];
    struct gpurow dir_osize[DIR_COUNT + 1][NHIST]; /* [direction as dir][op-size bin as osize] */
    struct ktab streams; /* (host, process image (cbt_pkey), stream), extra: stream_id */
    struct gpudev devs[NDEV];
    unsigned ndevs;
    struct gpurow dev_other, dev_unknown;
    uint64_t dev_overflowed;
    /* over time: the GPU starts seen span [lo, hi]; buckets of bucket_ns
     * (the smallest power of 2 for which GPU_BUCKETS of them, from lo
     * rounded down to a multiple, reach hi) from start_ns; so the grid
     * depends on lo and hi alone, not on the order batches came in */
    bool any_time;
    int64_t lo, hi, start_ns;
    uint64_t bucket_ns;
};
/* A gpu_time event into g (w->ts_ns: the event's time; the GPU start is
 * w->ts_ns + start_rel_ns).  g->streams is agg.c's to create and free. */
void cbt_gpu_add(struct gpu_time *g, const struct cbt_where *w, const struct cbt_ev_gpu *e);
/* Before merging part p into whole w: both onto one grid over time (the one
 * reading both parts' batches at once would have built). */
void cbt_gpu_align(struct gpu_time *w, struct gpu_time *p);
/* Adds p's tables but its streams (agg.c merges those as keyed tables, once aligned). */
void cbt_gpu_merge(struct gpu_time *w, const struct gpu_time *p);

#endif
