/* SPDX-License-Identifier: MIT */
/*
 * The text outputs (text.c): the summary, and the finding lines of `check`.
 */
#ifndef CBT_TEXT_H
#define CBT_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyse/agg.h"

/* The summary of a finished aggregate (it finishes it when not yet): bytes
 * and times in human units, or exact integers (bytes, ns) when raw; the
 * first screen (totals, call sites, directions, findings) unless the
 * aggregate was made with CBT_BY_ALL. */
void cbt_agg_print_text(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs, bool raw);
/* The `# fabric batches:` line (cuFabricCpyBatchAsync calls, counted apart), when there were any. */
void cbt_print_fabric_line(FILE *out, const struct cbt_agg_totals *t);

/* text after `first`, wrapped on spaces at `width` columns, the next lines
 * after `indent` spaces; ends the line. */
void cbt_print_wrapped(FILE *out, const char *first, size_t indent, const char *text, size_t width);

/* A finding in the words every output uses (cbt_finding_words, validate.h)
 * and what to change (cbt_rule_fix; "" for a rule this tool does not know). */
const char *cbt_finding_say(const struct cbt_batch_finding *f, char *buf, size_t len);
const char *cbt_finding_fix(unsigned rule);

/* `check`: one line per finding, where it happened and what it means; the
 * call site already named (caller), the line starting with prefix. */
void cbt_finding_text(FILE *out, const struct cbt_agg *a, const struct cbt_where *w, const struct cbt_batch_finding *f,
                      const char *caller, const char *prefix);

#endif
