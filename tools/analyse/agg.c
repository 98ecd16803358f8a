/* SPDX-License-Identifier: MIT */
/*
 * Streaming aggregation of cubatchtrace events.
 *
 * Memory does not grow with the number of events: per-op figures go straight
 * into fixed tables; a batch whose ops arrive in several events (batch +
 * batch_ops, possibly from different streams when the thread migrated) waits
 * in a bounded table keyed by (host, vpid, batch_id) until all its ops came
 * (the batch id's high 32 bits name the process image); processes (images),
 * threads, streams and call sites live in bounded tables keyed by the image
 * (cbt_pkey) with an "other" row when full.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>

#include "analyse/advice.h"
#include "analyse/agg_internal.h"
#include "analyse/callsite.h"

/* ---------------------------------------------------------------- rows */

static inline void row_sample(struct row *r, uint64_t v)
{
    if (r->n == 0 || v < r->min)
        r->min = v;
    if (v > r->max)
        r->max = v;
    r->n++;
    r->sum += v;
}

/* ---------------------------------------------------------------- batches in flight */

struct brec {
    uint64_t batch_id;
    uint32_t host;
    bool used, have_batch;
    int64_t vpid, vtid;
    uint32_t image;
    struct cbt_batch b;
    uint64_t expect, seen_ops, bytes;
    uint64_t dir_mask, kind_mask, order_mask, osz_mask[2];
    int64_t ts_ns; /* the batch event's time, when has_ts */
    bool has_ts;
    struct cbt_advice_batch adv; /* what the advisor gathers of its ops */
};

#define PENDING_MAX (1u << 17)

/* ---------------------------------------------------------------- the aggregate */

struct cbt_agg *cbt_agg_new(unsigned by)
{
    struct cbt_agg *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->by = by;
    cbt_ktab_init(&a->procs, 1u << 16);
    cbt_ktab_init(&a->threads, 1u << 16);
    cbt_ktab_init(&a->streams, 1u << 12);
    cbt_ktab_init(&a->callers, 1u << 12);
    cbt_ktab_init(&a->gpu.streams, 1u << 12);
    a->objs = cbt_objmap_new();
    a->advisor = cbt_advisor_new();
    if (!a->objs || !a->advisor) {
        cbt_objmap_free(a->objs);
        cbt_advisor_free(a->advisor);
        free(a);
        return NULL;
    }
    pthread_mutex_init(&a->names_lock, NULL);
    return a;
}

void cbt_agg_free(struct cbt_agg *a)
{
    if (!a)
        return;
    for (uint32_t i = 0; i < a->nhosts; i++)
        free(a->hosts[i]);
    free(a->hosts);
    cbt_ktab_free(&a->procs);
    cbt_ktab_free(&a->threads);
    cbt_ktab_free(&a->streams);
    cbt_ktab_free(&a->callers);
    cbt_ktab_free(&a->gpu.streams);
    free(a->pend);
    cbt_advisor_free(a->advisor);
    if (!a->whole)
        cbt_objmap_free(a->objs);
    pthread_mutex_destroy(&a->names_lock);
    free(a);
}

static uint32_t host_index(struct cbt_agg *a, const char *h);

uint32_t cbt_agg_host(struct cbt_agg *a, const char *h)
{
    if (!a->whole)
        return host_index(a, h);
    pthread_mutex_lock(&a->whole->names_lock);
    uint32_t i = host_index(a->whole, h);
    pthread_mutex_unlock(&a->whole->names_lock);
    return i;
}

static uint32_t host_index(struct cbt_agg *a, const char *h)
{
    for (uint32_t i = 0; i < a->nhosts; i++)
        if (strcmp(a->hosts[i], h) == 0)
            return i;
    if (a->nhosts >= 4096)
        return 0;
    char **n = realloc(a->hosts, sizeof(*n) * (a->nhosts + 1));
    char *d = strdup(h);
    if (!n || !d) {
        free(d);
        if (n)
            a->hosts = n;
        return 0;
    }
    a->hosts = n;
    a->hosts[a->nhosts] = d;
    return a->nhosts++;
}

const char *cbt_agg_host_name(const struct cbt_agg *a, uint32_t host)
{
    if (a->whole)
        a = a->whole;
    return host < a->nhosts ? a->hosts[host] : "?";
}

/* ---------------------------------------------------------------- per op */

/* The row of device `dev` of `host`: "unknown" for a negative ordinal, "other" when full.
 * Devices are few: a linear scan behind a one-entry cache. */
static struct devrow *dev_row(struct cbt_agg *a, uint32_t host, int32_t dev)
{
    if (dev < 0)
        return &a->dev_unknown;
    if (a->dev_last < a->ndevs && a->devs[a->dev_last].dev == dev && a->devs[a->dev_last].host == host)
        return &a->devs[a->dev_last];
    for (unsigned i = 0; i < a->ndevs; i++)
        if (a->devs[i].dev == dev && a->devs[i].host == host) {
            a->dev_last = i;
            return &a->devs[i];
        }
    if (a->ndevs == NDEV) {
        a->dev_overflowed++;
        return &a->dev_other;
    }
    struct devrow *r = &a->devs[a->ndevs];
    memset(r, 0, sizeof(*r));
    r->host = host;
    r->dev = dev;
    a->dev_last = a->ndevs++;
    return r;
}

