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

#endif
