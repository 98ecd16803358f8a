/*
 * Streaming aggregation of cubatchtrace events.
 *
 * Memory does not grow with the number of events: per-op figures go straight
 * into fixed tables; a batch whose ops arrive in several events (batch +
 * batch_ops, possibly from different streams when the thread migrated) waits
 * in a bounded table keyed by (host, vpid, batch_id) until all its ops came;
 * processes, threads, streams and call sites live in bounded tables with an
 * "other" row when full.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cbt.h"

/* ---------------------------------------------------------------- rows */

struct row {
    uint64_t batches, ops, bytes;
    uint64_t n, sum, min, max; /* the table's measure: driver ns per batch or bytes per op */
};

static inline void row_sample(struct row *r, uint64_t v)
{
    if (r->n == 0 || v < r->min)
        r->min = v;
    if (v > r->max)
        r->max = v;
    r->n++;
    r->sum += v;
}

/* ---------------------------------------------------------------- keyed tables */

struct kent {
    uint64_t k[3];
    struct row row;
    uint64_t extra;   /* streams: stream_id */
    char *label;      /* processes: procname */
};

struct ktab {
    struct kent *ents;
    size_t n, cap_ents, limit;
    uint32_t *slots;  /* entry index + 1; 0 = empty */
    size_t nslots;
    struct kent other;
    uint64_t overflowed; /* keys that went to `other` */
};