/* Do ops i and j have one class: memory kinds and operand types, devices and order? */
static inline bool same_class(const struct cbt_ops *o, uint32_t i, uint32_t j)
{
    return o->src_mem[i] == o->src_mem[j] && o->dst_mem[i] == o->dst_mem[j] && o->src_type[i] == o->src_type[j] &&
           o->dst_type[i] == o->dst_type[j] && o->src_dev[i] == o->src_dev[j] && o->dst_dev[i] == o->dst_dev[j] &&
           o->order[i] == o->order[j];
}

/* The rows that op i's class names (direction, kind pair, order, devices) take `run`, ops of that class. */
static void class_into(struct cbt_agg *a, struct brec *r, const struct cbt_ops *o, uint32_t i, const struct row *run)
{
    int sc = cbt_mem_class(o->src_mem[i], o->src_type[i]), dc = cbt_mem_class(o->dst_mem[i], o->dst_type[i]);
    int d = cbt_direction(sc, dc, o->src_dev[i], o->dst_dev[i]);
    if (sc == 'D') {
        struct devrow *dr = dev_row(a, r->host, o->src_dev[i]);
        dr->ops_out += run->ops;
        dr->bytes_out += run->bytes;
        if (d == DIR_PEER) {
            dr->peer_ops_out += run->ops;
            dr->peer_bytes_out += run->bytes;
        }
    }
    if (dc == 'D') {
        struct devrow *dr = dev_row(a, r->host, o->dst_dev[i]);
        dr->ops_in += run->ops;
        dr->bytes_in += run->bytes;
        if (d == DIR_PEER) {
            dr->peer_ops_in += run->ops;
            dr->peer_bytes_in += run->bytes;
        }
    }
    unsigned sk = o->src_mem[i] < NKIND - 1 ? o->src_mem[i] : NKIND - 1;
    unsigned dk = o->dst_mem[i] < NKIND - 1 ? o->dst_mem[i] : NKIND - 1;
    unsigned od = o->order[i] < NORDER - 1 ? o->order[i] : NORDER - 1;
    cbt_row_merge(&a->dir[d], run);
    cbt_row_merge(&a->kind[sk][dk], run);
    cbt_row_merge(&a->order[od], run);
    r->dir_mask |= 1ull << d;
    r->kind_mask |= 1ull << (sk * NKIND + dk);
    r->order_mask |= 1ull << od;
}

/* The ops of a chunk into the tables: each op into its bytes-per-op bin; each
 * run of ops of one class (as callers list them: ops alike in a row), summed,
 * into its class's rows.  Counts, sums, minima and maxima do not depend on
 * the grouping, so the tables are those of one op at a time. */
static void ops_into(struct cbt_agg *a, struct brec *r, const struct cbt_ops *o)
{
    uint64_t sum = 0;
    for (uint32_t s = 0, e; s < o->count; s = e) {
        struct row run = {0};
        for (e = s; e < o->count && (e == s || same_class(o, s, e)); e++) {
            uint64_t by = o->bytes[e];
            unsigned hb = cbt_hist_bin(by);
            struct row *z = &a->osize[hb];
            z->ops++;
            z->bytes += by;
            row_sample(z, by);
            r->osz_mask[hb >> 6] |= 1ull << (hb & 63);
            run.ops++;
            run.bytes += by;
            row_sample(&run, by);
        }
        class_into(a, r, o, s, &run);
        sum += run.bytes;
    }
    if (!cbt_advice_set.off)
        for (uint32_t i = 0; i < o->count; i++)
            cbt_advice_op(&r->adv, o, i);
    r->seen_ops += o->count;
    r->bytes += sum;
    a->ops += o->count;
    a->bytes += sum;
}

/* ---------------------------------------------------------------- per batch */

static inline void row_batch(struct row *row, const struct brec *r, bool sample)
{
    row->batches += r->have_batch;
    row->ops += r->seen_ops;
    row->bytes += r->bytes;
    if (sample)
        row_sample(row, r->b.driver_ns);
}

/* The advice the batch draws (advice.c), counted as findings of severity advice. */
static void advise(struct cbt_agg *a, const struct brec *r)
{
    if (cbt_advice_set.off)
        return;
    struct cbt_where w = {.host = r->host, .vpid = r->vpid, .vtid = r->vtid, .image = r->image,
                          .ts_ns = r->ts_ns, .has_ts = r->has_ts};
    struct cbt_advice out[CBT_ADVICE_MAX];
    size_t n = cbt_advice_batch(a->advisor, &w, &r->b, &r->adv, r->seen_ops, out);
    for (size_t i = 0; i < n; i++)
        cbt_agg_finding(a, &out[i].w, &out[i].f);
}

static void advice_found(void *ctx, const struct cbt_advice *adv) { cbt_agg_finding(ctx, &adv->w, &adv->f); }

