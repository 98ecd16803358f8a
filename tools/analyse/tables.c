/* SPDX-License-Identifier: MIT */
/*
 * The aggregate as the rows of its tables: the fixed tables in their order,
 * the keyed ones sorted by bytes with an "other" row, call sites named and
 * merged, histograms with their ranges, devices by host and ordinal.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/agg_internal.h"
#include "analyse/callsite.h"
#include "analyse/tables.h"


static void trow_add(struct table *t, const char *name, const struct row *r)
{
    if (t->omit_empty && r->batches == 0 && r->ops == 0)
        return;
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 16;
        struct trow *n = realloc(t->rows, c * sizeof(*n));
        if (!n)
            return;
        t->rows = n;
        t->cap = c;
    }
    struct trow *tr = &t->rows[t->n++];
    memset(tr, 0, sizeof(*tr));
    snprintf(tr->name, sizeof(tr->name), "%s", name);
    tr->r = r;
}

static int cmp_trow(const void *x, const void *y)
{
    const struct row *a = ((const struct trow *)x)->r, *b = ((const struct trow *)y)->r;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    if (a->batches != b->batches)
        return a->batches < b->batches ? 1 : -1;
    return strcmp(((const struct trow *)x)->name, ((const struct trow *)y)->name);
}

/* The name and range of bin `bin` (0 to 64, what cbt_hist_bin gives). */
static void hist_name(char *buf, size_t len, unsigned bin, uint64_t *lo, uint64_t *hi)
{
    if (bin == 0) {
        *lo = *hi = 0;
        snprintf(buf, len, "0");
        return;
    }
    *lo = 1ull << (bin - 1);
    *hi = bin >= 64 ? UINT64_MAX : (1ull << bin) - 1;
    if (*lo == *hi)
        snprintf(buf, len, "%" PRIu64, *lo);
    else
        snprintf(buf, len, "%" PRIu64 "-%" PRIu64, *lo, *hi);
}

/* One row per non-empty power-of-two bin, with its range for the JSON. */
static void hist_rows(struct table *t, const struct row *bins)
{
    char nm[64];
    for (unsigned i = 0; i < NHIST; i++) {
        uint64_t lo, hi;
        if (bins[i].batches == 0 && bins[i].ops == 0)
            continue; /* (the spare bin, past 2^63, has no range to name) */
        hist_name(nm, sizeof(nm), i, &lo, &hi);
        size_t before = t->n;
        trow_add(t, nm, &bins[i]);
        if (t->n > before) {
            t->rows[t->n - 1].lo = lo;
            t->rows[t->n - 1].hi = hi;
            t->rows[t->n - 1].has_range = true;
        }
    }
}

static struct table *new_table(struct tables *ts, const char *key, const char *title, enum measure m, bool omit)
{
    struct table *t = &ts->t[ts->n++];
    memset(t, 0, sizeof(*t));
    t->key = key;
    t->title = title;
    t->m = m;
    t->omit_empty = omit;
    return t;
}

/* A keyed table as rows, sorted by bytes, at most `top` + "other". */
static void ktab_rows(struct cbt_agg *a, struct table *t, struct ktab *k, size_t top, struct row *other,
                      void (*name)(struct cbt_agg *, const struct kent *, char *, size_t))
{
    t->omit_empty = true;
    size_t first = t->n;
    for (size_t i = 0; i < k->n; i++) {
        char nm[256];
        name(a, &k->ents[i], nm, sizeof(nm));
        trow_add(t, nm, &k->ents[i].row);
    }
    qsort(t->rows + first, t->n - first, sizeof(*t->rows), cmp_trow);
    memset(other, 0, sizeof(*other));
    cbt_row_merge(other, &k->other.row);
    while (t->n - first > top)
        cbt_row_merge(other, t->rows[--t->n].r);
    trow_add(t, "other", other);
}

