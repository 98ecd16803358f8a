/* SPDX-License-Identifier: MIT */
/*
 * The common path behind every door (src/batch.c).
 */
#ifndef CBT_SRC_BATCH_H
#define CBT_SRC_BATCH_H

#include "driver.h"
#include "tp.h"

/* Set by the first batch once configuration is read and the provider loaded. */
extern int cbt_ready __attribute__((visibility("hidden")));
/* Strict mode or a stderr report: every batch is validated, listened to or not. */
extern bool cbt_always_validate __attribute__((visibility("hidden")));

/* Nobody listens and nothing is asked of the shim: a door may go straight to
 * the driver.  False until the first batch has read the configuration. */
static inline bool cbt_quiet(void)
{
    return __atomic_load_n(&cbt_ready, __ATOMIC_RELAXED) && !__atomic_load_n(&cbt_always_validate, __ATOMIC_RELAXED) && !cbt_tp_enabled(b);
}

/* The same for the 1D batch, whose events are enabled on their own. */
static inline bool cbt_quiet1d(void)
{
    return __atomic_load_n(&cbt_ready, __ATOMIC_RELAXED) && !__atomic_load_n(&cbt_always_validate, __ATOMIC_RELAXED) && !cbt_tp_enabled(c);
}

/* The same for the fabric batch, recorded by an event of its own. */
static inline bool cbt_quiet_fabric(void)
{
    return __atomic_load_n(&cbt_ready, __ATOMIC_RELAXED) && !cbt_tp_enabled(fabric);
}

/* The common path behind every door. fail_idx is non-NULL only for the 12.8 ABI. */
CUresult cbt_batch(enum cbt_api api, enum cbt_door door, void *real_fn, size_t num_ops,
                   CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx, unsigned long long flags, CUstream stream,
                   void *caller);

/* The same for the 1D batch (cuMemcpyBatchAsync); fail_idx non-NULL only for the 12.8 ABI. */
CUresult cbt_batch1d(enum cbt_api api, enum cbt_door door, void *real_fn, CUdeviceptr *dsts, CUdeviceptr *srcs,
                     size_t *sizes, size_t count, CUmemcpyAttributes *attrs, size_t *attrs_idxs, size_t num_attrs,
                     size_t *fail_idx, CUstream stream, void *caller);

/* The single-copy form (cuMemcpyWithAttributesAsync): a 1D batch of one copy
 * whose attribute applies from copy 0. */
CUresult cbt_copy1d(enum cbt_api api, enum cbt_door door, void *real_fn, CUdeviceptr dst, CUdeviceptr src,
                    size_t size, CUmemcpyAttributes *attr, CUstream stream, void *caller);

/* The fabric batch (cuFabricCpyBatchAsync): forwarded unchanged, recorded by
 * one cubatchtrace:fabric event (its ops are neither read nor validated). */
CUresult cbt_fabric(enum cbt_api api, enum cbt_door door, void *real_fn, size_t num_ops,
                    CUDA_FABRIC_COPY_BATCH_OP *ops, unsigned long long flags, CUstream stream, void *caller);

/* Configuration read and the provider loaded, as before a first batch; false
 * when the shim is off (CUBATCHTRACE_MODE=off). */
bool cbt_batch_setup(void);

/* A batch node's parameters recorded (door CBT_DOOR_GRAPH_NODE) while a
 * session records 1D batches; its id, 0 when not recorded (src/graph.c). */
uint64_t cbt_record_node(enum cbt_door door, const CUdeviceptr *dsts, const CUdeviceptr *srcs, const size_t *sizes,
                         size_t count, const CUmemcpyAttributes *attrs, const size_t *attrs_idxs, size_t num_attrs,
                         void *caller);

#endif
