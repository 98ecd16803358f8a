/* SPDX-License-Identifier: MIT */
/*
 * The steady state's operand lookups (declared in recents.h): a batch
 * whose every operand lies in one of the thread's recents (the ranges and
 * arrays its latest batches used: the last two ranges and the last array
 * first, then a few older ones, out of line) gets its dictionary indices
 * (refs) from them, with
 * no question asked of the driver; the ops before the page their list ends
 * in are checked for form on the way, as the driver reads them.  The
 * keeping of the recents (after a batch that learned, at a refresh) is
 * here too.
 *
 * Reading no further than the driver: it reads op i + 1 (copy i + 1 of a
 * 1D batch) only once op i passed its checks, and so do these loops, which
 * stop at the first op they cannot take.  The ops from the list's last page
 * on are not checked for form (recents.h: cbt_ops_to_check); the 1D runs
 * read a few copies ahead only within the pages of the copy the driver
 * reads.
 *
 * Tried and not kept: testing a batch whose sources lie in one range and
 * destinations in another a run of ops at a time, with no branch per op
 * (the tests of the run or-ed together): as many instructions an op, and
 * slower than a branch an op, which the steady state predicts.  Asking
 * for the op list's first lines (prefetch) before the lookup and again
 * when the driver returns: no gain on the H200 (bench/results/lookup-ab).
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "recents.h"
#include "record.h"

/* The older recents (recents.h): apart, so that a thread whose batches
 * use the same buffers runs none of this. */
static __attribute__((noinline)) const struct cbt_recent *recent_more(const struct cbt_cache *c, uint64_t a)
{
    for (int i = 0; i < CBT_MORE_RECENTS; i++)
        if (a - c->more[i].lo < c->more[i].len)
            return &c->more[i];
    return NULL;
}

static __attribute__((noinline)) const struct cbt_recent *array_more(const struct cbt_cache *c, uint64_t h)
{
    for (int i = 0; i < CBT_MORE_ARRAYS; i++)
        if (c->array_more[i].len && c->array_more[i].lo == h)
            return &c->array_more[i];
    return NULL;
}

/* ---- keeping them ---- */

/* Pushes the recents `was` (the latest first; a copy, not `more` itself)
 * behind the new ones `now`: into more[k], the latest first, skipping what
 * `now` or an earlier one holds and what the dictionary no longer holds (an
 * entry given to another operand). */
static void recents_push(struct cbt_dict *d, const struct cbt_recent *now, int n_now, const struct cbt_recent *was,
                         int n_was, struct cbt_recent *more, int k)
{
    int m = 0;
    for (int i = 0; i < n_was && m < k; i++) {
        const struct cbt_recent r = was[i];
        if (!r.len)
            continue;
        bool dup = false;
        for (int j = 0; j < n_now; j++)
            dup |= (now[j].lo == r.lo) & (now[j].len != 0);
        for (int j = 0; j < m; j++)
            dup |= more[j].lo == r.lo;
        if (!dup && cbt_dict_keep(d, r.ref, r.serial))
            more[m++] = r;
    }
    for (; m < k; m++)
        more[m] = (struct cbt_recent){0};
}

void cbt_recents_update(struct cbt_cache *c, struct cbt_dict *d, const struct cbt_recent r[2],
                        const struct cbt_recent *ra)
{
    struct cbt_recent was[2 + CBT_MORE_RECENTS];
    was[0] = c->recent[0], was[1] = c->recent[1];
    memcpy(was + 2, c->more, sizeof c->more);
    c->recent[0] = r[0];
    c->recent[1] = r[1];
    recents_push(d, c->recent, 2, was, 2 + CBT_MORE_RECENTS, c->more, CBT_MORE_RECENTS);
    struct cbt_recent wa[1 + CBT_MORE_ARRAYS];
    wa[0] = c->array_recent;
    memcpy(wa + 1, c->array_more, sizeof c->array_more);
    c->array_recent = *ra;
    recents_push(d, &c->array_recent, 1, wa, 1 + CBT_MORE_ARRAYS, c->array_more, CBT_MORE_ARRAYS);
}

