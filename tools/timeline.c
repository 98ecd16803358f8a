/* SPDX-License-Identifier: MIT */
/*
 * `cubatchtrace timeline`: the traces as a Chrome trace-event file (the JSON
 * object form) that ui.perfetto.dev and chrome://tracing open.  One complete
 * event per batch call on its calling thread, one per GPU-timed batch on a
 * track of its stream, a flow from each call to its GPU span, each finding
 * an instant on the calling thread; docs/timeline.md says what is written.
 *
 * The events are gathered as compact records while the trace is read (GPU
 * times arrive after their batch, read back later), then sorted by track and
 * time and written one at a time: every track's timestamps rise in file
 * order.  --max-batches bounds what is held.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "analyse/agg.h"
#include "read/assemble.h"
#include "analyse/callsite.h"
#include "commands.h"
#include "guard.h"
#include "read/reader.h"
#include "analyse/tables.h"
#include "base/util.h"

static const char usage_timeline[] =
    "Usage: cubatchtrace timeline -o FILE [--max-batches N] [--pid PID]... [--begin TIME] [--end TIME]\n"
    "                             TRACE...\n"
    "Write the traces as a Chrome trace-event file (JSON) for ui.perfetto.dev or\n"
    "chrome://tracing: each batch call on its calling thread, each GPU-timed batch\n"
    "on a track of its stream with a flow from the call, each finding an instant.\n"
    "\n"
    "TRACE is a directory (searched recursively for CTF traces) or an LTTng live URL.\n"
    "\n"
    "  -o, --output FILE  write to FILE (- for the standard output); FILE appears\n"
    "                     only once it is whole\n"
    "  --max-batches N    keep the first N batches put back together and leave the\n"
    "                     rest out (said on stderr and in otherData)\n"
    "  --pid PID          only events of this process id (vpid); repeatable\n"
    CBT_USAGE_WINDOW
    "  -h, --help         this text\n"
    "\n"
    "Timestamps are microseconds from the earliest event written (otherData.origin_ns).\n"
    "Reading is guarded (CUBATCHTRACE_MAX_MEMORY, CUBATCHTRACE_TIMEOUT).\n"
    "\n"
    "Exit status: 0 written; 2 the input could not be read, the output cannot be\n"
    "written or the command line is wrong (one line on stderr, no FILE).\n";

/* Synthetic ids, above any Linux pid or tid (pid_max is at most 2^22). */
#define GPU_TID_BASE 0x40000000
#define PID_BASE 0x50000000
#define GPU_SORT_BASE 1000000

/* ---------------------------------------------------------------- a small hash map */

/* (a, b, c) -> index; open addressing, grown at half full. */
struct slot {
    uint64_t a, b, c;
    uint32_t v; /* index + 1; 0: empty */
};
struct map {
    struct slot *s;
    size_t cap, n;
};

static size_t map_hash(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= (c + 0x165667B19E3779F9ull) * 0xD6E8FEB86659FD93ull;
    h ^= h >> 29;
    return (size_t)h;
}

/* The slot for the key (empty when absent); NULL only when out of memory. */
static struct slot *map_slot(struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        struct slot *s = calloc(cap, sizeof(*s));
        if (!s)
            return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->s[i].v)
                continue;
            size_t j = map_hash(m->s[i].a, m->s[i].b, m->s[i].c) & (cap - 1);
            while (s[j].v)
                j = (j + 1) & (cap - 1);
            s[j] = m->s[i];
        }
        free(m->s);
        m->s = s;
        m->cap = cap;
    }
    size_t j = map_hash(a, b, c) & (m->cap - 1);
    while (m->s[j].v && (m->s[j].a != a || m->s[j].b != b || m->s[j].c != c))
        j = (j + 1) & (m->cap - 1);
    return &m->s[j];
}

static uint32_t map_get(const struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
    if (!m->cap)
        return 0;
    size_t j = map_hash(a, b, c) & (m->cap - 1);
    while (m->s[j].v && (m->s[j].a != a || m->s[j].b != b || m->s[j].c != c))
        j = (j + 1) & (m->cap - 1);
    return m->s[j].v;
}

/* ---------------------------------------------------------------- what is held */

struct proc {
    uint32_t host;
    int64_t vpid;
    uint32_t image;    /* the process image's tag (0 untagged): one proc per image */
    char *procname;
    int64_t pid_out;
    uint32_t sort;
};

