/* SPDX-License-Identifier: MIT */
/*
 * The compact record (formats 3 and 4, <cubatchtrace/events.h>) decoded into the
 * shape assemble.c puts back together: for each writing thread (the key:
 * image tag << 32 | thread id, on its host) the operand dictionary, the
 * streams it described and the refs of its previous single-chunk batch;
 * each batch handed over as a format-2 header and chunks of at most
 * CBT_EV_OPS_PER_EVENT ops with their distinct operands.  A 1D batch's
 * copies become ops exactly as the shim makes them (cbt_copy_op, each with
 * the attribute attrsIdxs gives it).
 *
 * An operand whose dictionary entry never came (a session that started
 * late, less than a refresh ago) reads as unknown memory (kind 0): the
 * rules that need its kind stay silent, as they do for memory the shim
 * could not learn.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/catalog.h>

#include "read/compact.h"
#include "base/util.h"

#define CHUNK CBT_EV_OPS_PER_EVENT /* ops per chunk handed to assemble.c */
struct stream_desc {
    uint64_t handle, id, context;
    int32_t device, device_count;
    uint16_t rules;
    bool used;
};

struct thread {
    bool used;
    uint32_t host;
    uint64_t key;
    struct cbt_operand_info *dict;    /* by index, as the validator reads it; kind 0 where none came */
    uint32_t ndict;
    struct stream_desc streams[CBT_EV_STREAMS];
    uint16_t *prev_refs;              /* the previous single-chunk batch's refs */
    uint64_t n_prev, cap_prev;
    /* the 1D batch being read: its attributes (from ca, then c) */
    uint64_t cur_id;
    bool cur_is1d;
    uint8_t *attrs;                   /* CUmemcpyAttributes, 24 bytes each */
    uint64_t *idxs;
    uint64_t nattrs, cap_attrs, cap_idxs;
    uint64_t ops_expected, ops_seen;  /* of the current batch */
};

struct cbt_compact {
    struct cbt_asm *as;
    struct thread *t;
    uint64_t nt, cap; /* open addressing, cap a power of two */
    uint64_t last;    /* the slot of the thread of the latest b or c event */
    /* the chunk handed over, rebuilt for each: its ops' operands, decoded */
    struct cbt_operand_info src[CHUNK], dst[CHUNK];
    uint16_t *refs;
    uint64_t cap_refs;
    CUDA_MEMCPY3D_BATCH_OP *copies;
    uint64_t cap_copies;
};

struct cbt_compact *cbt_compact_new(struct cbt_asm *as)
{
    struct cbt_compact *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->as = as;
    c->cap = 64;
    if (!(c->t = calloc(c->cap, sizeof *c->t))) {
        free(c);
        return NULL;
    }
    return c;
}

static void thread_free(struct thread *t)
{
    free(t->dict);
    free(t->prev_refs);
    free(t->attrs);
    free(t->idxs);
}

void cbt_compact_free(struct cbt_compact *c)
{
    if (!c)
        return;
    for (uint64_t i = 0; i < c->cap; i++)
        if (c->t[i].used)
            thread_free(&c->t[i]);
    free(c->t);
    free(c->refs);
    free(c->copies);
    free(c);
}