static uint64_t mix3(const uint64_t k[3])
{
    uint64_t h = k[0] * 0x9E3779B97F4A7C15ull ^ (k[1] + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= (k[2] + 0x165667B19E3779F9ull) * 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static void ktab_init(struct ktab *t, size_t limit) { memset(t, 0, sizeof(*t)); t->limit = limit; }

static void ktab_free(struct ktab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->ents[i].label);
    free(t->ents);
    free(t->slots);
}

static int ktab_rehash(struct ktab *t, size_t nslots)
{
    uint32_t *s = calloc(nslots, sizeof(*s));
    if (!s)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = mix3(t->ents[i].k) & (nslots - 1);
        while (s[j])
            j = (j + 1) & (nslots - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = s;
    t->nslots = nslots;
    return 0;
}

/* The entry of key k, created when new; `other` when the table is full. */
static struct kent *ktab_get(struct ktab *t, uint64_t k0, uint64_t k1, uint64_t k2, bool *created)
{
    uint64_t k[3] = {k0, k1, k2};
    *created = false;
    if (t->nslots) {
        size_t j = mix3(k) & (t->nslots - 1);
        while (t->slots[j]) {
            struct kent *e = &t->ents[t->slots[j] - 1];
            if (e->k[0] == k0 && e->k[1] == k1 && e->k[2] == k2)
                return e;
            j = (j + 1) & (t->nslots - 1);
        }
    }
    if (t->n >= t->limit)
        goto other;
    if ((t->n + 1) * 2 > t->nslots && ktab_rehash(t, t->nslots ? t->nslots * 2 : 64) != 0)
        goto other;
    if (t->n == t->cap_ents) {
        size_t c = t->cap_ents ? t->cap_ents * 2 : 32;
        struct kent *e = realloc(t->ents, c * sizeof(*e));
        if (!e)
            goto other;
        t->ents = e;
        t->cap_ents = c;
    }
    struct kent *e = &t->ents[t->n];
    memset(e, 0, sizeof(*e));
    memcpy(e->k, k, sizeof(k));
    size_t j = mix3(k) & (t->nslots - 1);
    while (t->slots[j])
        j = (j + 1) & (t->nslots - 1);
    t->slots[j] = (uint32_t)(++t->n);
    *created = true;
    return e;
other:
    t->overflowed++;
    return &t->other;
}

/* ---------------------------------------------------------------- batches in flight */

struct brec {
    uint64_t batch_id;
    uint32_t host;
    bool used, have_batch;
    int64_t vpid, vtid;
    struct cbt_batch b;
    uint64_t expect, seen_ops, bytes;
    uint64_t dir_mask, kind_mask, order_mask, osz_mask[2];
};

#define PENDING_MAX (1u << 17)

/* ---------------------------------------------------------------- the aggregate */

enum { DIR_HTOD, DIR_DTOH, DIR_DTOD, DIR_HTOH, DIR_HTOA, DIR_ATOH, DIR_DTOA, DIR_ATOD, DIR_ATOA, DIR_PEER, DIR_UNKNOWN,
       DIR_COUNT };
static const char *const dir_names[DIR_COUNT] = {"HtoD", "DtoH", "DtoD", "HtoH", "HtoA", "AtoH",
                                                 "DtoA", "AtoD", "AtoA", "peer", "unknown"};
#define NKIND 8   /* the 7 memory kinds + out of range */
#define NORDER 5  /* the 4 access orders + out of range */
#define NAPI (CBT_API_COUNT_ + 1)
#define NDOOR 4
#define NHIST 66  /* 0, then [2^k, 2^(k+1)) for k = 0..63 (index k+1), plus spare */

/* Bytes by device: one row per (host, device ordinal) of a device or managed
 * pointer operand, at most NDEV rows, then "other"; a negative ordinal goes
 * to "unknown".  Devices are few: a linear scan behind a one-entry cache. */
#define NDEV 64
struct devrow {
    uint32_t host;
    int32_t dev;
    uint64_t ops_out, bytes_out, ops_in, bytes_in;
    uint64_t peer_ops_out, peer_bytes_out, peer_ops_in, peer_bytes_in;
};

struct frule {
    uint64_t count;
    bool seen, has_ts;
    int64_t first_ts;
    uint64_t first_batch;
    int64_t first_pid;
    uint32_t first_host;
    uint8_t severity;
};

struct pfinding {
    struct cbt_where w;
    struct cbt_batch_finding f;
};
#define FINDING_BUF 4096

struct cbt_agg {
    unsigned by;
    char **hosts;
    uint32_t nhosts;
    /* totals */
    uint64_t batches, ops, bytes, failed, refused, no_driver, driver_ns;
    uint64_t discarded_events, discarded_packets, discarded_unknown;
    uint64_t orphan_ops, orphan_chunks, incomplete_batches, pending_overflow;
    /* tables */
    struct row api[NAPI], door[NDOOR], apidoor[NAPI][NDOOR];
    struct row dir[DIR_COUNT], kind[NKIND][NKIND], order[NORDER], bsize[NHIST], osize[NHIST];
    struct ktab procs, threads, streams, callers;
    struct devrow devs[NDEV], dev_other, dev_unknown;
    unsigned ndevs, dev_last;
    uint64_t dev_overflowed; /* (host, device) keys that went to `other` */
    struct frule rules[CBT_RULE_COUNT + 1];
    uint64_t findings;
    struct cbt_read_stats rs;
    /* batches in flight */
    struct brec *pend;
    size_t npend, cappend;
    /* call site names */
    struct cbt_objmap *objs;
    /* check */
    FILE *fout;
    struct pfinding *fbuf;
    size_t nfbuf;
    bool finished;
};

struct cbt_agg *cbt_agg_new(unsigned by)
{
    struct cbt_agg *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->by = by;
    ktab_init(&a->procs, 1u << 16);
    ktab_init(&a->threads, 1u << 16);
    ktab_init(&a->streams, 1u << 12);
    ktab_init(&a->callers, 1u << 12);
    a->objs = cbt_objmap_new();
    if (!a->objs) {
        free(a);
        return NULL;
    }
    return a;
}

void cbt_agg_free(struct cbt_agg *a)
{
    if (!a)
        return;
    for (uint32_t i = 0; i < a->nhosts; i++)
        free(a->hosts[i]);
    free(a->hosts);
    ktab_free(&a->procs);
    ktab_free(&a->threads);
    ktab_free(&a->streams);
    ktab_free(&a->callers);
    free(a->pend);
    free(a->fbuf);
    cbt_objmap_free(a->objs);
    free(a);
}

uint32_t cbt_agg_host(struct cbt_agg *a, const char *h)
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
    return host < a->nhosts ? a->hosts[host] : "?";
}

/* ---------------------------------------------------------------- per op */

static inline int mem_class(uint8_t mem, uint8_t type)
{
    switch (mem) {
    case CBT_MEM_DEVICE:
    case CBT_MEM_MANAGED: return 'D';
    case CBT_MEM_HOST_PINNED:
    case CBT_MEM_HOST_PAGEABLE: return 'H';
    case CBT_MEM_ARRAY: return 'A';
    default: return type == CBT_OPERAND_ARRAY ? 'A' : 0;
    }
}

static inline int direction(const struct cbt_ops *o, uint32_t i, int s, int d)
{
    switch (s << 8 | d) {
    case 'H' << 8 | 'D': return DIR_HTOD;
    case 'D' << 8 | 'H': return DIR_DTOH;
    case 'D' << 8 | 'D':
        return o->src_dev[i] >= 0 && o->dst_dev[i] >= 0 && o->src_dev[i] != o->dst_dev[i] ? DIR_PEER : DIR_DTOD;
    case 'H' << 8 | 'H': return DIR_HTOH;
    case 'H' << 8 | 'A': return DIR_HTOA;
    case 'A' << 8 | 'H': return DIR_ATOH;
    case 'D' << 8 | 'A': return DIR_DTOA;
    case 'A' << 8 | 'D': return DIR_ATOD;
    case 'A' << 8 | 'A': return DIR_ATOA;
    default: return DIR_UNKNOWN;
    }
}

static inline unsigned hist_bin(uint64_t v) { return v ? 64u - (unsigned)__builtin_clzll(v) : 0u; }

/* The row of device `dev` of `host`: "unknown" for a negative ordinal, "other" when full. */
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

static void ops_into(struct cbt_agg *a, struct brec *r, const struct cbt_ops *o)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < o->count; i++) {
        uint64_t by = o->bytes[i];
        int sc = mem_class(o->src_mem[i], o->src_type[i]), dc = mem_class(o->dst_mem[i], o->dst_type[i]);
        int d = direction(o, i, sc, dc);
        if (sc == 'D') {
            struct devrow *dr = dev_row(a, r->host, o->src_dev[i]);
            dr->ops_out++;
            dr->bytes_out += by;
            if (d == DIR_PEER) {
                dr->peer_ops_out++;
                dr->peer_bytes_out += by;
            }
        }
        if (dc == 'D') {
            struct devrow *dr = dev_row(a, r->host, o->dst_dev[i]);
            dr->ops_in++;
            dr->bytes_in += by;
            if (d == DIR_PEER) {
                dr->peer_ops_in++;
                dr->peer_bytes_in += by;
            }
        }
        unsigned sk = o->src_mem[i] < NKIND - 1 ? o->src_mem[i] : NKIND - 1;
        unsigned dk = o->dst_mem[i] < NKIND - 1 ? o->dst_mem[i] : NKIND - 1;
        unsigned od = o->order[i] < NORDER - 1 ? o->order[i] : NORDER - 1;
        unsigned hb = hist_bin(by);
        struct row *rows[4] = {&a->dir[d], &a->kind[sk][dk], &a->order[od], &a->osize[hb]};
        for (int k = 0; k < 4; k++) {
            rows[k]->ops++;
            rows[k]->bytes += by;
            row_sample(rows[k], by);
        }
        r->dir_mask |= 1ull << d;
        r->kind_mask |= 1ull << (sk * NKIND + dk);
        r->order_mask |= 1ull << od;
        r->osz_mask[hb >> 6] |= 1ull << (hb & 63);
        sum += by;
    }
    r->seen_ops += o->count;
    r->bytes += sum;
    a->ops += o->count;
    a->bytes += sum;
}