struct track {
    uint32_t proc;
    bool gpu;
    int64_t tid;       /* host threads: the calling thread */
    uint64_t stream, stream_id; /* GPU tracks */
    int32_t device;
    int64_t tid_out;
    uint32_t sort;
};

/* also the order at equal times: a span before its flow */
enum rec_kind { R_HOST, R_GPU, R_FLOW_OUT, R_FLOW_IN, R_FINDING, R_DROPPED };

struct rec {
    int64_t ts;       /* ns, the trace clock */
    uint64_t dur;
    uint64_t batch_id;
    uint64_t flow;    /* the flow id (0: none) */
    union {
        struct {
            uint64_t num_ops, ops, bytes, stream, stream_id, caller;
            uint32_t result;
            int32_t device;
            uint8_t api, door, outcome, state;
        } h;
        struct {
            uint64_t op, other_op, value, limit;
            uint16_t rule;
            uint8_t severity, side;
        } f;
        struct {
            uint64_t ops, bytes;
            uint32_t host_rec; /* index + 1 of the batch's host span (0: none) */
            uint8_t api;
        } g;
    } u;
    uint32_t track;
    uint8_t kind;
};

struct timeline_job {
    struct cbt_read_opts ro;
    const char *path;   /* "-": standard output */
    int fd;             /* the file being written (-1: standard output) */
    uint64_t max_batches; /* 0: all */
};

struct tl {
    const struct timeline_job *j;
    struct cbt_agg *agg;
    struct proc *procs;
    size_t nprocs, capprocs;
    struct track *tracks;
    size_t ntracks, captracks;
    struct rec *recs;
    size_t nrecs, caprecs;
    struct map proc_map, track_map, batch_map;
    bool oom;
    /* counts for otherData */
    uint64_t batches, batches_left_out, no_time, no_header, findings, gpu_events, gpu_left_out;
    uint64_t gpu_status[8], gpu_status_other;
    uint64_t flows, gpu_without_batch;
};

static struct rec *rec_new(struct tl *t)
{
    if (t->nrecs == t->caprecs) {
        size_t cap = t->caprecs ? 2 * t->caprecs : 4096;
        struct rec *r = realloc(t->recs, cap * sizeof(*r));
        if (!r) {
            t->oom = true;
            return NULL;
        }
        t->recs = r;
        t->caprecs = cap;
    }
    struct rec *r = &t->recs[t->nrecs++];
    memset(r, 0, sizeof(*r));
    return r;
}

/* The process of w, added when new; UINT32_MAX when out of memory. */
static uint32_t proc_of(struct tl *t, const struct cbt_where *w)
{
    struct slot *s = map_slot(&t->proc_map, w->host, cbt_where_pkey(w), 0);
    if (!s)
        goto oom;
    if (s->v) {
        struct proc *p = &t->procs[s->v - 1];
        if (!p->procname && w->procname)
            p->procname = strdup(w->procname);
        return s->v - 1;
    }
    if (t->nprocs == t->capprocs) {
        size_t cap = t->capprocs ? 2 * t->capprocs : 16;
        struct proc *n = realloc(t->procs, cap * sizeof(*n));
        if (!n)
            goto oom;
        t->procs = n;
        t->capprocs = cap;
    }
    t->procs[t->nprocs] = (struct proc){.host = w->host, .vpid = w->vpid, .image = w->image,
                                        .procname = w->procname ? strdup(w->procname) : NULL};
    *s = (struct slot){w->host, cbt_where_pkey(w), 0, (uint32_t)++t->nprocs};
    t->proc_map.n++;
    return (uint32_t)(t->nprocs - 1);
oom:
    t->oom = true;
    return UINT32_MAX;
}

