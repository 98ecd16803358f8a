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
int cbt_device_count(const struct cbt_real *real);

#endif