/* The process image of an entry keyed (host, cbt_pkey, ...): "pid P" or "pid P image K/N". */
static const char *proc_of(struct cbt_agg *a, const struct kent *e, char *b, size_t l)
{
    return cbt_agg_proc_name(a, (uint32_t)e->k[0], e->k[1], b, l);
}
static void name_proc(struct cbt_agg *a, const struct kent *e, char *b, size_t l)
{
    char p[64];
    snprintf(b, l, "%s %s %s", cbt_agg_host_name(a, (uint32_t)e->k[0]), proc_of(a, e, p, sizeof(p)),
             e->label ? e->label : "");
}
static void name_thread(struct cbt_agg *a, const struct kent *e, char *b, size_t l)
{
    char p[64];
    snprintf(b, l, "%s %s tid %" PRId64, cbt_agg_host_name(a, (uint32_t)e->k[0]), proc_of(a, e, p, sizeof(p)),
             (int64_t)e->k[2]);
}
static void name_stream(struct cbt_agg *a, const struct kent *e, char *b, size_t l)
{
    char p[64];
    snprintf(b, l, "%s %s stream 0x%" PRIx64 " (id %" PRIu64 ")", cbt_agg_host_name(a, (uint32_t)e->k[0]),
             proc_of(a, e, p, sizeof(p)), e->k[2], e->extra);
}

void cbt_tables_build(struct cbt_agg *a, struct tables *ts)
{
    struct table *t;
    char nm[256];
    memset(ts, 0, sizeof(*ts));

    t = new_table(ts, "by_api", "Batches by API variant", M_DRIVER, true);
    for (unsigned i = 0; i < NAPI; i++) {
        const char *n = cbt_api_name(i);
        trow_add(t, n ? n : "(batch event not seen)", &a->api[i]);
    }
    t = new_table(ts, "by_door", "Batches by door (how the call reached the shim)", M_DRIVER, true);
    for (unsigned i = 0; i < NDOOR; i++) {
        const char *n = cbt_door_name(i);
        trow_add(t, n ? n : "unknown", &a->door[i]);
    }
    t = new_table(ts, "by_api_door", "Batches by API variant and door", M_DRIVER, true);
    for (unsigned i = 0; i < NAPI; i++)
        for (unsigned j = 0; j < NDOOR; j++) {
            const char *an = cbt_api_name(i), *dn = cbt_door_name(j);
            snprintf(nm, sizeof(nm), "%s / %s", an ? an : "?", dn ? dn : "?");
            trow_add(t, nm, &a->apidoor[i][j]);
        }
    t = new_table(ts, "by_direction", "Ops by direction (D: device or managed, H: host, A: array; peer: D to D across devices)",
                  M_BYTES, true);
    for (unsigned i = 0; i < DIR_COUNT; i++)
        trow_add(t, cbt_direction_name((int)i), &a->dir[i]);
    t = new_table(ts, "by_memkinds", "Ops by memory kinds (source->destination)", M_BYTES, true);
    for (unsigned i = 0; i < NKIND; i++)
        for (unsigned j = 0; j < NKIND; j++) {
            const char *sn = cbt_memkind_name(i), *dn = cbt_memkind_name(j);
            snprintf(nm, sizeof(nm), "%s->%s", sn ? sn : "?", dn ? dn : "?");
            trow_add(t, nm, &a->kind[i][j]);
        }
    t = new_table(ts, "by_access_order", "Ops by srcAccessOrder", M_BYTES, true);
    for (unsigned i = 0; i < NORDER; i++) {
        const char *n = cbt_access_order_name(i);
        trow_add(t, n ? n : "(out of range)", &a->order[i]);
    }
    t = new_table(ts, "batch_size_histogram", "Batch-size histogram (numOps, powers of two)", M_DRIVER, true);
    hist_rows(t, a->bsize);
    t = new_table(ts, "op_size_histogram", "Op-size histogram (bytes per op, powers of two; 0: size unknown)", M_BYTES, true);
    hist_rows(t, a->osize);

    /* call sites: name each (host, process image, address), merge equal names, keep the top ones */
    t = new_table(ts, "callers", "Top call sites (file:line where debug information says, else object+offset)",
                  M_DRIVER, true);
    {
        size_t n = a->callers.n, m = 0, top = a->by & CBT_BY_CALLER ? a->callers.limit : TOP_CALLERS;
        struct trow *tmp = calloc(n ? n : 1, sizeof(*tmp));
        ts->merged = calloc(n ? n : 1, sizeof(*ts->merged));
        ts->sites = calloc(n ? n : 1, sizeof(*ts->sites));
        for (size_t i = 0; tmp && ts->merged && ts->sites && i < n; i++) {
            const struct kent *e = &a->callers.ents[i];
            struct cbt_callsite cs;
            cbt_callsite_lookup(a->objs, (uint32_t)e->k[0], cbt_pkey_vpid(e->k[1]), e->k[2], &cs);
            cbt_callsite_format(&cs, nm, sizeof(nm));
            size_t j;
            for (j = 0; j < m; j++)
                if (strcmp(tmp[j].name, nm) == 0)
                    break;
            if (j == m) {
                snprintf(tmp[m].name, sizeof(tmp[m].name), "%s", nm);
                tmp[m].r = &ts->merged[m];
                ts->sites[m] = cs;
                tmp[m].site = &ts->sites[m];
                m++;
            }
            cbt_row_merge(&ts->merged[j], &e->row);
        }
        if (tmp)
            qsort(tmp, m, sizeof(*tmp), cmp_trow);
        for (size_t j = 0; tmp && j < m; j++) {
            if (j < top) {
                trow_add(t, tmp[j].name, tmp[j].r);
                if (t->n && t->rows[t->n - 1].r == tmp[j].r)
                    t->rows[t->n - 1].site = tmp[j].site;
            } else
                cbt_row_merge(&ts->caller_other, tmp[j].r);
        }
        cbt_row_merge(&ts->caller_other, &a->callers.other.row);
        trow_add(t, "other", &ts->caller_other);
        free(tmp);
    }
    if (a->by & CBT_BY_PROCESS) {
        t = new_table(ts, "by_process", "Batches by process", M_DRIVER, true);
        ktab_rows(a, t, &a->procs, 256, &ts->proc_other, name_proc);
    }
    if (a->by & CBT_BY_THREAD) {
        t = new_table(ts, "by_thread", "Batches by thread", M_DRIVER, true);
        ktab_rows(a, t, &a->threads, 256, &ts->thread_other, name_thread);
    }
    if (a->by & CBT_BY_STREAM) {
        t = new_table(ts, "by_stream", "Batches by CUDA stream", M_DRIVER, true);
        ktab_rows(a, t, &a->streams, 256, &ts->stream_other, name_stream);
    }
}

