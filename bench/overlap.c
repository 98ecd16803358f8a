/* SPDX-License-Identifier: MIT */
/*
 * bench/overlap: CPU time of the validator alone (cbt_validate, no driver,
 * no tracing) on batches of D2D ops, to show its n log n growth.
 *
 *   disjoint     every op copies its own 2 KiB block (256x4x2) to its own block
 *   interleaved  tiles of 4 ops writing interleaved 64-byte columns of one
 *                pitched 256-byte-wide tile: bounding intervals overlap, rows
 *                never do, so every tile needs the exact row-level test
 *   one-region   op i writes byte column i of one n-byte-pitched matrix: all
 *                n bounding intervals intersect (n^2/2 candidate pairs for a
 *                bounding-interval sweep; the same-pitch rectangle sweep
 *                finds none)
 *   tiles        a 2D matrix of ceil(sqrt(n)) x ceil(sqrt(n)) tiles of 16x16
 *                bytes (pitch padded by 64 bytes) scattered into by n ops,
 *                one tile each: each tile's bounding interval meets those of
 *                its whole tile row (n^1.5/2 candidate pairs by intervals)
 *   array-tiles  the same scatter into a 2D CUDA array of 4-byte elements:
 *                n disjoint 16x16 boxes on one CUarray
 *
 * Ops are listed in a shuffled order (the sort does real work), with device
 * infos (the bounds checks run too).  Each figure is the median of 7 samples;
 * a sample repeats the call until it has taken >= 2 ms of thread CPU time.
 *
 * usage: bench/overlap [max_ops]   (default 65536)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include <cubatchtrace/validate.h>

#define SRC_BASE 0x7e0000000000ull
#define DST_BASE 0x7f0000000000ull
#define SAMPLES 7

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t isqrt_up(size_t n)
{
    size_t t = (size_t)sqrt((double)n);
    while (t * t < n)
        t++;
    while (t > 1 && (t - 1) * (t - 1) >= n)
        t--;
    return t;
}

static void build(size_t n, int variant, CUDA_MEMCPY3D_BATCH_OP *ops, struct cbt_operand_info *si,
                  struct cbt_operand_info *di)
{
    size_t *slot = malloc(n * sizeof *slot);
    for (size_t i = 0; i < n; i++)
        slot[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = next() % i, t = slot[i - 1];
        slot[i - 1] = slot[j];
        slot[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
        size_t s = slot[i];
        CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
        memset(op, 0, sizeof *op);
        op->src.type = op->dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        op->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        op->src.op.ptr.ptr = SRC_BASE + s * 4096;
        memset(&si[i], 0, sizeof si[i]);
        memset(&di[i], 0, sizeof di[i]);
        if (variant == 3 || variant == 4) {
            size_t t = isqrt_up(n), tx = s % t, ty = s / t;
            op->extent.width = 16;
            op->extent.height = 16;
            op->extent.depth = 1;
            if (variant == 3) {
                uint64_t pitch = t * 16 + 64;
                op->dst.op.ptr.ptr = DST_BASE + ty * 16 * pitch + tx * 16;
                op->dst.op.ptr.rowLength = pitch;
            } else {
                op->dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
                op->dst.op.array.array = (CUarray)(uintptr_t)0xa000;
                op->dst.op.array.offset.x = tx * 16;
                op->dst.op.array.offset.y = ty * 16;
                di[i].kind = CBT_MEM_ARRAY;
                di[i].array_width = di[i].array_height = t * 16;
                di[i].elem_size = 4;
            }
        } else if (variant == 2) {
            op->dst.op.ptr.ptr = DST_BASE + s;
            op->dst.op.ptr.rowLength = n;
            op->extent.width = 1;
            op->extent.height = 16;
            op->extent.depth = 1;
        } else if (variant == 1) {
            /* tile s/4: 16 rows of 256 bytes; op s%4 writes 64 bytes of each row */
            op->dst.op.ptr.ptr = DST_BASE + (s / 4) * 4096 + (s % 4) * 64;
            op->dst.op.ptr.rowLength = 256;
            op->extent.width = 64;
            op->extent.height = 16;
            op->extent.depth = 1;
        } else {
            op->dst.op.ptr.ptr = DST_BASE + s * 4096;
            op->extent.width = 256;
            op->extent.height = 4;
            op->extent.depth = 2;
        }
        si[i].kind = CBT_MEM_DEVICE;
        si[i].alloc_base = SRC_BASE;
        si[i].alloc_size = (uint64_t)n * 4096 + 4096;
        if (variant != 4) {
            di[i].kind = CBT_MEM_DEVICE;
            di[i].alloc_base = DST_BASE;
            di[i].alloc_size = (uint64_t)n * 4096 + 4096;
        }
    }
    free(slot);
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : 65536;
    CUDA_MEMCPY3D_BATCH_OP *ops = malloc(max * sizeof *ops);
    struct cbt_operand_info *si = malloc(max * sizeof *si), *di = malloc(max * sizeof *di);
    struct cbt_finding out[64];
    struct cbt_validator *v = cbt_validator_new();
    if (!ops || !si || !di || !v) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    printf("cbt_validate: CPU time of the validator alone (thread CPU time, median of %d samples)\n\n", SAMPLES);
    printf("| variant     |    ops |     ns total | ns per op | ns/(n log2 n) | findings |\n");
    printf("| ----------- | ------ | ------------ | --------- | ------------- | -------- |\n");
    static const char *names[5] = {"disjoint", "interleaved", "one-region", "tiles", "array-tiles"};
    for (int variant = 0; variant < 5; variant++) {
        for (size_t n = 1; n <= max; n *= 4) {
            build(n, variant, ops, si, di);
            struct cbt_batch_view b;
            memset(&b, 0, sizeof b);
            b.num_ops = n;
            b.ops = ops;
            b.stream = (CUstream)(uintptr_t)0x5000;
            b.src_info = si;
            b.dst_info = di;
            b.device_count = 1;
            size_t found = cbt_validate(v, &b, out, 64); /* warm-up: grows the scratch memory */
            double sample[SAMPLES];
            for (int s = 0; s < SAMPLES; s++) {
                long reps = 0;
                double t0 = now_ns(), t1;
                do {
                    cbt_validate(v, &b, out, 64);
                    reps++;
                    t1 = now_ns();
                } while (t1 - t0 < 2e6);
                sample[s] = (t1 - t0) / (double)reps;
            }
            qsort(sample, SAMPLES, sizeof sample[0], cmp_double);
            double med = sample[SAMPLES / 2];
            char nlogn[32] = "-";
            if (n > 1)
                snprintf(nlogn, sizeof nlogn, "%.2f", med / ((double)n * log2((double)n)));
            printf("| %-11s | %6zu | %12.0f | %9.1f | %13s | %8zu |\n", names[variant], n,
                   med, med / (double)n, nlogn, found);
        }
    }
    cbt_validator_free(v);
    free(ops);
    free(si);
    free(di);
    return 0;
}
