/* SPDX-License-Identifier: MIT */
/*
 * Batch copies inside CUDA graphs (CUDA 13.5's CU_GRAPH_NODE_TYPE_MEMCPY_BATCH).
 *
 * A batch node runs its copies at every cuGraphLaunch of a graph
 * instantiated from it, so the shim records a node's copies once (when it
 * is made or changed: cbt_record_node, a 1D batch of door graph_node), what
 * each executable graph holds (the ids of its nodes' latest records), and
 * each launch of such a graph as one small event (cubatchtrace:launch,
 * events.h; cubatchtrace:graph for one onto a stream being captured); the
 * reader expands a launch to the copies it ran.
 *
 * Wrapped, through the doors the batch calls have (the exported symbol,
 * dlsym on the driver, cuGetProcAddress by the pointer the driver handed
 * out): the calls that make, change or remove a batch node, destroy a
 * graph (its nodes' handles may come back as other nodes), instantiate,
 * update, destroy and launch an executable graph.  Every one forwards its
 * arguments unchanged and returns the driver's answer.  Graphs the shim did
 * not see built node by node (cuGraphClone, child graphs, a graph launched
 * into a capture) need no wrapper: at instantiation the graph is walked
 * (cuGraphGetNodes, cuGraphNodeGetType, cuGraphChildGraphNodeGetGraph,
 * cuGraphNodeGetParams for a batch node not seen), only while a session
 * records.  A batch call a driver takes into a capture is known by its own
 * record (cbt_graph_captured, nodes.c).
 *
 * Cost: a graph without batch nodes costs its launch one atomic load (no
 * executable graph with batch nodes known) or, where some are, the thread's
 * answer for its last graph (one lookup under the lock when either changed);
 * a launch of one with batch nodes adds two clock reads, on a driver with
 * batch nodes once a capture began cuStreamIsCapturing, and the event.  What the shim knows
 * (the batch nodes and executable graphs, one struct behind one lock) is
 * in nodes.c, below the batch path, which asks it after each call.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/cuda13x.h>

#include "batch.h"
#include "graph.h"
#include "nodes.h"
#include "process.h"
#include "record.h"
#include "settings.h"
#include "tp.h"

#undef cuGraphAddNode
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuGraphLaunch
#undef cuGraphInstantiateWithParams

#define CALLER() __builtin_return_address(0)

/* ---- the functions wrapped ---- */

#define CBT_GRAPH_FN_LIST(X)                                                                                  \
    X(G_ADD_NODE, "cuGraphAddNode")             /* CUDA 12.2 ABI: no edge data */                            \
    X(G_ADD_NODE_V2, "cuGraphAddNode_v2")                                                                     \
    X(G_ADD_NODE_V3, "cuGraphAddNode_v3")                                                                     \
    X(G_NODE_SET, "cuGraphNodeSetParams")                                                                     \
    X(G_NODE_SET_V2, "cuGraphNodeSetParams_v2")                                                               \
    X(G_EXEC_NODE_SET, "cuGraphExecNodeSetParams")                                                            \
    X(G_DESTROY_NODE, "cuGraphDestroyNode")                                                                   \
    X(G_DESTROY, "cuGraphDestroy")                                                                            \
    X(G_INST_FLAGS, "cuGraphInstantiateWithFlags")                                                            \
    X(G_INST_PARAMS, "cuGraphInstantiateWithParams")                                                          \
    X(G_INST_PARAMS_PTSZ, "cuGraphInstantiateWithParams_ptsz")                                                \
    X(G_EXEC_UPDATE, "cuGraphExecUpdate_v2")                                                                  \
    X(G_EXEC_DESTROY, "cuGraphExecDestroy")                                                                   \
    X(G_LAUNCH, "cuGraphLaunch")                                                                              \
    X(G_LAUNCH_PTSZ, "cuGraphLaunch_ptsz")

