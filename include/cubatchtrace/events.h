/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace: the event format, written once.
 *
 * The tracepoint provider (tracepoints/cubatchtrace_tp.h) builds its events
 * from these lists and the reader (tools/) decodes them by the same lists,
 * so the two cannot drift.  Numeric values of the enumerations are those of
 * catalog.h.
 *
 * A batch is recorded on its calling thread as
 *   cubatchtrace:batch       the batch fields, then its first ops (a chunk)
 *   cubatchtrace:batch_ops   each further chunk of CBT_EV_OPS_PER_EVENT ops
 *   cubatchtrace:batch_end   only after a batch recorded before forwarding
 *                            (outcome "pending": an operand the driver may
 *                            crash on): the batch fields once it returned
 *   cubatchtrace:finding     only when the calling thread validated the batch
 *                            (strict mode, CUBATCHTRACE_REPORT=stderr)
 * A 1D batch (cuMemcpyBatchAsync) is recorded the same way, its copies as
 * ops (cbt_copy_op of validate.h: pointer to pointer, extent {size, 1, 1},
 * the copy's attribute resolved into srcAccessOrder, flags and locHints):
 *   cubatchtrace:batch1d     the batch fields, the 1D fields, the first
 *                            CBT_EV_ATTRS_IN_HEADER attributes, the first chunk
 *   cubatchtrace:batch_ops   each further chunk of copies, as for 3D
 *   cubatchtrace:batch_attrs each further CBT_EV_ATTRS_PER_EVENT attributes
 * With CUBATCHTRACE_GPU_TIME=1, each batch forwarded is also timed on its
 * stream, and once its GPU work is over (read back later, on whichever
 * thread makes a batch next, or at exit):
 *   cubatchtrace:gpu_time    the batch's GPU start and duration, or why
 *                            there are none (status), with what the
 *                            bandwidth tables need (self-contained)
 * A batch of a process whose process event says gpu_time 1 and that has no
 * gpu_time event was not read back (the process ended first).
 * A chunk carries its ops as the bytes of CUDA_MEMCPY3D_BATCH_OP (CUDA 13,
 * 112 bytes), the two operand indices of each op (source, destination) and
 * the distinct operands those indices name, as struct cbt_ev_operand; bytes
 * travel as little-endian 64-bit words (a trace reader decodes a sequence
 * element by element: eight times fewer than bytes).  The reader validates
 * the reassembled batch.
 */
#ifndef CUBATCHTRACE_EVENTS_H
#define CUBATCHTRACE_EVENTS_H

#include <stdint.h>

/* Version of the layout below, recorded in every batch (field `format`). */
#define CBT_EV_FORMAT 2

/* Ops per event: a chunk of 64 ops with every operand distinct is about
 * 14.3 KiB (64 * 112 bytes of ops, 64 * 2 of operand indices and 128 * 56 of
 * operands, 14464 bytes, plus the event's header, contexts and sequence
 * lengths), so it fits the smallest sub-buffer `cubatchtrace run` accepts
 * (16 KiB). */
#define CBT_EV_OPS_PER_EVENT 64

/* Bytes of one op as recorded (sizeof(CUDA_MEMCPY3D_BATCH_OP) in CUDA 13),
 * and the 64-bit words they travel as; the same for one operand. */
#define CBT_EV_OP_SIZE 112
#define CBT_EV_OP_WORDS 14
#define CBT_EV_OPERAND_WORDS 7

/*
 * The batch fields, in event order: X(kind, C type, name, enumeration)
 *   kind INT: decimal integer, HEX: hexadecimal integer, ENUM: the named
 *   enumeration of catalog.h (the enumeration column is unused otherwise).
 */
#define CBT_EV_BATCH_FIELDS(X)                                                                                \
    X(INT, uint16_t, format, _)        /* CBT_EV_FORMAT of the recorder */                                   \
    X(INT, uint16_t, rules, _)         /* CBT_RULES_VERSION of the recorder */                               \
    X(INT, uint64_t, batch_id, _)      /* per process, from 0 */                                             \
    X(ENUM, uint8_t, api, api)                                                                               \
    X(ENUM, uint8_t, door, door)                                                                             \
    X(ENUM, uint8_t, outcome, outcome)                                                                       \
    X(ENUM, uint32_t, result, curesult) /* the CUresult the caller saw */                                    \
    X(INT, uint64_t, num_ops, _)       /* numOps as passed */                                                \
    X(INT, uint64_t, ops_recorded, _)  /* ops the chunks of this batch carry (<= num_ops) */                 \
    X(HEX, uint64_t, flags, _)                                                                               \
    X(HEX, uint64_t, op_list, _)                                                                             \
    X(HEX, uint64_t, stream, _)                                                                              \
    X(INT, uint64_t, stream_id, _)     /* cuStreamGetId; 0 when unknown */                                   \
    X(HEX, uint64_t, context, _)       /* cuStreamGetCtx; 0 when unknown */                                  \
    X(INT, int32_t, device, _)         /* the stream's device; -1 when unknown */                            \
    X(ENUM, uint8_t, capture, capture)                                                                       \
    X(INT, uint64_t, fail_idx, _)      /* 12.8 ABI: *failIdx after the call; UINT64_MAX otherwise */         \
    X(INT, uint64_t, driver_ns, _)     /* host time in the driver call */                                    \
    X(HEX, uint64_t, caller, _)        /* return address in the caller */                                    \
    X(INT, int32_t, tid, _)            /* the calling thread */                                              \
    X(INT, int32_t, device_count, _)   /* devices in the system; <= 0 unknown */                             \
    X(INT, uint8_t, validated, _)      /* 1: the calling thread validated it (finding events follow) */     \
    X(INT, uint32_t, findings, _)      /* how many, when validated */

/*
 * The fields of a 1D batch after the batch fields (whose num_ops is count,
 * op_list dsts, flags 0 and ops_recorded the copies recorded).
 */
#define CBT_EV_BATCH1D_FIELDS(X)                                                                              \
    X(HEX, uint64_t, srcs, _)                                                                                \
    X(HEX, uint64_t, sizes, _)                                                                               \
    X(HEX, uint64_t, attrs, _)                                                                               \
    X(HEX, uint64_t, attrs_idxs, _)                                                                          \
    X(INT, uint64_t, num_attrs, _)         /* numAttrs as passed */                                          \
    X(INT, uint64_t, attrs_recorded, _)    /* attributes recorded (<= num_attrs) */                          \
    X(INT, uint8_t, abi, _)                /* CBT_ABI_* bits of validate.h */

/* Attributes: the bytes of CUmemcpyAttributes (24) as three little-endian
 * 64-bit words each, and attrsIdxs as 64-bit values. */
#define CBT_EV_ATTR_SIZE 24
#define CBT_EV_ATTR_WORDS 3
#define CBT_EV_ATTRS_IN_HEADER 8
#define CBT_EV_ATTRS_PER_EVENT 64

/* The attribute fields of `batch1d` and `batch_attrs`. */
#define CBT_EV_ATTRS_FIELDS(X)                                                                                \
    X(attrs_first)     /* index of the first attribute carried */                                            \
    X(attr_words)      /* count * CBT_EV_ATTR_WORDS 64-bit words */                                          \
    X(attr_idxs)       /* count values of attrsIdxs */

/* The fields of one inline finding: X(kind, C type, name, enumeration). */
#define CBT_EV_FINDING_FIELDS(X)                                                                              \
    X(INT, uint64_t, batch_id, _)                                                                            \
    X(ENUM, uint16_t, rule, rule)                                                                            \
    X(ENUM, uint8_t, severity, severity)                                                                     \
    X(ENUM, uint8_t, side, side)                                                                             \
    X(INT, uint64_t, op, _)            /* UINT64_MAX for batch-level rules */                                \
    X(INT, uint64_t, other_op, _)      /* UINT64_MAX unless an overlap */                                    \
    X(INT, uint64_t, value, _)                                                                               \
    X(INT, uint64_t, limit, _)                                                                               \
    X(HEX, uint64_t, caller, _)                                                                              \
    X(INT, int32_t, tid, _)

/*
 * The fields of cubatchtrace:gpu_time: X(kind, C type, name, enumeration).
 * The GPU times are the host's CLOCK_MONOTONIC, relative to the event's
 * own timestamp (the trace's clock), so a reader needs no clock offset:
 * GPU start = event time + start_rel_ns, end = start + gpu_ns.
 */
#define CBT_EV_GPU_FIELDS(X)                                                                                  \
    X(INT, uint64_t, batch_id, _)                                                                            \
    X(ENUM, uint8_t, status, gpu_status)                                                                     \
    X(INT, int64_t, start_rel_ns, _)    /* GPU start minus this event's time (<= 0); 0 unless timed */       \
    X(INT, uint64_t, gpu_ns, _)         /* GPU end minus start; 0 unless timed */                           \
    X(INT, int32_t, tid, _)             /* the batch's calling thread */                                     \
    X(ENUM, uint8_t, api, api)                                                                               \
    X(HEX, uint64_t, stream, _)                                                                              \
    X(INT, uint64_t, stream_id, _)                                                                           \
    X(INT, int32_t, device, _)          /* the stream's device; -1 unknown */                               \
    X(INT, uint64_t, driver_ns, _)      /* the batch's host time in the driver call */                       \
    X(INT, uint64_t, ops, _)            /* ops (copies) recorded */                                          \
    X(INT, uint64_t, bytes, _)          /* bytes they move */                                                \
    X(INT, uint8_t, src_kind, _)        /* enum cbt_memkind of every source; CBT_GPU_MIXED_KIND */          \
    X(INT, uint8_t, dst_kind, _)                                                                             \
    X(INT, int32_t, src_device, _)      /* device of every source; -1 none, CBT_GPU_MIXED_DEVICE */         \
    X(INT, int32_t, dst_device, _)

/* The chunk fields of `batch` and `batch_ops`. */
#define CBT_EV_CHUNK_FIELDS(X)                                                                                \
    X(ops_first)       /* index in the batch of the chunk's first op */                                      \
    X(ops)             /* count * CBT_EV_OP_WORDS 64-bit words: the ops' bytes, little-endian words */       \
    X(operand_of)      /* count 16-bit values: op i's source is operands[v & 0xff], its destination [v >> 8] */ \
    X(operands)        /* k * CBT_EV_OPERAND_WORDS 64-bit words: the struct cbt_ev_operand of each */

#define CBT_EV_STRUCT_MEMBER_(kind, type, name, en) type name;
/* The batch fields as the shim fills them. */
struct cbt_ev_batch {
    CBT_EV_BATCH_FIELDS(CBT_EV_STRUCT_MEMBER_)
};
struct cbt_ev_finding {
    CBT_EV_FINDING_FIELDS(CBT_EV_STRUCT_MEMBER_)
};
struct cbt_ev_batch1d {
    CBT_EV_BATCH1D_FIELDS(CBT_EV_STRUCT_MEMBER_)
};
struct cbt_ev_gpu {
    CBT_EV_GPU_FIELDS(CBT_EV_STRUCT_MEMBER_)
};
#undef CBT_EV_STRUCT_MEMBER_

/* What the shim learned about one operand (struct cbt_operand_info of
 * validate.h, without padding): 56 bytes, little-endian on x86-64/aarch64. */
struct cbt_ev_operand {
    uint64_t alloc_base, alloc_size;
    uint64_t array_width, array_height, array_depth;
    uint32_t elem_size;
    int32_t device;
    uint8_t kind; /* enum cbt_memkind */
    uint8_t reserved[7];
};

/* One chunk as the shim hands it to the tracepoint. */
struct cbt_ev_chunk {
    uint64_t batch_id;
    uint64_t first;          /* ops_first */
    uint32_t count;          /* ops in the chunk */
    uint32_t noperands;      /* distinct operands in the chunk (<= 2 * count) */
    const void *ops;         /* count ops (8-byte aligned) */
    const uint16_t *operand_of; /* count: source | destination << 8 */
    const struct cbt_ev_operand *operands;
};

/* Some attributes of a 1D batch as the shim hands them to the tracepoint. */
struct cbt_ev_attrs {
    uint64_t batch_id;
    uint64_t first;          /* attrs_first */
    uint32_t count;
    const void *attrs;       /* count CUmemcpyAttributes (8-byte aligned) */
    const uint64_t *idxs;    /* count */
};

#endif /* CUBATCHTRACE_EVENTS_H */
