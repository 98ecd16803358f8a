/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the validator (validate/) over arbitrary batches, 3D ops
 * of any bytes and 1D copy arrays (cuMemcpyBatchAsync: copies made ops by
 * cbt_copy_op, attributes and their indices, partial reads), with operand
 * infos.  It must not crash, must write no more findings than its cap, and
 * must say the same with a larger cap.  (tests/unit/fuzz_validate.c compares
 * 3D overlaps with a reference; this one covers 1D and the batch fields.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/validate.h>

#include "fuzzread.h"

static uint64_t val(struct rd *r)
{
    switch (byte(r) % 4) {
    case 0: return byte(r);
    case 1: return 0x7f0000000000ull + ((uint64_t)byte(r) << 8);
    case 2: return (uint64_t)byte(r) << 8 | byte(r);
    default: return u64(r);
    }
}
static void bytes(struct rd *r, void *p, size_t n)
{
    for (size_t k = 0; k < n; k++)
        ((uint8_t *)p)[k] = byte(r);
}

#define MAXN 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cbt_validator *v;
    if (!v && !(v = cbt_validator_new()))
        return 0;
    struct rd r = {data, size, 0};
    CUDA_MEMCPY3D_BATCH_OP ops[MAXN];
    struct cbt_operand_info si[MAXN], di[MAXN];
    CUmemcpyAttributes attrs[MAXN], zero;
    memset(&zero, 0, sizeof(zero));
    size_t idxs[MAXN];
    struct cbt_batch_view b;
    memset(&b, 0, sizeof(b));
    uint8_t mode = byte(&r);
    size_t n = byte(&r) % (MAXN + 1);
    b.num_ops = n;
    b.ops = ops;
    b.device_count = (int8_t)byte(&r);
    b.partial = mode & 1;
    b.num_read = b.partial ? byte(&r) % (n + 1) : n;
    if (mode & 2) {
        b.src_info = si, b.dst_info = di;
        bytes(&r, si, sizeof(si[0]) * n);
        bytes(&r, di, sizeof(di[0]) * n);
        for (size_t i = 0; i < n; i++) { /* sizes of interest more often than any bytes */
            si[i].alloc_base = val(&r), si[i].alloc_size = val(&r);
            di[i].alloc_base = val(&r), di[i].alloc_size = val(&r);
        }
    }
    if (mode & 4) { /* 1D: copies, attributes */
        b.copies = 1;
        size_t na = byte(&r) % (MAXN + 1);
        bytes(&r, attrs, sizeof(attrs[0]) * na);
        for (size_t k = 0; k < na; k++)
            idxs[k] = byte(&r) & 0x80 ? val(&r) : k;
        for (size_t i = 0; i < n; i++)
            cbt_copy_op(&ops[i], val(&r), val(&r), val(&r), na ? &attrs[byte(&r) % na] : &zero);
        b.attrs = mode & 8 ? NULL : attrs;
        b.attrs_idxs = mode & 8 ? NULL : idxs;
        b.num_attrs = na;
        b.attrs_read = byte(&r) % (na + 1);
        b.dsts = mode & 16 ? NULL : ops, b.srcs = mode & 32 ? NULL : ops, b.sizes = ops;
    } else {
        b.flags = byte(&r);
        bytes(&r, ops, sizeof(ops[0]) * n);
    }
    if (mode & 64)
        b.has_result = 1, b.result = byte(&r);
    b.abi = (mode >> 7) & 1;
    struct cbt_finding small[4], big[4 * MAXN * MAXN + 64];
    size_t got = cbt_validate(v, &b, small, 4);
    size_t all = cbt_validate(v, &b, big, sizeof(big) / sizeof(big[0]));
    if (got != (size_t)-1 && all != (size_t)-1) {
        if (got != all)
            abort(); /* the total does not depend on the cap */
        for (size_t k = 0; k < 4 && k < got; k++)
            if (memcmp(&small[k], &big[k], sizeof(small[k])) != 0)
                abort(); /* nor do the first findings */
        for (size_t k = 0; k < all && k < sizeof(big) / sizeof(big[0]); k++)
            if (big[k].op != CBT_NO_OP && big[k].op >= n)
                abort(); /* a finding names an op of the batch */
    }
    return 0;
}
