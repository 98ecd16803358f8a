/* SPDX-License-Identifier: MIT */
/*
 * GPU time in the aggregate: the cubatchtrace:gpu_time events of the timed
 * batches (CUBATCHTRACE_GPU_TIME=1) summed by direction, memory kinds, mean
 * bytes per op, direction and mean bytes per op together, stream and device,
 * and per stream over time.  A batch's GPU
 * time is attributed whole: its ops are not timed one by one.
 *
 * Over time, the buckets of every stream share one grid: bucket_ns the
 * smallest power of 2 for which GPU_BUCKETS buckets, from the earliest GPU
 * start rounded down to a multiple of it, reach the latest.  A batch past
 * the grid doubles the width (pairs of buckets merge) until it fits.  The
 * grid is thus a function of the earliest and latest starts alone, and
 * parts read on several threads merge into what one reader would have made.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>

#include "analyse/agg_gpu.h"

/* The batch's direction when all its ops share one (DIR_*), else DIR_COUNT ("mixed"). */
static unsigned gpu_direction(const struct cbt_ev_gpu *e)
{
    if (e->src_kind == CBT_GPU_MIXED_KIND || e->dst_kind == CBT_GPU_MIXED_KIND)
        return DIR_COUNT;
    int s = cbt_mem_class(e->src_kind, CBT_OPERAND_INVALID), d = cbt_mem_class(e->dst_kind, CBT_OPERAND_INVALID);
    /* device to device with the devices of one side mixed: some ops may be peer copies, others not */
    if (s == 'D' && d == 'D' && (e->src_device == CBT_GPU_MIXED_DEVICE || e->dst_device == CBT_GPU_MIXED_DEVICE))
        return DIR_COUNT;
    return (unsigned)cbt_direction(s, d, e->src_device, e->dst_device);
}

/* The row of the stream's device `dev` of `host`: "unknown" for a negative ordinal, "other" when full. */
static struct gpurow *gpu_dev(struct gpu_time *g, uint32_t host, int32_t dev)
{
    if (dev < 0)
        return &g->dev_unknown;
    for (unsigned i = 0; i < g->ndevs; i++)
        if (g->devs[i].dev == dev && g->devs[i].host == host)
            return &g->devs[i].r;
    if (g->ndevs == NDEV) {
        g->dev_overflowed++;
        return &g->dev_other;
    }
    struct gpudev *d = &g->devs[g->ndevs++];
    memset(d, 0, sizeof(*d));
    d->host = host;
    d->dev = dev;
    return &d->r;
}

/* ---------------------------------------------------------------- over time */

/* The largest multiple of w at or below t. */
static int64_t floor_to(int64_t t, uint64_t w)
{
    int64_t q = t / (int64_t)w;
    if (t % (int64_t)w < 0)
        q--;
    return q * (int64_t)w;
}

/* Whether GPU_BUCKETS buckets of w from lo rounded down (*t0) reach hi. */
static bool grid_fits(int64_t lo, int64_t hi, uint64_t w, int64_t *t0)
{
    *t0 = floor_to(lo, w);
    return ((uint64_t)hi - (uint64_t)*t0) / w < GPU_BUCKETS;
}

/* Buckets of grid (ow, ot0) onto the coarser grid (w, t0), which covers them. */
static void rebucket(uint64_t *b, uint64_t ow, int64_t ot0, uint64_t w, int64_t t0)
{
    uint64_t n[GPU_BUCKETS] = {0};
    for (unsigned i = 0; i < GPU_BUCKETS; i++)
        if (b[i])
            n[((uint64_t)ot0 + i * ow - (uint64_t)t0) / w] += b[i];
    memcpy(b, n, sizeof(n));
}

static void rebucket_streams(struct ktab *t, uint64_t ow, int64_t ot0, uint64_t w, int64_t t0)
{
    if (ow == w && ot0 == t0)
        return;
    for (size_t i = 0; i < t->n; i++)
        if (t->ents[i].over_time)
            rebucket(t->ents[i].over_time, ow, ot0, w, t0);
    if (t->other.over_time)
        rebucket(t->other.over_time, ow, ot0, w, t0);
}

/* The grid of the starts [lo, hi]: the smallest width from min_w on that holds them. */
static void regrid(struct gpu_time *g, int64_t lo, int64_t hi, uint64_t min_w)
{
    uint64_t w = g->bucket_ns > min_w ? g->bucket_ns : min_w;
    int64_t t0;
    if (w == 0)
        w = 1;
    while (!grid_fits(lo, hi, w, &t0) && w < (1ull << 62))
        w <<= 1;
    if (g->any_time)
        rebucket_streams(&g->streams, g->bucket_ns, g->start_ns, w, t0);
    g->any_time = true;
    g->lo = lo;
    g->hi = hi;
    g->bucket_ns = w;
    g->start_ns = t0;
}

