/* SPDX-License-Identifier: MIT */
/*
 * A batch's GPU time joined with the batch: see gpujoin.h.
 *
 * A gpu_time event follows its batch's record in the trace (the shim
 * queues the read-back only once the batch is written, and the trace's
 * clock orders them), so each expected batch waits here from its record to
 * its gpu_time event: as many as a process has in flight, a few hundred per
 * thread.  Batches whose event never comes (a process killed before its
 * read-back) are forgotten oldest first past GJ_MAX, so that memory stays
 * flat over any trace.  Keyed by (host, vpid, batch id), as the assembler
 * keys its batches.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>

#include "read/gpujoin.h"

#define GJ_BUCKETS (1u << 14)
#define GJ_MAX (1u << 17) /* batches waiting at most */

struct gj_ent {
    uint32_t host;
    int64_t vpid;
    uint64_t id;
    bool have_batch, have_ops;
    struct cbt_ev_gpu g;
    struct gj_ent *next;          /* in its bucket */
    struct gj_ent *older, *newer; /* in arrival order */
};

struct cbt_gpujoin {
    size_t n; /* first: cbt_gpujoin_waiting reads it */
    struct gj_ent *buckets[GJ_BUCKETS];
    struct gj_ent *oldest, *newest, *free;
};

struct cbt_gpujoin *cbt_gpujoin_new(void) { return calloc(1, sizeof(struct cbt_gpujoin)); }

void cbt_gpujoin_free(struct cbt_gpujoin *j)
{
    if (!j)
        return;
    for (struct gj_ent *e = j->oldest, *n; e; e = n) {
        n = e->newer;
        free(e);
    }
    for (struct gj_ent *e = j->free, *n; e; e = n) {
        n = e->next;
        free(e);
    }
    free(j);
}

static unsigned bucket(uint32_t host, int64_t vpid, uint64_t id)
{
    uint64_t h = (id ^ (uint64_t)vpid * 0x9E3779B97F4A7C15ull ^ (uint64_t)host << 48) * 0xff51afd7ed558ccdull;
    return (unsigned)(h >> 50) & (GJ_BUCKETS - 1);
}

static struct gj_ent **find(struct cbt_gpujoin *j, const struct cbt_where *w, uint64_t id)
{
    struct gj_ent **p = &j->buckets[bucket(w->host, w->vpid, id)];
    while (*p && !((*p)->id == id && (*p)->vpid == w->vpid && (*p)->host == w->host))
        p = &(*p)->next;
    return p;
}

/* Out of its bucket (at *p) and the arrival order, onto the free list. */
static void drop(struct cbt_gpujoin *j, struct gj_ent **p)
{
    struct gj_ent *e = *p;
    *p = e->next;
    if (e->older)
        e->older->newer = e->newer;
    else
        j->oldest = e->newer;
    if (e->newer)
        e->newer->older = e->older;
    else
        j->newest = e->older;
    e->next = j->free;
    j->free = e;
    j->n--;
}

void cbt_gpujoin_expect(struct cbt_gpujoin *j, const struct cbt_where *w, uint64_t batch_id)
{
    if (*find(j, w, batch_id))
        return; /* the same batch twice (a duplicated event): one entry */
    if (j->n >= GJ_MAX) {
        const struct cbt_where o = {.host = j->oldest->host, .vpid = j->oldest->vpid};
        drop(j, find(j, &o, j->oldest->id));
    }
    struct gj_ent *e = j->free;
    if (e)
        j->free = e->next;
    else if (!(e = malloc(sizeof *e)))
        return; /* its gpu_time event will say what it can */
    *e = (struct gj_ent){.host = w->host, .vpid = w->vpid, .id = batch_id, .older = j->newest};
    e->g.tid = w->vtid >= 0 ? (int32_t)w->vtid : -1;
    e->g.device = -1;
    e->g.src_kind = e->g.dst_kind = CBT_GPU_MIXED_KIND;
    e->g.src_device = e->g.dst_device = -1;
    if (j->newest)
        j->newest->newer = e;
    else
        j->oldest = e;
    j->newest = e;
    struct gj_ent **b = &j->buckets[bucket(w->host, w->vpid, batch_id)];
    e->next = *b;
    *b = e;
    j->n++;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* The ops of o into e's summary: their bytes; the kind and device of every
 * source (destination) where all share one, else mixed. */
static void add_ops(struct gj_ent *e, const struct cbt_ops *o)
{
    struct cbt_ev_gpu *g = &e->g;
    for (uint32_t i = 0; i < o->count; i++) {
        g->bytes = add_sat(g->bytes, o->bytes[i]);
        int32_t sd = o->src_dev[i], dd = o->dst_dev[i];
        if (!e->have_ops) {
            g->src_kind = o->src_mem[i];
            g->dst_kind = o->dst_mem[i];
            g->src_device = sd;
            g->dst_device = dd;
            e->have_ops = true;
            continue;
        }
        if (g->src_kind != o->src_mem[i])
            g->src_kind = CBT_GPU_MIXED_KIND;
        if (g->dst_kind != o->dst_mem[i])
            g->dst_kind = CBT_GPU_MIXED_KIND;
        if (g->src_device != sd)
            g->src_device = CBT_GPU_MIXED_DEVICE;
        if (g->dst_device != dd)
            g->dst_device = CBT_GPU_MIXED_DEVICE;
    }
    g->ops += o->count;
}

void cbt_gpujoin_batch(struct cbt_gpujoin *j, const struct cbt_where *w, const struct cbt_batch *b,
                       const struct cbt_ops *o)
{
    struct gj_ent *e = *find(j, w, b->batch_id);
    if (!e || e->have_batch)
        return;
    e->have_batch = true;
    if (w->vtid >= 0)
        e->g.tid = (int32_t)w->vtid;
    e->g.api = b->api;
    e->g.stream = b->stream;
    e->g.stream_id = b->stream_id;
    e->g.device = b->device;
    e->g.driver_ns = b->driver_ns;
    if (o)
        add_ops(e, o);
}

void cbt_gpujoin_ops(struct cbt_gpujoin *j, const struct cbt_where *w, uint64_t batch_id, const struct cbt_ops *o)
{
    struct gj_ent *e = *find(j, w, batch_id);
    if (e && e->have_batch)
        add_ops(e, o);
}

bool cbt_gpujoin_take(struct cbt_gpujoin *j, const struct cbt_where *w, const struct cbt_ev_gpu_time *t,
                      struct cbt_ev_gpu *out)
{
    struct gj_ent **p = find(j, w, t->batch_id);
    const bool found = *p != NULL;
    if (found) {
        *out = (*p)->g;
        drop(j, p);
    } else {
        *out = (struct cbt_ev_gpu){.tid = -1, .device = -1, .src_kind = CBT_MEM_UNKNOWN,
                                   .dst_kind = CBT_MEM_UNKNOWN, .src_device = -1, .dst_device = -1};
    }
    out->batch_id = t->batch_id;
    out->status = t->status;
    out->start_rel_ns = t->start_rel_ns;
    out->gpu_ns = t->gpu_ns;
    return found;
}
