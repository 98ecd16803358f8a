/* SPDX-License-Identifier: MIT */
/*
 * What the shim learns about operands from the driver (src/operands.c).
 */
#ifndef CBT_SRC_OPERANDS_H
#define CBT_SRC_OPERANDS_H

#include <cubatchtrace/validate.h>

#include "driver.h"

/* Learn what the driver knows about every operand of a batch. */
void cbt_learn_operands(const struct cbt_real *real, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops,
                        struct cbt_operand_info *src, struct cbt_operand_info *dst);
/* The same, deduplicated: infos[idx[i].src] and infos[idx[i].dst] are op i's;
 * returns how many infos (at most 2n) were written. */
struct cbt_op_infos {
    uint32_t src, dst;
};
size_t cbt_learn_indexed(const struct cbt_real *real, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops,
                         struct cbt_op_infos *idx, struct cbt_operand_info *infos);
/* The dictionary indices (src/record.h) of the operands of ops[0, n): refs[2i]
 * the source's, refs[2i+1] the destination's; *risky set when an operand is
 * unmapped memory.  The 1D batch's copies likewise, from its arrays. */
struct cbt_dict;
void cbt_learn_refs(const struct cbt_real *real, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs,
                    struct cbt_dict *d, bool *risky);
void cbt_learn_refs1d(const struct cbt_real *real, size_t n, const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                      uint16_t *refs, struct cbt_dict *d, bool *risky);

int cbt_device_count(const struct cbt_real *real);

#endif
