/* SPDX-License-Identifier: MIT */
/*
 * Batch copies and CUDA graph capture (driver API; the real driver, or the
 * test double through tests/gpu/dryrun.sh and tests/doors/capture.sh).
 *
 *   capture batch MODE KIND      one batch on a stream being captured
 *   capture other KIND N         another thread holds a GLOBAL capture while
 *                                this thread makes N batches on its own stream
 *   capture probe                the bare driver: which of the calls the shim
 *                                itself makes leave a capture ACTIVE
 *   capture late DOOR KIND N     N batches on a stream outside any capture,
 *                                then a GLOBAL capture of it begun through
 *                                DOOR and one batch in it: direct (the linked
 *                                cuStreamBeginCapture), gpa (the pointer
 *                                cuGetProcAddress hands out), dlsym (the
 *                                driver's export by dlsym), tograph
 *                                (cuStreamBeginCaptureToGraph, through
 *                                cuGetProcAddress: "unsupported" without it)
 *
 * MODE: global, relaxed, thread (CUstreamCaptureMode).  KIND: 3d
 * (cuMemcpy3DBatchAsync_v2, one D2D op), 3dv1 (the CUDA 12.8 ABI with
 * failIdx), 3d0 (numOps 0), 1d (cuMemcpyBatchAsync_v2, one copy), 1dv1
 * (12.8 ABI), 1d0 (count 0); 3dbad, 1dbad (an op or copy the driver
 * rejects: width or size 0); 3dunmapped, 1dunmapped (a source at an unmapped
 * host address: the driver crashes on it outside a capture; run in a forked
 * child, reported as rc=crash); 3dlegacy (the batch on CU_STREAM_LEGACY while
 * the stream is captured).
 *
 * Output, one line per run (key=value):
 *   CAPTURE mode= kind= rc= failidx= status= end= nodes= inst= launch= copied= after_rc= after_copied=
 *     rc, failidx: the batch's result and failIdx (- where the ABI has none);
 *     status: cuStreamIsCapturing after the batch (0 none, 1 active, 2 invalidated);
 *     end: cuStreamEndCapture's result; nodes: the graph's node count (-1 no graph);
 *     inst, launch: instantiating and launching it; copied: 1 when the
 *     destination holds the source's bytes after the launch;
 *     after_rc, after_copied: the same batch made again after the capture.
 *   OTHER kind= n= failed= end= nodes= inst= launch= memset_ok=
 *   PROBE thread=same|other mode= call=NAME rc= status=
 *   LATE door= kind= n= before_failed= begin= rc= failidx= status= end= nodes= inst= launch=
 * and RESULT ok (the program ran to its end; the values are for the caller
 * to compare, bare against the shim).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opbuild.h"

#undef cuMemcpy3DBatchAsync
#undef cuMemcpyBatchAsync

CUresult cuMemcpy3DBatchAsync(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long, CUstream);
CUresult cuMemcpyBatchAsync(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t,
                            size_t *, CUstream);

#define BYTES 4096
#define DIE(call)                                                                                             \
    do {                                                                                                      \
        CUresult r_ = (call);                                                                                 \
        if (r_ != CUDA_SUCCESS) {                                                                             \
            printf("RESULT FAIL %s = %d (line %d)\n", #call, (int)r_, __LINE__);                              \
            exit(1);                                                                                          \
        }                                                                                                     \
    } while (0)

static CUcontext ctx;
static CUdeviceptr src, dst;

static CUstreamCaptureMode parse_mode(const char *m)
{
    if (!strcmp(m, "relaxed"))
        return CU_STREAM_CAPTURE_MODE_RELAXED;
    if (!strcmp(m, "thread"))
        return CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    return CU_STREAM_CAPTURE_MODE_GLOBAL;
}

#define UNMAPPED ((CUdeviceptr)0xdead0000)

/* One batch of the given kind on stream s; *fail_idx for the 12.8 ABIs (SIZE_MAX-1 before). */
static CUresult batch(const char *kind, CUstream s, size_t *fail_idx)
{
    int bad = !strcmp(kind, "3dbad") || !strcmp(kind, "1dbad");
    int unmapped = !strcmp(kind, "3dunmapped") || !strcmp(kind, "1dunmapped");
    CUDA_MEMCPY3D_BATCH_OP op = ob_op(ob_ptr(unmapped ? UNMAPPED : src, 0, 0), ob_ptr(dst, 0, 0), bad ? 0 : BYTES,
                                      1, 1, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    CUdeviceptr dsts[1] = {dst}, srcs[1] = {unmapped ? UNMAPPED : src};
    size_t sizes[1] = {bad ? 0 : BYTES}, idxs[1] = {0};
    CUmemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    *fail_idx = SIZE_MAX - 1;
    if (!strcmp(kind, "3d") || !strcmp(kind, "3dbad") || !strcmp(kind, "3dunmapped"))
        return cuMemcpy3DBatchAsync_v2(1, &op, 0, s);
    if (!strcmp(kind, "3dlegacy"))
        return cuMemcpy3DBatchAsync_v2(1, &op, 0, CU_STREAM_LEGACY);
    if (!strcmp(kind, "3dv1"))
        return cuMemcpy3DBatchAsync(1, &op, fail_idx, 0, s);
    if (!strcmp(kind, "3d0"))
        return cuMemcpy3DBatchAsync_v2(0, &op, 0, s);
    if (!strcmp(kind, "1d") || !strcmp(kind, "1dbad") || !strcmp(kind, "1dunmapped"))
        return cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 1, &attr, idxs, 1, s);
    if (!strcmp(kind, "1dv1"))
        return cuMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, idxs, 1, fail_idx, s);
    if (!strcmp(kind, "1d0"))
        return cuMemcpyBatchAsync_v2(dsts, srcs, sizes, 0, &attr, idxs, 1, s);
    printf("RESULT FAIL unknown kind %s\n", kind);
    exit(2);
}

