/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool and the babeltrace2 plugin): what the reader
 * (read/) hands down, and the one interface it hands it through.  The
 * reader knows no consumer: the tool's aggregate (analyse/agg_out.c) and the
 * plugin's filter (plugin/expand.c) each fill in a struct cbt_read_out.
 */
#ifndef CBT_RECORDS_H
#define CBT_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

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
    /* cubatchtrace:stack (CUBATCHTRACE_STACK=N): the caller, then its callers; nstack 0: not recorded */
    uint64_t stack[CBT_EV_STACK_MAX];
    uint8_t nstack;
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
    uint8_t flags[CBT_CHUNK]; /* the op's flags (PREFER_OVERLAP_WITH_COMPUTE), the low 8 bits */
    uint64_t bytes[CBT_CHUNK];
};

/* What an advice's estimated saving rests on (analyse/advice.c); the names
 * are those of the JSON outputs (saving_from). */
enum cbt_saving {
    CBT_SAVING_NONE,     /* "none": not an advice */
    CBT_SAVING_RISK,     /* "risk": a risk, not a cost: nothing to save */
    CBT_SAVING_TRACE,    /* "trace": host time the trace measured (the driver's time of the calls) */
    CBT_SAVING_TABLE,    /* "table": GPU time from the cost table (--advice-costs) */
    CBT_SAVING_NO_TABLE, /* "no_table": GPU time, but no measured cost table (or not its figure) */
    CBT_SAVING_BOUND,    /* "bound": host time, at most: what the trace bounds it by (no cost table's figure) */
    CBT_SAVING_TABLE_HOST, /* "table_host": host time from the cost table (the part of a call one batch pays once) */
    CBT_SAVING_COUNT_
};
/* The kinds whose saving is a figure (saving_ns). */
#define CBT_SAVING_WITH_NS \
    (1u << CBT_SAVING_TRACE | 1u << CBT_SAVING_TABLE | 1u << CBT_SAVING_BOUND | 1u << CBT_SAVING_TABLE_HOST)
static inline const char *cbt_saving_name(unsigned v)
{
    static const char *const names[CBT_SAVING_COUNT_] = {"none", "risk", "trace", "table", "no_table", "bound", "table_host"};
    return v < CBT_SAVING_COUNT_ ? names[v] : "?";
}

/* A finding with where it belongs (the validator's struct cbt_finding, located). */
struct cbt_batch_finding {
    uint64_t batch_id, op, other_op, value, limit, caller;
    uint64_t stack[CBT_EV_STACK_MAX]; /* the batch's (struct cbt_batch); nstack 0: not recorded */
    uint8_t nstack;
    uint16_t rule;
    uint8_t severity, side;
    /* What the finding's words may tell besides (cbt_finding_words): the ops
     * op and other_op as read (has_op, has_other), and whether the batch is
     * a 1D batch (copies). */
    bool has_op, has_other, copies;
    CUDA_MEMCPY3D_BATCH_OP opv, otherv;
    /* An advice (severity advice): what following it would save, in ns, and what that rests on. */
    uint64_t saving_ns;
    uint64_t spent_ns; /* unbatched_run: the host time the run's calls took in the driver */
    uint8_t saving;    /* enum cbt_saving */
};

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
/*
 * Where the reader hands what it read, as it reads it (events in trace
 * order, batches once put back together).  ctx is every call's first
 * argument.  host is required (the reader keys processes by host index);
 * every other member may be NULL: that part is not wanted.
 */
