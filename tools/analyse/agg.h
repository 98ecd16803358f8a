/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the aggregate, streaming and bounded (agg.c).  The
 * reader hands it batches, ops and findings as it puts them back together
 * (through the struct cbt_read_out that cbt_agg_read_out fills in); the
 * outputs (render/) print it once finished.
 */
#ifndef CBT_AGG_H
#define CBT_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/events.h>

#include "base/records.h"

/* ---- the aggregate ---- */
struct cbt_agg;
/* out's members call the functions below on a (agg_out.c): what the reader
 * (read/) hands down goes into the aggregate. */
void cbt_agg_read_out(struct cbt_agg *a, struct cbt_read_out *out);
/* CBT_BY_ALL: the text summary prints every table, not the first screen's (text.c) */
enum cbt_by { CBT_BY_PROCESS = 1, CBT_BY_THREAD = 2, CBT_BY_STREAM = 4, CBT_BY_CALLER = 8, CBT_BY_HOST = 16, CBT_BY_ALL = 32 };
struct cbt_agg *cbt_agg_new(unsigned by);
unsigned cbt_agg_by(const struct cbt_agg *a);
void cbt_agg_free(struct cbt_agg *a);
uint32_t cbt_agg_host(struct cbt_agg *a, const char *hostname);
const char *cbt_agg_host_name(const struct cbt_agg *a, uint32_t host);
/* `ops` may be NULL (batch without recorded ops). */
void cbt_agg_batch(struct cbt_agg *a, const struct cbt_where *w, const struct cbt_batch *b,
                   const struct cbt_ops *ops);
void cbt_agg_batch_ops(struct cbt_agg *a, const struct cbt_where *w, uint64_t batch_id,
                       const struct cbt_ops *ops);
void cbt_agg_finding(struct cbt_agg *a, const struct cbt_where *w, const struct cbt_batch_finding *f);
/* Hands each finding to fn as well, once counted (check prints them as they come). */
typedef void (*cbt_finding_fn)(void *ctx, const struct cbt_where *w, const struct cbt_batch_finding *f);
void cbt_agg_on_finding(struct cbt_agg *a, cbt_finding_fn fn, void *ctx);
/* What the reader itself learned (assemble.c), handed over once at the end of the input. */
void cbt_agg_read_stats(struct cbt_agg *a, const struct cbt_read_stats *s);
const struct cbt_read_stats *cbt_agg_get_read_stats(const struct cbt_agg *a);
/* inline findings that disagree with the read-time validator (check: exit 3) */
uint64_t cbt_agg_inline_disagreeing(const struct cbt_agg *a);
void cbt_agg_bin_info(struct cbt_agg *a, const struct cbt_where *w, uint64_t baddr, uint64_t memsz,
                      const char *path, bool is_pic);
/* A cubatchtrace:process event: the job rank of w's process (-1: none), the
 * variable it came from ("" none), and whether its batches are GPU-timed
 * (1 yes, 0 no, -1 the event does not say). */
/* gpu_every: one batch in gpu_every of each stream is timed (0 said as 1: every batch) */
void cbt_agg_process(struct cbt_agg *a, const struct cbt_where *w, int64_t rank, const char *rank_var, int gpu_time,
                     uint32_t gpu_every);
/* What the process event says of the image besides: its pid namespace's
 * inode (0 unknown) and when it started (CLOCK_REALTIME ns, 0 unknown). */
void cbt_agg_image(struct cbt_agg *a, const struct cbt_where *w, uint64_t pid_ns, uint64_t start_ns);
/* A process image as people read it: "pid P" and, when its (host, vpid) had
 * several images, " image K/N" (numbered by start time), into b. */
const char *cbt_agg_proc_name(struct cbt_agg *a, uint32_t host, uint64_t pkey, char *b, size_t l);
/* The number of a process image among the images of its (host, vpid), from
 * 1 in the order they started, once the aggregate is finished; 0 unknown. */