/* ---------------------------------------------------------------- per batch */

static void row_batch(struct row *row, const struct brec *r, bool sample)
{
    row->batches += r->have_batch;
    row->ops += r->seen_ops;
    row->bytes += r->bytes;
    if (sample)
        row_sample(row, r->b.driver_ns);
}

static void finalize(struct cbt_agg *a, const struct brec *r)
{
    bool created;
    bool hb = r->have_batch;
    unsigned api = hb && r->b.api < CBT_API_COUNT_ ? r->b.api : CBT_API_COUNT_;
    unsigned door = hb && r->b.door < NDOOR - 1 ? r->b.door : NDOOR - 1;
    row_batch(&a->api[api], r, hb);
    row_batch(&a->door[door], r, hb);
    row_batch(&a->apidoor[api][door], r, hb);
    if (hb) {
        a->batches++;
        a->driver_ns += r->b.driver_ns;
        if (r->b.outcome == CBT_OUTCOME_REFUSED)
            a->refused++;
        else if (r->b.outcome == CBT_OUTCOME_NO_DRIVER)
            a->no_driver++;
        else if (r->b.outcome == CBT_OUTCOME_FORWARDED && r->b.result != CBT_CU_SUCCESS)
            a->failed++;
        if (r->seen_ops < r->expect)
            a->incomplete_batches++;
        row_batch(&a->bsize[hist_bin(r->b.num_ops)], r, true);
        for (int d = 0; d < DIR_COUNT; d++)
            if (r->dir_mask >> d & 1)
                a->dir[d].batches++;
        for (unsigned k = 0; k < NKIND * NKIND; k++)
            if (r->kind_mask >> k & 1)
                a->kind[k / NKIND][k % NKIND].batches++;
        for (int k = 0; k < NORDER; k++)
            if (r->order_mask >> k & 1)
                a->order[k].batches++;
        for (unsigned k = 0; k < NHIST; k++)
            if (r->osz_mask[k >> 6] >> (k & 63) & 1)
                a->osize[k].batches++;
        struct kent *c = ktab_get(&a->callers, r->host, (uint64_t)r->vpid, r->b.caller, &created);
        row_batch(&c->row, r, true);
        struct kent *s = ktab_get(&a->streams, r->host, (uint64_t)r->vpid, r->b.stream, &created);
        if (created)
            s->extra = r->b.stream_id;
        row_batch(&s->row, r, true);
    } else {
        a->orphan_ops += r->seen_ops;
    }
    struct kent *p = ktab_get(&a->procs, r->host, (uint64_t)r->vpid, 0, &created);
    row_batch(&p->row, r, hb);
    struct kent *t = ktab_get(&a->threads, r->host, (uint64_t)r->vpid, (uint64_t)r->vtid, &created);
    row_batch(&t->row, r, hb);
}

static void note_process(struct cbt_agg *a, const struct cbt_where *w)
{
    bool created;
    struct kent *p = ktab_get(&a->procs, w->host, (uint64_t)w->vpid, 0, &created);
    if (created && w->procname)
        p->label = strdup(w->procname);
}

/* pending table: open addressing, linear probing, backward-shift deletion */
static inline size_t pend_hash(uint32_t host, int64_t vpid, uint64_t id, size_t cap)
{
    uint64_t k[3] = {host, (uint64_t)vpid, id};
    return mix3(k) & (cap - 1);
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
    }
    r->vtid = w->vtid;
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

static void print_finding(struct cbt_agg *a, const struct pfinding *p)
{
    const struct cbt_batch_finding *f = &p->f;
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    const char *sev = cbt_severity_name(ri ? (unsigned)ri->severity : f->severity);
    char rule[32], caller[512], op[64] = "-", other[64] = "";
    if (ri)
        snprintf(rule, sizeof(rule), "%s", ri->name);
    else
        snprintf(rule, sizeof(rule), "rule_%u", f->rule);
    if (f->op != UINT64_MAX)
        snprintf(op, sizeof(op), "%" PRIu64, f->op);
    if (f->other_op != UINT64_MAX)
        snprintf(other, sizeof(other), " other_op=%" PRIu64, f->other_op);
    cbt_objmap_name(a->objs, p->w.host, p->w.vpid, f->caller, caller, sizeof(caller));
    const char *side = cbt_side_name(f->side);
    fprintf(a->fout,
            "%s %s: host=%s pid=%" PRId64 " tid=%" PRId64 " batch=%" PRIu64 " op=%s%s side=%s value=%" PRIu64
            " limit=%" PRIu64 " caller=%s: %s\n",
            sev ? sev : "?", rule, cbt_agg_host_name(a, p->w.host), p->w.vpid, p->w.vtid, f->batch_id, op, other,
            side ? side : "?", f->value, f->limit, caller, ri ? ri->text : "(a rule this tool does not know)");
}