struct cbt_read_out {
    void *ctx;
    /* the index of a host name, the same for the same name, from 0 */
    uint32_t (*host)(void *ctx, const char *hostname);
    /* a batch put back together (ops: its first chunk for the summary, NULL none); its further chunks */
    void (*batch)(void *ctx, const struct cbt_where *w, const struct cbt_batch *b, const struct cbt_ops *ops);
    void (*batch_ops)(void *ctx, const struct cbt_where *w, uint64_t batch_id, const struct cbt_ops *ops);
    /* a read-time finding of the validator */
    void (*finding)(void *ctx, const struct cbt_where *w, const struct cbt_batch_finding *f);
    /* what the reader learned, once, at the end of the input */
    void (*read_stats)(void *ctx, const struct cbt_read_stats *s);
    /* the recorder's version (an event class's model.emf.uri) */
    void (*recorded_by)(void *ctx, const char *version);
    /* a cubatchtrace:process event: rank (-1 none), rank_var ("" none), gpu_time (1, 0, -1 unsaid), gpu_every (0 said as 1) */
    void (*process)(void *ctx, const struct cbt_where *w, int64_t rank, const char *rank_var, int gpu_time,
                    uint32_t gpu_every);
    /* the same event's image: its pid namespace (0 unknown), its start (CLOCK_REALTIME ns, 0 unknown) */
    void (*image)(void *ctx, const struct cbt_where *w, uint64_t pid_ns, uint64_t start_ns);
    /* a cubatchtrace:gpu_time event (w->ts_ns: the event's own time) */
    void (*gpu_time)(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g);
    /* lttng_ust_statedump: an object loaded at baddr; its build id */
    void (*bin_info)(void *ctx, const struct cbt_where *w, uint64_t baddr, uint64_t memsz, const char *path,
                     bool is_pic);
    void (*build_id)(void *ctx, const struct cbt_where *w, uint64_t baddr, const uint8_t *id, size_t len);
    /* events or packets the tracer discarded */
    void (*discarded)(void *ctx, bool packets, uint64_t count, bool count_known);
    /* a cubatchtrace:fabric event (cuFabricCpyBatchAsync: counted, its ops not read) */
    void (*fabric)(void *ctx, const struct cbt_where *w, const struct cbt_ev_fabric *f);
};

/* ---- a batch whole: what the reader hands a batch callback (struct cbt_read_opts's batch) */

enum cbt_batch_state {
    CBT_BS_COMPLETE,   /* every recorded op, validated */
    CBT_BS_PENDING,    /* outcome "pending" and no batch_end: the process ended inside the driver call; validated */
    CBT_BS_INCOMPLETE, /* chunks missing at the end of the input (discarded events?): not validated */
    CBT_BS_MALFORMED,  /* chunks that do not fit the event format: not validated */
    CBT_BS_GIVEN_UP,   /* the reader's memory cap: later ops are summarised, not shown, not validated */
    CBT_BS_NO_HEADER,  /* chunks whose cubatchtrace:batch event never came */
};

/* A batch as the reader put it back together, whole (show, timeline, the
 * plugin).  Valid during the call only. */
struct cbt_read_batch {
    struct cbt_where w;
    bool have_header;
    struct cbt_ev_batch h;   /* the header, with batch_end's fields over it when it came */
    enum cbt_batch_state state;
    uint64_t nops;           /* ops[0..nops) */
    const uint64_t *spans;   /* pairs [lo, hi): the ops whose chunk came; NULL: all of [0, nops) */
    uint32_t nspans;
    const CUDA_MEMCPY3D_BATCH_OP *ops;
    const struct cbt_operand_info *src, *dst;
    const struct cbt_finding *findings; /* read-time, in the validator's order */
    uint64_t nfindings;
    const uint8_t *finding_inline;      /* per finding: 1 the inline validator made it too, 0 it did not, 2 not compared */
    const struct cbt_finding *inline_only; /* inline findings the read-time validator did not make */
    uint64_t ninline_only;
    /* A 1D batch (cuMemcpyBatchAsync, cbt_api_is_1d(h.api)): its ops are its copies */
    bool is1d;
    struct cbt_ev_batch1d d;
    const CUmemcpyAttributes *attrs;  /* the attributes recorded: d.attrs_recorded, when whole; else NULL */
    const uint64_t *attrs_idxs;       /* NULL where attrs is */
    uint64_t nattrs;                  /* attrs[0..nattrs): 0 where attrs is NULL */
    const uint64_t *stack;            /* cubatchtrace:stack: the caller, then its callers (nstack 0: none) */
    uint8_t nstack;
    /* Copies that ran nowhere yet (CUDA graphs): a batch node's record (door
     * graph_node) or a batch the driver took into a capture (captured; graph:
     * the graph it went into, 0 unknown).  Their launches are the batches of
     * door graph_launch; the summary, the timeline and export count those. */
    bool not_run, captured;
    uint64_t graph;
};
typedef void (*cbt_batch_fn)(void *ctx, const struct cbt_read_batch *b);

/* The first op at or after i whose chunk came (b->nops when none; *sp, from
 * 0, tracks the span): for (i = cbt_read_op(b, 0, &sp); i < b->nops; i = cbt_read_op(b, i + 1, &sp)). */
static inline uint64_t cbt_read_op(const struct cbt_read_batch *b, uint64_t i, uint32_t *sp)
{
    if (!b->spans)
        return i;
    while (*sp < b->nspans && b->spans[2 * *sp + 1] <= i)
        (*sp)++;
    if (*sp == b->nspans)
        return b->nops;
    return i < b->spans[2 * *sp] ? b->spans[2 * *sp] : i;
}

#endif