static void over_time(struct gpu_time *g, struct kent *s, int64_t start, uint64_t gpu_ns)
{
    if (!g->any_time)
        regrid(g, start, start, 1);
    else if (start < g->lo || start > g->hi)
        regrid(g, start < g->lo ? start : g->lo, start > g->hi ? start : g->hi, 0);
    if (!s->over_time && !(s->over_time = calloc(GPU_BUCKETS, sizeof(*s->over_time))))
        return;
    s->over_time[((uint64_t)start - (uint64_t)g->start_ns) / g->bucket_ns] += gpu_ns;
}

/* ---------------------------------------------------------------- events */

void cbt_gpu_add(struct gpu_time *g, const struct cbt_where *w, const struct cbt_ev_gpu *e)
{
    g->events++;
    g->status[e->status < GPU_STATUS_N - 1 ? e->status : GPU_STATUS_N - 1]++;
    if (e->status != CBT_GPU_TIMED)
        return;
    const struct gpurow r = {1, e->ops, e->bytes, e->gpu_ns, e->driver_ns};
    unsigned sk = e->src_kind < NKIND - 1 ? e->src_kind : NKIND - 1;
    unsigned dk = e->dst_kind < NKIND - 1 ? e->dst_kind : NKIND - 1;
    bool mixed = e->src_kind == CBT_GPU_MIXED_KIND || e->dst_kind == CBT_GPU_MIXED_KIND;
    unsigned dir = gpu_direction(e), bin = cbt_hist_bin(e->ops ? e->bytes / e->ops : 0);
    cbt_gpurow_add(&g->total, &r);
    cbt_gpurow_add(&g->dir[dir], &r);
    cbt_gpurow_add(mixed ? &g->kind_mixed : &g->kind[sk][dk], &r);
    cbt_gpurow_add(&g->osize[bin], &r);
    cbt_gpurow_add(&g->dir_osize[dir][bin], &r);
    cbt_gpurow_add(gpu_dev(g, w->host, e->device), &r);
    bool created;
    struct kent *s = cbt_ktab_get(&g->streams, w->host, cbt_where_pkey(w), e->stream, &created);
    if (created)
        s->extra = e->stream_id;
    cbt_gpurow_add(&s->gpu, &r);
    if (w->has_ts)
        over_time(g, s, w->ts_ns + e->start_rel_ns, e->gpu_ns);
}

/* ---------------------------------------------------------------- parts */

void cbt_gpu_align(struct gpu_time *w, struct gpu_time *p)
{
    if (!p->any_time)
        return;
    if (!w->any_time) {
        w->any_time = true;
        w->lo = p->lo;
        w->hi = p->hi;
        w->bucket_ns = p->bucket_ns;
        w->start_ns = p->start_ns;
        return;
    }
    regrid(w, p->lo < w->lo ? p->lo : w->lo, p->hi > w->hi ? p->hi : w->hi, p->bucket_ns);
    rebucket_streams(&p->streams, p->bucket_ns, p->start_ns, w->bucket_ns, w->start_ns);
    p->lo = w->lo;
    p->hi = w->hi;
    p->bucket_ns = w->bucket_ns;
    p->start_ns = w->start_ns;
}

static void rows_add(struct gpurow *into, const struct gpurow *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cbt_gpurow_add(&into[i], &r[i]);
}

void cbt_gpu_merge(struct gpu_time *w, const struct gpu_time *p)
{
    w->events += p->events;
    for (unsigned i = 0; i < GPU_STATUS_N; i++)
        w->status[i] += p->status[i];
    cbt_gpurow_add(&w->total, &p->total);
    rows_add(w->dir, p->dir, DIR_COUNT + 1);
    rows_add(&w->kind[0][0], &p->kind[0][0], NKIND * NKIND);
    cbt_gpurow_add(&w->kind_mixed, &p->kind_mixed);
    rows_add(w->osize, p->osize, NHIST);
    rows_add(&w->dir_osize[0][0], &p->dir_osize[0][0], (DIR_COUNT + 1) * NHIST);
    for (unsigned i = 0; i < p->ndevs; i++)
        cbt_gpurow_add(gpu_dev(w, p->devs[i].host, p->devs[i].dev), &p->devs[i].r);
    cbt_gpurow_add(&w->dev_unknown, &p->dev_unknown);
    cbt_gpurow_add(&w->dev_other, &p->dev_other);
    w->dev_overflowed += p->dev_overflowed;
}