#define CBT_GFN_ENUM_(id, name) id,
enum gfn { CBT_GRAPH_FN_LIST(CBT_GFN_ENUM_) G_COUNT_ };
#define CBT_GFN_NAME_(id, name) name,
static const char *const gfn_name[G_COUNT_] = {CBT_GRAPH_FN_LIST(CBT_GFN_NAME_)};

typedef CUresult (*add_node1_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraphNodeParams *);
typedef CUresult (*add_node_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t,
                                CUgraphNodeParams *);
typedef CUresult (*node_set_fn)(CUgraphNode, CUgraphNodeParams *);
typedef CUresult (*exec_node_set_fn)(CUgraphExec, CUgraphNode, CUgraphNodeParams *);
typedef CUresult (*destroy_node_fn)(CUgraphNode);
typedef CUresult (*destroy_fn)(CUgraph);
typedef CUresult (*inst_flags_fn)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*inst_params_fn)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);
typedef CUresult (*exec_update_fn)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);
typedef CUresult (*exec_destroy_fn)(CUgraphExec);
typedef CUresult (*launch_fn)(CUgraphExec, CUstream);

/* ---- the driver's functions, and what the shim knows (nodes.h) ---- */

static struct {
    pthread_once_t once;
    void *real[G_COUNT_]; /* the driver's functions (dlsym, cuGetProcAddress doors) */
    void *next[G_COUNT_]; /* what the exported symbols forward to */
} D = {.once = PTHREAD_ONCE_INIT};
#define G cbt_graphs /* the one struct behind the one lock (nodes.h), by a short name */

static void load(void)
{
    void *h = cbt_real()->handle;
    for (int i = 0; i < G_COUNT_; i++) {
        D.real[i] = h ? cbt_real_dlsym(h, gfn_name[i]) : NULL;
        D.next[i] = cbt_export_target(D.real[i], gfn_name[i]);
    }
}

static inline void ready(void) { pthread_once(&D.once, load); }

/* Is anyone listening for graphs (the provider loaded, the events on)? */
static bool listening(void)
{
    return cbt_batch_setup() && cbt_tp_enabled(graph) && cbt_tp_enabled(c);
}

/* A batch node's params recorded; its id (0: not recorded). */
static uint64_t record_params(const CUgraphNodeParams *p, void *caller)
{
    const CUDA_MEMCPY_BATCH_NODE_PARAMS_V1 *b = cbt_node_params_memcpy_batch_const(p);
    return cbt_record_node(CBT_DOOR_GRAPH_NODE, b->dsts, b->srcs, b->sizes, b->count, b->attrs, b->attrsIdxs,
                           b->numAttrs, caller);
}

/* Under the lock: the batch nodes of graph g, at any depth, appended to
 * *items (the driver asked for what the shim did not see made). */
static void walk(CUgraph g, struct cbt_node_rec **items, size_t *n, size_t *cap, void *caller, int depth)
{
    const struct cbt_real *real = cbt_real();
    size_t count = 0;
    if (!real->graph_get_nodes || !real->graph_node_get_type || depth > 16 ||
        real->graph_get_nodes(g, NULL, &count) != CUDA_SUCCESS || !count)
        return;
    CUgraphNode *nodes = malloc(count * sizeof *nodes);
    if (!nodes || real->graph_get_nodes(g, nodes, &count) != CUDA_SUCCESS) {
        free(nodes);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        CUgraphNodeType type;
        if (real->graph_node_get_type(nodes[i], &type) != CUDA_SUCCESS)
            continue;
        if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
            CUgraph child;
            if (real->graph_child_graph && real->graph_child_graph(nodes[i], &child) == CUDA_SUCCESS)
                walk(child, items, n, cap, caller, depth + 1);
            continue;
        }
        if (type != CU_GRAPH_NODE_TYPE_MEMCPY_BATCH)
            continue;
        struct cbt_node_rec *r = cbt_node_find(nodes[i]);
        uint64_t def = r ? r->def : 0;
        CUgraphNodeParams p;
        if (!def && real->graph_node_get_params && real->graph_node_get_params(nodes[i], &p) == CUDA_SUCCESS &&
            (def = record_params(&p, caller)) != 0)
            cbt_node_set(nodes[i], def);
        if (def && cbt_grow((void **)items, cap, *n + 1, sizeof **items))
            (*items)[(*n)++] = (struct cbt_node_rec){nodes[i], def, false};
    }
    free(nodes);
}

