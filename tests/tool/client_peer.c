/* SPDX-License-Identifier: MIT */
/*
 * Batches across two GPUs, for tests/tool/peer.sh (run with
 * FAKECUDA_DEVICE_COUNT=2 over the test double of the driver).
 *
 * Device memory on device 0 and on device 1 (each device's primary context
 * current while it is allocated), then three batches on one stream:
 *
 *   1. fill:     pinned host -> device 0, pinned host -> device 1
 *   2. peer:     3 ops device 0 -> device 1, 2 ops device 1 -> device 0,
 *                1 op device 0 -> device 0 (no op's destination overlaps
 *                another op's source or destination)
 *   3. readback: device 0 -> pinned host, device 1 -> pinned host
 *
 * It checks every byte that arrived, then prints what it computed itself:
 *
 *   op I src_device S dst_device D bytes B             (the peer batch's ops)
 *   direction NAME ops N bytes B                        (HtoD, DtoH, DtoD, peer)
 *   device D ops_out N bytes_out B ops_in N bytes_in B peer_ops_out N peer_bytes_out B peer_ops_in N peer_bytes_in B
 *   peer: 3 batches, 10 ops, B bytes; all checked bytes arrived
 *
 * Exit status: 0 when every byte arrived, 1 when not, 2 when a call failed.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                 \
    do {                                                                      \
        CUresult r_ = (x);                                                    \
        if (r_ != CUDA_SUCCESS) {                                             \
            fprintf(stderr, "client_peer: %s failed (%d)\n", #x, (int)r_);    \
            exit(2);                                                          \
        }                                                                     \
    } while (0)

#define NDEV 2
#define BUF (64u << 10)  /* per device: sources in [0, 16K), destinations from 32K */
#define FILL (16u << 10)
#define BACK (32u << 10)
#define HOST (-1)

/* One op as the client sees it: where from, where to, how much. */
struct cp {
    int src_dev, dst_dev; /* HOST: pinned host memory */
    size_t src_off, dst_off, width, height;
};

static CUdeviceptr dbuf[NDEV];
static unsigned char *fill[NDEV], *back[NDEV];

/* The expected figures, by direction and by device. */
enum { D_HTOD, D_DTOH, D_DTOD, D_PEER, ND };
static const char *const dname[ND] = {"HtoD", "DtoH", "DtoD", "peer"};
static unsigned long long dir_ops[ND], dir_bytes[ND];
struct devtot {
    unsigned long long ops_out, bytes_out, ops_in, bytes_in, peer_ops_out, peer_bytes_out, peer_ops_in, peer_bytes_in;
};
static struct devtot tot[NDEV];
static unsigned long long all_ops, all_bytes, all_batches;

static CUmemcpy3DOperand ptr(CUdeviceptr p)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p;
    return o;
}

static void account(const struct cp *c)
{
    unsigned long long b = (unsigned long long)c->width * c->height;
    int d;
    if (c->src_dev == HOST)
        d = D_HTOD;
    else if (c->dst_dev == HOST)
        d = D_DTOH;
    else
        d = c->src_dev == c->dst_dev ? D_DTOD : D_PEER;
    dir_ops[d]++;
    dir_bytes[d] += b;
    if (c->src_dev != HOST) {
        tot[c->src_dev].ops_out++;
        tot[c->src_dev].bytes_out += b;
        if (d == D_PEER) {
            tot[c->src_dev].peer_ops_out++;
            tot[c->src_dev].peer_bytes_out += b;
        }
    }
    if (c->dst_dev != HOST) {
        tot[c->dst_dev].ops_in++;
        tot[c->dst_dev].bytes_in += b;
        if (d == D_PEER) {
            tot[c->dst_dev].peer_ops_in++;
            tot[c->dst_dev].peer_bytes_in += b;
        }
    }
    all_ops++;
    all_bytes += b;
}

/* One batch of n ops on stream s, waited for; src and dst give each op's addresses. */
static void batch(CUstream s, const struct cp *c, size_t n, CUdeviceptr (*src)(const struct cp *),
                  CUdeviceptr (*dst)(const struct cp *))
{
    CUDA_MEMCPY3D_BATCH_OP ops[8];
    memset(ops, 0, sizeof ops);
    for (size_t i = 0; i < n; i++) {
        ops[i].src = ptr(src(&c[i]));
        ops[i].dst = ptr(dst(&c[i]));
        ops[i].extent.width = c[i].width;
        ops[i].extent.height = c[i].height;
        ops[i].extent.depth = 1;
        ops[i].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        account(&c[i]);
    }
    CK(cuMemcpy3DBatchAsync(n, ops, 0, s));
    CK(cuStreamSynchronize(s));
    all_batches++;
}

