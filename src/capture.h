/* SPDX-License-Identifier: MIT */
/*
 * What the calling thread captures of a batch (src/capture.c): the ops as
 * far as the driver reads them, the operands learned from the driver, and
 * their recording into LTTng's ring buffer in chunks of
 * CBT_EV_OPS_PER_EVENT ops (<cubatchtrace/events.h>).
 */
#ifndef CBT_CAPTURE_H
#define CBT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cubatchtrace/events.h>

#include <cubatchtrace/validate.h>

#include "driver.h"

/* The calling thread's capture of its current batch (per thread, reused). */
struct cbt_captured;

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

/* Learn the operands of ops[0, n): NULL when memory for it cannot be had. */
struct cbt_captured *cbt_capture_ops(const struct cbt_real *real, size_t n, const CUDA_MEMCPY3D_BATCH_OP *ops);

/* Strict mode and the stderr report: a pageable host operand whose footprint
 * runs into an unreadable page is recorded as unmapped (a system call a side). */
void cbt_capture_check_footprints(struct cbt_captured *c, const CUDA_MEMCPY3D_BATCH_OP *ops);

/* Is any operand one the driver may crash on (unmapped memory)? */
bool cbt_capture_risky(const struct cbt_captured *c);

/* The operands of op i, for the validator: src[i], dst[i] for every op captured. */
void cbt_capture_expand(const struct cbt_captured *c, struct cbt_operand_info *src, struct cbt_operand_info *dst);

/* Bytes op i moves (as the validator counts them). */
uint64_t cbt_capture_bytes(const struct cbt_captured *c, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t i);

/* What a gpu_time event says of the batch's ops: how many, their bytes, and
 * the memory kind and device of their sources and destinations when all
 * share one (CBT_GPU_MIXED_KIND, CBT_GPU_MIXED_DEVICE otherwise). */
void cbt_capture_gpu_summary(const struct cbt_captured *c, const CUDA_MEMCPY3D_BATCH_OP *ops, struct cbt_ev_gpu *g);

/* What a 1D batch records besides its copies (as ops). */
struct cbt_rec1d {
    const struct cbt_ev_batch1d *fields;
    const CUmemcpyAttributes *attrs;
    const size_t *attrs_idxs;
    size_t attrs_read; /* attributes recorded */
};

/* Write the batch (header + chunks) into the ring buffer, when enabled;
 * d: NULL for a 3D batch. */
void cbt_capture_record(const struct cbt_captured *c, const struct cbt_ev_batch *b, const CUDA_MEMCPY3D_BATCH_OP *ops,
                        const struct cbt_rec1d *d, void *caller);

/* The result of a batch written before it was forwarded (outcome "pending"). */
void cbt_capture_record_end(const struct cbt_ev_batch *b, void *caller);

/* A finding of the calling thread's validator. */
void cbt_capture_record_finding(const struct cbt_ev_finding *f, void *caller);

/* Once, before the first batch: what a forked child must reset. */
void cbt_capture_init(void);

/* The calling thread's kernel thread id, cached (right in a forked child too). */
int32_t cbt_tid(void);

/* CLOCK_MONOTONIC in ns. */
uint64_t cbt_mono_ns(void);

#endif