/* An executable graph instantiated (or updated) from g: its batch nodes kept and said. */
static void instantiated(CUgraphExec e, CUgraph g, void *caller)
{
    if (!e || !listening())
        return;
    pthread_mutex_lock(&G.lock);
    struct cbt_node_rec *items = NULL;
    size_t n = 0, cap = 0;
    walk(g, &items, &n, &cap, caller, 0);
    cbt_exec_forget(e, caller);
    if (n && cbt_grow((void **)&G.execs, &G.cap_execs, G.nexecs + 1, sizeof *G.execs)) {
        G.execs[G.nexecs++] = (struct cbt_exec_rec){e, items, n};
        cbt_execs_changed();
        cbt_graph_emit(CBT_GRAPH_EXEC, 0, (uint64_t)(uintptr_t)e, 0, CUDA_SUCCESS, items, n, 0, caller);
    } else {
        free(items);
    }
    pthread_mutex_unlock(&G.lock);
}

/* ---- the common paths behind the doors ---- */

/* No function to forward to (no driver the shim could load, or one without
 * this function): the batch doors' answer, said once. */
CBT_COLD_FN static CUresult no_driver(int fi)
{
    cbt_warn_no_driver(gfn_name[fi]);
    return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
}

static CUresult add_node(int fi, void *fn, CUgraphNode *ph, CUgraph g, const CUgraphNode *deps,
                         const CUgraphEdgeData *edges, size_t ndeps, CUgraphNodeParams *p, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    CUresult r = fi == G_ADD_NODE ? ((add_node1_fn)fn)(ph, g, deps, ndeps, p)
                                    : ((add_node_fn)fn)(ph, g, deps, edges, ndeps, p);
    if (r == CUDA_SUCCESS && p && p->type == CU_GRAPH_NODE_TYPE_MEMCPY_BATCH && ph && listening()) {
        uint64_t def = record_params(p, caller);
        pthread_mutex_lock(&G.lock);
        if (def)
            cbt_node_set(*ph, def);
        pthread_mutex_unlock(&G.lock);
    }
    return r;
}

static CUresult node_set_params(int fi, void *fn, CUgraphNode node, CUgraphNodeParams *p, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    CUresult r = ((node_set_fn)fn)(node, p);
    if (r == CUDA_SUCCESS && p && p->type == CU_GRAPH_NODE_TYPE_MEMCPY_BATCH && listening()) {
        uint64_t def = record_params(p, caller);
        pthread_mutex_lock(&G.lock);
        if (def)
            cbt_node_set(node, def);
        pthread_mutex_unlock(&G.lock);
    }
    return r;
}

static CUresult exec_node_set_params(int fi, void *fn, CUgraphExec e, CUgraphNode node, CUgraphNodeParams *p, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    CUresult r = ((exec_node_set_fn)fn)(e, node, p);
    if (r != CUDA_SUCCESS || !p || p->type != CU_GRAPH_NODE_TYPE_MEMCPY_BATCH ||
        !__atomic_load_n(&G.nexecs_seen, __ATOMIC_ACQUIRE) || !listening())
        return r;
    pthread_mutex_lock(&G.lock);
    struct cbt_exec_rec *x = cbt_exec_find(e);
    for (size_t i = 0; x && i < x->n; i++)
        if (x->items[i].node == node) {
            uint64_t def = record_params(p, caller);
            if (def) {
                /* the record it replaces, when the executable graph's own, is run by no launch any more */
                uint64_t gone = x->items[i].own ? x->items[i].def : 0;
                x->items[i] = (struct cbt_node_rec){node, def, true};
                cbt_graph_emit(CBT_GRAPH_EXEC, gone, (uint64_t)(uintptr_t)e, 0, CUDA_SUCCESS, x->items, x->n, 0,
                               caller);
            }
            break;
        }
    pthread_mutex_unlock(&G.lock);
    return r;
}

