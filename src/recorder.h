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

/* One batch in the recorder's queue.  ops, idx and infos point just behind
 * the header, inside the queue: op i's operands are infos[idx[i].src] and
 * infos[idx[i].dst] (a batch's ops mostly share a few allocations). */
struct cbt_rec {
    uint32_t size;   /* bytes of this record in the queue (owned by the recorder) */
    uint32_t state;  /* owned by the recorder */
    struct cbt_tp_batch b;
    int32_t device_count;
    uint8_t validated;  /* the calling thread already validated it and wrote its findings */
    uint8_t driver_ticks; /* b.driver_ns holds cbt_ticks(), converted by the recorder */
    size_t n;           /* ops copied: num_ops, or 0 for a NULL op list */
    size_t k;           /* distinct operand infos */
    void *caller;
    CUDA_MEMCPY3D_BATCH_OP *ops;
    struct cbt_op_infos *idx;
    struct cbt_operand_info *infos;
};

/* A record for a batch of n ops with k distinct operand infos, or NULL: then record on the calling thread
 * (the queue is full, the batch is too large for it, the recorder thread
 * could not be started, or the process is exiting).  Never blocks on the
 * recorder thread. */
struct cbt_rec *cbt_rec_reserve(size_t n, size_t k);

/* Hand a reserved record, now filled, to the recorder thread. */
void cbt_rec_commit(struct cbt_rec *r);

/* batch.c: validate and record one deferred batch (on the recorder thread). */
void cbt_record_deferred(struct cbt_rec *r);

/*
 * The clock around the driver call on the calling thread: the time-stamp
 * counter where the CPU says it is invariant (x86-64, constant_tsc and
 * nonstop_tsc), about half the cost of clock_gettime in a virtual machine
 * (bench/costs).  The recorder converts ticks to nanoseconds with a rate it
 * measures against CLOCK_MONOTONIC over at least 20 ms from the first batch.
 */
#include <time.h>

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t cbt_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

extern int cbt_ticks_ok __attribute__((visibility("hidden")));
void cbt_ticks_init(void);
uint64_t cbt_ticks_to_ns(uint64_t ticks);
#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t cbt_ticks(void) { return __rdtsc(); }
#else
static inline uint64_t cbt_ticks(void) { return 0; } /* never used: cbt_ticks_ok stays 0 */
#endif
/* The driver call's clock: ticks when cbt_ticks_ok, else ns. */
static inline uint64_t cbt_call_clock(void) { return cbt_ticks_ok ? cbt_ticks() : cbt_mono_ns(); }

/* The calling thread's kernel thread id, cached (reset in a forked child). */
uint32_t cbt_tid(void);

#endif
