/* SPDX-License-Identifier: MIT */
/*
 * What a stream handle names: its id, context and device (src/stream.c).
 * A created stream's are fixed for its life, and its life ends with
 * cuStreamDestroy or its context's destruction, which memwrap.c wraps and
 * logs (the log of streams, memwrap.h): each thread keeps the answers for a
 * few handles (its stream slots, thread.h) until the log names the handle
 * (or everything: a context destroyed, a fork).  Memory allocated or freed
 * leaves them.  The special handles (NULL, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD) name the calling thread's current context, which
 * changes unseen: they are asked every time, as is the capture state.
 *
 * The steady path's checks (cbt_streams_current, cbt_names_a_stream) are
 * inline here, as they were in the hub; the rest is in stream.c.
 */
#ifndef CBT_SRC_STREAM_H
#define CBT_SRC_STREAM_H

#include "memwrap.h"
#include "thread.h"

/* What the steps learned of a batch's stream before the call, for after it. */
struct cbt_stream_look {
    struct cbt_stream_slot *slot; /* the cache slot of a created stream; NULL for special handles */
    bool have_id;             /* from the cache */
    bool ctx_ok;
    CUcontext ctx;
};

/* Brings t's stream slots to generation g of the log of streams: the
 * slots of the handles logged since go (all of them when the log says
 * everything, or lost entries), and the steady state with its stream's.
 * Out of line: called when the generation moved. */
void cbt_streams_catch_up(struct cbt_thread *t, uint64_t g) __attribute__((noinline));

static inline void cbt_streams_current(struct cbt_thread *t)
{
    const uint64_t g = __atomic_load_n(&cbt_stream_generation, __ATOMIC_ACQUIRE);
    if (cbt_unlikely(t->steady.generation != g))
        cbt_streams_catch_up(t, g);
}

/* The slot of t that holds created stream s, asked with ptsz (-1: either);
 * NULL: none.  A stream's slot is its hash's or one of the
 * CBT_STREAM_PROBES after it.  (The slots brought up to date first:
 * cbt_streams_current.)  Inline for the 1D path's ABI check; steady_switch
 * calls it out of line (cbt_stream_slot_find), so that its code stays in
 * the cache lines it had. */
static inline struct cbt_stream_slot *cbt_stream_slot_of(struct cbt_thread *t, const void *s, int ptsz)
{
    const unsigned h = cbt_stream_hash(s, CBT_STREAM_SLOTS);
    for (unsigned j = 0; j < CBT_STREAM_PROBES; j++) {
        struct cbt_stream_slot *x = &t->streams[(h + j) & (CBT_STREAM_SLOTS - 1)];
        if (x->valid && x->stream == (CUstream)s && (ptsz < 0 || x->ptsz == ptsz))
            return x;
    }
    return NULL;
}

struct cbt_stream_slot *cbt_stream_slot_find(struct cbt_thread *t, const void *s, int ptsz);

/* Is `p` a stream handle: a special one, or one this thread saw as the
 * stream of an earlier batch (and which is still alive)? */
static inline bool cbt_names_a_stream(struct cbt_thread *t, const void *p)
{
    if ((uintptr_t)p == (uintptr_t)CU_STREAM_LEGACY || (uintptr_t)p == (uintptr_t)CU_STREAM_PER_THREAD)
        return true;
    if (!p || !t)
        return false;
    cbt_streams_current(t);
    return cbt_stream_slot_of(t, p, -1) != NULL;
}

/* Before the call: the stream's context and device into b (from t's slot,
 * else asked), and in *l what cbt_stream_after needs.  False: a stream the
 * driver does not know (it rejects the batch without reading the ops).
 * t may be NULL (no thread state: nothing is kept). */
bool cbt_stream_before(struct cbt_thread *t, const struct cbt_real *real, enum cbt_api api, CUstream stream,
                       struct cbt_ev_batch *b, struct cbt_stream_look *l);

/* After it (forwarded: the driver had it, res its answer): the capture
 * state and the id into b; a created stream first seen is kept in its slot. */
void cbt_stream_after(const struct cbt_real *real, enum cbt_api api, CUstream stream, struct cbt_ev_batch *b,
                      const struct cbt_stream_look *l, CUresult res, bool forwarded);

#endif
