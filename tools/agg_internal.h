/* SPDX-License-Identifier: MIT */
/*
 * The aggregate's tables as agg.c fills them, for the files that turn them
 * into output (tables.c, text.c, json.c).  Nothing outside that group
 * includes this.
 */
#ifndef CBT_AGG_INTERNAL_H
#define CBT_AGG_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/catalog.h>

#include "agg.h"

/* A row of a table: what went through it and its measure. */
struct row {
    uint64_t batches, ops, bytes;
    uint64_t n, sum, min, max; /* the table's measure: driver ns per batch or bytes per op */
};

/* Add row r into `into` (counts, and the measure's count, sum, min and max). */
static inline void cbt_row_merge(struct row *into, const struct row *r)
{
    into->batches += r->batches;
    into->ops += r->ops;
    into->bytes += r->bytes;
    if (r->n) {
        if (into->n == 0 || r->min < into->min)
            into->min = r->min;
        if (r->max > into->max)
            into->max = r->max;
        into->n += r->n;
        into->sum += r->sum;
    }
}

/* A bounded hash table keyed by three words (a process, thread, stream or
 * call site) with an "other" row when full. */
struct kent {
    uint64_t k[3];
    struct row row;
    uint64_t extra;   /* streams: stream_id */
    char *label;      /* processes: procname */
    int64_t rank;     /* processes: the job rank of cubatchtrace:process; -1 none */
    uint8_t rank_var; /* processes: enum cbt_rank_var, RV_UNSEEN without that event */
    int8_t gpu_time;  /* processes: the process event's gpu_time (1, 0), -1 unsaid */
};

/* Where a process's rank came from (the rank_var field of cubatchtrace:process). */
enum cbt_rank_var { RV_UNSEEN, RV_NONE, RV_OMPI, RV_PMI, RV_SLURM, RV_OTHER };

struct ktab {
    struct kent *ents;
    size_t n, cap_ents, limit;
    uint32_t *slots;  /* entry index + 1; 0 = empty */
    size_t nslots;
    struct kent other;
    uint64_t overflowed; /* keys that went to `other` */
};

enum { DIR_HTOD, DIR_DTOH, DIR_DTOD, DIR_HTOH, DIR_HTOA, DIR_ATOH, DIR_DTOA, DIR_ATOD, DIR_ATOA, DIR_PEER, DIR_UNKNOWN,
       DIR_COUNT };
#define NKIND 8   /* the 7 memory kinds + out of range */
#define NORDER 5  /* the 4 access orders + out of range */
#define NAPI (CBT_API_COUNT_ + 1)
#define NDOOR 4
#define NHIST 66  /* 0, then [2^k, 2^(k+1)) for k = 0..63 (index k+1), plus spare */

/* Bytes by device: one row per (host, device ordinal) of a device or managed
 * pointer operand, at most NDEV rows, then "other"; a negative ordinal goes
 * to "unknown". */
#define NDEV 64
struct devrow {
    uint32_t host;
    int32_t dev;
    uint64_t ops_out, bytes_out, ops_in, bytes_in;
    uint64_t peer_ops_out, peer_bytes_out, peer_ops_in, peer_bytes_in;
};

/* Findings of one rule: how many, and the earliest. */
struct frule {
    uint64_t count;
    bool seen, has_ts;
    int64_t first_ts;
    uint64_t first_batch;
    int64_t first_pid;
    uint32_t first_host;
    uint8_t severity;
};

struct brec; /* a batch in flight (agg.c) */

struct cbt_agg {
    unsigned by;
    char **hosts;
    uint32_t nhosts;
    /* totals */
    uint64_t batches, ops, bytes, failed, refused, no_driver, driver_ns;
    uint64_t discarded_events, discarded_packets, discarded_unknown;
    uint64_t orphan_ops, orphan_chunks, incomplete_batches, pending_overflow;
    uint64_t gpu_events, gpu_timed, gpu_ns; /* cubatchtrace:gpu_time */
    /* tables */
    struct row api[NAPI], door[NDOOR], apidoor[NAPI][NDOOR];
    struct row dir[DIR_COUNT], kind[NKIND][NKIND], order[NORDER], bsize[NHIST], osize[NHIST];
    struct ktab procs, threads, streams, callers;
    struct devrow devs[NDEV], dev_other, dev_unknown;
    unsigned ndevs, dev_last;
    uint64_t dev_overflowed; /* (host, device) keys that went to `other` */
    struct frule rules[CBT_RULE_COUNT + 1];
    uint64_t findings;
    struct cbt_read_stats rs;
    /* batches in flight */
    struct brec *pend;
    size_t npend, cappend;
    /* call site names */
    struct cbt_objmap *objs;
    /* the cubatchtrace versions that recorded the traces (metadata), in the order seen */
    char recorders[4][32];
    unsigned nrecorders;
    /* each finding as it is handed over (check) */
    cbt_finding_fn on_finding;
    void *on_finding_ctx;
    bool finished;
    /* a part of the inputs read on a thread of its own (parallel.c): host
     * names and the call-site map are those of `whole`, under its lock */
    struct cbt_agg *whole;
    pthread_mutex_t names_lock;
};

#endif
