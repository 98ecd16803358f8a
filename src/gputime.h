/* SPDX-License-Identifier: MIT */
/*
 * GPU time of batches (src/gputime.c), with CUBATCHTRACE_GPU_TIME=1: two
 * timing events recorded on the batch's stream around the call, read back
 * later without waiting, written as cubatchtrace:gpu_time.
 */
#ifndef CBT_SRC_GPUTIME_H
#define CBT_SRC_GPUTIME_H

#include <stdbool.h>

#include "record.h"

/* What gputime.c keeps per thread (part of its state, src/thread.h): the
 * context ids it asked for (cuCtxGetId), by handle, kept while no context
 * goes (their epoch), and its ring: the timed batches it queued for the
 * read-back, each slot with two events of its own (gputime.c). */
#define CBT_GPU_MEMO 4
struct cbt_gpu_memo {
    CUcontext ctx;
    unsigned long long id;
    uint64_t epoch; /* 0: never filled */
};
struct cbt_gpu_ring;
struct cbt_gpu_slot;
struct cbt_gpu_thread {
    struct cbt_gpu_memo memo[CBT_GPU_MEMO];
    struct cbt_gpu_ring *ring; /* NULL: none made yet */
};

/* One call's timing, from cbt_gpu_before through cbt_gpu_end to cbt_gpu_after (on the stack). */
struct cbt_gpu_call {
    /* set by the caller: the thread's part where memwrap.c sees every call
     * that can destroy a context (cbt_kind_cache_enabled); NULL: the id is
     * asked per batch, the events taken from the pool and queued on the
     * shared ring */
    struct cbt_gpu_thread *th;
    int status;     /* enum cbt_gpu_status when not timed; -1: nothing to write */
    int ctx;        /* index of the context's state */
    unsigned long long ctx_id;
    struct cbt_gpu_slot *slot; /* the slot of th's ring timing it; NULL: start and end from the pool */
    CUevent start, end;
};

/* A thread is gone: its ring is read back and freed by the reader. */
void cbt_gpu_thread_release(struct cbt_gpu_thread *th);

/* Before forwarding batch b (stream, context and device known): ask whether
 * the stream is being captured (b->capture: no event on such a stream) once
 * the process began a capture (memwrap.c: cbt_capture_begun; t->th set),
 * read back what is done when there is no reader thread, then record the
 * start event. */
void cbt_gpu_before(struct cbt_gpu_call *t, struct cbt_ev_batch *b, int ptsz, CUstream stream);

/* cuStreamIsCapturing's answer for the stream (CBT_CAPTURE_*; UNKNOWN when
 * it cannot be asked).  Safe on a capturing stream, unlike cuStreamGetId. */
uint8_t cbt_stream_capture(const struct cbt_real *real, int ptsz, CUstream stream);

/* Right after the call returned res: record the end event (a timed call
 * that failed is not timed: its events go back to the pool in cbt_gpu_after). */
void cbt_gpu_end(struct cbt_gpu_call *t, CUresult res, int ptsz, CUstream stream);

/* Does a gpu_time event of the batch follow (its record says so: CBT_HDR_GPU)? */
static inline bool cbt_gpu_follows(const struct cbt_gpu_call *t) { return t->status >= 0; }

/* Once the batch is written: queue it for the read-back, or write at once
 * why it is not timed, so that its gpu_time event follows its batch event. */
void cbt_gpu_after(struct cbt_gpu_call *t, uint64_t batch_id);

/* A context, or the primary context of a device, is about to go
 * (memwrap.c tells, cbt_mem_tell_contexts): what is done is read back now, while its events live. */
void cbt_gpu_context_going(void);

/* A context, or the primary context of a device, is gone (memwrap.c):
 * its events with it.  ctx NULL: the primary context of `device`. */
void cbt_gpu_context_gone(CUcontext ctx, int device);

/* In a forked child (src/batch.c calls it): none of the parent's contexts,
 * reader or other threads; this thread's ring and the shared one emptied. */
void cbt_gpu_after_fork_child(void);

#endif
