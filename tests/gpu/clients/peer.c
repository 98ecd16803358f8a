/* SPDX-License-Identifier: MIT */
/*
 * GPU test client: batches between two GPUs, and locHints naming a device.
 *
 *   peer noaccess   before any cuCtxEnablePeerAccess: one batch on a stream of
 *                   device 0's primary context with three 1 MiB ops,
 *                   device 0 -> device 1, device 1 -> device 0 and
 *                   device 0 -> device 0; what the driver answers, what the
 *                   stream synchronisation answers and which bytes arrived
 *                   are MEASURED and printed, not judged
 *   peer access     cuCtxEnablePeerAccess both ways (ALREADY_ENABLED is fine),
 *                   then the same batch: it must succeed and every byte
 *                   must arrive
 *   peer lochint    two batches of one op, device 0 -> managed memory, whose
 *                   destination carries locHint {DEVICE, 1} (a device that
 *                   exists) and {DEVICE, device count} (one that does not):
 *                   the driver's answers and the bytes are printed; a batch
 *                   the driver accepted must deliver its bytes
 *
 * Each mode runs in a process of its own, so peer access is never enabled
 * before the noaccess batch.  The client never calls cuMulticastCreate.
 *
 * Manifest (cbt_gpu.h), plus:
 *   DEVICE_COUNT <n>
 *   SKIP <why>                      fewer than 2 devices (exit 77), or no peer
 *                                   access between them in the access mode
 *   PEER can01=<0|1> can10=<0|1>    cuDeviceCanAccessPeer(0, 1) and (1, 0)
 *   ENABLE <from>-><to> rc=<CUresult> name=<name>
 *   BUF <name> mem=<MK_*> alloc_device=<ordinal> attr_device=<ordinal>
 *                                   where each buffer lives: the device whose
 *                                   context allocated it, and what
 *                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL says
 *   CALL <k>                        printed just before batch k is called
 *   OP lines carry src_device/dst_device too: the allocating device for device
 *   memory, the driver's DEVICE_ORDINAL for managed memory, -1 for host memory
 *   MEASURE <k> case=<name> rc=<CUresult> rcname=<name> sync=<CUresult>
 *           syncname=<name> arrived=all|none|partial|unchecked ops_arrived=<i,j,..|->
 *   ARRIVED <k> <i> yes|no bad=<wrong bytes> of=<bytes> [readback=<CUresult>]
 *
 * The bytes are put in and read back outside the batch API
 * (cuMemcpyHtoD_v2 / cuMemcpyDtoH_v2, resolved with dlsym: the shim traces
 * only batches, so the trace holds exactly the batches of the manifest).  The
 * CPU test double has neither; its "device" memory is host memory, so over
 * the double (recognised by its fakecuda_batch_calls export) the client
 * touches it directly.
 */
#define _GNU_SOURCE
#include "cbt_gpu.h"

extern CUresult cuMemcpy3DBatchAsync_v2(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);

#define MIB (1u << 20)
#define NOTE_HOST (-1)

typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*dtoh2_fn)(void *, CUdeviceptr, size_t);
static htod_fn htod;
static dtoh2_fn dtoh;
static int over_double;

static CUcontext ctx[2];
static CUstream stream;
static int ndev;

/* A buffer of the client: where it is and what it was filled with. */
struct buf {
    const char *name;
    CUdeviceptr p;
    size_t n;
    int mem;          /* MK_DEVICE or MK_MANAGED */
    int alloc_device; /* the device whose context was current at allocation */
    int attr_device;  /* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL */
    int seed;         /* pattern; 0: filled with 0xEE (a destination) */
};

static unsigned char pat(size_t i, int seed)
{
    return (unsigned char)((i * (size_t)(2 * seed + 1) + (size_t)seed * 29u + (i >> 11)) & 0xff);
}

static void use_ctx(int dev)
{
    CUresult r = cuCtxSetCurrent(ctx[dev]);
    if (r != CUDA_SUCCESS)
        setup_fail("cuCtxSetCurrent", drv_err_name(r), __LINE__);
}

/* Bytes in and out, outside the batch API. */
static CUresult put(const struct buf *b, const unsigned char *src)
{
    if (b->mem == MK_MANAGED || over_double) {
        memcpy((void *)(uintptr_t)b->p, src, b->n);
        return CUDA_SUCCESS;
    }
    use_ctx(b->alloc_device);
    CUresult r = htod(b->p, src, b->n);
    use_ctx(0);
    return r;
}

