/* SPDX-License-Identifier: MIT */
/*
 * Batches put back together from their events, then checked.
 *
 * A batch arrives as its header (format 2's cubatchtrace:batch, or a
 * compact record's b, bs, c or cs event decoded into that shape by compact.c, with the first
 * chunk of ops), further chunks (batch_ops, or bo/co decoded), maybe a
 * batch_end (outcome "pending") and the findings of the calling thread's
 * validator (finding).  Traces are read round-robin, so across traces these
 * come in any order.  A batch whose header holds
 * every op and needs nothing else goes straight through; any other waits in
 * a table keyed by (host, vpid, batch_id) until it is whole: its chunks
 * cover ops_recorded ops, its batch_end came when it was pending, and the
 * inline findings its header announces came.
 *
 * A whole batch is validated with the validator of the shim (validate/),
 * compared with its inline findings, and handed to the reader's consumer (agg.c, in the tool) and to the
 * optional batch callback (show).
 *
 * Memory is bounded: the ops held by waiting batches are counted and, past
 * CUBATCHTRACE_READ_MEMORY MiB, the oldest waiting batch is given up: what
 * it holds is summarised (not validated), and its later ops go straight to
 * agg.c.  No allocation per op: chunks are decoded into reused scratch
 * arrays and waiting batches are recycled with their arrays.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/assemble.h"
#include "read/gpujoin.h"
#include "base/util.h"

_Static_assert(sizeof(CUDA_MEMCPY3D_BATCH_OP) == CBT_EV_OP_SIZE, "CUDA_MEMCPY3D_BATCH_OP is not the recorded op");
_Static_assert(sizeof(struct cbt_ev_operand) == 56, "struct cbt_ev_operand is not the recorded operand");

#define OP_HELD (sizeof(CUDA_MEMCPY3D_BATCH_OP) + 2 * sizeof(struct cbt_operand_info))
#define MEMORY_DEFAULT_MIB 1024
#define FINDINGS_MAX (1u << 20)  /* read-time findings listed per batch */
#define INLINE_MAX (1u << 20)    /* inline findings kept per batch */
#define FREE_MAX 64              /* waiting records kept for reuse */
#define KEEP_ARRAYS_OPS 4096     /* a recycled record keeps arrays up to this many ops */
#define STREAMING_MAX (1u << 20) /* given-up batches remembered until their last ops come */
#define DONE_SLOTS 4096          /* batches handed over, remembered to recognise late duplicates */

const char *cbt_batch_state_name(enum cbt_batch_state s)
{
    switch (s) {
    case CBT_BS_COMPLETE: return "complete";
    case CBT_BS_PENDING: return "pending";
    case CBT_BS_INCOMPLETE: return "incomplete";
    case CBT_BS_MALFORMED: return "malformed";
    case CBT_BS_GIVEN_UP: return "given_up";
    case CBT_BS_NO_HEADER: return "no_header";
    }
    return "?";
}

/* [lo, hi): ops a waiting batch holds (the uint64_t pairs of struct cbt_read_batch) */
struct span {
    uint64_t lo, hi;
};
_Static_assert(sizeof(struct span) == 2 * sizeof(uint64_t), "spans are pairs");

/* A batch waiting for the rest of its events. */
struct pend {
    uint32_t host;
    int64_t vpid;
    uint64_t id;
    bool have_header, have_end, malformed, given_up;
    struct cbt_where w;
    int64_t end_ts_ns; /* batch_end's time (has_end_ts): the batch's, as a batch event after the call has its own */
    bool has_end_ts;
    char procname[32];
    struct cbt_ev_batch h, end;
    CUDA_MEMCPY3D_BATCH_OP *ops;
    struct cbt_operand_info *src, *dst;
    uint64_t cap;     /* ops the arrays hold */
    uint64_t nops;    /* highest op held + 1 */
    uint64_t covered; /* ops received, no op twice */
    struct span *spans;
    uint32_t nspans, capspans;
    struct cbt_ev_finding *inl;
    uint32_t ninl, capinl;
    /* a 1D batch: its fields and attributes */
    bool is1d;
    struct cbt_ev_batch1d d;
    CUmemcpyAttributes *attrs;
    uint64_t *aidx;
    uint64_t capattrs, attrs_covered;
    size_t held;      /* bytes counted against the cap */
    struct pend *older, *newer;
};

/* Waiting batches in the order they started. */
struct line {
    struct pend *oldest, *newest;
    size_t n;
};

struct done_key {
    uint32_t host;
    bool used;
    int64_t vpid;
    uint64_t id;
};

/* The short stacks (cubatchtrace:stack) of batches not yet handed over,
 * by (host, vpid, batch id): direct-mapped, a later stack replacing an older
 * one in its slot (a batch waits for its chunks a short while). */
#define STACK_SLOTS 256
struct stack_slot {
    uint32_t host;
    int64_t vpid;
    uint64_t id;
    uint8_t n;
    uint64_t frames[CBT_EV_STACK_MAX];
};

/* A batch node's record (door graph_node), kept for the launches that run it. */
struct gdef {
    uint32_t host;
    int64_t vpid;
    uint64_t id;
    uint64_t n, nattrs;
    CUDA_MEMCPY3D_BATCH_OP *ops; /* its copies as ops (cbt_copy_op) */
    struct cbt_operand_info *src, *dst;
    CUmemcpyAttributes *attrs;
    uint64_t *aidx;
    int32_t device_count;
};
/* An executable graph holding batch nodes: its nodes' latest records. */
struct gexec {
    uint32_t host;
    int64_t vpid;
    uint64_t exec;
    uint64_t *defs;
    uint32_t n;
};

struct cbt_asm {
    struct cbt_read_out out; /* where batches, ops and findings go (the aggregate, in the tool) */
    cbt_batch_fn fn;
    void *ctx;
    struct cbt_validator *v;
    /* waiting batches: open addressing on pointers, backward-shift deletion */
    struct pend **slots;
    size_t nslots, npend;
    struct line holding, streaming; /* batches holding ops; batches given up, waiting for their last ops */
    struct pend *free;
    unsigned nfree;
    size_t held, cap_bytes;
    /* scratch, grown to the largest chunk or batch */
    CUDA_MEMCPY3D_BATCH_OP *sc_ops;
    struct cbt_operand_info *sc_src, *sc_dst;
    uint64_t sc_cap;
    struct cbt_operand_info opnd[256];
    CUmemcpyAttributes sc_attrs[CBT_EV_ATTRS_IN_HEADER];
    uint64_t sc_aidx[CBT_EV_ATTRS_IN_HEADER];
    struct cbt_finding *fnd;
    uint8_t *fnd_inline;
    size_t fnd_cap;
    /* comparing with the inline findings */
    struct cbt_finding *inl_f, *only;
    uint32_t *ix_a, *ix_b;
    size_t cmp_cap;
    struct cbt_ops aops;
    struct cbt_gpujoin *gpu; /* batches waiting for their gpu_time event */
    struct done_key done[DONE_SLOTS];
    struct cbt_read_stats st;
    struct stack_slot stacks[STACK_SLOTS];
    /* CUDA graphs (graph.c's part below): batch nodes' records, executable graphs */
    struct gdef *defs;          /* dense; dix indexes them by (host, vpid, id) */
    size_t ndefs, cap_defs;
    uint32_t *dix;              /* open addressing: index + 1, 0 empty; dmask + 1 slots */
    size_t dmask;
    struct gexec *execs;
    size_t nexecs, cap_execs;
    struct gcap { /* batches taken into a capture: the graph each went into */
        uint32_t host;
        int64_t vpid;
        uint64_t id, graph;
    } caps[64];
    unsigned ncaps;
};

/* ---------------------------------------------------------------- what goes out */

static void out_batch(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_batch *b, const struct cbt_ops *o)
{
    if (__builtin_expect(cbt_gpujoin_waiting(m->gpu), 0))
        cbt_gpujoin_batch(m->gpu, w, b, o);
    if (m->out.batch)
        m->out.batch(m->out.ctx, w, b, o);
}

static void out_batch_ops(struct cbt_asm *m, const struct cbt_where *w, uint64_t id, const struct cbt_ops *o)
{
    if (__builtin_expect(cbt_gpujoin_waiting(m->gpu), 0))
        cbt_gpujoin_ops(m->gpu, w, id, o);
    if (m->out.batch_ops)
        m->out.batch_ops(m->out.ctx, w, id, o);
}

static void out_finding(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_batch_finding *f)
{
    if (m->out.finding)
        m->out.finding(m->out.ctx, w, f);
}

/* ---------------------------------------------------------------- set up */

