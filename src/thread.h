/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's state: one block per thread that makes batches,
 * made on its first batch and freed when the thread exits (src/thread.c).
 * Each step keeps its own part of it: the answers about streams, the GPU
 * time sampling and the validator's memory (batch.c, stream.c), the dictionaries
 * (record.c), the operand cache (operands.c).  Of this block only a pointer
 * lives in TLS (initial-exec TLS is scarce when the shim is dlopened rather
 * than preloaded); the steady state allocates nothing.  Five small
 * thread-locals stand beside it, each read where no block may exist yet or
 * any more: record.c's writer flag and cached thread id with its fork
 * generation, driver.c's "loading the driver here" flag, gputime.c's ring
 * of timed batches (kept by a forked child).
 */
#ifndef CBT_SRC_THREAD_H
#define CBT_SRC_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/validate.h>

#include "gputime.h"
#include "operands.h"
#include "record.h"
#include "util.h"

#define CBT_STREAM_SLOTS 8 /* powers of two (cbt_stream_hash) */
#define CBT_GPU_SLOTS 8

/* What a created stream names until the log of streams (memwrap.h) says it
 * was destroyed: its id, context and device (stream.h). */
struct cbt_stream_slot {
    CUstream stream;
    unsigned long long id;
    CUcontext ctx;
    int32_t device;
    uint8_t ptsz, valid;
};

/* What the thread's previous batch leaves for the next to take the steady
 * path (batch.c): the stream it ran on, described in the dictionary under
 * stream_index in epoch `epoch`, while its slot holds it (the operand
 * cache follows the memory generation on its own). */
struct cbt_steady {
    CUstream stream; /* NULL: none (special handles never) */
    uint64_t generation; /* the cbt_stream_generation the thread's slots were brought to */
    uint64_t id_next; /* the thread's next batch id (process.h): its high half the image's tag */
    int32_t tid;     /* until a fork, which logs "everything" for streams */
    uint32_t epoch;
    uint32_t id_left; /* ids left in the thread's block from id_next */
    uint8_t ptsz, stream_index, valid;
    uint8_t slot; /* the stream's slot in streams[] */
};

/* What the steady path reads comes first, so that a batch touches few cache
 * lines of it (the driver's work between two batches evicts them): the
 * block is cache-line aligned; its first two lines hold the steady state
 * and the operand cache's recents, the dictionary's first two the rest. */
struct cbt_thread {
    int depth;                          /* > 0 while this thread is inside a batch */
    struct cbt_steady steady;
    struct cbt_cache cache;             /* operands.c's: the recents first */
    struct cbt_dict dict __attribute__((aligned(64))); /* record.c's: what a batch record reads first */
    struct cbt_stream_slot streams[CBT_STREAM_SLOTS]; /* a stream's: its hash's or one of the probes after it */
    uint32_t slot_turn;                 /* which slot of a full probe goes next */
    uint64_t stream_pos;                /* the first entry of the log of streams not yet read */
    struct {                            /* CUBATCHTRACE_GPU_TIME=N: batches made per stream */
        CUstream stream;
        uint32_t count;
    } gpu[CBT_GPU_SLOTS];
    struct cbt_gpu_thread gpu_state;    /* gputime.c's: the context ids asked, its ring of timed batches */
    unsigned long long steps_taken;     /* batches that took the steps (cubatchtrace_thread_steps) */
    uintptr_t stack_lo, stack_hi;       /* the thread's stack, learned once (hi 1: unknown) */
    /* the validator's (strict mode, the stderr report) */
    struct cbt_validator *validator;
    size_t cap_ops, cap_findings, cap_copies;
    struct cbt_operand_info *src, *dst;
    struct cbt_finding *findings;
    CUDA_MEMCPY3D_BATCH_OP *copies;     /* a 1D batch's copies as ops */
};
_Static_assert(offsetof(struct cbt_thread, cache.array_recent) + sizeof(struct cbt_recent) <= 128,
               "the steady state and the recents fit the thread block's first two cache lines");

/* The calling thread's state, made on first use; NULL when out of memory. */
extern CBT_TLS struct cbt_thread *cbt_tls_thread __attribute__((visibility("hidden")));
struct cbt_thread *cbt_thread_make(void);
static inline struct cbt_thread *cbt_thread(void)
{
    struct cbt_thread *t = cbt_tls_thread;
    return cbt_likely(t != NULL) ? t : cbt_thread_make();
}

#endif
