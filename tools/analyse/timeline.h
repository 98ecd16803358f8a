/* SPDX-License-Identifier: MIT */
/*
 * The timeline's model (timeline.c): the batch calls, GPU spans, flows and
 * findings of the traces as records on tracks (a calling thread, or a GPU
 * stream, of a process image), ordered for writing: every track's records
 * in time order.  render/trace_event.c writes it as a Chrome trace-event file.
 */
#ifndef CBT_TIMELINE_H
#define CBT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyse/agg.h"
#include "analyse/ktab.h"
#include "base/records.h"

struct tl_proc {
    uint32_t host;
    int64_t vpid;
    uint32_t image;    /* the process image's tag (0 untagged): one proc per image */
    char *procname;
    int64_t pid_out;   /* the pid written (cbt_timeline_order) */
    uint32_t sort;
};

struct tl_track {
    uint32_t proc;
    bool gpu;
    int64_t tid;       /* host threads: the calling thread */
    uint64_t stream, stream_id; /* GPU tracks */
    int32_t device;
    int64_t tid_out;   /* the tid written (cbt_timeline_order) */
    uint32_t sort;
};

/* also the order at equal times: a span before its flow */
enum tl_kind { TL_HOST, TL_GPU, TL_FLOW_OUT, TL_FLOW_IN, TL_FINDING, TL_DROPPED };

struct tl_rec {
    int64_t ts;       /* ns, the trace clock */
    uint64_t dur;
    uint64_t batch_id;
    uint64_t flow;    /* the flow id (0: none) */
    union {
        struct {
            uint64_t num_ops, ops, bytes, stream, stream_id, caller;
            uint32_t result;
            int32_t device;
            uint8_t api, door, outcome, state;
        } h;
        struct {
            uint64_t op, other_op, value, limit;
            uint16_t rule;
            uint8_t severity, side;
        } f;
        struct {
            uint64_t ops, bytes;
            uint8_t api;
        } g;
    } u;
    uint32_t track;
    uint8_t kind;     /* enum tl_kind */
};

struct cbt_timeline {
    struct cbt_agg *agg;   /* the summary's aggregate, read beside: names of hosts, images, call sites */
    uint64_t max_batches;  /* 0: all */
    struct tl_proc *procs;
    size_t nprocs;
    uint64_t capprocs;
    struct tl_track *tracks;
    size_t ntracks;
    uint64_t captracks;
    struct tl_rec *recs;
    size_t nrecs;
    uint64_t caprecs;
    struct kmap proc_map, track_map, batch_map; /* (host, batch's process, batch id) -> its host span */
    bool oom;
    /* counts for otherData */
    uint64_t batches, batches_left_out, no_time, no_header, findings, gpu_events, gpu_left_out;
    uint64_t gpu_status[8], gpu_status_other;
    uint64_t flows, gpu_without_batch;
    /* cbt_timeline_order: the earliest time (0 when none) and the spans */
    int64_t origin;
    uint64_t host_spans, gpu_spans;
};

/* An empty model over agg (which the caller reads into and frees) keeping
 * at most max_batches batches (0: all); the model's memory freed. */
void cbt_timeline_init(struct cbt_timeline *t, struct cbt_agg *agg, uint64_t max_batches);
void cbt_timeline_free(struct cbt_timeline *t);

/* What the reader hands the model (ctx: the model): each batch whole (the
 * reader's batch callback) and each GPU time joined with its batch (its gpu
 * callback). */
void cbt_timeline_batch(void *ctx, const struct cbt_read_batch *rb);
void cbt_timeline_gpu(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g);

/* Once read: each GPU span joined to its call by a flow (t->oom says when
 * memory ran out), then the ids written chosen and the records sorted by
 * track and time (-1: out of memory). */
void cbt_timeline_join(struct cbt_timeline *t);
int cbt_timeline_order(struct cbt_timeline *t);

#endif