void cbt_recents_keep(struct cbt_cache *c, struct cbt_dict *d)
{
    for (int i = 0; i < 2; i++)
        if (c->recent[i].len && !cbt_dict_keep(d, c->recent[i].ref, c->recent[i].serial))
            c->recent[i].len = 0;
    if (c->array_recent.len && !cbt_dict_keep(d, c->array_recent.ref, c->array_recent.serial))
        c->array_recent.len = 0;
    struct cbt_recent was[CBT_MORE_RECENTS];
    memcpy(was, c->more, sizeof was);
    recents_push(d, NULL, 0, was, CBT_MORE_RECENTS, c->more, CBT_MORE_RECENTS);
    struct cbt_recent wa[CBT_MORE_ARRAYS];
    memcpy(wa, c->array_more, sizeof wa);
    recents_push(d, NULL, 0, wa, CBT_MORE_ARRAYS, c->array_more, CBT_MORE_ARRAYS);
}

/* The recent range holding pointer a (NULL: none). */
static inline __attribute__((always_inline)) const struct cbt_recent *recent_of(const struct cbt_cache *c, uint64_t a)
{
    if (a - c->recent[0].lo < c->recent[0].len)
        return &c->recent[0];
    if (a - c->recent[1].lo < c->recent[1].len)
        return &c->recent[1];
    return recent_more(c, a);
}

/* The recent CUarray h, not NULL (NULL: none). */
static inline __attribute__((always_inline)) const struct cbt_recent *array_of(const struct cbt_cache *c, CUarray h)
{
    if (!h)
        return NULL;
    if (c->array_recent.len && (uint64_t)(uintptr_t)h == c->array_recent.lo)
        return &c->array_recent;
    return array_more(c, (uint64_t)(uintptr_t)h);
}

/* ---- the per-op loop ---- */

/* One side of a steady op: in a recent range (and, form: well formed, as
 * cbt_op_well_formed_inline checks an operand); its ref. */
static inline __attribute__((always_inline)) bool steady_side(const struct cbt_cache *c, const CUmemcpy3DOperand *x,
                                                              const CUDA_MEMCPY3D_BATCH_OP *op, uint16_t *ref,
                                                              bool form)
{
    if (cbt_likely(x->type == CU_MEMCPY_OPERAND_TYPE_POINTER)) {
        /* rowLength, layerHeight: 0 (packed) or at least the extent's (which is not 0) */
        if (form && cbt_unlikely((x->op.ptr.rowLength - 1 < op->extent.width - 1) |
                                 (x->op.ptr.layerHeight - 1 < op->extent.height - 1)))
            return false;
        const struct cbt_recent *r = recent_of(c, (uint64_t)x->op.ptr.ptr);
        if (!r)
            return false;
        *ref = r->ref;
        return true;
    }
    if (x->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
        const struct cbt_recent *r = array_of(c, x->op.array.array);
        if (!r)
            return false;
        *ref = r->ref;
        return true;
    }
    return false;
}

/* An op's own fields well formed, as cbt_op_well_formed_inline checks them
 * (its operands': steady_side): true when not. */
static inline __attribute__((always_inline)) bool op_misformed(const CUDA_MEMCPY3D_BATCH_OP *op)
{
    const unsigned order = (unsigned)op->srcAccessOrder;
    return (op->extent.width == 0) | (op->extent.height == 0) | (op->extent.depth == 0) |
           (order - CU_MEMCPY_SRC_ACCESS_ORDER_STREAM >
            CU_MEMCPY_SRC_ACCESS_ORDER_ANY - CU_MEMCPY_SRC_ACCESS_ORDER_STREAM) |
           ((op->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) != 0);
}

/* The checks of cbt_op_well_formed_inline (form) and the recents' lookups,
 * fused: each op is read once, and the loop stops at the first it cannot take. */
