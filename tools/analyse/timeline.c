/* SPDX-License-Identifier: MIT */
/*
 * The timeline's model (timeline.h): the events are gathered as compact
 * records while the trace is read (GPU times arrive after their batch, read
 * back later), joined (a flow from each call to its GPU span), then given
 * the ids they are written with and sorted by track and time: every track's
 * timestamps rise in file order.  max_batches bounds what is held.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "analyse/timeline.h"
#include "base/util.h"

/* Synthetic ids, above any Linux pid or tid (pid_max is at most 2^22). */
#define GPU_TID_BASE 0x40000000
#define PID_BASE 0x50000000
#define GPU_SORT_BASE 1000000

void cbt_timeline_init(struct cbt_timeline *t, struct cbt_agg *agg, uint64_t max_batches)
{
    *t = (struct cbt_timeline){.agg = agg, .max_batches = max_batches};
}

void cbt_timeline_free(struct cbt_timeline *t)
{
    for (size_t i = 0; i < t->nprocs; i++)
        free(t->procs[i].procname);
    free(t->procs);
    free(t->tracks);
    free(t->recs);
    cbt_kmap_free(&t->proc_map);
    cbt_kmap_free(&t->track_map);
    cbt_kmap_free(&t->batch_map);
}

/* ---------------------------------------------------------------- what is held */

static struct tl_rec *rec_new(struct cbt_timeline *t)
{
    if (!cbt_grow((void **)&t->recs, &t->caprecs, t->nrecs + 1, sizeof(*t->recs))) {
        t->oom = true;
        return NULL;
    }
    struct tl_rec *r = &t->recs[t->nrecs++];
    memset(r, 0, sizeof(*r));
    return r;
}

/* The process of w, added when new; UINT32_MAX when out of memory. */
static uint32_t proc_of(struct cbt_timeline *t, const struct cbt_where *w)
{
    uint32_t v = cbt_kmap_get(&t->proc_map, w->host, cbt_where_pkey(w), 0);
    if (v) {
        struct tl_proc *p = &t->procs[v - 1];
        if (!p->procname && w->procname)
            p->procname = strdup(w->procname);
        return v - 1;
    }
    if (!cbt_grow((void **)&t->procs, &t->capprocs, t->nprocs + 1, sizeof(*t->procs)))
        goto oom;
    if (cbt_kmap_add(&t->proc_map, w->host, cbt_where_pkey(w), 0, (uint32_t)t->nprocs) != 0)
        goto oom;
    t->procs[t->nprocs] = (struct tl_proc){.host = w->host, .vpid = w->vpid, .image = w->image,
                                           .procname = w->procname ? strdup(w->procname) : NULL};
    return (uint32_t)t->nprocs++;
oom:
    t->oom = true;
    return UINT32_MAX;
}

/* The track of a host thread (gpu false: tid) or of a stream (gpu true). */
static uint32_t track_of(struct cbt_timeline *t, uint32_t proc, bool gpu, int64_t tid, uint64_t stream,
                         uint64_t stream_id, int32_t device)
{
    uint64_t a = (uint64_t)proc << 1 | gpu;
    uint64_t b = gpu ? stream : (uint64_t)tid;
    uint64_t c = gpu ? stream_id ^ ((uint64_t)(uint32_t)device << 32) : 0;
    uint32_t v = cbt_kmap_get(&t->track_map, a, b, c);
    if (v)
        return v - 1;
    if (!cbt_grow((void **)&t->tracks, &t->captracks, t->ntracks + 1, sizeof(*t->tracks)))
        goto oom;
    if (cbt_kmap_add(&t->track_map, a, b, c, (uint32_t)t->ntracks) != 0)
        goto oom;
    t->tracks[t->ntracks] = (struct tl_track){.proc = proc, .gpu = gpu, .tid = tid, .stream = stream,
                                              .stream_id = stream_id, .device = device};
    return (uint32_t)t->ntracks++;
oom:
    t->oom = true;
    return UINT32_MAX;
}

/* ---------------------------------------------------------------- reading */