static void finalize(struct cbt_agg *a, const struct brec *r)
{
    bool created, gpu_expected = false; /* a gpu-timed process writes a gpu_time event for it */
    bool hb = r->have_batch;
    unsigned api = hb && r->b.api < CBT_API_COUNT_ ? r->b.api : CBT_API_COUNT_;
    unsigned door = hb && r->b.door < NDOOR - 1 ? r->b.door : NDOOR - 1;
    row_batch(&a->api[api], r, hb);
    row_batch(&a->door[door], r, hb);
    row_batch(&a->apidoor[api][door], r, hb);
    a->images_numbered = false;
    if (hb) {
        a->batches++;
        a->untagged += !r->image;
        a->driver_ns += r->b.driver_ns;
        if (r->b.outcome == CBT_OUTCOME_REFUSED)
            a->refused++;
        else if (r->b.outcome == CBT_OUTCOME_FORWARDED && r->b.result == CBT_CU_SUCCESS)
            gpu_expected = r->b.door != CBT_DOOR_GRAPH_LAUNCH; /* a graph launch is not timed */
        else if (r->b.outcome == CBT_OUTCOME_NO_DRIVER)
            a->no_driver++;
        else if (r->b.outcome == CBT_OUTCOME_FORWARDED && r->b.result != CBT_CU_SUCCESS)
            a->failed++;
        if (r->b.outcome == CBT_OUTCOME_FORWARDED && r->b.result == CBT_CU_CAPTURE_UNSUPPORTED)
            a->refused_in_capture++;
        if (r->seen_ops < r->expect)
            a->incomplete_batches++;
        row_batch(&a->bsize[cbt_hist_bin(r->b.num_ops)], r, true);
        /* the rows the batch's ops fell in: the set bits of its masks (a batch sets a few of 64) */
        for (uint64_t m = r->dir_mask; m; m &= m - 1)
            a->dir[__builtin_ctzll(m)].batches++;
        for (uint64_t m = r->kind_mask; m; m &= m - 1) {
            unsigned k = (unsigned)__builtin_ctzll(m);
            a->kind[k / NKIND][k % NKIND].batches++;
        }
        for (uint64_t m = r->order_mask; m; m &= m - 1)
            a->order[__builtin_ctzll(m)].batches++;
        for (unsigned h = 0; h < 2; h++)
            for (uint64_t m = r->osz_mask[h]; m; m &= m - 1)
                a->osize[64 * h + (unsigned)__builtin_ctzll(m)].batches++;
        uint64_t pk = cbt_pkey(r->image, r->vpid);
        /* the call site: the caller, or with --skip-frames the first frame of its stack outside those libraries */
        const uint64_t site = cbt_callsite_pick(a->objs, r->host, r->vpid, r->b.caller, r->b.stack, r->b.nstack);
        struct kent *c = cbt_ktab_get(&a->callers, r->host, pk, site, &created);
        row_batch(&c->row, r, true);
        struct kent *s = cbt_ktab_get(&a->streams, r->host, pk, r->b.stream, &created);
        if (created)
            s->extra = r->b.stream_id;
        row_batch(&s->row, r, true);
        advise(a, r);
    } else {
        a->orphan_ops += r->seen_ops;
    }
    struct kent *p = cbt_ktab_get(&a->procs, r->host, cbt_pkey(r->image, r->vpid), 0, &created);
    row_batch(&p->row, r, hb);
    p->forwarded_ok += gpu_expected;
    struct kent *t = cbt_ktab_get(&a->threads, r->host, cbt_pkey(r->image, r->vpid), (uint64_t)r->vtid, &created);
    row_batch(&t->row, r, hb);
}

static void note_process(struct cbt_agg *a, const struct cbt_where *w)
{
    bool created;
    struct kent *p = cbt_ktab_get(&a->procs, w->host, cbt_where_pkey(w), 0, &created);
    if (created) {
        p->rank = -1;
        p->gpu_time = -1;
        if (w->procname)
            p->label = strdup(w->procname);
    }
}

/* pending table: open addressing, linear probing, backward-shift deletion */
static inline size_t pend_hash(uint32_t host, int64_t vpid, uint64_t id, size_t cap)
{
    uint64_t k[3] = {host, (uint64_t)vpid, id};
    return cbt_mix3(k) & (cap - 1);
}

static struct brec *pend_find(struct cbt_agg *a, uint32_t host, int64_t vpid, uint64_t id)
{
    if (!a->cappend)
        return NULL;
    for (size_t j = pend_hash(host, vpid, id, a->cappend);; j = (j + 1) & (a->cappend - 1)) {
        struct brec *r = &a->pend[j];
        if (!r->used)
            return NULL;
        if (r->batch_id == id && r->vpid == vpid && r->host == host)
            return r;
    }
}