static CUresult destroy_node(int fi, void *fn, CUgraphNode node, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    CUresult r = ((destroy_node_fn)fn)(node);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&G.lock);
    struct cbt_node_rec *n = cbt_node_find(node);
    if (n) {
        if (listening())
            cbt_graph_emit(CBT_GRAPH_NODE_GONE, n->def, 0, 0, CUDA_SUCCESS, NULL, 0, 0, caller);
        *n = G.nodes[--G.nnodes];
        __atomic_store_n(&G.nnodes_seen, G.nnodes, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&G.lock);
    return r;
}

/* Under the lock: the records of graph g's nodes, at any depth, forgotten
 * (their handles may come back as other nodes). */
static void forget_nodes(CUgraph g, int depth)
{
    const struct cbt_real *real = cbt_real();
    size_t count = 0;
    if (!real->graph_get_nodes || depth > 16 || real->graph_get_nodes(g, NULL, &count) != CUDA_SUCCESS || !count)
        return;
    CUgraphNode *nodes = malloc(count * sizeof *nodes);
    if (!nodes || real->graph_get_nodes(g, nodes, &count) != CUDA_SUCCESS) {
        free(nodes);
        return;
    }
    for (size_t i = 0; i < count && G.nnodes; i++) {
        CUgraphNodeType type;
        CUgraph child;
        struct cbt_node_rec *n = cbt_node_find(nodes[i]);
        if (n)
            *n = G.nodes[--G.nnodes];
        else if (real->graph_node_get_type && real->graph_child_graph &&
                 real->graph_node_get_type(nodes[i], &type) == CUDA_SUCCESS && type == CU_GRAPH_NODE_TYPE_GRAPH &&
                 real->graph_child_graph(nodes[i], &child) == CUDA_SUCCESS)
            forget_nodes(child, depth + 1);
    }
    free(nodes);
}

/* A graph destroyed: its nodes' records go first, asked of the graph while
 * it is there (only when any node is known). */
static CUresult destroy(int fi, void *fn, CUgraph g)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    if (__atomic_load_n(&G.nnodes_seen, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&G.lock);
        forget_nodes(g, 0);
        __atomic_store_n(&G.nnodes_seen, G.nnodes, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&G.lock);
    }
    return ((destroy_fn)fn)(g);
}

static CUresult exec_destroy(int fi, void *fn, CUgraphExec e, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    CUresult r = ((exec_destroy_fn)fn)(e);
    if (r == CUDA_SUCCESS && __atomic_load_n(&G.nexecs_seen, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&G.lock);
        cbt_exec_forget(e, caller);
        pthread_mutex_unlock(&G.lock);
    }
    return r;
}

/* The thread's last launch: its executable graph, whether it holds batch
 * nodes, and the execs_gen that answer holds for (a program launches the
 * same few graphs again and again; the lock is taken when one changes). */
static CBT_TLS struct {
    CUgraphExec exec;
    uint64_t gen;
    bool known;
} last_launch;

/* Launch ids, a block of the image's batch ids at a time (process.h), as a
 * thread's batches take theirs: no locked add per launch. */
static CBT_TLS uint64_t launch_id_next;
static CBT_TLS uint32_t launch_id_left;
static inline uint64_t launch_id(void)
{
    const uint64_t tag = cbt_image_id() & 0xffffffff00000000ull;
    if (cbt_likely(launch_id_left && !((launch_id_next ^ tag) >> 32))) {
        launch_id_left--;
        return launch_id_next++;
    }
    return cbt_batch_ids_take(tag, &launch_id_next, &launch_id_left);
}