static int copied(void)
{
    unsigned char h[BYTES];
    if (cuMemcpyDtoH(h, dst, BYTES) != CUDA_SUCCESS)
        return -1;
    for (int i = 0; i < BYTES; i++)
        if (h[i] != 0xAB)
            return 0;
    return 1;
}

static void fmt_idx(char *buf, size_t len, size_t v)
{
    if (v == SIZE_MAX - 1)
        snprintf(buf, len, "-");
    else if (v == SIZE_MAX)
        snprintf(buf, len, "max");
    else
        snprintf(buf, len, "%zu", v);
}

/* End the capture of s, instantiate and launch what it made. */
static void end_capture(CUstream s, int *end, long *nodes, int *inst, int *launch)
{
    CUgraph g = NULL;
    *end = (int)cuStreamEndCapture(s, &g);
    *nodes = -1;
    *inst = *launch = -1;
    if (g) {
        size_t n = 0;
        if (cuGraphGetNodes(g, NULL, &n) == CUDA_SUCCESS)
            *nodes = (long)n;
        CUgraphExec ge = NULL;
        *inst = (int)cuGraphInstantiateWithFlags(&ge, g, 0);
        if (*inst == CUDA_SUCCESS) {
            *launch = (int)cuGraphLaunch(ge, s);
            cuStreamSynchronize(s);
            cuGraphExecDestroy(ge);
        }
        cuGraphDestroy(g);
    }
}

