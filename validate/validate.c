/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace validator: the rules of docs/rules.md, applied to one
 * cuMemcpy3DBatchAsync op list.
 *
 * Pure: ops in, findings out.  No driver calls, no tracing, no I/O.  A
 * struct cbt_validator holds scratch memory for the overlap sweep; it grows
 * to the largest batch seen and is reused, so checking batches of a steady
 * size allocates nothing.  One validator per thread.
 *
 * Structure of a call:
 *   1. batch-level rules (CBT_NO_OP);
 *   2. per op, in index order: its errors, then its warnings; ops without
 *      an error contribute their operand footprints to the sweep;
 *   3. hazards: sort the footprints' bounding intervals; none intersecting,
 *      there is none (up to FEW_KEYS footprints are tested pair by pair
 *      first, unsorted); else footprints that are rectangles of a pitch
 *      grid (2D, or 3D with back-to-back layers, rows not wrapping the
 *      pitch) are grouped by pitch, array boxes by CUarray;
 *      pairs inside a group come from a rectangle sweep, every other pair
 *      from the bounding-interval sweep followed by an exact row-level test;
 *      one finding at most per (op, rule), naming the lowest other op;
 *      emitted by op index.
 *
 * Cost of step 3, honestly:
 *   O(n log n) for the sorts, plus O(k log n) for the k pairs of one group
 *   that really overlap (the rectangle sweep never visits a disjoint pair:
 *   n tiles or columns scattered into one pitched matrix cost O(n log n)),
 *   plus O(K * t) where K is the number of candidate pairs of the interval
 *   sweep (a dst against a dst, or a dst against a src, of two different
 *   ops, not both of one group, whose bounding intervals intersect) and t
 *   the cost of one exact test.  src/src pairs are never enumerated (two
 *   readers are no hazard), and a pair is skipped without a test when it
 *   could not lower the "other op" already recorded.  What stays
 *   super-linear: many ops that really overlap one another (k up to n^2/2,
 *   e.g. n ops writing the same tile), and footprints outside the groups
 *   that interleave in one region (3D with gaps between layers, rows that
 *   wrap the pitch, or two different pitches over the same bytes: K up to
 *   n^2/2).  Array boxes are swept on the two axes on which they overlap
 *   least and the third is tested per pair, so boxes that meet on those two
 *   axes but not the third are candidates too.
 *   The exact test is O(log pitch) for 2D footprints (a Euclid-like search
 *   for the first row of one operand that meets a row of the other; it never
 *   enumerates rows) and O((layers_a + layers_b) * log pitch) for two 3D
 *   footprints, counting only the layers inside the intersection of their
 *   bounding intervals.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/validate.h>

__extension__ typedef unsigned __int128 cbt_u128;
__extension__ typedef __int128 cbt_i128;

#define NONE64 UINT64_MAX
#define NONE128 (~(cbt_u128)0)

/* ---- scratch ---------------------------------------------------------- */

/* A pointer footprint, normalised: D layers at base + z*L, each H rows at
 * + y*P, each row wb bytes.  P >= wb, L >= (H-1)*P + wb, all >= 1.  Rows
 * that touch are merged (P == wb collapses a layer into one row; a layer of
 * one row becomes a row of a 2D footprint). */
struct fp {
    uint64_t base, end; /* [base, end): the bounding interval */
    uint64_t wb, P, H, L, D;
};

/* An array footprint: a box of elements on one CUarray. */
struct box {
    uint64_t x0, x1, y0, y1, z0, z1;
};

struct item {
    uint64_t op;
    uint8_t side;  /* CBT_SIDE_SRC / CBT_SIDE_DST */
    uint8_t array; /* 0: struct fp in the UVA space; 1: struct box on a CUarray */
    union {
        struct fp p;
        struct box a;
    } g;
};

/* Sort key: space 0 is the flat virtual address space; an array's space is
 * its CUarray handle (never 0: a NULL array is an error, so never swept). */
struct key {
    uint64_t space, lo, hi;
    uint64_t op;  /* the op, so that the sweep touches items only to test a pair */
    uint64_t idx; /* into items, times 2, plus 1 for a dst */
};
#define KEY_ITEM(k) ((k)->idx >> 1)
#define KEY_IS_DST(k) ((k)->idx & 1)

/* Per-op hazard record: the lowest other op found so far and a location. */
struct hz {
    uint64_t dd, dd_at; /* overlap_dst_dst: this op < other op */
    uint64_t sd, sd_at; /* overlap_src_dst: this op writes, other reads */
    uint64_t self_at;   /* overlap_self; NONE64: none */
    uint8_t self;
};

struct rect {
    uint64_t r0, r1, c0, c1, f0, f1; /* sweep axis, tree axis, filter axis: [lo, hi) each */
    uint64_t grp, item;
    uint64_t at; /* pointer groups: the pitch; arrays: the CUarray handle */
};

/* A generic sort record: (k0, k1, idx). */
struct sk {
    uint64_t k0, k1, idx;
};

struct cbt_validator {
    struct item *items;
    size_t items_cap;
    struct key *keys, *tmp;
    size_t keys_cap;
    uint64_t *act_src, *act_dst;
    size_t act_cap;
    struct hz *hz;
    size_t hz_cap;
    uint64_t *src_item, *dst_item; /* per op: item index or NONE64 */
    size_t opi_cap;
    /* structured groups (see sweep_rects): per item or per rect, n_items each */
    struct rect *rects;
    struct sk *sk_a, *sk_b, *sk_c, *sk_t;
    uint64_t *irect, *rank, *lnext, *hd, *hs, *cd, *cs;
    size_t grp_cap;
    uint64_t *tree; /* two max trees of one group: 4 * n_items + 4 */
    size_t tree_cap;
    size_t reserved; /* every array above holds what a batch of this many ops needs */
};

struct cbt_validator *cbt_validator_new(void)
{
    return calloc(1, sizeof(struct cbt_validator));
}

void cbt_validator_free(struct cbt_validator *v)
{
    if (!v)
        return;
    free(v->items);
    free(v->keys);
    free(v->tmp);
    free(v->act_src);
    free(v->act_dst);
    free(v->hz);
    free(v->src_item);
    free(v->dst_item);
    free(v->rects);
    free(v->sk_a);
    free(v->sk_b);
    free(v->sk_c);
    free(v->sk_t);
    free(v->irect);
    free(v->rank);
    free(v->lnext);
    free(v->hd);
    free(v->hs);
    free(v->cd);
    free(v->cs);
    free(v->tree);
    free(v);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (*cap >= need)
        return 1;
    size_t n = *cap ? *cap : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return 0;
        n *= 2;
    }
    if (n > SIZE_MAX / elem)
        return 0;
    void *q = realloc(*p, n * elem);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* Several arrays share a capacity: grow each, record the capacity once all succeed. */
static int grow_n(void **ps[], const size_t elems[], int k, size_t *cap, size_t need)
{
    if (*cap >= need)
        return 1;
    size_t c = 0;
    for (int i = 0; i < k; i++) {
        c = *cap;
        if (!grow(ps[i], &c, need, elems[i]))
            return 0;
    }
    *cap = c;
    return 1;
}