static inline __attribute__((always_inline)) bool refs_steady(const struct cbt_cache *c, size_t n,
                                                              const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                                                              bool form)
{
    for (size_t i = 0; i < n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
        if ((form && cbt_unlikely(op_misformed(op))) || !steady_side(c, &op->src, op, &refs[2 * i], form) ||
            !steady_side(c, &op->dst, op, &refs[2 * i + 1], form))
            return false;
    }
    return true;
}

/* ---- the runs of ops like the first ----
 *
 * The ops of a steady batch mostly differ in their two pointers, or an
 * array operand's offset, alone, and those pointers lie in the ranges the
 * first op's do.  So once op 0 has passed the loop above, op i is taken
 * when its operands are of op 0's types, its pointers lie in op 0's two
 * ranges and its arrays are op 0's (its refs are then op 0's) and, before
 * the list's last page, when its bytes other than the pointers, the array
 * offsets and the operands' padding equal op 0's: every field the form
 * checks read is among them, so it is as well formed as op 0.  The first
 * op that differs, and the ops after it, go through the loop above.  Fewer
 * instructions an op than that loop (bench/profile). */

/* Op 0's two sides as ranges (an array: its handle, a range of one) and refs. */
struct first {
    uint64_t lo_s, len_s, lo_d, len_d;
    uint32_t pair; /* refs[0] and refs[1], as one store */
};

/* One side of op 0, once the loop above took it; arr: an array (its type
 * is the caller's test). */
static inline __attribute__((always_inline)) bool first_side(const struct cbt_cache *c, const CUmemcpy3DOperand *x,
                                                             bool arr, uint64_t *lo, uint64_t *len, uint16_t *ref)
{
    const struct cbt_recent *r = arr ? array_of(c, x->op.array.array) : recent_of(c, (uint64_t)x->op.ptr.ptr);
    if (arr) { /* a recent array: its handle, a range of one */
        if (!r)
            return false;
        *lo = r->lo, *len = 1, *ref = r->ref;
        return true;
    }
    if (!r)
        return false;
    *lo = r->lo, *len = r->len, *ref = r->ref;
    return true;
}

static inline __attribute__((always_inline)) bool first_of(const struct cbt_cache *c, const CUDA_MEMCPY3D_BATCH_OP *op0,
                                                           struct first *f, bool as, bool ad)
{
    uint16_t two[2];
    if (!first_side(c, &op0->src, as, &f->lo_s, &f->len_s, &two[0]) ||
        !first_side(c, &op0->dst, ad, &f->lo_d, &f->len_d, &two[1]))
        return false;
    memcpy(&f->pair, two, sizeof f->pair);
    return true;
}

/* Whether op's pointers (or array handles) lie in op 0's ranges (not
 * tested: that its operands are of op 0's types). */
static inline __attribute__((always_inline)) bool in_first(const struct first *f, const CUDA_MEMCPY3D_BATCH_OP *op)
{
    _Static_assert(offsetof(CUmemcpy3DOperand, op.ptr.ptr) == offsetof(CUmemcpy3DOperand, op.array.array),
                   "a pointer and an array handle at the same place");
    return (uint64_t)op->src.op.ptr.ptr - f->lo_s < f->len_s && (uint64_t)op->dst.op.ptr.ptr - f->lo_d < f->len_d;
}

static inline CUmemcpy3DOperandType type_of(bool arr)
{
    return arr ? CU_MEMCPY_OPERAND_TYPE_ARRAY : CU_MEMCPY_OPERAND_TYPE_POINTER;
}

#if defined(__SSE2__)
#include <emmintrin.h>

_Static_assert(sizeof(CUDA_MEMCPY3D_BATCH_OP) == 112, "CUDA_MEMCPY3D_BATCH_OP: 7 blocks of 16 bytes");
_Static_assert(offsetof(CUDA_MEMCPY3D_BATCH_OP, src) == 0 && offsetof(CUDA_MEMCPY3D_BATCH_OP, dst) == 40 &&
                   offsetof(CUmemcpy3DOperand, op.ptr.ptr) == 8 && offsetof(CUmemcpy3DOperand, op.array.offset) == 16 &&
                   sizeof(CUmemcpy3DOperand) == 40,
               "the pointers (array handles) at bytes 8 and 48, the array offsets at 16..39 and 56..79, the "
               "operands' padding at 4 and 44");
