/* SPDX-License-Identifier: MIT */
/*
 * The JSON summary (json.c; schema: docs/json-schema.md).
 */
#ifndef CBT_JSON_H
#define CBT_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "analyse/agg.h"
#include "analyse/callsite.h"

/* The summary of a finished aggregate (it finishes it when not yet), as the
 * object `summary --json` prints (the caller owns it), and printed: 0 or
 * jansson's error. */
json_t *cbt_agg_summary_json(struct cbt_agg *a, const char *const *inputs, int ninputs);
int cbt_agg_print_json(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs);

/* The summary's "gpu" member (docs/json-schema.md) of a finished aggregate. */
json_t *cbt_gpu_json(struct cbt_agg *a);

/* {"address", "object", "offset", "function", "file", "line"}: what is known
 * of a call site, null where nothing is; "address" (the process's) only
 * when with_address. */
json_t *cbt_callsite_json(const struct cbt_callsite *cs, bool with_address);

#endif