static inline bool holds_batch_nodes(CUgraphExec e)
{
    uint64_t gen = __atomic_load_n(&G.execs_gen, __ATOMIC_ACQUIRE);
    if (cbt_likely(last_launch.exec == e && last_launch.gen == gen))
        return last_launch.known;
    pthread_mutex_lock(&G.lock);
    bool known = cbt_exec_find(e) != NULL;
    gen = G.execs_gen;
    pthread_mutex_unlock(&G.lock);
    last_launch.exec = e, last_launch.gen = gen, last_launch.known = known;
    return known;
}

static CUresult launch(int fi, void *fn, CUgraphExec e, CUstream s, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    /* the one lookup a graph without batch nodes costs */
    if (cbt_likely(!__atomic_load_n(&G.nexecs_seen, __ATOMIC_ACQUIRE)))
        return ((launch_fn)fn)(e, s);
    /* a launch is read against its graph's nodes (graph events): both recorded, or no launch timed */
    if (!holds_batch_nodes(e) || !cbt_tp_enabled(launch) || !cbt_tp_enabled(graph))
        return ((launch_fn)fn)(e, s);
    uint64_t t0 = cbt_mono_ns();
    CUresult r = ((launch_fn)fn)(e, s);
    uint64_t t1 = cbt_mono_ns();
    /* A launch onto a stream being captured runs nothing now (asked where
     * the driver has batch nodes: where it has not, no graph is known) */
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    const int ptsz = fi == G_LAUNCH_PTSZ;
    CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *) = cbt_real()->stream_is_capturing[ptsz];
    if (r == CUDA_SUCCESS && cbt_graph_captures_batches() && is_capturing)
        (void)is_capturing(s, &st);
    if (cbt_unlikely(st != CU_STREAM_CAPTURE_STATUS_NONE)) {
        cbt_graph_emit(CBT_GRAPH_LAUNCH_CAPTURED, launch_id(), (uint64_t)(uintptr_t)e, (uint64_t)(uintptr_t)s, r, NULL,
                       0, t1 - t0, caller);
        return r;
    }
    struct cbt_ev_graph g = {.id = launch_id(), .exec = (uint64_t)(uintptr_t)e, .stream = (uint64_t)(uintptr_t)s,
                             .result = (uint32_t)r, .tid = cbt_tid(), .driver_ns = t1 - t0,
                             .caller = (uint64_t)(uintptr_t)caller};
    uint64_t rec[CBT_EV_LAUNCH_WORDS];
    cbt_ev_launch_pack(rec, &g);
    cbt_tp(launch, rec, caller);
    return r;
}

/* ---- the doors ---- */

#define NEXT(i) (ready(), D.next[i])
#define REAL(i) (ready(), D.real[i])

#define P_ADD1 CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t ndeps, CUgraphNodeParams *p
#define P_ADD CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t ndeps, \
              CUgraphNodeParams *p

/* One function per door and name: the exported symbol (forwarding to the
 * next definition) and a static twin that dlsym and cuGetProcAddress hand
 * out (forwarding to the driver's). */
#define GRAPH_DOORS(sym, ret_params, call_next, call_real)                                                   \
    CBT_EXPORT CUresult sym ret_params { return call_next; }                                                 \
    static CUresult real_##sym ret_params { return call_real; }
/* The names CUDA 13.5 adds (cuGraphAddNode_v3, cuGraphNodeSetParams_v2) only
 * as twins: exported, they would answer a program's dlsym(RTLD_DEFAULT) on
 * an older driver, which lacks them. */
#define GRAPH_TWIN(sym, ret_params, call_next, call_real)                                                    \
    static CUresult real_##sym ret_params { return call_real; }