void cbt_agg_flush_findings(struct cbt_agg *a)
{
    for (size_t i = 0; i < a->nfbuf; i++)
        print_finding(a, &a->fbuf[i]);
    a->nfbuf = 0;
}

void cbt_agg_set_finding_printer(struct cbt_agg *a, FILE *out)
{
    a->fout = out;
    a->fbuf = calloc(FINDING_BUF, sizeof(*a->fbuf));
}

void cbt_agg_finding(struct cbt_agg *a, const struct cbt_where *w, const struct cbt_batch_finding *f)
{
    note_process(a, w);
    unsigned k = f->rule < CBT_RULE_COUNT ? f->rule : CBT_RULE_COUNT;
    struct frule *fr = &a->rules[k];
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    fr->count++;
    a->findings++;
    bool earlier = !fr->seen || (w->has_ts && (!fr->has_ts || w->ts_ns < fr->first_ts));
    if (earlier) {
        fr->seen = true;
        fr->has_ts = w->has_ts;
        fr->first_ts = w->ts_ns;
        fr->first_batch = f->batch_id;
        fr->first_pid = w->vpid;
        fr->first_host = w->host;
        fr->severity = ri ? (uint8_t)ri->severity : f->severity;
    }
    if (a->fout) {
        if (a->fbuf) {
            if (a->nfbuf == FINDING_BUF)
                cbt_agg_flush_findings(a);
            a->fbuf[a->nfbuf].w = *w;
            a->fbuf[a->nfbuf].w.procname = NULL;
            a->fbuf[a->nfbuf].f = *f;
            a->nfbuf++;
        } else {
            struct pfinding p = {*w, *f};
            print_finding(a, &p);
        }
    }
}

uint64_t cbt_agg_findings_total(const struct cbt_agg *a) { return a->findings; }

void cbt_agg_read_stats(struct cbt_agg *a, const struct cbt_read_stats *s) { a->rs = *s; }

uint64_t cbt_agg_inline_disagreeing(const struct cbt_agg *a) { return a->rs.inline_disagreeing; }

static bool rules_differ(const struct cbt_agg *a)
{
    for (unsigned i = 0; i < a->rs.nrules_seen; i++)
        if (a->rs.rules_seen[i] != CBT_RULES_VERSION)
            return true;
    return a->rs.rules_more;
}

/* The `#` lines of what the reader itself found (nothing when there is nothing to say). */
static void print_read_stats(const struct cbt_agg *a, FILE *out)
{
    const struct cbt_read_stats *s = &a->rs;
    if (s->inline_checked || s->inline_disagreeing)
        fprintf(out, "# inline findings checked: %" PRIu64 ", disagreeing: %" PRIu64 "\n", s->inline_checked,
                s->inline_disagreeing);
    if (rules_differ(a)) {
        fprintf(out, "# rules: recorded with catalogue v");
        for (unsigned i = 0; i < s->nrules_seen; i++)
            fprintf(out, "%s%u", i ? ", v" : "", (unsigned)s->rules_seen[i]);
        fprintf(out, "%s, checked with v%u\n", s->rules_more ? ", ..." : "", (unsigned)CBT_RULES_VERSION);
    }
    if (s->pending)
        fprintf(out, "# pending batches: %" PRIu64 " (the process ended inside the driver call)\n", s->pending);
    if (s->malformed)
        fprintf(out, "# malformed batches: %" PRIu64 " (chunks that do not fit the event format: not validated)\n",
                s->malformed);
    if (s->incomplete)
        fprintf(out, "# incomplete batches: %" PRIu64 " (ops missing at the end of the trace: not validated)\n",
                s->incomplete);
    if (s->given_up)
        fprintf(out, "# batches not validated: %" PRIu64 " (over the reader's memory cap, CUBATCHTRACE_READ_MEMORY)\n",
                s->given_up);
    if (s->findings_dropped)
        fprintf(out, "# findings not counted: %" PRIu64 " (more than 1048576 in one batch)\n", s->findings_dropped);
}

/* The JSON members of the same: inline_findings, rules, read. */
static void read_stats_json(const struct cbt_agg *a, json_t *root)
{
    const struct cbt_read_stats *s = &a->rs;
    json_t *inl = json_object(), *rules = json_object(), *rec = json_array(), *rd = json_object();
    json_object_set_new(inl, "checked", json_integer((json_int_t)s->inline_checked));
    json_object_set_new(inl, "disagreeing", json_integer((json_int_t)s->inline_disagreeing));
    json_object_set_new(inl, "unchecked", json_integer((json_int_t)s->inline_unchecked));
    json_object_set_new(root, "inline_findings", inl);
    for (unsigned i = 0; i < s->nrules_seen; i++)
        json_array_append_new(rec, json_integer(s->rules_seen[i]));
    json_object_set_new(rules, "recorded", rec);
    json_object_set_new(rules, "checked", json_integer(CBT_RULES_VERSION));
    json_object_set_new(root, "rules", rules);
    json_object_set_new(rd, "pending_batches", json_integer((json_int_t)s->pending));
    json_object_set_new(rd, "malformed_batches", json_integer((json_int_t)s->malformed));
    json_object_set_new(rd, "incomplete_batches", json_integer((json_int_t)s->incomplete));
    json_object_set_new(rd, "not_validated_batches", json_integer((json_int_t)s->given_up));
    json_object_set_new(rd, "findings_not_counted", json_integer((json_int_t)s->findings_dropped));
    json_object_set_new(root, "read", rd);
}

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
    cbt_objmap_add(a->objs, w->host, w->vpid, baddr, memsz, path, is_pic);
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