/* The track of a host thread (gpu false: tid) or of a stream (gpu true). */
static uint32_t track_of(struct tl *t, uint32_t proc, bool gpu, int64_t tid, uint64_t stream, uint64_t stream_id,
                         int32_t device)
{
    uint64_t a = (uint64_t)proc << 1 | gpu;
    uint64_t b = gpu ? stream : (uint64_t)tid;
    uint64_t c = gpu ? stream_id ^ ((uint64_t)(uint32_t)device << 32) : 0;
    struct slot *s = map_slot(&t->track_map, a, b, c);
    if (!s)
        goto oom;
    if (s->v)
        return s->v - 1;
    if (t->ntracks == t->captracks) {
        size_t cap = t->captracks ? 2 * t->captracks : 64;
        struct track *n = realloc(t->tracks, cap * sizeof(*n));
        if (!n)
            goto oom;
        t->tracks = n;
        t->captracks = cap;
    }
    t->tracks[t->ntracks] = (struct track){.proc = proc, .gpu = gpu, .tid = tid, .stream = stream,
                                           .stream_id = stream_id, .device = device};
    *s = (struct slot){a, b, c, (uint32_t)++t->ntracks};
    t->track_map.n++;
    return (uint32_t)(t->ntracks - 1);
oom:
    t->oom = true;
    return UINT32_MAX;
}

/* ---------------------------------------------------------------- reading */

