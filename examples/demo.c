/* SPDX-License-Identifier: MIT */
/*
 * A small program that makes realistic batched 3D copies with
 * cuMemcpy3DBatchAsync, for `scripts/demo` and `cubatchtrace run`:
 *
 *   1. host -> device from pinned memory (stream order) and from pageable
 *      memory (DURING_API_CALL, the order meant for it);
 *   2. pitched device -> device: tiles of a 2D matrix with a row pitch;
 *   3. device -> CUDA array and CUDA array -> device (float4, 64x64x4);
 *   4. device -> host read-back of everything, checked byte for byte;
 *   5. one batch whose two ops write the same bytes (a hazard the driver
 *      accepts silently; cubatchtrace reports it).
 *
 * Exits 0 when every checked byte arrived.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        CUresult r_ = (call);                                                          \
        if (r_ != CUDA_SUCCESS) {                                                      \
            const char *n_ = NULL;                                                     \
            cuGetErrorName(r_, &n_);                                                   \
            fprintf(stderr, "demo: %s failed: %s (%d)\n", #call, n_ ? n_ : "?", (int)r_); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static size_t batches, ops_total, bytes_total;

static CUmemcpy3DOperand ptr_operand(CUdeviceptr p, size_t row_length, size_t layer_height)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p;
    o.op.ptr.rowLength = row_length;
    o.op.ptr.layerHeight = layer_height;
    return o;
}

static CUmemcpy3DOperand array_operand(CUarray a, size_t x, size_t y, size_t z)
{
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    o.op.array.array = a;
    o.op.array.offset.x = x;
    o.op.array.offset.y = y;
    o.op.array.offset.z = z;
    return o;
}

static CUDA_MEMCPY3D_BATCH_OP make_op(CUmemcpy3DOperand src, CUmemcpy3DOperand dst, size_t w, size_t h, size_t d,
                                      CUmemcpySrcAccessOrder order)
{
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src = src;
    op.dst = dst;
    op.extent.width = w;
    op.extent.height = h;
    op.extent.depth = d;
    op.srcAccessOrder = order;
    return op;
}

static void batch(CUDA_MEMCPY3D_BATCH_OP *ops, size_t n, size_t bytes, CUstream s)
{
    CHECK(cuMemcpy3DBatchAsync(n, ops, 0, s));
    CHECK(cuStreamSynchronize(s));
    batches++;
    ops_total += n;
    bytes_total += bytes;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    enum { CHUNK = 64 * 1024, NCHUNK = 4 };
    const size_t total = (size_t)CHUNK * NCHUNK * 2;
    unsigned char *pageable = malloc(total / 2), *pinned, *back = malloc(total);
    CUdeviceptr dbuf, dtiles, darr_back;
    CHECK(cuMemAllocHost((void **)&pinned, total / 2));
    CHECK(cuMemAlloc(&dbuf, total));
    for (size_t i = 0; i < total / 2; i++) {
        pageable[i] = (unsigned char)(i * 7 + 1);
        pinned[i] = (unsigned char)(i * 13 + 5);
    }

    /* 1. host -> device: pinned in stream order, pageable during the call */
    CUDA_MEMCPY3D_BATCH_OP h2d[2 * NCHUNK];
    for (int i = 0; i < NCHUNK; i++) {
        h2d[i] = make_op(ptr_operand((CUdeviceptr)(pinned + (size_t)i * CHUNK), 0, 0),
                         ptr_operand(dbuf + (size_t)i * CHUNK, 0, 0), CHUNK, 1, 1, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
        h2d[NCHUNK + i] = make_op(ptr_operand((CUdeviceptr)(pageable + (size_t)i * CHUNK), 0, 0),
                                  ptr_operand(dbuf + total / 2 + (size_t)i * CHUNK, 0, 0), CHUNK, 1, 1,
                                  CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL);
    }
    batch(h2d, 2 * NCHUNK, total, s);

    /* 2. pitched device -> device: 16 tiles of 32x32 bytes out of a 512-byte-pitch matrix */
    enum { PITCH = 512, ROWS = 128, TILE = 32 };
    CHECK(cuMemAlloc(&dtiles, 16 * TILE * TILE));
    CUDA_MEMCPY3D_BATCH_OP d2d[16];
    for (int t = 0; t < 16; t++) {
        size_t col = (size_t)(t % 4) * TILE, row = (size_t)(t / 4) * TILE;
        d2d[t] = make_op(ptr_operand(dbuf + row * PITCH + col, PITCH, 0),
                         ptr_operand(dtiles + (size_t)t * TILE * TILE, 0, 0), TILE, TILE, 1,
                         CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    }
    batch(d2d, 16, 16 * TILE * TILE, s);

    /* 3. device -> float4 CUDA array 64x64x4, and back into device memory */
    CUDA_ARRAY3D_DESCRIPTOR desc;
    memset(&desc, 0, sizeof desc);
    desc.Width = 64;
    desc.Height = 64;
    desc.Depth = 4;
    desc.Format = CU_AD_FORMAT_FLOAT;
    desc.NumChannels = 4;
    CUarray arr;
    CHECK(cuArray3DCreate(&arr, &desc));
    const size_t arr_bytes = 64 * 64 * 4 * 16;
    CHECK(cuMemAlloc(&darr_back, arr_bytes));
    CUDA_MEMCPY3D_BATCH_OP to_arr = make_op(ptr_operand(dbuf, 0, 0), array_operand(arr, 0, 0, 0), 64, 64, 4,
                                            CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    batch(&to_arr, 1, arr_bytes, s);
    CUDA_MEMCPY3D_BATCH_OP from_arr = make_op(array_operand(arr, 0, 0, 0), ptr_operand(darr_back, 0, 0), 64, 64, 4,
                                              CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    batch(&from_arr, 1, arr_bytes, s);

    /* 4. read everything back and check it */
    unsigned char *tiles_back = malloc(16 * TILE * TILE), *arr_check = malloc(arr_bytes);
    CUDA_MEMCPY3D_BATCH_OP d2h[3] = {
        make_op(ptr_operand(dbuf, 0, 0), ptr_operand((CUdeviceptr)back, 0, 0), total, 1, 1,
                CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
        make_op(ptr_operand(dtiles, 0, 0), ptr_operand((CUdeviceptr)tiles_back, 0, 0), 16 * TILE * TILE, 1, 1,
                CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
        make_op(ptr_operand(darr_back, 0, 0), ptr_operand((CUdeviceptr)arr_check, 0, 0), arr_bytes, 1, 1,
                CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
    };
    batch(d2h, 3, total + 16 * TILE * TILE + arr_bytes, s);
    size_t bad = 0;
    for (size_t i = 0; i < total / 2; i++)
        bad += back[i] != pinned[i] || back[total / 2 + i] != pageable[i];
    for (int t = 0; t < 16; t++)
        for (int y = 0; y < TILE; y++)
            for (int x = 0; x < TILE; x++) {
                size_t src = ((size_t)(t / 4) * TILE + y) * PITCH + (size_t)(t % 4) * TILE + x;
                bad += tiles_back[(size_t)t * TILE * TILE + (size_t)y * TILE + x] != back[src];
            }
    bad += memcmp(arr_check, back, arr_bytes) != 0;

    /* 5. a hazard: two ops write the same 4 KiB (the driver accepts; the result is undefined) */
    CUDA_MEMCPY3D_BATCH_OP clash[2] = {
        make_op(ptr_operand(dbuf, 0, 0), ptr_operand(dtiles, 0, 0), 4096, 1, 1, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
        make_op(ptr_operand(dbuf + 8192, 0, 0), ptr_operand(dtiles, 0, 0), 4096, 1, 1,
                CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
    };
    batch(clash, 2, 8192, s);

    printf("demo: %zu batches, %zu ops, %zu bytes; %s\n", batches, ops_total, bytes_total,
           bad ? "DATA MISMATCH" : "all checked bytes arrived");
    CHECK(cuArrayDestroy(arr));
    CHECK(cuMemFree(dbuf));
    CHECK(cuMemFree(dtiles));
    CHECK(cuMemFree(darr_back));
    CHECK(cuMemFreeHost(pinned));
    CHECK(cuStreamDestroy(s));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    free(pageable);
    free(back);
    free(tiles_back);
    free(arr_check);
    return bad ? 1 : 0;
}
