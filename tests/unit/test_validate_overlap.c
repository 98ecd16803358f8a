/* SPDX-License-Identifier: MIT */
/* The overlap rules: exact row-level footprints, arrays, big batches, and a brute-force cross-check. */
#include "vtest.h"
#include "ref_overlap.h"

#define P0 0x7f0000000000ull
#define S0 0x7e0000000000ull

static struct cbt_validator *V;
static struct vt_res R;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void *ctx)
{
    uint64_t *s = ctx ? (uint64_t *)ctx : &rng_state;
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

/* Run n ops with no infos; the only findings expected are hazards. */
static void run(size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops)
{
    struct cbt_batch_view b = vt_batch(n, ops, NULL, NULL);
    vt_run(V, &b, &R);
}

static void expect_clean(const char *what)
{
    if (!tap_ok(R.n == 0, "%s", what))
        vt_dump(&R);
}

static void expect_only(const char *what, unsigned rule, uint64_t op, uint64_t other, uint64_t value)
{
    int good = R.n == 1 && R.f[0].rule == rule && R.f[0].op == op && R.f[0].other_op == other &&
               R.f[0].severity == CBT_SEV_HAZARD && R.f[0].value == value;
    if (!tap_ok(good, "%s", what)) {
        tap_diag("want %s op %" PRIu64 " other %" PRIu64 " value 0x%" PRIx64, cbt_rules[rule].name, op, other, value);
        vt_dump(&R);
    }
}

/* A D2D op whose dst is a pitched 2D/3D block; src somewhere private. */
static CUDA_MEMCPY3D_BATCH_OP pitched_dst(size_t i, uint64_t dst, size_t w, size_t h, size_t d, size_t rl, size_t lh)
{
    return vt_op(vt_ptr(S0 + i * VT_MIB), vt_pitched(dst, rl, lh), w, h, d);
}

static void pointer_cases(void)
{
    CUDA_MEMCPY3D_BATCH_OP ops[4];

    /* 2D: 64-byte rows at pitch 128; the second op fills the gaps. */
    ops[0] = pitched_dst(0, P0, 64, 16, 1, 128, 0);
    ops[1] = pitched_dst(1, P0 + 64, 64, 16, 1, 128, 0);
    run(2, ops);
    expect_clean("interleaved rows (pitch 128, width 64, offsets 0 and 64) never touch: clean");
    ops[1] = pitched_dst(1, P0 + 63, 64, 16, 1, 128, 0);
    run(2, ops);
    expect_only("shifted one byte left they share byte 63 of every row: dst_dst op 0 / op 1 at P0+63",
                CBT_RULE_overlap_dst_dst, 0, 1, P0 + 63);
    ops[1] = pitched_dst(1, P0 + 64 + 16 * 128, 64, 16, 1, 128, 0);
    run(2, ops);
    expect_clean("second block starting after the first block's last row: clean");

    /* Different pitches. */
    ops[1] = pitched_dst(1, P0 + 64, 64, 16, 1, 256, 0);
    run(2, ops);
    expect_clean("pitch 128 vs pitch 256 rows that always fall in each other's gaps: clean");
    ops[1] = pitched_dst(1, P0 + 64, 32, 16, 1, 192, 0);
    run(2, ops);
    expect_only("pitch 128 vs pitch 192: row 1 of the second ([256,288)) meets row 2 of the first",
                CBT_RULE_overlap_dst_dst, 0, 1, P0 + 256);
    ops[0] = pitched_dst(0, P0, 3, 1000, 1, 7, 0);
    ops[1] = pitched_dst(1, P0 + 3, 4, 1000, 1, 11, 0);
    run(2, ops);
    {
        /* rows of A: [7i, 7i+3); of B: [3+11j, 7+11j): brute force the first shared byte */
        uint64_t first = UINT64_MAX;
        for (uint64_t i = 0; i < 1000 && first == UINT64_MAX; i++)
            for (uint64_t j = 0; j < 1000; j++) {
                uint64_t a0 = 7 * i, a1 = a0 + 3, b0 = 3 + 11 * j, b1 = b0 + 4;
                if (a0 < b1 && b0 < a1) {
                    first = a0 > b0 ? a0 : b0;
                    break;
                }
            }
        expect_only("pitch 7 vs pitch 11, 1000 rows each: the first shared byte found", CBT_RULE_overlap_dst_dst,
                    0, 1, P0 + first);
    }
    ops[0] = pitched_dst(0, P0, 2, 100000, 1, 6, 0); /* [6i, 6i+2) */
    ops[1] = pitched_dst(1, P0 + 2, 1, 100000, 1, 3, 0); /* [2+3j, 3+3j): 2, 5, 8, 11 ... never 0,1 mod 6 */
    run(2, ops);
    expect_clean("100,000 rows at pitch 6 vs pitch 3 that never meet: clean (no row enumeration)");

    /* 3D: layers of 4 contiguous 64-byte rows (256 bytes) at layer pitch 512. */
    ops[0] = pitched_dst(0, P0, 64, 4, 4, 64, 8);
    ops[1] = pitched_dst(1, P0 + 256, 64, 4, 4, 64, 8);
    run(2, ops);
    expect_clean("3D layers interleaved (layer pitch 512, layer 256 bytes, offsets 0 and 256): clean");
    ops[1] = pitched_dst(1, P0 + 255, 64, 4, 4, 64, 8);
    run(2, ops);
    expect_only("3D layers shifted one byte: they share the last byte of layer 0", CBT_RULE_overlap_dst_dst, 0, 1,
                P0 + 255);
    ops[0] = pitched_dst(0, P0, 16, 4, 3, 64, 6); /* rows [64y + 384z, +16) */
    ops[1] = pitched_dst(1, P0 + 16, 16, 4, 3, 64, 6);
    ops[2] = pitched_dst(2, P0 + 256, 64, 2, 3, 64, 6); /* rows 4,5 of each layer: the gap between layers */
    run(3, ops);
    expect_clean("3D: two column-interleaved ops and one filling the inter-layer gaps: clean");
    ops[2] = pitched_dst(2, P0 + 256 + 384 * 2 - 64, 64, 2, 3, 64, 6);
    run(3, ops);
    {
        /* op 2's layer 0 row 0 is row 3 of layer 2 of op 0 and op 1 */
        int good = R.n == 2 && R.f[0].rule == CBT_RULE_overlap_dst_dst && R.f[0].op == 0 && R.f[0].other_op == 2 &&
                   R.f[1].rule == CBT_RULE_overlap_dst_dst && R.f[1].op == 1 && R.f[1].other_op == 2;
        if (!tap_ok(good, "3D: a block moved into layer 2's last row hits ops 0 and 1 (found at each lower op)"))
            vt_dump(&R);
    }

    /* Self overlap. */
    ops[0] = vt_op(vt_ptr(P0), vt_ptr(P0 + 2047), 256, 4, 2);
    run(1, ops);
    expect_only("self: dst starts on src's last byte", CBT_RULE_overlap_self, 0, 0, P0 + 2047);
    ops[0] = vt_op(vt_pitched(P0, 512, 0), vt_pitched(P0 + 256, 512, 0), 256, 4, 1);
    run(1, ops);
    expect_clean("self: src and dst interleaved by rows (pitch 512) do not overlap");

    /* dst/dst and src/dst with op and other_op. */
    ops[0] = vt_op(vt_ptr(S0), vt_ptr(P0), 256, 1, 1);
    ops[1] = vt_op(vt_ptr(S0 + 4096), vt_ptr(P0 + 4096), 256, 1, 1);
    ops[2] = vt_op(vt_ptr(S0 + 8192), vt_ptr(P0 + 128), 256, 1, 1);
    run(3, ops);
    expect_only("dst_dst: ops 0 and 2 write [P0+128, P0+256): op 0, other 2", CBT_RULE_overlap_dst_dst, 0, 2,
                P0 + 128);
    ops[2] = vt_op(vt_ptr(S0 + 8192), vt_ptr(S0 + 100), 256, 1, 1);
    run(3, ops);
    expect_only("src_dst: op 2 writes what op 0 reads: op 2 (writer), other 0 (reader)", CBT_RULE_overlap_src_dst,
                2, 0, S0 + 100);
    ops[0] = vt_op(vt_ptr(S0), vt_ptr(P0), 256, 1, 1);
    ops[1] = vt_op(vt_ptr(S0 + 4096), vt_ptr(P0 + 200), 256, 1, 1);
    ops[2] = vt_op(vt_ptr(S0 + 8192), vt_ptr(P0 + 100), 256, 1, 1);
    ops[3] = vt_op(vt_ptr(S0 + 12288), vt_ptr(P0 + 10), 256, 1, 1);
    run(4, ops);
    {
        int good = R.n == 3 && R.f[0].op == 0 && R.f[0].other_op == 1 && R.f[1].op == 1 && R.f[1].other_op == 2 &&
                   R.f[2].op == 2 && R.f[2].other_op == 3;
        if (!tap_ok(good, "dst_dst among 4 mutually overlapping ops: one finding per op, lowest other op"))
            vt_dump(&R);
    }
}

static void array_cases(void)
{
    CUDA_MEMCPY3D_BATCH_OP ops[3];
    struct cbt_operand_info si[3], di[3];
    const uintptr_t A = 0xa000, Bh = 0xb000;
    for (int i = 0; i < 3; i++) {
        si[i] = vt_mem(CBT_MEM_DEVICE, S0, 64 * VT_MIB);
        di[i] = vt_array_info(64, 64, 8, 4);
    }
    struct cbt_batch_view b = vt_batch(2, ops, si, di);

    ops[0] = vt_op(vt_ptr(S0), vt_arr(A, 0, 0, 0), 8, 8, 2);
    ops[1] = vt_op(vt_ptr(S0 + VT_MIB), vt_arr(A, 8, 0, 0), 8, 8, 2);
    vt_run(V, &b, &R);
    expect_clean("arrays: boxes side by side in x on the same CUarray: clean");
    ops[1] = vt_op(vt_ptr(S0 + VT_MIB), vt_arr(A, 7, 7, 1), 8, 8, 2);
    vt_run(V, &b, &R);
    expect_only("arrays: boxes sharing element (7,7,1) on the same CUarray: dst_dst (value = the CUarray)",
                CBT_RULE_overlap_dst_dst, 0, 1, A);
    ops[1] = vt_op(vt_ptr(S0 + VT_MIB), vt_arr(A, 0, 0, 2), 8, 8, 2);
    vt_run(V, &b, &R);
    expect_clean("arrays: same x/y, next z slab: clean");
    ops[1] = vt_op(vt_ptr(S0 + VT_MIB), vt_arr(Bh, 0, 0, 0), 8, 8, 2);
    vt_run(V, &b, &R);
    expect_clean("arrays: the same box on a different CUarray: clean");

    /* A2A self overlap and src_dst through an array. */
    ops[0] = vt_op(vt_arr(A, 0, 0, 0), vt_arr(A, 4, 4, 0), 8, 8, 1);
    si[0] = di[0];
    b.num_ops = 1;
    vt_run(V, &b, &R);
    expect_only("arrays: A2A on one CUarray with overlapping boxes is self overlap", CBT_RULE_overlap_self, 0, 0, A);
    ops[0] = vt_op(vt_ptr(S0), vt_arr(A, 0, 0, 0), 8, 8, 1);
    si[0] = vt_mem(CBT_MEM_DEVICE, S0, 64 * VT_MIB);
    ops[1] = vt_op(vt_arr(A, 4, 4, 0), vt_ptr(P0), 8, 8, 1);
    si[1] = di[0];
    di[1] = vt_mem(CBT_MEM_DEVICE, P0, 64 * VT_MIB);
    b.num_ops = 2;
    vt_run(V, &b, &R);
    expect_only("arrays: op 1 reads an array box op 0 writes: src_dst op 0, other 1", CBT_RULE_overlap_src_dst, 0, 1,
                A);

    /* Arrays never overlap pointers, even when the handle's value is an address in use. */
    ops[0] = vt_op(vt_ptr(S0), vt_arr((uintptr_t)P0, 0, 0, 0), 8, 8, 1);
    di[0] = vt_array_info(64, 64, 0, 4);
    ops[1] = vt_op(vt_ptr(S0 + VT_MIB), vt_ptr(P0), 4096, 1, 1);
    si[1] = vt_mem(CBT_MEM_DEVICE, S0, 64 * VT_MIB);
    di[1] = vt_mem(CBT_MEM_DEVICE, P0, 64 * VT_MIB);
    vt_run(V, &b, &R);
    expect_clean("arrays never overlap pointers (CUarray handle equal to a written address)");

    /* Unknown element size: the pointer side of a ptr<->array op is left out. */
    ops[0] = vt_op(vt_ptr(S0), vt_arr(A, 0, 0, 0), 8, 8, 1);
    di[0] = vt_mem(CBT_MEM_UNKNOWN, 0, 0);
    ops[1] = vt_op(vt_ptr(S0 + VT_MIB), vt_ptr(S0), 4096, 1, 1);
    si[1] = vt_mem(CBT_MEM_DEVICE, S0, 64 * VT_MIB);
    di[1] = si[1];
    vt_run(V, &b, &R);
    expect_clean("H2A with the array unknown: its pointer footprint is skipped (no guess at the element size)");
    ops[1] = vt_op(vt_ptr(S0 + VT_MIB), vt_arr(A, 0, 0, 0), 8, 8, 1);
    di[1] = di[0];
    vt_run(V, &b, &R);
    expect_only("...but its array box still takes part: two unknown-size writes to one box", CBT_RULE_overlap_dst_dst,
                0, 1, A);
}

#define BIG 65536

static void big_cases(void)
{
    static CUDA_MEMCPY3D_BATCH_OP ops[BIG], saved[BIG];
    /* Tiles of 4 ops interleaving 16-byte columns of a 64-byte pitch: bounding intervals overlap, rows never. */
    for (size_t i = 0; i < BIG; i++)
        ops[i] = vt_op(vt_ptr(S0 + i * 1024), vt_pitched(P0 + (i / 4) * 1024 + (i % 4) * 16, 64, 0), 16, 8, 1);
    memcpy(saved, ops, sizeof ops);
    run(BIG, ops);
    expect_clean("65,536 ops, column-interleaved in tiles of 4, sources disjoint: 0 findings");

    int good = 1;
    for (int t = 0; t < 20 && good; t++) {
        size_t a = rnd(NULL) % BIG, b = rnd(NULL) % BIG;
        if (a == b)
            b = (a + 1) % BIG;
        size_t lo = a < b ? a : b, hi = a < b ? b : a;
        memcpy(ops, saved, sizeof ops);
        ops[b].dst = ops[a].dst;
        run(BIG, ops);
        good = R.n == 1 && R.f[0].rule == CBT_RULE_overlap_dst_dst && R.f[0].op == lo && R.f[0].other_op == hi;
        if (!good) {
            tap_diag("planted dst/dst %zu,%zu", a, b);
            vt_dump(&R);
            break;
        }
        memcpy(ops, saved, sizeof ops);
        ops[b].src = ops[a].dst;
        run(BIG, ops);
        good = R.n == 1 && R.f[0].rule == CBT_RULE_overlap_src_dst && R.f[0].op == a && R.f[0].other_op == b;
        if (!good) {
            tap_diag("planted src/dst %zu,%zu", a, b);
            vt_dump(&R);
        }
    }
    tap_ok(good, "65,536 ops: a dst/dst pair and a src/dst pair planted at 20 random positions are each the one "
                 "finding");
}

/*
 * After op m's dst was moved onto the dsts of ops who[0..n) (none of them m,
 * meeting at at[k]): the findings are exactly dst_dst at each who[k] < m
 * (other m), plus one at m naming the lowest who[k] > m.
 */
static int expect_moved(size_t m, const size_t *who, const uint64_t *at, size_t n, unsigned rule)
{
    size_t want = 0, low = SIZE_MAX;
    uint64_t low_at = 0;
    for (size_t k = 0; k < n; k++) {
        if (who[k] < m) {
            int seen = 0;
            for (size_t f = 0; f < R.n; f++)
                seen |= R.f[f].rule == rule && R.f[f].op == who[k] && R.f[f].other_op == m && R.f[f].value == at[k];
            if (!seen)
                return 0;
            want++;
        } else if (who[k] < low) {
            low = who[k];
            low_at = at[k];
        }
    }
    if (low != SIZE_MAX) {
        int seen = 0;
        for (size_t f = 0; f < R.n; f++)
            seen |= R.f[f].rule == rule && R.f[f].op == m && R.f[f].other_op == low && R.f[f].value == low_at;
        if (!seen)
            return 0;
        want++;
    }
    return R.n == want;
}

/*
 * The common scatter: n ops each writing one 16x16-byte tile of one pitched
 * matrix.  Every tile's bounding interval meets its whole tile row's, so a
 * bounding-interval sweep alone would make n^1.5/2 exact tests; the
 * same-pitch rectangle sweep makes none.
 */
#define TILES 65536
#define TILE_T 256 /* tiles per matrix row: TILE_T * TILE_T == TILES */
#define TILE_PITCH (TILE_T * 16 + 64)

static uint64_t tile_addr(size_t s)
{
    return P0 + (uint64_t)(s / TILE_T) * 16 * TILE_PITCH + (s % TILE_T) * 16;
}

static void tile_cases(void)
{
    static CUDA_MEMCPY3D_BATCH_OP ops[TILES], saved[TILES];
    /* op i writes tile slot[i] (a shuffled order), reading its own 256 bytes */
    static size_t slot[TILES];
    for (size_t i = 0; i < TILES; i++)
        slot[i] = i;
    for (size_t i = TILES; i > 1; i--) {
        size_t j = rnd(NULL) % i, t = slot[i - 1];
        slot[i - 1] = slot[j];
        slot[j] = t;
    }
    for (size_t i = 0; i < TILES; i++)
        ops[i] = vt_op(vt_ptr(S0 + i * 256), vt_pitched(tile_addr(slot[i]), TILE_PITCH, 0), 16, 16, 1);
    memcpy(saved, ops, sizeof ops);
    run(TILES, ops);
    expect_clean("65,536 ops scattering 16x16 tiles into one pitched matrix: 0 findings");

    int good = 1;
    for (int t = 0; t < 20 && good; t++) {
        size_t a = rnd(NULL) % TILES, b = rnd(NULL) % TILES;
        if (a == b)
            b = (a + 1) % TILES;
        size_t lo = a < b ? a : b, hi = a < b ? b : a;
        memcpy(ops, saved, sizeof ops);
        ops[b].dst = ops[a].dst;
        run(TILES, ops);
        good = R.n == 1 && R.f[0].rule == CBT_RULE_overlap_dst_dst && R.f[0].op == lo && R.f[0].other_op == hi &&
               R.f[0].value == tile_addr(slot[a]);
        if (!good) {
            tap_diag("planted tile dst/dst %zu,%zu", a, b);
            vt_dump(&R);
            break;
        }
        memcpy(ops, saved, sizeof ops);
        ops[b].src = ops[a].dst;
        run(TILES, ops);
        good = R.n == 1 && R.f[0].rule == CBT_RULE_overlap_src_dst && R.f[0].op == a && R.f[0].other_op == b &&
               R.f[0].value == tile_addr(slot[a]);
        if (!good) {
            tap_diag("planted tile src/dst %zu,%zu", a, b);
            vt_dump(&R);
        }
    }
    tap_ok(good, "65,536 tile ops: a tile written twice, or read by another op, at 20 random positions is the "
                 "one finding (lowest other op, the tile's first byte)");

    /* One op's tile moved by (+8 rows, +8 bytes): it meets the tiles right,
     * below and diagonal of its old place. */
    memcpy(ops, saved, sizeof ops);
    size_t m = 0;
    while (slot[m] % TILE_T == TILE_T - 1 || slot[m] / TILE_T == TILE_T - 1)
        m++;
    ops[m].dst.op.ptr.ptr = tile_addr(slot[m]) + 8 * TILE_PITCH + 8;
    const size_t nb[3] = {slot[m] + 1, slot[m] + TILE_T, slot[m] + TILE_T + 1};
    const uint64_t at[3] = {tile_addr(nb[0]) + 8 * TILE_PITCH, tile_addr(nb[1]) + 8, tile_addr(nb[2])};
    size_t who[3];
    for (size_t i = 0; i < TILES; i++)
        for (int k = 0; k < 3; k++)
            if (slot[i] == nb[k])
                who[k] = i;
    run(TILES, ops);
    if (!tap_ok(expect_moved(m, who, at, 3, CBT_RULE_overlap_dst_dst),
                "a tile moved by (+8 rows, +8 bytes) meets its 3 old neighbours, each at their shared corner"))
        vt_dump(&R);
}

/* The same scatter into a 2D CUDA array: n disjoint boxes on one CUarray. */
static void array_tile_cases(void)
{
    enum { N = 16384, T = 128 };
    static CUDA_MEMCPY3D_BATCH_OP ops[N];
    static struct cbt_operand_info si[N], di[N];
    const uintptr_t A = 0xa000;
    for (size_t i = 0; i < N; i++) {
        size_t s = (i * 7919) % N; /* 7919 is prime to N: a permutation */
        ops[i] = vt_op(vt_ptr(S0 + i * 1024), vt_arr(A, (s % T) * 16, (s / T) * 16, 0), 16, 16, 1);
        si[i] = vt_mem(CBT_MEM_DEVICE, S0, 64 * VT_MIB);
        di[i] = vt_array_info(T * 16, T * 16, 0, 4);
    }
    struct cbt_batch_view b = vt_batch(N, ops, si, di);
    vt_run(V, &b, &R);
    expect_clean("16,384 disjoint 16x16 boxes on one 2D CUarray: 0 findings");
    {
        /* op 9000's box moved onto the bottom-right corner of op 4000's: it
         * meets op 4000's box and the 3 right of / below / diagonal to it */
        size_t s4 = (4000 * 7919) % N, who[4];
        const uint64_t at[4] = {A, A, A, A};
        const size_t nb[4] = {s4, s4 + 1, s4 + T, s4 + T + 1};
        int inner = s4 % T != T - 1 && s4 / T != T - 1;
        for (size_t i = 0; i < N; i++)
            for (int k = 0; k < 4; k++)
                if ((i * 7919) % N == nb[k])
                    who[k] = i;
        ops[9000].dst.op.array.offset.x = ops[4000].dst.op.array.offset.x + 15;
        ops[9000].dst.op.array.offset.y = ops[4000].dst.op.array.offset.y + 15;
        vt_run(V, &b, &R);
        if (!tap_ok(inner && expect_moved(9000, who, at, 4, CBT_RULE_overlap_dst_dst),
                    "a box moved onto the corner of 4 others on the CUarray: dst_dst with each, lowest op first"))
            vt_dump(&R);
    }
    /* Layers of a 3D array, one op per z slice of the full x/y plane. */
    for (size_t i = 0; i < 4096; i++) {
        ops[i] = vt_op(vt_ptr(S0 + i * 1024), vt_arr(A, 0, 0, (i * 2053) % 4096), 64, 64, 1);
        di[i] = vt_array_info(64, 64, 4096, 4);
    }
    b.num_ops = 4096;
    vt_run(V, &b, &R);
    expect_clean("4,096 ops each writing one full z slice of a 3D CUarray: 0 findings");
    ops[100].dst.op.array.offset.z = ops[50].dst.op.array.offset.z;
    vt_run(V, &b, &R);
    expect_only("...and two ops writing the same slice: the one finding", CBT_RULE_overlap_dst_dst, 50, 100, A);
}

/* 3D footprints whose layers follow each other (layerHeight == height) are 2D tiles of height*depth rows. */
static void contiguous_3d_cases(void)
{
    CUDA_MEMCPY3D_BATCH_OP ops[3];
    ops[0] = pitched_dst(0, P0, 8, 4, 3, 64, 4);            /* rows 0..11, bytes [0, 8) */
    ops[1] = pitched_dst(1, P0 + 10 * 64 + 8, 8, 4, 1, 64, 0); /* rows 10..13, bytes [8, 16) */
    run(2, ops);
    expect_clean("3D block of contiguous layers beside a 2D tile of the same pitch: clean");
    ops[1] = pitched_dst(1, P0 + 10 * 64 + 4, 8, 4, 1, 64, 0); /* rows 10..13, bytes [4, 12) */
    run(2, ops);
    expect_only("...moved 4 bytes left they share row 10, bytes [4, 8)", CBT_RULE_overlap_dst_dst, 0, 1,
                P0 + 10 * 64 + 4);
    ops[2] = vt_op(vt_pitched(P0 + 11 * 64 + 2, 64, 0), vt_ptr(S0 + 4 * VT_MIB), 4, 2, 1);
    run(3, ops);
    {
        int good = R.n == 3 && R.f[0].rule == CBT_RULE_overlap_dst_dst && R.f[1].rule == CBT_RULE_overlap_src_dst &&
                   R.f[1].op == 0 && R.f[1].other_op == 2 && R.f[1].value == P0 + 11 * 64 + 2 &&
                   R.f[2].rule == CBT_RULE_overlap_src_dst && R.f[2].op == 1 && R.f[2].other_op == 2 &&
                   R.f[2].value == P0 + 11 * 64 + 4;
        if (!tap_ok(good, "a reader of rows 11..12, bytes [2, 6), is the src_dst other op of both writers"))
            vt_dump(&R);
    }
}

/* Random small batches biased to tiles of one pitched matrix (some of
 * another pitch, some 3D, some arrays), against the byte-set reference. */
static void tile_gen(struct small_batch *b, uint64_t *seed)
{
    memset(b, 0, sizeof *b);
    b->n = 1 + rnd(seed) % REF_MAXOPS;
    uint64_t P = 8 + rnd(seed) % 57, P2 = 8 + rnd(seed) % 57;
    uint64_t rows = REF_PSPACE / 64 - 1; /* rows of pitch <= 64 that stay inside the universe */
    for (size_t i = 0; i < b->n; i++) {
        CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        size_t w = 1 + rnd(seed) % 8, h = 1 + rnd(seed) % 6, d = rnd(seed) % 4 == 0 ? 2 + rnd(seed) % 2 : 1;
        op->extent.width = w;
        op->extent.height = h;
        op->extent.depth = d;
        op->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        CUmemcpy3DOperand *x[2] = {&op->src, &op->dst};
        struct cbt_operand_info *inf[2] = {&b->si[i], &b->di[i]};
        for (int s = 0; s < 2; s++) {
            uint32_t k = rnd(seed) % 16;
            if (k == 0) {
                x[s]->type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
                x[s]->op.array.array = REF_HANDLE(1 + rnd(seed) % 2);
                x[s]->op.array.offset.x = rnd(seed) % (REF_AX - (w < REF_AX ? w : REF_AX) + 1);
                x[s]->op.array.offset.y = rnd(seed) % (REF_AY - h + 1);
                x[s]->op.array.offset.z = rnd(seed) % (REF_AZ - d + 1);
                if (w > REF_AX)
                    op->extent.width = w = REF_AX;
                inf[s]->kind = CBT_MEM_ARRAY;
                inf[s]->array_width = REF_AX;
                inf[s]->array_height = REF_AY;
                inf[s]->array_depth = REF_AZ;
                inf[s]->elem_size = 1;
                continue;
            }
            uint64_t p = k < 11 ? P : k < 14 ? P2 : w; /* k >= 14: contiguous rows */
            if (p < w)
                p = w;
            uint64_t lh = d > 1 && rnd(seed) % 2 ? h : h + rnd(seed) % 3; /* contiguous layers or gaps */
            uint64_t span_rows = (d - 1) * lh + h;
            uint64_t col = rnd(seed) % 3 ? rnd(seed) % (p - w + 1) : rnd(seed) % p; /* mostly non-wrapping */
            uint64_t row = rnd(seed) % (rows - span_rows);
            x[s]->type = CU_MEMCPY_OPERAND_TYPE_POINTER;
            x[s]->op.ptr.ptr = REF_PBASE + row * p + col;
            x[s]->op.ptr.rowLength = p == w && rnd(seed) % 2 ? 0 : p;
            x[s]->op.ptr.layerHeight = lh == h && rnd(seed) % 2 ? 0 : lh;
            inf[s]->kind = CBT_MEM_DEVICE;
            inf[s]->alloc_base = REF_PBASE;
            inf[s]->alloc_size = REF_PSPACE;
        }
        if (op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY && op->dst.type == CU_MEMCPY_OPERAND_TYPE_POINTER)
            b->di[i].kind = CBT_MEM_DEVICE;
    }
}

static void tile_cross_check(void)
{
    uint64_t seed = 0x7a11e5u;
    const int N = 20000;
    int bad = 0, hazards = 0, errors = 0;
    char why[256];
    static struct small_batch sb;
    for (int k = 0; k < N; k++) {
        tile_gen(&sb, &seed);
        if (!ref_check(V, &sb, why, sizeof why)) {
            tap_diag("tile batch %d disagrees: %s", k, why);
            if (++bad > 3)
                break;
        }
        struct cbt_batch_view v = ref_view(&sb);
        struct cbt_finding f[512];
        size_t n = cbt_validate(V, &v, f, 512);
        for (size_t i = 0; i < n && i < 512; i++) {
            hazards += f[i].severity == CBT_SEV_HAZARD;
            errors += f[i].severity == CBT_SEV_ERROR;
        }
    }
    tap_ok(bad == 0, "%d random tile-biased batches (one pitch, some another, 3D, arrays): hazards equal the "
                     "byte-set reference", N);
    tap_ok(hazards > N && errors < N / 10, "the tile batches exercise the hazard rules (%d hazards, %d errors)",
           hazards, errors);
}

static void cross_check(void)
{
    uint64_t seed = 0x1234567u;
    const int N = 5000;
    int bad = 0, hazards = 0;
    char why[256];
    static struct small_batch sb;
    for (int k = 0; k < N; k++) {
        ref_gen(&sb, rnd, &seed);
        if (!ref_check(V, &sb, why, sizeof why)) {
            tap_diag("batch %d disagrees: %s", k, why);
            for (size_t i = 0; i < sb.n; i++) {
                const CUDA_MEMCPY3D_BATCH_OP *o = &sb.ops[i];
                tap_diag("  op %zu: extent %zux%zux%zu src t%d 0x%llx rl %zu lh %zu dst t%d 0x%llx rl %zu lh %zu", i,
                         o->extent.width, o->extent.height, o->extent.depth, o->src.type,
                         (unsigned long long)o->src.op.ptr.ptr, o->src.op.ptr.rowLength, o->src.op.ptr.layerHeight,
                         o->dst.type, (unsigned long long)o->dst.op.ptr.ptr, o->dst.op.ptr.rowLength,
                         o->dst.op.ptr.layerHeight);
            }
            bad++;
            if (bad > 3)
                break;
        }
        struct cbt_batch_view v = ref_view(&sb);
        struct cbt_finding f[512];
        size_t n = cbt_validate(V, &v, f, 512);
        for (size_t i = 0; i < n && i < 512; i++)
            hazards += f[i].severity == CBT_SEV_HAZARD;
    }
    tap_ok(bad == 0, "%d random small batches: the sweep's per-op hazards equal an O(n^2) byte-set reference", N);
    tap_ok(hazards > N / 2, "the random batches exercise the hazard rules (%d hazards found)", hazards);
}

int main(void)
{
    V = cbt_validator_new();
    if (!V)
        tap_skip_all("out of memory");
    pointer_cases();
    array_cases();
    big_cases();
    tile_cases();
    array_tile_cases();
    contiguous_3d_cases();
    cross_check();
    tile_cross_check();
    cbt_validator_free(V);
    return tap_done();
}