void cbt_agg_finish(struct cbt_agg *a)
{
    if (a->finished)
        return;
    a->finished = true;
    for (size_t i = 0; i < a->cappend; i++)
        if (a->pend[i].used)
            finalize(a, &a->pend[i]);
    free(a->pend);
    a->pend = NULL;
    a->npend = a->cappend = 0;
}

/* ---------------------------------------------------------------- output */

enum measure { M_DRIVER, M_BYTES };

struct trow {
    char name[256];
    const struct row *r;
    uint64_t lo, hi; /* histograms */
    bool has_range;
};

struct table {
    const char *key;    /* JSON member */
    const char *title;
    enum measure m;
    struct trow *rows;
    size_t n, cap;
    bool omit_empty;
};

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

#define TOP_CALLERS 64

struct tables {
    struct table t[16];
    int n;
    struct row *merged; /* call-site rows after merging equal names */
    struct row caller_other, stream_other, proc_other, thread_other;
};

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

static void merge_row(struct row *into, const struct row *r)
{
    into->batches += r->batches;
    into->ops += r->ops;
    into->bytes += r->bytes;
    if (r->n) {
        if (into->n == 0 || r->min < into->min)
            into->min = r->min;
        if (r->max > into->max)
            into->max = r->max;
        into->n += r->n;
        into->sum += r->sum;
    }
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
    merge_row(other, &k->other.row);
    while (t->n - first > top)
        merge_row(other, t->rows[--t->n].r);
    trow_add(t, "other", other);
}

static void name_proc(struct cbt_agg *a, const struct kent *e, char *b, size_t l)
{
    snprintf(b, l, "%s pid %" PRId64 " %s", cbt_agg_host_name(a, (uint32_t)e->k[0]), (int64_t)e->k[1],
             e->label ? e->label : "");
}
static void name_thread(struct cbt_agg *a, const struct kent *e, char *b, size_t l)
{
    snprintf(b, l, "%s pid %" PRId64 " tid %" PRId64, cbt_agg_host_name(a, (uint32_t)e->k[0]), (int64_t)e->k[1],
             (int64_t)e->k[2]);
}
static void name_stream(struct cbt_agg *a, const struct kent *e, char *b, size_t l)
{
    snprintf(b, l, "%s pid %" PRId64 " stream 0x%" PRIx64 " (id %" PRIu64 ")", cbt_agg_host_name(a, (uint32_t)e->k[0]),
             (int64_t)e->k[1], e->k[2], e->extra);
}

static void build_tables(struct cbt_agg *a, struct tables *ts)
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
        trow_add(t, dir_names[i], &a->dir[i]);
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

    /* call sites: name each (host, vpid, address), merge equal names, keep the top ones */
    t = new_table(ts, "callers", "Top call sites (object+offset, function+offset when known)", M_DRIVER, true);
    {
        size_t n = a->callers.n, m = 0, top = a->by & CBT_BY_CALLER ? a->callers.limit : TOP_CALLERS;
        struct trow *tmp = calloc(n ? n : 1, sizeof(*tmp));
        ts->merged = calloc(n ? n : 1, sizeof(*ts->merged));
        for (size_t i = 0; tmp && ts->merged && i < n; i++) {
            const struct kent *e = &a->callers.ents[i];
            cbt_objmap_name(a->objs, (uint32_t)e->k[0], (int64_t)e->k[1], e->k[2], nm, sizeof(nm));
            size_t j;
            for (j = 0; j < m; j++)
                if (strcmp(tmp[j].name, nm) == 0)
                    break;
            if (j == m) {
                snprintf(tmp[m].name, sizeof(tmp[m].name), "%s", nm);
                tmp[m].r = &ts->merged[m];
                m++;
            }
            merge_row(&ts->merged[j], &e->row);
        }
        if (tmp)
            qsort(tmp, m, sizeof(*tmp), cmp_trow);
        for (size_t j = 0; tmp && j < m; j++) {
            if (j < top)
                trow_add(t, tmp[j].name, tmp[j].r);
            else
                merge_row(&ts->caller_other, tmp[j].r);
        }
        merge_row(&ts->caller_other, &a->callers.other.row);
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

/* ---------------------------------------------------------------- bytes by device */

struct drow {
    char name[300];
    const struct devrow *r;
    bool has_dev; /* false: "unknown" or "other" */
};

static int cmp_devrow(const void *x, const void *y)
{
    const struct devrow *a = ((const struct drow *)x)->r, *b = ((const struct drow *)y)->r;
    if (a->host != b->host)
        return a->host < b->host ? -1 : 1;
    return a->dev < b->dev ? -1 : a->dev > b->dev;
}

static bool devrow_empty(const struct devrow *r) { return r->ops_out == 0 && r->ops_in == 0; }

/* The rows of the device table: by host, then ordinal; "unknown" and "other" when not empty. */
static size_t dev_rows(const struct cbt_agg *a, struct drow rows[NDEV + 2])
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

static void print_devices_text(FILE *out, const struct cbt_agg *a)
{
    enum { NC = 9 };
    static const char *const head[NC] = {"Device",       "Ops out",        "Bytes out",   "Ops in",       "Bytes in",
                                         "Peer ops out", "Peer bytes out", "Peer ops in", "Peer bytes in"};
    struct drow rows[NDEV + 2];
    size_t n = dev_rows(a, rows);
    char cells[NDEV + 2][NC][32];
    size_t w[NC];
    for (int c = 0; c < NC; c++)
        w[c] = strlen(head[c]);
    for (size_t i = 0; i < n; i++) {
        const struct devrow *r = rows[i].r;
        const uint64_t v[NC - 1] = {r->ops_out,      r->bytes_out,   r->ops_in,      r->bytes_in,
                                    r->peer_ops_out, r->peer_bytes_out, r->peer_ops_in, r->peer_bytes_in};
        for (int c = 1; c < NC; c++) {
            snprintf(cells[i][c], sizeof(cells[i][c]), "%" PRIu64, v[c - 1]);
            if (strlen(cells[i][c]) > w[c])
                w[c] = strlen(cells[i][c]);
        }
        if (strlen(rows[i].name) > w[0])
            w[0] = strlen(rows[i].name);
    }
    fprintf(out, "\n# Bytes by device (device ordinals of device and managed memory operands)\n");
    fprintf(out, "# out: the device is the source; in: the destination (a copy within one device counts both);\n"
                 "# peer: the other side is device memory of another device\n");
    for (int c = 0; c < NC; c++)
        fprintf(out, c == 0 ? "%-*s" : " | %*s", (int)w[c], head[c]);
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%-*s", (int)w[0], rows[i].name);
        for (int c = 1; c < NC; c++)
            fprintf(out, " | %*s", (int)w[c], cells[i][c]);
        fputc('\n', out);
    }
    if (n == 0)
        fprintf(out, "(none)\n");
}