#define BLOCK(b, at) _mm_loadu_si128((const __m128i *)((b) + (at)))

/* The ops from `from` to n - 1 (before the list's last page) like op 0
 * (taken: their refs written); returns the first that is not, or n.  SSE2
 * (every x86-64), the bytes compared 16 at a time, the blocks written out
 * so that op 0's stay in registers; as, ad: op 0's source, destination is
 * an array (constants: one loop each, the masks folded in). */
static inline __attribute__((always_inline)) size_t like_first(const struct first *f, size_t from, size_t n,
                                                               const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                                                               bool as, bool ad)
{
    /* not compared: src's padding (bytes 4..7) and pointer or handle
     * (8..15), dst's (44..47, 48..55); an array's offset (src 16..39, dst
     * 56..79).  The handle is in_first's test. */
    const __m128i k0 = _mm_set_epi32(0, 0, 0, -1),
                  k2 = as ? _mm_set_epi32(0, -1, 0, 0) : _mm_set_epi32(0, -1, -1, -1),
                  k3 = _mm_set_epi32(-1, -1, 0, 0);
    const struct first g = *f; /* in registers: the refs' stores could alias *f */
    const char *b0 = (const char *)&ops[0];
    const __m128i t0 = _mm_and_si128(BLOCK(b0, 0), k0), t1 = BLOCK(b0, 16), t2 = _mm_and_si128(BLOCK(b0, 32), k2),
                  t3 = _mm_and_si128(BLOCK(b0, 48), k3), t4 = BLOCK(b0, 64), t5 = BLOCK(b0, 80), t6 = BLOCK(b0, 96);
    size_t i = from;
    for (; i < n; i++) {
        const char *b = (const char *)&ops[i];
        __m128i d = _mm_xor_si128(_mm_and_si128(BLOCK(b, 0), k0), t0);
        if (!as) /* else bytes 16..31: the source's offset */
            d = _mm_or_si128(d, _mm_xor_si128(BLOCK(b, 16), t1));
        d = _mm_or_si128(d, _mm_xor_si128(_mm_and_si128(BLOCK(b, 32), k2), t2));
        if (!ad) { /* else bytes 48..79: the destination's handle and offset */
            d = _mm_or_si128(d, _mm_xor_si128(_mm_and_si128(BLOCK(b, 48), k3), t3));
            d = _mm_or_si128(d, _mm_xor_si128(BLOCK(b, 64), t4));
        }
        d = _mm_or_si128(d, _mm_xor_si128(BLOCK(b, 80), t5));
        d = _mm_or_si128(d, _mm_xor_si128(BLOCK(b, 96), t6));
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) != 0xFFFF || !in_first(&g, &ops[i]))
            break;
        memcpy(&refs[2 * i], &g.pair, sizeof g.pair);
    }
    return i;
}
#undef BLOCK
#else
static inline size_t like_first(const struct first *f, size_t from, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops,
                                uint16_t *refs, bool as, bool ad)
{
    (void)f, (void)n, (void)ops, (void)refs, (void)as, (void)ad;
    return from; /* the loop above, op by op */
}
#endif

/* The same with AVX2 (where the CPU has it: cbt_recents_avx2), 32 bytes at
 * a time: fewer instructions an op (bench/profile).  Bytes 80..95 are
 * compared twice (the last block overlaps the one before).  The ymm
 * registers are cleared on the way out (vzeroupper, the compiler's), so the
 * program's SSE code pays no transition. */
CBT_HOT bool cbt_recents_avx2; /* recents.h */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_LIKE_AVX2 1
#define BLOCK32(b, at) _mm256_loadu_si256((const __m256i *)((b) + (at)))

