/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace validator: check a cuMemcpy3DBatchAsync op list, or the copies
 * of a cuMemcpyBatchAsync call, without a GPU.
 *
 * The validator is pure: ops in, findings out.  It never calls the driver
 * and never traces.  What only the driver can tell (the memory kind of a
 * pointer, the bounds of its allocation, the size and format of a CUDA
 * array) is handed in through struct cbt_operand_info; leave it zeroed
 * (CBT_MEM_UNKNOWN) and the rules that need it stay silent.
 *
 * Link with -lcubatchtrace-validate.
 */
#ifndef CUBATCHTRACE_VALIDATE_H
#define CUBATCHTRACE_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#include <cubatchtrace/catalog.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What is known about one operand of one op. All-zero means "nothing known". */
struct cbt_operand_info {
    uint8_t kind;          /* enum cbt_memkind */
    int32_t device;        /* device ordinal the memory lives on; -1: host or unknown */
    uint64_t alloc_base;   /* pointer operands: the allocation holding the pointer ... */
    uint64_t alloc_size;   /* ... and its size in bytes; 0: bounds unknown */
    /* Array operands (kind CBT_MEM_ARRAY), from cuArray3DGetDescriptor: */
    uint64_t array_width;  /* in elements */
    uint64_t array_height; /* 0 for a 1D array: treated as 1 */
    uint64_t array_depth;  /* 0 for a 1D or 2D array: treated as 1 */
    uint32_t elem_size;    /* bytes per element (format size * channels); 0: unknown */
};

/* Facts about the batch as a whole. */
struct cbt_batch_view {
    size_t num_ops;
    const CUDA_MEMCPY3D_BATCH_OP *ops;
    unsigned long long flags;
    CUstream stream;
    const struct cbt_operand_info *src_info; /* num_ops entries, or NULL */
    const struct cbt_operand_info *dst_info; /* num_ops entries, or NULL */
    int device_count;                        /* devices in the system; <= 0: unknown */
    /* Set when only the first num_read ops could be read (the rest lie past
     * an op the driver rejects before reading further): the ops after them
     * are not examined and an ops_not_read finding says how many were. */
    int partial;
    size_t num_read;
    /* The 1D batch (cuMemcpyBatchAsync): set `copies`; ops[i] is then copy i
     * as cbt_copy_op() writes it (num_ops is count, num_read the copies
     * read, flags 0), and the fields below are the call's other arguments.
     * Leave them zero for the 3D batch. */
    int copies;
    const void *dsts, *srcs, *sizes; /* only whether each is NULL is used */
    const CUmemcpyAttributes *attrs;
    const size_t *attrs_idxs;
    size_t num_attrs;
    size_t attrs_read;               /* entries of attrs and attrsIdxs read (<= num_attrs) */
    unsigned abi;                    /* CBT_ABI_* bits: what the caller's arguments gave away */
    /* Set once the driver answered the call (the shim forwarded it): its
     * result, for the rules about what the driver did (refused_in_capture). */
    int has_result;
    uint32_t result;                 /* CUresult */
};

/* Signs of the 12.8 and 13.0 signatures of cuMemcpyBatchAsync mixed up
 * (seen by the shim, which knows the calling thread's stack and streams). */
#define CBT_ABI_STREAM_ON_STACK 1u    /* rule stream_on_stack */
#define CBT_ABI_FAIL_IDX_IS_STREAM 2u /* rule fail_idx_is_stream */

#define CBT_NO_OP ((uint64_t)-1)

struct cbt_finding {
    uint16_t rule;     /* enum cbt_rule */
    uint8_t severity;  /* enum cbt_severity (== cbt_rules[rule].severity) */
    uint8_t side;      /* enum cbt_side: the operand at fault, if any */
    uint64_t op;       /* index of the op; CBT_NO_OP for batch-level rules */
    uint64_t other_op; /* overlaps: the other op; CBT_NO_OP otherwise */
    uint64_t value;    /* the value at fault (a rowLength, a width, an end offset...) */
    uint64_t limit;    /* what it was checked against */
};

/* Reusable state (scratch memory for the overlap sweep). Not thread-safe: one per thread. */
struct cbt_validator;

struct cbt_validator *cbt_validator_new(void);
void cbt_validator_free(struct cbt_validator *v);

/*
 * Check a batch.  Writes at most `cap` findings to `out` (which may be NULL
 * when cap is 0) in a stable order: batch-level findings first, then by op
 * index, then overlaps.  Returns the total number of findings, which may be
 * larger than cap; returns (size_t)-1 only if scratch memory could not be
 * allocated (the structural rules were then still checked and written).
 *
 * Overlaps are exact: an operand's footprint is its rows (pitch from rowLength,
 * layerHeight and the element size), not its bounding box; arrays overlap when
 * their 3D boxes on the same CUarray intersect.  Cost is O(n log n) plus
 * O(log n) per pair of ops that really overlap, for the usual layouts
 * (footprints that are rectangles on one row pitch, boxes on one CUarray);
 * footprints outside those layouts that pile up in one address range (3D
 * with gaps between layers, rows wrapping the pitch, mixed pitches) can
 * still cost up to n^2/2 exact pair tests.
 *
 * Overlap findings: overlap_self has other_op == op; overlap_dst_dst is
 * reported once per pair, on the lower op; overlap_src_dst on the writer.
 * `value` is a byte both footprints touch (the CUarray handle for arrays).
 */