static json_t *devices_json(const struct cbt_agg *a)
{
    struct drow rows[NDEV + 2];
    size_t n = dev_rows(a, rows);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct devrow *r = rows[i].r;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(rows[i].name));
        json_object_set_new(o, "device", rows[i].has_dev ? json_integer(r->dev) : json_null());
        json_object_set_new(o, "host", rows[i].has_dev ? json_string(cbt_agg_host_name(a, r->host)) : json_null());
        json_object_set_new(o, "ops_out", json_integer((json_int_t)r->ops_out));
        json_object_set_new(o, "bytes_out", json_integer((json_int_t)r->bytes_out));
        json_object_set_new(o, "ops_in", json_integer((json_int_t)r->ops_in));
        json_object_set_new(o, "bytes_in", json_integer((json_int_t)r->bytes_in));
        json_object_set_new(o, "peer_ops_out", json_integer((json_int_t)r->peer_ops_out));
        json_object_set_new(o, "peer_bytes_out", json_integer((json_int_t)r->peer_bytes_out));
        json_object_set_new(o, "peer_ops_in", json_integer((json_int_t)r->peer_ops_in));
        json_object_set_new(o, "peer_bytes_in", json_integer((json_int_t)r->peer_bytes_in));
        json_array_append_new(arr, o);
    }
    return arr;
}

static void free_tables(struct tables *ts)
{
    for (int i = 0; i < ts->n; i++)
        free(ts->t[i].rows);
    free(ts->merged);
}

static uint64_t count_threads(const struct cbt_agg *a)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->threads.n; i++)
        n += a->threads.ents[i].row.batches || a->threads.ents[i].row.ops;
    return n;
}
static uint64_t count_procs(const struct cbt_agg *a)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->procs.n; i++)
        n += a->procs.ents[i].row.batches || a->procs.ents[i].row.ops;
    return n;
}

static const char *measure_text(enum measure m)
{
    return m == M_DRIVER ? "host time in the driver per batch (us)" : "bytes per op";
}

static void fmt_measure(char *b, size_t l, enum measure m, double v)
{
    if (m == M_DRIVER)
        snprintf(b, l, "%.3f", v / 1000.0);
    else
        snprintf(b, l, "%.0f", v);
}

static void print_table_text(FILE *out, const struct table *t, bool pct_bytes, uint64_t tot_bytes, uint64_t tot_ops)
{
    static const char *const head[8] = {"Name", "Batches", "Ops", "Bytes", "%", "Avg", "Min", "Max"};
    size_t w[8];
    for (int c = 0; c < 8; c++)
        w[c] = strlen(head[c]);
    char (*cells)[8][64] = calloc(t->n ? t->n : 1, sizeof(*cells));
    if (!cells)
        return;
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = t->rows[i].r;
        double pct = pct_bytes ? (tot_bytes ? 100.0 * (double)r->bytes / (double)tot_bytes : 0)
                               : (tot_ops ? 100.0 * (double)r->ops / (double)tot_ops : 0);
        snprintf(cells[i][1], 64, "%" PRIu64, r->batches);
        snprintf(cells[i][2], 64, "%" PRIu64, r->ops);
        snprintf(cells[i][3], 64, "%" PRIu64, r->bytes);
        snprintf(cells[i][4], 64, "%.2f", pct);
        if (r->n) {
            fmt_measure(cells[i][5], 64, t->m, (double)r->sum / (double)r->n);
            fmt_measure(cells[i][6], 64, t->m, (double)r->min);
            fmt_measure(cells[i][7], 64, t->m, (double)r->max);
        } else {
            strcpy(cells[i][5], "-");
            strcpy(cells[i][6], "-");
            strcpy(cells[i][7], "-");
        }
        for (int c = 1; c < 8; c++)
            if (strlen(cells[i][c]) > w[c])
                w[c] = strlen(cells[i][c]);
        if (strlen(t->rows[i].name) > w[0])
            w[0] = strlen(t->rows[i].name);
    }
    fprintf(out, "\n# %s\n", t->title);
    if (t->m == M_DRIVER)
        fprintf(out, "# Batches: batches; Ops, Bytes: their recorded ops and the bytes these move; %%: share of %s\n",
                pct_bytes ? "all bytes" : "all ops (no byte counts recorded)");
    else
        fprintf(out, "# Batches: batches with at least one such op; Ops, Bytes: such ops and the bytes they move; "
                     "%%: share of %s\n",
                pct_bytes ? "all bytes" : "all ops (no byte counts recorded)");
    fprintf(out, "# Avg/Min/Max: %s\n", measure_text(t->m));
    for (int c = 0; c < 8; c++)
        fprintf(out, c == 0 ? "%-*s" : " | %*s", (int)w[c], head[c]);
    fputc('\n', out);
    for (size_t i = 0; i < t->n; i++) {
        fprintf(out, "%-*s", (int)w[0], t->rows[i].name);
        for (int c = 1; c < 8; c++)
            fprintf(out, " | %*s", (int)w[c], cells[i][c]);
        fputc('\n', out);
    }
    if (t->n == 0)
        fprintf(out, "(none)\n");
    free(cells);
}

