/* SPDX-License-Identifier: MIT */
/*
 * The outputs of `check` (findings.c): every finding as a text line, a JSON
 * document or a SARIF 2.1.0 log, waivers applied, and the totals at the end.
 */
#ifndef CBT_FINDINGS_H
#define CBT_FINDINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyse/agg.h"
#include "analyse/waivers.h"

enum cbt_check_format { CBT_CHECK_TEXT, CBT_CHECK_JSON, CBT_CHECK_SARIF };

/* What `check` concluded, printed after the findings. */
struct cbt_check_totals {
    uint64_t findings, by_severity[4]; /* all findings, waived ones included; findings: advice left out */
    uint64_t serious;                  /* at or above the threshold, not waived */
    uint64_t waived;
    unsigned threshold;
    uint64_t lost_events, lost_packets, lost_uncounted;
    bool allow_discarded;
    uint64_t malformed, incomplete, given_up; /* batches not validated */
    uint64_t disagreeing;
    int exit_status;
};

/* Findings are printed as the aggregate hands them over (cbt_findings_add as
 * its on_finding callback), a bounded number held back so that call sites
 * are named once the objects they belong to are known:
 *   o = cbt_findings_new(a, out, fmt, waivers); cbt_agg_on_finding(a, cbt_findings_add, o);
 *   ...read...; cbt_findings_flush(o); ...; cbt_findings_end(o, &totals); cbt_findings_free(o) */
struct cbt_findings;
/* source_root: SARIF names source files under it relative to it (uriBaseId
 * SRCROOT); NULL or "": the current directory. */
struct cbt_findings *cbt_findings_new(const struct cbt_agg *a, FILE *out, enum cbt_check_format fmt,
                                      struct cbt_waivers *ws, const char *source_root);
void cbt_findings_add(void *findings, const struct cbt_where *w, const struct cbt_batch_finding *f);
void cbt_findings_flush(struct cbt_findings *o);
/* Waived findings of this severity or a more serious one. */
uint64_t cbt_findings_waived_at_or_above(const struct cbt_findings *o, unsigned threshold);
uint64_t cbt_findings_waived(const struct cbt_findings *o);
/* The totals, and the end of the document. */
void cbt_findings_end(struct cbt_findings *o, const struct cbt_check_totals *t);
void cbt_findings_free(struct cbt_findings *o);

#endif
