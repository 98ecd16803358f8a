/* SPDX-License-Identifier: MIT */
/* The cubatchtrace:process event (process.c). */
#ifndef CBT_SRC_PROCESS_H
#define CBT_SRC_PROCESS_H

/* Record hostname and job rank of this process; nothing when no session listens. */
void cbt_trace_process(void);

#endif