static const struct cbt_agg *devrow_agg; /* cmp_devrow's, set by cbt_device_rows */

static int cmp_devrow(const void *x, const void *y)
{
    const struct devrow *a = ((const struct drow *)x)->r, *b = ((const struct drow *)y)->r;
    int c = a->host == b->host ? 0
                               : strcmp(cbt_agg_host_name(devrow_agg, a->host), cbt_agg_host_name(devrow_agg, b->host));
    if (c)
        return c;
    return a->dev < b->dev ? -1 : a->dev > b->dev;
}

static bool devrow_empty(const struct devrow *r) { return r->ops_out == 0 && r->ops_in == 0; }

/* The rows of the device table: by host, then ordinal; "unknown" and "other" when not empty. */
size_t cbt_device_rows(const struct cbt_agg *a, struct drow rows[NDEV + 2])
{
    size_t n = 0;
    for (unsigned i = 0; i < a->ndevs; i++) {
        const struct devrow *r = &a->devs[i];
        if (a->nhosts > 1)
            snprintf(rows[n].name, sizeof(rows[n].name), "%s:%" PRId32, cbt_agg_host_name(a, r->host), r->dev);
        else
            snprintf(rows[n].name, sizeof(rows[n].name), "%" PRId32, r->dev);
        rows[n].r = r;
        rows[n].has_dev = true;
        n++;
    }
    devrow_agg = a;
    qsort(rows, n, sizeof(*rows), cmp_devrow);
    if (!devrow_empty(&a->dev_unknown)) {
        snprintf(rows[n].name, sizeof(rows[n].name), "unknown");
        rows[n].r = &a->dev_unknown;
        rows[n++].has_dev = false;
    }
    if (!devrow_empty(&a->dev_other)) {
        snprintf(rows[n].name, sizeof(rows[n].name), "other");
        rows[n].r = &a->dev_other;
        rows[n++].has_dev = false;
    }
    return n;
}
void cbt_tables_free(struct tables *ts)
{
    for (int i = 0; i < ts->n; i++)
        free(ts->t[i].rows);
    free(ts->merged);
    free(ts->sites);
}

uint64_t cbt_agg_count_threads(const struct cbt_agg *a)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->threads.n; i++)
        n += a->threads.ents[i].row.batches || a->threads.ents[i].row.ops;
    return n;
}
uint64_t cbt_agg_count_procs(const struct cbt_agg *a)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->procs.n; i++)
        n += a->procs.ents[i].row.batches || a->procs.ents[i].row.ops;
    return n;
}


/* ---------------------------------------------------------------- GPU time */