static void pend_delete(struct cbt_agg *a, struct brec *r)
{
    size_t i = (size_t)(r - a->pend), cap = a->cappend;
    a->pend[i].used = false;
    a->npend--;
    for (size_t j = (i + 1) & (cap - 1); a->pend[j].used; j = (j + 1) & (cap - 1)) {
        size_t h = pend_hash(a->pend[j].host, a->pend[j].vpid, a->pend[j].batch_id, cap);
        /* move j into the hole i when its home h is not within (i, j] */
        if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
            a->pend[i] = a->pend[j];
            a->pend[j].used = false;
            i = j;
        }
    }
}

/* Store r (not yet complete); false when the table is full. */
static bool pend_insert(struct cbt_agg *a, const struct brec *r)
{
    if ((a->npend + 1) * 2 > a->cappend) {
        if (a->cappend >= PENDING_MAX)
            return false;
        size_t cap = a->cappend ? a->cappend * 2 : 1024;
        struct brec *n = calloc(cap, sizeof(*n));
        if (!n)
            return false;
        for (size_t i = 0; i < a->cappend; i++) {
            if (!a->pend[i].used)
                continue;
            size_t j = pend_hash(a->pend[i].host, a->pend[i].vpid, a->pend[i].batch_id, cap);
            while (n[j].used)
                j = (j + 1) & (cap - 1);
            n[j] = a->pend[i];
        }
        free(a->pend);
        a->pend = n;
        a->cappend = cap;
    }
    size_t j = pend_hash(r->host, r->vpid, r->batch_id, a->cappend);
    while (a->pend[j].used)
        j = (j + 1) & (a->cappend - 1);
    a->pend[j] = *r;
    a->pend[j].used = true;
    a->npend++;
    return true;
}

static inline bool complete(const struct brec *r) { return r->have_batch && r->seen_ops >= r->expect; }

void cbt_agg_batch(struct cbt_agg *a, const struct cbt_where *w, const struct cbt_batch *b, const struct cbt_ops *ops)
{
    note_process(a, w);
    struct brec local, *r = pend_find(a, w->host, w->vpid, b->batch_id);
    if (!r) {
        memset(&local, 0, sizeof(local));
        r = &local;
        r->batch_id = b->batch_id;
        r->host = w->host;
        r->vpid = w->vpid;
        r->image = w->image;
    }
    r->vtid = w->vtid;
    r->ts_ns = w->ts_ns;
    r->has_ts = w->has_ts;
    r->have_batch = true;
    r->b = *b;
    r->expect = b->ops_expected;
    if (ops)
        ops_into(a, r, ops);
    if (complete(r)) {
        finalize(a, r);
        if (r != &local)
            pend_delete(a, r);
    } else if (r == &local && !pend_insert(a, r)) {
        a->pending_overflow++;
        finalize(a, r);
    }
}

void cbt_agg_batch_ops(struct cbt_agg *a, const struct cbt_where *w, uint64_t batch_id, const struct cbt_ops *ops)
{
    note_process(a, w);
    struct brec local, *r = pend_find(a, w->host, w->vpid, batch_id);
    a->orphan_chunks += !r;
    if (!r) {
        memset(&local, 0, sizeof(local));
        r = &local;
        r->batch_id = batch_id;
        r->host = w->host;
        r->vpid = w->vpid;
        r->image = w->image;
        r->vtid = w->vtid;
    }
    ops_into(a, r, ops);
    if (complete(r)) {
        finalize(a, r);
        pend_delete(a, r);
    } else if (r == &local && !pend_insert(a, r)) {
        a->pending_overflow++;
        finalize(a, r);
    }
}

/* ---------------------------------------------------------------- findings */
void cbt_agg_on_finding(struct cbt_agg *a, cbt_finding_fn fn, void *ctx)
{
    a->on_finding = fn;
    a->on_finding_ctx = ctx;
}

void cbt_agg_finding(struct cbt_agg *a, const struct cbt_where *w, const struct cbt_batch_finding *bf)
{
    /* --skip-frames: the finding placed where the call-site table places its batch */
    struct cbt_batch_finding picked = *bf;
    picked.caller = cbt_callsite_pick(a->objs, w->host, w->vpid, bf->caller, bf->stack, bf->nstack);
    const struct cbt_batch_finding *f = &picked;
    note_process(a, w);
    unsigned k = f->rule < CBT_RULE_COUNT ? f->rule : CBT_RULE_COUNT;
    struct cbt_rule_tally *fr = &a->rules[k];
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    fr->count++;
    if (f->rule < CBT_RULE_COUNT && cbt_rule_is_advice(f->rule)) {
        a->advice++;
        fr->saving_ns += f->saving_ns;
        fr->saving_kinds |= 1u << f->saving;
    } else {
        a->findings++;
    }
    bool earlier = !fr->seen || (w->has_ts && (!fr->has_ts || w->ts_ns < fr->first_ts));
    if (earlier) {
        fr->seen = true;
        fr->has_ts = w->has_ts;
        fr->first_ts = w->ts_ns;
        fr->first_batch = f->batch_id;
        fr->first_pid = w->vpid;
        fr->first_image = w->image;
        fr->first_host = w->host;
        fr->severity = ri ? (uint8_t)ri->severity : f->severity;
        fr->first = *f;
    }
    if (a->on_finding)
        a->on_finding(a->on_finding_ctx, w, f);
}