static CUresult get(unsigned char *dst, const struct buf *b)
{
    if (b->mem == MK_MANAGED || over_double) {
        memcpy(dst, (const void *)(uintptr_t)b->p, b->n);
        return CUDA_SUCCESS;
    }
    use_ctx(b->alloc_device);
    CUresult r = dtoh(dst, b->p, b->n);
    use_ctx(0);
    return r;
}

static void alloc_buf(struct buf *b, const char *name, int dev, int mem, size_t n, int seed)
{
    CUresult r;
    b->name = name;
    b->n = n;
    b->mem = mem;
    b->alloc_device = dev;
    b->seed = seed;
    use_ctx(dev);
    r = mem == MK_MANAGED ? cuMemAllocManaged(&b->p, n, CU_MEM_ATTACH_GLOBAL) : cuMemAlloc(&b->p, n);
    if (r != CUDA_SUCCESS)
        setup_fail(mem == MK_MANAGED ? "cuMemAllocManaged" : "cuMemAlloc", drv_err_name(r), __LINE__);
    int ord = -99;
    r = cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b->p);
    b->attr_device = r == CUDA_SUCCESS ? ord : -99;
    use_ctx(0);
    printf("BUF %s mem=%d alloc_device=%d attr_device=%d\n", name, mem, dev, b->attr_device);
    if (mem == MK_DEVICE)
        check("buffer-device-ordinal", b->attr_device == dev, "%s allocated on device %d, DEVICE_ORDINAL %d (%s)",
              name, dev, b->attr_device, drv_err_name(r));
    unsigned char *h = malloc(n);
    if (!h)
        setup_fail("malloc", "out of memory", __LINE__);
    for (size_t i = 0; i < n; i++)
        h[i] = seed ? pat(i, seed) : 0xEE;
    r = put(b, h);
    if (r != CUDA_SUCCESS)
        setup_fail("filling a buffer (cuMemcpyHtoD_v2)", drv_err_name(r), __LINE__);
    free(h);
}

/* The device the manifest states for a pointer operand on b. */
static int side_device(const struct buf *b) { return b->mem == MK_MANAGED ? b->attr_device : b->alloc_device; }

struct pop {
    const struct buf *src, *dst;
};

static void print_op(int k, size_t i, const CUDA_MEMCPY3D_BATCH_OP *op, const struct pop *po)
{
    struct side_info si = {po->src->mem, 1}, di = {po->dst->mem, 1};
    printf("OP %d %zu", k, i);
    print_side("src", &op->src, &si);
    printf(" src_device=%d", side_device(po->src));
    print_side("dst", &op->dst, &di);
    printf(" dst_device=%d", side_device(po->dst));
    printf(" width=%zu height=%zu depth=%zu access_order=%d op_flags=%u bytes=%llu\n", op->extent.width,
           op->extent.height, op->extent.depth, (int)op->srcAccessOrder, op->flags,
           (unsigned long long)op->extent.width * op->extent.height * op->extent.depth);
}

/*
 * One batch of n ops (each copies all of its source buffer into its
 * destination buffer, same sizes): call, print the manifest, synchronise,
 * read every destination back.  Returns the CUresult of the call;
 * *arrived_ops: how many destinations hold their source's pattern.
 */
