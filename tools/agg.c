/* SPDX-License-Identifier: MIT */
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>

#include "agg_internal.h"
#include "callsite.h"

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

/* ---------------------------------------------------------------- keyed tables */

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
void cbt_agg_on_finding(struct cbt_agg *a, cbt_finding_fn fn, void *ctx)
{
    a->on_finding = fn;
    a->on_finding_ctx = ctx;
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
    if (a->on_finding)
        a->on_finding(a->on_finding_ctx, w, f);
}

uint64_t cbt_agg_findings_total(const struct cbt_agg *a) { return a->findings; }

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
    cbt_objmap_add(a->objs, w->host, w->vpid, baddr, memsz, path, is_pic);
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

void cbt_agg_lost(const struct cbt_agg *a, uint64_t *events, uint64_t *packets, uint64_t *uncounted)
{
    *events = a->discarded_events;
    *packets = a->discarded_packets;
    *uncounted = a->discarded_unknown;
}
