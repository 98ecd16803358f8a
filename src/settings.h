/* SPDX-License-Identifier: MIT */
/*
 * The shim's settings (CUBATCHTRACE_* in the environment), read once
 * (src/settings.c).
 */
#ifndef CBT_SRC_SETTINGS_H
#define CBT_SRC_SETTINGS_H

#include "util.h"

/* Configuration, read once with secure_getenv. */
enum cbt_mode { CBT_MODE_OBSERVE, CBT_MODE_OFF, CBT_MODE_STRICT };
struct cbt_config {
    enum cbt_mode mode;
    bool strict_hazards;  /* CUBATCHTRACE_STRICT=hazards */
    bool report_stderr;   /* CUBATCHTRACE_REPORT=stderr */
    bool gpu_time;        /* CUBATCHTRACE_GPU_TIME=N (N >= 1): batches timed on their stream (src/gputime.c) */
    uint32_t gpu_every;   /* ... one batch in N of each stream (per calling thread); 1: every batch */
    uint8_t stack_depth;  /* CUBATCHTRACE_STACK=N (1..CBT_EV_STACK_MAX): a batch's callers recorded; 0: not */
};
/* Ops (copies) per bs/bo (cs/co) event: the largest the sub-buffer
 * CUBATCHTRACE_SUBBUF_SIZE names holds, CBT_EV_CHUNK3D (1D) without it
 * (read with the configuration; the least until then). */
extern uint32_t cbt_chunk3d __attribute__((visibility("hidden")));
extern uint32_t cbt_chunk1d __attribute__((visibility("hidden")));
extern struct cbt_config cbt_config_table __attribute__((visibility("hidden")));
extern int cbt_config_ready __attribute__((visibility("hidden")));
const struct cbt_config *cbt_config_slow(void);
static inline const struct cbt_config *cbt_config(void)
{
    if (cbt_likely(__atomic_load_n(&cbt_config_ready, __ATOMIC_ACQUIRE)))
        return &cbt_config_table;
    return cbt_config_slow();
}

#endif