__attribute__((target("avx2"))) static inline __attribute__((always_inline)) size_t
like_first_avx2(const struct first *f, size_t from, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                bool as, bool ad)
{
    /* dwords compared (-1) or not (0), as like_first: bytes 0..31 (src's
     * type; its padding, pointer or handle not; 16..31 unless an array's
     * offset), 32..63 (32..39 unless src's offset; dst's type; its padding
     * and pointer not; 56..63 unless dst's offset), 64..95 (64..79 unless
     * dst's offset), 80..111 */
    const __m256i ka = _mm256_set_epi32(as ? 0 : -1, as ? 0 : -1, as ? 0 : -1, as ? 0 : -1, 0, 0, 0, -1),
                  kb = _mm256_set_epi32(ad ? 0 : -1, ad ? 0 : -1, 0, 0, 0, -1, as ? 0 : -1, as ? 0 : -1);
    const struct first g = *f;
    const char *b0 = (const char *)&ops[0];
    const __m256i ta = _mm256_and_si256(BLOCK32(b0, 0), ka), tb = _mm256_and_si256(BLOCK32(b0, 32), kb),
                  tc = BLOCK32(b0, 64), td = BLOCK32(b0, 80);
    size_t i = from;
    for (; i < n; i++) {
        const char *b = (const char *)&ops[i];
        __m256i d = _mm256_or_si256(_mm256_xor_si256(_mm256_and_si256(BLOCK32(b, 0), ka), ta),
                                    _mm256_xor_si256(_mm256_and_si256(BLOCK32(b, 32), kb), tb));
        if (!ad) /* else bytes 64..79: the destination's offset */
            d = _mm256_or_si256(d, _mm256_xor_si256(BLOCK32(b, 64), tc));
        d = _mm256_or_si256(d, _mm256_xor_si256(BLOCK32(b, 80), td));
        if (!_mm256_testz_si256(d, d) || !in_first(&g, &ops[i]))
            break;
        memcpy(&refs[2 * i], &g.pair, sizeof g.pair);
    }
    return i;
}
#undef BLOCK32

__attribute__((target("avx2"), noinline)) static size_t like_first_avx2_pointers(const struct first *f, size_t n,
                                                                                const CUDA_MEMCPY3D_BATCH_OP *ops,
                                                                                uint16_t *refs)
{
    return like_first_avx2(f, 1, n, ops, refs, false, false);
}

__attribute__((target("avx2"), noinline)) static size_t like_first_avx2_arrays(const struct first *f, size_t n,
                                                                              const CUDA_MEMCPY3D_BATCH_OP *ops,
                                                                              uint16_t *refs, bool as, bool ad)
{
    return as && ad ? like_first_avx2(f, 1, n, ops, refs, true, true)
           : as     ? like_first_avx2(f, 1, n, ops, refs, true, false)
                    : like_first_avx2(f, 1, n, ops, refs, false, true);
}

/* The CPU asked once, at load. */
__attribute__((constructor)) static void recents_init(void)
{
    __builtin_cpu_init();
    cbt_recents_avx2 = __builtin_cpu_supports("avx2");
}
#endif

/* The ops from `from` to n - 1 on the list's last page (their form left to
 * the driver) whose operands are of op 0's types and in op 0's ranges
 * (taken: their refs written); returns the first that is not, or n. */
static inline __attribute__((always_inline)) size_t in_first_ranges(const struct first *f, size_t from, size_t n,
                                                                    const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                                                                    bool as, bool ad)
{
    const struct first g = *f;
    size_t i = from;
    for (; i < n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
        if (op->src.type != type_of(as) || op->dst.type != type_of(ad) || !in_first(&g, op))
            break;
        memcpy(&refs[2 * i], &g.pair, sizeof g.pair);
    }
    return i;
}

/* The loop above for the ops the runs did not take: apart, so that the
 * runs' code lies together (the driver's work between two batches evicts
 * it, and each 64-byte line run is fetched again: bench/profile). */
static __attribute__((noinline)) bool others_checked(const struct cbt_cache *c, size_t n,
                                                     const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs)
{
    return refs_steady(c, n, ops, refs, true);
}

static __attribute__((noinline)) bool others_unchecked(const struct cbt_cache *c, size_t n,
                                                       const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs)
{
    return refs_steady(c, n, ops, refs, false);
}

