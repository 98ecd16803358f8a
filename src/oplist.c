/* SPDX-License-Identifier: MIT */
/*
 * What the calling thread reads of a batch's op list or copy arrays, and
 * what it tells of them: how far the driver reads them (the shim reads no
 * further), whether a pageable operand's footprint runs into unmapped
 * memory (strict mode and the stderr report), and the operands of each op
 * from the thread's dictionary (for the validator and the GPU-time event).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "oplist.h"

_Static_assert(sizeof(CUDA_MEMCPY3D_BATCH_OP) == CBT_EV_OP_SIZE, "the recorded op size is CUDA 13's");
_Static_assert(sizeof(CUDA_MEMCPY3D_BATCH_OP) == 8 * CBT_EV_OP_WORDS, "ops travel as 64-bit words");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the recorded words are the ops' bytes, little-endian");

size_t cbt_ops_driver_reads(size_t num_ops, const CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
                            CUstream stream, bool stream_known)
{
    if (num_ops == 0 || !ops || flags || stream == NULL || stream == CU_STREAM_LEGACY || !stream_known)
        return 0;
    for (size_t i = 0; i < num_ops; i++)
        if (cbt_unlikely(!cbt_op_well_formed_inline(&ops[i])))
            return i + 1;
    return num_ops;
}

CBT_HOT_FN size_t cbt_copies_driver_reads(size_t count, const CUdeviceptr *dsts, const CUdeviceptr *srcs, const size_t *sizes,
                               const CUmemcpyAttributes *attrs, const size_t *attrs_idxs, size_t num_attrs,
                               CUstream stream, bool stream_known, int device_count, size_t *attrs_read)
{
    *attrs_read = 0;
    if (!count || !dsts || !srcs || !sizes || !attrs || !attrs_idxs || !num_attrs || num_attrs > count ||
        stream == NULL || stream == CU_STREAM_LEGACY || !stream_known)
        return 0;
    if (!cbt_attrs_well_formed(attrs, attrs_idxs, num_attrs, count, device_count, attrs_read))
        return 0;
    for (size_t i = 0; i < count; i++)
        if (cbt_unlikely(!sizes[i] || !dsts[i] || !srcs[i]))
            return i + 1;
    return count;
}

/* The last byte of a pointer operand's footprint (ptr + the rows it spans),
 * or false when it does not fit in 64 bits. */
static bool footprint_last(const CUmemcpy3DOperand *x, const CUextent3D *e, uint64_t es, uint64_t *last)
{
    uint64_t w = e->width, h = e->height, d = e->depth, row, layer, end;
    if (!w || !h || !d)
        return false;
    uint64_t rl = x->op.ptr.rowLength ? x->op.ptr.rowLength : w;
    uint64_t lh = x->op.ptr.layerHeight ? x->op.ptr.layerHeight : h;
    if (__builtin_mul_overflow(rl, es, &row) || __builtin_mul_overflow(row, lh, &layer) ||
        __builtin_mul_overflow(layer, d - 1, &end) || __builtin_mul_overflow(row, h - 1, last) ||
        __builtin_add_overflow(end, *last, &end) || __builtin_mul_overflow(w, es, last) ||
        __builtin_add_overflow(end, *last - 1, &end) || __builtin_add_overflow(end, (uint64_t)x->op.ptr.ptr, last))
        return false;
    return true;
}

/*
 * Can every page of [p, last] be read?  One byte of each page is read with
 * process_vm_readv on the process itself, which answers a fault instead of
 * taking it (pages unmapped or PROT_NONE); where a sandbox forbids that
 * call, mincore tells at least the unmapped ones (ENOMEM).
 */
bool cbt_range_readable(uint64_t p, uint64_t last)
{
    static int no_vm_readv;
    uint64_t page = cbt_page_size();
    uint64_t lo = p & ~(page - 1), pages = (last - lo) / page + 1;
    enum { BATCH = 64 };
    char sink[BATCH];
    struct iovec local = {.iov_base = sink, .iov_len = 0}, remote[BATCH];
    for (uint64_t at = 0; at < pages; at += BATCH) {
        uint64_t n = pages - at < BATCH ? pages - at : BATCH;
        if (!__atomic_load_n(&no_vm_readv, __ATOMIC_RELAXED)) {
            for (uint64_t j = 0; j < n; j++)
                remote[j] = (struct iovec){.iov_base = (void *)(uintptr_t)(at + j ? lo + (at + j) * page : p),
                                           .iov_len = 1};
            local.iov_len = n;
            ssize_t got = process_vm_readv(getpid(), &local, 1, remote, n, 0);
            if (got == (ssize_t)n)
                continue;
            if (got >= 0 || errno == EFAULT)
                return false;
            __atomic_store_n(&no_vm_readv, 1, __ATOMIC_RELAXED); /* EPERM, ENOSYS: a sandbox */
        }
        unsigned char vec[BATCH];
        if (mincore((void *)(uintptr_t)(lo + at * page), n * page, vec) != 0 && errno == ENOMEM)
            return false;
    }
    return true;
}

void cbt_check_footprints(struct cbt_dict *d, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t n, uint16_t *refs,
                          bool *risky)
{
    for (size_t i = 0; i < n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &ops[i];
        for (int side = 0; side < 2; side++) {
            const CUmemcpy3DOperand *x = side ? &op->dst : &op->src;
            uint16_t *slot = &refs[2 * i + side];
            const struct cbt_operand_info *info = cbt_dict_info(d, *slot);
            if (x->type != CU_MEMCPY_OPERAND_TYPE_POINTER || info->kind != CBT_MEM_HOST_PAGEABLE)
                continue;
            uint64_t es = cbt_op_elem_size(op, cbt_dict_info(d, refs[2 * i]), cbt_dict_info(d, refs[2 * i + 1])), last;
            if (!es)
                continue;
            if (footprint_last(x, &op->extent, es, &last) && cbt_range_readable((uint64_t)x->op.ptr.ptr, last))
                continue;
            /* The footprint runs into unmapped memory: this operand is
             * recorded as unmapped (an entry of its own). */
            struct cbt_operand_info un = *info;
            un.kind = CBT_MEM_UNMAPPED;
            *slot = cbt_dict_ref(d, &un);
            *risky = true;
        }
    }
}

void cbt_refs_expand(const struct cbt_dict *d, const uint16_t *refs, size_t n, struct cbt_operand_info *src,
                     struct cbt_operand_info *dst)
{
    for (size_t i = 0; i < n; i++) {
        src[i] = *cbt_dict_info(d, refs[2 * i]);
        dst[i] = *cbt_dict_info(d, refs[2 * i + 1]);
    }
}
