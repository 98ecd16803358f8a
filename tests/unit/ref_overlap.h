/* SPDX-License-Identifier: MIT */
/*
 * A brute-force reference for the overlap rules, over small batches: each
 * operand's footprint is materialised as a set of bytes (pointers) or
 * elements (arrays), and every pair of ops is compared, O(n^2 * bytes).
 * Shared by test_validate_overlap.c and fuzz_validate.c.
 */
#ifndef CBT_TESTS_UNIT_REF_OVERLAP_H
#define CBT_TESTS_UNIT_REF_OVERLAP_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/validate.h>

#define REF_PBASE 0x100000ull /* pointers live in [REF_PBASE, REF_PBASE + REF_PSPACE) */
#define REF_PSPACE 2048u
#define REF_NH 3u /* array handles REF_HANDLE(1..REF_NH) */
#define REF_AX 8u
#define REF_AY 8u
#define REF_AZ 4u
#define REF_HANDLE(h) ((CUarray)(uintptr_t)(0x1000u * (h)))
#define REF_BITS (REF_PSPACE + REF_NH * REF_AX * REF_AY * REF_AZ)
#define REF_WORDS ((REF_BITS + 63) / 64)
#define REF_MAXOPS 16

struct ref_set {
    uint64_t w[REF_WORDS];
    int valid;
};

struct small_batch {
    size_t n;
    CUDA_MEMCPY3D_BATCH_OP ops[REF_MAXOPS];
    struct cbt_operand_info si[REF_MAXOPS], di[REF_MAXOPS];
    int no_src_info, no_dst_info;
};

/* Random source: a callback returning 32 random bits. */
typedef uint32_t (*ref_rand_fn)(void *ctx);

static inline uint32_t ref_pick(ref_rand_fn r, void *c, uint32_t n) { return n ? r(c) % n : 0; }

/* A random small batch: mostly valid ops whose footprints stay inside the
 * reference universe, some errors, some unknown infos. */
static inline void ref_gen(struct small_batch *b, ref_rand_fn r, void *c)
{
    memset(b, 0, sizeof *b);
    b->n = 1 + ref_pick(r, c, REF_MAXOPS);
    b->no_src_info = ref_pick(r, c, 10) == 0;
    b->no_dst_info = ref_pick(r, c, 10) == 0;
    static const uint32_t esz[REF_NH + 1] = {0, 1, 2, 4};
    for (size_t i = 0; i < b->n; i++) {
        CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        size_t w = 1 + ref_pick(r, c, 6), h = 1 + ref_pick(r, c, 3), d = 1 + ref_pick(r, c, 3);
        if (ref_pick(r, c, 40) == 0)
            w = 0;
        op->extent.width = w;
        op->extent.height = h;
        op->extent.depth = d;
        op->srcAccessOrder = (CUmemcpySrcAccessOrder)(1 + ref_pick(r, c, 3));
        if (ref_pick(r, c, 40) == 0)
            op->srcAccessOrder = (CUmemcpySrcAccessOrder)0;
        CUmemcpy3DOperand *x[2] = {&op->src, &op->dst};
        struct cbt_operand_info *inf[2] = {&b->si[i], &b->di[i]};
        for (int s = 0; s < 2; s++) {
            if (ref_pick(r, c, 7) == 0) {
                uint32_t hnd = 1 + ref_pick(r, c, REF_NH);
                x[s]->type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
                x[s]->op.array.array = ref_pick(r, c, 60) ? REF_HANDLE(hnd) : NULL;
                x[s]->op.array.offset.x = ref_pick(r, c, REF_AX - (w ? w : 1) + 1);
                x[s]->op.array.offset.y = ref_pick(r, c, REF_AY - h + 1);
                x[s]->op.array.offset.z = ref_pick(r, c, REF_AZ - d + 1);
                uint32_t k = ref_pick(r, c, 10);
                if (k < 7) {
                    inf[s]->kind = CBT_MEM_ARRAY;
                    inf[s]->array_width = REF_AX;
                    inf[s]->array_height = REF_AY;
                    inf[s]->array_depth = REF_AZ;
                    if (ref_pick(r, c, 15) == 0)
                        inf[s]->array_width = REF_AX / 2; /* may put it out of bounds */
                    inf[s]->elem_size = ref_pick(r, c, 8) ? esz[hnd] : (ref_pick(r, c, 2) ? 0 : 8);
                }
            } else {
                x[s]->type = CU_MEMCPY_OPERAND_TYPE_POINTER;
                x[s]->op.ptr.ptr = REF_PBASE + ref_pick(r, c, 600);
                if (ref_pick(r, c, 60) == 0)
                    x[s]->op.ptr.ptr = 0;
                uint32_t k = ref_pick(r, c, 3);
                x[s]->op.ptr.rowLength = k == 0 ? 0 : w + ref_pick(r, c, 5);
                if (ref_pick(r, c, 40) == 0 && w > 1)
                    x[s]->op.ptr.rowLength = w - 1;
                x[s]->op.ptr.layerHeight = ref_pick(r, c, 2) ? 0 : h + ref_pick(r, c, 2);
                k = ref_pick(r, c, 10);
                if (k < 7) {
                    inf[s]->kind = CBT_MEM_DEVICE;
                    inf[s]->alloc_base = REF_PBASE;
                    inf[s]->alloc_size = REF_PSPACE;
                } else if (k < 8) {
                    inf[s]->kind = CBT_MEM_HOST_PINNED;
                }
            }
        }
    }
}

