/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the validator: random bytes become an op list with
 * operand infos; the validator must not crash, must not write past its cap,
 * and must keep its own invariants.  Inputs whose first byte is odd are
 * decoded as a small batch (tests/unit/ref_overlap.h) and the hazards are
 * compared with the brute-force reference.
 *
 * Built by tests/unit/local.mk with clang -fsanitize=fuzzer,address,undefined;
 * run by tests/unit/fuzz_validate.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_overlap.h"

struct rd {
    const uint8_t *d;
    size_t n, i;
};

static uint8_t byte(struct rd *r) { return r->i < r->n ? r->d[r->i++] : 0; }

static uint32_t rd_rand(void *ctx)
{
    struct rd *r = ctx;
    uint32_t x = 0;
    for (int k = 0; k < 4; k++)
        x = x << 8 | byte(r);
    return x;
}

static uint64_t raw64(struct rd *r)
{
    uint64_t x = 0;
    for (int k = 0; k < 8; k++)
        x = x << 8 | byte(r);
    return x;
}

/* A value of interesting magnitude. */
static uint64_t val(struct rd *r)
{
    uint8_t sel = byte(r);
    switch (sel % 8) {
    case 0: case 1: case 2: return byte(r);
    case 3: return (uint64_t)byte(r) << 8 | byte(r);
    case 4: return raw64(r);
    case 5: return UINT64_MAX - byte(r);
    case 6: return 1ull << (byte(r) % 64);
    default: return (1ull << (byte(r) % 64)) + byte(r) - 128;
    }
}

#define MAXOPS 32
#define MAXF (MAXOPS * 24 + 16)

static void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_validate: invariant broken: %s\n", what);
        abort();
    }
}