static void fmt_first(char *b, size_t l, const struct cbt_agg *a, const struct frule *f)
{
    snprintf(b, l, "batch %" PRIu64 " / pid %" PRId64 "%s%s", f->first_batch, f->first_pid,
             a->nhosts > 1 ? " on " : "", a->nhosts > 1 ? cbt_agg_host_name(a, f->first_host) : "");
}

void cbt_agg_print_text(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs)
{
    cbt_agg_finish(a);
    fprintf(out, "# discarded events: %" PRIu64 "%s\n", a->discarded_events,
            a->discarded_events ? " -- the tracer LOST events: every figure below undercounts" : "");
    fprintf(out, "# discarded packets: %" PRIu64 "%s\n", a->discarded_packets,
            a->discarded_packets ? " -- the tracer LOST packets: every figure below undercounts" : "");
    if (a->discarded_unknown)
        fprintf(out, "# discarded (count unknown): %" PRIu64 " times\n", a->discarded_unknown);
    fprintf(out, "# cubatchtrace summary of:");
    for (int i = 0; i < ninputs; i++)
        fprintf(out, " %s", inputs[i]);
    fprintf(out, "\n# processes: %" PRIu64 "%s\n", count_procs(a), a->procs.overflowed ? " (table full: at least)" : "");
    fprintf(out, "# threads: %" PRIu64 "%s\n", count_threads(a), a->threads.overflowed ? " (table full: at least)" : "");
    fprintf(out, "# batches: %" PRIu64 "\n", a->batches);
    fprintf(out, "# ops: %" PRIu64 "\n", a->ops);
    fprintf(out, "# bytes: %" PRIu64 "\n", a->bytes);
    fprintf(out, "# failed batches: %" PRIu64 " (forwarded, result != CUDA_SUCCESS)\n", a->failed);
    fprintf(out, "# refused batches: %" PRIu64 " (refused by the shim in strict mode)\n", a->refused);
    fprintf(out, "# no-driver batches: %" PRIu64 "\n", a->no_driver);
    fprintf(out, "# host time in the driver: %.3f ms\n", (double)a->driver_ns / 1e6);
    fprintf(out, "# findings: %" PRIu64 "\n", a->findings);
    print_read_stats(a, out);
    if (a->orphan_ops || a->incomplete_batches || a->pending_overflow)
        fprintf(out, "# unpaired: %" PRIu64 " ops whose batch event was not seen, %" PRIu64
                     " batches missing ops, %" PRIu64 " batches summarised before all their ops came\n",
                a->orphan_ops, a->incomplete_batches, a->pending_overflow);

    struct tables ts;
    build_tables(a, &ts);
    bool pct_bytes = a->bytes > 0;
    for (int i = 0; i < ts.n; i++) {
        print_table_text(out, &ts.t[i], pct_bytes, a->bytes, a->ops);
        if (strcmp(ts.t[i].key, "by_direction") == 0)
            print_devices_text(out, a);
    }

    /* findings */
    static const char *const fh[4] = {"Rule", "Severity", "Count", "First seen"};
    size_t w[4] = {4, 8, 5, 10};
    char cnt[CBT_RULE_COUNT + 1][32], first[CBT_RULE_COUNT + 1][300];
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++) {
        const struct frule *f = &a->rules[k];
        if (!f->count)
            continue;
        snprintf(cnt[k], sizeof(cnt[k]), "%" PRIu64, f->count);
        fmt_first(first[k], sizeof(first[k]), a, f);
        const struct cbt_rule_info *ri = cbt_rule(k);
        size_t l = ri ? strlen(ri->name) : 12;
        if (l > w[0]) w[0] = l;
        if (strlen(cnt[k]) > w[2]) w[2] = strlen(cnt[k]);
        if (strlen(first[k]) > w[3]) w[3] = strlen(first[k]);
    }
    fprintf(out, "\n# Findings by rule (the validator's, run on each batch as the trace is read; `cubatchtrace rules` explains each)\n");
    fprintf(out, "# First seen: the batch id and process of the earliest occurrence\n");
    fprintf(out, "%-*s | %-*s | %*s | %s\n", (int)w[0], fh[0], (int)w[1], fh[1], (int)w[2], fh[2], fh[3]);
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++) {
        const struct frule *f = &a->rules[k];
        if (!f->count)
            continue;
        const struct cbt_rule_info *ri = cbt_rule(k);
        const char *sev = cbt_severity_name(f->severity);
        fprintf(out, "%-*s | %-*s | %*s | %s\n", (int)w[0], ri ? ri->name : "(unknown rule)", (int)w[1],
                sev ? sev : "?", (int)w[2], cnt[k], first[k]);
    }
    if (!a->findings)
        fprintf(out, "(none)\n");
    free_tables(&ts);
}