static size_t memory_cap(void)
{
    const char *s = getenv("CUBATCHTRACE_READ_MEMORY");
    char *end;
    unsigned long long mib = s && *s ? strtoull(s, &end, 10) : 0;
    if (!s || !*s || *end || mib == 0 || mib > (SIZE_MAX >> 21))
        mib = MEMORY_DEFAULT_MIB;
    return (size_t)mib << 20;
}

struct cbt_asm *cbt_asm_new(const struct cbt_read_out *out, cbt_batch_fn fn, void *ctx)
{
    struct cbt_asm *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->out = *out;
    m->fn = fn;
    m->ctx = ctx;
    m->cap_bytes = memory_cap();
    m->v = cbt_validator_new();
    m->gpu = cbt_gpujoin_new();
    if (!m->v || !m->gpu) {
        if (m->v)
            cbt_validator_free(m->v);
        cbt_gpujoin_free(m->gpu);
        free(m);
        return NULL;
    }
    return m;
}

void cbt_asm_gpu_expect(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id)
{
    cbt_gpujoin_expect(m->gpu, w, batch_id);
}

bool cbt_asm_gpu_time(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_gpu_time *e,
                      struct cbt_ev_gpu *out)
{
    return cbt_gpujoin_take(m->gpu, w, e, out);
}

static void pend_free_arrays(struct pend *p)
{
    free(p->ops);
    free(p->src);
    free(p->dst);
    free(p->spans);
    free(p->inl);
    free(p->attrs);
    free(p->aidx);
}

void cbt_asm_free(struct cbt_asm *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nslots; i++)
        if (m->slots[i]) {
            pend_free_arrays(m->slots[i]);
            free(m->slots[i]);
        }
    while (m->free) {
        struct pend *n = m->free->newer;
        pend_free_arrays(m->free);
        free(m->free);
        m->free = n;
    }
    cbt_gpujoin_free(m->gpu);
    free(m->slots);
    free(m->sc_ops);
    free(m->sc_src);
    free(m->sc_dst);
    free(m->fnd);
    free(m->fnd_inline);
    free(m->only);
    free(m->inl_f);
    free(m->ix_a);
    free(m->ix_b);
    for (size_t i = 0; i < m->ndefs; i++) {
        free(m->defs[i].ops);
        free(m->defs[i].src);
        free(m->defs[i].dst);
        free(m->defs[i].attrs);
        free(m->defs[i].aidx);
    }
    free(m->defs);
    free(m->dix);
    for (size_t i = 0; i < m->nexecs; i++)
        free(m->execs[i].defs);
    free(m->execs);
    cbt_validator_free(m->v);
    free(m);
}

/* Grow *p (n elements of size sz now) to hold `want`; false when out of memory. */
static bool grow32(void **p, uint32_t *n, uint64_t want, size_t sz)
{
    uint64_t c = *n;
    if (want > UINT32_MAX)
        return false;
    bool ok = cbt_grow(p, &c, want, sz);
    *n = (uint32_t)c;
    return ok;
}

static bool scratch_reserve(struct cbt_asm *m, uint64_t n)
{
    uint64_t c1 = m->sc_cap, c2 = m->sc_cap, c3 = m->sc_cap;
    bool ok = cbt_grow((void **)&m->sc_ops, &c1, n, sizeof(*m->sc_ops)) &&
              cbt_grow((void **)&m->sc_src, &c2, n, sizeof(*m->sc_src)) &&
              cbt_grow((void **)&m->sc_dst, &c3, n, sizeof(*m->sc_dst));
    uint64_t c = c1 < c2 ? c1 : c2;
    m->sc_cap = c < c3 ? c : c3;
    return ok;
}

/* ---------------------------------------------------------------- chunks */

static void operand_info(struct cbt_operand_info *i, const uint8_t *b)
{
    struct cbt_ev_operand e;
    memcpy(&e, b, sizeof(e));
    i->kind = e.kind;
    i->device = e.device;
    i->alloc_base = e.alloc_base;
    i->alloc_size = e.alloc_size;
    i->array_width = e.array_width;
    i->array_height = e.array_height;
    i->array_depth = e.array_depth;
    i->elem_size = e.elem_size;
}

/* How many ops a chunk holds; false when its sequences do not fit the format. */
static bool chunk_count(const struct cbt_chunk_bytes *c, uint64_t *count)
{
    if (c->src) { /* decoded: only the ops can be amiss */
        uint64_t n = c->ops_len / CBT_EV_OP_SIZE;
        if (c->ops_len % CBT_EV_OP_SIZE || c->first > UINT64_MAX - n)
            return false;
        *count = n;
        return true;
    }
    if (c->ops_len % CBT_EV_OP_SIZE || c->operands_len % sizeof(struct cbt_ev_operand))
        return false;
    uint64_t n = c->ops_len / CBT_EV_OP_SIZE, k = c->operands_len / sizeof(struct cbt_ev_operand);
    if (c->operand_of_len != 2 * n || k > 256 || c->first > UINT64_MAX - n)
        return false;
    for (uint64_t i = 0; i < 2 * n; i++)
        if (c->operand_of[i] >= k)
            return false;
    *count = n;
    return true;
}

/* The chunk's ops and operand infos, written at ops/src/dst[0..count). */
static void chunk_decode(struct cbt_asm *m, const struct cbt_chunk_bytes *c, uint64_t count,
                         CUDA_MEMCPY3D_BATCH_OP *ops, struct cbt_operand_info *src, struct cbt_operand_info *dst)
{
    if (!count)
        return; /* c->ops may be NULL: memcpy from NULL is undefined, even of 0 bytes */
    if (c->src) {
        memcpy(ops, c->ops, (size_t)(count * CBT_EV_OP_SIZE));
        memcpy(src, c->src, (size_t)count * sizeof(*src));
        memcpy(dst, c->dst, (size_t)count * sizeof(*dst));
        return;
    }
    uint64_t k = c->operands_len / sizeof(struct cbt_ev_operand);
    for (uint64_t j = 0; j < k; j++)
        operand_info(&m->opnd[j], c->operands + j * sizeof(struct cbt_ev_operand));
    memcpy(ops, c->ops, (size_t)(count * CBT_EV_OP_SIZE));
    for (uint64_t i = 0; i < count; i++) {
        src[i] = m->opnd[c->operand_of[2 * i]];
        dst[i] = m->opnd[c->operand_of[2 * i + 1]];
    }
}

/* How many attributes an attribute sequence pair holds; false when it does not fit the format. */
static bool attrs_count(const struct cbt_attr_bytes *a, uint64_t *count)
{
    if (a->words_len % CBT_EV_ATTR_SIZE)
        return false;
    uint64_t n = a->words_len / CBT_EV_ATTR_SIZE;
    if (a->idxs_len != 8 * n || a->first > UINT64_MAX - n)
        return false;
    *count = n;
    return true;
}

static void attrs_decode(const struct cbt_attr_bytes *a, uint64_t n, CUmemcpyAttributes *attrs, uint64_t *idxs)
{
    if (!n)
        return; /* as in chunk_decode */
    memcpy(attrs, a->words, (size_t)(n * CBT_EV_ATTR_SIZE));
    memcpy(idxs, a->idxs, (size_t)(n * 8));
}

/* ---------------------------------------------------------------- the consumer (agg.c, in the tool) */

static void agg_ops(struct cbt_asm *m, const struct cbt_where *w, uint64_t id, bool header, const struct cbt_batch *b,
                    uint64_t first, uint64_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, const struct cbt_operand_info *src,
                    const struct cbt_operand_info *dst)
{
    struct cbt_ops *o = &m->aops;
    for (uint64_t done = 0; done < n || (header && done == 0); done += o->count) {
        o->first = first + done;
        o->count = n - done > CBT_CHUNK ? CBT_CHUNK : (uint32_t)(n - done);
        for (uint32_t i = 0; i < o->count; i++) {
            const CUDA_MEMCPY3D_BATCH_OP *op = &ops[done + i];
            const struct cbt_operand_info *s = &src[done + i], *d = &dst[done + i];
            o->src_type[i] = (uint8_t)op->src.type;
            o->dst_type[i] = (uint8_t)op->dst.type;
            o->src_mem[i] = s->kind;
            o->dst_mem[i] = d->kind;
            o->src_dev[i] = s->device;
            o->dst_dev[i] = d->device;
            o->order[i] = (uint8_t)op->srcAccessOrder;
            o->flags[i] = (uint8_t)op->flags;
            o->bytes[i] = cbt_op_bytes(op, s, d);
        }
        if (header) {
            out_batch(m, w, b, o->count ? o : NULL);
            header = false;
            if (o->count == 0)
                break;
        } else {
            out_batch_ops(m, w, id, o);
        }
    }
}