/* A batch of two ops or more whose op 0's source is an array (as) or a
 * pointer, its destination likewise (ad): op 0 by the loop above, the runs
 * like it, then the loop above for what they left. */
static inline __attribute__((always_inline)) bool runs(const struct cbt_cache *c, size_t n,
                                                       const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                                                       size_t checked, bool as, bool ad, bool *uniform)
{
    struct first f;
    if (!refs_steady(c, 1, ops, refs, checked > 0) || !first_of(c, &ops[0], &f, as, ad))
        return false;
    size_t i = 1;
    if (checked > 1) {
#ifdef HAVE_LIKE_AVX2
        if (cbt_likely(cbt_recents_avx2))
            i = !as && !ad ? like_first_avx2_pointers(&f, checked, ops, refs)
                           : like_first_avx2_arrays(&f, checked, ops, refs, as, ad);
        else
#endif
            i = like_first(&f, 1, checked, ops, refs, as, ad);
        if (cbt_unlikely(i < checked)) {
            *uniform = false; /* the loop above may give other refs */
            if (!others_checked(c, checked - i, ops + i, refs + 2 * i))
                return false;
        }
        i = checked;
    }
    i = in_first_ranges(&f, i, n, ops, refs, as, ad);
    if (cbt_likely(i == n))
        return true;
    *uniform = false;
    return others_unchecked(c, n - i, ops + i, refs + 2 * i);
}

/* Pointer to pointer, the usual batch. */
static __attribute__((noinline)) bool runs_steady(const struct cbt_cache *c, size_t n,
                                                  const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs, size_t checked,
                                                  bool *uniform)
{
    return runs(c, n, ops, refs, checked, false, false, uniform);
}

/* An array on either side, or both (apart: the pointers' code stays as it is). */
static __attribute__((noinline)) bool runs_steady_arrays(const struct cbt_cache *c, size_t n,
                                                         const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                                                         size_t checked, bool as, bool ad, bool *uniform)
{
    return as && ad ? runs(c, n, ops, refs, checked, true, true, uniform)
           : as     ? runs(c, n, ops, refs, checked, true, false, uniform)
                    : runs(c, n, ops, refs, checked, false, true, uniform);
}

CBT_HOT_FN bool cbt_refs_steady(const struct cbt_cache *c, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                                size_t checked, bool *uniform)
{
    /* op 0 is read whatever its form (the driver reads it) */
    *uniform = true; /* the runs say where they could not take an op like op 0 */
    if (cbt_likely(n == 1)) /* the usual batch: the loop below, once, its form as checked says */
        return !(checked && cbt_unlikely(op_misformed(ops))) && steady_side(c, &ops->src, ops, &refs[0], checked) &&
               steady_side(c, &ops->dst, ops, &refs[1], checked);
    if (n > 1) {
        const CUmemcpy3DOperandType ts = ops[0].src.type, td = ops[0].dst.type;
        const bool as = ts == CU_MEMCPY_OPERAND_TYPE_ARRAY, ad = td == CU_MEMCPY_OPERAND_TYPE_ARRAY;
        if (cbt_likely(ts == CU_MEMCPY_OPERAND_TYPE_POINTER && td == CU_MEMCPY_OPERAND_TYPE_POINTER))
            return runs_steady(c, n, ops, refs, checked, uniform);
        if ((as || ts == CU_MEMCPY_OPERAND_TYPE_POINTER) && (ad || td == CU_MEMCPY_OPERAND_TYPE_POINTER))
            return runs_steady_arrays(c, n, ops, refs, checked, as, ad, uniform);
        *uniform = false;
    }
    return refs_steady(c, checked, ops, refs, true) &&
           refs_steady(c, n - checked, ops + checked, refs + 2 * checked, false);
}

/* ---- 1D: the call's own arrays ---- */