static int scratch_reserve(struct cbt_validator *v, size_t num_ops)
{
    if (num_ops <= v->reserved) /* the common case: a batch no larger than one before */
        return 1;
    if (num_ops > SIZE_MAX / 2)
        return 0;
    size_t n2 = 2 * num_ops;
    if (!grow((void **)&v->items, &v->items_cap, n2, sizeof(struct item)))
        return 0;
    {
        void **ps[] = {(void **)&v->keys, (void **)&v->tmp};
        const size_t el[] = {sizeof(struct key), sizeof(struct key)};
        if (!grow_n(ps, el, 2, &v->keys_cap, n2))
            return 0;
    }
    {
        void **ps[] = {(void **)&v->act_src, (void **)&v->act_dst};
        const size_t el[] = {sizeof(uint64_t), sizeof(uint64_t)};
        if (!grow_n(ps, el, 2, &v->act_cap, n2))
            return 0;
    }
    if (!grow((void **)&v->hz, &v->hz_cap, num_ops, sizeof(struct hz)))
        return 0;
    {
        void **ps[] = {(void **)&v->src_item, (void **)&v->dst_item};
        const size_t el[] = {sizeof(uint64_t), sizeof(uint64_t)};
        if (!grow_n(ps, el, 2, &v->opi_cap, num_ops))
            return 0;
    }
    {
        /* classes of the pointer sweep: one per group plus one, n2 + 1 at most */
        void **ps[] = {(void **)&v->rects, (void **)&v->sk_a, (void **)&v->sk_b, (void **)&v->sk_c,
                       (void **)&v->sk_t,  (void **)&v->irect, (void **)&v->rank, (void **)&v->lnext,
                       (void **)&v->hd,    (void **)&v->hs,   (void **)&v->cd,   (void **)&v->cs};
        const size_t el[] = {sizeof(struct rect), sizeof(struct sk), sizeof(struct sk), sizeof(struct sk),
                             sizeof(struct sk),   sizeof(uint64_t),  sizeof(uint64_t),  sizeof(uint64_t),
                             sizeof(uint64_t),    sizeof(uint64_t),  sizeof(uint64_t),  sizeof(uint64_t)};
        if (!grow_n(ps, el, 12, &v->grp_cap, n2 + 1))
            return 0;
    }
    if (n2 > (SIZE_MAX - 4) / 4 || !grow((void **)&v->tree, &v->tree_cap, 4 * n2 + 4, sizeof(uint64_t)))
        return 0;
    v->reserved = num_ops;
    return 1;
}

/* ---- small helpers ------------------------------------------------------ */

static int mul_ovf(uint64_t a, uint64_t b, uint64_t *r) { return __builtin_mul_overflow(a, b, r); }
static int add_ovf(uint64_t a, uint64_t b, uint64_t *r) { return __builtin_add_overflow(a, b, r); }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static int is_ptr(const CUmemcpy3DOperand *o) { return o->type == CU_MEMCPY_OPERAND_TYPE_POINTER; }
static int is_arr(const CUmemcpy3DOperand *o) { return o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY; }

static const struct cbt_operand_info *known(const struct cbt_operand_info *i)
{
    return i && i->kind != CBT_MEM_UNKNOWN ? i : NULL;
}

/* cbt_op_elem_size, for the per-op paths below (op non-NULL). */
static inline uint32_t elem_size(const CUDA_MEMCPY3D_BATCH_OP *op, const struct cbt_operand_info *src,
                                 const struct cbt_operand_info *dst)
{
    if (is_ptr(&op->src) && is_ptr(&op->dst))
        return 1;
    if (is_arr(&op->src) && (is_arr(&op->dst) || is_ptr(&op->dst)))
        return src && src->kind == CBT_MEM_ARRAY ? src->elem_size : 0;
    if (is_ptr(&op->src) && is_arr(&op->dst))
        return dst && dst->kind == CBT_MEM_ARRAY ? dst->elem_size : 0;
    return 0; /* an operand type that is neither: nothing is copied */
}

uint32_t cbt_op_elem_size(const CUDA_MEMCPY3D_BATCH_OP *op, const struct cbt_operand_info *src,
                          const struct cbt_operand_info *dst)
{
    return op ? elem_size(op, src, dst) : 0;
}

/* Saturates at UINT64_MAX when the product does not fit. */
uint64_t cbt_op_bytes(const CUDA_MEMCPY3D_BATCH_OP *op, const struct cbt_operand_info *src,
                      const struct cbt_operand_info *dst)
{
    uint32_t es = op ? elem_size(op, src, dst) : 0;
    uint64_t r;
    if (!es)
        return 0;
    if (mul_ovf(op->extent.width, op->extent.height, &r) || mul_ovf(r, op->extent.depth, &r) ||
        mul_ovf(r, es, &r))
        return UINT64_MAX;
    return r;
}

/*
 * The footprint of a pointer operand.  Returns 0 when its end does not fit
 * in 64 bits (then *end_out is UINT64_MAX).  Extent must be non-zero and es
 * >= 1; rowLength/layerHeight 0 mean "the extent's".
 */
static inline __attribute__((always_inline)) int fp_make(struct fp *f, uint64_t ptr, uint64_t row_length,
                                                        uint64_t layer_height, uint64_t W, uint64_t H, uint64_t D,
                                                        uint64_t es)
{
    uint64_t rl = row_length ? row_length : W, lh = layer_height ? layer_height : H;
    uint64_t wb, P, L = 0, off = 0, t, end;
    if (H == 1 && D == 1) { /* one row: the general path below, shortened */
        if (mul_ovf(W, es, &wb) || mul_ovf(rl, es, &P) || add_ovf(ptr, wb, &end)) {
            f->end = UINT64_MAX;
            return 0;
        }
        f->base = ptr;
        f->end = end;
        f->wb = f->P = f->L = wb;
        f->H = f->D = 1;
        return 1;
    }
    f->end = UINT64_MAX;
    if (mul_ovf(W, es, &wb) || mul_ovf(rl, es, &P))
        return 0;
    if (mul_ovf(H - 1, P, &off) || add_ovf(off, wb, &off)) /* one layer's span */
        return 0;
    if (D > 1) {
        if (mul_ovf(lh, P, &L) || mul_ovf(D - 1, L, &t) || add_ovf(off, t, &off))
            return 0;
    }
    if (add_ovf(ptr, off, &end))
        return 0;
    f->base = ptr;
    f->end = end;
    /* Normalise (only meaningful for a well-formed operand: P >= wb, lh >= H). */
    if (H > 1 && P == wb) {
        wb *= H; /* fits: <= the span computed above */
        H = 1;
    }
    if (H == 1) {
        P = wb;
        if (D > 1) {
            H = D;
            P = L;
            D = 1;
            if (P == wb) {
                wb *= H;
                H = 1;
            }
        }
    }
    if (H == 1)
        P = wb;
    if (D == 1)
        L = (H - 1) * P + wb;
    f->wb = wb;
    f->P = P;
    f->H = H;
    f->L = L;
    f->D = D;
    return 1;
}

/* ---- the exact tests ---------------------------------------------------- */

/*
 * Smallest x >= 0 with l <= (a*x) mod m <= r, or NONE128.
 * Requires 0 <= a < m and 0 <= l <= r < m.  A Euclid-like recursion: depth
 * O(log m).
 */
static cbt_u128 mod_first_hit(uint64_t a, uint64_t m, uint64_t l, uint64_t r)
{
    if (l == 0)
        return 0;
    if (a == 0)
        return NONE128;
    cbt_u128 k = ((cbt_u128)l + a - 1) / a; /* first x with a*x >= l; a*x < m here */
    if (k * a <= r)
        return k;
    /* No multiple of a in [l, r], so r - l < a and l % a != 0.  a*x - m*y in
     * [l, r] for the smallest y with (m*y) mod a in [a - r%a, a - l%a]. */
    cbt_u128 y = mod_first_hit(m % a, a, a - r % a, a - l % a);
    if (y == NONE128)
        return NONE128;
    return ((cbt_u128)m * y + l + a - 1) / a;
}

/* Smallest x in [0, n) with (c + a*x) mod m >= t (0 < t < m), or NONE128. */
static cbt_u128 first_at_least(uint64_t c, uint64_t a, uint64_t m, uint64_t t, cbt_u128 n)
{
    a %= m;
    c %= m;
    /* (a*x) mod m in [t - c, m - 1 - c] taken mod m */
    uint64_t lo = (uint64_t)(((cbt_u128)t + m - c) % m), hi = (uint64_t)(((cbt_u128)m - 1 + m - c) % m);
    cbt_u128 x;
    if (lo <= hi) {
        x = mod_first_hit(a, m, lo, hi);
    } else {
        cbt_u128 x1 = mod_first_hit(a, m, 0, hi), x2 = mod_first_hit(a, m, lo, m - 1);
        x = x1 < x2 ? x1 : x2;
    }
    return x < n ? x : NONE128;
}