uint64_t cbt_agg_findings_total(const struct cbt_agg *a) { return a->findings; }

unsigned cbt_agg_by(const struct cbt_agg *a) { return a->by; }

uint64_t cbt_agg_batches(const struct cbt_agg *a) { return a->batches; }

void cbt_agg_read_stats(struct cbt_agg *a, const struct cbt_read_stats *s) { a->rs = *s; }

const struct cbt_read_stats *cbt_agg_get_read_stats(const struct cbt_agg *a) { return &a->rs; }

uint64_t cbt_agg_inline_disagreeing(const struct cbt_agg *a) { return a->rs.inline_disagreeing; }

uint64_t cbt_agg_findings_at_or_above(const struct cbt_agg *a, unsigned threshold)
{
    uint64_t n = 0;
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++)
        if (a->rules[k].count && a->rules[k].severity <= threshold)
            n += a->rules[k].count;
    return n;
}

/* ---------------------------------------------------------------- misc events */

void cbt_agg_bin_info(struct cbt_agg *a, const struct cbt_where *w, uint64_t baddr, uint64_t memsz, const char *path,
                      bool is_pic)
{
    if (!a->whole) {
        cbt_objmap_add(a->objs, w->host, w->vpid, baddr, memsz, path, is_pic);
        return;
    }
    pthread_mutex_lock(&a->whole->names_lock);
    cbt_objmap_add(a->objs, w->host, w->vpid, baddr, memsz, path, is_pic);
    pthread_mutex_unlock(&a->whole->names_lock);
}

void cbt_agg_process(struct cbt_agg *a, const struct cbt_where *w, int64_t rank, const char *rank_var, int gpu_time,
                     uint32_t gpu_every)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
    note_process(a, w);
    bool created;
    struct kent *p = cbt_ktab_get(&a->procs, w->host, cbt_where_pkey(w), 0, &created);
    if (p == &a->procs.other)
        return;
    p->rank = rank >= 0 ? rank : -1;
    p->rank_var = RV_OTHER;
    if (!rank_var || !*rank_var || rank < 0)
        p->rank_var = RV_NONE;
    for (unsigned i = 0; i < 3; i++)
        if (rank_var && strcmp(rank_var, vars[i]) == 0 && rank >= 0)
            p->rank_var = (uint8_t)(RV_OMPI + i);
    p->gpu_time = (int8_t)gpu_time;
    p->gpu_every = gpu_time == 1 ? (gpu_every ? gpu_every : 1) : 0;
}

void cbt_agg_gpu_time(struct cbt_agg *a, const struct cbt_where *w, const struct cbt_ev_gpu *g)
{
    note_process(a, w);
    bool created;
    struct kent *p = cbt_ktab_get(&a->procs, w->host, cbt_where_pkey(w), 0, &created);
    p->gpu_events += g->status != CBT_GPU_CALL_FAILED; /* the batches forwarded with CUDA_SUCCESS */
    cbt_gpu_add(&a->gpu, w, g);
    struct cbt_advice adv;
    if (cbt_advice_gpu(a->advisor, w, g, &adv)) /* low_bandwidth */
        cbt_agg_finding(a, &adv.w, &adv.f);
}

void cbt_agg_image(struct cbt_agg *a, const struct cbt_where *w, uint64_t pid_ns, uint64_t start_ns)
{
    note_process(a, w);
    bool created;
    struct kent *p = cbt_ktab_get(&a->procs, w->host, cbt_where_pkey(w), 0, &created);
    if (p == &a->procs.other)
        return;
    p->pid_ns = pid_ns;
    p->start_ns = start_ns;
    a->images_numbered = false;
}

uint64_t cbt_agg_untagged_batches(const struct cbt_agg *a) { return a->untagged; }

/* The images of one (host, vpid) in the order they started (the process
 * event's start time; an image without one after those with), then by tag:
 * the same order whatever order the traces were read in. */
static const struct cbt_agg *img_agg;
static int cmp_image(const void *x, const void *y)
{
    const struct kent *a = &img_agg->procs.ents[*(const uint32_t *)x], *b = &img_agg->procs.ents[*(const uint32_t *)y];
    if (a->k[0] != b->k[0])
        return a->k[0] < b->k[0] ? -1 : 1;
    int64_t pa = cbt_pkey_vpid(a->k[1]), pb = cbt_pkey_vpid(b->k[1]);
    if (pa != pb)
        return pa < pb ? -1 : 1;
    uint64_t sa = a->start_ns ? a->start_ns : UINT64_MAX, sb = b->start_ns ? b->start_ns : UINT64_MAX;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    uint32_t ia = cbt_pkey_image(a->k[1]), ib = cbt_pkey_image(b->k[1]);
    return (ia > ib) - (ia < ib);
}

/* Number the images of each (host, vpid): img_no from 1, img_count; the
 * entries without batches or ops are left out. */