/* Copy by copy, from `from`: each size not 0, each pointer in a recent range. */
static inline __attribute__((always_inline)) bool copies_steady(const struct cbt_cache *c, size_t from, size_t n,
                                                                const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                                                                const size_t *sizes, uint16_t *refs)
{
    if (from >= n)
        return true;
    /* the first copy's two ranges (often the recents' two, or two older
     * ones where the thread goes round a few buffers) in locals, which the
     * compiler keeps in registers: the refs stored are uint16_t, as the
     * cache's own are, and it would load the ranges again for every
     * pointer (5 instructions a copy fewer in bench/profile; the 3D loop,
     * short of registers, gained nothing); a pointer outside them looks
     * through all the recents */
    const struct cbt_recent *rs = recent_of(c, (uint64_t)srcs[from]), *rd = recent_of(c, (uint64_t)dsts[from]);
    if (!rs || !rd)
        return false;
    const uint64_t lo0 = rs->lo, len0 = rs->len, lo1 = rd->lo, len1 = rd->len;
    const uint16_t ref0 = rs->ref, ref1 = rd->ref;
    for (size_t i = from; i < n; i++) {
        if (cbt_unlikely(!sizes[i]))
            return false;
        const uint64_t s = (uint64_t)srcs[i], d = (uint64_t)dsts[i];
        /* NULL lies in no recent range */
        const struct cbt_recent *r;
        if (s - lo0 < len0)
            refs[2 * i] = ref0;
        else if ((r = recent_of(c, s)))
            refs[2 * i] = r->ref;
        else
            return false;
        if (d - lo1 < len1)
            refs[2 * i + 1] = ref1;
        else if ((r = recent_of(c, d)))
            refs[2 * i + 1] = r->ref;
        else
            return false;
    }
    return true;
}

#ifdef HAVE_LIKE_AVX2
/*
 * The copies like copy 0 (their source in copy 0's source's range, their
 * destination in its destination's, their size not 0), four at a time:
 * their refs are copy 0's.  Reading no further than the driver: four
 * copies are read together only where none of the three arrays crosses a
 * page among them (the driver reads copy i's entries, so their page is
 * mapped, and the others of that page with them); across a page, and
 * wherever four are not all like copy 0, copy by copy as above.  Unsigned
 * range tests with AVX2's signed compare: x - lo < len is, both sides'
 * top bit flipped, x - (lo ^ 2^63) < len ^ 2^63 signed.
 */
/* the 8-byte entries from p to the end of its page (recents.h: CBT_PAGE_MIN) */
#define PAGE_LEFT(p) ((CBT_PAGE_MIN - ((uintptr_t)(p) & (CBT_PAGE_MIN - 1))) / 8u)

/* The loop above, apart, for the copies a run did not take. */
static __attribute__((noinline)) bool copies_others(const struct cbt_cache *c, size_t from, size_t to,
                                                    const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                                                    const size_t *sizes, uint16_t *refs)
{
    return copies_steady(c, from, to, dsts, srcs, sizes, refs);
}

