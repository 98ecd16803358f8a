/* SPDX-License-Identifier: MIT */
/*
 * A batch's GPU time joined with the batch (read/gpujoin.c).  The shim's
 * gpu_time event carries the batch's id, status and times only; the batch's
 * record says a gpu_time event follows (CBT_HDR_GPU).  The reader keeps
 * what such a batch moves (its ops, bytes, memory kinds and devices, its
 * thread, stream and host time) until the event comes, and hands on the
 * whole struct cbt_ev_gpu, as older traces carried it in the event itself.
 */
#ifndef CBT_READ_GPUJOIN_H
#define CBT_READ_GPUJOIN_H

#include "base/records.h"

struct cbt_gpujoin;

struct cbt_gpujoin *cbt_gpujoin_new(void);
void cbt_gpujoin_free(struct cbt_gpujoin *j);

/* A batch whose record says a gpu_time event of it follows. */
void cbt_gpujoin_expect(struct cbt_gpujoin *j, const struct cbt_where *w, uint64_t batch_id);

/* Is any batch waiting for its gpu_time event?  (cheap: the reader asks per batch) */
static inline bool cbt_gpujoin_waiting(const struct cbt_gpujoin *j)
{
    return *(const size_t *)j != 0;
}

/* The batch as handed over (its first ops), and its further ops: kept for an expected batch. */
void cbt_gpujoin_batch(struct cbt_gpujoin *j, const struct cbt_where *w, const struct cbt_batch *b,
                       const struct cbt_ops *o);
void cbt_gpujoin_ops(struct cbt_gpujoin *j, const struct cbt_where *w, uint64_t batch_id, const struct cbt_ops *o);

/* A short gpu_time event: out gets its fields and the batch's (unknown when
 * its batch never came: tid and devices -1, memory kinds unknown, zeros);
 * the batch is forgotten.  False when the batch was not known. */
bool cbt_gpujoin_take(struct cbt_gpujoin *j, const struct cbt_where *w, const struct cbt_ev_gpu_time *e,
                      struct cbt_ev_gpu *out);

#endif
