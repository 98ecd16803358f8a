/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace: the event format, written once.
 *
 * The tracepoint provider (tracepoints/cubatchtrace_tp.h) builds its events
 * from these lists and the reader (tools/) decodes them by the same lists,
 * so the two cannot drift.  Numeric values of the enumerations are those of
 * catalog.h.
 *
 * The shim writes format 4 (the compact record, below the format-2 lists).
 * In format 2, which the reader still reads (and whose batch fields are the
 * reader's view of every batch), a batch was recorded on its calling thread as
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
 * (one event per batch, in format 2).  A batch of a process whose process
 * event says gpu_time 1 and whose GPU time never came was not read back
 * (the process ended first).
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

/*
 * Format 4, the compact record (what the shim writes).  A batch costs its
 * calling thread little more than LTTng's floor.  Each field of an event
 * costs the writer a call into LTTng's ring buffer (two for a sequence),
 * so a batch event has as few as it can: a small batch is one sequence of
 * 64-bit words, t, holding its head words, a varint header, its ops or
 * copy arrays as passed and its operand references (the floor's event has
 * seven writes; this, two).  What repeats lives in per-thread dictionaries
 * that the reader carries.
 *
 *   cubatchtrace:b        a 3D batch of at most CBT_EV_INLINE3D ops read:
 *                         t (h, hdr, the ops, their refs)
 *   cubatchtrace:bs       a larger 3D batch: its first chunk of ops
 *                         (CBT_EV_CHUNK3D or more) as a sequence of their own, then t (h, hdr, the
 *                         refs of those ops)
 *   cubatchtrace:bo       each further chunk of a 3D batch: id, first, ops, refs
 *   cubatchtrace:c        a 1D batch of at most CBT_EV_INLINE1D copies and
 *                         CBT_EV_INLINE_ATTRS attributes read: t (h, hdr,
 *                         the attributes, their attrsIdxs, then dsts, srcs
 *                         and sizes, the refs)
 *   cubatchtrace:cs       a larger 1D batch: its attributes read (all of
 *                         them when at most CBT_EV_ATTRS1D, else none:
 *                         cubatchtrace:ca came before), its first chunk
 *                         of copies (dsts, srcs, sizes as
 *                         passed), then t (h, hdr, the attrsIdxs of the
 *                         attributes it carries, the refs of its copies)
 *   cubatchtrace:co       each further chunk of copies: id, first, dsts, srcs, sizes, refs
 *   cubatchtrace:ca       attributes of a 1D batch that reads more than
 *                         CBT_EV_ATTRS1D of them, written before its `cs`:
 *                         id, first, attrs, attr_idxs
 *   cubatchtrace:operand  a dictionary entry: what the shim learned of an
 *                         operand (struct cbt_ev_operand), under an index of
 *                         the writing thread's dictionary, written before
 *                         the first batch event that refers to it
 *   cubatchtrace:stream   a stream as the writing thread last described it,
 *                         under a small index the batch events name it by:
 *                         handle, id, context, device, and the process's
 *                         device count and rules version; written before
 *                         the first batch event on it and whenever that changes
 * and, as in format 2: batch_end (pending batches), finding, lookup,
 * process; and gpu_time, now the GPU times of up to CBT_EV_GPU_TIMES
 * batches per event (struct cbt_ev_gpu_times below).
 *
 * t: 64-bit words, its bytes little-endian, in this order:
 *   h      CBT_EV_HEAD_WORDS words: id, w, driver_ns (the host time in the
 *          driver call) and caller (CBT_H_*); id is the batch id (process
 *          image tag << 32 | number)
 *   hdr    (below), zero-padded to a whole word; its length follows from
 *          its mask (cbt_ev_hdr_len)
 *   b:     the ops read (CUDA_MEMCPY3D_BATCH_OP, ops_recorded of them)
 *   c:     the attributes read (CUmemcpyAttributes, 24 bytes each), their
 *          attrsIdxs (8 bytes each), then dsts, srcs and sizes of the
 *          copies read (8 bytes each)
 *   cs:    the attrsIdxs of the attributes the event carries (8 bytes each)
 *   refs   two 16-bit dictionary indices per op or copy the event carries
 *          (source, destination), zero-padded to a whole word; none when
 *          CBT_W_SAME_REFS says the batch's refs equal those of the
 *          thread's previous single-chunk batch (the reader keeps them), or
 *          when the operands could not be learned
 * The dictionaries of a thread are keyed by `key` = the image tag << 32 |
 * the thread id (the kernel's, as w holds it), so that the reader needs no
 * context to decode.  Each thread writes its dictionary entries again on
 * first use after CBT_EV_DICT_REFRESH_NS, so that a session that starts
 * late learns them.
 *
 * Format 3 (the first compact record, which the reader still reads) had b
 * and c alone, each with the ops (copy arrays) as sequences, id, w,
 * driver_ns and caller as four integer fields, and hdr, refs and c's
 * attr_idxs as sequences of their own.
 */
#define CBT_EV_FORMAT 4
#define CBT_EV_FORMAT3 3    /* the first compact record, read still */
#define CBT_EV_INLINE3D 8       /* ops a b event carries in t; more: bs */
#define CBT_EV_INLINE1D 32      /* copies a c event carries in t; more: cs */
#define CBT_EV_INLINE_ATTRS 8   /* attributes a c event carries in t; more: cs */
#define CBT_EV_HEAD_WORDS 4     /* h, the head of t: */
#define CBT_H_ID 0
#define CBT_H_W 1
#define CBT_H_DRIVER_NS 2
#define CBT_H_CALLER 3
/* Ops (copies) per bs/bo (cs/co) event: the chunk.  The writer takes the
 * largest that the sub-buffer CUBATCHTRACE_SUBBUF_SIZE names holds (LTTng
 * drops an event larger than a sub-buffer), from the least below (which a
 * 16 KiB sub-buffer, LTTng's per-process default, holds) to the most.  The
 * reader needs no chunk size: a batch whose first event carries every op
 * read is a single-chunk batch. */
#define CBT_EV_CHUNK3D 128      /* the least: 128 x (112 + 4) + 1.4 KiB fits 16 KiB */
#define CBT_EV_CHUNK1D 384      /* the least: 384 x (24 + 4) + attributes fits 16 KiB */
#define CBT_EV_CHUNK3D_MAX 1024 /* the most: 1024 x (112 + 4) bytes, a 128 KiB sub-buffer */
#define CBT_EV_CHUNK1D_MAX 1024 /* the most: 1024 x (24 + 4) bytes and the attributes, 64 KiB */
#define CBT_EV_CHUNK_SLACK 2048 /* bytes of a sub-buffer left to the event's header, contexts, h and hdr */
#define CBT_EV_ATTR_BYTES1D (CBT_EV_ATTRS1D * (24 + 8)) /* a cs event's attributes and attrsIdxs at most */
#define CBT_EV_ATTRS1D 128  /* attributes a c event carries (128 x 24 bytes) */
#define CBT_EV_DICT 1024    /* operand dictionary entries per thread */
#define CBT_EV_DICT_REFRESH_NS 1000000000ull

/* The packed word `w` of b and c. */
#define CBT_W_API(w) ((unsigned)((w) & 0xf))
#define CBT_W_DOOR(w) ((unsigned)((w) >> 4 & 0xf))
#define CBT_W_OUTCOME(w) ((unsigned)((w) >> 8 & 0x7))
#define CBT_W_CAPTURE(w) ((unsigned)((w) >> 11 & 0x7)) /* 0..2 as enum cbt_capture; 7 unknown */
#define CBT_W_VALIDATED (1ull << 14)
#define CBT_W_SAME_REFS (1ull << 15)
#define CBT_W_RESULT(w) ((unsigned)((w) >> 16 & 0xffff)) /* 0xffff: the result is in hdr */
#define CBT_W_TID(w) ((int32_t)(uint32_t)((w) >> 32))
#define CBT_W_RESULT_ESCAPE 0xffffu
/* ... and made: capture as enum cbt_capture (anything past 2 becomes 7,
 * unknown); result already below CBT_W_RESULT_ESCAPE or equal to it (its
 * low 16 bits are kept); the writers of src/ use this one packing. */
#define CBT_W_PACK(api, door, outcome, capture, validated, same_refs, result, tid)                                   \
    ((uint64_t)((api) & 0xf) | (uint64_t)((door) & 0xf) << 4 | (uint64_t)((outcome) & 0x7) << 8 |                \
     (uint64_t)((capture) <= 2 ? (capture) : 7) << 11 | ((validated) ? CBT_W_VALIDATED : 0) |                    \
     ((same_refs) ? CBT_W_SAME_REFS : 0) | (uint64_t)((result) & 0xffff) << 16 | (uint64_t)(uint32_t)(tid) << 32)

/*
 * hdr: a mask byte, then unsigned LEB128 varints, in this order:
 *   3D: num_ops, op_list, stream index
 *   1D: count, dsts, stream index, then srcs, sizes, attrs and attrs_idxs,
 *       each as the zigzag-coded difference from dsts
 * then, each only when its bit of the mask is set (else the value in
 * parentheses):
 *   CBT_HDR_RECORDED   ops_recorded (num_ops): the ops (copies) the batch's
 *                      events carry, over all its chunks
 *   CBT_HDR_NUM_ATTRS  1D: num_attrs (1)
 *   CBT_HDR_ATTRS_READ 1D: the attributes read (num_attrs)
 *   CBT_HDR_FLAGS      3D: flags; 1D: the CBT_ABI_* bits (0)
 *   CBT_HDR_FAIL_IDX   *failIdx after the call (none: UINT64_MAX)
 *   CBT_HDR_FINDINGS   findings of the calling thread's validator (0)
 *   CBT_HDR_RESULT     the result, when w cannot hold it
 * and one bit that has no value:
 *   CBT_HDR_GPU        the batch's GPU time follows, in a later
 *                      cubatchtrace:gpu_time event (CUBATCHTRACE_GPU_TIME):
 *                      the reader keeps what the batch moves until it comes
 * The stream index names the writing thread's latest cubatchtrace:stream
 * of that index (CBT_EV_NO_STREAM: none).
 */
#define CBT_HDR_RECORDED 0x01u
#define CBT_HDR_NUM_ATTRS 0x02u
#define CBT_HDR_ATTRS_READ 0x04u
#define CBT_HDR_FLAGS 0x08u
#define CBT_HDR_FAIL_IDX 0x10u
#define CBT_HDR_FINDINGS 0x20u
#define CBT_HDR_RESULT 0x40u
#define CBT_HDR_GPU 0x80u
#define CBT_EV_NO_STREAM 255
#define CBT_EV_STREAMS 16 /* stream indices of a thread: 0 .. 15 */
#define CBT_EV_HDR_MAX 170 /* bytes: 16 varints of at most 10 */
/* t's words at most: h, hdr, what follows it (the attrsIdxs of a cs event
 * are the most), the refs of a chunk */
#define CBT_EV_TAIL_WORDS                                                                                     \
    (CBT_EV_HEAD_WORDS + (CBT_EV_HDR_MAX + 7) / 8 + CBT_EV_ATTRS1D +                                          \
     (4 * (CBT_EV_CHUNK1D_MAX > CBT_EV_CHUNK3D_MAX ? CBT_EV_CHUNK1D_MAX : CBT_EV_CHUNK3D_MAX) + 7) / 8)

/* The varints of hdr every batch has after the mask byte: 3 (3D), 7 (1D). */
#define CBT_HDR_FIXED(d1) ((d1) ? 7u : 3u)

/* The length of the hdr at t[0, n) (t's bytes after h): the mask byte, then the
 * varints every batch has and one for each bit of the mask (n when cut short). */
static inline unsigned long cbt_ev_hdr_len(const uint8_t *t, unsigned long n, int d1)
{
    if (n == 0)
        return 0;
    unsigned values = CBT_HDR_FIXED(d1) + (unsigned)__builtin_popcount(t[0] & 0x7fu);
    unsigned long i = 1;
    while (values && i < n)
        if (!(t[i++] & 0x80))
            values--;
    return i;
}

/* Version of the format-2 layout below, which the reader still reads. */
#define CBT_EV_FORMAT2 2

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
 * The GPU time of one batch: X(kind, C type, name, enumeration).  The shim
 * writes those of up to CBT_EV_GPU_TIMES batches in one cubatchtrace:gpu_time
 * event, as four sequences of that many elements by these names (struct
 * cbt_ev_gpu_times: LTTng-UST charges the writer per event much more than
 * per element, and the read-back finds batches a slice at a time); traces
 * of earlier versions have one batch per event, these fields as integers
 * (the status an enumeration), and the reader reads both.
 * The GPU times are the host's CLOCK_MONOTONIC, relative to the event's
 * own timestamp (the trace's clock), so a reader needs no clock offset:
 * GPU start = event time + start_rel_ns, end = start + gpu_ns.  What else
 * a reader says of the batch (its thread, stream, ops, bytes, memory kinds)
 * it takes from the batch's own record, whose hdr mask has CBT_HDR_GPU.
 */
#define CBT_EV_GPU_TIME_FIELDS(X)                                                                             \
    X(INT, uint64_t, batch_id, _)                                                                            \
    X(ENUM, uint8_t, status, gpu_status)                                                                     \
    X(INT, int64_t, start_rel_ns, _)    /* GPU start minus this event's time (<= 0); 0 unless timed */       \
    X(INT, uint64_t, gpu_ns, _)         /* GPU end minus start; 0 unless timed */

/*
 * A batch's GPU time as the reader hands it on: the event's fields, then
 * the batch's, from its record.  Traces recorded before the short event
 * carry all of these in the gpu_time event itself (the reader reads both).
 */
#define CBT_EV_GPU_FIELDS(X)                                                                                  \
    CBT_EV_GPU_TIME_FIELDS(X)                                                                                \
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

/*
 * cubatchtrace:fabric, one per cuFabricCpyBatchAsync call (CUDA 13.5),
 * written once the driver returned: X(kind, C type, name, enumeration).
 * The ops are not read (their operands may be logical endpoints of another
 * node), so a fabric batch is counted apart from the copies it makes.
 */
#define CBT_EV_FABRIC_FIELDS(X)                                                                               \
    X(ENUM, uint8_t, api, api)          /* cuFabricCpyBatchAsync or its _ptsz */                             \
    X(ENUM, uint8_t, door, door)                                                                             \
    X(INT, uint64_t, num_ops, _)                                                                             \
    X(HEX, uint64_t, op_list, _)                                                                             \
    X(INT, uint64_t, flags, _)                                                                               \
    X(HEX, uint64_t, stream, _)                                                                              \
    X(ENUM, uint32_t, result, curesult)                                                                      \
    X(INT, uint64_t, driver_ns, _)      /* host time in the driver call */                                   \
    X(HEX, uint64_t, caller, _)                                                                              \
    X(INT, int32_t, tid, _)

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
struct cbt_ev_fabric {
    CBT_EV_FABRIC_FIELDS(CBT_EV_STRUCT_MEMBER_)
};
struct cbt_ev_batch1d {
    CBT_EV_BATCH1D_FIELDS(CBT_EV_STRUCT_MEMBER_)
};
struct cbt_ev_gpu_time {
    CBT_EV_GPU_TIME_FIELDS(CBT_EV_STRUCT_MEMBER_)
};
/* cubatchtrace:gpu_time as the shim writes it: the GPU times of n batches,
 * 1 <= n <= CBT_EV_GPU_TIMES, one array per field (status: enum
 * cbt_gpu_status). */
#define CBT_EV_GPU_TIMES 32
/* cubatchtrace:stack (CUBATCHTRACE_STACK=N, run --stack N): at most this
 * many return addresses, the batch's direct caller first. */
#define CBT_EV_STACK_MAX 16
#define CBT_EV_GPU_TIMES_MEMBER_(kind, type, name, en) type name[CBT_EV_GPU_TIMES];
struct cbt_ev_gpu_times {
    uint8_t n;
    CBT_EV_GPU_TIME_FIELDS(CBT_EV_GPU_TIMES_MEMBER_)
};
#undef CBT_EV_GPU_TIMES_MEMBER_
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

/* A compact record (format 4) as the shim hands it to the tracepoints
 * b, bo, c, co and ca: what an event does not carry is ignored. */
struct cbt_ev_rec {
    uint64_t h[CBT_EV_HEAD_WORDS]; /* id, w, driver_ns, caller (t's head); bo, co, ca: h[CBT_H_ID] only */
    uint64_t first;              /* bo, co, ca: index of the first op, copy or attribute */
    const uint64_t *tail;        /* b, bs, c, cs: t, tail_words words (h first) */
    uint32_t tail_words;
    uint32_t count;              /* ops (bs, bo) or copies (cs, co) this event carries */
    const void *ops;             /* bs, bo: count ops (8-byte aligned) */
    const uint64_t *dsts, *srcs, *sizes; /* cs, co: count each */
    const uint16_t *refs;        /* bo, co: 2 * nrefs_ops: source, destination */
    uint32_t nrefs_ops;          /* count, or 0 */
    uint32_t nattrs;             /* cs, ca: attributes carried */
    const void *attrs;           /* nattrs CUmemcpyAttributes (8-byte aligned) */
    const uint64_t *attr_idxs;   /* ca: nattrs */
};

/*
 * cubatchtrace:graph, CUDA graphs that hold batch nodes (CUDA 13.5,
 * src/graph.c).  A batch node's copies are recorded when the node is made
 * or changed, or when an executable graph is instantiated from a graph
 * whose batch nodes the shim did not see made (captured, cloned, inside a
 * child graph), as a 1D batch of door graph_node (its id a batch id, no
 * stream, every copy, a size of 0 disabling one).  The graph event says:
 *   kind CBT_GRAPH_EXEC    an executable graph's batch nodes as they now
 *                          are (instantiated, updated, a node's params set
 *                          in it): exec, and in defs the id of each node's
 *                          latest record; id: a record of the graph's own
 *                          (an earlier cuGraphExecNodeSetParams) it no
 *                          longer runs and nothing else can (0: none)
 *   kind CBT_GRAPH_LAUNCH  a cuGraphLaunch of such a graph: id (a batch id
 *                          of its own), exec, stream, result, tid,
 *                          driver_ns, caller (every kind has it); the
 *                          reader makes of it one batch of door
 *                          graph_launch holding the copies of exec's
 *                          latest defs whose size is not 0.  The shim
 *                          writes these as cubatchtrace:launch events
 *                          (cbt_ev_launch_pack, below); the reader reads
 *                          both
 *   kind CBT_GRAPH_NODE_GONE  a batch node destroyed: id, its latest record
 *   kind CBT_GRAPH_EXEC_GONE  an executable graph destroyed (or about to be
 *                          instantiated anew): exec; defs its own records,
 *                          which nothing runs any more
 *   kind CBT_GRAPH_CAPTURED   a batch call the driver took into the graph
 *                          of a capture (a driver with batch nodes may):
 *                          id the batch's, exec the graph being captured,
 *                          stream; written just before the batch's record,
 *                          which is also the node's (its copies run at
 *                          launches, not at the call)
 *   kind CBT_GRAPH_LAUNCH_CAPTURED  a launch as CBT_GRAPH_LAUNCH, onto a
 *                          stream being captured (a driver with batch
 *                          nodes asked): it ran nothing now; the graph
 *                          captured holds its copies, counted at that
 *                          graph's launches
 */
#define CBT_GRAPH_EXEC 0
#define CBT_GRAPH_LAUNCH 1
#define CBT_GRAPH_NODE_GONE 2
#define CBT_GRAPH_EXEC_GONE 3
#define CBT_GRAPH_CAPTURED 4
#define CBT_GRAPH_LAUNCH_CAPTURED 5
struct cbt_ev_graph {
    uint8_t kind;
    uint64_t id, exec, stream;
    uint32_t result;
    int32_t tid;
    uint64_t driver_ns;   /* launch: host time in cuGraphLaunch */
    uint64_t caller;      /* return address in the caller */
    uint32_t ndefs;
    const uint64_t *defs;
};

/*
 * cubatchtrace:launch: a graph event of kind CBT_GRAPH_LAUNCH in one array
 * `rec` of CBT_EV_LAUNCH_WORDS 64-bit words (one write for the recorder):
 * the id, exec, stream, driver_ns, caller, then result in the low and tid
 * in the high 32 bits of the last.
 */
#define CBT_EV_LAUNCH_WORDS 6
enum { CBT_L_ID, CBT_L_EXEC, CBT_L_STREAM, CBT_L_DRIVER_NS, CBT_L_CALLER, CBT_L_RESULT_TID };
static inline void cbt_ev_launch_pack(uint64_t rec[CBT_EV_LAUNCH_WORDS], const struct cbt_ev_graph *g)
{
    rec[CBT_L_ID] = g->id, rec[CBT_L_EXEC] = g->exec, rec[CBT_L_STREAM] = g->stream;
    rec[CBT_L_DRIVER_NS] = g->driver_ns, rec[CBT_L_CALLER] = g->caller;
    rec[CBT_L_RESULT_TID] = (uint64_t)g->result | (uint64_t)(uint32_t)g->tid << 32;
}
static inline void cbt_ev_launch_unpack(struct cbt_ev_graph *g, const uint64_t rec[CBT_EV_LAUNCH_WORDS])
{
    *g = (struct cbt_ev_graph){
        .kind = CBT_GRAPH_LAUNCH, .id = rec[CBT_L_ID], .exec = rec[CBT_L_EXEC], .stream = rec[CBT_L_STREAM],
        .driver_ns = rec[CBT_L_DRIVER_NS], .caller = rec[CBT_L_CALLER],
        .result = (uint32_t)rec[CBT_L_RESULT_TID], .tid = (int32_t)(uint32_t)(rec[CBT_L_RESULT_TID] >> 32),
    };
}

/* A stream description (cubatchtrace:stream) as the shim hands it to the tracepoint. */
struct cbt_ev_stream {
    uint64_t key;           /* image tag << 32 | thread id */
    uint8_t index;          /* what the thread's batch events name it by */
    uint64_t handle, stream_id, context;
    int32_t device;         /* -1 unknown */
    int32_t device_count;   /* devices in the system; <= 0 unknown */
    uint16_t rules;         /* CBT_RULES_VERSION of the recorder */
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