/* fill: the host side is fill[dst_dev]; readback: back[src_dev]. */
static CUdeviceptr fill_src(const struct cp *c) { return (CUdeviceptr)(uintptr_t)(fill[c->dst_dev] + c->src_off); }
static CUdeviceptr back_dst(const struct cp *c) { return (CUdeviceptr)(uintptr_t)(back[c->src_dev] + c->dst_off); }
static CUdeviceptr dev_src(const struct cp *c) { return dbuf[c->src_dev] + c->src_off; }
static CUdeviceptr dev_dst(const struct cp *c) { return dbuf[c->dst_dev] + c->dst_off; }

static unsigned char pattern(int dev, size_t off) { return (unsigned char)(dev * 101 + off * 7 + off / 251 + 1); }

int main(void)
{
    int count = 0;
    CUcontext ctx[NDEV];
    CK(cuInit(0));
    CK(cuDeviceGetCount(&count));
    if (count < NDEV) {
        fprintf(stderr, "client_peer: %d device(s); run with FAKECUDA_DEVICE_COUNT=2\n", count);
        return 2;
    }
    for (int d = 0; d < NDEV; d++) {
        CUdevice dev;
        CK(cuDeviceGet(&dev, d));
        CK(cuDevicePrimaryCtxRetain(&ctx[d], dev));
        CK(cuCtxSetCurrent(ctx[d]));
        CK(cuMemAlloc(&dbuf[d], BUF));
        void *p;
        CK(cuMemAllocHost(&p, FILL));
        fill[d] = p;
        CK(cuMemAllocHost(&p, BACK));
        back[d] = p;
        for (size_t i = 0; i < FILL; i++)
            fill[d][i] = pattern(d, i);
        memset(back[d], 0, BACK);
    }
    CK(cuCtxSetCurrent(ctx[0]));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    /* 1. fill the sources of both devices from pinned host memory */
    const struct cp fills[] = {
        {HOST, 0, 0, 0, FILL, 1},
        {HOST, 1, 0, 0, FILL / 128, 128}, /* 2D: 128 rows of 128 bytes */
    };
    batch(s, fills, 2, fill_src, dev_dst);

    /* 2. the peer batch: both directions between GPU 0 and GPU 1, and one copy within GPU 0 */
    const struct cp peer[] = {
        {0, 1, 0, BACK + 0, 1000, 1},
        {0, 1, 1024, BACK + 4096, 2048, 1},
        {0, 1, 4096, BACK + 8192, 100, 3},
        {1, 0, 0, BACK + 0, 1500, 1},
        {1, 0, 2048, BACK + 4096, 4096, 1},
        {0, 0, 8192, BACK + 12288, 700, 1},
    };
    const size_t npeer = sizeof peer / sizeof peer[0];
    batch(s, peer, npeer, dev_src, dev_dst);

    /* 3. read the destinations of both devices back */
    const struct cp backs[] = {
        {0, HOST, BACK, 0, BACK, 1},
        {1, HOST, BACK, 0, BACK / 256, 256},
    };
    batch(s, backs, 2, dev_src, back_dst);

    /* every byte each peer op moved, and nothing else moved into the destinations */
    unsigned long long bad = 0;
    unsigned char *want[NDEV];
    for (int d = 0; d < NDEV; d++)
        want[d] = calloc(1, BACK);
    for (size_t i = 0; i < npeer; i++) {
        const struct cp *c = &peer[i];
        size_t n = c->width * c->height;
        for (size_t k = 0; k < n; k++)
            want[c->dst_dev][c->dst_off - BACK + k] = pattern(c->src_dev, c->src_off + k);
    }
    for (int d = 0; d < NDEV; d++) {
        for (size_t k = 0; k < BACK; k++)
            bad += back[d][k] != want[d][k];
        free(want[d]);
    }

    for (size_t i = 0; i < npeer; i++)
        printf("op %zu src_device %d dst_device %d bytes %zu\n", i, peer[i].src_dev, peer[i].dst_dev,
               peer[i].width * peer[i].height);
    for (int d = 0; d < ND; d++)
        printf("direction %s ops %llu bytes %llu\n", dname[d], dir_ops[d], dir_bytes[d]);
    for (int d = 0; d < NDEV; d++)
        printf("device %d ops_out %llu bytes_out %llu ops_in %llu bytes_in %llu peer_ops_out %llu peer_bytes_out %llu "
               "peer_ops_in %llu peer_bytes_in %llu\n",
               d, tot[d].ops_out, tot[d].bytes_out, tot[d].ops_in, tot[d].bytes_in, tot[d].peer_ops_out,
               tot[d].peer_bytes_out, tot[d].peer_ops_in, tot[d].peer_bytes_in);
    if (bad) {
        printf("peer: %llu bytes DATA MISMATCH\n", bad);
        return 1;
    }
    printf("peer: %llu batches, %llu ops, %llu bytes; all checked bytes arrived\n", all_batches, all_ops, all_bytes);
    return 0;
}