static uint64_t slot_of(uint64_t cap, uint32_t host, uint64_t key)
{
    return ((key ^ (uint64_t)host << 48) * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
}

/* The thread state of (host, key), made when first met; NULL out of memory. */
static struct thread *thread_of(struct cbt_compact *c, uint32_t host, uint64_t key)
{
    uint64_t i = slot_of(c->cap, host, key);
    while (c->t[i].used) {
        if (c->t[i].key == key && c->t[i].host == host)
            return &c->t[i];
        i = (i + 1) & (c->cap - 1);
    }
    if (2 * (c->nt + 1) > c->cap) {
        uint64_t cap = 2 * c->cap;
        struct thread *t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (uint64_t k = 0; k < c->cap; k++) {
            if (!c->t[k].used)
                continue;
            uint64_t j = slot_of(cap, c->t[k].host, c->t[k].key);
            while (t[j].used)
                j = (j + 1) & (cap - 1);
            t[j] = c->t[k];
        }
        free(c->t);
        c->t = t;
        c->cap = cap;
        return thread_of(c, host, key);
    }
    c->t[i] = (struct thread){.used = true, .host = host, .key = key};
    c->nt++;
    return &c->t[i];
}

static uint64_t key_of(uint64_t id, uint64_t w) { return (id & 0xffffffff00000000ull) | (uint32_t)CBT_W_TID(w); }

/* An operand as the validator reads it (what assemble.c makes of a recorded one). */
static struct cbt_operand_info operand_info(const struct cbt_ev_operand *e)
{
    return (struct cbt_operand_info){.kind = e->kind, .device = e->device, .alloc_base = e->alloc_base,
                                     .alloc_size = e->alloc_size, .array_width = e->array_width,
                                     .array_height = e->array_height, .array_depth = e->array_depth,
                                     .elem_size = e->elem_size};
}

void cbt_compact_operand(struct cbt_compact *c, const struct cbt_where *w, uint64_t key, uint64_t index,
                         const uint64_t info[CBT_EV_OPERAND_WORDS])
{
    struct thread *t = thread_of(c, w->host, key);
    if (!t || index >= 0xffff)
        return;
    if (index >= t->ndict) {
        uint64_t n = t->ndict ? t->ndict : CBT_EV_DICT;
        while (n <= index)
            n *= 2;
        struct cbt_operand_info *d = realloc(t->dict, (size_t)n * sizeof *d);
        if (!d)
            return;
        memset(d + t->ndict, 0, (size_t)(n - t->ndict) * sizeof *d);
        t->dict = d;
        t->ndict = (uint32_t)n;
    }
    struct cbt_ev_operand o;
    memcpy(&o, info, sizeof o);
    t->dict[index] = operand_info(&o);
}

void cbt_compact_stream(struct cbt_compact *c, const struct cbt_where *w, const struct cbt_ev_stream *e)
{
    struct thread *t = thread_of(c, w->host, e->key);
    if (!t || e->index >= CBT_EV_STREAMS)
        return;
    t->streams[e->index] = (struct stream_desc){.handle = e->handle, .id = e->stream_id, .context = e->context,
                                                .device = e->device, .device_count = e->device_count,
                                                .rules = e->rules, .used = true};
}

/* ---- the header ---- */

struct hdr_reader {
    const uint8_t *p, *end;
};

static uint64_t unzigzag(uint64_t v) { return v >> 1 ^ (uint64_t)-(int64_t)(v & 1); }

static uint64_t next_varint(struct hdr_reader *h)
{
    uint64_t v = 0;
    for (unsigned shift = 0; h->p < h->end && shift < 64; shift += 7) {
        uint8_t b = *h->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static void header_of(const struct cbt_compact_ev *e, struct thread *t, bool d1, struct cbt_ev_batch *h,
                      struct cbt_ev_batch1d *d, uint64_t *recorded)
{
    struct hdr_reader r = {e->hdr, e->hdr ? e->hdr + e->hdr_len : NULL}; /* no hdr: NULL + 0 is undefined */
    memset(h, 0, sizeof *h);
    unsigned cap = CBT_W_CAPTURE(e->w);
    *h = (struct cbt_ev_batch){
        .format = e->tail ? CBT_EV_FORMAT : CBT_EV_FORMAT3, .batch_id = e->id, .api = (uint8_t)CBT_W_API(e->w), .door = (uint8_t)CBT_W_DOOR(e->w),
        .outcome = (uint8_t)CBT_W_OUTCOME(e->w), .result = CBT_W_RESULT(e->w),
        .capture = cap <= CBT_CAPTURE_INVALIDATED ? (uint8_t)cap : CBT_CAPTURE_UNKNOWN,
        .driver_ns = e->driver_ns, .caller = e->caller, .tid = CBT_W_TID(e->w), .device = -1,
        .validated = (e->w & CBT_W_VALIDATED) != 0,
    };
    uint8_t mask = r.p < r.end ? *r.p++ : 0;
    h->num_ops = next_varint(&r);
    h->op_list = next_varint(&r);
    uint64_t si = next_varint(&r);
    if (d1) {
        memset(d, 0, sizeof *d);
        d->srcs = h->op_list + unzigzag(next_varint(&r));
        d->sizes = h->op_list + unzigzag(next_varint(&r));
        d->attrs = h->op_list + unzigzag(next_varint(&r));
        d->attrs_idxs = h->op_list + unzigzag(next_varint(&r));
    }
    *recorded = mask & CBT_HDR_RECORDED ? next_varint(&r) : h->num_ops;
    if (d1) {
        d->num_attrs = mask & CBT_HDR_NUM_ATTRS ? next_varint(&r) : 1;
        d->attrs_recorded = mask & CBT_HDR_ATTRS_READ ? next_varint(&r) : d->num_attrs;
        d->abi = (uint8_t)(mask & CBT_HDR_FLAGS ? next_varint(&r) : 0);
    } else {
        h->flags = mask & CBT_HDR_FLAGS ? next_varint(&r) : 0;
    }
    h->fail_idx = mask & CBT_HDR_FAIL_IDX ? next_varint(&r) : UINT64_MAX;
    h->findings = (uint32_t)(mask & CBT_HDR_FINDINGS ? next_varint(&r) : 0);
    if (mask & CBT_HDR_RESULT)
        h->result = (uint32_t)next_varint(&r);
    h->ops_recorded = *recorded;
    /* the stream, as the thread last described it under that index (none came: unknown) */
    h->device_count = -1;
    const struct stream_desc *s = si < CBT_EV_STREAMS ? &t->streams[si] : NULL;
    if (s && s->used) {
        h->stream = s->handle;
        h->stream_id = s->id;
        h->context = s->context;
        h->device = s->device;
        h->device_count = s->device_count;
        h->rules = s->rules;
    }
}

/* ---- chunks ---- */

/* The refs of ops [first, first + n) of the batch, into c->refs; NULL when
 * the event carries none it can use (the operands are then unknown). */
static const uint16_t *refs_of(struct cbt_compact *c, struct thread *t, const struct cbt_compact_ev *e, uint64_t n,
                               bool first_event, uint64_t recorded)
{
    if (!cbt_grow((void **)&c->refs, &c->cap_refs, 2 * n + 1, sizeof *c->refs))
        return NULL;
    if (first_event && (e->w & CBT_W_SAME_REFS)) {
        if (t->n_prev != n)
            return NULL;
        if (n) /* memcpy from NULL is undefined, even of 0 bytes */
            memcpy(c->refs, t->prev_refs, 2 * n * sizeof *c->refs);
        return c->refs;
    }
    if (e->refs_len != 4 * n)
        return NULL;
    if (n)
        memcpy(c->refs, e->refs, 2 * n * sizeof *c->refs);
    if (first_event && n > 0 && n == recorded) {
        /* the writer's previous single-chunk batch, for the next that repeats it */
        if (cbt_grow((void **)&t->prev_refs, &t->cap_prev, 2 * n + 1, sizeof *t->prev_refs)) {
            memcpy(t->prev_refs, e->refs, 2 * n * sizeof *t->prev_refs);
            t->n_prev = n;
        }
    }
    return c->refs;
}

/* Hand ops [0, n) (the batch's ops [first, first + n)) to assemble.c in
 * chunks of CHUNK, decoded: each op with its operands (unknown, kind 0 and
 * device -1, where the refs or the dictionary entry are missing); the first
 * of the batch with its header. */
static void hand_over(struct cbt_compact *c, const struct cbt_where *w, struct thread *t, uint64_t id,
                      const uint8_t *ops, uint64_t n, uint64_t first, const uint16_t *refs,
                      const struct cbt_ev_batch *h, const struct cbt_ev_batch1d *d, const struct cbt_attr_bytes *a)
{
    static const struct cbt_operand_info unknown = {.device = -1};
    const struct cbt_operand_info *dict = t->dict;
    uint32_t nd = t->ndict;
    uint64_t done = 0;
    do {
        uint64_t m = n - done < CHUNK ? n - done : CHUNK;
        if (refs) {
            const uint16_t *r = refs + 2 * done;
            for (uint64_t i = 0; i < m; i++) {
                c->src[i] = r[2 * i] < nd ? dict[r[2 * i]] : unknown;
                c->dst[i] = r[2 * i + 1] < nd ? dict[r[2 * i + 1]] : unknown;
            }
        } else {
            for (uint64_t i = 0; i < m; i++)
                c->src[i] = c->dst[i] = unknown;
        }
        struct cbt_chunk_bytes ch = {
            .first = first + done, .ops = ops ? ops + done * CBT_EV_OP_SIZE : NULL, .ops_len = m * CBT_EV_OP_SIZE,
            .src = c->src, .dst = c->dst,
        };
        if (h && done == 0) {
            if (d)
                cbt_asm_header1d(c->as, w, h, d, a, &ch);
            else
                cbt_asm_header(c->as, w, h, &ch);
        } else {
            cbt_asm_chunk(c->as, w, id, &ch);
        }
        done += m;
    } while (done < n);
}

/* Copies [0, n) as ops, each with its attribute, as the shim makes them. */
static const uint8_t *copies_as_ops(struct cbt_compact *c, const struct thread *t, const struct cbt_compact_ev *e,
                                    uint64_t n, uint64_t first)
{
    if (e->srcs_len / 8 < n || e->sizes_len / 8 < n)
        return NULL; /* n is the dsts' count: a damaged event's srcs or sizes may be shorter */
    if (!cbt_grow((void **)&c->copies, &c->cap_copies, n + 1, sizeof *c->copies))
        return NULL;
    uint64_t a = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t at = first + i;
        while (a + 1 < t->nattrs && t->idxs[a + 1] <= at)
            a++;
        uint64_t dst, src, size;
        memcpy(&dst, e->dsts + 8 * i, 8);
        memcpy(&src, e->srcs + 8 * i, 8);
        memcpy(&size, e->sizes + 8 * i, 8);
        CUmemcpyAttributes attr;
        if (t->nattrs)
            memcpy(&attr, t->attrs + a * sizeof attr, sizeof attr);
        else
            memset(&attr, 0, sizeof attr);
        cbt_copy_op(&c->copies[i], (CUdeviceptr)dst, (CUdeviceptr)src, (size_t)size, &attr);
    }
    return (const uint8_t *)c->copies;
}

static bool keep_attrs(struct thread *t, uint64_t first, const uint8_t *words, uint64_t nw, const uint8_t *idxs,
                       uint64_t ni)
{
    uint64_t n = nw / (8 * CBT_EV_ATTR_WORDS);
    if (ni / 8 < n)
        n = ni / 8;
    if (first > t->nattrs)
        return false; /* a gap (an event lost or damaged): what lies before first was never read */
    if (!cbt_grow((void **)&t->attrs, &t->cap_attrs, (first + n) * sizeof(CUmemcpyAttributes) + 1, 1))
        return false;
    if (!cbt_grow((void **)&t->idxs, &t->cap_idxs, first + n + 1, sizeof *t->idxs))
        return false;
    if (n) { /* words and idxs may be NULL: memcpy from NULL is undefined, even of 0 bytes */
        memcpy(t->attrs + first * sizeof(CUmemcpyAttributes), words, n * sizeof(CUmemcpyAttributes));
        memcpy(t->idxs + first, idxs, n * 8);
    }
    if (first + n > t->nattrs)
        t->nattrs = first + n;
    return true;
}

void cbt_compact_attrs(struct cbt_compact *c, const struct cbt_where *w, const struct cbt_compact_ev *e)
{
    (void)w;
    /* the ca events come before their batch's c event: kept under its id */
    uint64_t key = e->id & 0xffffffff00000000ull;
    (void)key;
    struct thread *t = NULL;
    /* a ca event carries no thread id: the thread is the one whose next c
     * event has this id; kept in a slot of its own until then */
    t = thread_of(c, w->host, e->id | 0x80000000u /* never a tid slot of a real key */);
    if (!t)
        return;
    if (t->cur_id != e->id) {
        t->cur_id = e->id;
        t->nattrs = 0;
    }
    keep_attrs(t, e->first, e->attrs, e->attrs_len, e->attr_idxs, e->attr_idxs_len);
}

/* Up to `count` elements of `size` bytes from [*p, end): *at and *len
 * (bytes) set, *p moved past them. */
static void take(const uint8_t **p, const uint8_t *end, uint64_t count, uint64_t size, const uint8_t **at,
                 uint64_t *len)
{
    uint64_t have = (uint64_t)(end - *p);
    *at = *p;
    *len = count > have / size ? have / size * size : count * size;
    *p += *len;
}

/* Format 4's t after hdr (from p, a whole word after it), split as format
 * 3's fields had it: in b and c the ops, or the attributes, their attrsIdxs
 * and the copy arrays (as many as the header says were read); in cs the
 * attrsIdxs of the attributes it carries; then the refs of the ops or
 * copies the event carries (none when fewer bytes remain). */
static void split_tail(struct cbt_compact_ev *e, bool d1, const uint8_t *p, const uint8_t *end, uint64_t recorded,
                       uint64_t attrs_read)
{
    if (e->tail_inline && d1) {
        take(&p, end, attrs_read, CBT_EV_ATTR_SIZE, &e->attrs, &e->attrs_len);
        take(&p, end, e->attrs_len / CBT_EV_ATTR_SIZE, 8, &e->attr_idxs, &e->attr_idxs_len);
        take(&p, end, recorded, 8, &e->dsts, &e->dsts_len);
        take(&p, end, e->dsts_len / 8, 8, &e->srcs, &e->srcs_len);
        take(&p, end, e->dsts_len / 8, 8, &e->sizes, &e->sizes_len);
    } else if (e->tail_inline) {
        take(&p, end, recorded, CBT_EV_OP_SIZE, &e->ops, &e->ops_len);
    } else if (d1) {
        take(&p, end, e->attrs_len / CBT_EV_ATTR_SIZE, 8, &e->attr_idxs, &e->attr_idxs_len);
    }
    uint64_t n = d1 ? e->dsts_len / 8 : e->ops_len / CBT_EV_OP_SIZE;
    e->refs = p;
    e->refs_len = (uint64_t)(end - p) >= 4 * n ? 4 * n : 0;
}

void cbt_compact_batch(struct cbt_compact *c, struct cbt_where *w, bool d1, const struct cbt_compact_ev *ev)
{
    struct cbt_compact_ev split = *ev;
    const struct cbt_compact_ev *e = &split;
    if (ev->tail) /* hdr is t's bytes after h: how much of it is the header */
        split.hdr_len = cbt_ev_hdr_len(ev->hdr, (unsigned long)ev->hdr_len, d1);
    struct thread *t = thread_of(c, w->host, key_of(e->id, e->w));
    if (!t)
        return;
    struct cbt_ev_batch h;
    struct cbt_ev_batch1d d;
    uint64_t recorded;
    header_of(e, t, d1, &h, &d, &recorded);
    if (ev->tail && ev->hdr_len) { /* an empty t has no tail (and hdr may be NULL: no arithmetic on it) */
        uint64_t at = (split.hdr_len + 7) / 8 * 8;
        split_tail(&split, d1, ev->hdr + (at < ev->hdr_len ? at : ev->hdr_len), ev->hdr + ev->hdr_len, recorded,
                   d1 ? d.attrs_recorded : 0);
    }
    w->vtid = h.tid;
    if (ev->tail && ev->hdr_len && (ev->hdr[0] & CBT_HDR_GPU))
        cbt_asm_gpu_expect(c->as, w, e->id); /* its gpu_time event follows */
    uint64_t n = d1 ? e->dsts_len / 8 : e->ops_len / CBT_EV_OP_SIZE;
    c->last = (uint64_t)(t - c->t);
    t->cur_id = e->id;
    t->cur_is1d = d1;
    t->ops_expected = recorded;
    t->ops_seen = n;
    const uint16_t *refs = refs_of(c, t, e, n, true, recorded);
    if (!d1) {
        hand_over(c, w, t, e->id, e->ops, n, 0, refs, &h, NULL, NULL);
        return;
    }
    /* the attributes: in this event, or in ca events before it */
    t->nattrs = 0;
    if (e->attrs_len) {
        keep_attrs(t, 0, e->attrs, e->attrs_len, e->attr_idxs, e->attr_idxs_len);
    } else if (d.attrs_recorded) {
        struct thread *pa = thread_of(c, w->host, e->id | 0x80000000u);
        /* that may have made a slot and moved every thread: this one again */
        if (!(t = thread_of(c, w->host, key_of(e->id, e->w))))
            return;
        c->last = (uint64_t)(t - c->t);
        if (pa && pa->cur_id == e->id && pa->nattrs)
            keep_attrs(t, 0, pa->attrs, pa->nattrs * sizeof(CUmemcpyAttributes), (const uint8_t *)pa->idxs,
                       pa->nattrs * 8);
        if (pa)
            pa->cur_id = 0;
    }
    /* as format 2 had them: the first CBT_EV_ATTRS_IN_HEADER with the header, the rest after */
    uint64_t na = t->nattrs, inh = na < CBT_EV_ATTRS_IN_HEADER ? na : CBT_EV_ATTRS_IN_HEADER;
    struct cbt_attr_bytes a = {.first = 0, .words = t->attrs, .words_len = inh * sizeof(CUmemcpyAttributes),
                               .idxs = (const uint8_t *)t->idxs, .idxs_len = inh * 8};
    static const uint8_t none[1];
    if (!a.words)
        a.words = a.idxs = none;
    const uint8_t *ops = copies_as_ops(c, t, e, n, 0);
    if (!ops)
        return;
    hand_over(c, w, t, e->id, ops, n, 0, refs, &h, &d, &a);
    for (uint64_t k = inh; k < na; k += CBT_EV_ATTRS_PER_EVENT) {
        uint64_t m = na - k < CBT_EV_ATTRS_PER_EVENT ? na - k : CBT_EV_ATTRS_PER_EVENT;
        struct cbt_attr_bytes more = {.first = k, .words = t->attrs + k * sizeof(CUmemcpyAttributes),
                                      .words_len = m * sizeof(CUmemcpyAttributes),
                                      .idxs = (const uint8_t *)(t->idxs + k), .idxs_len = m * 8};
        cbt_asm_attrs(c->as, w, e->id, &more);
    }
}

void cbt_compact_chunk(struct cbt_compact *c, const struct cbt_where *w, bool d1, const struct cbt_compact_ev *e)
{
    /* a further chunk: its thread is the one whose batch has this id; mostly
     * that of the latest batch (a process writes one batch at a time), else
     * searched among all */
    struct thread *t = NULL;
    const struct thread *l = c->last < c->cap ? &c->t[c->last] : NULL;
    if (l && l->used && l->host == w->host && l->cur_id == e->id && l->cur_is1d == d1)
        t = &c->t[c->last];
    for (uint64_t i = slot_of(c->cap, w->host, 0), n = 0; !t && n < c->cap; n++, i = (i + 1) & (c->cap - 1))
        if (c->t[i].used && c->t[i].host == w->host && c->t[i].cur_id == e->id && c->t[i].cur_is1d == d1) {
            t = &c->t[i];
            break;
        }
    uint64_t n = d1 ? e->dsts_len / 8 : e->ops_len / CBT_EV_OP_SIZE;
    static struct thread none = {.used = true};
    const uint16_t *refs = NULL;
    if (t && e->refs_len == 4 * n && cbt_grow((void **)&c->refs, &c->cap_refs, 2 * n + 1, sizeof *c->refs)) {
        if (n) /* e->refs may be NULL: memcpy from NULL is undefined, even of 0 bytes */
            memcpy(c->refs, e->refs, 4 * n);
        refs = c->refs;
    }
    if (!t)
        t = &none; /* its batch event never came: assemble.c says so */
    const uint8_t *ops = d1 ? copies_as_ops(c, t, e, n, e->first) : e->ops;
    if (!ops)
        return;
    hand_over(c, w, t, e->id, ops, n, e->first, refs, NULL, NULL, NULL);
}
