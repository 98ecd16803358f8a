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

/* A row of the GPU tables: the timed batches of the row (cubatchtrace:gpu_time
 * with status "timed"), each attributed whole. */
struct gpurow {
    uint64_t batches, ops, bytes, gpu_ns, host_ns; /* host_ns: the batches' driver_ns */
};

static inline void cbt_gpurow_add(struct gpurow *into, const struct gpurow *r)
{
    into->batches += r->batches;
    into->ops += r->ops;
    into->bytes += r->bytes;
    into->gpu_ns += r->gpu_ns;
    into->host_ns += r->host_ns;
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
    uint64_t forwarded_ok, gpu_events; /* processes: batches forwarded with CUDA_SUCCESS; gpu_time events
                                        * of other statuses than call_failed */
    struct gpurow gpu;     /* GPU streams: the timed batches */
    uint64_t *over_time;   /* GPU streams: gpu_ns per bucket (GPU_BUCKETS, struct gpu_time's grid); NULL: none */
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

/* The entry of key (k0, k1, k2), created (zeroed) when new; t->other when
 * the table is full (agg.c). */
struct kent *cbt_ktab_get(struct ktab *t, uint64_t k0, uint64_t k1, uint64_t k2, bool *created);

enum { DIR_HTOD, DIR_DTOH, DIR_DTOD, DIR_HTOH, DIR_HTOA, DIR_ATOH, DIR_DTOA, DIR_ATOD, DIR_ATOA, DIR_PEER, DIR_UNKNOWN,
       DIR_COUNT };
/* The class of an operand's memory: 'D' device or managed, 'H' host (pinned
 * or pageable), 'A' array; 0 unknown. */
static inline int cbt_mem_class(uint8_t mem, uint8_t type)
{
    switch (mem) {
    case CBT_MEM_DEVICE:
    case CBT_MEM_MANAGED: return 'D';
    case CBT_MEM_HOST_PINNED:
    case CBT_MEM_HOST_PAGEABLE: return 'H';
    case CBT_MEM_ARRAY: return 'A';
    default: return type == CBT_OPERAND_ARRAY ? 'A' : 0;
    }
}

/* The direction (DIR_*) of a copy from memory class s to d; D to D is peer
 * when both devices are known (>= 0) and differ. */
static inline int cbt_direction(int s, int d, int32_t sdev, int32_t ddev)
{
    switch (s << 8 | d) {
    case 'H' << 8 | 'D': return DIR_HTOD;
    case 'D' << 8 | 'H': return DIR_DTOH;
    case 'D' << 8 | 'D': return sdev >= 0 && ddev >= 0 && sdev != ddev ? DIR_PEER : DIR_DTOD;
    case 'H' << 8 | 'H': return DIR_HTOH;
    case 'H' << 8 | 'A': return DIR_HTOA;
    case 'A' << 8 | 'H': return DIR_ATOH;
    case 'D' << 8 | 'A': return DIR_DTOA;
    case 'A' << 8 | 'D': return DIR_ATOD;
    case 'A' << 8 | 'A': return DIR_ATOA;
    default: return DIR_UNKNOWN;
    }
}

/* The power-of-two bin of v: 0 for 0, k+1 for [2^k, 2^(k+1)). */
static inline unsigned cbt_hist_bin(uint64_t v) { return v ? 64u - (unsigned)__builtin_clzll(v) : 0u; }

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

/* GPU time (agg_gpu.c): the timed batches by direction (DIR_COUNT: "mixed"),
 * memory kinds, mean bytes per op, direction and mean bytes per op together,
 * stream and device, and over time. */
#define GPU_STATUS_N 7  /* the statuses of CBT_GPU_STATUS_LIST, then out of range */
#define GPU_BUCKETS 128 /* over time: buckets per stream */
#define GPU_TIME_STREAMS 16 /* over time: streams shown, then "other" */
struct gpudev {
    uint32_t host;
    int32_t dev;
    struct gpurow r;
};
struct gpu_time {
    uint64_t events, status[GPU_STATUS_N];
    struct gpurow total;
    struct gpurow dir[DIR_COUNT + 1], kind[NKIND][NKIND], kind_mixed, osize[NHIST];
    struct gpurow dir_osize[DIR_COUNT + 1][NHIST]; /* [direction as dir][op-size bin as osize] */
    struct ktab streams; /* (host, vpid, stream), extra: stream_id */
    struct gpudev devs[NDEV];
    unsigned ndevs;
    struct gpurow dev_other, dev_unknown;
    uint64_t dev_overflowed;
    /* over time: the GPU starts seen span [lo, hi]; buckets of bucket_ns
     * (the smallest power of 2 for which GPU_BUCKETS of them, from lo
     * rounded down to a multiple, reach hi) from start_ns; so the grid
     * depends on lo and hi alone, not on the order batches came in */
    bool any_time;
    int64_t lo, hi, start_ns;
    uint64_t bucket_ns;
};
/* A gpu_time event into g (w->ts_ns: the event's time; the GPU start is
 * w->ts_ns + start_rel_ns).  g->streams is agg.c's to create and free. */
void cbt_gpu_add(struct gpu_time *g, const struct cbt_where *w, const struct cbt_ev_gpu *e);
/* Before merging part p into whole w: both onto one grid over time (the one
 * reading both parts' batches at once would have built). */
void cbt_gpu_align(struct gpu_time *w, struct gpu_time *p);
/* Adds p's tables but its streams (agg.c merges those as keyed tables, once aligned). */
void cbt_gpu_merge(struct gpu_time *w, const struct gpu_time *p);

struct brec; /* a batch in flight (agg.c) */

struct cbt_agg {
    unsigned by;
    char **hosts;
    uint32_t nhosts;
    /* totals */
    uint64_t batches, ops, bytes, failed, refused, no_driver, driver_ns;
    uint64_t discarded_events, discarded_packets, discarded_unknown;
    uint64_t orphan_ops, orphan_chunks, incomplete_batches, pending_overflow;
    struct gpu_time gpu; /* cubatchtrace:gpu_time */
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