static CUresult batch(const char *name, size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, const struct pop *po,
                      const char *expect, size_t *arrived_ops)
{
    int k = g_batches++;
    printf("CALL %d\n", k);
    fflush(stdout);
    CUresult rc = cuMemcpy3DBatchAsync_v2(n, ops, 0, stream);
    printf("BATCH %d n=%zu rc=%d failidx=- expect=%s\n", k, n, (int)rc, expect);
    for (size_t i = 0; i < n; i++)
        print_op(k, i, &ops[i], &po[i]);
    CUresult sync = cuStreamSynchronize(stream);
    char arrived_list[128] = "";
    size_t n_arrived = 0, n_checked = 0;
    for (size_t i = 0; i < n; i++) {
        const struct buf *d = po[i].dst, *s = po[i].src;
        unsigned char *got = malloc(d->n);
        if (!got)
            setup_fail("malloc", "out of memory", __LINE__);
        CUresult r = get(got, d);
        if (r != CUDA_SUCCESS) {
            printf("ARRIVED %d %zu no bad=- of=%zu readback=%d\n", k, i, d->n, (int)r);
            free(got);
            continue;
        }
        n_checked++;
        size_t bad = 0;
        for (size_t j = 0; j < d->n; j++)
            bad += got[j] != pat(j, s->seed);
        printf("ARRIVED %d %zu %s bad=%zu of=%zu\n", k, i, bad ? "no" : "yes", bad, d->n);
        if (!bad) {
            n_arrived++;
            snprintf(arrived_list + strlen(arrived_list), sizeof arrived_list - strlen(arrived_list), "%s%zu",
                     arrived_list[0] ? "," : "", i);
        }
        free(got);
    }
    const char *arrived = n_checked < n ? "unchecked" : n_arrived == n ? "all" : n_arrived == 0 ? "none" : "partial";
    printf("MEASURE %d case=%s rc=%d rcname=%s sync=%d", k, name, (int)rc, drv_err_name(rc), (int)sync);
    printf(" syncname=%s arrived=%s ops_arrived=%s\n", drv_err_name(sync), arrived,
           arrived_list[0] ? arrived_list : "-");
    fflush(stdout);
    *arrived_ops = n_arrived;
    return rc;
}

/* The two-GPU batch of the noaccess and access modes. */
static CUresult peer_batch(const char *name, const char *expect, size_t *arrived_ops)
{
    static struct buf a0, b1, c1, d0, e0, f0;
    alloc_buf(&a0, "dev0_src", 0, MK_DEVICE, MIB, 1);
    alloc_buf(&b1, "dev1_dst", 1, MK_DEVICE, MIB, 0);
    alloc_buf(&c1, "dev1_src", 1, MK_DEVICE, MIB, 2);
    alloc_buf(&d0, "dev0_dst", 0, MK_DEVICE, MIB, 0);
    alloc_buf(&e0, "dev0_src2", 0, MK_DEVICE, MIB, 3);
    alloc_buf(&f0, "dev0_dst2", 0, MK_DEVICE, MIB, 0);
    const CUmemcpySrcAccessOrder STREAM = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    /* 1 MiB as 4096 x 256 bytes */
    CUDA_MEMCPY3D_BATCH_OP ops[3] = {
        ob_op(ob_ptr(a0.p, 0, 0), ob_ptr(b1.p, 0, 0), 4096, 256, 1, STREAM),
        ob_op(ob_ptr(c1.p, 0, 0), ob_ptr(d0.p, 0, 0), 4096, 256, 1, STREAM),
        ob_op(ob_ptr(e0.p, 0, 0), ob_ptr(f0.p, 0, 0), 4096, 256, 1, STREAM),
    };
    struct pop po[3] = {{&a0, &b1}, {&c1, &d0}, {&e0, &f0}};
    return batch(name, 3, ops, po, expect, arrived_ops);
}

static void print_can_access(int *can01, int *can10)
{
    CUresult r1 = cuDeviceCanAccessPeer(can01, 0, 1), r2 = cuDeviceCanAccessPeer(can10, 1, 0);
    if (r1 != CUDA_SUCCESS || r2 != CUDA_SUCCESS)
        setup_fail("cuDeviceCanAccessPeer", drv_err_name(r1 != CUDA_SUCCESS ? r1 : r2), __LINE__);
    printf("PEER can01=%d can10=%d\n", *can01, *can10);
}

static int mode_noaccess(void)
{
    int can01, can10;
    size_t arrived;
    print_can_access(&can01, &can10);
    /* Measured, not judged: the suite reports it against the validator. */
    peer_batch("peer_noaccess", "measure", &arrived);
    return finish();
}

static int enable(int from, int to)
{
    use_ctx(from);
    CUresult r = cuCtxEnablePeerAccess(ctx[to], 0);
    use_ctx(0);
    printf("ENABLE %d->%d rc=%d name=%s\n", from, to, (int)r, drv_err_name(r));
    return r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
}

