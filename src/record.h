/* SPDX-License-Identifier: MIT */
/*
 * The compact record (format 4, <cubatchtrace/events.h>): one writer of the
 * batch events, and the calling thread's dictionaries of operands and
 * streams beside it (src/record.c).
 */
#ifndef CBT_SRC_RECORD_H
#define CBT_SRC_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "driver.h"
#include "settings.h"

#define CBT_REF_UNKNOWN 0xffffu /* an operand the dictionary could not hold */

/*
 * The calling thread's operand dictionary: what the shim learned of an
 * operand, under a small index that the batch events refer to.  An entry is
 * written (cubatchtrace:operand) before the first event that refers to it,
 * and again on first use after each refresh (CBT_EV_DICT_REFRESH_NS, or
 * tracing newly turned on), so a session that starts late learns it.  The
 * streams the thread described likewise.  Part of the thread's state
 * (src/thread.h); zeroed is empty, set up by the thread's first batch.
 */
struct cbt_stream_seen {
    uint64_t handle, id, context;
    int32_t device, device_count;
    uint32_t epoch; /* 0: never written */
};
#define CBT_DICT_SMALL 16 /* refs held in the dictionary itself: a batch of up to 8 ops */
#define CBT_MEMO_WORDS 6  /* hdr words the steady path keeps (3D: the first 3) */
#define CBT_MEMO_MORE 3   /* older hdrs kept: a thread going round a few op lists or streams */
/* A steady batch's hdr kept while what it encodes repeats (struct cbt_dict's
 * memo, spelled out for the older ones). */
struct cbt_memo {
    uint64_t list, key;
    uint64_t hdr[CBT_MEMO_WORDS];
    uint64_t srcs, sizes, attrs, idxs;
};
struct cbt_dict {
    /* what a steady batch reads: its first cache line, and for a 3D batch
     * the refs' (the second); a 1D batch's memo goes on in the third */
    uint32_t epoch;     /* entries written in an older epoch are written again */
    bool emit, was_emitting;
    bool prev_uniform;  /* the previous single-chunk batch's refs are all prev_pair */
    uint64_t epoch_ns;  /* when the epoch began */
    uint32_t n_prev;    /* ops of the previous single-chunk batch (0: none) */
    uint32_t prev_pair; /* its op 0's two refs, as one word */
    /* the hdr of the thread's last steady batch (cbt_record_steady), while
     * what it encodes repeats: the op list (3D) or dsts (1D), then
     * n << 16 | stream index << 8 | 1D << 7 | its words (0: none) */
    uint64_t memo_list, memo_key;
    uint64_t memo_hdr[3];
    uint16_t small_refs[CBT_DICT_SMALL], small_prev[CBT_DICT_SMALL];
    /* 1D: the rest of the memo's key and hdr */
    uint64_t memo_hdr1d[CBT_MEMO_WORDS - 3];
    uint64_t memo_srcs, memo_sizes, memo_attrs, memo_idxs;
    /* the larger batches' refs (grown as needed) */
    uint64_t now_ns;    /* the time the batch being recorded gave */
    uint16_t *refs, *prev_refs;
    size_t cap_refs, cap_prev;
    /* the hdrs of older steady batches, the latest first (read when the
     * memo above does not hold a batch's) */
    struct cbt_memo memo_more[CBT_MEMO_MORE];
    /* what a batch that learns reads */
    uint64_t key;       /* image tag << 32 | thread id */
    int32_t tid;
    uint32_t stamp;     /* the current batch */
    uint32_t cap, next;
    struct cbt_operand_info *info;
    uint32_t *written;  /* epoch an entry was last written in */
    uint32_t *used;     /* stamp of the last batch that referred to it */
    uint32_t *serial;   /* changes whenever the entry is given to another operand */
    uint32_t next_serial;
    uint16_t *table;    /* direct-mapped: hash of an info -> index + 1 */
    uint32_t table_mask;
    /* the streams described in this epoch: a handle's index is its hash or
     * one of the CBT_STREAM_PROBES after it (a few streams whose hashes
     * meet keep an index each) */
    struct cbt_stream_seen streams[CBT_EV_STREAMS];
    uint32_t stream_turn; /* which of a full probe's indices goes next */
} __attribute__((aligned(64)));