static void number_images(struct cbt_agg *a)
{
    if (a->images_numbered)
        return;
    a->images_numbered = true;
    size_t n = 0;
    uint32_t *ix = calloc(a->procs.n + 1, sizeof(*ix));
    if (!ix)
        return;
    for (size_t i = 0; i < a->procs.n; i++) {
        struct kent *e = &a->procs.ents[i];
        e->img_no = e->img_count = 0;
        if (e->row.batches || e->row.ops)
            ix[n++] = (uint32_t)i;
    }
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    img_agg = a;
    qsort(ix, n, sizeof(*ix), cmp_image);
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < n;) {
        const struct kent *f = &a->procs.ents[ix[i]];
        size_t j = i;
        while (j < n && a->procs.ents[ix[j]].k[0] == f->k[0] &&
               cbt_pkey_vpid(a->procs.ents[ix[j]].k[1]) == cbt_pkey_vpid(f->k[1]))
            j++;
        for (size_t k = i; k < j; k++) {
            a->procs.ents[ix[k]].img_no = (uint32_t)(k - i + 1);
            a->procs.ents[ix[k]].img_count = (uint32_t)(j - i);
        }
        i = j;
    }
    free(ix);
}

/* The entry of a process image, or NULL: a lookup that creates nothing. */
const struct kent *cbt_agg_proc(const struct cbt_agg *a, uint32_t host, uint64_t pkey)
{
    return cbt_ktab_find(&a->procs, host, pkey, 0);
}

const char *cbt_agg_proc_name(struct cbt_agg *a, uint32_t host, uint64_t pkey, char *b, size_t l)
{
    number_images(a);
    const struct kent *e = cbt_agg_proc(a, host, pkey);
    if (e && e->img_count > 1)
        snprintf(b, l, "pid %" PRId64 " image %" PRIu32 "/%" PRIu32, cbt_pkey_vpid(pkey), e->img_no, e->img_count);
    else
        snprintf(b, l, "pid %" PRId64, cbt_pkey_vpid(pkey));
    return b;
}

uint32_t cbt_agg_image_number(const struct cbt_agg *a, uint32_t host, uint64_t pkey)
{
    const struct kent *e = cbt_agg_proc(a, host, pkey);
    return e ? e->img_no : 0;
}

struct cbt_objmap *cbt_agg_callsites(const struct cbt_agg *a) { return a->objs; }

void cbt_agg_totals(const struct cbt_agg *a, struct cbt_agg_totals *t)
{
    *t = (struct cbt_agg_totals){
        .batches = a->batches, .ops = a->ops, .bytes = a->bytes, .driver_ns = a->driver_ns, .findings = a->findings, .advice = a->advice,
        .advice_unjudged = a->advice_unjudged + cbt_advice_gpu_unjudged(a->advisor),
        .failed = a->failed, .refused = a->refused, .refused_in_capture = a->refused_in_capture,
        .no_driver = a->no_driver, .discarded_events = a->discarded_events,
        .discarded_packets = a->discarded_packets, .discarded_unknown = a->discarded_unknown,
        .fabric_calls = a->fabric_calls, .fabric_ops = a->fabric_ops, .fabric_failed = a->fabric_failed,
        .fabric_driver_ns = a->fabric_driver_ns,
        .orphan_ops = a->orphan_ops, .incomplete_batches = a->incomplete_batches,
        .pending_overflow = a->pending_overflow, .untagged = a->untagged,
        .procs_full = a->procs.overflowed, .threads_full = a->threads.overflowed,
        .tables_full = a->procs.overflowed || a->threads.overflowed || a->streams.overflowed ||
                       a->callers.overflowed || a->dev_overflowed || a->gpu.streams.overflowed ||
                       a->gpu.dev_overflowed,
        .nhosts = a->nhosts, .nrecorders = a->nrecorders, .rs = &a->rs, .rules = a->rules, .gpu = &a->gpu,
    };
    for (unsigned i = 0; i < a->nrecorders && i < 4; i++)
        t->recorders[i] = a->recorders[i];
}

void cbt_agg_recorded_by(struct cbt_agg *a, const char *version)
{
    for (unsigned i = 0; i < a->nrecorders; i++)
        if (strcmp(a->recorders[i], version) == 0)
            return;
    if (a->nrecorders < sizeof(a->recorders) / sizeof(a->recorders[0]))
        snprintf(a->recorders[a->nrecorders++], sizeof(a->recorders[0]), "%s", version);
}

void cbt_agg_build_id(struct cbt_agg *a, const struct cbt_where *w, uint64_t baddr, const uint8_t *id, size_t len)
{
    cbt_objmap_build_id(a->objs, w->host, w->vpid, baddr, id, len);
}

void cbt_agg_discarded(struct cbt_agg *a, bool packets, uint64_t count, bool known)
{
    if (!known)
        a->discarded_unknown++;
    else if (packets)
        a->discarded_packets += count;
    else
        a->discarded_events += count;
}

void cbt_agg_fabric(struct cbt_agg *a, const struct cbt_ev_fabric *f)
{
    a->fabric_calls++;
    a->fabric_ops += f->num_ops;
    a->fabric_failed += f->result != CUDA_SUCCESS;
    a->fabric_driver_ns += f->driver_ns;
}