static void to_cbt_batch(struct cbt_batch *b, const struct cbt_ev_batch *h, uint64_t expected)
{
    memset(b, 0, sizeof(*b));
    b->batch_id = h->batch_id;
    b->num_ops = h->num_ops;
    b->ops_expected = expected;
    b->op_list = h->op_list;
    b->stream = h->stream;
    b->stream_id = h->stream_id;
    b->driver_ns = h->driver_ns;
    b->caller = h->caller;
    b->result = h->result;
    b->device = h->device;
    b->api = h->api;
    b->door = h->door;
    b->outcome = h->outcome;
}

/* ---------------------------------------------------------------- checking */

static bool findings_reserve(struct cbt_asm *m, size_t n)
{
    if (n <= m->fnd_cap)
        return true;
    uint64_t c1 = m->fnd_cap, c2 = m->fnd_cap;
    bool ok = cbt_grow((void **)&m->fnd, &c1, n, sizeof(*m->fnd)) && cbt_grow((void **)&m->fnd_inline, &c2, n, 1);
    m->fnd_cap = (size_t)(c1 < c2 ? c1 : c2);
    return ok && m->fnd_cap >= n;
}

/*
 * The read-time findings of a whole batch into m->fnd; returns how many.  The
 * view is the one the shim builds: the arguments as passed, the ops as read
 * (ops_recorded of them: the validator then adds ops_not_read itself).
 */
static size_t check_batch(struct cbt_asm *m, const struct cbt_ev_batch *h, const CUDA_MEMCPY3D_BATCH_OP *ops,
                          const struct cbt_operand_info *src, const struct cbt_operand_info *dst,
                          const struct cbt_ev_batch1d *d, const CUmemcpyAttributes *attrs, const uint64_t *aidx)
{
    static const CUDA_MEMCPY3D_BATCH_OP none_read; /* a non-NULL op list of which nothing was read */
    static const CUmemcpyAttributes no_attrs;       /* a non-NULL array of which nothing was read */
    static const size_t no_idxs;
    bool any = h->op_list && h->ops_recorded;
    struct cbt_batch_view v = {
        .num_ops = (size_t)h->num_ops,
        .ops = !h->op_list ? NULL : any && ops ? ops : &none_read,
        .flags = h->flags,
        /* a graph node has no stream of its own: its launches give one */
        .stream = h->door == CBT_DOOR_GRAPH_NODE ? CU_STREAM_PER_THREAD : (CUstream)(uintptr_t)h->stream,
        .src_info = any ? src : NULL,
        .dst_info = any ? dst : NULL,
        .device_count = h->device_count,
        .partial = h->op_list && h->ops_recorded < h->num_ops,
        .num_read = (size_t)h->ops_recorded,
        /* the driver's answer, where it gave one */
        .has_result = h->outcome == CBT_OUTCOME_FORWARDED,
        .result = h->result,
    };
    if (d) {
        /* the 1D batch: the arrays as passed (only whether each is NULL matters), its attributes as read */
        v.copies = 1;
        v.ops = any && ops ? ops : NULL;
        v.partial = h->ops_recorded > 0 && h->ops_recorded < h->num_ops;
        v.dsts = (const void *)(uintptr_t)h->op_list;
        v.srcs = (const void *)(uintptr_t)d->srcs;
        v.sizes = (const void *)(uintptr_t)d->sizes;
        v.attrs = !d->attrs ? NULL : d->attrs_recorded && attrs ? attrs : &no_attrs;
        v.attrs_idxs = !d->attrs_idxs ? NULL : d->attrs_recorded && aidx ? (const size_t *)aidx : &no_idxs;
        v.num_attrs = (size_t)d->num_attrs;
        v.attrs_read = attrs && aidx ? (size_t)d->attrs_recorded : 0;
        v.abi = d->abi;
    }
    if (!findings_reserve(m, 64))
        return 0;
    size_t nf = cbt_validate(m->v, &v, m->fnd, m->fnd_cap);
    if (nf != (size_t)-1 && nf > m->fnd_cap) {
        size_t want = nf < FINDINGS_MAX ? nf : FINDINGS_MAX;
        if (findings_reserve(m, want))
            nf = cbt_validate(m->v, &v, m->fnd, m->fnd_cap);
    }
    if (nf == (size_t)-1)
        nf = 0;
    if (nf > m->fnd_cap) {
        m->st.findings_dropped += nf - m->fnd_cap;
        nf = m->fnd_cap;
    }
    if (h->door == CBT_DOOR_GRAPH_NODE) {
        /* in a batch node a size of 0 disables the copy */
        size_t k = 0;
        for (size_t i = 0; i < nf; i++)
            if (m->fnd[i].rule != CBT_RULE_copy_size_zero)
                m->fnd[k++] = m->fnd[i];
        nf = k;
    }
    return nf;
}

/* A batch not checked still says, from its header alone, that ops were left unread: m->fnd[0..return). */
static size_t ops_not_read(struct cbt_asm *m, const struct cbt_ev_batch *h)
{
    if (!h->op_list || h->ops_recorded >= h->num_ops || (cbt_api_is_1d(h->api) && !h->ops_recorded) ||
        !findings_reserve(m, 1))
        return 0;
    m->fnd[0] = (struct cbt_finding){
        .rule = CBT_RULE_ops_not_read, .severity = (uint8_t)cbt_rules[CBT_RULE_ops_not_read].severity,
        .side = CBT_SIDE_NONE, .op = CBT_NO_OP, .other_op = CBT_NO_OP, .value = h->ops_recorded, .limit = h->num_ops,
    };
    return 1;
}

static int cmp_finding(const struct cbt_finding *a, const struct cbt_finding *b)
{
#define CMP_(x, y) if ((x) != (y)) return (x) < (y) ? -1 : 1;
    CMP_(a->rule, b->rule) CMP_(a->op, b->op) CMP_(a->other_op, b->other_op) CMP_(a->side, b->side)
    CMP_(a->value, b->value) CMP_(a->limit, b->limit) CMP_(a->severity, b->severity)
#undef CMP_
    return 0;
}

/* qsort_r: indices into the findings at `base` */
static int cmp_index(const void *x, const void *y, void *base)
{
    const struct cbt_finding *f = base;
    return cmp_finding(&f[*(const uint32_t *)x], &f[*(const uint32_t *)y]);
}

/*
 * Compare the read-time findings m->fnd[0..nf) with the inline ones, one for
 * one, ops_not_read aside (a fact of the recording more than of the batch, and
 * the reader's own for batches it cannot check): m->fnd_inline[i] says whether
 * finding i was made inline too; m->only gets the inline findings without a
 * read-time twin.  Returns how many of those there are.
 */
static size_t compare_inline(struct cbt_asm *m, size_t nf, const struct cbt_ev_finding *inl, size_t ninl)
{
    uint64_t c1 = m->cmp_cap, c2 = m->cmp_cap, c3 = m->cmp_cap, c4 = m->cmp_cap;
    size_t want = nf > ninl ? nf : ninl;
    bool ok = cbt_grow((void **)&m->ix_a, &c1, want, sizeof(*m->ix_a)) && cbt_grow((void **)&m->ix_b, &c2, want, sizeof(*m->ix_b)) &&
              cbt_grow((void **)&m->inl_f, &c3, want, sizeof(*m->inl_f)) && cbt_grow((void **)&m->only, &c4, want, sizeof(*m->only));
    uint64_t c = c1 < c2 ? c1 : c2;
    c = c < c3 ? c : c3;
    m->cmp_cap = (size_t)(c < c4 ? c : c4);
    if (!ok) {
        for (size_t i = 0; i < nf; i++)
            m->fnd_inline[i] = 2;
        m->st.inline_unchecked += ninl;
        return 0;
    }
    size_t nr = 0, ni = 0;
    for (size_t i = 0; i < nf; i++) {
        bool aside = m->fnd[i].rule == CBT_RULE_ops_not_read;
        m->fnd_inline[i] = aside ? 2 : 0;
        if (!aside)
            m->ix_a[nr++] = (uint32_t)i;
    }
    for (size_t j = 0; j < ninl; j++)
        if (inl[j].rule != CBT_RULE_ops_not_read)
            m->inl_f[ni++] = (struct cbt_finding){.rule = inl[j].rule, .severity = inl[j].severity,
                                                  .side = inl[j].side, .op = inl[j].op, .other_op = inl[j].other_op,
                                                  .value = inl[j].value, .limit = inl[j].limit};
    /* the usual case: the same findings in the same order */
    size_t same = 0;
    while (same < nr && same < ni && cmp_finding(&m->fnd[m->ix_a[same]], &m->inl_f[same]) == 0)
        m->fnd_inline[m->ix_a[same++]] = 1;
    size_t matched = same, nonly = 0;
    if (same < nr || same < ni) {
        /* otherwise the rest of both sides by key, walked together */
        uint32_t *a = m->ix_a + same, *b = m->ix_b;
        size_t na = nr - same, nb = ni - same, x = 0, y = 0;
        for (size_t k = 0; k < nb; k++)
            b[k] = (uint32_t)(same + k);
        qsort_r(a, na, sizeof(*a), cmp_index, m->fnd);
        qsort_r(b, nb, sizeof(*b), cmp_index, m->inl_f);
        while (x < na || y < nb) {
            int d = x == na ? 1 : y == nb ? -1 : cmp_finding(&m->fnd[a[x]], &m->inl_f[b[y]]);
            if (d == 0) {
                m->fnd_inline[a[x++]] = 1;
                y++;
                matched++;
            } else if (d < 0) {
                x++;
            } else {
                m->only[nonly++] = m->inl_f[b[y++]];
            }
        }
    }
    m->st.inline_checked += ni;
    m->st.inline_disagreeing += (nr - matched) + (ni - matched);
    return nonly;
}