static void gtrow_add(struct gtable *t, const char *name, const struct gpurow *r)
{
    if (r->batches == 0)
        return;
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 16;
        struct gtrow *n = realloc(t->rows, c * sizeof(*n));
        if (!n)
            return;
        t->rows = n;
        t->cap = c;
    }
    struct gtrow *tr = &t->rows[t->n++];
    memset(tr, 0, sizeof(*tr));
    snprintf(tr->name, sizeof(tr->name), "%s", name);
    tr->r = r;
}

/* The row of op-size bin `bin` (named and bounded as the histograms), of `direction` when not NULL. */
static void gtrow_add_bin(struct gtable *t, unsigned bin, const struct gpurow *r, const char *direction)
{
    char nm[64];
    uint64_t lo, hi;
    if (r->batches == 0)
        return;
    hist_name(nm, sizeof(nm), bin, &lo, &hi);
    size_t before = t->n;
    gtrow_add(t, nm, r);
    if (t->n > before) {
        t->rows[t->n - 1].lo = lo;
        t->rows[t->n - 1].hi = hi;
        t->rows[t->n - 1].has_range = true;
        t->rows[t->n - 1].direction = direction;
    }
}

static int cmp_gtrow(const void *x, const void *y)
{
    const struct gpurow *a = ((const struct gtrow *)x)->r, *b = ((const struct gtrow *)y)->r;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? 1 : -1;
    if (a->batches != b->batches)
        return a->batches < b->batches ? 1 : -1;
    return strcmp(((const struct gtrow *)x)->name, ((const struct gtrow *)y)->name);
}

static struct gtable *new_gtable(struct gpu_tables *g, const char *key, const char *title)
{
    struct gtable *t = &g->t[g->n++];
    memset(t, 0, sizeof(*t));
    t->key = key;
    t->title = title;
    return t;
}

struct gdev_ref {
    const struct cbt_agg *a;
    const struct gpudev *d;
};

static int cmp_gdev(const void *x, const void *y)
{
    const struct gdev_ref *p = x, *q = y;
    int c = p->d->host == q->d->host ? 0
                                     : strcmp(cbt_agg_host_name(p->a, p->d->host), cbt_agg_host_name(q->a, q->d->host));
    if (c)
        return c;
    return p->d->dev < q->d->dev ? -1 : p->d->dev > q->d->dev;
}

/* A stream over time, ordered by GPU time, then name. */
struct gtime_ref {
    char name[256];
    const struct kent *e;
};

static int cmp_gtime(const void *x, const void *y)
{
    const struct gtime_ref *p = x, *q = y;
    if (p->e->gpu.gpu_ns != q->e->gpu.gpu_ns)
        return p->e->gpu.gpu_ns < q->e->gpu.gpu_ns ? 1 : -1;
    return strcmp(p->name, q->name);
}

static void gpu_over_time(struct cbt_agg *a, struct gpu_tables *g)
{
    const struct gpu_time *gt = &a->gpu;
    if (!gt->any_time)
        return;
    g->bucket_ns = gt->bucket_ns;
    g->start_ns = gt->start_ns;
    g->nbuckets = (unsigned)(((uint64_t)gt->hi - (uint64_t)gt->start_ns) / gt->bucket_ns + 1);
    const struct ktab *k = &gt->streams;
    struct gtime_ref *refs = calloc(k->n ? k->n : 1, sizeof(*refs));
    size_t n = 0;
    for (size_t i = 0; refs && i < k->n; i++)
        if (k->ents[i].over_time) {
            refs[n].e = &k->ents[i];
            name_stream(a, &k->ents[i], refs[n].name, sizeof(refs[n].name));
            n++;
        }
    if (refs)
        qsort(refs, n, sizeof(*refs), cmp_gtime);
    bool other = k->other.over_time != NULL;
    for (size_t i = 0; i < n; i++) {
        if (i < GPU_TIME_STREAMS) {
            snprintf(g->streams[g->nstreams].name, sizeof(g->streams[0].name), "%s", refs[i].name);
            g->streams[g->nstreams++].gpu_ns = refs[i].e->over_time;
            continue;
        }
        other = true;
        for (unsigned b = 0; b < GPU_BUCKETS; b++)
            g->other_time[b] += refs[i].e->over_time[b];
    }
    if (other) {
        for (unsigned b = 0; k->other.over_time && b < GPU_BUCKETS; b++)
            g->other_time[b] += k->other.over_time[b];
        snprintf(g->streams[g->nstreams].name, sizeof(g->streams[0].name), "other");
        g->streams[g->nstreams++].gpu_ns = g->other_time;
    }
    free(refs);
}