void cbt_agg_finish(struct cbt_agg *a)
{
    if (!a->finished) {
        a->finished = true;
        for (size_t i = 0; i < a->cappend; i++)
            if (a->pend[i].used)
                finalize(a, &a->pend[i]);
        free(a->pend);
        a->pend = NULL;
        a->npend = a->cappend = 0;
        cbt_advice_flush(a->advisor, advice_found, a); /* the runs the input ended in */
    }
    number_images(a); /* again after parts were merged into a finished whole */
}

void cbt_agg_lost(const struct cbt_agg *a, uint64_t *events, uint64_t *packets, uint64_t *uncounted)
{
    *events = a->discarded_events;
    *packets = a->discarded_packets;
    *uncounted = a->discarded_unknown;
}

/* ---------------------------------------------------------------- parts */

struct cbt_agg *cbt_agg_new_part(struct cbt_agg *whole)
{
    struct cbt_agg *a = cbt_agg_new(whole->by);
    if (!a)
        return NULL;
    cbt_objmap_free(a->objs);
    a->objs = whole->objs;
    a->whole = whole;
    return a;
}

static void rows_merge(struct row *into, const struct row *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cbt_row_merge(&into[i], &r[i]);
}

/* The GPU time of entry e into d: its process's counts, its stream's row and buckets. */
static void kent_gpu_merge(struct kent *d, const struct kent *e)
{
    d->forwarded_ok += e->forwarded_ok;
    d->gpu_events += e->gpu_events;
    cbt_gpurow_add(&d->gpu, &e->gpu);
    if (!e->over_time)
        return;
    if (!d->over_time && !(d->over_time = calloc(GPU_BUCKETS, sizeof(*d->over_time))))
        return;
    for (unsigned i = 0; i < GPU_BUCKETS; i++)
        d->over_time[i] += e->over_time[i];
}

static void ktab_merge(struct ktab *into, const struct ktab *t)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct kent *e = &t->ents[i];
        bool created;
        struct kent *d = cbt_ktab_get(into, e->k[0], e->k[1], e->k[2], &created);
        if (created) {
            d->extra = e->extra;
            d->rank = e->rank;
            d->rank_var = e->rank_var;
            d->gpu_time = e->gpu_time;
            d->gpu_every = e->gpu_every;
            d->pid_ns = e->pid_ns;
            d->start_ns = e->start_ns;
            d->label = e->label ? strdup(e->label) : NULL;
        } else if (d != &into->other && d->rank_var == RV_UNSEEN) {
            d->rank = e->rank;
            d->rank_var = e->rank_var;
            d->gpu_time = e->gpu_time;
            d->gpu_every = e->gpu_every;
        }
        if (d != &into->other && !d->start_ns) {
            d->pid_ns = e->pid_ns;
            d->start_ns = e->start_ns;
        }
        cbt_row_merge(&d->row, &e->row);
        kent_gpu_merge(d, e);
    }
    cbt_row_merge(&into->other.row, &t->other.row);
    kent_gpu_merge(&into->other, &t->other);
    into->overflowed += t->overflowed;
}

static void dev_add(struct devrow *d, const struct devrow *r)
{
    d->ops_out += r->ops_out;
    d->bytes_out += r->bytes_out;
    d->ops_in += r->ops_in;
    d->bytes_in += r->bytes_in;
    d->peer_ops_out += r->peer_ops_out;
    d->peer_bytes_out += r->peer_bytes_out;
    d->peer_ops_in += r->peer_ops_in;
    d->peer_bytes_in += r->peer_bytes_in;
}

/* The earlier of two first findings of a rule: by time, then by host name,
 * process and batch, so that the result does not depend on the merge order. */
static bool first_before(const struct cbt_agg *a, const struct cbt_rule_tally *x, const struct cbt_rule_tally *y)
{
    if (!y->seen)
        return true;
    if (x->has_ts != y->has_ts)
        return x->has_ts;
    if (x->has_ts && x->first_ts != y->first_ts)
        return x->first_ts < y->first_ts;
    int c = strcmp(cbt_agg_host_name(a, x->first_host), cbt_agg_host_name(a, y->first_host));
    if (c)
        return c < 0;
    if (x->first_pid != y->first_pid)
        return x->first_pid < y->first_pid;
    if (x->first_image != y->first_image)
        return x->first_image < y->first_image;
    return x->first_batch < y->first_batch;
}

static int cmp_u16(const void *x, const void *y)
{
    return (int)*(const uint16_t *)x - (int)*(const uint16_t *)y;
}

