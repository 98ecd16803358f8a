/* SPDX-License-Identifier: MIT */
/* The cubatchtrace:process event (process.c). */
#ifndef CBT_SRC_PROCESS_H
#define CBT_SRC_PROCESS_H

/* Record hostname and job rank of this process; nothing when no session listens. */
void cbt_trace_process(void);

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

#endif