/* The dictionary d set up for a batch (emit: tracing is on; the batch's id
 * and thread id give the dictionary's key; now_ns: CLOCK_MONOTONIC, for the
 * refresh); NULL when out of memory. */
struct cbt_dict *cbt_dict_for_batch(struct cbt_dict *d, bool emit, uint64_t batch_id, int32_t tid, uint64_t now_ns);

/* Frees what d holds (it is left empty). */
void cbt_dict_release(struct cbt_dict *d);

/* Is a refresh due at now_ns (then cbt_dict_for_batch starts a new epoch)?
 * Signed: now_ns may come from the coarse clock, a tick behind the one
 * that began the epoch. */
static inline bool cbt_dict_refresh_due(const struct cbt_dict *d, uint64_t now_ns)
{
    return (int64_t)(now_ns - d->epoch_ns) > (int64_t)CBT_EV_DICT_REFRESH_NS;
}

/* The dictionary index of an operand described by o (added, and written when
 * tracing is on, if new); CBT_REF_UNKNOWN when none can be had. */
uint16_t cbt_dict_ref(struct cbt_dict *d, const struct cbt_operand_info *o);

/* Entry i's serial: it changes whenever the entry is given to another operand. */
uint32_t cbt_dict_serial(const struct cbt_dict *d, uint16_t i);

/* Entry i written (an operand event) in the current epoch. */
void cbt_dict_write(struct cbt_dict *d, uint16_t i);

/* Does entry i still hold what it held when its serial was read?  Then it
 * is marked used by this batch (and written when tracing is on and the
 * entry was not written since the last refresh).  Inline: a batch that
 * learns keeps up to a dozen recents this way. */
static inline bool cbt_dict_keep(struct cbt_dict *d, uint16_t i, uint32_t serial)
{
    if (i >= d->cap || d->serial[i] != serial || !serial)
        return false;
    d->used[i] = d->stamp;
    if (d->emit && d->written[i] != d->epoch)
        cbt_dict_write(d, i);
    return true;
}

/* Entries refs[0, 2n), which still hold what they held: marked used by this
 * batch, and written when tracing is on and they were not written since the
 * last refresh. */
void cbt_dict_touch(struct cbt_dict *d, const uint16_t *refs, size_t n);

/* The entry at index i (a zeroed entry for CBT_REF_UNKNOWN). */
const struct cbt_operand_info *cbt_dict_info(const struct cbt_dict *d, uint16_t i);

/* The stream the batch ran on, written (with the process's device count)
 * when this thread has not described it so (or not since the last
 * refresh); returns its index, which the batch's record names it by. */
uint8_t cbt_dict_stream(struct cbt_dict *d, uint64_t handle, uint64_t stream_id, uint64_t context, int32_t device,
                        int32_t device_count);

/* The index of a stream this thread described so in the current epoch
 * (without writing anything); CBT_EV_NO_STREAM when it did not. */
uint8_t cbt_dict_stream_known(const struct cbt_dict *d, uint64_t handle, uint64_t stream_id, uint64_t context,
                              int32_t device, int32_t device_count);

/* Room for the refs of n ops in the thread's buffer (NULL: no memory): the
 * dictionary's own small_refs for up to CBT_DICT_SMALL / 2 ops. */
uint16_t *cbt_dict_refs(struct cbt_dict *d, size_t n);
/* The same without growing the buffer: NULL when n ops do not fit in it. */
static inline uint16_t *cbt_dict_refs_held(struct cbt_dict *d, size_t n)
{
    return 2 * n <= CBT_DICT_SMALL ? d->small_refs : n <= d->cap_refs / 2 && d->refs ? d->refs : NULL;
}

/* Write a 3D batch: its header (the fields of format 2, of which the
 * record keeps what <cubatchtrace/events.h> lists) and ops[0, n) with refs
 * (2 per op; NULL: none learned).  gpu: a gpu_time event of it follows. */
void cbt_record_batch(struct cbt_dict *d, const struct cbt_ev_batch *b, uint8_t stream_index, bool gpu,
                      const CUDA_MEMCPY3D_BATCH_OP *ops, size_t n, const uint16_t *refs, void *ip);

