/* SPDX-License-Identifier: MIT */
/*
 * The steady state's operand lookups (declared in operands.h): a batch
 * whose every operand lies in one of the thread's recents (the ranges its
 * previous batch used) gets its dictionary indices (refs) from them, with
 * no question asked of the driver; the ops before the page their list ends
 * in are checked for form on the way, as the driver reads them.
 *
 * Reading no further than the driver: it reads op i + 1 (copy i + 1 of a
 * 1D batch) only once op i passed its checks, and so do these loops, which
 * stop at the first op they cannot take.  The ops from the list's last page
 * on are not checked for form (operands.h: cbt_ops_to_check).
 *
 * Tried and not kept: testing a batch whose sources lie in one range and
 * destinations in another a run of ops at a time, with no branch per op
 * (the tests or-ed together): as many instructions per op, and slower than
 * these loops, whose branches the steady state predicts.
 */
#include "config.h"

#include "operands.h"

/* The recent range holding pointer a (NULL: none). */
static inline const struct cbt_recent *recent_of(const struct cbt_cache *c, uint64_t a)
{
    if (a - c->recent[0].lo < c->recent[0].len)
        return &c->recent[0];
    if (a - c->recent[1].lo < c->recent[1].len)
        return &c->recent[1];
    return NULL;
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
    if (x->type == CU_MEMCPY_OPERAND_TYPE_ARRAY && x->op.array.array && c->array_recent.len &&
        (uint64_t)(uintptr_t)x->op.array.array == c->array_recent.lo) {
        *ref = c->array_recent.ref;
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

CBT_HOT_FN bool cbt_refs_steady(const struct cbt_cache *c, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                                size_t checked)
{
    return refs_steady(c, checked, ops, refs, true) &&
           refs_steady(c, n - checked, ops + checked, refs + 2 * checked, false);
}

/* ---- 1D: the call's own arrays ---- */

CBT_HOT_FN bool cbt_refs_steady1d(const struct cbt_cache *c, size_t n, const CUdeviceptr *dsts,
                                  const CUdeviceptr *srcs, const size_t *sizes, uint16_t *refs)
{
    /* the ranges in locals, which the compiler keeps in registers: the
     * refs stored are uint16_t, as the cache's own are, and it would load
     * the ranges again for every pointer (5 instructions a copy fewer in
     * bench/profile; the 3D loop, short of registers, gained nothing) */
    const uint64_t lo0 = c->recent[0].lo, len0 = c->recent[0].len, lo1 = c->recent[1].lo, len1 = c->recent[1].len;
    const uint16_t ref0 = c->recent[0].ref, ref1 = c->recent[1].ref;
    for (size_t i = 0; i < n; i++) {
        if (cbt_unlikely(!sizes[i]))
            return false;
        const uint64_t s = (uint64_t)srcs[i], d = (uint64_t)dsts[i];
        /* NULL lies in no recent range */
        if (s - lo0 < len0)
            refs[2 * i] = ref0;
        else if (s - lo1 < len1)
            refs[2 * i] = ref1;
        else
            return false;
        if (d - lo0 < len0)
            refs[2 * i + 1] = ref0;
        else if (d - lo1 < len1)
            refs[2 * i + 1] = ref1;
        else
            return false;
    }
    return true;
}