/*
 * Do two 2D row sets meet?  A: rows a + i*pa (i < ha), wa bytes each; B:
 * likewise.  On a hit *at is a byte both touch.  O(log pb).
 */
static int rows_meet(uint64_t a, uint64_t wa, uint64_t pa, uint64_t ha, uint64_t b, uint64_t wb, uint64_t pb,
                     uint64_t hb, uint64_t *at)
{
    cbt_u128 span_b = (cbt_u128)(hb - 1) * pb + wb;
    /* rows of A that reach into B's bounding interval: i in [i_lo, i_hi] */
    cbt_u128 i_lo, i_hi;
    if ((cbt_u128)a + wa > b)
        i_lo = 0;
    else
        i_lo = ((cbt_u128)b - a - wa) / pa + 1;
    if ((cbt_u128)a >= b + span_b)
        return 0;
    i_hi = ((cbt_u128)b + span_b - a - 1) / pa;
    if (i_hi > ha - 1)
        i_hi = ha - 1;
    if (i_lo > i_hi)
        return 0;
    /* t = a + i*pa - b, signed.  Row i meets B iff some j in [0, hb) has
     * j*pb in (t - wb, t + wa); within [i_lo, i_hi] the bounds on j hold. */
    cbt_i128 t0 = (cbt_i128)a + (cbt_i128)i_lo * pa - (cbt_i128)b;
    cbt_u128 i;
    if (t0 < (cbt_i128)wb || (cbt_u128)wa + wb > pb) {
        i = i_lo; /* t < wb: row 0 of B; wa + wb > pb: every window holds a multiple */
    } else {
        /* r = (t - wb) mod pb must be >= pb - wa - wb + 1 */
        uint64_t c = (uint64_t)(t0 - wb);
        cbt_u128 x = first_at_least(c, pa, pb, pb - wa - wb + 1, i_hi - i_lo + 1);
        if (x == NONE128)
            return 0;
        i = i_lo + x;
    }
    cbt_i128 t = (cbt_i128)a + (cbt_i128)i * pa - (cbt_i128)b;
    cbt_u128 j = 0;
    if (t - (cbt_i128)wb >= 0)
        j = (cbt_u128)((t - (cbt_i128)wb) / pb) + 1;
    uint64_t ra = (uint64_t)(a + i * pa), rb = (uint64_t)(b + j * pb);
    *at = max64(ra, rb);
    return 1;
}

/* First layer of f whose span ends after lo. */
static uint64_t first_layer(const struct fp *f, uint64_t lo)
{
    uint64_t span = (f->H - 1) * f->P + f->wb;
    if (lo < f->base || lo - f->base < span)
        return 0;
    return (lo - f->base - span) / f->L + 1;
}

/* Exact intersection of two pointer footprints: merge their layers inside the
 * intersection of the bounding intervals, test each overlapping layer pair. */
static int fp_meet(const struct fp *A, const struct fp *B, uint64_t *at)
{
    if (A->end <= B->base || B->end <= A->base)
        return 0;
    uint64_t lo = max64(A->base, B->base), hi = min64(A->end, B->end);
    uint64_t sa = (A->H - 1) * A->P + A->wb, sb = (B->H - 1) * B->P + B->wb;
    uint64_t za = first_layer(A, lo), zb = first_layer(B, lo);
    while (za < A->D && zb < B->D) {
        uint64_t la = A->base + za * A->L, lb = B->base + zb * B->L;
        if (la >= hi || lb >= hi)
            break;
        uint64_t ea = la + sa, eb = lb + sb;
        if (la < eb && lb < ea && rows_meet(la, A->wb, A->P, A->H, lb, B->wb, B->P, B->H, at))
            return 1;
        if (ea <= eb)
            za++;
        else
            zb++;
    }
    return 0;
}

static int box_meet(const struct box *a, const struct box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1 && a->z0 < b->z1 && b->z0 < a->z1;
}

static int item_meet(const struct item *p, const struct item *q, uint64_t space, uint64_t *at)
{
    if (p->array) {
        *at = space; /* the CUarray handle */
        return box_meet(&p->g.a, &q->g.a);
    }
    return fp_meet(&p->g.p, &q->g.p, at);
}

/* ---- emitting ----------------------------------------------------------- */

struct out {
    struct cbt_finding *f;
    size_t cap, n;
};

static void emit(struct out *o, enum cbt_rule rule, enum cbt_side side, uint64_t op, uint64_t other,
                 uint64_t value, uint64_t limit)
{
    if (o->n < o->cap) {
        struct cbt_finding *f = &o->f[o->n];
        memset(f, 0, sizeof *f); /* padding too: findings may be recorded as raw bytes */
        f->rule = (uint16_t)rule;
        f->severity = (uint8_t)cbt_rules[rule].severity;
        f->side = (uint8_t)side;
        f->op = op;
        f->other_op = other;
        f->value = value;
        f->limit = limit;
    }
    o->n++;
}

/* ---- per-op rules ------------------------------------------------------- */

static int extent_ok(const CUDA_MEMCPY3D_BATCH_OP *op)
{
    return op->extent.width && op->extent.height && op->extent.depth;
}

/* Errors of one pointer operand; returns how many. */
static inline __attribute__((always_inline)) int check_pointer(struct out *o, uint64_t i, enum cbt_side side,
                                                              const CUDA_MEMCPY3D_BATCH_OP *op,
                                                              const CUmemcpy3DOperand *x,
                                                              const struct cbt_operand_info *info, uint32_t es,
                                                              int ext_ok, const struct fp *f, int fits)
{
    int errs = 0;
    uint64_t ptr = x->op.ptr.ptr, rl = x->op.ptr.rowLength, lh = x->op.ptr.layerHeight;
    if (!ptr) {
        emit(o, CBT_RULE_pointer_null, side, i, CBT_NO_OP, 0, 0);
        errs++;
    }
    if (rl && rl < op->extent.width) {
        emit(o, CBT_RULE_row_length_too_small, side, i, CBT_NO_OP, rl, op->extent.width);
        errs++;
    }
    if (lh && lh < op->extent.height) {
        emit(o, CBT_RULE_layer_height_too_small, side, i, CBT_NO_OP, lh, op->extent.height);
        errs++;
    }
    /* info: known() already applied by the caller; ext_ok: extent_ok(op) */
    if (errs || !info)
        return errs;
    if (info->kind == CBT_MEM_UNMAPPED) {
        emit(o, CBT_RULE_pointer_unmapped, side, i, CBT_NO_OP, ptr, 0);
        return 1;
    }
    if ((info->kind == CBT_MEM_DEVICE || info->kind == CBT_MEM_MANAGED) && info->alloc_size && es && ext_ok) {
        /* f, fits: fp_make of this operand (computed once per op by the caller) */
        if (ptr < info->alloc_base) {
            emit(o, CBT_RULE_device_out_of_bounds, side, i, CBT_NO_OP, ptr, info->alloc_base);
            return 1;
        }
        /* value: the footprint's end as an offset into the allocation; limit: its size */
        uint64_t end_off = fits ? f->end - info->alloc_base : UINT64_MAX;
        if (end_off > info->alloc_size) {
            emit(o, CBT_RULE_device_out_of_bounds, side, i, CBT_NO_OP, end_off, info->alloc_size);
            return 1;
        }
    }
    return 0;
}

static int check_array(struct out *o, uint64_t i, enum cbt_side side, const CUDA_MEMCPY3D_BATCH_OP *op,
                       const CUmemcpy3DOperand *x, const struct cbt_operand_info *info, int ext_ok)
{
    if (!x->op.array.array) {
        emit(o, CBT_RULE_array_null, side, i, CBT_NO_OP, 0, 0);
        return 1;
    }
    /* info: known() already applied by the caller; ext_ok: extent_ok(op) */
    if (!info || info->kind != CBT_MEM_ARRAY || !info->array_width || !ext_ok)
        return 0;
    const uint64_t off[3] = {x->op.array.offset.x, x->op.array.offset.y, x->op.array.offset.z};
    const uint64_t ext[3] = {op->extent.width, op->extent.height, op->extent.depth};
    const uint64_t dim[3] = {info->array_width, info->array_height ? info->array_height : 1,
                             info->array_depth ? info->array_depth : 1};
    for (int k = 0; k < 3; k++) {
        uint64_t e;
        if (add_ovf(off[k], ext[k], &e))
            e = UINT64_MAX;
        if (e > dim[k]) {
            emit(o, CBT_RULE_array_out_of_bounds, side, i, CBT_NO_OP, e, dim[k]);
            return 1;
        }
    }
    return 0;
}