/* ---------------------------------------------------------------- handing over */

struct whole {
    const struct cbt_where *w;
    uint64_t id;
    const struct cbt_ev_batch *h; /* NULL: no header */
    enum cbt_batch_state state;
    const CUDA_MEMCPY3D_BATCH_OP *ops;
    const struct cbt_operand_info *src, *dst;
    uint64_t nops;                 /* ops held at ops[0..nops) */
    const struct span *spans;      /* the ranges of ops held; NULL: all of [0, nops) */
    uint32_t nspans;
    uint64_t agg_expected;         /* ops agg.c is to wait for (given up: all recorded) */
    const struct cbt_ev_finding *inl;
    size_t ninl;
    const struct cbt_ev_batch1d *d; /* a 1D batch; NULL otherwise */
    const CUmemcpyAttributes *attrs;
    const uint64_t *aidx;
    uint64_t nattrs;
};

static void note_rules(struct cbt_asm *m, uint16_t rules)
{
    for (unsigned i = 0; i < m->st.nrules_seen; i++)
        if (m->st.rules_seen[i] == rules)
            return;
    if (m->st.nrules_seen < sizeof(m->st.rules_seen) / sizeof(m->st.rules_seen[0]))
        m->st.rules_seen[m->st.nrules_seen++] = rules;
    else
        m->st.rules_more = true;
}

static size_t stack_slot(uint32_t host, int64_t vpid, uint64_t id)
{
    return ((id + (uint64_t)vpid * 31 + host) * 0x9E3779B97F4A7C15ull >> 40) % STACK_SLOTS;
}

void cbt_asm_stack(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id, const uint64_t *frames,
                   unsigned n)
{
    struct stack_slot *s = &m->stacks[stack_slot(w->host, w->vpid, batch_id)];
    if (n > CBT_EV_STACK_MAX)
        n = CBT_EV_STACK_MAX;
    *s = (struct stack_slot){.host = w->host, .vpid = w->vpid, .id = batch_id, .n = (uint8_t)n};
    memcpy(s->frames, frames, n * sizeof *frames);
}

/* The batch's stack, when one came (NULL: none). */
static const struct stack_slot *stack_of(const struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id)
{
    const struct stack_slot *s = &m->stacks[stack_slot(w->host, w->vpid, batch_id)];
    return s->n && s->id == batch_id && s->vpid == w->vpid && s->host == w->host ? s : NULL;
}

static void *dup_n(const void *p, size_t n)
{
    void *q = malloc(n ? n : 1);
    if (q && n && p)
        memcpy(q, p, n);
    return q;
}

/* Under (host, vpid, id): the record of a batch node, NULL none. */
static size_t def_hash(uint32_t host, int64_t vpid, uint64_t id)
{
    return (size_t)((id ^ (uint64_t)vpid << 17 ^ host) * 0x9E3779B97F4A7C15ull >> 20);
}

/* The slot of (host, vpid, id) in dix: its entry's, else the empty one it would take. */
static size_t def_slot(const struct cbt_asm *m, uint32_t host, int64_t vpid, uint64_t id)
{
    size_t s = def_hash(host, vpid, id) & m->dmask;
    for (;; s = (s + 1) & m->dmask) {
        uint32_t i = m->dix[s];
        if (!i)
            return s;
        const struct gdef *d = &m->defs[i - 1];
        if (d->id == id && d->vpid == vpid && d->host == host)
            return s;
    }
}

static struct gdef *def_find(struct cbt_asm *m, uint32_t host, int64_t vpid, uint64_t id)
{
    if (!m->dix)
        return NULL;
    uint32_t i = m->dix[def_slot(m, host, vpid, id)];
    return i ? &m->defs[i - 1] : NULL;
}

/* dix rebuilt for 2 x cap slots or more (false: out of memory). */
static bool def_index(struct cbt_asm *m, size_t cap)
{
    size_t n = 16;
    while (n < 2 * cap)
        n *= 2;
    uint32_t *x = calloc(n, sizeof *x);
    if (!x)
        return false;
    free(m->dix);
    m->dix = x;
    m->dmask = n - 1;
    for (size_t i = 0; i < m->ndefs; i++)
        m->dix[def_slot(m, m->defs[i].host, m->defs[i].vpid, m->defs[i].id)] = (uint32_t)(i + 1);
    return true;
}

/* A record no launch can run any more (an executable graph's own, replaced
 * or gone) forgotten: the last one moves into its place, the slots after
 * its own shift back. */
static void def_drop(struct cbt_asm *m, uint32_t host, int64_t vpid, uint64_t id)
{
    if (!m->dix)
        return;
    size_t s = def_slot(m, host, vpid, id);
    uint32_t i = m->dix[s];
    if (!i)
        return;
    struct gdef *d = &m->defs[i - 1];
    free(d->ops), free(d->src), free(d->dst), free(d->attrs), free(d->aidx);
    /* backward-shift deletion */
    m->dix[s] = 0;
    for (size_t t = (s + 1) & m->dmask; m->dix[t]; t = (t + 1) & m->dmask) {
        const struct gdef *e = &m->defs[m->dix[t] - 1];
        size_t home = def_hash(e->host, e->vpid, e->id) & m->dmask;
        if (((t - home) & m->dmask) >= ((t - s) & m->dmask)) {
            m->dix[s] = m->dix[t];
            m->dix[t] = 0;
            s = t;
        }
    }
    size_t last = m->ndefs - 1;
    if (i - 1 != last) {
        *d = m->defs[last];
        m->dix[def_slot(m, d->host, d->vpid, d->id)] = i;
    }
    m->ndefs--;
}

/* A batch node's record kept whole for its launches (only when all of it came). */
static void keep_def(struct cbt_asm *m, const struct whole *x)
{
    if (x->state != CBT_BS_COMPLETE || x->spans || x->nops != x->h->num_ops)
        return;
    if (def_find(m, x->w->host, x->w->vpid, x->h->batch_id))
        return; /* the same id twice: the first kept */
    if (m->ndefs == m->cap_defs) {
        size_t c = m->cap_defs ? 2 * m->cap_defs : 16;
        struct gdef *d = realloc(m->defs, c * sizeof *d);
        if (!d)
            return;
        m->defs = d;
        if (!def_index(m, c))
            return;
        m->cap_defs = c;
    }
    struct gdef d = {
        .host = x->w->host, .vpid = x->w->vpid, .id = x->h->batch_id, .n = x->nops, .nattrs = x->nattrs,
        .ops = dup_n(x->ops, x->nops * sizeof *x->ops), .src = dup_n(x->src, x->nops * sizeof *x->src),
        .dst = dup_n(x->dst, x->nops * sizeof *x->dst), .attrs = dup_n(x->attrs, x->nattrs * sizeof *x->attrs),
        .aidx = dup_n(x->aidx, x->nattrs * sizeof *x->aidx), .device_count = x->h->device_count,
    };
    if (!d.ops || !d.src || !d.dst || !d.attrs || !d.aidx) {
        free(d.ops), free(d.src), free(d.dst), free(d.attrs), free(d.aidx);
        return;
    }
    m->defs[m->ndefs++] = d;
    m->dix[def_slot(m, d.host, d.vpid, d.id)] = (uint32_t)m->ndefs;
}

/* A whole batch to agg.c: the batch, the ops it ran (none for a node's or a
 * captured batch's record: run false), its nf findings (m->fnd). */
