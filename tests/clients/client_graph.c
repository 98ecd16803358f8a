/* SPDX-License-Identifier: MIT */
/*
 * Batch copies inside CUDA graphs (CUDA 13.5 batch nodes), linked directly.
 *
 *   client_graph update [DOOR]  a graph of two batch nodes (A: 3 copies of 256,
 *                          512, 1024 bytes; B: 2 copies of 4096, 100),
 *                          instantiated, launched 5 times on two streams in
 *                          turn; after launch 2 cuGraphExecNodeSetParams
 *                          gives A sizes {256, 0, 1024} (one copy disabled);
 *                          DOOR: symbol (linked, the default), gpa
 *                          (cuGetProcAddress_v2 at 13000), dlsym (dlsym on
 *                          dlopen("libcuda.so.1")) for cuGraphAddNode,
 *                          cuGraphInstantiateWithFlags, cuGraphExecNodeSetParams
 *                          and cuGraphLaunch
 *   client_graph update2   a graph of one batch node (128, 256 bytes) launched
 *                          once; cuGraphExecUpdate from a graph like it with
 *                          sizes {512, 0}; launched twice
 *   client_graph capture   a 1D batch of 2 copies (1000, 24 bytes) on a stream
 *                          being captured (FAKECUDA_CAPTURE_BATCH=1: the
 *                          double takes it into the graph), the graph
 *                          instantiated and launched 3 times
 *   client_graph clone     a graph of one batch node (1 copy of 2048), its
 *                          clone launched twice; a graph of a batch node (64)
 *                          and the first graph as a child graph node, launched once
 *   client_graph reuse     a clone of a graph of one batch node (2048) launched,
 *                          destroyed with its executable graph; then a clone
 *                          of a graph of one batch node (64) launched (its
 *                          node may get the handle of the first's)
 *   client_graph churn N   a graph of one batch node launched N times, its
 *                          size set before each launch (200 bytes, then 100,
 *                          in turn), the executable graph destroyed at the end
 *   client_graph answers   the driver's answers to graph calls it refuses or
 *                          looks up, one line (ANSWERS ...), to compare
 *                          with and without the shim
 *   client_graph launch_capture  a graph of one batch node (512 bytes)
 *                          launched onto a stream being captured; the graph
 *                          captured launched twice, the first graph once
 *   client_graph empty N   a graph without batch nodes launched N times (bench/)
 *   client_graph one N     a graph of one batch node (1 copy of 256) launched N times
 * Says its pid on stderr; prints "launches=L" and exits 0 when every byte
 * arrived, 1 when not, 2 when a call fails.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cubatchtrace/cuda13x.h>

#define CK(x)                                                                                                 \
    do {                                                                                                      \
        CUresult r_ = (x);                                                                                    \
        if (r_ != CUDA_SUCCESS) {                                                                             \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)r_);                           \
            exit(2);                                                                                          \
        }                                                                                                     \
    } while (0)

static CUdeviceptr buf(size_t n, unsigned char seed)
{
    CUdeviceptr p;
    CK(cuMemAlloc(&p, n));
    unsigned char *h = malloc(n);
    for (size_t i = 0; i < n; i++)
        h[i] = (unsigned char)(seed + i * 7);
    CK(cuMemcpyHtoD(p, h, n));
    free(h);
    return p;
}

static int same(CUdeviceptr a, CUdeviceptr b, size_t n)
{
    unsigned char *x = malloc(n), *y = malloc(n);
    CK(cuMemcpyDtoH(x, a, n));
    CK(cuMemcpyDtoH(y, b, n));
    int ok = !memcmp(x, y, n);
    free(x);
    free(y);
    return ok;
}

/* The graph calls the update mode makes, through its door. */
static struct {
    CUresult (*AddNode)(CUgraphNode *, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t,
                        CUgraphNodeParams *);
    CUresult (*InstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*ExecNodeSetParams)(CUgraphExec, CUgraphNode, CUgraphNodeParams *);
    CUresult (*Launch)(CUgraphExec, CUstream);
} F = {cuGraphAddNode, cuGraphInstantiateWithFlags, cuGraphExecNodeSetParams, cuGraphLaunch};

static void *door_fn(const char *door, const char *name)
{
    void *p = NULL;
    if (!strcmp(door, "gpa")) {
        CUdriverProcAddressQueryResult st;
        CK(cuGetProcAddress(name, &p, 13000, 0, &st));
    } else {
        void *h = dlopen("libcuda.so.1", RTLD_NOW);
        p = h ? dlsym(h, name) : NULL;
    }
    if (!p) {
        fprintf(stderr, "no %s through %s\n", name, door);
        exit(2);
    }
    return p;
}

