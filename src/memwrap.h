/* SPDX-License-Identifier: MIT */
/*
 * The driver's memory-management functions, wrapped (src/memwrap.c).
 */
#ifndef CBT_SRC_MEMWRAP_H
#define CBT_SRC_MEMWRAP_H

#include "util.h"

/*
 * Each wrapped call
 * adds one to cbt_mem_generation before and after the real one, so what was
 * learned about memory kinds at another generation may be stale.
 */
extern uint64_t cbt_mem_generation __attribute__((visibility("hidden")));
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