void cbt_timeline_batch(void *ctx, const struct cbt_read_batch *rb)
{
    struct cbt_timeline *t = ctx;
    if (t->oom || rb->not_run) /* copies that run at graph launches, shown there */
        return;
    if (!rb->have_header) { /* ops whose batch event never came: no call to show */
        t->no_header++;
        return;
    }
    if (!rb->w.has_ts) {
        t->no_time++;
        return;
    }
    if (t->max_batches && t->batches >= t->max_batches) {
        t->batches_left_out++;
        return;
    }
    const struct cbt_ev_batch *h = &rb->h;
    uint32_t p = proc_of(t, &rb->w);
    uint32_t tr = p == UINT32_MAX ? p : track_of(t, p, false, h->tid, 0, 0, 0);
    if (tr == UINT32_MAX)
        return;
    uint64_t ops = 0, bytes = 0;
    uint32_t sp = 0;
    for (uint64_t i = cbt_read_op(rb, 0, &sp); i < rb->nops; i = cbt_read_op(rb, i + 1, &sp)) { /* the ops whose chunk came */
        ops++;
        bytes += cbt_op_bytes(&rb->ops[i], &rb->src[i], &rb->dst[i]);
    }
    struct tl_rec *r = rec_new(t);
    if (!r)
        return;
    t->batches++;
    uint32_t host_rec = (uint32_t)t->nrecs;
    /* the batch's time is when the driver returned (its event's, or for a
     * batch written before the call, its batch_end's): the call began
     * driver_ns before */
    *r = (struct tl_rec){.kind = TL_HOST, .track = tr, .ts = rb->w.ts_ns - (int64_t)h->driver_ns,
                         .dur = h->driver_ns, .batch_id = h->batch_id,
                         .u.h = {.num_ops = h->num_ops, .ops = ops, .bytes = bytes, .stream = h->stream,
                                 .stream_id = h->stream_id, .caller = h->caller, .result = h->result,
                                 .device = h->device, .api = h->api, .door = h->door, .outcome = h->outcome,
                                 .state = (uint8_t)rb->state}};
    /* a batch id seen twice keeps its first span for the flow */
    if (!cbt_kmap_get(&t->batch_map, rb->w.host, (uint64_t)rb->w.vpid, h->batch_id) &&
        cbt_kmap_add(&t->batch_map, rb->w.host, (uint64_t)rb->w.vpid, h->batch_id, host_rec - 1) != 0) {
        t->oom = true;
        return;
    }
    for (uint64_t i = 0; i < rb->nfindings; i++) {
        const struct cbt_finding *f = &rb->findings[i];
        if (!(r = rec_new(t)))
            return;
        t->findings++;
        *r = (struct tl_rec){.kind = TL_FINDING, .track = tr, .ts = rb->w.ts_ns, .batch_id = h->batch_id,
                             .u.f = {.op = f->op, .other_op = f->other_op, .value = f->value, .limit = f->limit,
                                     .rule = f->rule, .severity = f->severity, .side = f->side}};
    }
    if ((t->nrecs & 4095) == 0)
        cbt_progress();
}

void cbt_timeline_gpu(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g)
{
    struct cbt_timeline *t = ctx;
    if (t->oom)
        return;
    t->gpu_events++;
    if (g->status < sizeof(t->gpu_status) / sizeof(t->gpu_status[0]) && cbt_gpu_status_name(g->status))
        t->gpu_status[g->status]++;
    else
        t->gpu_status_other++;
    if (g->status != CBT_GPU_TIMED || !w->has_ts)
        return;
    if (t->max_batches && t->batches >= t->max_batches &&
        !cbt_kmap_get(&t->batch_map, w->host, (uint64_t)w->vpid, g->batch_id)) {
        t->gpu_left_out++; /* its batch can no longer be kept: not held */
        return;
    }
    uint32_t p = proc_of(t, w);
    uint32_t tr = p == UINT32_MAX ? p : track_of(t, p, true, 0, g->stream, g->stream_id, g->device);
    struct tl_rec *r = tr == UINT32_MAX ? NULL : rec_new(t);
    if (!r)
        return;
    *r = (struct tl_rec){.kind = TL_GPU, .track = tr, .ts = w->ts_ns + g->start_rel_ns, .dur = g->gpu_ns,
                         .batch_id = g->batch_id, .u.g = {.ops = g->ops, .bytes = g->bytes, .api = g->api}};
}

/* Each GPU span to its call: a flow from the one to the other.  With
 * --max-batches, GPU spans of the batches left out are left out too. */
void cbt_timeline_join(struct cbt_timeline *t)
{
    size_t n = t->nrecs;
    for (size_t i = 0; i < n && !t->oom; i++) {
        struct tl_rec *g = &t->recs[i];
        if (g->kind != TL_GPU)
            continue;
        const struct tl_track *tr = &t->tracks[g->track];
        const struct tl_proc *p = &t->procs[tr->proc];
        uint32_t hv = cbt_kmap_get(&t->batch_map, p->host, (uint64_t)p->vpid, g->batch_id);
        struct tl_rec *h = hv ? &t->recs[hv - 1] : NULL;
        if (!h || h->flow) {
            if (t->batches_left_out) {
                g->kind = TL_DROPPED;
                t->gpu_left_out++;
            } else {
                t->gpu_without_batch++;
            }
            continue;
        }
        uint64_t id = ++t->flows;
        h->flow = g->flow = id;
        struct tl_rec *out = rec_new(t), *in;
        if (!out)
            return;
        h = &t->recs[hv - 1];
        g = &t->recs[i];
        *out = (struct tl_rec){.kind = TL_FLOW_OUT, .track = h->track, .ts = h->ts, .flow = id, .batch_id = h->batch_id};
        if (!(in = rec_new(t)))
            return;
        g = &t->recs[i];
        *in = (struct tl_rec){.kind = TL_FLOW_IN, .track = g->track, .ts = g->ts, .flow = id, .batch_id = g->batch_id};
    }
    size_t k = 0; /* drop the GPU spans left out */
    for (size_t i = 0; i < t->nrecs; i++)
        if (t->recs[i].kind != TL_DROPPED)
            t->recs[k++] = t->recs[i];
    t->nrecs = k;
}