static int mode_access(void)
{
    int can01, can10;
    size_t arrived;
    print_can_access(&can01, &can10);
    if (!can01 || !can10) {
        printf("SKIP cuDeviceCanAccessPeer says devices 0 and 1 cannot access each other (0->1: %d, 1->0: %d)\n",
               can01, can10);
        printf("RESULT skip\n");
        return 77;
    }
    check("enable-peer-access-0-to-1", enable(0, 1), NULL);
    check("enable-peer-access-1-to-0", enable(1, 0), NULL);
    if (g_failed)
        return finish();
    CUresult rc = peer_batch("peer_access", "ok", &arrived);
    check("peer-access-batch-succeeds", rc == CUDA_SUCCESS, "%s", drv_err_name(rc));
    check("data-peer-access-bytes-arrived", arrived == 3, "%zu of 3 destinations hold their source's bytes", arrived);
    return finish();
}

static int mode_lochint(void)
{
    static struct buf s1, m1, s2, m2;
    alloc_buf(&s1, "dev0_src", 0, MK_DEVICE, MIB / 4, 4);
    alloc_buf(&m1, "managed_dst_hint1", 0, MK_MANAGED, MIB / 4, 0);
    alloc_buf(&s2, "dev0_src2", 0, MK_DEVICE, MIB / 4, 5);
    alloc_buf(&m2, "managed_dst_hint_nodev", 0, MK_MANAGED, MIB / 4, 0);
    const int ids[2] = {1, ndev};
    const char *names[2] = {"lochint_dev1", "lochint_nodev"};
    struct pop po[2][1] = {{{&s1, &m1}}, {{&s2, &m2}}};
    for (int b = 0; b < 2; b++) {
        CUDA_MEMCPY3D_BATCH_OP op =
            ob_op(ob_ptr(po[b][0].src->p, 0, 0), ob_ptr(po[b][0].dst->p, 0, 0), 4096, 64, 1,
                  CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
        op.dst.op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
        op.dst.op.ptr.locHint.id = ids[b];
        size_t arrived;
        CUresult rc = batch(names[b], 1, &op, po[b], "measure", &arrived);
        char cname[64];
        snprintf(cname, sizeof cname, "data-%s-accepted-batch-delivers", names[b]);
        if (rc == CUDA_SUCCESS)
            check(cname, arrived == 1, "locHint {DEVICE, %d} on managed memory", ids[b]);
        else
            skip(cname, "the driver refused the batch");
    }
    return finish();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2 || (strcmp(argv[1], "noaccess") && strcmp(argv[1], "access") && strcmp(argv[1], "lochint"))) {
        fprintf(stderr, "usage: %s noaccess|access|lochint\n", argv[0]);
        return 2;
    }
    printf("PID %d\n", (int)getpid());
    CUresult r = cuInit(0);
    if (r != CUDA_SUCCESS)
        setup_fail("cuInit", drv_err_name(r), __LINE__);
    r = cuDeviceGetCount(&ndev);
    if (r != CUDA_SUCCESS)
        setup_fail("cuDeviceGetCount", drv_err_name(r), __LINE__);
    printf("DEVICE_COUNT %d\n", ndev);
    if (ndev < 2) {
        printf("SKIP needs 2 devices, this machine has %d\n", ndev);
        printf("RESULT skip\n");
        return 77;
    }
    for (int d = 0; d < 2; d++) {
        CUdevice dev;
        if ((r = cuDeviceGet(&dev, d)) != CUDA_SUCCESS || (r = cuDevicePrimaryCtxRetain(&ctx[d], dev)) != CUDA_SUCCESS)
            setup_fail("cuDeviceGet/cuDevicePrimaryCtxRetain", drv_err_name(r), __LINE__);
    }
    use_ctx(0);
    if ((r = cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
        setup_fail("cuStreamCreate", drv_err_name(r), __LINE__);
    htod = (htod_fn)dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2");
    dtoh = (dtoh2_fn)dlsym(RTLD_DEFAULT, "cuMemcpyDtoH_v2");
    over_double = dlsym(RTLD_DEFAULT, "fakecuda_batch_calls") != NULL;
    if (!over_double && (!htod || !dtoh))
        setup_fail("dlsym(cuMemcpyHtoD_v2 / cuMemcpyDtoH_v2)", "not found in the driver", __LINE__);
    if (over_double)
        printf("CHECK bytes-through skip the CPU test double: device memory is host memory, touched directly\n");
    if (!strcmp(argv[1], "noaccess"))
        return mode_noaccess();
    if (!strcmp(argv[1], "access"))
        return mode_access();
    return mode_lochint();
}