/* Write a 1D batch: its header, its attributes read, copies [0, n) with refs. */
void cbt_record_batch1d(struct cbt_dict *d, const struct cbt_ev_batch *b, uint8_t stream_index, bool gpu,
                        const struct cbt_ev_batch1d *b1,
                        const CUmemcpyAttributes *attrs, const size_t *attrs_idxs, const CUdeviceptr *dsts,
                        const CUdeviceptr *srcs, const size_t *sizes, size_t n, const uint16_t *refs, void *ip);

/*
 * A batch of the steady path (src/batch.c) as it is written: one event (b
 * or c; bs or cs for more than CBT_EV_INLINE3D ops or CBT_EV_INLINE1D
 * copies, up to a chunk) whose hdr holds no optional value (every op or copy read, no flags,
 * no failIdx, one attribute read of one, a result w holds), h's w without
 * CBT_W_SAME_REFS (the writer sets it), refs of every op.  The hdr is kept
 * from the thread's previous steady batch while what it encodes repeats.
 */
struct cbt_steady_rec {
    uint64_t h[CBT_EV_HEAD_WORDS];
    const void *list;               /* 3D: the ops; 1D: dsts */
    size_t n;                       /* at most a chunk: cbt_chunk3d, cbt_chunk1d */
    const uint16_t *refs;
    uint8_t stream_index;
    bool d1;
    bool gpu;                       /* a gpu_time event of it follows (CBT_HDR_GPU) */
    bool uniform;                   /* every op's refs are op 0's (cbt_refs_steady) */
    const CUdeviceptr *srcs;        /* 1D: the other arrays, one attribute */
    const size_t *sizes;
    const CUmemcpyAttributes *attrs;
    const size_t *attrs_idxs;
};

/* Can batch-level values be written by cbt_record_steady? */
static inline bool cbt_record_steady_fits(bool d1, size_t n, uint64_t fail_idx, uint32_t result, size_t num_attrs,
                                          size_t attrs_read)
{
    return fail_idx == UINT64_MAX && result < CBT_W_RESULT_ESCAPE &&
           (d1 ? n <= cbt_chunk1d && num_attrs == 1 && attrs_read == 1 : n <= cbt_chunk3d);
}

/* Write a steady batch (see above): 3D, 1D. */
void cbt_record_steady3d(struct cbt_dict *d, const struct cbt_steady_rec *s, void *ip);
void cbt_record_steady1d(struct cbt_dict *d, const struct cbt_steady_rec *s, void *ip);

/* The result of a batch written before it was forwarded (outcome "pending"),
 * with the batch fields of format 2. */
void cbt_record_end(const struct cbt_ev_batch *b, void *caller);

/* A finding of the calling thread's validator. */
void cbt_record_finding(const struct cbt_ev_finding *f, void *caller);
/* CUBATCHTRACE_STACK=N: the calling thread's short stack, written just
 * before its batch (cubatchtrace:stack): `depth` return addresses from the
 * batch's caller on.  cbt_record_stack_init loads what the walk needs, once,
 * before any batch (glibc's backtrace() loads libgcc_s on its first call). */
void cbt_record_stack_init(void);
void cbt_record_stack(unsigned depth, void *caller);

/* Serializes the process's writers of batch events (see record.c). */
#include <pthread.h>
extern pthread_mutex_t cbt_write_lock __attribute__((visibility("hidden")));

/* Once, before the first batch: the asymmetric fence registered. */
void cbt_record_init(void);
/* In a forked child (src/batch.c calls it): the write lock, the writers,
 * the cached thread ids and the fence made the child's. */
void cbt_record_after_fork_child(void);

/* The calling thread's kernel thread id, cached (right in a forked child too). */
int32_t cbt_tid(void);

/* CLOCK_MONOTONIC_COARSE in ns: the same clock, a tick behind at most, read
 * for a fraction of the cost (the dictionary's refresh needs no precision). */
uint64_t cbt_mono_coarse_ns(void);

/* CLOCK_MONOTONIC in ns. */
uint64_t cbt_mono_ns(void);

#endif