/* ---------------------------------------------------------------- ids and order */

static const struct cbt_timeline *sort_tl;

static int cmp_proc(const void *x, const void *y)
{
    const struct tl_proc *a = &sort_tl->procs[*(const uint32_t *)x], *b = &sort_tl->procs[*(const uint32_t *)y];
    int c = strcmp(cbt_agg_host_name(sort_tl->agg, a->host), cbt_agg_host_name(sort_tl->agg, b->host));
    if (c)
        return c;
    if (a->vpid != b->vpid)
        return (a->vpid > b->vpid) - (a->vpid < b->vpid);
    /* the images of one pid in the order they started (the summary's numbers), then by tag */
    uint32_t na = cbt_agg_image_number(sort_tl->agg, a->host, cbt_pkey(a->image, a->vpid));
    uint32_t nb = cbt_agg_image_number(sort_tl->agg, b->host, cbt_pkey(b->image, b->vpid));
    if (na != nb)
        return (na > nb) - (na < nb);
    return (a->image > b->image) - (a->image < b->image);
}

static int cmp_track(const void *x, const void *y)
{
    const struct tl_track *a = &sort_tl->tracks[*(const uint32_t *)x], *b = &sort_tl->tracks[*(const uint32_t *)y];
    if (a->gpu != b->gpu)
        return a->gpu - b->gpu;
    if (!a->gpu)
        return (a->tid > b->tid) - (a->tid < b->tid);
    if (a->device != b->device)
        return (a->device > b->device) - (a->device < b->device);
    if (a->stream_id != b->stream_id)
        return (a->stream_id > b->stream_id) - (a->stream_id < b->stream_id);
    return (a->stream > b->stream) - (a->stream < b->stream);
}

/* pids: the real one where it is unique and known, else a synthetic one
 * (the name says the real); tids: real for threads, synthetic for streams;
 * sort indexes: processes by host and pid, threads by tid, then streams. */
static int assign_ids(struct cbt_timeline *t)
{
    uint32_t *order = malloc((t->nprocs + t->ntracks + 1) * sizeof(*order));
    if (!order)
        return -1;
    sort_tl = t;
    for (size_t i = 0; i < t->nprocs; i++)
        order[i] = (uint32_t)i;
    qsort(order, t->nprocs, sizeof(*order), cmp_proc);
    for (size_t i = 0; i < t->nprocs; i++) {
        struct tl_proc *p = &t->procs[order[i]];
        p->sort = (uint32_t)i;
        bool unique = p->vpid > 0 && p->vpid < PID_BASE;
        for (size_t k = 0; k < t->nprocs && unique; k++)
            if (k != order[i] && t->procs[k].vpid == p->vpid)
                unique = false;
        p->pid_out = unique ? p->vpid : PID_BASE + (int64_t)i;
    }
    for (size_t i = 0; i < t->ntracks; i++)
        order[i] = (uint32_t)i;
    qsort(order, t->ntracks, sizeof(*order), cmp_track);
    uint32_t ngpu = 0;
    for (size_t i = 0; i < t->ntracks; i++) {
        struct tl_track *tr = &t->tracks[order[i]];
        tr->sort = tr->gpu ? GPU_SORT_BASE + (uint32_t)i : (uint32_t)i;
        tr->tid_out = tr->gpu ? GPU_TID_BASE + ngpu++ : tr->tid;
    }
    free(order);
    return 0;
}

static int cmp_rec(const void *x, const void *y)
{
    const struct tl_rec *a = x, *b = y;
    const struct tl_track *ta = &sort_tl->tracks[a->track], *tb = &sort_tl->tracks[b->track];
    if (ta->proc != tb->proc)
        return sort_tl->procs[ta->proc].sort < sort_tl->procs[tb->proc].sort ? -1 : 1;
    if (ta->sort != tb->sort)
        return ta->sort < tb->sort ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->kind != b->kind) /* a span before its flow, at the same time */
        return a->kind < b->kind ? -1 : 1;
    if (a->dur != b->dur) /* the enclosing span first */
        return a->dur > b->dur ? -1 : 1;
    return (a->batch_id > b->batch_id) - (a->batch_id < b->batch_id);
}

int cbt_timeline_order(struct cbt_timeline *t)
{
    if (assign_ids(t) != 0)
        return -1;
    sort_tl = t;
    qsort(t->recs, t->nrecs, sizeof(*t->recs), cmp_rec);
    cbt_progress();
    t->origin = INT64_MAX;
    t->host_spans = t->gpu_spans = 0;
    for (size_t i = 0; i < t->nrecs; i++) {
        if (t->recs[i].ts < t->origin)
            t->origin = t->recs[i].ts;
        t->host_spans += t->recs[i].kind == TL_HOST;
        t->gpu_spans += t->recs[i].kind == TL_GPU;
    }
    if (t->origin == INT64_MAX)
        t->origin = 0;
    return 0;
}