static void doors(const char *door)
{
    if (!strcmp(door, "symbol"))
        return;
    int gpa = !strcmp(door, "gpa");
    *(void **)&F.AddNode = door_fn(door, gpa ? "cuGraphAddNode" : "cuGraphAddNode_v2");
    *(void **)&F.InstantiateWithFlags = door_fn(door, "cuGraphInstantiateWithFlags");
    *(void **)&F.ExecNodeSetParams = door_fn(door, "cuGraphExecNodeSetParams");
    *(void **)&F.Launch = door_fn(door, "cuGraphLaunch");
}

static CUmemcpyAttributes attr = {.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM};
static size_t idx0 = 0;

/* A batch node of n copies from srcs to dsts of sizes. */
static CUgraphNode add_batch(CUgraph g, CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t n)
{
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEMCPY_BATCH;
    *cbt_node_params_memcpy_batch(&p) = (CUDA_MEMCPY_BATCH_NODE_PARAMS){
        .count = n, .dsts = dsts, .srcs = srcs, .sizes = sizes, .attrs = &attr, .attrsIdxs = &idx0, .numAttrs = 1};
    CUgraphNode node;
    CK(F.AddNode(&node, g, NULL, NULL, 0, &p));
    return node;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "update";
    long count = argc > 2 ? atol(argv[2]) : 1;
    fprintf(stderr, "PID %d\n", (int)getpid());
    CUdevice dev;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUstream s[2];
    CK(cuStreamCreate(&s[0], CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s[1], CU_STREAM_NON_BLOCKING));
    int ok = 1, launches = 0;
    CUgraph g;
    CUgraphExec e;
    if (!strcmp(mode, "update")) {
        doors(argc > 2 ? argv[2] : "symbol");
        size_t a_sizes[3] = {256, 512, 1024}, b_sizes[2] = {4096, 100};
        CUdeviceptr a_src[3], a_dst[3], b_src[2], b_dst[2];
        for (int i = 0; i < 3; i++)
            a_src[i] = buf(a_sizes[i], (unsigned char)i), a_dst[i] = buf(a_sizes[i], 0);
        for (int i = 0; i < 2; i++)
            b_src[i] = buf(b_sizes[i], (unsigned char)(9 + i)), b_dst[i] = buf(b_sizes[i], 0);
        CK(cuGraphCreate(&g, 0));
        CUgraphNode a = add_batch(g, a_dst, a_src, a_sizes, 3);
        add_batch(g, b_dst, b_src, b_sizes, 2);
        CK(F.InstantiateWithFlags(&e, g, 0));
        for (int l = 0; l < 5; l++) {
            if (l == 2) {
                size_t sizes[3] = {256, 0, 1024};
                CUgraphNodeParams p;
                memset(&p, 0, sizeof p);
                p.type = CU_GRAPH_NODE_TYPE_MEMCPY_BATCH;
                *cbt_node_params_memcpy_batch(&p) = (CUDA_MEMCPY_BATCH_NODE_PARAMS){
                    .count = 3, .dsts = a_dst, .srcs = a_src, .sizes = sizes, .attrs = &attr, .attrsIdxs = &idx0,
                    .numAttrs = 1};
                CK(F.ExecNodeSetParams(e, a, &p));
            }
            CK(F.Launch(e, s[l % 2]));
            launches++;
        }
        for (int i = 0; i < 3; i++)
            ok &= same(a_src[i], a_dst[i], a_sizes[i]);
        for (int i = 0; i < 2; i++)
            ok &= same(b_src[i], b_dst[i], b_sizes[i]);
    } else if (!strcmp(mode, "update2")) {
        size_t s1[2] = {128, 256}, s2[2] = {512, 0};
        CUdeviceptr src[2] = {buf(512, 4), buf(256, 6)}, dst[2] = {buf(512, 0), buf(256, 0)};
        CUgraph g2;
        CUgraphExecUpdateResultInfo info;
        CK(cuGraphCreate(&g, 0));
        add_batch(g, dst, src, s1, 2);
        CK(cuGraphInstantiateWithFlags(&e, g, 0));
        CK(cuGraphLaunch(e, s[0]));
        launches++;
        ok &= same(src[1], dst[1], 256);
        CK(cuGraphCreate(&g2, 0));
        add_batch(g2, dst, src, s2, 2);
        CK(cuGraphExecUpdate(e, g2, &info));
        for (int l = 0; l < 2; l++, launches++)
            CK(cuGraphLaunch(e, s[1]));
        ok &= same(src[0], dst[0], 512);
    } else if (!strcmp(mode, "capture")) {
        size_t sizes[2] = {1000, 24};
        CUdeviceptr src[2] = {buf(1000, 3), buf(24, 5)}, dst[2] = {buf(1000, 0), buf(24, 0)};
        CK(cuStreamBeginCapture(s[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
        CK(cuMemcpyBatchAsync(dst, src, sizes, 2, &attr, &idx0, 1, s[0]));
        CK(cuStreamEndCapture(s[0], &g));
        ok &= !same(src[0], dst[0], 1000); /* captured: not copied yet */
        CK(cuGraphInstantiateWithFlags(&e, g, 0));
        for (int l = 0; l < 3; l++, launches++)
            CK(cuGraphLaunch(e, s[1]));
        ok &= same(src[0], dst[0], 1000) && same(src[1], dst[1], 24);
    } else if (!strcmp(mode, "clone")) {
        size_t n1 = 2048, n2 = 64;
        CUdeviceptr s1 = buf(n1, 1), d1 = buf(n1, 0), s2 = buf(n2, 2), d2 = buf(n2, 0);
        CUgraph c, parent;
        CUgraphExec ec;
        CK(cuGraphCreate(&g, 0));
        add_batch(g, &d1, &s1, &n1, 1);
        CK(cuGraphClone(&c, g));
        CK(cuGraphInstantiateWithFlags(&ec, c, 0));
        for (int l = 0; l < 2; l++, launches++)
            CK(cuGraphLaunch(ec, s[0]));
        CK(cuGraphCreate(&parent, 0));
        add_batch(parent, &d2, &s2, &n2, 1);
        CUgraphNode child;
        CK(cuGraphAddChildGraphNode(&child, parent, NULL, 0, g));
        CK(cuGraphInstantiateWithFlags(&e, parent, 0));
        CK(cuGraphLaunch(e, s[1]));
        launches++;
        ok &= same(s1, d1, n1) && same(s2, d2, n2);
    } else if (!strcmp(mode, "reuse")) {
        size_t n1 = 2048, n2 = 64;
        CUdeviceptr s1 = buf(n1, 1), d1 = buf(n1, 0), s2 = buf(n2, 2), d2 = buf(n2, 0);
        CUgraph g2, c1, c2;
        CUgraphExec e1;
        CK(cuGraphCreate(&g, 0));
        add_batch(g, &d1, &s1, &n1, 1);
        CK(cuGraphClone(&c1, g));
        CK(cuGraphInstantiateWithFlags(&e1, c1, 0));
        CK(cuGraphLaunch(e1, s[0]));
        CK(cuGraphCreate(&g2, 0));
        add_batch(g2, &d2, &s2, &n2, 1);
        CK(cuGraphExecDestroy(e1));
        CK(cuGraphDestroy(c1));
        CK(cuGraphClone(&c2, g2));
        CK(cuGraphInstantiateWithFlags(&e, c2, 0));
        CK(cuGraphLaunch(e, s[0]));
        launches = 2;
        ok &= same(s1, d1, n1) && same(s2, d2, n2);
    } else if (!strcmp(mode, "churn")) {
        size_t n = 200;
        CUdeviceptr src = buf(n, 1), dst = buf(n, 0);
        CK(cuGraphCreate(&g, 0));
        CUgraphNode a = add_batch(g, &dst, &src, &n, 1);
        CK(cuGraphInstantiateWithFlags(&e, g, 0));
        for (long l = 0; l < count; l++, launches++) {
            size_t size = l % 2 ? 100 : 200;
            CUgraphNodeParams p;
            memset(&p, 0, sizeof p);
            p.type = CU_GRAPH_NODE_TYPE_MEMCPY_BATCH;
            *cbt_node_params_memcpy_batch(&p) = (CUDA_MEMCPY_BATCH_NODE_PARAMS){
                .count = 1, .dsts = &dst, .srcs = &src, .sizes = &size, .attrs = &attr, .attrsIdxs = &idx0,
                .numAttrs = 1};
            CK(cuGraphExecNodeSetParams(e, a, &p));
            CK(cuGraphLaunch(e, s[l % 2]));
        }
        CK(cuGraphExecDestroy(e));
        ok &= same(src, dst, 200);
    } else if (!strcmp(mode, "answers")) {
        size_t n = 64, n2[2] = {64, 64};
        CUdeviceptr src = buf(n, 1), dst = buf(n, 0), d2[2] = {dst, dst}, s2[2] = {src, src};
        CUgraphNodeParams p;
        CUgraphNode a = NULL, bad = NULL;
        CUgraphExecUpdateResultInfo info;
        CUgraph g2;
        CUdriverProcAddressQueryResult st1, st2;
        void *f1 = NULL, *f2 = NULL;
        CK(cuGraphCreate(&g, 0));
        memset(&p, 0, sizeof p);
        p.type = CU_GRAPH_NODE_TYPE_MEMCPY_BATCH;
        *cbt_node_params_memcpy_batch(&p) = (CUDA_MEMCPY_BATCH_NODE_PARAMS){
            .count = 1, .dsts = &dst, .srcs = &src, .sizes = &n, .attrs = &attr, .attrsIdxs = &idx0, .numAttrs = 0};
        CUresult r1 = cuGraphAddNode(&bad, g, NULL, NULL, 0, &p);
        cbt_node_params_memcpy_batch(&p)->numAttrs = 1;
        CUresult r2 = cuGraphAddNode(&a, g, NULL, NULL, 0, &p);
        CK(cuGraphInstantiateWithFlags(&e, g, 0));
        *cbt_node_params_memcpy_batch(&p) = (CUDA_MEMCPY_BATCH_NODE_PARAMS){
            .count = 2, .dsts = d2, .srcs = s2, .sizes = n2, .attrs = &attr, .attrsIdxs = &idx0, .numAttrs = 1};
        CUresult r3 = cuGraphExecNodeSetParams(e, a, &p);
        p.type = CU_GRAPH_NODE_TYPE_GRAPH;
        CUresult r4 = cuGraphNodeSetParams(a, &p);
        CUresult r5 = cuGetProcAddress("cuGraphAddNode", &f1, 13050, 0, &st1);
        CUresult r6 = cuGetProcAddress("cuGraphNodeGetParams", &f2, 13000, 0, &st2);
        void *h = dlopen("libcuda.so.1", RTLD_NOW);
        int v3 = h && dlsym(h, "cuGraphAddNode_v3") != NULL, v3d = dlsym(RTLD_DEFAULT, "cuGraphAddNode_v3") != NULL;
        CUresult r7 = cuGraphLaunch(NULL, s[0]);
        CK(cuGraphCreate(&g2, 0));
        CUresult r8 = cuGraphExecUpdate(e, g2, &info);
        CUresult r9 = cuGraphDestroyNode(NULL);
        CUresult r10 = cuGraphLaunch(e, s[0]);
        CUresult r11 = cuGraphLaunch(e, (CUstream)(uintptr_t)0x1234); /* a stream the driver does not know */
        printf("ANSWERS add_bad=%d add=%d exec_set_count=%d set_type=%d gpa_add=%d:%d:%d gpa_get=%d:%d:%d "
               "dlsym_v3=%d default_v3=%d launch_null=%d update=%d:%d destroy_null=%d launch=%d launch_bad=%d\n",
               (int)r1, (int)r2, (int)r3, (int)r4, (int)r5, (int)st1, f1 != NULL, (int)r6, (int)st2, f2 != NULL,
               v3, v3d, (int)r7, (int)r8, (int)info.result, (int)r9, (int)r10, (int)r11);
        launches = 1;
    } else if (!strcmp(mode, "launch_capture")) {
        size_t n = 512;
        CUdeviceptr src = buf(n, 1), dst = buf(n, 0);
        CUgraph outer;
        CUgraphExec eo;
        CK(cuGraphCreate(&g, 0));
        add_batch(g, &dst, &src, &n, 1);
        CK(cuGraphInstantiateWithFlags(&e, g, 0));
        CK(cuStreamBeginCapture(s[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
        CK(cuGraphLaunch(e, s[0]));
        CK(cuStreamEndCapture(s[0], &outer));
        ok &= !same(src, dst, n); /* captured: not run yet */
        CK(cuGraphInstantiateWithFlags(&eo, outer, 0));
        for (int l = 0; l < 2; l++, launches++)
            CK(cuGraphLaunch(eo, s[1]));
        CK(cuGraphLaunch(e, s[1]));
        launches++;
        ok &= same(src, dst, n);
    } else if (!strcmp(mode, "empty") || !strcmp(mode, "one")) {
        size_t n = 256;
        CUdeviceptr src = buf(n, 1), dst = buf(n, 0);
        CK(cuGraphCreate(&g, 0));
        if (!strcmp(mode, "one"))
            add_batch(g, &dst, &src, &n, 1);
        CK(cuGraphInstantiateWithFlags(&e, g, 0));
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long l = 0; l < count; l++, launches++)
            CK(cuGraphLaunch(e, s[0]));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("ns_per_launch=%.1f\n",
               ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)(count ? count : 1));
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("launches=%d\n", launches);
    return ok ? 0 : 1;
}