static int run_batch(const char *mode, const char *kind)
{
    CUstream s;
    DIE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    DIE(cuMemsetD8(dst, 0, BYTES));
    DIE(cuStreamBeginCapture(s, parse_mode(mode)));
    size_t fi;
    char rcs[32], fis[32];
    if (strstr(kind, "unmapped")) {
        /* the driver may crash on it: in a child, which reports its answer */
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            CUresult r = batch(kind, s, &fi);
            printf("CHILD rc=%d\n", (int)r);
            _exit(0);
        }
        int ws = 0;
        waitpid(pid, &ws, 0);
        snprintf(rcs, sizeof rcs, WIFSIGNALED(ws) ? "crash" : "child");
        fi = SIZE_MAX - 1;
    } else {
        snprintf(rcs, sizeof rcs, "%d", (int)batch(kind, s, &fi));
    }
    fmt_idx(fis, sizeof fis, fi);
    CUstreamCaptureStatus st = (CUstreamCaptureStatus)-1;
    cuStreamIsCapturing(s, &st);
    int end, inst, launch;
    long nodes;
    end_capture(s, &end, &nodes, &inst, &launch);
    int cp = copied();
    /* the same batch outside any capture */
    size_t fi2;
    CUresult after = strstr(kind, "unmapped") ? CUDA_ERROR_NOT_SUPPORTED : batch(kind, s, &fi2);
    cuStreamSynchronize(s);
    int cp2 = copied();
    printf("CAPTURE mode=%s kind=%s rc=%s failidx=%s status=%d end=%d nodes=%ld inst=%d launch=%d copied=%d "
           "after_rc=%d after_copied=%d\n",
           mode, kind, rcs, fis, (int)st, end, nodes, inst, launch, cp, (int)after, cp2);
    cuStreamDestroy(s);
    return 0;
}

/* ---- a capture begun after batches, through one door */

typedef CUresult (*begin_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*begin_graph_fn)(CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t,
                                   CUstreamCaptureMode);

