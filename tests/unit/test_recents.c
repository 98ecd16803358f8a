/* SPDX-License-Identifier: MIT */
/*
 * The steady state's lookups (src/recents.c): for random op lists and 1D
 * copies (one buffer to another, mixed ranges, arrays, operands outside
 * the recents or in the older recents, ops not well formed), the same
 * answer and the same refs as
 * an op-by-op reference; and no read beyond the page of an op (a copy)
 * that failed, where the driver reads no further: an op list and 1D arrays
 * running into a page that cannot be read.  Then the keeping of the
 * recents after a batch that learned and at a refresh (a stand-in for the
 * dictionary's serials), and a thread going round four pairs of buffers
 * that the lookup takes from the second round on.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../tap.h"
#include "recents.h"
#include "record.h"

/* 0 to n - 1, the same sequence every run (random(), seeded in main) */
static unsigned pick(unsigned n) { return (unsigned)((unsigned long)random() % n); }

#define LO0 0x10000ull
#define LO1 0x800000ull
#define LO2 0x2000000ull /* the older recents' */
#define LO3 0x3000000ull
#define LEN 0x40000ull
#define ARRAY 0xa0a0a0ull
#define ARRAY2 0xb0b0b0ull /* an older recent array */

static struct cbt_cache cache(void)
{
    struct cbt_cache c;
    memset(&c, 0, sizeof c);
    c.recent[0] = (struct cbt_recent){.lo = LO0, .len = LEN, .ref = 7};
    c.recent[1] = (struct cbt_recent){.lo = LO1, .len = LEN, .ref = 9};
    c.array_recent = (struct cbt_recent){.lo = ARRAY, .len = 1, .ref = 11};
    c.more[0] = (struct cbt_recent){.lo = LO2, .len = LEN, .ref = 13};
    c.more[2] = (struct cbt_recent){.lo = LO3, .len = LEN, .ref = 15}; /* more[1]: none */
    c.array_more[1] = (struct cbt_recent){.lo = ARRAY2, .len = 1, .ref = 17};
    return c;
}

/* The recent (or older recent) range holding a, and the recent array h: their ref, or -1. */
static int range_ref(const struct cbt_cache *c, uint64_t a)
{
    for (int k = 0; k < 2; k++)
        if (a >= c->recent[k].lo && a < c->recent[k].lo + c->recent[k].len)
            return c->recent[k].ref;
    for (int k = 0; k < CBT_MORE_RECENTS; k++)
        if (c->more[k].len && a >= c->more[k].lo && a < c->more[k].lo + c->more[k].len)
            return c->more[k].ref;
    return -1;
}

static int array_ref(const struct cbt_cache *c, uint64_t h)
{
    if (!h)
        return -1;
    if (c->array_recent.len && h == c->array_recent.lo)
        return c->array_recent.ref;
    for (int k = 0; k < CBT_MORE_ARRAYS; k++)
        if (c->array_more[k].len && h == c->array_more[k].lo)
            return c->array_more[k].ref;
    return -1;
}

