/* SPDX-License-Identifier: MIT */
/*
 * What the shim knows of CUDA graphs (src/nodes.c): the batch nodes and
 * executable graphs seen, and the batch calls a capture takes into a
 * graph (the driver's functions for them are in driver.h's table).  One struct behind one lock,
 * below the batch path (batch.c and stream.c ask it after a call) and below
 * the graph doors (graph.c, which record a node's copies through batch.c).
 */
#ifndef CBT_SRC_NODES_H
#define CBT_SRC_NODES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/cuda13x.h>

#include "memwrap.h"

struct cbt_node_rec {
    CUgraphNode node;
    uint64_t def; /* the id of its latest record */
    bool own;     /* in an executable graph: a record of its own (cuGraphExecNodeSetParams) */
};
struct cbt_exec_rec {
    CUgraphExec exec;
    struct cbt_node_rec *items; /* its batch nodes, by the graph's node handles */
    size_t n;
};
struct cbt_graphs {
    pthread_mutex_t lock;
    struct cbt_node_rec *nodes; /* batch nodes made or changed through the shim, and those walked */
    size_t nnodes, cap_nodes;
    struct cbt_exec_rec *execs; /* executable graphs holding batch nodes */
    size_t nexecs, cap_execs;
    size_t nexecs_seen; /* nexecs, read without the lock at launch */
    uint64_t execs_gen; /* raised (under the lock) whenever execs changes: a launch's cached answer stays good while it holds */
    size_t nnodes_seen; /* nnodes, read without the lock at cuGraphDestroy */
};
extern struct cbt_graphs cbt_graphs __attribute__((visibility("hidden")));

/* May a call that succeeded have been taken into a capture: has the program
 * begun a stream capture (memwrap.c sees every function that begins one,
 * through every door; GPU time relies on the same) and does the driver have
 * batch nodes (CUDA 13.5: it may take a batch call on a capturing stream
 * into the graph and answer CUDA_SUCCESS)?  Asked after every batch that
 * succeeds: one relaxed load until a capture begins, two after. */
extern int cbt_graph_capture_state __attribute__((visibility("hidden"))); /* 0 not known, 1 no, 2 yes */
bool cbt_graph_captures_batches_slow(void);
static inline bool cbt_graph_captures_batches(void)
{
    if (__builtin_expect(!__atomic_load_n(&cbt_capture_begun, __ATOMIC_RELAXED), 1))
        return false;
    int s = __atomic_load_n(&cbt_graph_capture_state, __ATOMIC_RELAXED);
    return __builtin_expect(s != 0, 1) ? s == 2 : cbt_graph_captures_batches_slow();
}

/* A batch the driver took into the graph of stream s's capture (result 0,
 * capture ACTIVE), before its record is written: the graph it went into
 * said, and the node it became (the capture's one dependency now) known by
 * the batch's id, which instantiation then names it by. */
void cbt_graph_captured(CUstream s, int ptsz, uint64_t batch_id, void *caller);

/* In a forked child: the lock made the child's, the graphs forgotten (the
 * child's driver state is not the parent's). */
void cbt_graph_after_fork_child(void);

/* Under the lock: the record of node n (NULL when none); node n's latest
 * record set to def; executable graph e's record (NULL when none). */
struct cbt_node_rec *cbt_node_find(CUgraphNode n);
void cbt_node_set(CUgraphNode n, uint64_t def);
struct cbt_exec_rec *cbt_exec_find(CUgraphExec e);

/* Under the lock: execs changed (an executable graph added or forgotten). */
static inline void cbt_execs_changed(void)
{
    __atomic_store_n(&cbt_graphs.nexecs_seen, cbt_graphs.nexecs, __ATOMIC_RELEASE);
    __atomic_store_n(&cbt_graphs.execs_gen, cbt_graphs.execs_gen + 1, __ATOMIC_RELEASE);
}

/* Under the lock: executable graph e forgotten (destroyed, or instantiated
 * anew), said with its own records, which go with it. */
void cbt_exec_forget(CUgraphExec e, void *caller);

/* One cubatchtrace:graph event (events.h): kind, ids, the result, the
 * records of the n items, the driver's time (0: not timed). */
void cbt_graph_emit(uint8_t kind, uint64_t id, uint64_t exec, uint64_t stream, CUresult r,
                    const struct cbt_node_rec *items, size_t n, uint64_t driver_ns, void *caller);

#endif
