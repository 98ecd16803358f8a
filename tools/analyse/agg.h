/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the aggregate, streaming and bounded (agg.c).  The
 * reader hands it batches, ops and findings as it puts them back together;
 * the outputs (text.c, json.c) print it once finished.
 */
#ifndef CBT_AGG_H
#define CBT_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/events.h>

/* Where an event happened.  A process image (docs/events.md: a process
 * until it execs, a forked child apart from its parent) is (host, vpid,
 * image): the image tag tells apart images of one vpid on one host (exec,
 * containers that are each pid 1, reused pids). */
struct cbt_where {
    uint32_t host;    /* index into the host name table */
    int64_t vpid;     /* -1 when the trace has no vpid context */
    int64_t vtid;     /* -1 when unknown */
    uint32_t image;   /* the process image's tag; 0: untagged (recorded before images, or an event that does not say) */
    const char *procname; /* NULL when unknown; valid during the call only */
    int64_t ts_ns;    /* ns from origin; INT64_MIN when unknown */
    bool has_ts;
};

/* The one place an event's image is set: from the batch id of any event that
 * carries one (its high 32 bits are the tag), or from a tag an event carries
 * as such (the process event's image >> 32). */
static inline void cbt_where_image(struct cbt_where *w, uint32_t tag) { w->image = tag; }
static inline uint32_t cbt_batch_image(uint64_t batch_id) { return (uint32_t)(batch_id >> 32); }
static inline void cbt_where_image_of_batch(struct cbt_where *w, uint64_t batch_id)
{
    cbt_where_image(w, cbt_batch_image(batch_id));
}
/* The batch's number within its image, as shown to people (the low 32 bits;
 * an untagged batch id is its number already). */
static inline uint64_t cbt_batch_number(uint64_t batch_id) { return batch_id & 0xffffffffull; }
/* A process image as one word, the key of the tables keyed by (host,
 * process, ...): tag << 32 | the vpid's 32 bits; untagged: the vpid's. */
static inline uint64_t cbt_pkey(uint32_t image, int64_t vpid) { return (uint64_t)image << 32 | (uint32_t)vpid; }
static inline uint64_t cbt_where_pkey(const struct cbt_where *w) { return cbt_pkey(w->image, w->vpid); }
static inline int64_t cbt_pkey_vpid(uint64_t k) { return (int64_t)(int32_t)(uint32_t)k; }
static inline uint32_t cbt_pkey_image(uint64_t k) { return (uint32_t)(k >> 32); }

/* The batch fields the summary uses (cubatchtrace:batch minus the ops).
 * ops_expected: how many ops the reader hands over for it (cbt_agg_batch and
 * cbt_agg_batch_ops); the batch is summarised once they all came. */
struct cbt_batch {
    uint64_t batch_id, num_ops, ops_expected, op_list, stream, stream_id, driver_ns, caller;
    uint32_t result;
    int32_t device;
    uint8_t api, door, outcome;
};

/* A chunk of ops (structure of arrays), at most CBT_CHUNK per call. */
#define CBT_CHUNK 256
struct cbt_ops {
    uint64_t first;
    uint32_t count;
    uint8_t src_type[CBT_CHUNK], dst_type[CBT_CHUNK];
    uint8_t src_mem[CBT_CHUNK], dst_mem[CBT_CHUNK];
    int32_t src_dev[CBT_CHUNK], dst_dev[CBT_CHUNK];
    uint8_t order[CBT_CHUNK];
    uint64_t bytes[CBT_CHUNK];
};

/* A finding with where it belongs (the validator's struct cbt_finding, located). */
struct cbt_batch_finding {
    uint64_t batch_id, op, other_op, value, limit, caller;
    uint16_t rule;
    uint8_t severity, side;
};

/* ---- the aggregate ---- */
struct cbt_agg;
enum cbt_by { CBT_BY_PROCESS = 1, CBT_BY_THREAD = 2, CBT_BY_STREAM = 4, CBT_BY_CALLER = 8, CBT_BY_HOST = 16 };
struct cbt_agg *cbt_agg_new(unsigned by);
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
struct cbt_read_stats {
    uint64_t inline_checked;     /* inline findings compared with the read-time ones */
    uint64_t inline_disagreeing; /* findings on one side only */
    uint64_t inline_unchecked;   /* inline findings not compared (older rules, batch not validated, batch unseen) */
    uint64_t pending;            /* batches recorded before a driver call that never returned */
    uint64_t malformed;          /* batches whose chunks do not fit the event format: not validated */
    uint64_t incomplete;         /* batches missing chunks at the end of the input: not validated */
    uint64_t given_up;           /* batches not validated: the reader's memory cap (CUBATCHTRACE_READ_MEMORY) */
    uint64_t findings_dropped;   /* findings past the per-batch cap, counted nowhere else */
    uint16_t rules_seen[8];      /* the distinct `rules` versions recorded, in the order seen */
    unsigned nrules_seen;
    bool rules_more;             /* more than 8 distinct versions */
};
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
