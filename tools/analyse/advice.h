/* SPDX-License-Identifier: MIT */
/*
 * The advisor: what a program could change in its batches, and what that
 * would buy (the rules of severity advice, catalog.h; docs/rules.md).
 *
 * The aggregate (agg.c) hands it each op of a batch (cbt_advice_op, a few
 * comparisons), each batch once whole (cbt_advice_batch) and each batch's
 * GPU time (cbt_advice_gpu, for low_bandwidth); it answers with
 * findings of severity advice, each with its estimated saving (struct
 * cbt_batch_finding's saving_ns and saving), which agg.c counts like any
 * finding.  Runs of small batches (unbatched_run) are followed per thread
 * and stream in a bounded table: O(1) per batch, and a run still open when
 * the input ends is answered by cbt_advice_flush.
 *
 * Savings rest on what the trace measured where it has it (the host time
 * of the driver calls), else on a cost table measured on a GPU machine
 * (bench/advice-costs.sh, read with cbt_advice_costs); without one the
 * advice says "no measured cost table", never a figure of its own.
 *
 * The settings are the process's (the command line's options), read-only
 * once the reading starts: the threads of --jobs share them.
 */
#ifndef CBT_ADVICE_H
#define CBT_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/records.h"

/* The thresholds, with their defaults (docs/cubatchtrace.1, docs/rules.md). */
struct cbt_advice_settings {
    bool off;                   /* --advice off: no advice at all */
    uint64_t run_calls;         /* unbatched_run: at least this many calls in a run (8) */
    uint64_t run_copies;        /* ... each of at most this many copies (4) */
    uint64_t run_gap_ns;        /* ... each at most this long after the one before it (100 us) */
    uint64_t tiny_bytes;        /* tiny_copies: a copy of less than this (4 KiB) ... */
    uint64_t tiny_copies;       /* ... at least this many in one batch (64) */
    uint64_t huge_copies;       /* huge_batch: more copies than this (16384) */
    uint64_t overlap_bytes;     /* overlap_flag_large_copy: copies above this (128 KiB) */
    uint64_t same_device_bytes; /* same_device_engine_copy: copies of at least this (1 MiB) */
    uint64_t pageable_bytes;    /* pageable_source: a batch copying at least this from pageable memory (1 MiB) */
    uint64_t low_bw_bytes;      /* low_bandwidth: GPU-timed batches of at least this (1 MiB) ... */
    uint64_t low_bw_percent;    /* ... below this percentage of the table's bandwidth (50) */
};
extern struct cbt_advice_settings cbt_advice_set;

/* --advice NAME=VALUE (or `off`): one threshold; -1 after a usage error (printed). */
int cbt_advice_option(const char *arg);
/* The option's help lines, for the commands' --help. */
#define CBT_USAGE_ADVICE                                                                   \
    "  --advice NAME=V   an advice threshold (cubatchtrace(1) lists them), or `off`;\n"    \
    "                    repeatable\n"                                                     \
    "  --advice-costs FILE  the cost table the advice's savings are estimated from\n"      \
    "                    (bench/advice-costs.sh makes it on a GPU machine)\n"

/* The cost table: GiB/s measured on one GPU and driver. */
struct cbt_cost_table {
    bool loaded;
    char path[512], gpu[128], driver[64], measured[64];
    /* GiB/s, 0 not measured: batches of large copies by direction, with and
     * without PREFER_OVERLAP_WITH_COMPUTE; pageable and pinned sources;
     * and the same device-to-device bytes as an SM copy (cuMemcpyDtoDAsync). */
    double h2d, h2d_overlap, d2h, d2h_overlap, d2d, d2d_overlap, h2d_pageable, sm_d2d;
    /* ns, 0 not measured: a batch call's host time, the part each call pays
     * once (batch_call_ns) and each copy's (batch_copy_ns) */
    double call_ns, copy_ns;
};
extern struct cbt_cost_table cbt_advice_table;
/* --advice-costs FILE: load the table; -1 when it cannot be used (one line on stderr). */
int cbt_advice_costs(const char *path);
/* "FILE (GPU, driver D, measured M)" or "none: no measured cost table". */
const char *cbt_advice_table_say(char *buf, size_t len);

/* What the advisor gathers of one batch's ops (zeroed with the batch). */
struct cbt_advice_batch {
    uint64_t tiny;                                    /* copies below tiny_bytes */
    uint64_t any_dev, any_dev_first;                  /* ANY on a device or managed source */
    uint64_t any_host, any_host_first;                /* ANY on a host source */
    uint64_t overlap, overlap_first, overlap_bytes[3]; /* the flag on large copies: bytes HtoD, DtoH, DtoD */
    uint64_t same_dev, same_dev_first, same_dev_bytes; /* large copies within one GPU */
    uint64_t pageable_bytes, pageable_first;          /* bytes from pageable sources */
};

/* Op i of chunk o (the batch's op o->first + i) into b. */
void cbt_advice_op(struct cbt_advice_batch *b, const struct cbt_ops *o, uint32_t i);

/* The advisor's state (runs per thread and stream). */
struct cbt_advisor;
struct cbt_advisor *cbt_advisor_new(void);
void cbt_advisor_free(struct cbt_advisor *v);

/* An advice and where it belongs. */
struct cbt_advice {
    struct cbt_where w;
    struct cbt_batch_finding f;
};
#define CBT_ADVICE_MAX 16 /* the most advice one call below writes */

/* A batch, whole: the advice it draws (and the run it ends), at most
 * CBT_ADVICE_MAX, into out; returns how many. */
size_t cbt_advice_batch(struct cbt_advisor *v, const struct cbt_where *w, const struct cbt_batch *b,
                        const struct cbt_advice_batch *ab, uint64_t ops_seen, struct cbt_advice *out);
/* A batch's GPU time (the gpu_time event, joined with its batch): the
 * low_bandwidth advice it draws, 1 or 0, into out.  Its call site is the
 * batch's when the batch came not long before (a small table of the latest
 * batches' call sites: cbt_advice_batch fills it). */
size_t cbt_advice_gpu(struct cbt_advisor *v, const struct cbt_where *w, const struct cbt_ev_gpu *g,
                      struct cbt_advice *out);
/* GPU-timed batches the advisor could not judge for want of a cost table (low_bandwidth). */
uint64_t cbt_advice_gpu_unjudged(const struct cbt_advisor *v);

/* The runs still open at the end of the input: calls fn for each advice. */
void cbt_advice_flush(struct cbt_advisor *v, void (*fn)(void *ctx, const struct cbt_advice *a), void *ctx);

/* An advice's saving in words: "12.3 us of host time, measured in the trace",
 * "unknown: no measured cost table", ...; returns buf. */
const char *cbt_advice_saving_say(uint8_t saving, uint64_t ns, char *buf, size_t len);
/* The same for a rule's advice together: kinds is a mask of 1 << enum cbt_saving. */
const char *cbt_advice_savings_say(unsigned kinds, uint64_t ns, char *buf, size_t len);

#endif
