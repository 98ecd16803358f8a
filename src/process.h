/* SPDX-License-Identifier: MIT */
/* The cubatchtrace:process event (process.c). */
#ifndef CBT_SRC_PROCESS_H
#define CBT_SRC_PROCESS_H

/* Record hostname and job rank of this process; nothing when no session listens. */
void cbt_trace_process(void);
/* In a forked child (src/batch.c calls it): a new image id and batch
 * counter, its process event to be written again. */
void cbt_process_after_fork_child(void);

#include <stdint.h>

/* The process image's random id (new after exec and in a forked child);
 * its high 32 bits are never 0. */
uint64_t cbt_image_id(void);

/* The next batch id: the image id's high 32 bits, then a counter from 0. */
uint64_t cbt_next_batch_id(void);

/* The same, for a caller that holds the high half (cbt_image_id()'s, in
 * this image: a forked child's is another). */
extern uint64_t cbt_batch_counter __attribute__((visibility("hidden")));
static inline uint64_t cbt_next_batch_id_tagged(uint64_t tag)
{
    return tag | (__atomic_fetch_add(&cbt_batch_counter, 1, __ATOMIC_RELAXED) & 0xffffffffull);
}

/* Batch ids a thread takes at a time (batch.c, thread_batch_id): one
 * atomic add on the image's counter per block, not per batch (a locked add
 * costs a batch more than the rest of its id).  Ids stay unique in the
 * image and rise along each thread; one thread alone numbers its batches
 * 0, 1, 2, ...; across threads they are not in the order of the calls. */
#define CBT_ID_BLOCK 256u

/* A block of ids under `tag` (the image id's high half): returns the
 * first, the next in *next and how many are left after it in *left (never
 * past the counter's 32 bits). */
static inline uint64_t cbt_batch_ids_take(uint64_t tag, uint64_t *next, uint32_t *left)
{
    uint64_t base = __atomic_fetch_add(&cbt_batch_counter, CBT_ID_BLOCK, __ATOMIC_RELAXED) & 0xffffffffull;
    uint64_t n = 0x100000000ull - base < CBT_ID_BLOCK ? 0x100000000ull - base : CBT_ID_BLOCK;
    *next = (tag | base) + 1;
    *left = (uint32_t)(n - 1);
    return tag | base;
}

#endif
