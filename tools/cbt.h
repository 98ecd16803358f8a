/*
 * cubatchtrace (the tool): what its parts share.
 *
 *   reader.c   babeltrace2 graph: one source per trace, our own sink, field
 *              indices cached per event class; hands decoded records to agg.c
 *   agg.c      streaming aggregation in bounded tables, text and JSON output,
 *              the finding lines of `check`
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

/* The batch fields the summary uses (cubatchtrace:batch minus the ops). */
struct cbt_batch {
    uint64_t batch_id, num_ops, op_list, stream, stream_id, driver_ns, caller;
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

struct cbt_finding {
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
void cbt_agg_finding(struct cbt_agg *a, const struct cbt_where *w, const struct cbt_finding *f);
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

/* ---- run.c ---- */
int cbt_cmd_run(int argc, char **argv);

/* ---- main.c ---- */
void cbt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t cbt_now_ns(void);

#endif