/* Begin a GLOBAL capture of s through door; CUDA_ERROR_NOT_SUPPORTED when the door has no function. */
static CUresult begin_through(const char *door, CUstream s, CUgraph *g)
{
    CUdriverProcAddressQueryResult q;
    void *fn = NULL;
    if (!strcmp(door, "direct"))
        return cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    if (!strcmp(door, "gpa")) {
        if (cuGetProcAddress("cuStreamBeginCapture", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || !fn)
            return CUDA_ERROR_NOT_SUPPORTED;
        return ((begin_fn)fn)(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    }
    if (!strcmp(door, "dlsym")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        fn = h ? dlsym(h, "cuStreamBeginCapture_v2") : NULL;
        if (!fn)
            return CUDA_ERROR_NOT_SUPPORTED;
        return ((begin_fn)fn)(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    }
    if (!strcmp(door, "tograph")) {
        void *create = NULL; /* cuGraphCreate, which the test double lacks */
        if (cuGetProcAddress("cuStreamBeginCaptureToGraph", &fn, 12030, CU_GET_PROC_ADDRESS_DEFAULT, &q) !=
                CUDA_SUCCESS ||
            !fn || cuGetProcAddress("cuGraphCreate", &create, 10000, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS ||
            !create || ((CUresult(*)(CUgraph *, unsigned))create)(g, 0) != CUDA_SUCCESS)
            return CUDA_ERROR_NOT_SUPPORTED;
        return ((begin_graph_fn)fn)(s, *g, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

static int run_late(const char *door, const char *kind, int n)
{
    CUstream s;
    DIE(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    int failed = 0;
    size_t fi = SIZE_MAX;
    for (int i = 0; i < n; i++)
        failed += batch(kind, s, &fi) != CUDA_SUCCESS;
    DIE(cuStreamSynchronize(s));
    CUgraph g0 = NULL;
    CUresult begin = begin_through(door, s, &g0);
    if (begin == CUDA_ERROR_NOT_SUPPORTED) {
        printf("LATE door=%s kind=%s n=%d unsupported\n", door, kind, n);
        cuStreamDestroy(s);
        return 0;
    }
    char rcs[32] = "-", fis[32] = "-";
    CUstreamCaptureStatus st = (CUstreamCaptureStatus)-1;
    int end = -1, inst = -1, launch = -1;
    long nodes = -1;
    if (begin == CUDA_SUCCESS) {
        fi = SIZE_MAX;
        snprintf(rcs, sizeof rcs, "%d", (int)batch(kind, s, &fi));
        fmt_idx(fis, sizeof fis, fi);
        cuStreamIsCapturing(s, &st);
        end_capture(s, &end, &nodes, &inst, &launch);
    }
    if (g0)
        cuGraphDestroy(g0);
    printf("LATE door=%s kind=%s n=%d before_failed=%d begin=%d rc=%s failidx=%s status=%d end=%d nodes=%ld "
           "inst=%d launch=%d\n",
           door, kind, n, failed, (int)begin, rcs, fis, (int)st, end, nodes, inst, launch);
    cuStreamDestroy(s);
    return 0;
}

/* ---- another thread's GLOBAL capture while this thread makes batches */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int phase; /* 1: capture begun; 2: batches made */
static CUdeviceptr other_buf;
static int o_end, o_inst, o_launch;
static long o_nodes;

static void wait_phase(int p)
{
    pthread_mutex_lock(&mu);
    while (phase < p)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void set_phase(int p)
{
    pthread_mutex_lock(&mu);
    phase = p;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void *capturer(void *arg)
{
    (void)arg;
    DIE(cuCtxSetCurrent(ctx));
    CUstream sa;
    DIE(cuStreamCreate(&sa, CU_STREAM_NON_BLOCKING));
    DIE(cuStreamBeginCapture(sa, CU_STREAM_CAPTURE_MODE_GLOBAL));
    set_phase(1);
    wait_phase(2);
    cuMemsetD8Async(other_buf, 0x5A, BYTES, sa);
    end_capture(sa, &o_end, &o_nodes, &o_inst, &o_launch);
    cuStreamDestroy(sa);
    return NULL;
}

static int run_other(const char *kind, int n)
{
    CUstream sb;
    DIE(cuStreamCreate(&sb, CU_STREAM_NON_BLOCKING));
    DIE(cuMemAlloc(&other_buf, BYTES));
    DIE(cuMemsetD8(other_buf, 0, BYTES));
    pthread_t t;
    pthread_create(&t, NULL, capturer, NULL);
    wait_phase(1);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        size_t fi;
        if (batch(kind, sb, &fi) != CUDA_SUCCESS)
            failed++;
    }
    set_phase(2);
    pthread_join(t, NULL);
    cuStreamSynchronize(sb);
    unsigned char h[BYTES];
    int ok = cuMemcpyDtoH(h, other_buf, BYTES) == CUDA_SUCCESS;
    for (int i = 0; ok && i < BYTES; i++)
        ok = h[i] == 0x5A;
    printf("OTHER kind=%s n=%d failed=%d end=%d nodes=%ld inst=%d launch=%d memset_ok=%d copied=%d\n", kind, n,
           failed, o_end, o_nodes, o_inst, o_launch, ok, copied());
    return 0;
}

/* ---- probe: the calls the shim makes, against an ACTIVE capture */

static CUstream ps;
static CUstreamCaptureMode pmode;
static CUarray parr;
static void *pageable, *pinned;

static CUresult call_one(int i, const char **name)
{
    static CUevent e0, e1;
    unsigned long long id;
    CUcontext c;
    CUdevice d;
    int n;
    unsigned memtype = 0, managed = 0;
    int ordinal = -1;
    CUdeviceptr start = 0, base;
    size_t size = 0;
    CUpointer_attribute at[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[] = {&memtype, &managed, &ordinal, &start, &size};
    CUDA_ARRAY3D_DESCRIPTOR desc;
    CUstreamCaptureStatus st;
    float ms;
    CUstream other;
    switch (i) {
    case 0: *name = "cuDeviceGetCount"; return cuDeviceGetCount(&n);
    case 1: *name = "cuStreamGetId"; return cuStreamGetId(ps, &id);
    case 2: *name = "cuStreamGetCtx"; return cuStreamGetCtx(ps, &c);
    case 3: *name = "cuCtxGetDevice_v2"; return cuCtxGetDevice_v2(&d, ctx);
    case 4: *name = "cuStreamIsCapturing"; return cuStreamIsCapturing(ps, &st);
    case 5: *name = "cuPointerGetAttributes(device)"; return cuPointerGetAttributes(5, at, data, src);
    case 6: *name = "cuPointerGetAttributes(pageable)";
        return cuPointerGetAttributes(5, at, data, (CUdeviceptr)(uintptr_t)pageable);
    case 7: *name = "cuPointerGetAttributes(pinned)";
        return cuPointerGetAttributes(5, at, data, (CUdeviceptr)(uintptr_t)pinned);
    case 8: *name = "cuMemGetAddressRange"; return cuMemGetAddressRange(&base, &size, src);
    case 9: *name = "cuArray3DGetDescriptor"; return cuArray3DGetDescriptor(&desc, parr);
    case 10: *name = "cuCtxGetId"; return cuCtxGetId(ctx, &id);
    case 11: *name = "cuCtxGetCurrent"; return cuCtxGetCurrent(&c);
    case 12: *name = "cuCtxPushCurrent+Pop";
        if (cuCtxPushCurrent(ctx) != CUDA_SUCCESS)
            return CUDA_ERROR_UNKNOWN;
        return cuCtxPopCurrent(&c);
    case 13: *name = "cuEventCreate"; {
        CUresult r = cuEventCreate(&e0, CU_EVENT_DEFAULT);
        if (r == CUDA_SUCCESS)
            r = cuEventCreate(&e1, CU_EVENT_DEFAULT);
        return r;
    }
    case 14: *name = "cuStreamCreate"; return cuStreamCreate(&other, CU_STREAM_NON_BLOCKING);
    case 15: *name = "cuEventRecord(other stream)"; {
        CUstream o2;
        if (cuStreamCreate(&o2, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
            return CUDA_ERROR_UNKNOWN;
        CUresult r = cuEventRecord(e0, o2);
        cuEventRecord(e1, o2);
        return r;
    }
    case 16: *name = "cuEventQuery"; return cuEventQuery(e0);
    case 17: *name = "cuEventSynchronize"; return cuEventSynchronize(e1);
    case 18: *name = "cuEventElapsedTime"; return cuEventElapsedTime(&ms, e0, e1);
    case 19: *name = "cuStreamGetId(NULL)"; return cuStreamGetId(NULL, &id);
    case 20: *name = "cuStreamGetCtx(NULL)"; return cuStreamGetCtx(NULL, &c);
    case 21: *name = "cuStreamIsCapturing(NULL)"; return cuStreamIsCapturing(NULL, &st);
    case 22: *name = "cuStreamIsCapturing(LEGACY)"; return cuStreamIsCapturing(CU_STREAM_LEGACY, &st);
    case 23: *name = "cuStreamGetId(LEGACY)"; return cuStreamGetId(CU_STREAM_LEGACY, &id);
    case 24: *name = "cuStreamGetCtx(PER_THREAD)"; return cuStreamGetCtx(CU_STREAM_PER_THREAD, &c);
    case 25: *name = "cuStreamIsCapturing(PER_THREAD)"; return cuStreamIsCapturing(CU_STREAM_PER_THREAD, &st);
    case 26: *name = "cuEventRecord(captured stream)"; return cuEventRecord(e0, ps);
    case 27: *name = "cuStreamQuery"; return cuStreamQuery(ps);
    case 28: *name = "cuPointerGetAttributes(unmapped)";
        return cuPointerGetAttributes(5, at, data, (CUdeviceptr)0xdead0000);
    case 29: *name = "cuMemcpy3DBatchAsync_v2(numOps 0)"; {
        CUDA_MEMCPY3D_BATCH_OP op = ob_op(ob_ptr(src, 0, 0), ob_ptr(dst, 0, 0), BYTES, 1, 1,
                                          CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
        return cuMemcpy3DBatchAsync_v2(0, &op, 0, ps);
    }
    case 30: *name = "cuMemcpy3DBatchAsync_v2(1 op)"; {
        CUDA_MEMCPY3D_BATCH_OP op = ob_op(ob_ptr(src, 0, 0), ob_ptr(dst, 0, 0), BYTES, 1, 1,
                                          CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
        return cuMemcpy3DBatchAsync_v2(1, &op, 0, ps);
    }
    default: *name = NULL; return CUDA_SUCCESS;
    }
}

static const char *probe_thread;

static void probe_all(void)
{
    for (int i = 0;; i++) {
        const char *name;
        CUresult r = call_one(i, &name);
        if (!name)
            break;
        CUstreamCaptureStatus st = (CUstreamCaptureStatus)-1;
        cuStreamIsCapturing(ps, &st);
        printf("PROBE thread=%s mode=%d call=%s rc=%d status=%d\n", probe_thread, (int)pmode, name, (int)r, (int)st);
        fflush(stdout);
        if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            CUgraph g = NULL;
            cuStreamEndCapture(ps, &g);
            if (g)
                cuGraphDestroy(g);
            cuStreamBeginCapture(ps, pmode);
        }
    }
}

static void *probe_thread_fn(void *arg)
{
    cuCtxSetCurrent(ctx);
    if (arg) {
        /* this thread's potentially unsafe calls in relaxed interaction mode */
        CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
        cuThreadExchangeStreamCaptureMode(&m);
    }
    probe_all();
    return NULL;
}

static int run_probe(void)
{
    DIE(cuStreamCreate(&ps, CU_STREAM_NON_BLOCKING));
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = 64;
    d.Height = 64;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    DIE(cuArray3DCreate(&parr, &d));
    pageable = malloc(BYTES);
    memset(pageable, 1, BYTES);
    DIE(cuMemAllocHost(&pinned, BYTES));
    CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_RELAXED,
                                   CU_STREAM_CAPTURE_MODE_THREAD_LOCAL};
    for (int m = 0; m < 3; m++) {
        pmode = modes[m];
        for (int t = 0; t < 3; t++) {
            DIE(cuStreamBeginCapture(ps, pmode));
            probe_thread = t == 2 ? "other-relaxed" : t ? "other" : "same";
            if (t) {
                pthread_t th;
                pthread_create(&th, NULL, probe_thread_fn, t == 2 ? (void *)1 : NULL);
                pthread_join(th, NULL);
            } else {
                probe_all();
            }
            CUgraph g = NULL;
            cuStreamEndCapture(ps, &g);
            if (g)
                cuGraphDestroy(g);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: capture batch MODE KIND | other KIND N | late DOOR KIND N | probe\n");
        return 2;
    }
    DIE(cuInit(0));
    CUdevice dev;
    DIE(cuDeviceGet(&dev, 0));
    DIE(cuDevicePrimaryCtxRetain(&ctx, dev));
    DIE(cuCtxSetCurrent(ctx));
    DIE(cuMemAlloc(&src, BYTES));
    DIE(cuMemAlloc(&dst, BYTES));
    DIE(cuMemsetD8(src, 0xAB, BYTES));
    printf("PID %d\n", (int)getpid());
    int rc = 2;
    if (!strcmp(argv[1], "batch") && argc == 4)
        rc = run_batch(argv[2], argv[3]);
    else if (!strcmp(argv[1], "other") && argc == 4)
        rc = run_other(argv[2], atoi(argv[3]));
    else if (!strcmp(argv[1], "late") && argc == 5)
        rc = run_late(argv[2], argv[3], atoi(argv[4]));
    else if (!strcmp(argv[1], "probe"))
        rc = run_probe();
    if (rc == 0)
        printf("RESULT ok\n");
    return rc;
}
