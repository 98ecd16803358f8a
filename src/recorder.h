/*
 * Deferred recording (src/recorder.c).
 *
 * In observe mode the calling thread does only what must happen during the
 * call: it copies the op list, learns the operands' memory kinds (the memory
 * may be freed as soon as the call returns), forwards, and queries the
 * stream.  It then hands the batch to the recorder thread, which validates
 * it and writes its events.  Strict mode and the stderr report keep doing
 * everything on the calling thread.
 */
#ifndef CBT_RECORDER_H
#define CBT_RECORDER_H

#include "cubatchtrace_tp_types.h"
#include "shim.h"

/* One batch in the recorder's queue.  ops, src and dst point just behind
 * the header, inside the queue. */
struct cbt_rec {
    uint32_t size;   /* bytes of this record in the queue (owned by the recorder) */
    uint32_t state;  /* owned by the recorder */
    struct cbt_tp_batch b;
    int32_t device_count;
    uint8_t validated;  /* the calling thread already validated it and wrote its findings */
    size_t n;           /* ops copied: num_ops, or 0 for a NULL op list */
    void *caller;
    CUDA_MEMCPY3D_BATCH_OP *ops;
    struct cbt_operand_info *src, *dst;
};

/* A record for a batch of n ops, or NULL: then record on the calling thread
 * (the queue is full, the batch is too large for it, the recorder thread
 * could not be started, or the process is exiting).  Never blocks on the
 * recorder thread. */
struct cbt_rec *cbt_rec_reserve(size_t n);

/* Hand a reserved record, now filled, to the recorder thread. */
void cbt_rec_commit(struct cbt_rec *r);

/* batch.c: validate and record one deferred batch (on the recorder thread). */
void cbt_record_deferred(struct cbt_rec *r);

/* The calling thread's kernel thread id, cached (reset in a forked child). */
uint32_t cbt_tid(void);

#endif
