/* SPDX-License-Identifier: MIT */
/* Shared helpers for the validator's unit tests: op and info builders. */
#ifndef CBT_TESTS_UNIT_VTEST_H
#define CBT_TESTS_UNIT_VTEST_H

#include <stdint.h>
#include <string.h>

#include <cuda.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/validate.h>

#include "../tap.h"
#include "opbuild.h"

#define VT_STREAM ((CUstream)(uintptr_t)0x5000)
#define VT_MIB (1024ull * 1024ull)

/* The builders of tests/opbuild.h with addresses and CUarray handles as plain integers. */
static inline CUmemcpy3DOperand vt_ptr(uint64_t p)
{
    return ob_ptr((CUdeviceptr)p, 0, 0);
}

static inline CUmemcpy3DOperand vt_pitched(uint64_t p, size_t row_length, size_t layer_height)
{
    return ob_ptr((CUdeviceptr)p, row_length, layer_height);
}

static inline CUmemcpy3DOperand vt_arr(uintptr_t handle, size_t x, size_t y, size_t z)
{
    return ob_array((CUarray)handle, x, y, z);
}

static inline CUDA_MEMCPY3D_BATCH_OP vt_op(CUmemcpy3DOperand src, CUmemcpy3DOperand dst, size_t w, size_t h,
                                           size_t d)
{
    return ob_op(src, dst, w, h, d, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
}

static inline struct cbt_operand_info vt_mem(enum cbt_memkind kind, uint64_t base, uint64_t size)
{
    struct cbt_operand_info i;
    memset(&i, 0, sizeof i);
    i.kind = (uint8_t)kind;
    i.device = kind == CBT_MEM_DEVICE || kind == CBT_MEM_MANAGED ? 0 : -1;
    i.alloc_base = base;
    i.alloc_size = size;
    return i;
}

static inline struct cbt_operand_info vt_array_info(uint64_t w, uint64_t h, uint64_t d, uint32_t elem)
{
    struct cbt_operand_info i;
    memset(&i, 0, sizeof i);
    i.kind = CBT_MEM_ARRAY;
    i.device = 0;
    i.array_width = w;
    i.array_height = h;
    i.array_depth = d;
    i.elem_size = elem;
    return i;
}

static inline struct cbt_batch_view vt_batch(size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops,
                                             const struct cbt_operand_info *si,
                                             const struct cbt_operand_info *di)
{
    struct cbt_batch_view b;
    memset(&b, 0, sizeof b);
    b.num_ops = n;
    b.ops = ops;
    b.stream = VT_STREAM;
    b.src_info = si;
    b.dst_info = di;
    b.device_count = 8;
    return b;
}

/* Findings of one call, kept for assertions. */
#define VT_MAXF 4096
struct vt_res {
    size_t n;
    struct cbt_finding f[VT_MAXF];
};

static inline void vt_run(struct cbt_validator *v, const struct cbt_batch_view *b, struct vt_res *r)
{
    r->n = cbt_validate(v, b, r->f, VT_MAXF);
}

static inline size_t vt_count(const struct vt_res *r, unsigned rule)
{
    size_t c = 0;
    for (size_t i = 0; i < r->n && i < VT_MAXF; i++)
        c += r->f[i].rule == rule;
    return c;
}

static inline const struct cbt_finding *vt_find(const struct vt_res *r, unsigned rule)
{
    for (size_t i = 0; i < r->n && i < VT_MAXF; i++)
        if (r->f[i].rule == rule)
            return &r->f[i];
    return NULL;
}

static inline size_t vt_errors(const struct vt_res *r)
{
    size_t c = 0;
    for (size_t i = 0; i < r->n && i < VT_MAXF; i++)
        c += r->f[i].severity == CBT_SEV_ERROR;
    return c;
}

static inline void vt_dump(const struct vt_res *r)
{
    for (size_t i = 0; i < r->n && i < VT_MAXF; i++) {
        const struct cbt_finding *f = &r->f[i];
        tap_diag("  finding %zu: %s (%s) op %lld other %lld side %s value %" PRIu64 " limit %" PRIu64, i,
                 cbt_rules[f->rule].name, cbt_severity_name(f->severity),
                 f->op == CBT_NO_OP ? -1LL : (long long)f->op,
                 f->other_op == CBT_NO_OP ? -1LL : (long long)f->other_op, cbt_side_name(f->side), f->value,
                 f->limit);
    }
}

/* Exactly one finding of `rule` in the run of batch b, with these fields; `what` says which behaviour is checked. */
static inline int vt_expect(struct cbt_validator *v, const struct cbt_batch_view *b, struct vt_res *r, const char *what,
                            unsigned rule, uint64_t op, uint64_t other, unsigned side, uint64_t value, uint64_t limit)
{
    vt_run(v, b, r);
    const struct cbt_finding *f = vt_find(r, rule);
    int good = vt_count(r, rule) == 1 && f && f->severity == cbt_rules[rule].severity && f->op == op &&
               f->other_op == other && f->side == side && f->value == value && f->limit == limit;
    if (!tap_ok(good, "%s: %s", cbt_rules[rule].name, what)) {
        tap_diag("want op %lld other %lld side %s value %" PRIu64 " limit %" PRIu64,
                 op == CBT_NO_OP ? -1LL : (long long)op, other == CBT_NO_OP ? -1LL : (long long)other,
                 cbt_side_name(side), value, limit);
        vt_dump(r);
    }
    return good;
}

/* No finding at all. */
static inline void vt_expect_clean(struct cbt_validator *v, const struct cbt_batch_view *b, struct vt_res *r,
                                   const char *what)
{
    vt_run(v, b, r);
    if (!tap_ok(r->n == 0, "%s", what))
        vt_dump(r);
}

#endif
