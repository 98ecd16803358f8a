/* SPDX-License-Identifier: MIT */
/*
 * The aggregate's rows and its bounded hash tables keyed by three words
 * (ktab.c): processes, threads, streams, call sites, GPU streams, each with
 * an "other" row when full.  Under them, the index of three-word keys to
 * numbers (struct kmap) that the timeline's model uses too.
 */
#ifndef CBT_KTAB_H
#define CBT_KTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* An entry of a bounded hash table keyed by three words (a process, thread,
 * stream or call site). */
struct kent {
    uint64_t k[3];
    struct row row;
    uint64_t extra;   /* streams: stream_id */
    char *label;      /* processes: procname */
    int64_t rank;     /* processes: the job rank of cubatchtrace:process; -1 none */
    uint8_t rank_var; /* processes: enum cbt_rank_var, RV_UNSEEN without that event */
    int8_t gpu_time;  /* processes: the process event's gpu_time (1, 0), -1 unsaid */
    uint32_t gpu_every; /* processes: one batch in gpu_every of each stream timed (CUBATCHTRACE_GPU_TIME=N) */
    uint64_t forwarded_ok, gpu_events; /* processes: batches forwarded with CUDA_SUCCESS; gpu_time events
                                        * of other statuses than call_failed */
    uint64_t pid_ns, start_ns; /* processes: the process event's pid namespace and start time (0 unknown) */
    uint32_t img_no, img_count; /* processes: the image's number among those of its (host, vpid), and how many */
    struct gpurow gpu;     /* GPU streams: the timed batches */
    uint64_t *over_time;   /* GPU streams: gpu_ns per bucket (GPU_BUCKETS, struct gpu_time's grid); NULL: none */
};

/* Where a process's rank came from (the rank_var field of cubatchtrace:process). */
enum cbt_rank_var { RV_UNSEEN, RV_NONE, RV_OMPI, RV_PMI, RV_SLURM, RV_OTHER };

/* An index of three-word keys to numbers: open addressing, linear probing,
 * grown at half full; no deletion. */
struct kslot {
    uint64_t k[3];
    uint32_t v; /* the number + 1; 0: empty */
};
struct kmap {
    struct kslot *s;
    size_t cap, n;
};

/* ktab.c: the number of key (k0, k1, k2) + 1, 0 when absent; adding a key
 * that is absent (-1 out of memory); freeing the index. */
uint32_t cbt_kmap_get(const struct kmap *m, uint64_t k0, uint64_t k1, uint64_t k2);
int cbt_kmap_add(struct kmap *m, uint64_t k0, uint64_t k1, uint64_t k2, uint32_t number);
void cbt_kmap_free(struct kmap *m);

struct ktab {
    struct kent *ents;
    size_t n, limit;
    uint64_t cap_ents;
    struct kmap index; /* key -> entry index */
    struct kent other;
    uint64_t overflowed; /* keys that went to `other` */
    size_t last;         /* the entry found or made last, index + 1 (0: none): tried first */
};

/* ktab.c: an empty table of at most `limit` keys; the entry of key (k0, k1,
 * k2), created (zeroed, *created true) when new, t->other when the table is
 * full; freeing it. */
void cbt_ktab_init(struct ktab *t, size_t limit);
struct kent *cbt_ktab_get_hashed(struct ktab *t, uint64_t k0, uint64_t k1, uint64_t k2, bool *created);
static inline struct kent *cbt_ktab_get(struct ktab *t, uint64_t k0, uint64_t k1, uint64_t k2, bool *created)
{
    if (t->last) { /* the same key as the last time (a batch's process, thread, stream, caller) */
        struct kent *e = &t->ents[t->last - 1];
        if (e->k[0] == k0 && e->k[1] == k1 && e->k[2] == k2) {
            *created = false;
            return e;
        }
    }
    return cbt_ktab_get_hashed(t, k0, k1, k2, created);
}
void cbt_ktab_free(struct ktab *t);
/* The entry of key (k0, k1, k2), or NULL: a lookup that creates nothing. */
const struct kent *cbt_ktab_find(const struct ktab *t, uint64_t k0, uint64_t k1, uint64_t k2);
/* The hash of three words the tables use (the pending batches' too). */
uint64_t cbt_mix3(const uint64_t k[3]);

#endif