static int cmp_recorder(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

void cbt_agg_merge(struct cbt_agg *w, struct cbt_agg *p)
{
    w->batches += p->batches;
    w->ops += p->ops;
    w->bytes += p->bytes;
    w->failed += p->failed;
    w->refused += p->refused;
    w->refused_in_capture += p->refused_in_capture;
    w->no_driver += p->no_driver;
    w->driver_ns += p->driver_ns;
    w->discarded_events += p->discarded_events;
    w->discarded_packets += p->discarded_packets;
    w->discarded_unknown += p->discarded_unknown;
    w->fabric_calls += p->fabric_calls;
    w->fabric_ops += p->fabric_ops;
    w->fabric_failed += p->fabric_failed;
    w->fabric_driver_ns += p->fabric_driver_ns;
    w->orphan_ops += p->orphan_ops;
    w->orphan_chunks += p->orphan_chunks;
    w->incomplete_batches += p->incomplete_batches;
    w->pending_overflow += p->pending_overflow;
    w->untagged += p->untagged;
    w->images_numbered = false;
    rows_merge(w->api, p->api, NAPI);
    rows_merge(w->door, p->door, NDOOR);
    rows_merge(&w->apidoor[0][0], &p->apidoor[0][0], NAPI * NDOOR);
    rows_merge(w->dir, p->dir, DIR_COUNT);
    rows_merge(&w->kind[0][0], &p->kind[0][0], NKIND * NKIND);
    rows_merge(w->order, p->order, NORDER);
    rows_merge(w->bsize, p->bsize, NHIST);
    rows_merge(w->osize, p->osize, NHIST);
    /* the recorders' versions: in the order seen when one part recorded any,
     * sorted once several did (which came first is not known) */
    bool several_recorders = w->nrecorders && p->nrecorders;
    for (unsigned i = 0; i < p->nrecorders; i++)
        cbt_agg_recorded_by(w, p->recorders[i]);
    if (several_recorders)
        qsort(w->recorders, w->nrecorders, sizeof(w->recorders[0]), cmp_recorder);
    ktab_merge(&w->procs, &p->procs);
    ktab_merge(&w->threads, &p->threads);
    ktab_merge(&w->streams, &p->streams);
    ktab_merge(&w->callers, &p->callers);
    cbt_gpu_align(&w->gpu, &p->gpu);
    ktab_merge(&w->gpu.streams, &p->gpu.streams);
    cbt_gpu_merge(&w->gpu, &p->gpu);
    for (unsigned i = 0; i < p->ndevs; i++)
        dev_add(dev_row(w, p->devs[i].host, p->devs[i].dev), &p->devs[i]);
    dev_add(&w->dev_unknown, &p->dev_unknown);
    dev_add(&w->dev_other, &p->dev_other);
    w->dev_overflowed += p->dev_overflowed;
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++) {
        struct cbt_rule_tally *d = &w->rules[k];
        const struct cbt_rule_tally *f = &p->rules[k];
        if (!f->count)
            continue;
        uint64_t n = d->count + f->count, saving = d->saving_ns + f->saving_ns;
        unsigned kinds = d->saving_kinds | f->saving_kinds;
        if (first_before(w, f, d))
            *d = *f;
        d->count = n;
        d->saving_ns = saving;
        d->saving_kinds = kinds;
    }
    w->findings += p->findings;
    w->advice += p->advice;
    w->advice_unjudged += p->advice_unjudged + cbt_advice_gpu_unjudged(p->advisor);
    struct cbt_read_stats *r = &w->rs;
    const struct cbt_read_stats *s = &p->rs;
    r->inline_checked += s->inline_checked;
    r->inline_disagreeing += s->inline_disagreeing;
    r->inline_unchecked += s->inline_unchecked;
    r->pending += s->pending;
    r->malformed += s->malformed;
    r->incomplete += s->incomplete;
    r->given_up += s->given_up;
    r->findings_dropped += s->findings_dropped;
    r->rules_more |= s->rules_more;
    /* the versions in the order seen when one part recorded any; in
     * ascending order once several did (which came first is not known) */
    bool several = r->nrules_seen && s->nrules_seen;
    for (unsigned i = 0; i < s->nrules_seen; i++) {
        unsigned j = 0;
        while (j < r->nrules_seen && r->rules_seen[j] != s->rules_seen[i])
            j++;
        if (j < r->nrules_seen)
            continue;
        if (r->nrules_seen < 8)
            r->rules_seen[r->nrules_seen++] = s->rules_seen[i];
        else
            r->rules_more = true;
    }
    if (several)
        qsort(r->rules_seen, r->nrules_seen, sizeof(r->rules_seen[0]), cmp_u16);
}

struct cbt_agg *cbt_agg_snapshot(struct cbt_agg *a)
{
    struct cbt_agg *s = cbt_agg_new_part(a);
    if (!s)
        return NULL;
    struct brec *pend = a->pend;
    size_t n = a->npend, cap = a->cappend;
    a->pend = NULL; /* merge reads no batch in flight */
    a->npend = a->cappend = 0;
    cbt_agg_merge(s, a);
    a->pend = pend;
    a->npend = n;
    a->cappend = cap;
    s->finished = true;
    /* its own copy of the host names, for the outputs that read them directly */
    s->hosts = calloc(a->nhosts ? a->nhosts : 1, sizeof(*s->hosts));
    for (uint32_t i = 0; s->hosts && i < a->nhosts; i++)
        if ((s->hosts[i] = strdup(a->hosts[i])))
            s->nhosts = i + 1;
        else
            break;
    return s;
}
