/* SPDX-License-Identifier: MIT */
/*
 * The aggregate's tables as agg.c fills them, for the files of analyse/ that
 * turn them into rows (tables.c, hosts.c).  Nothing outside analyse/
 * includes this: the outputs (render/) and the commands ask through agg.h,
 * tables.h and hosts.h.
 */
#ifndef CBT_AGG_INTERNAL_H
#define CBT_AGG_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/catalog.h>

#include "analyse/agg.h"
#include "analyse/agg_gpu.h"
#include "analyse/classes.h"
#include "analyse/ktab.h"

struct brec; /* a batch in flight (agg.c) */

struct cbt_agg {
    unsigned by;
    char **hosts;
    uint32_t nhosts;
    /* totals */
    uint64_t batches, ops, bytes, failed, refused, no_driver, driver_ns;
    uint64_t refused_in_capture; /* forwarded, refused by the driver because the stream was being captured (900) */
    uint64_t discarded_events, discarded_packets, discarded_unknown;
    uint64_t fabric_calls, fabric_ops, fabric_failed, fabric_driver_ns; /* cuFabricCpyBatchAsync */
    uint64_t orphan_ops, orphan_chunks, incomplete_batches, pending_overflow;
    uint64_t untagged;     /* batches whose id names no process image (recorded before images) */
    bool images_numbered;  /* procs' img_no and img_count are up to date */
    struct gpu_time gpu; /* cubatchtrace:gpu_time */
    /* tables */
    struct row api[NAPI], door[NDOOR], apidoor[NAPI][NDOOR];
    struct row dir[DIR_COUNT], kind[NKIND][NKIND], order[NORDER], bsize[NHIST], osize[NHIST];
    struct ktab procs, threads, streams, callers;
    struct devrow devs[NDEV], dev_other, dev_unknown;
    unsigned ndevs, dev_last;
    uint64_t dev_overflowed; /* (host, device) keys that went to `other` */
    struct cbt_rule_tally rules[CBT_RULE_COUNT + 1];
    uint64_t findings; /* advice left out */
    uint64_t advice;   /* findings of severity advice */
    uint64_t advice_unjudged; /* of merged parts: cbt_advice_gpu_unjudged */
    struct cbt_advisor *advisor;
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

/* The entry of a process image (host, cbt_pkey) in procs, or NULL; creates
 * nothing.  Its img_no and img_count hold once the aggregate is finished. */
const struct kent *cbt_agg_proc(const struct cbt_agg *a, uint32_t host, uint64_t pkey);

#endif