static void raw_mode(struct cbt_validator *v, struct rd *r)
{
    static CUDA_MEMCPY3D_BATCH_OP ops[MAXOPS];
    static struct cbt_operand_info si[MAXOPS], di[MAXOPS];
    static struct cbt_finding full[MAXF], part[MAXF + 1];
    struct cbt_batch_view b;
    memset(&b, 0, sizeof b);
    memset(ops, 0, sizeof ops);
    memset(si, 0, sizeof si);
    memset(di, 0, sizeof di);
    uint8_t h = byte(r);
    b.num_ops = h % (MAXOPS + 1);
    b.ops = (h & 0xc0) == 0xc0 && byte(r) == 0 ? NULL : ops;
    b.flags = byte(r) == 1 ? val(r) : 0;
    static const uintptr_t streams[4] = {0, 1, 2, 0x5000};
    b.stream = (CUstream)streams[byte(r) % 4];
    b.src_info = byte(r) % 8 ? si : NULL;
    b.dst_info = byte(r) % 8 ? di : NULL;
    b.device_count = (int8_t)byte(r);
    uint64_t region = raw64(r);
    for (size_t i = 0; i < b.num_ops; i++) {
        CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
        op->extent.width = val(r);
        op->extent.height = val(r);
        op->extent.depth = val(r) % 4097; /* cost is linear in layers: keep one input bounded */
        op->srcAccessOrder = (CUmemcpySrcAccessOrder)(byte(r) % 5);
        op->flags = byte(r) % 16 ? 0 : byte(r);
        CUmemcpy3DOperand *x[2] = {&op->src, &op->dst};
        struct cbt_operand_info *inf[2] = {&si[i], &di[i]};
        for (int s = 0; s < 2; s++) {
            uint8_t t = byte(r);
            x[s]->type = (CUmemcpy3DOperandType)(t % 8 == 0 ? t % 5 : (t % 3 ? 1 : 2));
            if (x[s]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
                x[s]->op.array.array = (CUarray)(uintptr_t)(byte(r) % 4 * 0x1000);
                x[s]->op.array.offset.x = val(r);
                x[s]->op.array.offset.y = val(r);
                x[s]->op.array.offset.z = val(r);
            } else {
                x[s]->op.ptr.ptr = byte(r) % 4 ? region + val(r) : val(r);
                x[s]->op.ptr.rowLength = byte(r) % 2 ? val(r) : 0;
                x[s]->op.ptr.layerHeight = byte(r) % 2 ? val(r) : 0;
                x[s]->op.ptr.locHint.type = (CUmemLocationType)(byte(r) % 8);
                x[s]->op.ptr.locHint.id = (int8_t)byte(r);
            }
            inf[s]->kind = byte(r) % 8;
            inf[s]->device = (int8_t)byte(r);
            inf[s]->alloc_base = byte(r) % 2 ? region : val(r);
            inf[s]->alloc_size = val(r);
            inf[s]->array_width = val(r);
            inf[s]->array_height = val(r);
            inf[s]->array_depth = val(r);
            inf[s]->elem_size = byte(r) % 2 ? 1u << (byte(r) % 5) : (uint32_t)val(r);
        }
    }

    size_t n = cbt_validate(v, &b, full, MAXF);
    check(n != (size_t)-1, "scratch allocation");
    check(n <= MAXF, "at most 24 findings per op");
    size_t cap = byte(r) % (MAXF + 1);
    if (cap > n + 2)
        cap = n + 2;
    memset(part, 0xa5, sizeof part);
    size_t n2 = cbt_validate(v, &b, part, cap);
    check(n2 == n, "the count does not depend on the cap");
    for (size_t k = cap; k < MAXF + 1; k++) {
        const unsigned char *p = (const unsigned char *)&part[k];
        for (size_t q = 0; q < sizeof part[k]; q++)
            check(p[q] == 0xa5, "nothing written past the cap");
    }
    check(memcmp(part, full, (cap < n ? cap : n) * sizeof full[0]) == 0, "the same findings with a smaller cap");
    check(cbt_validate(v, &b, NULL, 0) == n, "NULL out counts");

    int phase = 0; /* 0 batch, 1 ops, 2 hazards */
    uint64_t last = 0;
    static uint8_t err[MAXOPS];
    memset(err, 0, sizeof err);
    for (size_t k = 0; k < n; k++) {
        const struct cbt_finding *f = &full[k];
        check(f->rule < CBT_RULE_COUNT, "rule in range");
        check(f->severity == cbt_rules[f->rule].severity, "severity from the catalogue");
        check(f->side <= CBT_SIDE_DST, "side in range");
        int p = f->op == CBT_NO_OP ? 0 : f->severity == CBT_SEV_HAZARD ? 2 : 1;
        check(p >= phase, "batch findings, then op findings, then hazards");
        if (p != phase)
            last = 0;
        phase = p;
        if (p == 0) {
            check(f->rule <= CBT_RULE_stream_legacy, "batch-level rules only at batch level");
            continue;
        }
        check(f->op < b.num_ops, "op index in range");
        check(f->op >= last, "ordered by op index");
        last = f->op;
        if (p == 1) {
            check(f->other_op == CBT_NO_OP, "no other op outside hazards");
            if (f->severity == CBT_SEV_ERROR)
                err[f->op] = 1;
        } else {
            check(!err[f->op], "no hazard on an op with an error");
            check(f->other_op < b.num_ops && !err[f->other_op], "hazard partner valid and error-free");
            if (f->rule == CBT_RULE_overlap_dst_dst)
                check(f->other_op > f->op, "dst_dst reported at the lower op");
            else if (f->rule == CBT_RULE_overlap_src_dst)
                check(f->other_op != f->op, "src_dst between two ops");
            else
                check(f->other_op == f->op, "self names itself");
        }
    }
    if (b.num_ops == 0 || !b.ops)
        check(phase == 0, "no op findings without ops");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cbt_validator *v;
    if (!v)
        v = cbt_validator_new();
    if (!v || size == 0)
        return 0;
    struct rd r = {data + 1, size - 1, 0};
    if (data[0] & 1) {
        static struct small_batch sb;
        char why[256];
        ref_gen(&sb, rd_rand, &r);
        if (!ref_check(v, &sb, why, sizeof why)) {
            fprintf(stderr, "fuzz_validate: sweep and reference disagree: %s\n", why);
            abort();
        }
    } else {
        raw_mode(v, &r);
    }
    return 0;
}