__attribute__((target("avx2"), noinline)) static bool copies_runs(const struct cbt_cache *c, size_t n,
                                                                 const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                                                                 const size_t *sizes, uint16_t *refs)
{
    /* copy 0 (read whatever it holds: the driver reads it) */
    const struct cbt_recent *rs = recent_of(c, srcs[0]), *rd = recent_of(c, dsts[0]);
    if (!sizes[0] || !rs || !rd)
        return false;
    const uint64_t lo_s = rs->lo, len_s = rs->len, lo_d = rd->lo, len_d = rd->len;
    const uint16_t two[2] = {rs->ref, rd->ref};
    uint32_t pair;
    memcpy(&pair, two, sizeof pair);
    memcpy(refs, &pair, sizeof pair);
    const uint64_t top = 1ull << 63;
    const __m256i slo = _mm256_set1_epi64x((long long)(lo_s ^ top)),
                  slen = _mm256_set1_epi64x((long long)(len_s ^ top)),
                  dlo = _mm256_set1_epi64x((long long)(lo_d ^ top)),
                  dlen = _mm256_set1_epi64x((long long)(len_d ^ top)), zero = _mm256_setzero_si256(),
                  ones = _mm256_set1_epi64x(-1);
    const __m128i pairs = _mm_set1_epi32((int)pair);
    size_t i = 1;
    while (i < n) {
        size_t lim = i + PAGE_LEFT(&srcs[i]), l2 = i + PAGE_LEFT(&dsts[i]), l3 = i + PAGE_LEFT(&sizes[i]);
        lim = l2 < lim ? l2 : lim;
        lim = l3 < lim ? l3 : lim;
        lim = n < lim ? n : lim;
        if (cbt_unlikely(lim == i)) /* an entry across a page: copy i alone (the driver reads it) */
            lim = i + 1;
        for (; i + 4 <= lim; i += 4) {
            const __m256i s = _mm256_loadu_si256((const __m256i *)&srcs[i]),
                          d = _mm256_loadu_si256((const __m256i *)&dsts[i]),
                          z = _mm256_loadu_si256((const __m256i *)&sizes[i]);
            const __m256i in = _mm256_and_si256(_mm256_cmpgt_epi64(slen, _mm256_sub_epi64(s, slo)),
                                                _mm256_cmpgt_epi64(dlen, _mm256_sub_epi64(d, dlo)));
            /* all four in, none of size 0 */
            if (cbt_likely(_mm256_testc_si256(_mm256_andnot_si256(_mm256_cmpeq_epi64(z, zero), in), ones)))
                _mm_storeu_si128((__m128i *)&refs[2 * i], pairs);
            else if (!copies_others(c, i, i + 4, dsts, srcs, sizes, refs))
                return false;
        }
        /* the last few of the run, one by one */
        for (; i < lim; i++) {
            if (cbt_likely(sizes[i] && (uint64_t)srcs[i] - lo_s < len_s && (uint64_t)dsts[i] - lo_d < len_d))
                memcpy(&refs[2 * i], &pair, sizeof pair);
            else if (!copies_others(c, i, i + 1, dsts, srcs, sizes, refs))
                return false;
        }
    }
    return true;
}
#undef PAGE_LEFT
#endif

/*
 * Copies [0, n) below AVX2's reach: first whether every copy is like copy 0
 * (its source in copy 0's source's range, its destination in its
 * destination's, its size not 0), with no store a copy (the usual batch:
 * a few blocks of one buffer into another), then copy 0's refs written for
 * all of them; from the first copy unlike it on, copy by copy.
 */
static inline __attribute__((always_inline)) bool copies_like0(const struct cbt_cache *c, size_t n,
                                                               const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                                                               const size_t *sizes, uint16_t *refs, bool *uniform)
{
    const struct cbt_recent *rs = recent_of(c, (uint64_t)srcs[0]), *rd = recent_of(c, (uint64_t)dsts[0]);
    if (!rs || !rd)
        return false;
    const uint64_t lo0 = rs->lo, len0 = rs->len, lo1 = rd->lo, len1 = rd->len;
    size_t like = 0;
    while (like < n && sizes[like] && (uint64_t)srcs[like] - lo0 < len0 && (uint64_t)dsts[like] - lo1 < len1)
        like++;
    const uint16_t two[2] = {rs->ref, rd->ref};
    uint32_t pair;
    memcpy(&pair, two, sizeof pair);
    for (size_t i = 0; i < like; i++)
        memcpy(refs + 2 * i, &pair, sizeof pair);
    *uniform = like == n;
    return like == n || copies_steady(c, like, n, dsts, srcs, sizes, refs);
}

CBT_HOT_FN bool cbt_refs_steady1d(const struct cbt_cache *c, size_t n, const CUdeviceptr *dsts,
                                  const CUdeviceptr *srcs, const size_t *sizes, uint16_t *refs, bool *uniform)
{
    *uniform = false;
#ifdef HAVE_LIKE_AVX2
    /* from 32 copies on: at 16, bench/profile counted a few instructions a
     * copy saved for about a dozen more lines of code run per call, which
     * the driver's work evicts (a judgment: not timed on the GPU) */
    if (n >= 32 && cbt_likely(cbt_recents_avx2))
        return copies_runs(c, n, dsts, srcs, sizes, refs);
#endif
    return n && copies_like0(c, n, dsts, srcs, sizes, refs, uniform);
}