static inline __attribute__((always_inline)) void warn_lochint(struct out *o, uint64_t i, enum cbt_side side,
                                                              const CUmemcpy3DOperand *x,
                                                              const struct cbt_operand_info *info, int device_count)
{
    uint32_t type = (uint32_t)x->op.ptr.locHint.type;
    int id = x->op.ptr.locHint.id;
    if (type > CBT_LOC_HOST_NUMA_CURRENT) {
        emit(o, CBT_RULE_lochint_invalid, side, i, CBT_NO_OP, type, CBT_LOC_HOST_NUMA_CURRENT);
        return;
    }
    if (type == CBT_LOC_DEVICE && (id < 0 || (device_count > 0 && id >= device_count))) {
        emit(o, CBT_RULE_lochint_invalid, side, i, CBT_NO_OP, (uint64_t)(int64_t)id,
             device_count > 0 ? (uint64_t)device_count : 0);
        return;
    }
    /* info: known() already applied by the caller */
    if (type != CBT_LOC_NONE && info && (info->kind == CBT_MEM_DEVICE || info->kind == CBT_MEM_HOST_PINNED))
        emit(o, CBT_RULE_lochint_ignored, side, i, CBT_NO_OP, type, info->kind);
}

/* Adds op i's operand x to the sweep, its key at *k; returns the item index or
 * NONE64.  f, fits: fp_make of a pointer operand (when es != 0); f may
 * already be the new item's own footprint. */
static inline __attribute__((always_inline)) uint64_t add_item(struct cbt_validator *v, size_t *n_items,
                                                              struct key *k, uint64_t i, enum cbt_side side,
                                                              const CUDA_MEMCPY3D_BATCH_OP *op,
                                                              const CUmemcpy3DOperand *x, uint32_t es,
                                                              const struct fp *f, int fits)
{
    struct item *it = &v->items[*n_items];
    it->op = i;
    it->side = (uint8_t)side;
    if (is_ptr(x)) {
        if (!es) /* pointer <-> array with the array's element size unknown */
            return NONE64;
        it->array = 0;
        if (!fits)
            return NONE64; /* footprint wraps the address space: left out */
        if (f != &it->g.p)
            it->g.p = *f;
        k->space = 0;
        k->lo = it->g.p.base;
        k->hi = it->g.p.end;
    } else {
        struct box *b = &it->g.a;
        it->array = 1;
        b->x0 = x->op.array.offset.x;
        b->y0 = x->op.array.offset.y;
        b->z0 = x->op.array.offset.z;
        if (add_ovf(b->x0, op->extent.width, &b->x1) || add_ovf(b->y0, op->extent.height, &b->y1) ||
            add_ovf(b->z0, op->extent.depth, &b->z1))
            return NONE64;
        k->space = (uint64_t)(uintptr_t)x->op.array.array;
        k->lo = b->x0;
        k->hi = b->x1;
    }
    k->op = i;
    k->idx = (uint64_t)*n_items << 1 | (side == CBT_SIDE_DST);
    return (*n_items)++;
}

/* ---- sort: bottom-up merge sort on (space, lo, idx), no allocation ------- */

static int key_lt(const struct key *a, const struct key *b)
{
    if (a->space != b->space)
        return a->space < b->space;
    if (a->lo != b->lo)
        return a->lo < b->lo;
    return a->idx < b->idx;
}

/*
 * A bottom-up merge sort of n elements of TYPE by LT, ping-ponging between a
 * and tmp (no allocation); returns whichever holds the result.  Stable.
 */
#define CBT_DEFINE_MERGE_SORT(NAME, TYPE, LT)                                                   \
    static TYPE *NAME(TYPE *a, TYPE *tmp, size_t n)                                             \
    {                                                                                           \
        for (size_t w = 1; w < n; w *= 2) {                                                     \
            for (size_t s = 0; s < n; s += 2 * w) {                                             \
                size_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n;            \
                size_t i = s, j = m, k = s;                                                     \
                while (i < m && j < e)                                                          \
                    tmp[k++] = LT(&a[j], &a[i]) ? a[j++] : a[i++];                              \
                while (i < m)                                                                   \
                    tmp[k++] = a[i++];                                                          \
                while (j < e)                                                                   \
                    tmp[k++] = a[j++];                                                          \
            }                                                                                   \
            TYPE *t = a;                                                                        \
            a = tmp;                                                                            \
            tmp = t;                                                                            \
            if (w > SIZE_MAX / 2)                                                               \
                break;                                                                          \
        }                                                                                       \
        return a;                                                                               \
    }

CBT_DEFINE_MERGE_SORT(sort_keys_bottom_up, struct key, key_lt)

/*
 * Keys often come in a few sorted (or reverse-sorted) runs: ops listed in
 * address order give one run of sources and one of destinations.  Find the
 * runs (reversing descending ones in place; keys are distinct, so that is
 * exact), glue neighbours that are already in order, and merge the few that
 * remain; more than MAX_RUNS runs: the bottom-up sort.  The order is total,
 * so the result is the same either way.
 */
#define MAX_RUNS 32

/* Many runs: sort the sources [0, ns) and the destinations [ns, n) apart,
 * then merge the two (often cheaply: sources and destinations tend to lie in
 * different regions). */
static struct key *sort_keys_halves(struct key *a, struct key *tmp, size_t n, size_t ns)
{
    if (ns == 0 || ns >= n)
        return sort_keys_bottom_up(a, tmp, n);
    struct key *x = sort_keys_bottom_up(a, tmp, ns), *y = sort_keys_bottom_up(a + ns, tmp + ns, n - ns);
    if (y == x + ns && key_lt(&x[ns - 1], &y[0]))
        return x;
    /* Into the buffer x is not in.  y may lie in it (at + ns): each write
     * lands before the next unread key of y, so nothing is overwritten early. */
    struct key *out = x == a ? tmp : a;
    size_t i = 0, j = 0, k = 0, m = n - ns;
    while (i < ns && j < m)
        out[k++] = key_lt(&y[j], &x[i]) ? y[j++] : x[i++];
    while (i < ns)
        out[k++] = x[i++];
    if (out + k != y + j)
        while (j < m)
            out[k++] = y[j++];
    return out;
}

