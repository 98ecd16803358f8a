/* SPDX-License-Identifier: MIT */
/*
 * The text outputs (text.c): the summary, and the finding lines of `check`.
 */
#ifndef CBT_TEXT_H
#define CBT_TEXT_H

#include <stdio.h>

#include "agg.h"

/* The summary of a finished aggregate (it finishes it when not yet). */
void cbt_agg_print_text(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs);

/* `check`: one line per finding, where it happened and what it means,
 * printed as they are handed over (buffered, bounded):
 *   l = cbt_finding_lines_new(a, out); cbt_agg_on_finding(a, cbt_finding_line, l);
 *   ...read...; cbt_finding_lines_flush(l); cbt_finding_lines_free(l); */
struct cbt_finding_lines;
struct cbt_finding_lines *cbt_finding_lines_new(const struct cbt_agg *a, FILE *out);
void cbt_finding_line(void *lines, const struct cbt_where *w, const struct cbt_batch_finding *f);
void cbt_finding_lines_flush(struct cbt_finding_lines *l);
void cbt_finding_lines_free(struct cbt_finding_lines *l);

#endif
