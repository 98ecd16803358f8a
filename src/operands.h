/* SPDX-License-Identifier: MIT */
/*
 * What the shim learns about operands from the driver (src/operands.c).
 */
#ifndef CBT_SRC_OPERANDS_H
#define CBT_SRC_OPERANDS_H

#include <cubatchtrace/validate.h>

#include "driver.h"
#include "recents.h"
#include "util.h"

/* Frees what the thread's cache (src/recents.h) holds (it is left empty). */
void cbt_cache_release(struct cbt_cache *c);
/* Brings the cache to generation g of memwrap.h: what the changes logged
 * since it was last brought up touch is dropped, entries and recents (all
 * of it when some were lost).  Out of line: called when the generation moved. */
void cbt_cache_catch_up(struct cbt_cache *c, uint64_t g);

/* The dictionary indices (src/record.h) of the operands of ops[0, n): refs[2i]
 * the source's, refs[2i+1] the destination's; *risky set when an operand is
 * unmapped memory.  The 1D batch's copies likewise, from its arrays.  c is
 * the thread's cache (NULL: none, every operand is asked about). */
struct cbt_dict;
void cbt_learn_refs(const struct cbt_real *real, struct cbt_cache *c, struct cbt_dict *d, size_t n,
                    const CUDA_MEMCPY3D_BATCH_OP *ops, uint16_t *refs, bool *risky);
void cbt_learn_refs1d(const struct cbt_real *real, struct cbt_cache *c, struct cbt_dict *d, size_t n,
                      const CUdeviceptr *dsts, const CUdeviceptr *srcs, uint16_t *refs, bool *risky);

/* Devices in the system (cuDeviceGetCount, asked until it answers); -1 unknown. */
int cbt_device_count(const struct cbt_real *real);
extern int cbt_devices __attribute__((visibility("hidden"))); /* the answer, once had */
static inline int cbt_device_count_fast(const struct cbt_real *real)
{
    int n = __atomic_load_n(&cbt_devices, __ATOMIC_RELAXED);
    return cbt_likely(n > 0) ? n : cbt_device_count(real);
}

#endif
