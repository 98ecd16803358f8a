/* SPDX-License-Identifier: MIT */
/*
 * The driver's memory-management functions, wrapped (src/memwrap.c).
 */
#ifndef CBT_SRC_MEMWRAP_H
#define CBT_SRC_MEMWRAP_H

#include "driver.h"
#include "util.h"

/*
 * What the wrapped calls changed (src/memwrap.c), in two logs: memory
 * (cbt_mem_log: ranges, arrays) and streams (cbt_stream_log: the handles
 * cuStreamDestroy was given).  Each call logs, once it returned, what it
 * may have changed, then moves the log's generation on (cbt_mem_generation,
 * cbt_stream_generation): a thread that saw another generation reads the
 * entries logged since its position (cbt_log_next) and forgets what they
 * touch.  A log is a ring of CBT_MEM_LOG_SIZE: a thread that fell further
 * behind forgets everything.
 */
enum cbt_mem_change_what {
    CBT_MEM_CHANGE_RANGE,  /* the addresses [lo, hi) */
    CBT_MEM_CHANGE_ARRAY,  /* the CUarray handle lo (hi = lo + 1) */
    CBT_MEM_CHANGE_STREAM, /* the stream handle lo (hi = lo + 1) */
    CBT_MEM_CHANGE_ALL,    /* anything */
};
struct cbt_mem_change {
    uint64_t lo, hi;
    unsigned what;
};
#define CBT_MEM_LOG_SIZE 256
struct cbt_log;
extern struct cbt_log cbt_mem_log __attribute__((visibility("hidden")));
extern struct cbt_log cbt_stream_log __attribute__((visibility("hidden")));
extern uint64_t cbt_mem_generation __attribute__((visibility("hidden")));
extern uint64_t cbt_stream_generation __attribute__((visibility("hidden")));
/* The change logged at *pos (a reader's position, 0 at first): 1, *out
 * filled and *pos past it; 0, none to read now (all read, or the next not
 * written yet: the generation moves again once it is); -1, forget
 * everything (changes were lost, or one touched everything), *pos past
 * all logged so far. */
int cbt_log_next(const struct cbt_log *log, uint64_t *pos, struct cbt_mem_change *out);
/* Everything may have changed, streams too (a fork's child, a context gone):
 * "everything" in both logs. */
void cbt_mem_forget_all(void);
/* Who else is told when a context goes (GPU time, src/gputime.c): `going`
 * before the driver destroys it, `gone` after (ctx NULL: the primary
 * context of `device`).  Set once by src/batch.c, at load and before the
 * first batch; until then a context going is only logged. */
void cbt_mem_tell_contexts(void (*going)(void), void (*gone)(CUcontext ctx, int device));
extern int cbt_kind_cache_off __attribute__((visibility("hidden")));
/* Set (for good) when the program first calls a function that begins a
 * stream capture (cuStreamBeginCapture*, through any door the shim sees). */
extern int cbt_capture_begun __attribute__((visibility("hidden")));
/* The wrapper of the real function at `p`, or NULL when `p` is not one. */
void *cbt_memwrap_for_pointer(const void *p);
/* Is `name` an exported name the shim wraps (dlsym door)? */
bool cbt_memwrap_exports(const char *name);
/* Is `name` one cuGetProcAddress is asked for to get a wrapped function? */
bool cbt_memwrap_gpa_name(const char *name);
/* Memory may change unseen: no memory kind is kept across batches any more. */
void cbt_kind_cache_disable(void);
/* May memory kinds be kept across batches (not disabled, the shim interposes)? */
bool cbt_kind_cache_enabled(void);

#endif