CUresult cuGraphAddNode(P_ADD1);
GRAPH_DOORS(cuGraphAddNode, (P_ADD1), add_node(G_ADD_NODE, NEXT(G_ADD_NODE), ph, g, deps, NULL, ndeps, p, CALLER()),
            add_node(G_ADD_NODE, REAL(G_ADD_NODE), ph, g, deps, NULL, ndeps, p, CALLER()))
GRAPH_DOORS(cuGraphAddNode_v2, (P_ADD),
            add_node(G_ADD_NODE_V2, NEXT(G_ADD_NODE_V2), ph, g, deps, edges, ndeps, p, CALLER()),
            add_node(G_ADD_NODE_V2, REAL(G_ADD_NODE_V2), ph, g, deps, edges, ndeps, p, CALLER()))
GRAPH_TWIN(cuGraphAddNode_v3, (P_ADD),
            add_node(G_ADD_NODE_V3, NEXT(G_ADD_NODE_V3), ph, g, deps, edges, ndeps, p, CALLER()),
            add_node(G_ADD_NODE_V3, REAL(G_ADD_NODE_V3), ph, g, deps, edges, ndeps, p, CALLER()))
GRAPH_DOORS(cuGraphNodeSetParams, (CUgraphNode n, CUgraphNodeParams *p),
            node_set_params(G_NODE_SET, NEXT(G_NODE_SET), n, p, CALLER()), node_set_params(G_NODE_SET, REAL(G_NODE_SET), n, p, CALLER()))
GRAPH_TWIN(cuGraphNodeSetParams_v2, (CUgraphNode n, CUgraphNodeParams *p),
            node_set_params(G_NODE_SET_V2, NEXT(G_NODE_SET_V2), n, p, CALLER()),
            node_set_params(G_NODE_SET_V2, REAL(G_NODE_SET_V2), n, p, CALLER()))
GRAPH_DOORS(cuGraphExecNodeSetParams, (CUgraphExec e, CUgraphNode n, CUgraphNodeParams *p),
            exec_node_set_params(G_EXEC_NODE_SET, NEXT(G_EXEC_NODE_SET), e, n, p, CALLER()),
            exec_node_set_params(G_EXEC_NODE_SET, REAL(G_EXEC_NODE_SET), e, n, p, CALLER()))
GRAPH_DOORS(cuGraphDestroyNode, (CUgraphNode n), destroy_node(G_DESTROY_NODE, NEXT(G_DESTROY_NODE), n, CALLER()),
            destroy_node(G_DESTROY_NODE, REAL(G_DESTROY_NODE), n, CALLER()))
GRAPH_DOORS(cuGraphDestroy, (CUgraph g), destroy(G_DESTROY, NEXT(G_DESTROY), g), destroy(G_DESTROY, REAL(G_DESTROY), g))
GRAPH_DOORS(cuGraphExecDestroy, (CUgraphExec e), exec_destroy(G_EXEC_DESTROY, NEXT(G_EXEC_DESTROY), e, CALLER()),
            exec_destroy(G_EXEC_DESTROY, REAL(G_EXEC_DESTROY), e, CALLER()))
GRAPH_DOORS(cuGraphLaunch, (CUgraphExec e, CUstream s), launch(G_LAUNCH, NEXT(G_LAUNCH), e, s, CALLER()),
            launch(G_LAUNCH, REAL(G_LAUNCH), e, s, CALLER()))
CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s);
GRAPH_DOORS(cuGraphLaunch_ptsz, (CUgraphExec e, CUstream s), launch(G_LAUNCH_PTSZ, NEXT(G_LAUNCH_PTSZ), e, s, CALLER()),
            launch(G_LAUNCH_PTSZ, REAL(G_LAUNCH_PTSZ), e, s, CALLER()))