static void aggregate(struct cbt_asm *m, const struct whole *x, const struct stack_slot *stk, size_t nf, bool run)
{
    const struct cbt_ev_batch *h = x->h;
    struct cbt_batch b;
    uint64_t id = x->id;
    bool first = h != NULL;
    if (h) {
        uint64_t held = 0;
        if (x->spans)
            for (uint32_t s = 0; s < x->nspans; s++)
                held += x->spans[s].hi - x->spans[s].lo;
        else
            held = x->nops;
        to_cbt_batch(&b, h, x->agg_expected > held ? x->agg_expected : held);
        if (stk) {
            b.nstack = stk->n;
            memcpy(b.stack, stk->frames, stk->n * sizeof *stk->frames);
        }
    }
    if (!run) {
    } else if (x->spans) {
        for (uint32_t s = 0; s < x->nspans; s++) {
            const struct span *sp = &x->spans[s];
            agg_ops(m, x->w, id, first, &b, sp->lo, sp->hi - sp->lo, x->ops + sp->lo, x->src + sp->lo, x->dst + sp->lo);
            first = false;
        }
    } else if (x->nops) {
        agg_ops(m, x->w, id, first, &b, 0, x->nops, x->ops, x->src, x->dst);
        first = false;
    }
    if (first && run)
        out_batch(m, x->w, &b, NULL);
    if (h) {
        for (size_t i = 0; i < nf; i++) {
            const struct cbt_finding *f = &m->fnd[i];
            struct cbt_batch_finding bf = {
                .batch_id = h->batch_id, .op = f->op, .other_op = f->other_op, .value = f->value,
                .limit = f->limit, .caller = h->caller, .rule = f->rule, .severity = f->severity, .side = f->side,
                .has_op = f->op < x->nops, .has_other = f->other_op < x->nops && !cbt_rule_is_attr(f->rule),
                .copies = x->d != NULL,
            };
            if (stk) {
                bf.nstack = stk->n;
                memcpy(bf.stack, stk->frames, stk->n * sizeof *stk->frames);
            }
            if (bf.has_op)
                bf.opv = x->ops[f->op];
            if (bf.has_other)
                bf.otherv = x->ops[f->other_op];
            out_finding(m, x->w, &bf);
        }
    }
}

static void hand_over(struct cbt_asm *m, const struct whole *x)
{
    const struct stack_slot *stk = x->h ? stack_of(m, x->w, x->h->batch_id) : NULL;
    const struct cbt_ev_batch *h = x->h;
    size_t nf = 0, nonly = 0;
    bool checked = h && (x->state == CBT_BS_COMPLETE || x->state == CBT_BS_PENDING) &&
                   h->door != CBT_DOOR_GRAPH_LAUNCH; /* its nodes' records were */
    /* A batch node's record, and a batch the driver took into a graph being
     * captured: their copies run at launches, not now (their findings go out) */
    bool node = h && h->door == CBT_DOOR_GRAPH_NODE;
    bool captured = h && !node && h->door != CBT_DOOR_GRAPH_LAUNCH && h->outcome == CBT_OUTCOME_FORWARDED &&
                    h->result == 0 && h->capture == CBT_CAPTURE_ACTIVE;
    bool run = !node && !captured;
    uint64_t graph = 0;
    if (captured)
        for (unsigned i = 0; i < m->ncaps; i++)
            if (m->caps[i].id == h->batch_id && m->caps[i].vpid == x->w->vpid && m->caps[i].host == x->w->host) {
                graph = m->caps[i].graph;
                m->caps[i] = m->caps[--m->ncaps];
                break;
            }
    if (node || captured)
        keep_def(m, x); /* a captured batch's record is its node's */
    if (checked) {
        nf = check_batch(m, h, x->ops, x->src, x->dst, x->d, x->attrs, x->aidx);
        cbt_progress(); /* a large batch can take the validator a while */
    } else if (h) {
        nf = ops_not_read(m, h);
    }
    bool compare = checked && h->validated && h->rules == CBT_RULES_VERSION;
    if (compare)
        nonly = compare_inline(m, nf, x->inl, x->ninl);
    else {
        m->st.inline_unchecked += x->ninl;
        for (size_t i = 0; i < nf; i++)
            m->fnd_inline[i] = 2;
    }
    switch (x->state) {
    case CBT_BS_PENDING: m->st.pending++; break;
    case CBT_BS_MALFORMED: m->st.malformed++; break;
    case CBT_BS_INCOMPLETE: m->st.incomplete++; break;
    case CBT_BS_GIVEN_UP: m->st.given_up++; break;
    default: break;
    }

    aggregate(m, x, stk, nf, run);

    if (m->fn) {
        struct cbt_read_batch rb = {
            .not_run = !run,
            .captured = captured,
            .graph = graph,
            .w = *x->w,
            .have_header = h != NULL,
            .state = x->state,
            .nops = x->nops,
            .spans = x->spans ? &x->spans[0].lo : NULL,
            .nspans = x->nspans,
            .ops = x->ops,
            .src = x->src,
            .dst = x->dst,
            .findings = m->fnd,
            .nfindings = nf,
            .finding_inline = m->fnd_inline,
            .inline_only = m->only,
            .ninline_only = nonly,
            .is1d = x->d != NULL,
            .attrs = x->attrs,
            .attrs_idxs = x->aidx,
            .nattrs = x->nattrs,
            .stack = stk ? stk->frames : NULL,
            .nstack = stk ? stk->n : 0,
        };
        if (x->d)
            rb.d = *x->d;
        if (h)
            rb.h = *h;
        rb.h.batch_id = x->id;
        m->fn(m->ctx, &rb);
    }
}

/* ---------------------------------------------------------------- waiting batches */

