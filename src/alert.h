/* SPDX-License-Identifier: MIT */
/*
 * Alerts on stderr (src/alert.c): what CUBATCHTRACE_REPORT=stderr (run --report
 * stderr) asks for.
 */
#ifndef CBT_SRC_ALERT_H
#define CBT_SRC_ALERT_H

#include <cubatchtrace/validate.h>

#include "driver.h"

/* One line on stderr per (rule, call site). */
void cbt_alert_finding(const struct cbt_finding *f, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t num_ops,
                       uint64_t batch_id, enum cbt_api api, enum cbt_door door, void *caller);

#endif