void cbt_gpu_tables_build(struct cbt_agg *a, struct gpu_tables *g)
{
    const struct gpu_time *gt = &a->gpu;
    struct gtable *t;
    char nm[256];
    memset(g, 0, sizeof(*g));

    for (size_t i = 0; i < a->procs.n; i++) {
        const struct kent *p = &a->procs.ents[i];
        if (p->gpu_time != 1)
            continue;
        g->processes_timed++;
        if (p->gpu_every > 1) {
            /* one in N timed: a batch without an event was most likely not chosen */
            g->processes_sampled++;
            if (p->gpu_every > g->sample_every)
                g->sample_every = p->gpu_every;
            if (!g->sample_every_min || p->gpu_every < g->sample_every_min)
                g->sample_every_min = p->gpu_every;
            if (p->forwarded_ok > p->gpu_events)
                g->not_sampled += p->forwarded_ok - p->gpu_events;
            continue;
        }
        if (p->forwarded_ok > p->gpu_events)
            g->not_read_back += p->forwarded_ok - p->gpu_events;
    }

    t = new_gtable(g, "by_direction", "GPU time by direction (of all the batch's ops; mixed: not all one)");
    for (unsigned i = 0; i < DIR_COUNT; i++)
        gtrow_add(t, cbt_direction_name((int)i), &gt->dir[i]);
    gtrow_add(t, "mixed", &gt->dir[DIR_COUNT]);

    t = new_gtable(g, "by_memkinds", "GPU time by memory kinds (source->destination of all the batch's ops; mixed: not all one)");
    for (unsigned i = 0; i < NKIND; i++)
        for (unsigned j = 0; j < NKIND; j++) {
            const char *sn = cbt_memkind_name(i), *dn = cbt_memkind_name(j);
            snprintf(nm, sizeof(nm), "%s->%s", sn ? sn : "?", dn ? dn : "?");
            gtrow_add(t, nm, &gt->kind[i][j]);
        }
    gtrow_add(t, "mixed", &gt->kind_mixed);

    t = new_gtable(g, "by_op_size", "GPU time by op size (the batch's bytes per op, powers of two; 0: size unknown)");
    for (unsigned i = 0; i < NHIST; i++)
        gtrow_add_bin(t, i, &gt->osize[i], NULL);

    /* the rows of by_op_size again, for each direction of by_direction (in its order) */
    t = new_gtable(g, "by_direction_op_size", "GPU time by direction and op size");
    t->json_only = true;
    for (unsigned d = 0; d <= DIR_COUNT; d++)
        for (unsigned i = 0; i < NHIST; i++)
            gtrow_add_bin(t, i, &gt->dir_osize[d][i], d < DIR_COUNT ? cbt_direction_name((int)d) : "mixed");

    t = new_gtable(g, "by_stream", "GPU time by CUDA stream");
    const struct ktab *k = &gt->streams;
    for (size_t i = 0; i < k->n; i++) {
        name_stream(a, &k->ents[i], nm, sizeof(nm));
        gtrow_add(t, nm, &k->ents[i].gpu);
    }
    if (t->n) /* (qsort wants a non-null array, even of none) */
        qsort(t->rows, t->n, sizeof(*t->rows), cmp_gtrow);
    cbt_gpurow_add(&g->stream_other, &k->other.gpu);
    while (t->n > 256)
        cbt_gpurow_add(&g->stream_other, t->rows[--t->n].r);
    gtrow_add(t, "other", &g->stream_other);

    t = new_gtable(g, "by_device", "GPU time by device (the stream's)");
    struct gdev_ref refs[NDEV];
    for (unsigned i = 0; i < gt->ndevs; i++)
        refs[i] = (struct gdev_ref){a, &gt->devs[i]};
    qsort(refs, gt->ndevs, sizeof(*refs), cmp_gdev);
    for (unsigned i = 0; i < gt->ndevs; i++) {
        snprintf(nm, sizeof(nm), "%s device %" PRId32, cbt_agg_host_name(a, refs[i].d->host), refs[i].d->dev);
        gtrow_add(t, nm, &refs[i].d->r);
    }
    gtrow_add(t, "unknown", &gt->dev_unknown);
    gtrow_add(t, "other", &gt->dev_other);

    gpu_over_time(a, g);
}

void cbt_gpu_tables_free(struct gpu_tables *g)
{
    for (int i = 0; i < g->n; i++)
        free(g->t[i].rows);
}