uint32_t cbt_agg_image_number(const struct cbt_agg *a, uint32_t host, uint64_t pkey);
/* The objects the statedump events placed, for naming call sites (callsite.h). */
struct cbt_objmap *cbt_agg_callsites(const struct cbt_agg *a);
/* Findings of one rule: how many, and the earliest. */
struct cbt_rule_tally {
    uint64_t count;
    bool seen, has_ts;
    int64_t first_ts;
    uint64_t first_batch;
    int64_t first_pid;
    uint32_t first_image; /* the process image's tag (0 untagged) */
    uint32_t first_host;
    uint8_t severity;
    struct cbt_batch_finding first; /* the earliest finding itself (its words, its caller) */
    uint64_t saving_ns;             /* advice: the estimated savings, summed */
    unsigned saving_kinds;          /* advice: 1 << enum cbt_saving of each */
};
/* The figures of the aggregate the outputs print besides its tables
 * (tables.h, hosts.h): valid while the aggregate lives, unchanged. */
struct cbt_agg_totals {
    uint64_t batches, ops, bytes, driver_ns, findings; /* findings: advice left out */
    uint64_t advice;                                    /* findings of severity advice */
    uint64_t advice_unjudged; /* GPU-timed batches low_bandwidth could not judge: no cost table figure */
    uint64_t failed, refused, refused_in_capture, no_driver; /* batches */
    uint64_t discarded_events, discarded_packets, discarded_unknown;
    /* cuFabricCpyBatchAsync calls: counted apart, their ops not read (in none of the figures above) */
    uint64_t fabric_calls, fabric_ops, fabric_failed, fabric_driver_ns;
    uint64_t orphan_ops, incomplete_batches, pending_overflow;
    uint64_t untagged;             /* batches whose id names no process image */
    bool procs_full, threads_full; /* those tables overflowed: their counts are lower bounds */
    bool tables_full;              /* any bounded table overflowed */
    uint32_t nhosts;
    const char *recorders[4];      /* the versions that recorded the traces, in the order seen */
    unsigned nrecorders;
    const struct cbt_read_stats *rs;
    const struct cbt_rule_tally *rules; /* CBT_RULE_COUNT + 1: by rule, then unknown rules */
    const struct gpu_time *gpu;         /* agg_gpu.h */
};
void cbt_agg_totals(const struct cbt_agg *a, struct cbt_agg_totals *t);
/* Batches whose id carries no image tag (a trace recorded before images):
 * their processes are (host, vpid). */
uint64_t cbt_agg_untagged_batches(const struct cbt_agg *a);
/* A cubatchtrace:gpu_time event (w.ts_ns: the event's own time). */
void cbt_agg_gpu_time(struct cbt_agg *a, const struct cbt_where *w, const struct cbt_ev_gpu *g);
/* the version of cubatchtrace that recorded a trace (its metadata says) */
void cbt_agg_recorded_by(struct cbt_agg *a, const char *version);
/* the build id of the object that a bin_info event put at baddr */
void cbt_agg_build_id(struct cbt_agg *a, const struct cbt_where *w, uint64_t baddr, const uint8_t *id, size_t len);
void cbt_agg_discarded(struct cbt_agg *a, bool packets, uint64_t count, bool count_known);
/* a cubatchtrace:fabric event: one cuFabricCpyBatchAsync call */
void cbt_agg_fabric(struct cbt_agg *a, const struct cbt_ev_fabric *f);
void cbt_agg_finish(struct cbt_agg *a);
/* count of findings whose severity is at or above `threshold` (error=0 is most severe) */
uint64_t cbt_agg_findings_at_or_above(const struct cbt_agg *a, unsigned threshold);
uint64_t cbt_agg_findings_total(const struct cbt_agg *a);
/* batches summarised so far */
uint64_t cbt_agg_batches(const struct cbt_agg *a);

/* Reading in parts (parallel.c): an aggregate for one part of the inputs,
 * whose host names and call-site map are whole's (shared under a lock, so
 * parts may be filled on several threads at once); once the part is
 * finished, cbt_agg_merge adds it to whole (one thread at a time).  The
 * merged figures do not depend on the order the parts come in, but for
 * tables that overflowed (the "other" rows). */
struct cbt_agg *cbt_agg_new_part(struct cbt_agg *whole);
void cbt_agg_merge(struct cbt_agg *whole, struct cbt_agg *part);
/* A copy of what a (not finished) aggregate holds now, batches still
 * waiting for their ops left out: a live summary prints it and reads on. */
struct cbt_agg *cbt_agg_snapshot(struct cbt_agg *a);

/* What the tracer lost: events and packets discarded, and discard notices that
 * came without a count. */
void cbt_agg_lost(const struct cbt_agg *a, uint64_t *events, uint64_t *packets, uint64_t *uncounted);

#endif