static CUresult inst_flags(int fi, void *fn, CUgraphExec *ph, CUgraph g, unsigned long long flags, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    CUresult r = ((inst_flags_fn)fn)(ph, g, flags);
    if (r == CUDA_SUCCESS && ph)
        instantiated(*ph, g, caller);
    return r;
}
static CUresult inst_params(int fi, void *fn, CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    CUresult r = ((inst_params_fn)fn)(ph, g, p);
    if (r == CUDA_SUCCESS && ph)
        instantiated(*ph, g, caller);
    return r;
}
static CUresult exec_update(int fi, void *fn, CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info, void *caller)
{
    if (cbt_unlikely(!fn))
        return no_driver(fi);
    CUresult r = ((exec_update_fn)fn)(e, g, info);
    if (r == CUDA_SUCCESS)
        instantiated(e, g, caller);
    return r;
}
GRAPH_DOORS(cuGraphInstantiateWithFlags, (CUgraphExec *ph, CUgraph g, unsigned long long f),
            inst_flags(G_INST_FLAGS, NEXT(G_INST_FLAGS), ph, g, f, CALLER()), inst_flags(G_INST_FLAGS, REAL(G_INST_FLAGS), ph, g, f, CALLER()))
GRAPH_DOORS(cuGraphInstantiateWithParams, (CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
            inst_params(G_INST_PARAMS, NEXT(G_INST_PARAMS), ph, g, p, CALLER()),
            inst_params(G_INST_PARAMS, REAL(G_INST_PARAMS), ph, g, p, CALLER()))
CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p);
GRAPH_DOORS(cuGraphInstantiateWithParams_ptsz, (CUgraphExec *ph, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
            inst_params(G_INST_PARAMS_PTSZ, NEXT(G_INST_PARAMS_PTSZ), ph, g, p, CALLER()),
            inst_params(G_INST_PARAMS_PTSZ, REAL(G_INST_PARAMS_PTSZ), ph, g, p, CALLER()))
GRAPH_DOORS(cuGraphExecUpdate_v2, (CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *i),
            exec_update(G_EXEC_UPDATE, NEXT(G_EXEC_UPDATE), e, g, i, CALLER()), exec_update(G_EXEC_UPDATE, REAL(G_EXEC_UPDATE), e, g, i, CALLER()))

#define CBT_GFN_TWIN_(id, name) [id] = (void *)real_##id,
#define real_G_ADD_NODE real_cuGraphAddNode
#define real_G_ADD_NODE_V2 real_cuGraphAddNode_v2
#define real_G_ADD_NODE_V3 real_cuGraphAddNode_v3
#define real_G_NODE_SET real_cuGraphNodeSetParams
#define real_G_NODE_SET_V2 real_cuGraphNodeSetParams_v2
#define real_G_EXEC_NODE_SET real_cuGraphExecNodeSetParams
#define real_G_DESTROY_NODE real_cuGraphDestroyNode
#define real_G_DESTROY real_cuGraphDestroy
#define real_G_INST_FLAGS real_cuGraphInstantiateWithFlags
#define real_G_INST_PARAMS real_cuGraphInstantiateWithParams
#define real_G_INST_PARAMS_PTSZ real_cuGraphInstantiateWithParams_ptsz
#define real_G_EXEC_UPDATE real_cuGraphExecUpdate_v2
#define real_G_EXEC_DESTROY real_cuGraphExecDestroy
#define real_G_LAUNCH real_cuGraphLaunch
#define real_G_LAUNCH_PTSZ real_cuGraphLaunch_ptsz
static void *const twin[G_COUNT_] = {CBT_GRAPH_FN_LIST(CBT_GFN_TWIN_)};

bool cbt_graph_name(const char *name)
{
    if (strncmp(name, "cuGraph", 7))
        return false;
    for (int i = 0; i < G_COUNT_; i++)
        if (!strcmp(name, gfn_name[i]))
            return true;
    return false;
}

void *cbt_graph_wrap(void *p)
{
    if (!p)
        return NULL;
    ready();
    for (int i = 0; i < G_COUNT_; i++)
        if (p == D.real[i])
            return twin[i];
    return NULL;
}