/* ---------------------------------------------------------------- JSON */

static json_t *jrow(const struct trow *tr, bool pct_bytes, uint64_t tot_bytes, uint64_t tot_ops)
{
    const struct row *r = tr->r;
    double pct = pct_bytes ? (tot_bytes ? 100.0 * (double)r->bytes / (double)tot_bytes : 0)
                           : (tot_ops ? 100.0 * (double)r->ops / (double)tot_ops : 0);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(tr->name));
    if (tr->has_range) {
        json_object_set_new(o, "low", json_integer((json_int_t)tr->lo));
        json_object_set_new(o, "high", json_integer((json_int_t)(tr->hi > INT64_MAX ? INT64_MAX : tr->hi)));
    }
    json_object_set_new(o, "batches", json_integer((json_int_t)r->batches));
    json_object_set_new(o, "ops", json_integer((json_int_t)r->ops));
    json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
    json_object_set_new(o, "percent", json_real(pct));
    if (r->n) {
        json_object_set_new(o, "avg", json_real((double)r->sum / (double)r->n));
        json_object_set_new(o, "min", json_integer((json_int_t)r->min));
        json_object_set_new(o, "max", json_integer((json_int_t)r->max));
    } else {
        json_object_set_new(o, "avg", json_null());
        json_object_set_new(o, "min", json_null());
        json_object_set_new(o, "max", json_null());
    }
    return o;
}

#define JI(v) json_integer((json_int_t)(v))

int cbt_agg_print_json(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs)
{
    cbt_agg_finish(a);
    json_t *root = json_object();
    json_t *in = json_array();
    for (int i = 0; i < ninputs; i++)
        json_array_append_new(in, json_string(inputs[i]));
    json_object_set_new(root, "schema", json_string("cubatchtrace-summary"));
    json_object_set_new(root, "schema_version", JI(1));
    json_object_set_new(root, "discarded_events", JI(a->discarded_events));
    json_object_set_new(root, "discarded_packets", JI(a->discarded_packets));
    json_object_set_new(root, "inputs", in);
    json_t *hosts = json_array();
    for (uint32_t i = 0; i < a->nhosts; i++)
        json_array_append_new(hosts, json_string(a->hosts[i]));
    json_object_set_new(root, "hosts", hosts);
    json_object_set_new(root, "processes", JI(count_procs(a)));
    json_object_set_new(root, "threads", JI(count_threads(a)));
    json_object_set_new(root, "batches", JI(a->batches));
    json_object_set_new(root, "ops", JI(a->ops));
    json_object_set_new(root, "bytes", JI(a->bytes));
    json_object_set_new(root, "failed_batches", JI(a->failed));
    json_object_set_new(root, "refused_batches", JI(a->refused));
    json_object_set_new(root, "no_driver_batches", JI(a->no_driver));
    json_object_set_new(root, "driver_ns", JI(a->driver_ns));
    json_t *unp = json_object();
    json_object_set_new(unp, "orphan_ops", JI(a->orphan_ops));
    json_object_set_new(unp, "incomplete_batches", JI(a->incomplete_batches));
    json_object_set_new(unp, "pending_overflow", JI(a->pending_overflow));
    json_object_set_new(unp, "tables_full", json_boolean(a->procs.overflowed || a->threads.overflowed ||
                                                         a->streams.overflowed || a->callers.overflowed ||
                                                         a->dev_overflowed));
    json_object_set_new(root, "unpaired", unp);
    read_stats_json(a, root);

    struct tables ts;
    build_tables(a, &ts);
    bool pct_bytes = a->bytes > 0;
    json_object_set_new(root, "percent_of", json_string(pct_bytes ? "bytes" : "ops"));
    for (int i = 0; i < ts.n; i++) {
        json_t *arr = json_array();
        for (size_t j = 0; j < ts.t[i].n; j++)
            json_array_append_new(arr, jrow(&ts.t[i].rows[j], pct_bytes, a->bytes, a->ops));
        json_object_set_new(root, ts.t[i].key, arr);
        if (strcmp(ts.t[i].key, "by_direction") == 0)
            json_object_set_new(root, "by_device", devices_json(a));
    }
    json_t *fa = json_array();
    for (unsigned k = 0; k <= CBT_RULE_COUNT; k++) {
        const struct frule *f = &a->rules[k];
        if (!f->count)
            continue;
        const struct cbt_rule_info *ri = cbt_rule(k);
        const char *sev = cbt_severity_name(f->severity);
        json_t *o = json_object();
        json_object_set_new(o, "rule", json_string(ri ? ri->name : "unknown"));
        json_object_set_new(o, "severity", json_string(sev ? sev : "unknown"));
        json_object_set_new(o, "count", JI(f->count));
        json_t *fs = json_object();
        json_object_set_new(fs, "batch", JI(f->first_batch));
        json_object_set_new(fs, "pid", JI(f->first_pid));
        json_object_set_new(fs, "host", json_string(cbt_agg_host_name(a, f->first_host)));
        json_object_set_new(o, "first_seen", fs);
        json_array_append_new(fa, o);
    }
    json_object_set_new(root, "findings", fa);
    free_tables(&ts);
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(root);
    return rc;
}

void cbt_agg_lost(const struct cbt_agg *a, uint64_t *events, uint64_t *packets, uint64_t *uncounted)
{
    *events = a->discarded_events;
    *packets = a->discarded_packets;
    *uncounted = a->discarded_unknown;
}