static inline struct cbt_batch_view ref_view(const struct small_batch *b)
{
    struct cbt_batch_view v;
    memset(&v, 0, sizeof v);
    v.num_ops = b->n;
    v.ops = b->ops;
    v.stream = (CUstream)(uintptr_t)0x5000;
    v.src_info = b->no_src_info ? NULL : b->si;
    v.dst_info = b->no_dst_info ? NULL : b->di;
    v.device_count = 1;
    return v;
}

static inline void ref_set_bit(struct ref_set *s, uint64_t bit) { s->w[bit / 64] |= 1ull << (bit % 64); }
static inline int ref_has_bit(const struct ref_set *s, uint64_t bit) { return (s->w[bit / 64] >> (bit % 64)) & 1; }

/* The footprint of one operand as a set; valid = 0 when it takes no part
 * (pointer of a ptr<->array op whose element size is unknown).  Returns 0 if
 * the footprint leaves the universe (the generator never does that). */
static inline int ref_footprint(struct ref_set *s, const CUDA_MEMCPY3D_BATCH_OP *op, const CUmemcpy3DOperand *x,
                                uint32_t es)
{
    memset(s, 0, sizeof *s);
    uint64_t W = op->extent.width, H = op->extent.height, D = op->extent.depth;
    if (x->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
        if (!es)
            return 1;
        uint64_t rl = x->op.ptr.rowLength ? x->op.ptr.rowLength : W;
        uint64_t lh = x->op.ptr.layerHeight ? x->op.ptr.layerHeight : H;
        for (uint64_t z = 0; z < D; z++)
            for (uint64_t y = 0; y < H; y++)
                for (uint64_t b = 0; b < W * es; b++) {
                    uint64_t a = x->op.ptr.ptr + (z * lh + y) * rl * es + b;
                    if (a < REF_PBASE || a >= REF_PBASE + REF_PSPACE)
                        return 0;
                    ref_set_bit(s, a - REF_PBASE);
                }
    } else {
        uint64_t hnd = (uint64_t)(uintptr_t)x->op.array.array / 0x1000u;
        if (hnd < 1 || hnd > REF_NH)
            return 0;
        for (uint64_t z = 0; z < D; z++)
            for (uint64_t y = 0; y < H; y++)
                for (uint64_t e = 0; e < W; e++) {
                    uint64_t X = x->op.array.offset.x + e, Y = x->op.array.offset.y + y,
                             Z = x->op.array.offset.z + z;
                    if (X >= REF_AX || Y >= REF_AY || Z >= REF_AZ)
                        return 0;
                    ref_set_bit(s, REF_PSPACE + (hnd - 1) * REF_AX * REF_AY * REF_AZ + X + REF_AX * (Y + REF_AY * Z));
                }
    }
    s->valid = 1;
    return 1;
}

static inline int ref_meet(const struct ref_set *a, const struct ref_set *b)
{
    if (!a->valid || !b->valid)
        return 0;
    for (unsigned k = 0; k < REF_WORDS; k++)
        if (a->w[k] & b->w[k])
            return 1;
    return 0;
}

/* Expected hazards: per op, the other op of dst_dst / src_dst (CBT_NO_OP: none) and self. */
struct ref_hz {
    uint64_t dd, sd;
    int self;
};