static struct key *sort_keys(struct key *a, struct key *tmp, size_t n, size_t ns)
{
    size_t b[MAX_RUNS + 1], r = 0;
    if (n < 2)
        return a;
    for (size_t s = 0; s < n;) {
        size_t e = s + 1;
        if (e < n && key_lt(&a[e], &a[s])) {
            while (e + 1 < n && key_lt(&a[e + 1], &a[e]))
                e++;
            e++;
            for (size_t i = s, j = e - 1; i < j; i++, j--) {
                struct key t = a[i];
                a[i] = a[j];
                a[j] = t;
            }
        } else {
            while (e < n && !key_lt(&a[e], &a[e - 1]))
                e++;
        }
        /* glue to the previous run when it is in order with it */
        if (r && key_lt(&a[s - 1], &a[s])) {
            b[r] = e;
        } else {
            if (r == MAX_RUNS)
                return sort_keys_halves(a, tmp, n, ns);
            b[++r] = e;
        }
        if (r == 1)
            b[0] = 0;
        s = e;
    }
    /* b[0..r]: run boundaries; merge neighbours pairwise until one is left */
    while (r > 1) {
        size_t q = 0;
        for (size_t x = 0; x < r; x += 2) {
            size_t s = b[x], m = b[x + 1], e = x + 2 <= r ? b[x + 2] : m;
            size_t i = s, j = m, k = s;
            while (i < m && j < e)
                tmp[k++] = key_lt(&a[j], &a[i]) ? a[j++] : a[i++];
            while (i < m)
                tmp[k++] = a[i++];
            while (j < e)
                tmp[k++] = a[j++];
            b[++q] = e;
        }
        b[0] = 0;
        r = q;
        struct key *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* ---- structured groups ---------------------------------------------------
 *
 * Two 2D pointer footprints with the same row pitch P whose rows do not wrap
 * (col + wb <= P, col = base % P) are rectangles [col, col + wb) x [row0,
 * row0 + H) on the (col, row = addr / P) grid, and they share a byte iff the
 * rectangles intersect (a byte has one (row, col)).  A 3D footprint whose
 * layers follow each other in the row sequence (L == H*P) is such a 2D
 * footprint of H*D rows.  Such footprints are grouped by P; pairs inside a
 * group are found by a rectangle sweep, never through bounding intervals.
 * Array boxes of one CUarray form a group too: swept on two of their three
 * axes (the two on which the boxes overlap least), the third tested per pair.
 */
static int sk_lt(const struct sk *a, const struct sk *b)
{
    if (a->k0 != b->k0)
        return a->k0 < b->k0;
    if (a->k1 != b->k1)
        return a->k1 < b->k1;
    return a->idx < b->idx;
}

CBT_DEFINE_MERGE_SORT(sort_sk, struct sk, sk_lt)

/* ---- the sweep ---------------------------------------------------------- */

/* Record a hazard already known to be one: dst item p meets item q of another op at `at`. */
static void record(struct cbt_validator *v, uint64_t p, uint64_t q, uint64_t at)
{
    const struct item *P = &v->items[p], *Q = &v->items[q];
    if (Q->side == CBT_SIDE_DST) {
        uint64_t lo = min64(P->op, Q->op), hi = max64(P->op, Q->op);
        struct hz *h = &v->hz[lo];
        if (h->dd > hi) {
            h->dd = hi;
            h->dd_at = at;
        }
    } else {
        struct hz *h = &v->hz[P->op];
        if (h->sd > Q->op) {
            h->sd = Q->op;
            h->sd_at = at;
        }
    }
}

/* A dst item p against an item q of another op. */
static void pair(struct cbt_validator *v, const struct key *kp, uint64_t p, uint64_t q)
{
    const struct item *P = &v->items[p], *Q = &v->items[q];
    uint64_t at;
    if (Q->side == CBT_SIDE_DST) {
        uint64_t lo = min64(P->op, Q->op), hi = max64(P->op, Q->op);
        if (v->hz[lo].dd <= hi)
            return;
    } else if (v->hz[P->op].sd <= Q->op) {
        return;
    }
    if (item_meet(P, Q, kp->space, &at))
        record(v, p, q, at);
}

/*
 * The bounding-interval sweep over pointer footprints (keys [0, n0), sorted
 * by start).  Active keys are kept in one list per class (0: footprints in no
 * group, g + 1: group g), dsts and srcs apart; a key of group g skips group
 * g's lists, whose pairs the rectangle sweep finds.  Every live entry visited
 * is a candidate pair; an expired one is unlinked once.
 */
struct lists {
    uint64_t *head; /* per class: first key, or NONE64 */
    uint64_t *cls;  /* classes whose list is non-empty */
    size_t n;
};

static void visit(struct cbt_validator *v, const struct key *k, size_t x, struct lists *L, uint64_t skip,
                  int cur_dst)
{
    const struct key *cur = &k[x];
    uint64_t *nx = v->lnext;
    for (size_t a = 0; a < L->n;) {
        uint64_t c = L->cls[a];
        if (c == skip) {
            a++;
            continue;
        }
        uint64_t *pp = &L->head[c];
        while (*pp != NONE64) {
            uint64_t y = *pp;
            if (k[y].hi <= cur->lo) {
                *pp = nx[y];
                continue;
            }
            if (k[y].op != cur->op) {
                if (cur_dst)
                    pair(v, cur, KEY_ITEM(cur), KEY_ITEM(&k[y]));
                else
                    pair(v, cur, KEY_ITEM(&k[y]), KEY_ITEM(cur));
            }
            pp = &nx[y];
        }
        if (L->head[c] == NONE64)
            L->cls[a] = L->cls[--L->n];
        else
            a++;
    }
}

static void sweep_ptr(struct cbt_validator *v, const struct key *k, size_t n0, size_t ncls)
{
    struct lists D = {v->hd, v->cd, 0}, S = {v->hs, v->cs, 0};
    for (size_t c = 0; c < ncls; c++)
        D.head[c] = S.head[c] = NONE64;
    for (size_t x = 0; x < n0; x++) {
        const struct key *cur = &k[x];
        uint64_t r = v->irect[KEY_ITEM(cur)];
        uint64_t c = r == NONE64 ? 0 : v->rects[r].grp + 1;
        uint64_t skip = c ? c : NONE64;
        int dst = (int)KEY_IS_DST(cur);
        visit(v, k, x, &D, skip, dst);
        if (dst)
            visit(v, k, x, &S, skip, dst);
        struct lists *L = dst ? &D : &S;
        if (L->head[c] == NONE64)
            L->cls[L->n++] = c;
        v->lnext[x] = L->head[c];
        L->head[c] = x;
    }
}

/* Max segment tree over leaves [0, pw): report leaves < lim whose value > t. */
struct tq {
    struct cbt_validator *v;
    const uint64_t *t;
    size_t pw, lim;
    uint64_t thr;
    const struct sk *seg; /* the side's rects sorted by tree-axis start: leaf l is seg[l] */
    const struct rect *q; /* the querying rect */
    int q_dst;
};

static void tree_set(uint64_t *t, size_t pw, size_t leaf, uint64_t val)
{
    size_t i = pw + leaf;
    t[i] = val;
    for (i >>= 1; i; i >>= 1)
        t[i] = max64(t[2 * i], t[2 * i + 1]);
}

static void hit(struct tq *c, const struct rect *o)
{
    const struct rect *q = c->q;
    struct cbt_validator *v = c->v;
    if (v->items[o->item].op == v->items[q->item].op || !(q->f0 < o->f1 && o->f0 < q->f1))
        return;
    uint64_t at = q->at;
    if (!v->items[q->item].array)
        at = max64(q->r0, o->r0) * q->at + max64(q->c0, o->c0);
    if (c->q_dst)
        record(v, q->item, o->item, at);
    else
        record(v, o->item, q->item, at);
}

static void tree_report(struct tq *c, size_t node, size_t lo, size_t hi)
{
    if (lo >= c->lim || c->t[node] <= c->thr)
        return;
    if (node >= c->pw) {
        hit(c, &c->v->rects[c->seg[node - c->pw].idx]);
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    tree_report(c, 2 * node, lo, mid);
    tree_report(c, 2 * node + 1, mid, hi);
}

static size_t pow2_at_least(size_t m)
{
    size_t p = 1;
    while (p < m)
        p *= 2;
    return p;
}

/* First position in seg[0, m) whose k1 (tree-axis start) is >= x. */
static size_t lower_bound(const struct sk *seg, size_t m, uint64_t x)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (seg[mid].k1 < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*
 * Rectangle sweep of every group: rects by sweep-axis start, expiring by
 * sweep-axis end; the active ones sit in two max trees (dsts, srcs) over
 * their rank by tree-axis start, valued by their tree-axis end.  A new rect
 * reports the active dsts (and, for a dst, srcs) that start before its end
 * and end after its start: O(log n) per rect plus O(log n) per pair found.
 */
static void sweep_rects(struct cbt_validator *v, size_t nr)
{
    struct rect *R = v->rects;
    struct sk *ev = v->sk_a, *ex = v->sk_b, *cs = v->sk_c;
    for (size_t r = 0; r < nr; r++) {
        ev[r] = (struct sk){R[r].grp, R[r].r0, r};
        ex[r] = (struct sk){R[r].grp, R[r].r1, r};
        cs[r] = (struct sk){R[r].grp << 1 | (v->items[R[r].item].side == CBT_SIDE_DST), R[r].c0, r};
    }
    ev = sort_sk(ev, v->sk_t, nr);
    struct sk *spare = ev == v->sk_a ? v->sk_t : v->sk_a;
    ex = sort_sk(ex, spare, nr);
    spare = ex == v->sk_b ? spare : v->sk_b;
    cs = sort_sk(cs, spare, nr);
    for (size_t p = 0; p < nr; p++)
        v->rank[cs[p].idx] = p;

    for (size_t gs = 0; gs < nr;) {
        uint64_t g = ev[gs].k0;
        size_t ge = gs;
        while (ge < nr && ev[ge].k0 == g)
            ge++;
        size_t ms = 0; /* srcs come first in cs */
        while (gs + ms < ge && !(cs[gs + ms].k0 & 1))
            ms++;
        size_t md = ge - gs - ms;
        const struct sk *seg_s = cs + gs, *seg_d = cs + gs + ms;
        size_t pws = pow2_at_least(ms ? ms : 1), pwd = pow2_at_least(md ? md : 1);
        uint64_t *ts = v->tree, *td = v->tree + 2 * pws;
        memset(ts, 0, 2 * pws * sizeof *ts);
        memset(td, 0, 2 * pwd * sizeof *td);
        size_t y = gs;
        for (size_t x = gs; x < ge; x++) {
            const struct rect *q = &R[ev[x].idx];
            for (; y < ge && ex[y].k1 <= q->r0; y++) {
                uint64_t o = ex[y].idx, pos = v->rank[o];
                if (pos >= gs + ms)
                    tree_set(td, pwd, pos - gs - ms, 0);
                else
                    tree_set(ts, pws, pos - gs, 0);
            }
            int dst = v->items[q->item].side == CBT_SIDE_DST;
            struct tq c = {v, td, pwd, lower_bound(seg_d, md, q->c1), q->c0, seg_d, q, dst};
            tree_report(&c, 1, 0, pwd);
            if (dst) {
                c.t = ts;
                c.pw = pws;
                c.lim = lower_bound(seg_s, ms, q->c1);
                c.seg = seg_s;
                tree_report(&c, 1, 0, pws);
            }
            uint64_t pos = v->rank[ev[x].idx];
            if (dst)
                tree_set(td, pwd, pos - gs - ms, q->c1);
            else
                tree_set(ts, pws, pos - gs, q->c1);
        }
        gs = ge;
    }
}

/* A pointer footprint as a rectangle of its pitch's grid; 0 if it is none. */
static int fp_rect(const struct fp *f, struct rect *r)
{
    uint64_t H = f->H;
    if (H < 2 || f->P <= f->wb)
        return 0;
    if (f->D > 1) {
        if (f->L / f->P != H || f->L % f->P)
            return 0;
        H *= f->D; /* fits: (H*D - 1)*P + wb is the footprint's span */
    }
    uint64_t col = f->base % f->P;
    if (col + f->wb > f->P)
        return 0;
    r->r0 = f->base / f->P;
    r->r1 = r->r0 + H;
    r->c0 = col;
    r->c1 = col + f->wb;
    r->f0 = 0;
    r->f1 = 1;
    r->at = f->P;
    return 1;
}

/* Are the boxes of keys [s, e) (one CUarray) chained on axis a (1: y, 2: z),
 * each ending before the next starts?  Then no two of them meet. */
static int box_chain(const struct cbt_validator *v, const struct key *k, size_t s, size_t e, int a)
{
    for (size_t x = s + 1; x < e; x++) {
        const struct box *p = &v->items[KEY_ITEM(&k[x - 1])].g.a, *q = &v->items[KEY_ITEM(&k[x])].g.a;
        if (a == 1 ? p->y1 > q->y0 : p->z1 > q->z0)
            return 0;
    }
    return 1;
}

/*
 * 1 when no two swept footprints can meet (keys sorted): in every space the
 * keys' intervals follow each other without overlap (for a CUarray, the
 * boxes in key order may instead follow each other on y or on z).  Bounding
 * intervals apart means footprints apart, so the sweep would find nothing.
 */
static int all_apart(const struct cbt_validator *v, const struct key *k, size_t n)
{
    for (size_t s = 0, e; s < n; s = e) {
        uint64_t sp = k[s].space;
        for (e = s + 1; e < n && k[e].space == sp && k[e - 1].hi <= k[e].lo; e++)
            ;
        if (e < n && k[e].space == sp) {
            if (sp == 0)
                return 0;
            while (e < n && k[e].space == sp)
                e++;
            if (!box_chain(v, k, s, e, 1) && !box_chain(v, k, s, e, 2))
                return 0;
        }
    }
    return 1;
}

/*
 * The same answer for a few keys, unsorted: 1 when no two keys of one space
 * have intersecting intervals (then, sorted, each would end before the next
 * starts: intervals are never empty).  0 says only that all_apart must look.
 * n(n-1)/2 tests: up to FEW_KEYS keys (four ops), fewer instructions than
 * sorting them.
 */
#define FEW_KEYS 8

static int few_apart(const struct key *k, size_t n)
{
    for (size_t x = 1; x < n; x++)
        for (size_t y = 0; y < x; y++)
            if (k[x].lo < k[y].hi && k[y].lo < k[x].hi && k[x].space == k[y].space)
                return 0;
    return 1;
}

static void sweep(struct cbt_validator *v, struct key *k, size_t n_items)
{
    size_t n0 = 0, nr = 0, npr;
    uint64_t grp = 0;
    while (n0 < n_items && k[n0].space == 0)
        n0++;
    for (size_t i = 0; i < n_items; i++)
        v->irect[i] = NONE64;

    /* Pointer groups: rects keyed by pitch, numbered in pitch order. */
    for (size_t x = 0; x < n0; x++) {
        uint64_t it = KEY_ITEM(&k[x]);
        struct rect *r = &v->rects[nr];
        if (fp_rect(&v->items[it].g.p, r)) {
            r->item = it;
            v->sk_a[nr] = (struct sk){r->at, 0, nr};
            nr++;
        }
    }
    npr = nr;
    {
        struct sk *s = sort_sk(v->sk_a, v->sk_t, npr);
        for (size_t a = 0; a < npr; a++) {
            if (a && s[a].k0 != s[a - 1].k0)
                grp++;
            v->rects[s[a].idx].grp = grp;
            v->irect[v->rects[s[a].idx].item] = s[a].idx;
        }
        if (npr)
            grp++;
    }
    /* Array groups: one per CUarray, keys [s, e) sorted by space. */
    for (size_t s = n0, e; s < n_items; s = e) {
        double sum[3] = {0, 0, 0};
        uint64_t lo[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX}, hi[3] = {0, 0, 0};
        for (e = s; e < n_items && k[e].space == k[s].space; e++) {
            const struct box *b = &v->items[KEY_ITEM(&k[e])].g.a;
            const uint64_t bl[3] = {b->x0, b->y0, b->z0}, bh[3] = {b->x1, b->y1, b->z1};
            for (int d = 0; d < 3; d++) {
                sum[d] += (double)(bh[d] - bl[d]);
                lo[d] = min64(lo[d], bl[d]);
                hi[d] = max64(hi[d], bh[d]);
            }
        }
        /* The axis on which the boxes overlap most (extent covered per unit of
         * range) is only filtered on; the sweep runs on the other two. */
        int f = 0;
        double best = -1;
        for (int d = 0; d < 3; d++) {
            double dens = sum[d] / (double)(hi[d] - lo[d]);
            if (dens > best) {
                best = dens;
                f = d;
            }
        }
        int a0 = f == 0 ? 1 : 0, a1 = f == 2 ? 1 : 2;
        for (size_t x = s; x < e; x++) {
            uint64_t it = KEY_ITEM(&k[x]);
            const struct box *b = &v->items[it].g.a;
            const uint64_t bl[3] = {b->x0, b->y0, b->z0}, bh[3] = {b->x1, b->y1, b->z1};
            struct rect *r = &v->rects[nr];
            r->r0 = bl[a0];
            r->r1 = bh[a0];
            r->c0 = bl[a1];
            r->c1 = bh[a1];
            r->f0 = bl[f];
            r->f1 = bh[f];
            r->at = k[x].space;
            r->grp = grp;
            r->item = it;
            v->irect[it] = nr++;
        }
        grp++;
    }
    sweep_ptr(v, k, n0, grp + 1);
    sweep_rects(v, nr);
}

int cbt_op_well_formed(const CUDA_MEMCPY3D_BATCH_OP *op) { return cbt_op_well_formed_inline(op); }

int cbt_attr_well_formed(const CUmemcpyAttributes *a, size_t k, size_t idx, size_t prev, size_t count,
                         int device_count)
{
    return cbt_attr_well_formed_inline(a, k, idx, prev, count, device_count);
}

void cbt_copy_op(CUDA_MEMCPY3D_BATCH_OP *op, CUdeviceptr dst, CUdeviceptr src, size_t size,
                 const CUmemcpyAttributes *attr)
{
    memset(op, 0, sizeof *op);
    op->src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op->src.op.ptr.ptr = src;
    op->src.op.ptr.locHint = attr->srcLocHint;
    op->dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op->dst.op.ptr.ptr = dst;
    op->dst.op.ptr.locHint = attr->dstLocHint;
    op->extent.width = size;
    op->extent.height = 1;
    op->extent.depth = 1;
    op->srcAccessOrder = attr->srcAccessOrder;
    op->flags = attr->flags;
}

/* The arguments of a 1D batch, then its attributes; returns non-zero when
 * the driver would reject the batch before reading a copy. */
static int check_copies_args(struct out *o, const struct cbt_batch_view *b)
{
    size_t before = o->n;
    unsigned nulls = (!b->dsts) | (!b->srcs) << 1 | (!b->sizes) << 2 | (!b->attrs) << 3 | (!b->attrs_idxs) << 4;
    if (b->num_ops == 0)
        emit(o, CBT_RULE_num_ops_zero, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, 0, 1);
    if (nulls)
        emit(o, CBT_RULE_copy_array_null, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, nulls, 0);
    if (b->num_attrs == 0)
        emit(o, CBT_RULE_num_attrs_zero, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, 0, 1);
    else if (b->num_attrs > b->num_ops && b->num_ops)
        emit(o, CBT_RULE_num_attrs_above_count, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, b->num_attrs, b->num_ops);
    if (b->abi & CBT_ABI_STREAM_ON_STACK)
        emit(o, CBT_RULE_stream_on_stack, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, (uint64_t)(uintptr_t)b->stream, 0);
    else if (b->stream == NULL)
        emit(o, CBT_RULE_stream_null, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, 0, 0);
    else if (b->stream == CU_STREAM_LEGACY)
        emit(o, CBT_RULE_stream_legacy, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, (uint64_t)(uintptr_t)b->stream, 0);
    if (b->abi & CBT_ABI_FAIL_IDX_IS_STREAM)
        emit(o, CBT_RULE_fail_idx_is_stream, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, 0, 0);
    if (o->n != before)
        return 1;
    /* Each attribute: its index, then what it says (other_op: k). */
    size_t na = b->attrs_read < b->num_attrs ? b->attrs_read : b->num_attrs;
    for (size_t k = 0; k < na; k++) {
        const CUmemcpyAttributes *a = &b->attrs[k];
        uint64_t idx = b->attrs_idxs[k];
        if (k == 0 && idx != 0)
            emit(o, CBT_RULE_attrs_idx_first_not_zero, CBT_SIDE_NONE, CBT_NO_OP, k, idx, 0);
        else if (k > 0 && idx <= b->attrs_idxs[k - 1])
            emit(o, CBT_RULE_attrs_idxs_not_start_indices, CBT_SIDE_NONE, CBT_NO_OP, k, idx,
                 (uint64_t)b->attrs_idxs[k - 1] + 1);
        else if (idx >= b->num_ops)
            emit(o, CBT_RULE_attrs_idxs_not_start_indices, CBT_SIDE_NONE, CBT_NO_OP, k, idx, b->num_ops);
        const uint32_t order = (uint32_t)a->srcAccessOrder;
        if (order < CBT_ORDER_STREAM || order > CBT_ORDER_ANY)
            emit(o, CBT_RULE_attr_access_order_invalid, CBT_SIDE_NONE, CBT_NO_OP, k, order, CBT_ORDER_ANY);
        if (a->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)
            emit(o, CBT_RULE_attr_flags_invalid, CBT_SIDE_NONE, CBT_NO_OP, k, a->flags,
                 CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
        const CUmemLocation *l[2] = {&a->srcLocHint, &a->dstLocHint};
        const enum cbt_side sides[2] = {CBT_SIDE_SRC, CBT_SIDE_DST};
        for (int s = 0; s < 2; s++) {
            uint32_t type = (uint32_t)l[s]->type;
            int id = l[s]->id;
            if (type > CBT_LOC_HOST_NUMA_CURRENT)
                emit(o, CBT_RULE_attr_lochint_invalid, sides[s], CBT_NO_OP, k, type, CBT_LOC_HOST_NUMA_CURRENT);
            else if (type == CBT_LOC_DEVICE && (id < 0 || (b->device_count > 0 && id >= b->device_count)))
                emit(o, CBT_RULE_attr_lochint_invalid, sides[s], CBT_NO_OP, k, (uint64_t)(int64_t)id,
                     b->device_count > 0 ? (uint64_t)b->device_count : 0);
        }
    }
    return o->n != before;
}

/* ---- the driver's answer ------------------------------------------------- */

/* What the result says of the batch: refused because its stream was being
 * captured (the H200 answers 900 and the capture goes on without the copy). */
static void check_result(struct out *o, uint32_t result)
{
    if (result == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
        emit(o, CBT_RULE_refused_in_capture, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, result, 0);
}

size_t cbt_validate_result(uint32_t result, struct cbt_finding *out, size_t cap)
{
    struct out o = {out, out ? cap : 0, 0};
    check_result(&o, result);
    return o.n;
}

/* ---- the entry point ------------------------------------------------------ */

static size_t validate_call(struct cbt_validator *v, const struct cbt_batch_view *b, struct cbt_finding *out,
                            size_t cap);

size_t cbt_validate(struct cbt_validator *v, const struct cbt_batch_view *b, struct cbt_finding *out, size_t cap)
{
    size_t n = validate_call(v, b, out, cap);
    if (!b || n == (size_t)-1 || !b->has_result)
        return n;
    return n + cbt_validate_result(b->result, out && n < cap ? out + n : NULL, out && n < cap ? cap - n : 0);
}

/* The batch as passed: every rule but those about the driver's answer.
 * Long on purpose: one block per rule or group of rules, read top to bottom. */
static size_t validate_call(struct cbt_validator *v, const struct cbt_batch_view *b, struct cbt_finding *out,
                            size_t cap)
{
    struct out o = {out, out ? cap : 0, 0};
    if (!b)
        return 0;
    struct cbt_validator *own = NULL;
    if (!v)
        v = own = cbt_validator_new();

    if (b->copies) {
        /* The driver reads no copy of a batch it rejects on its arguments or attributes. */
        if (check_copies_args(&o, b)) {
            cbt_validator_free(own);
            return o.n;
        }
    } else {
        if (b->num_ops == 0)
            emit(&o, CBT_RULE_num_ops_zero, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, 0, 1);
        if (!b->ops && b->num_ops > 0)
            emit(&o, CBT_RULE_op_list_null, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, 0, 0);
        if (b->flags)
            emit(&o, CBT_RULE_flags_nonzero, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, b->flags, 0);
        if (b->stream == NULL)
            emit(&o, CBT_RULE_stream_null, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, 0, 0);
        else if (b->stream == CU_STREAM_LEGACY)
            emit(&o, CBT_RULE_stream_legacy, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, (uint64_t)(uintptr_t)b->stream, 0);
    }
    size_t n = b->num_ops;
    if (b->partial && b->num_read < n) {
        n = b->num_read;
        emit(&o, CBT_RULE_ops_not_read, CBT_SIDE_NONE, CBT_NO_OP, CBT_NO_OP, n, b->num_ops);
    }
    if (n == 0 || !b->ops) {
        cbt_validator_free(own);
        return o.n;
    }

    int have_scratch = v && scratch_reserve(v, n);
    size_t n_items = 0, ns = 0, nd = 0; /* keys: srcs at [0, ns), dsts at [n, n + nd) */

    for (size_t i = 0; i < n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        const struct cbt_operand_info *si = b->src_info ? &b->src_info[i] : NULL;
        const struct cbt_operand_info *di = b->dst_info ? &b->dst_info[i] : NULL;
        const uint32_t es = elem_size(op, si, di);
        const uint32_t order = (uint32_t)op->srcAccessOrder;
        int errs = 0;

        const int ext_ok = extent_ok(op);
        if (!ext_ok && b->copies) {
            emit(&o, CBT_RULE_copy_size_zero, CBT_SIDE_NONE, i, CBT_NO_OP, 0, 1);
            errs++;
        } else if (!ext_ok) {
            uint64_t dim = !op->extent.width ? 0 : !op->extent.height ? 1 : 2;
            emit(&o, CBT_RULE_extent_zero, CBT_SIDE_NONE, i, CBT_NO_OP, 0, dim);
            errs++;
        }
        if (order < CBT_ORDER_STREAM || order > CBT_ORDER_ANY) {
            emit(&o, CBT_RULE_access_order_invalid, CBT_SIDE_NONE, i, CBT_NO_OP, order, CBT_ORDER_ANY);
            errs++;
        }
        if (op->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) {
            emit(&o, CBT_RULE_op_flags_invalid, CBT_SIDE_NONE, i, CBT_NO_OP, op->flags,
                 CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
            errs++;
        }
        const struct cbt_operand_info *ks = known(si), *kd = known(di);
        /* each operand a pointer (sp, dp), an array (sa, da) or of an invalid type (neither) */
        const int sp = is_ptr(&op->src), dp = is_ptr(&op->dst);
        const int sa = !sp && is_arr(&op->src), da = !dp && is_arr(&op->dst);
        /* pointer footprints, once per op: for the bounds check and the sweep;
         * made in the two items the op may add (the dst's moves down when the
         * src adds none) */
        struct fp local[2];
        struct fp *const fs = have_scratch ? &v->items[n_items].g.p : &local[0];
        struct fp *const fd = have_scratch ? &v->items[n_items + 1].g.p : &local[1];
        int fits[2] = {0, 0};
        if (es && ext_ok) {
            if (sp)
                fits[0] = fp_make(fs, op->src.op.ptr.ptr, op->src.op.ptr.rowLength, op->src.op.ptr.layerHeight,
                                  op->extent.width, op->extent.height, op->extent.depth, es);
            if (dp)
                fits[1] = fp_make(fd, op->dst.op.ptr.ptr, op->dst.op.ptr.rowLength, op->dst.op.ptr.layerHeight,
                                  op->extent.width, op->extent.height, op->extent.depth, es);
        }
        if (!sp && !sa) {
            emit(&o, CBT_RULE_operand_type_invalid, CBT_SIDE_SRC, i, CBT_NO_OP, (uint32_t)op->src.type,
                 CU_MEMCPY_OPERAND_TYPE_ARRAY);
            errs++;
        }
        if (!dp && !da) {
            emit(&o, CBT_RULE_operand_type_invalid, CBT_SIDE_DST, i, CBT_NO_OP, (uint32_t)op->dst.type,
                 CU_MEMCPY_OPERAND_TYPE_ARRAY);
            errs++;
        }
        if (sp)
            errs += check_pointer(&o, i, CBT_SIDE_SRC, op, &op->src, ks, es, ext_ok, fs, fits[0]);
        else if (sa)
            errs += check_array(&o, i, CBT_SIDE_SRC, op, &op->src, ks, ext_ok);
        if (dp)
            errs += check_pointer(&o, i, CBT_SIDE_DST, op, &op->dst, kd, es, ext_ok, fd, fits[1]);
        else if (da)
            errs += check_array(&o, i, CBT_SIDE_DST, op, &op->dst, kd, ext_ok);
        if (sa && da && si && di && si->kind == CBT_MEM_ARRAY && di->kind == CBT_MEM_ARRAY && si->elem_size &&
            di->elem_size && si->elem_size != di->elem_size) {
            emit(&o, CBT_RULE_array_element_size_mismatch, CBT_SIDE_NONE, i, CBT_NO_OP, si->elem_size,
                 di->elem_size);
            errs++;
        }

        /* warnings (a 1D batch's locHints are its attributes', checked above) */
        if (!b->copies) {
            if (sp)
                warn_lochint(&o, i, CBT_SIDE_SRC, &op->src, ks, b->device_count);
            if (dp)
                warn_lochint(&o, i, CBT_SIDE_DST, &op->dst, kd, b->device_count);
        }
        if (sp && ks) {
            if (ks->kind == CBT_MEM_HOST_PAGEABLE && order == CBT_ORDER_STREAM)
                emit(&o, CBT_RULE_pageable_stream_order, CBT_SIDE_SRC, i, CBT_NO_OP, order, 0);
            if (ks->kind == CBT_MEM_DEVICE && order == CBT_ORDER_DURING_API_CALL)
                emit(&o, CBT_RULE_during_api_call_device_source, CBT_SIDE_SRC, i, CBT_NO_OP, order, 0);
        }

        if (have_scratch) {
            uint64_t s = NONE64, d = NONE64;
            if (!errs) {
                s = add_item(v, &n_items, &v->keys[ns], i, CBT_SIDE_SRC, op, &op->src, es, fs, fits[0]);
                d = add_item(v, &n_items, &v->keys[n + nd], i, CBT_SIDE_DST, op, &op->dst, es, fd, fits[1]);
                ns += s != NONE64;
                nd += d != NONE64;
            }
            v->src_item[i] = s;
            v->dst_item[i] = d;
        }
    }

    if (!have_scratch) {
        cbt_validator_free(own);
        return (size_t)-1;
    }

    if (ns < n && nd)
        memmove(&v->keys[ns], &v->keys[n], nd * sizeof *v->keys);
    /* Footprints all apart (the common case): no hazard of any kind, overlap_self included. */
    if (n_items <= FEW_KEYS && few_apart(v->keys, n_items)) {
        cbt_validator_free(own);
        return o.n;
    }
    struct key *k = sort_keys(v->keys, v->tmp, n_items, ns);
    if (!all_apart(v, k, n_items)) {
        for (size_t i = 0; i < n; i++) {
            struct hz *h = &v->hz[i];
            h->dd = h->sd = NONE64;
            h->self = 0;
            /* overlap_self: per op, O(1) pairs. */
            uint64_t s = v->src_item[i], d = v->dst_item[i], at;
            if (s == NONE64 || d == NONE64)
                continue;
            const struct item *S = &v->items[s], *D = &v->items[d];
            if (S->array != D->array)
                continue;
            uint64_t space = 0;
            if (S->array) {
                space = (uint64_t)(uintptr_t)b->ops[i].src.op.array.array;
                if (space != (uint64_t)(uintptr_t)b->ops[i].dst.op.array.array)
                    continue;
            }
            if (item_meet(S, D, space, &at)) {
                h->self = 1;
                h->self_at = at;
            }
        }
        sweep(v, k, n_items);
        for (size_t i = 0; i < n; i++) {
            const struct hz *h = &v->hz[i];
            if (h->dd != NONE64)
                emit(&o, CBT_RULE_overlap_dst_dst, CBT_SIDE_DST, i, h->dd, h->dd_at, 0);
            if (h->sd != NONE64)
                emit(&o, CBT_RULE_overlap_src_dst, CBT_SIDE_DST, i, h->sd, h->sd_at, 0);
            if (h->self)
                emit(&o, CBT_RULE_overlap_self, CBT_SIDE_NONE, i, i, h->self_at, 0);
        }
    }
    cbt_validator_free(own);
    return o.n;
}

const char *cbt_version(void) { return PACKAGE_VERSION; }