/* The rules, op by op (operands.h, cbt_op_well_formed_inline). */
static int ref_side(const struct cbt_cache *c, const CUmemcpy3DOperand *x, const CUDA_MEMCPY3D_BATCH_OP *op, bool form)
{
    if (x->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
        if (form && ((x->op.ptr.rowLength && x->op.ptr.rowLength < op->extent.width) ||
                     (x->op.ptr.layerHeight && x->op.ptr.layerHeight < op->extent.height)))
            return -1;
        return range_ref(c, x->op.ptr.ptr);
    }
    if (x->type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
        return array_ref(c, (uint64_t)(uintptr_t)x->op.array.array);
    return -1;
}

static bool reference(const struct cbt_cache *c, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                      size_t checked)
{
    for (size_t i = 0; i < n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
        bool form = i < checked;
        if (form && (!op->extent.width || !op->extent.height || !op->extent.depth ||
                     op->srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
                     op->srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY ||
                     (op->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)))
            return false;
        int s = ref_side(c, &op->src, op, form), d = ref_side(c, &op->dst, op, form);
        if (s < 0 || d < 0)
            return false;
        refs[2 * i] = (uint16_t)s;
        refs[2 * i + 1] = (uint16_t)d;
    }
    return true;
}

/* A list's ops alike but for their pointers (most real lists, and the run
 * recents.c takes 16 bytes at a time), or each rowLength drawn anew; the
 * operands' padding left as it is (a program's stack) or not. */
static bool alike, garbage;

static void pointer(CUmemcpy3DOperand *x, uint64_t lo)
{
    memset(x, 0, sizeof *x);
    x->type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    x->op.ptr.ptr = (CUdeviceptr)(lo + 4096 * pick(16));
    x->op.ptr.rowLength = alike || pick(2) ? 0 : 1024;
    if (garbage) { /* the 4 bytes after the type */
        uint32_t junk = (uint32_t)random();
        memcpy((char *)x + sizeof x->type, &junk, sizeof junk);
    }
}

/* The list's usual ranges and array (most lists: the last two ranges and
 * the last array; some: older ones). */
static uint64_t usual_src, usual_dst, usual_array;

/* An array operand, the usual one or (other) another, at an offset drawn anew. */
static void array(CUmemcpy3DOperand *x, bool other)
{
    memset(x, 0, sizeof *x);
    x->type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    x->op.array.array = (CUarray)(uintptr_t)(other ? ARRAY + 0x100 : usual_array);
    x->op.array.offset.x = pick(64);
    x->op.array.offset.y = pick(1024);
    x->op.array.offset.z = pick(2);
    if (garbage) {
        uint32_t junk = (uint32_t)random();
        memcpy((char *)x + sizeof x->type, &junk, sizeof junk);
    }
}

/* The list's shape: which of its usual op's operands are arrays (bit 0 the
 * source's, bit 1 the destination's). */
static unsigned shape;

static CUDA_MEMCPY3D_BATCH_OP good_op(void)
{
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    if (shape & 1)
        array(&op.src, false);
    else
        pointer(&op.src, usual_src);
    if (shape & 2)
        array(&op.dst, false);
    else
        pointer(&op.dst, usual_dst);
    op.extent.width = 256;
    op.extent.height = 1;
    op.extent.depth = 1;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    return op;
}

/* One change that may make an op not the usual one, or not taken. */
static void spoil(CUDA_MEMCPY3D_BATCH_OP *op)
{
    switch (pick(17)) {
    case 15: pointer(&op->src, LO3); break;                   /* an older recent range, taken */
    case 16:                                                  /* an older recent array, taken */
        memset(&op->dst, 0, sizeof op->dst);
        op->dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
        op->dst.op.array.array = (CUarray)(uintptr_t)ARRAY2;
        break;
    case 13: /* the type alone changed: a pointer in a recent range read as an array handle, or the other way */
        op->src.type = op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ? CU_MEMCPY_OPERAND_TYPE_POINTER
                                                                     : CU_MEMCPY_OPERAND_TYPE_ARRAY;
        break;
    case 14:
        op->dst.type = op->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY ? CU_MEMCPY_OPERAND_TYPE_POINTER
                                                                     : CU_MEMCPY_OPERAND_TYPE_ARRAY;
        break;
    case 10: array(&op->src, pick(2)); break;                 /* an array: the recent one, or not */
    case 11: array(&op->dst, pick(2)); break;
    case 12: op->dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY; op->dst.op.array.array = NULL; break; /* no array */
    case 0: pointer(&op->src, LO1); break;                    /* mixed ranges, still taken */
    case 1: pointer(&op->dst, LO0); break;
    case 2: op->src.op.ptr.ptr = (CUdeviceptr)(LO1 + LEN); break; /* outside the recents */
    case 3: op->extent.width = 0; break;                      /* not well formed */
    case 4: op->src.op.ptr.rowLength = 16; break;
    case 5: op->extent.height = 2; op->dst.op.ptr.layerHeight = 1; break;
    case 6: op->srcAccessOrder = (CUmemcpySrcAccessOrder)9; break;
    case 7: op->flags = 4; break;
    case 8: /* an array operand, the recent one */
        memset(&op->dst, 0, sizeof op->dst);
        op->dst.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
        op->dst.op.array.array = (CUarray)(uintptr_t)ARRAY;
        break;
    default: op->flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE; break; /* allowed */
    }
}

/* What the lookups said of taken batches' refs being all op 0's (uniform). */
struct uniform_tally {
    int said, wrong, mixed;
};

/* A taken batch of n ops (copies) whose refs are want and of which the
 * lookup said u. */
static void tally_uniform(struct uniform_tally *y, const uint16_t *want, size_t n, bool u)
{
    bool all = true; /* every op's refs op 0's */
    for (size_t i = 1; i < n; i++)
        all = all && memcmp(&want[2 * i], want, 4) == 0;
    y->said += u;
    y->wrong += u && !all;
    y->mixed += !all;
}

/* The tally's test: said of some, never wrongly, with mixed batches among them. */
static void uniform_ok(const struct uniform_tally *y, int trials, const char *dim, const char *how, const char *what)
{
    tap_ok(y->wrong == 0 && y->said > trials / 20 && y->mixed > trials / 50,
           "%s, %s: uniform said of %d taken %s, each with every one's refs the first's (%d wrongly; %d taken %s "
           "mixed)", dim, how, y->said, what, y->wrong, y->mixed, what);
}

static void random_lists(const char *how)
{
    static CUDA_MEMCPY3D_BATCH_OP ops[300];
    static uint16_t got[600], want[600];
    const struct cbt_cache c = cache();
    int agree = 0, taken = 0, taken_arrays = 0, trials = 4000, taken_older = 0;
    struct uniform_tally y = {0, 0, 0};
    for (int t = 0; t < trials; t++) {
        size_t n = 1 + pick(t % 2 ? 300 : 20);
        alike = t % 3 != 0;
        garbage = t % 5 == 0;
        shape = t % 7 < 4 ? 0 : t % 7 - 3; /* pointers in most lists; arrays on either side, or both */
        bool older = t % 11 < 3;             /* the usual operands in the older recents */
        usual_src = older ? LO2 : LO0;
        usual_dst = older ? LO3 : LO1;
        usual_array = older ? ARRAY2 : ARRAY;
        for (size_t i = 0; i < n; i++)
            ops[i] = good_op();
        int spoils = pick(4); /* none in a quarter of the lists */
        for (int k = 0; k < spoils; k++)
            spoil(&ops[pick((unsigned)n)]);
        size_t checked = pick(3) ? n : pick((unsigned)n + 1);
        memset(got, 0, sizeof got);
        bool w = reference(&c, n, ops, want, checked);
        bool u = false;
        bool g = cbt_refs_steady(&c, n, ops, got, checked, &u);
        if (g == w && (!g || memcmp(got, want, 4 * n) == 0))
            agree++;
        else if (t - agree < 5)
            tap_diag("list %d: n %zu checked %zu: got %d, want %d", t, n, checked, g, w);
        taken += w;
        taken_arrays += w && shape;
        taken_older += w && older;
        if (g)
            tally_uniform(&y, want, n, u);
    }
    uniform_ok(&y, trials, "3D", how, "lists");
    tap_ok(agree == trials, "3D, %s: %d of %d random lists (%d taken) agree with the op-by-op rules", how, agree,
           trials, taken);
    tap_ok(taken > trials / 8 && taken < trials, "3D, %s: the lists are both taken and not taken (%d)", how, taken);
    tap_ok(taken_arrays > trials / 20, "3D, %s: lists of array operands taken too (%d)", how, taken_arrays);
    tap_ok(taken_older > trials / 40, "3D, %s: lists in the older recents taken too (%d)", how, taken_older);
}

static bool reference1d(const struct cbt_cache *c, size_t n, const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                        const size_t *sizes, uint16_t *refs)
{
    for (size_t i = 0; i < n; i++) {
        int s = range_ref(c, srcs[i]), d = range_ref(c, dsts[i]);
        if (!sizes[i] || s < 0 || d < 0)
            return false;
        refs[2 * i] = (uint16_t)s;
        refs[2 * i + 1] = (uint16_t)d;
    }
    return true;
}

static void random_copies(const char *how)
{
    static CUdeviceptr dsts[700], srcs[700];
    static size_t sizes[700];
    static uint16_t got[1400], want[1400];
    const struct cbt_cache c = cache();
    int agree = 0, taken = 0, trials = 4000, taken_older = 0;
    struct uniform_tally y = {0, 0, 0};
    for (int t = 0; t < trials; t++) {
        size_t n = 1 + pick(t % 2 ? 700 : 20);
        bool older = t % 11 < 3; /* the copies between older recent ranges */
        for (size_t i = 0; i < n; i++) {
            srcs[i] = (older ? LO2 : LO0) + 64 * pick(1000);
            dsts[i] = (older ? LO3 : LO1) + 64 * pick(1000);
            sizes[i] = 64;
        }
        int spoils = pick(4);
        for (int k = 0; k < spoils; k++) {
            size_t i = pick((unsigned)n);
            switch (pick(7)) {
            case 5: srcs[i] = LO3 + 8; break;     /* an older recent range, taken */
            case 6: dsts[i] = LO2 + LEN; break;   /* just past an older one */
            case 0: srcs[i] = LO1; break;         /* mixed, taken */
            case 1: dsts[i] = LO0 + LEN - 1; break; /* the last byte of a range, taken */
            case 2: dsts[i] = 0; break;           /* NULL */
            case 3: sizes[i] = 0; break;
            default: srcs[i] = LO0 + LEN; break;  /* just past a range */
            }
        }
        memset(got, 0, sizeof got);
        bool w = reference1d(&c, n, dsts, srcs, sizes, want);
        bool u = true;
        bool g = cbt_refs_steady1d(&c, n, dsts, srcs, sizes, got, &u);
        if (g == w && (!g || memcmp(got, want, 4 * n) == 0))
            agree++;
        else if (t - agree < 5)
            tap_diag("copies %d: n %zu: got %d, want %d", t, n, g, w);
        taken += w;
        taken_older += w && older;
        if (g)
            tally_uniform(&y, want, n, u);
    }
    uniform_ok(&y, trials, "1D", how, "batches");
    tap_ok(agree == trials, "1D, %s: %d of %d random batches (%d taken) agree with the copy-by-copy rules", how,
           agree, trials, taken);
    tap_ok(taken_older > trials / 40, "1D, %s: batches in the older recents taken too (%d)", how, taken_older);
    tap_ok(taken > trials / 8 && taken < trials, "1D, %s: the batches are both taken and not taken (%d)", how, taken);
}

/* Memory of `pages` pages whose page `hole` cannot be read. */
static char *with_hole(long page, int pages, int hole)
{
    char *m = mmap(NULL, (size_t)page * (size_t)pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (mprotect(m + (size_t)page * (size_t)hole, (size_t)page, PROT_NONE) != 0)
        return NULL;
    return m;
}

static void no_read_past_a_failure(void)
{
    long page = sysconf(_SC_PAGESIZE);
    const struct cbt_cache c = cache();
    static uint16_t refs[4096];
    /* 3D: the list starts its first page, runs over an unreadable one and
     * ends in a third; op `bad` (in the first page) is not well formed, so
     * the driver reads no further: neither may the lookup */
    char *m = with_hole(page, 3, 1);
    if (!tap_ok(m != NULL, "3D: memory with an unreadable page"))
        return;
    CUDA_MEMCPY3D_BATCH_OP *ops = (CUDA_MEMCPY3D_BATCH_OP *)m;
    size_t per_page = (size_t)page / sizeof *ops, n = 2 * (size_t)page / sizeof *ops + 2;
    size_t bads[] = {0, 3, per_page - 1};
    for (size_t k = 0; k < sizeof bads / sizeof *bads; k++) {
        for (size_t i = 0; i < per_page; i++)
            ops[i] = good_op();
        ops[bads[k]].extent.depth = 0;
        bool u;
        bool r = cbt_refs_steady(&c, n, ops, refs, cbt_ops_to_check(ops, n), &u);
        tap_ok(!r, "3D: op %zu of %zu not well formed, the next page unreadable: not taken, nothing read there",
               bads[k], n);
    }
    munmap(m, (size_t)page * 3);
}

/* 1D: each array with its first copies at the end of a page (first[0] of
 * dsts, first[1] of srcs, first[2] of sizes), the next page unreadable;
 * copy `bad` (before the first of those pages ends) has size 0 or a NULL
 * pointer, so the driver reads no further: neither may the lookup, four
 * copies at a time (the batch long enough for it) or one by one. */
static void no_read_past_a_failed_copy(const char *how, const size_t first[3])
{
    long page = sysconf(_SC_PAGESIZE);
    const struct cbt_cache c = cache();
    static uint16_t refs[4096];
    char *a[3];
    for (int k = 0; k < 3; k++)
        a[k] = with_hole(page, 2, 1);
    if (!tap_ok(a[0] && a[1] && a[2], "1D, %s: memory with unreadable pages", how))
        return;
    CUdeviceptr *dsts = (CUdeviceptr *)(a[0] + page - 8 * first[0]);
    CUdeviceptr *srcs = (CUdeviceptr *)(a[1] + page - 8 * first[1]);
    size_t *sizes = (size_t *)(a[2] + page - 8 * first[2]);
    size_t least = first[0] < first[1] ? first[0] : first[1];
    least = first[2] < least ? first[2] : least;
    const size_t n1 = least + 8;
    for (size_t i = 0; i < least; i++) {
        dsts[i] = LO1;
        srcs[i] = LO0;
        sizes[i] = 8;
    }
    size_t bads1[] = {0, 1, 5, least - 4, least - 1};
    for (size_t k = 0; k < sizeof bads1 / sizeof *bads1; k++) {
        size_t b = bads1[k];
        if (k % 2) {
            sizes[b] = 0;
        } else {
            dsts[b] = 0;
        }
        bool u;
        bool r = cbt_refs_steady1d(&c, n1, dsts, srcs, sizes, refs, &u);
        tap_ok(!r, "1D, %s: copy %zu of %zu has %s, the arrays' pages end after %zu, %zu, %zu: not taken", how, b, n1,
               k % 2 ? "size 0" : "a NULL destination", first[0], first[1], first[2]);
        sizes[b] = 8;
        dsts[b] = LO1;
    }
    for (int k = 0; k < 3; k++)
        munmap(a[k], (size_t)page * 2);
}

/* The 1D tests, the copies taken as the loop in use takes them. */
static void copies(const char *how)
{
    random_copies(how);
    /* the pages alike, then each array's page the first to end */
    const size_t ends[][3] = {{37, 37, 37}, {26, 60, 43}, {60, 27, 42}, {58, 54, 51}};
    for (size_t k = 0; k < sizeof ends / sizeof *ends; k++)
        no_read_past_a_failed_copy(how, ends[k]);
}

/* ---- keeping the recents (cbt_recents_update, cbt_recents_keep) ----
 *
 * A dictionary of 64 entries, not writing: entry i holds what it held while
 * its serial is serials[i] (record.c gives an entry a new serial when it
 * goes to another operand; cbt_dict_keep, inline, reads them). */
static uint32_t serials[64], used[64], written[64];
static struct cbt_dict dict64 = {.cap = 64, .serial = serials, .used = used, .written = written};

void cbt_dict_write(struct cbt_dict *d, uint16_t i)
{
    (void)d, (void)i;
    tap_ok(0, "a dictionary that does not write is asked to write entry %u", (unsigned)i);
}

/* A range of the stand-in: entry i, lo i << 24. */
static struct cbt_recent rng(uint16_t i)
{
    serials[i] = serials[i] ? serials[i] : 100u + i;
    return (struct cbt_recent){.lo = (uint64_t)i << 24, .len = LEN, .ref = i, .serial = serials[i]};
}

/* The refs of more[] (0: none), as a string. */
static const char *mores(const struct cbt_recent *m, int k)
{
    static char buf[64];
    char *p = buf;
    for (int i = 0; i < k; i++)
        p += sprintf(p, "%s%u", i ? " " : "", m[i].len ? m[i].ref : 0);
    return buf;
}

static void keeping(void)
{
    struct cbt_cache c;
    memset(&c, 0, sizeof c);
    struct cbt_dict *d = &dict64;
    c.recent[0] = rng(1), c.recent[1] = rng(2);
    c.more[0] = rng(3), c.more[1] = rng(4);
    c.array_recent = rng(10);
    c.array_more[0] = rng(11);
    const struct cbt_recent r[2] = {rng(5), rng(1)}, ra = rng(12);
    cbt_recents_update(&c, d, r, &ra);
    tap_ok(c.recent[0].ref == 5 && c.recent[1].ref == 1 && !strcmp(mores(c.more, CBT_MORE_RECENTS), "2 3 4 0 0 0"),
           "a batch's ranges become the recents, those they replace go first among the older (more: %s)",
           mores(c.more, CBT_MORE_RECENTS));
    tap_ok(c.array_recent.ref == 12 && !strcmp(mores(c.array_more, CBT_MORE_ARRAYS), "10 11 0"),
           "arrays likewise (array_more: %s)", mores(c.array_more, CBT_MORE_ARRAYS));
    serials[3]++; /* entry 3 given to another operand */
    const struct cbt_recent r2[2] = {rng(6), rng(7)};
    cbt_recents_update(&c, d, r2, &ra);
    tap_ok(!strcmp(mores(c.more, CBT_MORE_RECENTS), "5 1 2 4 0 0"),
           "an older range whose entry went to another operand is dropped (more: %s)",
           mores(c.more, CBT_MORE_RECENTS));
    for (uint16_t i = 20; i < 30; i += 2) {
        const struct cbt_recent r3[2] = {rng(i), rng((uint16_t)(i + 1))};
        cbt_recents_update(&c, d, r3, &ra);
    }
    tap_ok(!strcmp(mores(c.more, CBT_MORE_RECENTS), "26 27 24 25 22 23"),
           "the latest %d older ranges kept, the latest batch's first (more: %s)", CBT_MORE_RECENTS,
           mores(c.more, CBT_MORE_RECENTS));
    serials[28]++, serials[25]++;
    cbt_recents_keep(&c, d);
    tap_ok(c.recent[0].len == 0 && c.recent[1].ref == 29 && !strcmp(mores(c.more, CBT_MORE_RECENTS), "26 27 24 22 23 0"),
           "a refresh keeps the recents whose entries still hold (recent: %u %u; more: %s)",
           c.recent[0].len ? c.recent[0].ref : 0, c.recent[1].len ? c.recent[1].ref : 0,
           mores(c.more, CBT_MORE_RECENTS));

    /* A thread going round four pairs of buffers, each batch one op from a
     * set's source to its destination: a batch the lookup does not take is
     * learned (its ranges become the recents, as operands.c leaves them).
     * After the first round every batch is taken. */
    memset(&c, 0, sizeof c);
    memset(serials, 0, sizeof serials);
    int taken = 0, rounds = 4;
    for (int j = 0; j < 4 * rounds; j++) {
        uint16_t sset = (uint16_t)(40 + 2 * (j % 4));
        CUDA_MEMCPY3D_BATCH_OP op;
        memset(&op, 0, sizeof op);
        op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        op.src.op.ptr.ptr = ((CUdeviceptr)sset << 24) + 4096;
        op.dst.op.ptr.ptr = ((CUdeviceptr)(sset + 1) << 24) + 8192;
        op.extent.width = 256, op.extent.height = op.extent.depth = 1;
        op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        uint16_t refs[2];
        bool u;
        if (cbt_refs_steady(&c, 1, &op, refs, 0, &u)) {
            taken += refs[0] == sset && refs[1] == sset + 1;
        } else {
            const struct cbt_recent r4[2] = {rng((uint16_t)(sset + 1)), rng(sset)}, none = {0};
            cbt_recents_update(&c, d, r4, &none);
        }
    }
    tap_ok(taken == 4 * (rounds - 1), "going round four pairs of buffers: %d of %d batches after the first round "
           "taken, with their own refs", taken, 4 * (rounds - 1));
}

int main(void)
{
    srandom(88172645u);
    /* the ops compared 32 bytes at a time where the CPU can, then 16 */
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    tap_ok(cbt_recents_avx2 == (bool)__builtin_cpu_supports("avx2"),
           "the AVX2 loops are in use exactly where the CPU has AVX2 (it has%s)",
           __builtin_cpu_supports("avx2") ? "" : " not");
#endif
    if (cbt_recents_avx2) {
        random_lists("AVX2");
        copies("AVX2");
    } else {
        tap_skip(5 + 4 + 4 * 6, "AVX2: this CPU has none"); /* random_lists' and copies' */
    }
    cbt_recents_avx2 = false;
    random_lists("SSE2");
    copies("copy by copy");
    no_read_past_a_failure();
    keeping();
    return tap_done();
}
