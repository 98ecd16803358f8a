/* SPDX-License-Identifier: MIT */
/*
 * The JSON summary (json.c; schema: docs/json-schema.md).
 */
#ifndef CBT_JSON_H
#define CBT_JSON_H

#include <stdio.h>

#include "agg.h"

/* The summary of a finished aggregate (it finishes it when not yet); 0 or
 * jansson's error. */
int cbt_agg_print_json(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs);

#endif