static void on_batch(void *ctx, const struct cbt_read_batch *rb)
{
    struct tl *t = ctx;
    if (t->oom)
        return;
    if (!rb->have_header) { /* ops whose batch event never came: no call to show */
        t->no_header++;
        return;
    }
    if (!rb->w.has_ts) {
        t->no_time++;
        return;
    }
    if (t->j->max_batches && t->batches >= t->j->max_batches) {
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
    struct rec *r = rec_new(t);
    if (!r)
        return;
    t->batches++;
    uint32_t host_rec = (uint32_t)t->nrecs;
    /* the batch's time is when the driver returned (its event's, or for a
     * batch written before the call, its batch_end's): the call began
     * driver_ns before */
    r->kind = R_HOST;
    r->track = tr;
    r->ts = rb->w.ts_ns - (int64_t)h->driver_ns;
    r->dur = h->driver_ns;
    r->batch_id = h->batch_id;
    r->u.h.num_ops = h->num_ops;
    r->u.h.ops = ops;
    r->u.h.bytes = bytes;
    r->u.h.stream = h->stream;
    r->u.h.stream_id = h->stream_id;
    r->u.h.caller = h->caller;
    r->u.h.result = h->result;
    r->u.h.device = h->device;
    r->u.h.api = h->api;
    r->u.h.door = h->door;
    r->u.h.outcome = h->outcome;
    r->u.h.state = (uint8_t)rb->state;
    struct slot *s = map_slot(&t->batch_map, rb->w.host, (uint64_t)rb->w.vpid, h->batch_id);
    if (!s) {
        t->oom = true;
        return;
    }
    if (!s->v) { /* a batch id seen twice keeps its first span for the flow */
        *s = (struct slot){rb->w.host, (uint64_t)rb->w.vpid, h->batch_id, host_rec};
        t->batch_map.n++;
    }
    for (uint64_t i = 0; i < rb->nfindings; i++) {
        const struct cbt_finding *f = &rb->findings[i];
        if (!(r = rec_new(t)))
            return;
        t->findings++;
        r->kind = R_FINDING;
        r->track = tr;
        r->ts = rb->w.ts_ns;
        r->batch_id = h->batch_id;
        r->u.f.op = f->op;
        r->u.f.other_op = f->other_op;
        r->u.f.value = f->value;
        r->u.f.limit = f->limit;
        r->u.f.rule = f->rule;
        r->u.f.severity = f->severity;
        r->u.f.side = f->side;
    }
    if ((t->nrecs & 4095) == 0)
        cbt_progress();
}

static void on_gpu(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g)
{
    struct tl *t = ctx;
    if (t->oom)
        return;
    t->gpu_events++;
    if (g->status < sizeof(t->gpu_status) / sizeof(t->gpu_status[0]) && cbt_gpu_status_name(g->status))
        t->gpu_status[g->status]++;
    else
        t->gpu_status_other++;
    if (g->status != CBT_GPU_TIMED || !w->has_ts)
        return;
    if (t->j->max_batches && t->batches >= t->j->max_batches &&
        !map_get(&t->batch_map, w->host, (uint64_t)w->vpid, g->batch_id)) {
        t->gpu_left_out++; /* its batch can no longer be kept: not held */
        return;
    }
    uint32_t p = proc_of(t, w);
    uint32_t tr = p == UINT32_MAX ? p : track_of(t, p, true, 0, g->stream, g->stream_id, g->device);
    struct rec *r = tr == UINT32_MAX ? NULL : rec_new(t);
    if (!r)
        return;
    r->kind = R_GPU;
    r->track = tr;
    r->ts = w->ts_ns + g->start_rel_ns;
    r->dur = g->gpu_ns;
    r->batch_id = g->batch_id;
    r->u.g.ops = g->ops;
    r->u.g.bytes = g->bytes;
    r->u.g.api = g->api;
}

/* Each GPU span to its call: a flow from the one to the other.  With
 * --max-batches, GPU spans of the batches left out are left out too. */
static void join(struct tl *t)
{
    size_t n = t->nrecs;
    for (size_t i = 0; i < n && !t->oom; i++) {
        struct rec *g = &t->recs[i];
        if (g->kind != R_GPU)
            continue;
        const struct track *tr = &t->tracks[g->track];
        const struct proc *p = &t->procs[tr->proc];
        uint32_t hv = map_get(&t->batch_map, p->host, (uint64_t)p->vpid, g->batch_id);
        struct rec *h = hv ? &t->recs[hv - 1] : NULL;
        if (!h || h->flow) {
            if (t->batches_left_out) {
                g->kind = R_DROPPED;
                t->gpu_left_out++;
            } else {
                t->gpu_without_batch++;
            }
            continue;
        }
        uint64_t id = ++t->flows;
        h->flow = g->flow = id;
        struct rec *out = rec_new(t), *in;
        if (!out)
            return;
        h = &t->recs[hv - 1];
        g = &t->recs[i];
        *out = (struct rec){.kind = R_FLOW_OUT, .track = h->track, .ts = h->ts, .flow = id, .batch_id = h->batch_id};
        if (!(in = rec_new(t)))
            return;
        g = &t->recs[i];
        *in = (struct rec){.kind = R_FLOW_IN, .track = g->track, .ts = g->ts, .flow = id, .batch_id = g->batch_id};
    }
    size_t k = 0; /* drop the GPU spans left out */
    for (size_t i = 0; i < t->nrecs; i++)
        if (t->recs[i].kind != R_DROPPED)
            t->recs[k++] = t->recs[i];
    t->nrecs = k;
}

/* ---------------------------------------------------------------- ids and names */

static const struct tl *sort_tl;

static int cmp_proc(const void *x, const void *y)
{
    const struct proc *a = &sort_tl->procs[*(const uint32_t *)x], *b = &sort_tl->procs[*(const uint32_t *)y];
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
    const struct track *a = &sort_tl->tracks[*(const uint32_t *)x], *b = &sort_tl->tracks[*(const uint32_t *)y];
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
static int assign_ids(struct tl *t)
{
    uint32_t *order = malloc((t->nprocs + t->ntracks + 1) * sizeof(*order));
    if (!order)
        return -1;
    sort_tl = t;
    for (size_t i = 0; i < t->nprocs; i++)
        order[i] = (uint32_t)i;
    qsort(order, t->nprocs, sizeof(*order), cmp_proc);
    for (size_t i = 0; i < t->nprocs; i++) {
        struct proc *p = &t->procs[order[i]];
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
        struct track *tr = &t->tracks[order[i]];
        tr->sort = tr->gpu ? GPU_SORT_BASE + (uint32_t)i : (uint32_t)i;
        tr->tid_out = tr->gpu ? GPU_TID_BASE + ngpu++ : tr->tid;
    }
    free(order);
    return 0;
}

static int cmp_rec(const void *x, const void *y)
{
    const struct rec *a = x, *b = y;
    const struct track *ta = &sort_tl->tracks[a->track], *tb = &sort_tl->tracks[b->track];
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

/* ---------------------------------------------------------------- writing */

static void put_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

/* ns as microseconds with three decimals (non-negative) */
static void put_us(FILE *out, uint64_t ns) { fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000)); }

static const char *name_or(const char *name, char *buf, size_t len, uint64_t v)
{
    if (name)
        return name;
    snprintf(buf, len, "%" PRIu64, v);
    return buf;
}

static void put_meta(FILE *out, bool *first, const char *what, int64_t pid, int64_t tid, const char *key,
                     const char *sval, int64_t ival)
{
    fprintf(out, "%s\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":{\"%s\":",
            *first ? "" : ",", what, pid, tid, key);
    if (sval)
        put_str(out, sval);
    else
        fprintf(out, "%" PRId64, ival);
    fputs("}}", out);
    *first = false;
}

static void write_names(struct tl *t, FILE *out, bool *first)
{
    bool hosts = false;
    for (size_t i = 1; i < t->nprocs; i++)
        if (t->procs[i].host != t->procs[0].host)
            hosts = true;
    char name[1024];
    for (size_t i = 0; i < t->nprocs; i++) {
        const struct proc *p = &t->procs[i];
        char pn[64];
        int n = snprintf(name, sizeof(name), "%s (%s", p->procname ? p->procname : "process",
                         cbt_agg_proc_name(t->agg, p->host, cbt_pkey(p->image, p->vpid), pn, sizeof(pn)));
        if (hosts)
            snprintf(name + n, sizeof(name) - (size_t)n, ", host %s)", cbt_agg_host_name(t->agg, p->host));
        else
            snprintf(name + n, sizeof(name) - (size_t)n, ")");
        put_meta(out, first, "process_name", p->pid_out, 0, "name", name, 0);
        put_meta(out, first, "process_sort_index", p->pid_out, 0, "sort_index", NULL, p->sort);
    }
    for (size_t i = 0; i < t->ntracks; i++) {
        const struct track *tr = &t->tracks[i];
        const struct proc *p = &t->procs[tr->proc];
        if (tr->gpu)
            snprintf(name, sizeof(name), "GPU stream 0x%" PRIx64 " (id %" PRIu64 ", device %d)", tr->stream,
                     tr->stream_id, (int)tr->device);
        else if (tr->tid == p->vpid && p->procname)
            snprintf(name, sizeof(name), "%s (tid %" PRId64 ")", p->procname, tr->tid);
        else
            snprintf(name, sizeof(name), "tid %" PRId64, tr->tid);
        put_meta(out, first, "thread_name", p->pid_out, tr->tid_out, "name", name, 0);
        put_meta(out, first, "thread_sort_index", p->pid_out, tr->tid_out, "sort_index", NULL, tr->sort);
    }
}

static void write_rec(struct tl *t, FILE *out, const struct rec *r, int64_t origin)
{
    const struct track *tr = &t->tracks[r->track];
    const struct proc *p = &t->procs[tr->proc];
    char b[4][24], img[32] = "";
    if (p->image) /* batch_id: the batch's number within its process image */
        snprintf(img, sizeof(img), ",\"image\":\"0x%08" PRIx32 "\"", p->image);
    uint64_t id = cbt_batch_number(r->batch_id);
    fputs(",\n{\"ph\":", out);
    switch (r->kind) {
    case R_HOST:
    case R_GPU: fputs("\"X\"", out); break;
    case R_FLOW_OUT: fputs("\"s\"", out); break;
    case R_FLOW_IN: fputs("\"f\",\"bp\":\"e\"", out); break;
    default: fputs("\"i\",\"s\":\"t\"", out); break;
    }
    fprintf(out, ",\"cat\":\"cubatchtrace\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", p->pid_out, tr->tid_out);
    put_us(out, (uint64_t)(r->ts - origin));
    if (r->kind == R_HOST || r->kind == R_GPU) {
        fputs(",\"dur\":", out);
        put_us(out, r->dur);
    }
    switch (r->kind) {
    case R_HOST: {
        fprintf(out, ",\"name\":\"%s\",\"args\":{\"batch_id\":%" PRIu64 "%s,\"num_ops\":%" PRIu64 ",\"ops\":%" PRIu64
                     ",\"bytes\":%" PRIu64 ",\"result\":\"%s\",\"door\":\"%s\",\"stream\":\"0x%" PRIx64
                     "\",\"stream_id\":%" PRIu64 ",\"device\":%d,\"outcome\":\"%s\"",
                name_or(cbt_api_name(r->u.h.api), b[0], sizeof(b[0]), r->u.h.api), id, img, r->u.h.num_ops,
                r->u.h.ops, r->u.h.bytes, name_or(cbt_curesult_name(r->u.h.result), b[1], sizeof(b[1]), r->u.h.result),
                name_or(cbt_door_name(r->u.h.door), b[2], sizeof(b[2]), r->u.h.door), r->u.h.stream,
                r->u.h.stream_id, (int)r->u.h.device,
                name_or(cbt_outcome_name(r->u.h.outcome), b[3], sizeof(b[3]), r->u.h.outcome));
        if (r->u.h.state != CBT_BS_COMPLETE)
            fprintf(out, ",\"state\":\"%s\"", cbt_batch_state_name((enum cbt_batch_state)r->u.h.state));
        if (r->u.h.outcome == CBT_OUTCOME_FORWARDED && r->u.h.result == CBT_CU_CAPTURE_UNSUPPORTED)
            fputs(",\"refused_in_capture\":\"the stream was being captured into a graph: the copy is not in it\"", out);
        if (r->u.h.caller) {
            char site[1200];
            fputs(",\"call_site\":", out);
            put_str(out, cbt_objmap_name(cbt_agg_callsites(t->agg), p->host, p->vpid, r->u.h.caller, site, sizeof(site)));
        }
        fputs("}}", out);
        break;
    }
    case R_GPU: {
        double gbs = r->dur ? (double)r->u.g.bytes / (double)r->dur : 0;
        fprintf(out, ",\"name\":\"%s\",\"args\":{\"batch_id\":%" PRIu64 "%s,\"ops\":%" PRIu64 ",\"bytes\":%" PRIu64
                     ",\"gpu_ns\":%" PRIu64 ",\"GB/s\":%.3f}}",
                name_or(cbt_api_name(r->u.g.api), b[0], sizeof(b[0]), r->u.g.api), id, img, r->u.g.ops,
                r->u.g.bytes, r->dur, gbs);
        break;
    }
    case R_FLOW_OUT:
    case R_FLOW_IN:
        fprintf(out, ",\"name\":\"batch to GPU\",\"id\":%" PRIu64 ",\"args\":{\"batch_id\":%" PRIu64 "%s}}", r->flow,
                id, img);
        break;
    default: {
        const struct cbt_rule_info *ri = cbt_rule(r->u.f.rule);
        char v[32], l[32];
        fprintf(out, ",\"name\":\"%s\",\"args\":{\"batch_id\":%" PRIu64 "%s,\"severity\":\"%s\"",
                ri ? ri->name : "unknown", id, img,
                name_or(cbt_severity_name(r->u.f.severity), b[0], sizeof(b[0]), r->u.f.severity));
        if (r->u.f.op == CBT_NO_OP)
            fputs(",\"op\":null", out);
        else
            fprintf(out, ",\"op\":%" PRIu64, r->u.f.op);
        if (r->u.f.other_op != CBT_NO_OP)
            fprintf(out, ",\"other_op\":%" PRIu64, r->u.f.other_op);
        fprintf(out, ",\"side\":\"%s\",\"value\":\"%s\",\"limit\":\"%s\",\"text\":",
                name_or(cbt_side_name(r->u.f.side), b[1], sizeof(b[1]), r->u.f.side),
                cbt_rule_value(r->u.f.rule, r->u.f.value, v, sizeof(v)),
                cbt_rule_value(r->u.f.rule, r->u.f.limit, l, sizeof(l)));
        put_str(out, ri ? ri->text : "");
        fputs("}}", out);
        break;
    }
    }
}

static void write_other(struct tl *t, FILE *out, int64_t origin, uint64_t host_spans, uint64_t gpu_spans)
{
    const struct timeline_job *j = t->j;
    char when[64] = "";
    time_t s = (time_t)(origin / 1000000000);
    struct tm tm;
    if (gmtime_r(&s, &tm))
        snprintf(when + strftime(when, 32, "%Y-%m-%dT%H:%M:%S", &tm), 32, ".%09dZ", (int)(origin % 1000000000));
    fprintf(out, "\"otherData\":{\"tool\":\"cubatchtrace timeline\",\"version\":\"%s\",\"inputs\":[", PACKAGE_VERSION);
    for (int i = 0; i < j->ro.ninputs; i++) {
        fputs(i ? "," : "", out);
        put_str(out, j->ro.inputs[i]);
    }
    fprintf(out, "],\n\"origin_ns\":\"%" PRId64 "\",\"origin_utc\":\"%s\",\"time_unit\":\"us from origin_ns\",\n",
            origin, when);
    fprintf(out, "\"batches\":%" PRIu64 ",\"host_spans\":%" PRIu64 ",\"gpu_spans\":%" PRIu64 ",\"flows\":%" PRIu64
                 ",\"findings\":%" PRIu64 ",\n",
            t->batches, host_spans, gpu_spans, t->flows, t->findings);
    struct gpu_tables gt;
    cbt_gpu_tables_build(t->agg, &gt);
    /* how the timed batches were chosen: every batch, or one in N of each stream (per calling thread) */
    fprintf(out, "\"gpu_timed_every\":%u,\"gpu_not_sampled\":%" PRIu64 ",\n",
            gt.processes_sampled ? gt.sample_every : 1, gt.not_sampled);
    cbt_gpu_tables_free(&gt);
    fprintf(out, "\"gpu_time_events\":%" PRIu64 ",\"gpu_status\":{", t->gpu_events);
    bool first = true;
    for (unsigned i = 0; i < sizeof(t->gpu_status) / sizeof(t->gpu_status[0]); i++) {
        const char *n = cbt_gpu_status_name(i);
        if (!n)
            continue;
        fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", n, t->gpu_status[i]);
        first = false;
    }
    if (t->gpu_status_other)
        fprintf(out, ",\"other\":%" PRIu64, t->gpu_status_other);
    fprintf(out, "},\"gpu_spans_without_batch\":%" PRIu64 ",\n", t->gpu_without_batch);
    fprintf(out, "\"batches_without_header\":%" PRIu64 ",\"batches_without_time\":%" PRIu64 ",\n", t->no_header,
            t->no_time);
    if (j->max_batches)
        fprintf(out, "\"max_batches\":%" PRIu64, j->max_batches);
    else
        fputs("\"max_batches\":null", out);
    fprintf(out,
            ",\"stopped_at_max_batches\":%s,\"batches_left_out\":%" PRIu64 ",\"gpu_spans_left_out\":%" PRIu64 ",\n",
            t->batches_left_out ? "true" : "false", t->batches_left_out, t->gpu_left_out);
    fputs("\"begin\":", out);
    if (j->ro.begin)
        put_str(out, j->ro.begin);
    else
        fputs("null", out);
    fputs(",\"end\":", out);
    if (j->ro.end)
        put_str(out, j->ro.end);
    else
        fputs("null", out);
    fputs(",\"pids\":[", out);
    for (int i = 0; i < j->ro.npids; i++)
        fprintf(out, "%s%" PRId64, i ? "," : "", j->ro.pids[i]);
    fputs("]},\n", out);
}

static int write_all(struct tl *t, FILE *out)
{
    if (assign_ids(t) != 0)
        return -1;
    sort_tl = t;
    qsort(t->recs, t->nrecs, sizeof(*t->recs), cmp_rec);
    cbt_progress();
    int64_t origin = INT64_MAX;
    uint64_t host_spans = 0, gpu_spans = 0;
    for (size_t i = 0; i < t->nrecs; i++) {
        if (t->recs[i].ts < origin)
            origin = t->recs[i].ts;
        host_spans += t->recs[i].kind == R_HOST;
        gpu_spans += t->recs[i].kind == R_GPU;
    }
    if (origin == INT64_MAX)
        origin = 0;
    fputs("{\"displayTimeUnit\":\"ns\",\n", out);
    write_other(t, out, origin, host_spans, gpu_spans);
    fputs("\"traceEvents\":[", out);
    bool first = true;
    write_names(t, out, &first); /* every record is on a track these name: they come after */
    for (size_t i = 0; i < t->nrecs; i++) {
        write_rec(t, out, &t->recs[i], origin);
        if ((i & 65535) == 65535)
            cbt_progress();
    }
    fputs("\n]}\n", out);
    return 0;
}

/* ---------------------------------------------------------------- the command */

static int timeline_read(void *arg)
{
    const struct timeline_job *j = arg;
    struct tl t = {.j = j};
    int rc = 2;
    FILE *out = NULL;
    if (!(t.agg = cbt_agg_new(0))) {
        cbt_err("out of memory");
        return 2;
    }
    struct cbt_read_opts ro = j->ro;
    ro.batch = on_batch;
    ro.batch_ctx = &t;
    ro.gpu = on_gpu;
    ro.gpu_ctx = &t;
    struct cbt_read_out to_agg;
    cbt_agg_read_out(t.agg, &to_agg);
    if (cbt_read(&ro, &to_agg) != 0)
        goto done;
    cbt_progress();
    cbt_agg_finish(t.agg);
    join(&t);
    if (t.oom) {
        cbt_err("out of memory holding %zu events (--max-batches N bounds them)", t.nrecs);
        goto done;
    }
    if (t.batches_left_out)
        cbt_err("stopped after %" PRIu64 " batches (--max-batches): %" PRIu64 " more left out", t.batches,
                t.batches_left_out);
    int fd = j->fd >= 0 ? dup(j->fd) : dup(STDOUT_FILENO);
    if (fd < 0 || !(out = fdopen(fd, "w"))) {
        if (fd >= 0)
            close(fd);
        cbt_err("cannot write %s: %s", j->fd >= 0 ? j->path : "the standard output", strerror(errno));
        goto done;
    }
    static char buf[1 << 16];
    setvbuf(out, buf, _IOFBF, sizeof(buf));
    if (write_all(&t, out) != 0) {
        cbt_err("out of memory");
        fclose(out);
        goto done;
    }
    if (fflush(out) != 0 || ferror(out)) {
        cbt_err("cannot write %s: %s", j->fd >= 0 ? j->path : "the standard output", strerror(errno));
        fclose(out);
        goto done;
    }
    rc = fclose(out) == 0 ? 0 : 2;
    if (rc)
        cbt_err("cannot write %s: %s", j->fd >= 0 ? j->path : "the standard output", strerror(errno));
done:
    for (size_t i = 0; i < t.nprocs; i++)
        free(t.procs[i].procname);
    free(t.procs);
    free(t.tracks);
    free(t.recs);
    free(t.proc_map.s);
    free(t.track_map.s);
    free(t.batch_map.s);
    cbt_agg_free(t.agg);
    return rc;
}

int cbt_cmd_timeline(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"max-batches", required_argument, NULL, 'm'},
        {"pid", required_argument, NULL, 'p'},    {"help", no_argument, NULL, 'h'},
        {"begin", required_argument, NULL, 'B'},  {"end", required_argument, NULL, 'E'},
        {0, 0, 0, 0},
    };
    struct timeline_job j = {.fd = -1};
    int64_t *pids = NULL;
    const char *begin = NULL, *end = NULL;
    char *tmp = NULL;
    int npids = 0, c, rc = 2;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': j.path = optarg; break;
        case 'm': {
            char *stop;
            errno = 0;
            unsigned long long v = strtoull(optarg, &stop, 10);
            if (stop == optarg || *stop || errno || v == 0 || optarg[0] == '-') {
                cbt_usage_error("--max-batches %s: expected a number of batches, 1 or more", optarg);
                goto out;
            }
            j.max_batches = v;
            break;
        }
        case 'p': if (cbt_parse_pid(optarg, &pids, &npids) != 0) goto out; break;
        case 'B': begin = optarg; break;
        case 'E': end = optarg; break;
        case 'h': fputs(usage_timeline, stdout); rc = 0; goto out;
        default: cbt_option_error("timeline", c, argv, opts); goto out;
        }
    }
    if (!j.path) {
        cbt_usage_error("no output given: -o FILE (- for the standard output)");
        goto out;
    }
    if (optind >= argc) {
        cbt_usage_error("no trace given");
        goto out;
    }
    if (strcmp(j.path, "-") != 0) {
        /* written beside FILE under another name, renamed once whole: no half file */
        struct stat st;
        if (stat(j.path, &st) == 0 && S_ISDIR(st.st_mode)) {
            cbt_err("cannot write %s: %s", j.path, strerror(EISDIR));
            goto out;
        }
        if (!(tmp = malloc(strlen(j.path) + 16))) {
            cbt_err("out of memory");
            goto out;
        }
        sprintf(tmp, "%s.tmp-XXXXXX", j.path);
        if ((j.fd = mkstemp(tmp)) < 0) {
            cbt_err("cannot write %s: %s", j.path, strerror(errno));
            free(tmp);
            tmp = NULL;
            goto out;
        }
    }
    j.ro = (struct cbt_read_opts){
        .inputs = (const char *const *)argv + optind, .ninputs = argc - optind, .pids = pids, .npids = npids, .begin = begin, .end = end};
    cbt_guard_on_failure(2, tmp); /* no unfinished file left behind */
    rc = cbt_guard_run(j.ro.inputs, j.ro.ninputs, timeline_read, &j);
    if (tmp && rc == 0) {
        mode_t mask = umask(0);
        umask(mask);
        if (fchmod(j.fd, 0666 & ~mask) != 0 || rename(tmp, j.path) != 0) {
            cbt_err("cannot write %s: %s", j.path, strerror(errno));
            rc = 2;
        }
    }
    if (tmp && rc != 0)
        unlink(tmp);
out:
    if (j.fd >= 0)
        close(j.fd);
    free(tmp);
    free(pids);
    return rc;
}
