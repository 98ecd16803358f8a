/* SPDX-License-Identifier: MIT */
/*
 * The aggregate as the rows of its tables, in the order and with the names
 * both outputs print them (tables.c): text.c and json.c differ only in how.
 */
#ifndef CBT_TABLES_H
#define CBT_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyse/agg.h"
#include "analyse/agg_gpu.h"
#include "analyse/classes.h"
#include "analyse/ktab.h"
#include "analyse/callsite.h"

enum measure { M_DRIVER, M_BYTES };

struct trow {
    char name[256];
    const struct row *r;
    uint64_t lo, hi; /* histograms */
    bool has_range;
    const struct cbt_callsite *site; /* call sites: what is known of this one; NULL otherwise */
};

struct table {
    const char *key;    /* JSON member */
    const char *title;
    enum measure m;
    struct trow *rows;
    size_t n, cap;
    bool omit_empty;
};

#define TOP_CALLERS 64

struct tables {
    struct table t[16];
    int n;
    struct row *merged; /* call-site rows after merging equal names */
    struct cbt_callsite *sites; /* and what is known of each */
    struct row caller_other, stream_other, proc_other, thread_other;
};

/* The tables of a finished aggregate; free them with cbt_tables_free. */
void cbt_tables_build(struct cbt_agg *a, struct tables *ts);
void cbt_tables_free(struct tables *ts);

/* A row of the table of bytes by device. */
struct drow {
    char name[300];
    const struct devrow *r;
    bool has_dev; /* false: "unknown" or "other" */
};

/* The rows of the device table: by host, then ordinal; "unknown" and "other" when not empty. */
size_t cbt_device_rows(const struct cbt_agg *a, struct drow rows[NDEV + 2]);

/* ---- GPU time ---- */
struct gtrow {
    char name[256];
    const struct gpurow *r;
    uint64_t lo, hi; /* by_op_size, by_direction_op_size */
    bool has_range;
    const char *direction; /* by_direction_op_size; else NULL */
};

struct gtable {
    const char *key;   /* JSON member of "gpu" */
    const char *title;
    bool json_only;    /* not one of the text summary's tables */
    struct gtrow *rows;
    size_t n, cap;
};

/* A stream over time: gpu_ns per bucket (nbuckets of them). */
struct gstream {
    char name[256];
    const uint64_t *gpu_ns;
};

struct gpu_tables {
    struct gtable t[6]; /* by_direction, by_memkinds, by_op_size, by_direction_op_size, by_stream, by_device */
    int n;
    uint64_t processes_timed; /* processes whose cubatchtrace:process event says gpu_time 1 */
    uint64_t not_read_back;   /* their batches forwarded with CUDA_SUCCESS without a gpu_time event */
    uint64_t processes_sampled; /* processes timing one batch in N (CUBATCHTRACE_GPU_TIME=N, N > 1) */
    uint32_t sample_every, sample_every_min; /* their N, largest and smallest */
    uint64_t not_sampled;     /* their batches forwarded with CUDA_SUCCESS without a gpu_time event */
    struct gpurow stream_other;
    /* over time: the GPU_TIME_STREAMS streams of most GPU time, then "other" */
    uint64_t bucket_ns;       /* 0 when no timed batch had a time */
    int64_t start_ns;
    unsigned nbuckets;
    struct gstream streams[GPU_TIME_STREAMS + 1];
    unsigned nstreams;
    uint64_t other_time[GPU_BUCKETS];
};

/* The GPU tables of a finished aggregate; free them with cbt_gpu_tables_free. */
void cbt_gpu_tables_build(struct cbt_agg *a, struct gpu_tables *g);
void cbt_gpu_tables_free(struct gpu_tables *g);

/* Processes and threads with at least one batch or op. */
uint64_t cbt_agg_count_procs(const struct cbt_agg *a);
uint64_t cbt_agg_count_threads(const struct cbt_agg *a);

#endif
