/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's cache of operands and its recents: the lookups of
 * the steady state and the keeping of the recents (src/recents.c); what
 * fills the cache is src/operands.c's.
 */
#ifndef CBT_SRC_RECENTS_H
#define CBT_SRC_RECENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/validate.h>

#include "util.h"

/*
 * The calling thread's cache of what it learned (src/operands.c): address
 * ranges (CUDA allocations, runs of pageable pages) and CUDA arrays, each
 * sorted, with the kind, device and bounds learned; and the recents, the
 * ranges and arrays the thread's latest batches used with their dictionary
 * indices.
 * Part of the thread's state (src/thread.h); zeroed is empty.
 */
struct cbt_cache_side {
    uint64_t (*key)[2]; /* [lo, hi): the allocation, the run of pageable pages, or the CUarray handle */
    struct cbt_operand_info *info;
    uint32_t n, cap, last, last2; /* last2: the entry hit before `last` (src and dst alternate) */
};
struct cbt_recent {
    uint64_t lo, len; /* len 0: none */
    uint16_t ref;
    uint32_t serial;  /* the dictionary entry's, when ref was taken */
};
#define CBT_MORE_RECENTS 6 /* older ranges kept beside the last two */
#define CBT_MORE_ARRAYS 3  /* older CUarrays kept beside the last */
struct cbt_cache {
    uint64_t generation;          /* the cbt_mem_generation it was brought up to (operands.c) */
    struct cbt_recent recent[2];  /* pointer operands: the last two ranges met */
    struct cbt_recent array_recent; /* array operands: the last CUarray met */
    /* the ranges and arrays met before those, the latest first (len 0:
     * none): a thread whose batches go round a few buffers in turn finds
     * them all here, and stays on the steady path */
    struct cbt_recent more[CBT_MORE_RECENTS];
    struct cbt_recent array_more[CBT_MORE_ARRAYS];
    struct cbt_cache_side addr, arrays;
    uint64_t confirmed_page;      /* strict mode: the last pageable page mincore confirmed in this batch */
    uint64_t log_pos;             /* the first change of memwrap.h's log not yet read */
};

/* The recents whose dictionary entries still hold what they held, marked
 * used (and written again where a refresh asks for it); the others
 * dropped.  The steady path's refresh calls it: a later steady batch may
 * refer to any of them. */
struct cbt_dict;
void cbt_recents_keep(struct cbt_cache *c, struct cbt_dict *d);

/* After a batch that learned its operands (operands.c): r[0], r[1] and ra
 * (the ranges and array it met last) become the recents, and those they
 * replace go, the latest first, before the older ones, which the
 * dictionary still holds (src/recents.c). */
void cbt_recents_update(struct cbt_cache *c, struct cbt_dict *d, const struct cbt_recent r[2],
                        const struct cbt_recent *ra);

/* The steady state (src/recents.c): when the first `checked` ops are well
 * formed and every operand lies in one of the recents, their refs (true),
 * and *uniform when every op's refs are op 0's (then the record need not
 * compare them with the previous batch's one by one); else false (refs
 * may have been written).  Only for a caller that knows the recents still
 * hold: the cache brought to the current memory generation
 * (cbt_cache_catch_up drops the recents a change touched) and the
 * dictionary in the epoch of the thread's previous batch, which learned its
 * refs (observe mode). */
bool cbt_refs_steady(const struct cbt_cache *c, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                     size_t checked, bool *uniform);
/* Whether it compares ops with AVX2 (set at load where the CPU has it; the
 * tests turn it off to try the SSE2 loop too). */
extern bool cbt_recents_avx2;

/*
 * How many of the n ops at `ops` must be checked for form before the list
 * can be read whole: those wholly before the page the list ends in.  The
 * driver reads the first op of a batch it does not refuse from its
 * arguments, and op i + 1 only once op i passed, so it reads every page the
 * list touches before that last one only through ops that passed; the
 * pages from there on are mapped, or the driver's own reading would fault.
 * The form of the ops not checked is left to the driver's answer
 * (cbt_ops_driver_reads after a call that failed).  A page: the least size
 * one can have, CBT_PAGE_MIN (a block of it lies in one page whole).
 */
#define CBT_PAGE_MIN 4096u
static inline size_t cbt_ops_to_check(const CUDA_MEMCPY3D_BATCH_OP *ops, size_t n)
{
    const uintptr_t a = (uintptr_t)ops;
    if (n > (UINTPTR_MAX - a) / sizeof *ops)
        return n;
    const uintptr_t last_page = (a + n * sizeof *ops - 1) & ~(uintptr_t)(CBT_PAGE_MIN - 1);
    return last_page <= a ? 0 : (size_t)((last_page - a) / sizeof *ops);
}

/* The 1D batch's copies likewise: every size not 0 (cbt_copies_driver_reads'
 * test of a copy, whose pointers, not NULL, lie in a recent range), and
 * *uniform as for cbt_refs_steady where the copies are looked up one by one
 * (below 32 copies, or without AVX2; else false). */
bool cbt_refs_steady1d(const struct cbt_cache *c, size_t n, const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                       const size_t *sizes, uint16_t *refs, bool *uniform);

#endif
