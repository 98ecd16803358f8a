/*
 * cubatchtrace (the tool): what its parts share.
 *
 *   reader.c   babeltrace2 graph: one source per trace, our own sink, field
 *              indices cached per event class; hands decoded events to assemble.c
 *   assemble.c batches put back together from their chunks, validated, their
 *              inline findings compared; hands each batch to agg.c (and show.c)
 *   agg.c      streaming aggregation in bounded tables, text and JSON output,
 *              the finding lines of `check`
 *   show.c     `cubatchtrace show`: every batch, op and finding, one per line
 *   callsite.c naming a caller address: lttng_ust_statedump:bin_info + ELF symbols
 *   run.c      `cubatchtrace run`: session daemon, session, program, summary
 *   main.c     command line
 */
#ifndef CBT_TOOL_H
#define CBT_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#define CBT_PROG "cubatchtrace"

/* Where an event happened. */
struct cbt_where {
    uint32_t host;    /* index into the host name table */
    int64_t vpid;     /* -1 when the trace has no vpid context */
    int64_t vtid;     /* -1 when unknown */
    const char *procname; /* NULL when unknown; valid during the call only */
    int64_t ts_ns;    /* ns from origin; INT64_MIN when unknown */
    bool has_ts;
};

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

/* ---- agg.c ---- */
struct cbt_agg;
enum cbt_by { CBT_BY_PROCESS = 1, CBT_BY_THREAD = 2, CBT_BY_STREAM = 4, CBT_BY_CALLER = 8 };
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
/* inline findings that disagree with the read-time validator (check: exit 3) */
uint64_t cbt_agg_inline_disagreeing(const struct cbt_agg *a);
void cbt_agg_bin_info(struct cbt_agg *a, const struct cbt_where *w, uint64_t baddr, uint64_t memsz,
                      const char *path, bool is_pic);
void cbt_agg_discarded(struct cbt_agg *a, bool packets, uint64_t count, bool count_known);
void cbt_agg_finish(struct cbt_agg *a);
/* `check`: print each finding as it is handed over (buffered, bounded) */
void cbt_agg_set_finding_printer(struct cbt_agg *a, FILE *out);
void cbt_agg_flush_findings(struct cbt_agg *a);
void cbt_agg_print_text(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs);
int cbt_agg_print_json(struct cbt_agg *a, FILE *out, const char *const *inputs, int ninputs);
/* count of findings whose severity is at or above `threshold` (error=0 is most severe) */
uint64_t cbt_agg_findings_at_or_above(const struct cbt_agg *a, unsigned threshold);
uint64_t cbt_agg_findings_total(const struct cbt_agg *a);

/* ---- callsite.c ---- */
struct cbt_objmap;
struct cbt_objmap *cbt_objmap_new(void);
void cbt_objmap_free(struct cbt_objmap *m);
void cbt_objmap_add(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t baddr, uint64_t memsz,
                    const char *path, bool is_pic);
/* "libfoo.so+0x1234 (func+0x10)" or "0x7f..." when unknown; returns buf */
const char *cbt_objmap_name(struct cbt_objmap *m, uint32_t host, int64_t vpid, uint64_t addr, char *buf,
                            size_t len);

/* ---- assemble.c ---- */
enum cbt_batch_state {
    CBT_BS_COMPLETE,   /* every recorded op, validated */
    CBT_BS_PENDING,    /* outcome "pending" and no batch_end: the process ended inside the driver call; validated */
    CBT_BS_INCOMPLETE, /* chunks missing at the end of the input (discarded events?): not validated */
    CBT_BS_MALFORMED,  /* chunks that do not fit the event format: not validated */
    CBT_BS_GIVEN_UP,   /* the reader's memory cap: later ops are summarised, not shown, not validated */
    CBT_BS_NO_HEADER,  /* chunks whose cubatchtrace:batch event never came */
};
const char *cbt_batch_state_name(enum cbt_batch_state s);

/* A batch as the reader put it back together, for show.c.  Valid during the call only. */
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
};
typedef void (*cbt_batch_fn)(void *ctx, const struct cbt_read_batch *b);

struct cbt_asm;
struct cbt_chunk_bytes {
    uint64_t first;                               /* ops_first */
    const uint8_t *ops, *operand_of, *operands;   /* the three sequences */
    uint64_t ops_len, operand_of_len, operands_len;
};
struct cbt_asm *cbt_asm_new(struct cbt_agg *a, cbt_batch_fn fn, void *ctx);
void cbt_asm_free(struct cbt_asm *m);
void cbt_asm_header(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h,
                    const struct cbt_chunk_bytes *c);
void cbt_asm_chunk(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id, const struct cbt_chunk_bytes *c);
void cbt_asm_end(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h);
void cbt_asm_inline_finding(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_finding *f);
/* The end of the input: every batch still assembling is handed over; the stats go to agg. */
void cbt_asm_finish(struct cbt_asm *m);

/* ---- reader.c ---- */
struct cbt_read_opts {
    const char *const *inputs; /* trace directories (searched for `metadata`) or net:// URLs */
    int ninputs;
    const int64_t *pids;       /* restrict to these vpids (none: all) */
    int npids;
    bool allow_empty;          /* no trace / no cubatchtrace event is not an error (run) */
};
/* 0: read; 2: the input could not be read (one line already printed on stderr) */
int cbt_read(const struct cbt_read_opts *o, struct cbt_agg *a);
/* The same, also handing each batch to fn once put back together (show). */
int cbt_read_batches(const struct cbt_read_opts *o, struct cbt_agg *a, cbt_batch_fn fn, void *ctx);

/* ---- show.c ---- */
int cbt_cmd_show(int argc, char **argv);

/* ---- run.c ---- */
int cbt_cmd_run(int argc, char **argv);

/* ---- main.c ---- */
void cbt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t cbt_now_ns(void);

/* ---- agg.c: what `check` asks of the aggregate ---- */
/* What the tracer lost: events and packets discarded, and discard notices that
 * came without a count. */
void cbt_agg_lost(const struct cbt_agg *a, uint64_t *events, uint64_t *packets, uint64_t *uncounted);

/* ---- main.c: usage errors ---- */
struct option;
/* One line for getopt_long's '?' or ':' (c) with opterr = 0 and optstring
 * "+:...": the unknown option and the closest known one, or the option that
 * lacks its value; returns 2. */
int cbt_option_error(const char *cmd, int c, char **argv, const struct option *opts);

/* ---- guard.c ---- */
/* Runs body(arg), the decoding step of a command (read, aggregate, print), in
 * a child process with a memory limit (CUBATCHTRACE_MAX_MEMORY) and a watchdog
 * that stops it when the decoder makes no progress (CUBATCHTRACE_TIMEOUT).
 * Its standard output reaches ours only when body's status is not 2.  Returns
 * body's status, or 2 after one line on stderr naming the trace (inputs when
 * nothing more precise is known) when the child crashed, went over its limit
 * or stalled.  Inside a guarded child it just calls body. */
int cbt_guard_run(const char *const *inputs, int ninputs, int (*body)(void *arg), void *arg);
/* Progress the watchdog should see besides the decoder's (a long step of our own). */
void cbt_guard_progress(void);

#endif
