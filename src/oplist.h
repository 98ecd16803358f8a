/* SPDX-License-Identifier: MIT */
/*
 * What the calling thread reads of a batch (src/oplist.c): how far the
 * driver reads the op list or copy arrays, the footprints of pageable
 * operands, and the operands of each op from the thread's dictionary.
 */
#ifndef CBT_OPLIST_H
#define CBT_OPLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "driver.h"
#include "record.h"
#include "util.h"

/*
 * How many ops of the list the driver reads: none when it rejects the batch
 * from its arguments alone (numOps 0, a NULL list, flags, a NULL, legacy or
 * unknown stream: stream_known false), else up to and including the first op
 * whose form it rejects, else all of them.  The shim reads no further.
 */
size_t cbt_ops_driver_reads(size_t num_ops, const CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
                            CUstream stream, bool stream_known);

/*
 * The same for a 1D batch: none of its arrays when the driver rejects it
 * from its arguments alone (count 0, a NULL array, numAttrs 0 or above
 * count, a NULL, legacy or unknown stream); then its attributes, up to and
 * including the first the driver rejects (*attrs_read), and no copy after
 * such an attribute; else the copies up to and including the first whose
 * size is 0 or whose pointers are NULL, else all of them.
 */
size_t cbt_copies_driver_reads(size_t count, const CUdeviceptr *dsts, const CUdeviceptr *srcs, const size_t *sizes,
                               const CUmemcpyAttributes *attrs, const size_t *attrs_idxs, size_t num_attrs,
                               CUstream stream, bool stream_known, int device_count, size_t *attrs_read);

/* The attributes of a 1D batch (the driver checks them before any copy):
 * are all num_attrs well formed?  *read: those the driver reads, up to and
 * including the first it rejects.  For a batch whose arrays and counts the
 * driver takes (cbt_copies_driver_reads' first test). */
static inline bool cbt_attrs_well_formed(const CUmemcpyAttributes *attrs, const size_t *attrs_idxs, size_t num_attrs,
                                         size_t count, int device_count, size_t *read)
{
    for (size_t k = 0; k < num_attrs; k++) {
        if (cbt_unlikely(!cbt_attr_well_formed_inline(&attrs[k], k, attrs_idxs[k], k ? attrs_idxs[k - 1] : 0, count,
                                                      device_count))) {
            *read = k + 1;
            return false;
        }
    }
    *read = num_attrs;
    return true;
}

/* Can every page of [p, last] be read (not unmapped, not PROT_NONE)?
 * process_vm_readv on the process itself, else mincore (a sandbox). */
bool cbt_range_readable(uint64_t p, uint64_t last);

/* Strict mode and the stderr report: a pageable host operand whose footprint
 * runs into an unreadable page gets an unmapped entry of its own (*risky). */
void cbt_check_footprints(struct cbt_dict *d, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t n, uint16_t *refs,
                          bool *risky);

/* The operands of op i, for the validator: src[i], dst[i] for i < n. */
void cbt_refs_expand(const struct cbt_dict *d, const uint16_t *refs, size_t n, struct cbt_operand_info *src,
                     struct cbt_operand_info *dst);

#endif