/* bad[i]: op i has an error finding.  Returns 0 if a footprint left the universe. */
static inline int ref_hazards(const struct cbt_batch_view *v, const int *bad, struct ref_hz *out,
                              struct ref_set *src, struct ref_set *dst)
{
    for (size_t i = 0; i < v->num_ops; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &v->ops[i];
        uint32_t es = cbt_op_elem_size(op, v->src_info ? &v->src_info[i] : NULL, v->dst_info ? &v->dst_info[i] : NULL);
        memset(&src[i], 0, sizeof src[i]);
        memset(&dst[i], 0, sizeof dst[i]);
        if (bad[i])
            continue;
        if (!ref_footprint(&src[i], op, &op->src, es) || !ref_footprint(&dst[i], op, &op->dst, es))
            return 0;
    }
    for (size_t i = 0; i < v->num_ops; i++) {
        out[i].dd = out[i].sd = CBT_NO_OP;
        out[i].self = ref_meet(&src[i], &dst[i]);
        for (size_t j = 0; j < v->num_ops; j++) {
            if (j == i)
                continue;
            if (j > i && out[i].dd == CBT_NO_OP && ref_meet(&dst[i], &dst[j]))
                out[i].dd = j;
            if (out[i].sd == CBT_NO_OP && ref_meet(&dst[i], &src[j]))
                out[i].sd = j;
        }
    }
    return 1;
}

/* Is the byte `at` (a pointer hazard's value) inside a set? */
static inline int ref_has_addr(const struct ref_set *s, uint64_t at)
{
    return s->valid && at >= REF_PBASE && at < REF_PBASE + REF_PSPACE && ref_has_bit(s, at - REF_PBASE);
}

/*
 * Run the validator on a small batch and compare its hazards with the
 * reference.  Returns 1 when they agree; on disagreement writes a line to why.
 */
static inline int ref_check(struct cbt_validator *val, const struct small_batch *sb, char *why, size_t whylen)
{
    struct cbt_batch_view v = ref_view(sb);
    struct cbt_finding f[REF_MAXOPS * 24 + 16];
    int bad[REF_MAXOPS] = {0};
    struct ref_hz want[REF_MAXOPS];
    struct ref_set src[REF_MAXOPS], dst[REF_MAXOPS];
    size_t n = cbt_validate(val, &v, f, sizeof f / sizeof f[0]);
    if (n > sizeof f / sizeof f[0]) {
        snprintf(why, whylen, "too many findings (%zu)", n);
        return 0;
    }
    for (size_t k = 0; k < n; k++)
        if (f[k].severity == CBT_SEV_ERROR && f[k].op != CBT_NO_OP)
            bad[f[k].op] = 1;
    if (!ref_hazards(&v, bad, want, src, dst)) {
        snprintf(why, whylen, "generator left the universe");
        return 0;
    }
    struct ref_hz got[REF_MAXOPS];
    for (size_t i = 0; i < sb->n; i++) {
        got[i].dd = got[i].sd = CBT_NO_OP;
        got[i].self = 0;
    }
    for (size_t k = 0; k < n; k++) {
        const struct cbt_finding *x = &f[k];
        if (x->severity != CBT_SEV_HAZARD)
            continue;
        size_t i = x->op;
        const struct ref_set *a = NULL, *b = NULL;
        if (x->rule == CBT_RULE_overlap_dst_dst) {
            got[i].dd = x->other_op;
            a = &dst[i];
            b = &dst[x->other_op];
        } else if (x->rule == CBT_RULE_overlap_src_dst) {
            got[i].sd = x->other_op;
            a = &dst[i];
            b = &src[x->other_op];
        } else {
            got[i].self = 1;
            a = &src[i];
            b = &dst[i];
        }
        /* A pointer hazard's value is a byte both footprints hold. */
        int is_array = sb->ops[i].dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
        if (!is_array && !(ref_has_addr(a, x->value) && ref_has_addr(b, x->value))) {
            snprintf(why, whylen, "op %zu %s: value 0x%llx is not a shared byte", i, cbt_rules[x->rule].name,
                     (unsigned long long)x->value);
            return 0;
        }
    }
    for (size_t i = 0; i < sb->n; i++) {
        if (got[i].dd != want[i].dd || got[i].sd != want[i].sd || got[i].self != want[i].self) {
            snprintf(why, whylen, "op %zu: dst_dst %lld/%lld src_dst %lld/%lld self %d/%d (got/want)", i,
                     got[i].dd == CBT_NO_OP ? -1LL : (long long)got[i].dd,
                     want[i].dd == CBT_NO_OP ? -1LL : (long long)want[i].dd,
                     got[i].sd == CBT_NO_OP ? -1LL : (long long)got[i].sd,
                     want[i].sd == CBT_NO_OP ? -1LL : (long long)want[i].sd, got[i].self, want[i].self);
            return 0;
        }
    }
    return 1;
}

#endif