static inline size_t key_hash(uint32_t host, int64_t vpid, uint64_t id)
{
    uint64_t h = (id + 0x9E3779B97F4A7C15ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= ((uint64_t)vpid + ((uint64_t)host << 40)) * 0x165667B19E3779F9ull;
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

static struct pend *pend_find(struct cbt_asm *m, uint32_t host, int64_t vpid, uint64_t id)
{
    if (!m->npend)
        return NULL;
    for (size_t j = key_hash(host, vpid, id) & (m->nslots - 1);; j = (j + 1) & (m->nslots - 1)) {
        struct pend *p = m->slots[j];
        if (!p)
            return NULL;
        if (p->id == id && p->vpid == vpid && p->host == host)
            return p;
    }
}

static bool slots_grow(struct cbt_asm *m)
{
    size_t n = m->nslots ? m->nslots * 2 : 256;
    struct pend **s = calloc(n, sizeof(*s));
    if (!s)
        return false;
    for (size_t i = 0; i < m->nslots; i++) {
        struct pend *p = m->slots[i];
        if (!p)
            continue;
        size_t j = key_hash(p->host, p->vpid, p->id) & (n - 1);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = p;
    }
    free(m->slots);
    m->slots = s;
    m->nslots = n;
    return true;
}

static void held_set(struct cbt_asm *m, struct pend *p)
{
    size_t h = sizeof(*p) + (size_t)p->cap * OP_HELD + (size_t)p->capspans * sizeof(struct span) +
               (size_t)p->capinl * sizeof(struct cbt_ev_finding) +
               (size_t)p->capattrs * (sizeof(CUmemcpyAttributes) + sizeof(uint64_t));
    m->held = m->held - p->held + h;
    p->held = h;
}

static void line_push(struct line *l, struct pend *p)
{
    p->newer = NULL;
    p->older = l->newest;
    if (l->newest)
        l->newest->newer = p;
    else
        l->oldest = p;
    l->newest = p;
    l->n++;
}

static void line_unlink(struct line *l, struct pend *p)
{
    if (p->older)
        p->older->newer = p->newer;
    else
        l->oldest = p->newer;
    if (p->newer)
        p->newer->older = p->older;
    else
        l->newest = p->older;
    l->n--;
}

/* The waiting record of a key, created when new (NULL when out of memory). */
static struct pend *pend_get(struct cbt_asm *m, const struct cbt_where *w, uint64_t id)
{
    struct pend *p = pend_find(m, w->host, w->vpid, id);
    if (p)
        return p;
    if ((m->npend + 1) * 2 > m->nslots && !slots_grow(m))
        return NULL;
    if (m->free) {
        p = m->free;
        m->free = p->newer;
        m->nfree--;
    } else if (!(p = calloc(1, sizeof(*p)))) {
        return NULL;
    }
    /* keep the arrays of a recycled record, forget the rest */
    struct pend keep = *p;
    memset(p, 0, sizeof(*p));
    p->ops = keep.ops;
    p->src = keep.src;
    p->dst = keep.dst;
    p->cap = keep.cap;
    p->spans = keep.spans;
    p->capspans = keep.capspans;
    p->inl = keep.inl;
    p->capinl = keep.capinl;
    p->attrs = keep.attrs;
    p->aidx = keep.aidx;
    p->capattrs = keep.capattrs;
    p->host = w->host;
    p->vpid = w->vpid;
    p->id = id;
    p->w = *w;
    p->w.procname = NULL;
    if (w->procname) {
        snprintf(p->procname, sizeof(p->procname), "%s", w->procname);
        p->w.procname = p->procname;
    }
    size_t j = key_hash(p->host, p->vpid, id) & (m->nslots - 1);
    while (m->slots[j])
        j = (j + 1) & (m->nslots - 1);
    m->slots[j] = p;
    m->npend++;
    line_push(&m->holding, p);
    held_set(m, p);
    return p;
}

static void pend_remove(struct cbt_asm *m, struct pend *p)
{
    size_t i = key_hash(p->host, p->vpid, p->id) & (m->nslots - 1);
    while (m->slots[i] != p)
        i = (i + 1) & (m->nslots - 1);
    m->slots[i] = NULL;
    for (size_t j = (i + 1) & (m->nslots - 1); m->slots[j]; j = (j + 1) & (m->nslots - 1)) {
        size_t h = key_hash(m->slots[j]->host, m->slots[j]->vpid, m->slots[j]->id) & (m->nslots - 1);
        /* move j into the hole i when its home h is not within (i, j] */
        if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
            m->slots[i] = m->slots[j];
            m->slots[j] = NULL;
            i = j;
        }
    }
    m->npend--;
    line_unlink(p->given_up ? &m->streaming : &m->holding, p);
    m->held -= p->held;
    if (m->nfree >= FREE_MAX || p->cap > KEEP_ARRAYS_OPS) {
        pend_free_arrays(p);
        if (m->nfree >= FREE_MAX) {
            free(p);
            return;
        }
        p->ops = NULL, p->src = p->dst = NULL, p->spans = NULL, p->inl = NULL, p->attrs = NULL, p->aidx = NULL;
        p->cap = 0, p->capspans = 0, p->capinl = 0, p->capattrs = 0;
    }
    p->newer = m->free;
    m->free = p;
    m->nfree++;
}

static void release_arrays(struct cbt_asm *m, struct pend *p)
{
    pend_free_arrays(p);
    p->ops = NULL, p->src = p->dst = NULL, p->spans = NULL, p->inl = NULL, p->attrs = NULL, p->aidx = NULL;
    p->cap = 0, p->capspans = 0, p->capinl = 0, p->ninl = 0, p->nspans = 0, p->capattrs = 0;
    held_set(m, p);
}

/* Apply batch_end's fields over the header's. */
static void apply_end(struct cbt_ev_batch *h, const struct cbt_ev_batch *e)
{
    h->outcome = e->outcome;
    h->result = e->result;
    h->fail_idx = e->fail_idx;
    h->driver_ns = e->driver_ns;
    h->stream_id = e->stream_id;
    h->context = e->context;
    h->device = e->device;
    h->capture = e->capture;
}

static uint64_t recorded(const struct pend *p) { return p->h.op_list ? p->h.ops_recorded : 0; }

static bool whole(const struct pend *p)
{
    return p->have_header && !p->given_up && p->covered >= recorded(p) &&
           (!p->is1d || p->attrs_covered >= p->d.attrs_recorded) &&
           (p->h.outcome != CBT_OUTCOME_PENDING || p->have_end) && (!p->h.validated || p->ninl >= p->h.findings);
}

static void hand_over_pend(struct cbt_asm *m, struct pend *p, enum cbt_batch_state state, uint64_t agg_expected)
{
    struct cbt_ev_batch h = p->h;
    if (p->have_end)
        apply_end(&h, &p->end);
    if (p->have_end && p->has_end_ts) { /* written before the call: its time is when the call returned */
        p->w.ts_ns = p->end_ts_ns;
        p->w.has_ts = true;
    }
    struct whole x = {
        .w = &p->w, .id = p->id, .h = p->have_header ? &h : NULL, .state = state,
        .ops = p->ops, .src = p->src, .dst = p->dst, .nops = p->nops,
        .spans = p->spans, .nspans = p->nspans, .agg_expected = agg_expected,
        .inl = p->inl, .ninl = p->ninl,
    };
    if (p->is1d && p->have_header) {
        /* attributes only when all that were recorded came: a reader never
         * meets a count without the array behind it */
        bool attrs_whole = p->attrs_covered >= p->d.attrs_recorded;
        x.d = &p->d;
        x.attrs = attrs_whole ? p->attrs : NULL;
        x.aidx = attrs_whole ? p->aidx : NULL;
        x.nattrs = attrs_whole ? p->attrs_covered : 0;
    }
    if (state == CBT_BS_COMPLETE || state == CBT_BS_PENDING)
        x.spans = NULL; /* every op of [0, nops) came */
    hand_over(m, &x);
}

/* Stop holding a batch: summarise what it holds (not validated); its later ops go to agg.c as they come. */
static void give_up(struct cbt_asm *m, struct pend *p)
{
    if (p->have_header) {
        hand_over_pend(m, p, CBT_BS_GIVEN_UP, recorded(p));
    } else {
        for (uint32_t s = 0; s < p->nspans; s++) {
            const struct span *sp = &p->spans[s];
            agg_ops(m, &p->w, p->id, false, NULL, sp->lo, sp->hi - sp->lo, p->ops + sp->lo, p->src + sp->lo,
                    p->dst + sp->lo);
        }
        m->st.given_up++;
        m->st.inline_unchecked += p->ninl;
    }
    line_unlink(&m->holding, p);
    p->given_up = true;
    line_push(&m->streaming, p);
    release_arrays(m, p);
}

static uint64_t ops_limit(const struct cbt_asm *m) { return (m->cap_bytes - sizeof(struct pend)) / OP_HELD; }

/* Give up on the oldest batches holding ops until the memory held is under the cap. */
static void enforce_cap(struct cbt_asm *m)
{
    while (m->held > m->cap_bytes && m->holding.oldest) {
        struct pend *p = m->holding.oldest;
        if (!p->have_header && !p->covered) {
            /* only a batch_end or inline findings: forget it (its inline findings stay unchecked) */
            m->st.inline_unchecked += p->ninl;
            pend_remove(m, p);
            continue;
        }
        give_up(m, p);
        if (p->have_header && p->covered >= recorded(p))
            pend_remove(m, p);
    }
    /* given-up batches hold little, but not nothing */
    while ((m->held > m->cap_bytes || m->streaming.n > STREAMING_MAX) && m->streaming.oldest)
        pend_remove(m, m->streaming.oldest);
}

/* A chunk for a waiting batch. */
static void pend_chunk(struct cbt_asm *m, struct pend *p, const struct cbt_chunk_bytes *c)
{
    uint64_t n;
    if (!chunk_count(c, &n) || (p->have_header && c->first + n > recorded(p))) {
        p->malformed = true;
        return;
    }
    if (n == 0)
        return;
    if (p->given_up) {
        if (!scratch_reserve(m, n))
            return;
        chunk_decode(m, c, n, m->sc_ops, m->sc_src, m->sc_dst);
        agg_ops(m, &p->w, p->id, false, NULL, c->first, n, m->sc_ops, m->sc_src, m->sc_dst);
        p->covered += n;
        if (p->have_header && p->covered >= recorded(p))
            pend_remove(m, p);
        return;
    }
    uint64_t lo = c->first, hi = c->first + n;
    /* where it goes among the spans held (sorted, disjoint, not touching) */
    uint32_t k = p->nspans;
    while (k > 0 && p->spans[k - 1].lo >= hi)
        k--;
    if ((k > 0 && p->spans[k - 1].hi > lo) || (k < p->nspans && p->spans[k].lo < hi)) {
        p->malformed = true; /* an op received twice */
        return;
    }
    if (hi > p->cap) {
        uint64_t limit = ops_limit(m);
        uint64_t want = p->have_header ? recorded(p) : hi; /* with the header: exactly what is coming */
        if (want > limit) { /* can never fit */
            give_up(m, p);
            pend_chunk(m, p, c);
            return;
        }
        uint64_t target = want;
        if (!p->have_header) {
            target = p->cap ? 2 * p->cap : 64;
            while (target < want)
                target *= 2;
            if (target > limit)
                target = want;
        }
        void *a = realloc(p->ops, (size_t)target * sizeof(*p->ops));
        if (a)
            p->ops = a;
        void *b = a ? realloc(p->src, (size_t)target * sizeof(*p->src)) : NULL;
        if (b)
            p->src = b;
        void *d = b ? realloc(p->dst, (size_t)target * sizeof(*p->dst)) : NULL;
        if (d)
            p->dst = d;
        if (!a || !b || !d) {
            p->malformed = true;
            return;
        }
        p->cap = target; /* what lies outside the spans is never read */
    }
    chunk_decode(m, c, n, p->ops + lo, p->src + lo, p->dst + lo);
    /* record [lo, hi): extend a neighbour or insert */
    if (k > 0 && p->spans[k - 1].hi == lo) {
        p->spans[k - 1].hi = hi;
        if (k < p->nspans && p->spans[k].lo == hi) {
            p->spans[k - 1].hi = p->spans[k].hi;
            memmove(&p->spans[k], &p->spans[k + 1], (p->nspans - k - 1) * sizeof(*p->spans));
            p->nspans--;
        }
    } else if (k < p->nspans && p->spans[k].lo == hi) {
        p->spans[k].lo = lo;
    } else {
        if (!grow32((void **)&p->spans, &p->capspans, (uint64_t)p->nspans + 1, sizeof(*p->spans))) {
            p->malformed = true;
            return;
        }
        memmove(&p->spans[k + 1], &p->spans[k], (p->nspans - k) * sizeof(*p->spans));
        p->spans[k] = (struct span){lo, hi};
        p->nspans++;
    }
    p->covered += n;
    if (hi > p->nops)
        p->nops = hi;
    held_set(m, p);
}

/* ---------------------------------------------------------------- batches handed over */

/*
 * The keys of recently handed-over batches, direct-mapped: an event for one
 * of them is a chunk received twice (or past the ops recorded), counted as a
 * malformed batch instead of starting a batch of its own.  Lossy by design:
 * an older key may be forgotten, never confused with another.
 */
static size_t done_slot(uint32_t host, int64_t vpid, uint64_t id) { return key_hash(host, vpid, id) & (DONE_SLOTS - 1); }

static void done_note(struct cbt_asm *m, uint32_t host, int64_t vpid, uint64_t id)
{
    struct done_key *d = &m->done[done_slot(host, vpid, id)];
    d->host = host;
    d->vpid = vpid;
    d->id = id;
    d->used = true;
}

/* True (and counted) when the event belongs to a batch already handed over. */
static bool done_late(struct cbt_asm *m, uint32_t host, int64_t vpid, uint64_t id)
{
    struct done_key *d = &m->done[done_slot(host, vpid, id)];
    if (!d->used || d->host != host || d->vpid != vpid || d->id != id)
        return false;
    m->st.malformed++;
    d->used = false; /* counted once */
    return true;
}

static void pend_done(struct cbt_asm *m, struct pend *p)
{
    if (whole(p)) {
        hand_over_pend(m, p, p->malformed ? CBT_BS_MALFORMED : CBT_BS_COMPLETE, 0);
        done_note(m, p->host, p->vpid, p->id);
        pend_remove(m, p);
    } else {
        enforce_cap(m);
    }
}

/* ---------------------------------------------------------------- events */

/* Attributes for a waiting 1D batch. */
static void pend_attrs(struct cbt_asm *m, struct pend *p, const struct cbt_attr_bytes *a)
{
    uint64_t n;
    p->is1d = true;
    if (!attrs_count(a, &n) || (p->have_header && a->first + n > p->d.attrs_recorded)) {
        p->malformed = true;
        return;
    }
    if (n == 0 || p->given_up)
        return;
    uint64_t hi = a->first + n;
    if (hi > p->capattrs) {
        uint64_t c1 = p->capattrs, c2 = p->capattrs;
        bool ok = cbt_grow((void **)&p->attrs, &c1, hi, sizeof(*p->attrs)) && cbt_grow((void **)&p->aidx, &c2, hi, sizeof(*p->aidx));
        p->capattrs = c1 < c2 ? c1 : c2;
        if (!ok) {
            p->malformed = true;
            return;
        }
    }
    attrs_decode(a, n, p->attrs + a->first, p->aidx + a->first);
    p->attrs_covered += n;
    if (p->have_header && p->attrs_covered > p->d.attrs_recorded)
        p->malformed = true; /* an attribute received twice */
    held_set(m, p);
}

static void header(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h,
                   const struct cbt_ev_batch1d *d, const struct cbt_attr_bytes *a, const struct cbt_chunk_bytes *c)
{
    note_rules(m, h->rules);
    struct pend *p = pend_find(m, w->host, w->vpid, h->batch_id);
    uint64_t n;
    bool fits = chunk_count(c, &n);
    if (!p && done_late(m, w->host, w->vpid, h->batch_id))
        return;
    /* the usual batch: all of it in this event, nothing else to wait for */
    uint64_t na = 0;
    bool attrs_here = !d || (attrs_count(a, &na) && a->first == 0 && na == d->attrs_recorded &&
                             na <= CBT_EV_ATTRS_IN_HEADER && na <= d->num_attrs);
    if (!p && fits && attrs_here && c->first == 0 && n == (h->op_list ? h->ops_recorded : 0) &&
        h->ops_recorded <= h->num_ops && h->outcome != CBT_OUTCOME_PENDING && (!h->validated || h->findings == 0)) {
        struct whole x = {.w = w, .id = h->batch_id, .h = h, .state = CBT_BS_COMPLETE, .nops = n};
        if (c->src && n && (uintptr_t)c->ops % _Alignof(CUDA_MEMCPY3D_BATCH_OP) == 0) {
            /* decoded already: read where it lies */
            x.ops = (const CUDA_MEMCPY3D_BATCH_OP *)(const void *)c->ops;
            x.src = c->src;
            x.dst = c->dst;
        } else {
            if (!scratch_reserve(m, n ? n : 1))
                return;
            chunk_decode(m, c, n, m->sc_ops, m->sc_src, m->sc_dst);
            x.ops = m->sc_ops;
            x.src = m->sc_src;
            x.dst = m->sc_dst;
        }
        if (d) {
            attrs_decode(a, na, m->sc_attrs, m->sc_aidx);
            x.d = d;
            x.attrs = m->sc_attrs;
            x.aidx = m->sc_aidx;
            x.nattrs = na;
        }
        hand_over(m, &x);
        done_note(m, w->host, w->vpid, h->batch_id);
        return;
    }
    if (!p && !(p = pend_get(m, w, h->batch_id)))
        return;
    if (p->have_header) { /* the same batch id twice */
        p->malformed = true;
        pend_done(m, p);
        return;
    }
    p->have_header = true;
    p->h = *h;
    if (d) {
        p->is1d = true;
        p->d = *d;
        if (d->attrs_recorded > d->num_attrs || p->attrs_covered > d->attrs_recorded)
            p->malformed = true;
    }
    p->w = *w;
    p->w.procname = NULL;
    if (w->procname) {
        snprintf(p->procname, sizeof(p->procname), "%s", w->procname);
        p->w.procname = p->procname;
    }
    if (h->ops_recorded > h->num_ops || (!h->op_list && h->ops_recorded) ||
        (p->nops > recorded(p) && !p->given_up)) /* chunks past the ops recorded */
        p->malformed = true;
    if (p->given_up) {
        /* its earlier ops went to agg.c already */
        struct cbt_batch b;
        to_cbt_batch(&b, h, recorded(p));
        out_batch(m, &p->w, &b, NULL);
        if (m->fn) {
            struct cbt_read_batch rb = {.w = p->w, .have_header = true, .h = *h, .state = CBT_BS_GIVEN_UP};
            m->fn(m->ctx, &rb);
        }
        m->st.inline_unchecked += p->ninl;
        p->ninl = 0;
    } else if (recorded(p) > ops_limit(m)) {
        give_up(m, p); /* can never fit */
    }
    if (d)
        pend_attrs(m, p, a);
    pend_chunk(m, p, c);
    if (pend_find(m, w->host, w->vpid, h->batch_id) != p)
        return;
    if (p->given_up && p->covered >= recorded(p))
        pend_remove(m, p);
    else if (!p->given_up)
        pend_done(m, p);
}

void cbt_asm_header(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h,
                    const struct cbt_chunk_bytes *c)
{
    header(m, w, h, NULL, NULL, c);
}

void cbt_asm_header1d(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h,
                      const struct cbt_ev_batch1d *d, const struct cbt_attr_bytes *a, const struct cbt_chunk_bytes *c)
{
    header(m, w, h, d, a, c);
}

/* The pending batch an event after the header belongs to, made when it came
 * first; NULL when the batch was done already (a late event, counted by
 * done_late) or no memory is left for it. */
static struct pend *pend_for_event(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id)
{
    struct pend *p = pend_find(m, w->host, w->vpid, batch_id);
    if (!p && done_late(m, w->host, w->vpid, batch_id))
        return NULL;
    return p ? p : pend_get(m, w, batch_id);
}

void cbt_asm_chunk(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id, const struct cbt_chunk_bytes *c)
{
    struct pend *p = pend_for_event(m, w, batch_id);
    if (!p)
        return;
    pend_chunk(m, p, c);
    if (pend_find(m, w->host, w->vpid, batch_id) == p)
        pend_done(m, p);
}

void cbt_asm_attrs(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id, const struct cbt_attr_bytes *a)
{
    struct pend *p = pend_for_event(m, w, batch_id);
    if (!p)
        return;
    pend_attrs(m, p, a);
    if (pend_find(m, w->host, w->vpid, batch_id) == p && !p->given_up)
        pend_done(m, p);
}

void cbt_asm_end(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h)
{
    struct pend *p = pend_for_event(m, w, h->batch_id);
    if (!p)
        return;
    if (p->given_up)
        return; /* its header went to agg.c already: the outcome stays as recorded first */
    if (p->have_end)
        p->malformed = true;
    p->have_end = true;
    p->end = *h;
    p->end_ts_ns = w->ts_ns;
    p->has_end_ts = w->has_ts;
    pend_done(m, p);
}

void cbt_asm_inline_finding(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_finding *f)
{
    struct pend *p = pend_for_event(m, w, f->batch_id);
    if (!p)
        return;
    if (p->given_up || p->ninl >= INLINE_MAX) {
        m->st.inline_unchecked++;
        return;
    }
    if (!grow32((void **)&p->inl, &p->capinl, (uint64_t)p->ninl + 1, sizeof(*p->inl))) {
        m->st.inline_unchecked++;
        return;
    }
    p->inl[p->ninl++] = *f;
    held_set(m, p);
    pend_done(m, p);
}

void cbt_asm_finish(struct cbt_asm *m)
{
    while (m->streaming.oldest) /* summarised already */
        pend_remove(m, m->streaming.oldest);
    while (m->holding.oldest) {
        struct pend *p = m->holding.oldest;
        if (!p->have_header && !p->covered) {
            /* only a batch_end or inline findings */
            m->st.inline_unchecked += p->ninl;
        } else if (!p->have_header) {
            hand_over_pend(m, p, CBT_BS_NO_HEADER, 0);
            m->st.inline_unchecked += p->ninl;
        } else {
            enum cbt_batch_state s = p->malformed                   ? CBT_BS_MALFORMED
                                     : p->covered < recorded(p) || (p->is1d && p->attrs_covered < p->d.attrs_recorded)
                                         ? CBT_BS_INCOMPLETE
                                     : p->h.outcome == CBT_OUTCOME_PENDING && !p->have_end ? CBT_BS_PENDING
                                                                                           : CBT_BS_COMPLETE;
            hand_over_pend(m, p, s, 0);
        }
        pend_remove(m, p);
    }
    if (m->out.read_stats)
        m->out.read_stats(m->out.ctx, &m->st);
}

/* ---------------------------------------------------------------- CUDA graphs */

static struct gexec *exec_find(struct cbt_asm *m, uint32_t host, int64_t vpid, uint64_t exec)
{
    for (size_t i = 0; i < m->nexecs; i++)
        if (m->execs[i].exec == exec && m->execs[i].vpid == vpid && m->execs[i].host == host)
            return &m->execs[i];
    return NULL;
}

/* A launch: one batch of door graph_node's twin, graph_launch, holding the
 * copies of the executable graph's latest records whose size is not 0, in
 * node order, each with its attribute. */
static void launch(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_graph *g)
{
    const struct gexec *e = exec_find(m, w->host, w->vpid, g->exec);
    if (!e)
        return; /* instantiated before the session listened */
    uint64_t n = 0, na = 0;
    for (uint32_t j = 0; j < e->n; j++) {
        const struct gdef *d = def_find(m, w->host, w->vpid, e->defs[j]);
        if (d) {
            n += d->n;
            na += d->nattrs;
        }
    }
    CUDA_MEMCPY3D_BATCH_OP *ops = malloc((n ? n : 1) * sizeof *ops);
    struct cbt_operand_info *src = malloc((n ? n : 1) * sizeof *src), *dst = malloc((n ? n : 1) * sizeof *dst);
    CUmemcpyAttributes *attrs = malloc((na ? na : 1) * sizeof *attrs);
    uint64_t *aidx = malloc((na ? na : 1) * sizeof *aidx);
    int32_t device_count = 0;
    uint64_t k = 0, ka = 0;
    for (uint32_t j = 0; ops && src && dst && attrs && aidx && j < e->n; j++) {
        const struct gdef *d = def_find(m, w->host, w->vpid, e->defs[j]);
        if (!d)
            continue;
        device_count = d->device_count;
        uint64_t a = 0;
        for (uint64_t i = 0; i < d->n; i++) {
            while (a + 1 < d->nattrs && d->aidx[a + 1] <= i)
                a++;
            if (!d->ops[i].extent.width) /* size 0: disabled */
                continue;
            if (ka == 0 || memcmp(&attrs[ka - 1], &d->attrs[a], sizeof *attrs)) {
                attrs[ka] = d->attrs[a];
                aidx[ka++] = k;
            }
            ops[k] = d->ops[i];
            src[k] = d->src[i];
            dst[k] = d->dst[i];
            k++;
        }
    }
    if (ops && src && dst && attrs && aidx) {
        /* a launch the driver refused ran none of them: what it would have run is num_ops */
        const uint64_t ran = g->result == 0 ? k : 0;
        struct cbt_ev_batch h = {
            .format = CBT_EV_FORMAT, .rules = CBT_RULES_VERSION, .batch_id = g->id, .api = CBT_API_1D_V2,
            .door = CBT_DOOR_GRAPH_LAUNCH, .outcome = CBT_OUTCOME_FORWARDED, .result = g->result, .num_ops = k,
            .ops_recorded = ran, .op_list = g->exec, .stream = g->stream, .device = -1,
            .capture = CBT_CAPTURE_NONE, .fail_idx = UINT64_MAX, .tid = g->tid, .device_count = device_count,
            .driver_ns = g->driver_ns, .caller = g->caller,
        };
        struct cbt_ev_batch1d d = {.srcs = g->exec, .sizes = g->exec, .attrs = g->exec, .attrs_idxs = g->exec,
                                   .num_attrs = ka, .attrs_recorded = ran ? ka : 0};
        struct whole x = {.w = w, .id = g->id, .h = &h, .state = CBT_BS_COMPLETE, .ops = ops, .src = src,
                          .dst = dst, .nops = ran, .agg_expected = ran, .d = &d, .attrs = attrs, .aidx = aidx,
                          .nattrs = ran ? ka : 0};
        hand_over(m, &x);
    }
    free(ops), free(src), free(dst), free(attrs), free(aidx);
}

void cbt_asm_graph(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_graph *g)
{
    struct gexec *e = exec_find(m, w->host, w->vpid, g->exec);
    switch (g->kind) {
    case CBT_GRAPH_EXEC: {
        uint64_t *defs = malloc((g->ndefs ? g->ndefs : 1) * sizeof *defs);
        if (!defs)
            return;
        memcpy(defs, g->defs, g->ndefs * sizeof *defs);
        if (!e) {
            if (m->nexecs == m->cap_execs) {
                size_t c = m->cap_execs ? 2 * m->cap_execs : 8;
                struct gexec *p = realloc(m->execs, c * sizeof *p);
                if (!p) {
                    free(defs);
                    return;
                }
                m->execs = p;
                m->cap_execs = c;
            }
            e = &m->execs[m->nexecs++];
            *e = (struct gexec){.host = w->host, .vpid = w->vpid, .exec = g->exec};
        }
        free(e->defs);
        e->defs = defs;
        e->n = g->ndefs;
        if (g->id) /* the executable graph's own record it no longer runs */
            def_drop(m, w->host, w->vpid, g->id);
        break;
    }
    case CBT_GRAPH_LAUNCH:
        launch(m, w, g);
        break;
    case CBT_GRAPH_EXEC_GONE:
        if (e) {
            free(e->defs);
            *e = m->execs[--m->nexecs];
        }
        for (uint32_t i = 0; i < g->ndefs; i++) /* its own records */
            def_drop(m, w->host, w->vpid, g->defs[i]);
        break;
    case CBT_GRAPH_CAPTURED:
        /* its batch's record comes next: it says which graph the batch went into */
        if (m->ncaps == sizeof m->caps / sizeof m->caps[0])
            m->ncaps--;
        m->caps[m->ncaps++] = (struct gcap){.host = w->host, .vpid = w->vpid, .id = g->id, .graph = g->exec};
        break;
    default: /* a launch into a capture (its copies are the captured graph's), a node gone
              * (launches of graphs instantiated before still run its copies) */
        break;
    }
}

