/* SPDX-License-Identifier: MIT */
/*
 * What the shim knows of CUDA graphs (nodes.h): the tables of batch nodes
 * and executable graphs, and a batch call taken into a capture.  The doors that fill the tables are in
 * graph.c; the batch path asks cbt_graph_captures_batches and
 * cbt_graph_captured after a call.
 *
 * The tables are arrays searched in order, sized by the batch nodes and
 * executable graphs a program keeps (a few dozen in the programs this is
 * for: a graph of thousands of batch nodes would make its instantiation
 * quadratic).
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "driver.h"
#include "nodes.h"
#include "record.h"
#include "tp.h"
#include "util.h"

struct cbt_graphs cbt_graphs = {.lock = PTHREAD_MUTEX_INITIALIZER};
#define G cbt_graphs /* the one struct behind the one lock (nodes.h), by a short name */

int cbt_graph_capture_state;

/* The driver asked once (threads that ask together store the same answer). */
bool cbt_graph_captures_batches_slow(void)
{
    CUresult (*version)(int *) = cbt_real()->driver_get_version;
    int v = 0;
    if (!version || version(&v) != CUDA_SUCCESS)
        v = 0;
    __atomic_store_n(&cbt_graph_capture_state, v >= 13050 ? 2 : 1, __ATOMIC_RELAXED);
    return v >= 13050;
}

struct cbt_node_rec *cbt_node_find(CUgraphNode n)
{
    for (size_t i = 0; i < G.nnodes; i++)
        if (G.nodes[i].node == n)
            return &G.nodes[i];
    return NULL;
}

void cbt_node_set(CUgraphNode n, uint64_t def)
{
    struct cbt_node_rec *r = cbt_node_find(n);
    if (r)
        r->def = def;
    else if (cbt_grow((void **)&G.nodes, &G.cap_nodes, G.nnodes + 1, sizeof *G.nodes))
        G.nodes[G.nnodes++] = (struct cbt_node_rec){n, def, false};
    __atomic_store_n(&G.nnodes_seen, G.nnodes, __ATOMIC_RELEASE);
}

struct cbt_exec_rec *cbt_exec_find(CUgraphExec e)
{
    for (size_t i = 0; i < G.nexecs; i++)
        if (G.execs[i].exec == e)
            return &G.execs[i];
    return NULL;
}

void cbt_exec_forget(CUgraphExec e, void *caller)
{
    struct cbt_exec_rec *x = cbt_exec_find(e);
    if (!x)
        return;
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->items[i].own)
            x->items[k++] = x->items[i];
    if (cbt_tp_enabled(graph))
        cbt_graph_emit(CBT_GRAPH_EXEC_GONE, 0, (uint64_t)(uintptr_t)e, 0, CUDA_SUCCESS, x->items, k, 0, caller);
    free(x->items);
    *x = G.execs[--G.nexecs];
    cbt_execs_changed();
}

void cbt_graph_emit(uint8_t kind, uint64_t id, uint64_t exec, uint64_t stream, CUresult r,
                    const struct cbt_node_rec *items, size_t n, uint64_t driver_ns, void *caller)
{
    uint64_t defs[64], *d = defs;
    if (n > 64 && !(d = malloc(n * sizeof *d)))
        n = 0, d = defs;
    for (size_t i = 0; i < n; i++)
        d[i] = items[i].def;
    struct cbt_ev_graph g = {.kind = kind, .id = id, .exec = exec, .stream = stream, .result = (uint32_t)r,
                             .tid = cbt_tid(), .driver_ns = driver_ns, .caller = (uint64_t)(uintptr_t)caller,
                             .ndefs = (uint32_t)n, .defs = d};
    if (cbt_tp_enabled(graph))
        cbt_tp(graph, &g, caller);
    if (d != defs)
        free(d);
}

void cbt_graph_captured(CUstream s, int ptsz, uint64_t batch_id, void *caller)
{
    CUresult (*info)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, const CUgraphNode **,
                     const CUgraphEdgeData **, size_t *) = cbt_real()->stream_get_capture_info[ptsz != 0];
    CUstreamCaptureStatus st;
    CUgraph g = NULL;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
    if (!info || info(s, &st, NULL, &g, &deps, NULL, &ndeps) != CUDA_SUCCESS ||
        st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return;
    if (ndeps == 1 && deps) {
        pthread_mutex_lock(&G.lock);
        cbt_node_set(deps[0], batch_id);
        pthread_mutex_unlock(&G.lock);
    }
    cbt_graph_emit(CBT_GRAPH_CAPTURED, batch_id, (uint64_t)(uintptr_t)g, (uint64_t)(uintptr_t)s, CUDA_SUCCESS, NULL,
                   0, 0, caller);
}

void cbt_graph_after_fork_child(void)
{
    pthread_mutex_init(&G.lock, NULL);
    for (size_t i = 0; i < G.nexecs; i++)
        free(G.execs[i].items);
    G.nnodes = G.nexecs = 0;
    cbt_execs_changed();
    __atomic_store_n(&G.nnodes_seen, 0, __ATOMIC_RELEASE);
}