size_t cbt_validate(struct cbt_validator *v, const struct cbt_batch_view *batch, struct cbt_finding *out,
                    size_t cap);

/*
 * The findings about the driver's answer alone (refused_in_capture), as
 * cbt_validate adds them last when the view has a result: for a caller that
 * validated the batch before the call and learns the result after it.
 * Writes at most cap findings to out; returns how many there are.
 */
size_t cbt_validate_result(uint32_t result, struct cbt_finding *out, size_t cap);

/*
 * Does the driver's first pass over the ops accept this op's form (extent,
 * srcAccessOrder, flags, operand types, pitches) and go on to read the
 * next op?  The H200 checks every op's form, in order, before it looks at
 * any memory, and stops at the first op that fails: a caller that must not
 * read more of an op list than the driver would stops there too.
 */
int cbt_op_well_formed(const CUDA_MEMCPY3D_BATCH_OP *op);

/* The same, for callers on a hot path (one definition: cbt_op_well_formed calls it). */
static inline int cbt_op_well_formed_inline(const CUDA_MEMCPY3D_BATCH_OP *op)
{
    const unsigned order = (unsigned)op->srcAccessOrder;
    if (!op->extent.width || !op->extent.height || !op->extent.depth ||
        order < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || order > CU_MEMCPY_SRC_ACCESS_ORDER_ANY ||
        (op->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE))
        return 0;
    const CUmemcpy3DOperand *xs[2] = {&op->src, &op->dst};
    for (int s = 0; s < 2; s++) {
        if (xs[s]->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
            if ((xs[s]->op.ptr.rowLength && xs[s]->op.ptr.rowLength < op->extent.width) ||
                (xs[s]->op.ptr.layerHeight && xs[s]->op.ptr.layerHeight < op->extent.height))
                return 0;
        } else if (xs[s]->type != CU_MEMCPY_OPERAND_TYPE_ARRAY || !xs[s]->op.array.array) {
            return 0;
        }
    }
    return 1;
}

/*
 * Copy i of a cuMemcpyBatchAsync batch as the validator (and the trace) sees
 * it: a pointer-to-pointer op of extent {size, 1, 1} whose srcAccessOrder,
 * flags and locHints are those of the attribute the copy uses.
 */
void cbt_copy_op(CUDA_MEMCPY3D_BATCH_OP *op, CUdeviceptr dst, CUdeviceptr src, size_t size,
                 const CUmemcpyAttributes *attr);

/*
 * Does the driver accept attribute k of a 1D batch of `count` copies
 * (srcAccessOrder, flags, both locHints against `device_count` devices when
 * > 0, and attrsIdxs[k] == idx: 0 for k == 0, else above `prev` and below
 * count)?  The H200 reads and checks every attribute before any copy, and
 * reads no copy when one fails.
 */
static inline int cbt_attr_well_formed_inline(const CUmemcpyAttributes *a, size_t k, size_t idx, size_t prev,
                                              size_t count, int device_count)
{
    const unsigned order = (unsigned)a->srcAccessOrder;
    if (order < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || order > CU_MEMCPY_SRC_ACCESS_ORDER_ANY ||
        (a->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE))
        return 0;
    const CUmemLocation *l[2] = {&a->srcLocHint, &a->dstLocHint};
    for (int s = 0; s < 2; s++) {
        if ((unsigned)l[s]->type > CBT_LOC_HOST_NUMA_CURRENT)
            return 0;
        if ((unsigned)l[s]->type == CBT_LOC_DEVICE && (l[s]->id < 0 || (device_count > 0 && l[s]->id >= device_count)))
            return 0;
    }
    return k == 0 ? idx == 0 : (idx > prev && idx < count);
}
int cbt_attr_well_formed(const CUmemcpyAttributes *a, size_t k, size_t idx, size_t prev, size_t count,
                         int device_count);

/*
 * A finding in words: the values at fault and where they are, e.g.
 * "op 2: extent height 0 (extent 64x0x1)" or "op 0's destination footprint
 * ends at byte 1051648 of a 1048576-byte allocation (...)", never the raw
 * value and limit.  op and other: the ops (or copies) f->op and f->other_op
 * when known (they add sizes, and tell a locHint's type from its device);
 * NULL: the words come from the finding alone.  copies: the batch is a 1D
 * batch (copies, sizes in bytes).  Writes at most len bytes, NUL-terminated;
 * returns out.  What to change follows from cbt_rule_fix() (catalog.h).
 * Every output of cubatchtrace words findings so: the stderr report, the
 * summary, check (text, JSON, SARIF) and show.
 */
const char *cbt_finding_words(const struct cbt_finding *f, const CUDA_MEMCPY3D_BATCH_OP *op,
                              const CUDA_MEMCPY3D_BATCH_OP *other, int copies, char *out, size_t len);

/* Bytes an op moves (extent * element size; element size 1 for pointer-to-pointer). */
uint64_t cbt_op_bytes(const CUDA_MEMCPY3D_BATCH_OP *op, const struct cbt_operand_info *src,
                      const struct cbt_operand_info *dst);

/* Element size an op copies with: 1 for pointer-to-pointer, else the array's (0 if unknown). */
uint32_t cbt_op_elem_size(const CUDA_MEMCPY3D_BATCH_OP *op, const struct cbt_operand_info *src,
                          const struct cbt_operand_info *dst);

/* The version of cubatchtrace this library belongs to, e.g. "0.1.0" (what
 * `cubatchtrace --version` prints). */
const char *cbt_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CUBATCHTRACE_VALIDATE_H */
