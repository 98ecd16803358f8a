/* SPDX-License-Identifier: MIT */
/*
 * The cubatchtrace event catalogue (LTTng-UST provider `cubatchtrace`).
 * The fields of each event are the lists of <cubatchtrace/events.h>;
 * docs/events.md documents them.  Every event takes an unused `ip`
 * argument: the batch events' is the caller's return address; the
 * dictionary, gpu_time and process events', the shim's own.
 *
 * Format 4, what the shim writes (the compact record, <cubatchtrace/events.h>):
 *   cubatchtrace:b          INFO     one per 3D batch: id, w, driver_ns, caller, hdr, its first ops and refs
 *   cubatchtrace:bo         INFO     each further chunk of a large 3D batch
 *   cubatchtrace:c          INFO     one per 1D batch: the same header, its attributes, its first copies and refs
 *   cubatchtrace:co         INFO     each further chunk of copies
 *   cubatchtrace:ca         INFO     the attributes of a 1D batch that reads more than CBT_EV_ATTRS1D
 *   cubatchtrace:operand    INFO     an entry of the writing thread's operand dictionary
 *   cubatchtrace:stream     INFO     a stream as the writing thread describes it
 *   cubatchtrace:process    INFO     once per process image: host, rank, image
 *   cubatchtrace:gpu_time   INFO     the GPU times of up to 32 batches, read back later (CUBATCHTRACE_GPU_TIME=N)
 *   cubatchtrace:stack      INFO     the callers of the next batch on the thread (CUBATCHTRACE_STACK=N only)
 *   cubatchtrace:fabric     INFO     one per cuFabricCpyBatchAsync (CUDA 13.5): api, op count, result
 *   cubatchtrace:graph      INFO     a CUDA graph holding batch nodes: its nodes, a launch onto a capture (CUDA 13.5)
 *   cubatchtrace:launch     INFO     a launch of such a graph: id, graph, stream, driver_ns, caller, result and tid
 * Format 2 (still read by the tool; the shim no longer writes the first four):
 *   cubatchtrace:batch      INFO     one per batch, on the calling thread: batch fields + first chunk of ops
 *   cubatchtrace:batch_ops  INFO     each further chunk of a large batch
 *   cubatchtrace:batch1d    INFO     one per 1D batch: batch fields, 1D fields, first attributes, first chunk
 *   cubatchtrace:batch_attrs INFO    each further group of attributes of a 1D batch
 *   cubatchtrace:batch_end  INFO     the result of a batch recorded before forwarding (outcome "pending")
 *   cubatchtrace:finding    WARNING  a finding of the calling thread's validator (strict mode, stderr report)
 *   cubatchtrace:gpu_time   INFO     the GPU time of a batch (one per event), read back later
 *   cubatchtrace:lookup     DEBUG    a dlsym/cuGetProcAddress answer the shim replaced
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER cubatchtrace

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "cubatchtrace_tp.h"

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/events.h>

#if !defined(CUBATCHTRACE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define CUBATCHTRACE_TP_H

#include <lttng/tracepoint.h>

#define CBT_TP_ENUM_VALUE_(ID, val, name) lttng_ust_field_enum_value(name, val)
#define CBT_TP_RULE_VALUE_(name, val, sev, text) lttng_ust_field_enum_value(#name, val)

LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, api, LTTNG_UST_TP_ENUM_VALUES(CBT_API_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, door, LTTNG_UST_TP_ENUM_VALUES(CBT_DOOR_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, outcome, LTTNG_UST_TP_ENUM_VALUES(CBT_OUTCOME_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, capture, LTTNG_UST_TP_ENUM_VALUES(CBT_CAPTURE_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, curesult, LTTNG_UST_TP_ENUM_VALUES(CBT_CURESULT_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, operand, LTTNG_UST_TP_ENUM_VALUES(CBT_OPERAND_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, memkind, LTTNG_UST_TP_ENUM_VALUES(CBT_MEMKIND_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, access_order, LTTNG_UST_TP_ENUM_VALUES(CBT_ACCESS_ORDER_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, location, LTTNG_UST_TP_ENUM_VALUES(CBT_LOCATION_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, side, LTTNG_UST_TP_ENUM_VALUES(CBT_SIDE_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, severity, LTTNG_UST_TP_ENUM_VALUES(CBT_SEVERITY_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, gpu_status, LTTNG_UST_TP_ENUM_VALUES(CBT_GPU_STATUS_LIST(CBT_TP_ENUM_VALUE_)))
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, rule, LTTNG_UST_TP_ENUM_VALUES(CBT_RULE_LIST(CBT_TP_RULE_VALUE_)))

/* One field of the lists in <cubatchtrace/events.h>, from the record `r`. */
#define CBT_TP_FIELD_INT(type, name, en) lttng_ust_field_integer(type, name, r->name)
#define CBT_TP_FIELD_HEX(type, name, en) lttng_ust_field_integer_hex(type, name, r->name)
#define CBT_TP_FIELD_ENUM(type, name, en) lttng_ust_field_enum(cubatchtrace, en, type, name, r->name)
#define CBT_TP_FIELD(kind, type, name, en) CBT_TP_FIELD_##kind(type, name, en)

/* A chunk of ops (struct cbt_ev_chunk `c`): the CBT_EV_CHUNK_FIELDS list. */
#define CBT_TP_CHUNK(c)                                                                                       \
    lttng_ust_field_integer(uint64_t, ops_first, (c)->first)                                                  \
    lttng_ust_field_sequence_hex(uint64_t, ops, (const uint64_t *)(c)->ops, uint32_t,                         \
                                 (c)->count * CBT_EV_OP_WORDS)                                                \
    lttng_ust_field_sequence_hex(uint16_t, operand_of, (c)->operand_of, uint32_t, (c)->count)                 \
    lttng_ust_field_sequence_hex(uint64_t, operands, (const uint64_t *)(c)->operands, uint32_t,               \
                                 (c)->noperands * CBT_EV_OPERAND_WORDS)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, batch,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_batch *, r, const struct cbt_ev_chunk *, c, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_EV_BATCH_FIELDS(CBT_TP_FIELD)
        CBT_TP_CHUNK(c)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, batch, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)
/* The version of cubatchtrace that recorded a trace, in its metadata (the batch
 * event class's model.emf.uri): no event carries it. */
LTTNG_UST_TRACEPOINT_MODEL_EMF_URI(cubatchtrace, batch, "urn:cubatchtrace:" CBT_TP_VERSION)

/* Attributes of a 1D batch (struct cbt_ev_attrs `a`): the CBT_EV_ATTRS_FIELDS list. */
#define CBT_TP_ATTRS(a)                                                                                       \
    lttng_ust_field_integer(uint64_t, attrs_first, (a)->first)                                                \
    lttng_ust_field_sequence_hex(uint64_t, attr_words, (const uint64_t *)(a)->attrs, uint32_t,                \
                                 (a)->count * CBT_EV_ATTR_WORDS)                                              \
    lttng_ust_field_sequence(uint64_t, attr_idxs, (a)->idxs, uint32_t, (a)->count)

/* The 1D fields, from the record `d`. */
#define CBT_TP_FIELD1D_INT(type, name, en) lttng_ust_field_integer(type, name, d->name)
#define CBT_TP_FIELD1D_HEX(type, name, en) lttng_ust_field_integer_hex(type, name, d->name)
#define CBT_TP_FIELD1D(kind, type, name, en) CBT_TP_FIELD1D_##kind(type, name, en)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, batch1d,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_batch *, r, const struct cbt_ev_batch1d *, d,
                      const struct cbt_ev_attrs *, a, const struct cbt_ev_chunk *, c, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_EV_BATCH_FIELDS(CBT_TP_FIELD)
        CBT_EV_BATCH1D_FIELDS(CBT_TP_FIELD1D)
        CBT_TP_ATTRS(a)
        CBT_TP_CHUNK(c)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, batch1d, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)
LTTNG_UST_TRACEPOINT_MODEL_EMF_URI(cubatchtrace, batch1d, "urn:cubatchtrace:" CBT_TP_VERSION)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, batch_attrs,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_attrs *, a, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer(uint64_t, batch_id, a->batch_id)
        CBT_TP_ATTRS(a)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, batch_attrs, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, batch_ops,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_chunk *, c, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer(uint64_t, batch_id, c->batch_id)
        CBT_TP_CHUNK(c)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, batch_ops, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, batch_end,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_batch *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_EV_BATCH_FIELDS(CBT_TP_FIELD)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, batch_end, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, finding,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_finding *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_EV_FINDING_FIELDS(CBT_TP_FIELD)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, finding, LTTNG_UST_TRACEPOINT_LOGLEVEL_WARNING)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, fabric,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_fabric *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_EV_FABRIC_FIELDS(CBT_TP_FIELD)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, fabric, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, lookup,
    LTTNG_UST_TP_ARGS(const char *, via, const char *, symbol, int, version, uint64_t, flags, int, api, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_string(via, via)
        lttng_ust_field_string(symbol, symbol)
        lttng_ust_field_integer(int32_t, version, version)
        lttng_ust_field_integer_hex(uint64_t, flags, flags)
        lttng_ust_field_integer(int32_t, api, api)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, lookup, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)

/* ---- format 4: the compact record (struct cbt_ev_rec `r`) ---- */

/* Last in its event: h, hdr, and what follows (events.h). */
#define CBT_TP_REC_TAIL lttng_ust_field_sequence(uint64_t, t, r->tail, uint16_t, r->tail_words)
#define CBT_TP_REC_ID lttng_ust_field_integer(uint64_t, id, r->h[CBT_H_ID])
#define CBT_TP_REC_REFS lttng_ust_field_sequence(uint16_t, refs, r->refs, uint16_t, 2 * r->nrefs_ops)
#define CBT_TP_REC_OPS                                                                                        \
    lttng_ust_field_sequence_hex(uint64_t, ops, (const uint64_t *)r->ops, uint32_t, r->count * CBT_EV_OP_WORDS)
#define CBT_TP_REC_COPIES                                                                                     \
    lttng_ust_field_sequence_hex(uint64_t, dsts, r->dsts, uint32_t, r->count)                                 \
    lttng_ust_field_sequence_hex(uint64_t, srcs, r->srcs, uint32_t, r->count)                                 \
    lttng_ust_field_sequence(uint64_t, sizes, r->sizes, uint32_t, r->count)
#define CBT_TP_REC_ATTRS                                                                                      \
    lttng_ust_field_sequence_hex(uint64_t, attrs, (const uint64_t *)r->attrs, uint16_t,                       \
                                 r->nattrs * CBT_EV_ATTR_WORDS)

/* A small 3D batch: everything in t (its words: the same field as CBT_TP_REC_TAIL). */
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, b,
    LTTNG_UST_TP_ARGS(const uint64_t *, t, uint16_t, words, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_sequence(uint64_t, t, t, uint16_t, words)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, b, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)
LTTNG_UST_TRACEPOINT_MODEL_EMF_URI(cubatchtrace, b, "urn:cubatchtrace:" CBT_TP_VERSION)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, bs,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_rec *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_TP_REC_OPS
        CBT_TP_REC_TAIL
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, bs, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, bo,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_rec *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_TP_REC_ID
        lttng_ust_field_integer(uint64_t, first, r->first)
        CBT_TP_REC_OPS
        CBT_TP_REC_REFS
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, bo, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* A small 1D batch: everything in t (its words: the same field as CBT_TP_REC_TAIL). */
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, c,
    LTTNG_UST_TP_ARGS(const uint64_t *, t, uint16_t, words, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_sequence(uint64_t, t, t, uint16_t, words)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, c, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)
LTTNG_UST_TRACEPOINT_MODEL_EMF_URI(cubatchtrace, c, "urn:cubatchtrace:" CBT_TP_VERSION)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, cs,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_rec *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_TP_REC_ATTRS
        CBT_TP_REC_COPIES
        CBT_TP_REC_TAIL
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, cs, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, co,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_rec *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_TP_REC_ID
        lttng_ust_field_integer(uint64_t, first, r->first)
        CBT_TP_REC_COPIES
        CBT_TP_REC_REFS
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, co, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, ca,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_rec *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_TP_REC_ID
        lttng_ust_field_integer(uint64_t, first, r->first)
        CBT_TP_REC_ATTRS
        lttng_ust_field_sequence(uint64_t, attr_idxs, r->attr_idxs, uint16_t, r->nattrs)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, ca, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* An entry of the writing thread's operand dictionary: key (image tag << 32
 * | thread id), index, and the struct cbt_ev_operand as 64-bit words. */
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, operand,
    LTTNG_UST_TP_ARGS(uint64_t, key, uint16_t, index, const struct cbt_ev_operand *, o, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer_hex(uint64_t, key, key)
        lttng_ust_field_integer(uint16_t, index, index)
        lttng_ust_field_array_hex(uint64_t, info, (const uint64_t *)o, CBT_EV_OPERAND_WORDS)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, operand, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* A stream as the writing thread describes it (struct cbt_ev_stream `s`; key as for operand). */
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, stream,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_stream *, s, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer_hex(uint64_t, key, s->key)
        lttng_ust_field_integer(uint8_t, index, s->index)
        lttng_ust_field_integer_hex(uint64_t, handle, s->handle)
        lttng_ust_field_integer(uint64_t, stream_id, s->stream_id)
        lttng_ust_field_integer_hex(uint64_t, context, s->context)
        lttng_ust_field_integer(int32_t, device, s->device)
        lttng_ust_field_integer(int32_t, device_count, s->device_count)
        lttng_ust_field_integer(uint16_t, rules, s->rules)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, stream, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* The GPU times of 1 to CBT_EV_GPU_TIMES batches, once read back
 * (CUBATCHTRACE_GPU_TIME=N): their ids, statuses and times, one sequence
 * per field (struct cbt_ev_gpu_times); the rest is in each batch's record
 * (CBT_HDR_GPU). */
#define CBT_TP_GPU_SEQ_(kind, type, name, en) lttng_ust_field_sequence(type, name, r->name, uint8_t, r->n)
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, gpu_time,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_gpu_times *, r, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        CBT_EV_GPU_TIME_FIELDS(CBT_TP_GPU_SEQ_)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, gpu_time, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* The short stack of the batch that follows on the same thread (written
 * just before it; CUBATCHTRACE_STACK=N, run --stack N): tid, and up to N
 * return addresses, the batch's caller first, then its callers.  Written
 * only when asked for: without it a trace holds no such event. */
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, stack,
    LTTNG_UST_TP_ARGS(int32_t, tid, const uint64_t *, frames, uint8_t, n, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer(int32_t, tid, tid)
        lttng_ust_field_sequence_hex(uint64_t, frames, frames, uint8_t, n)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, stack, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* A CUDA graph holding batch nodes (struct cbt_ev_graph of events.h): an
 * executable graph's batch nodes, a launch of it, a node or graph gone. */
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, graph,
    LTTNG_UST_TP_ARGS(const struct cbt_ev_graph *, g, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer(uint8_t, kind, g->kind)
        lttng_ust_field_integer_hex(uint64_t, id, g->id)
        lttng_ust_field_integer_hex(uint64_t, exec, g->exec)
        lttng_ust_field_integer_hex(uint64_t, stream, g->stream)
        lttng_ust_field_integer(uint32_t, result, g->result)
        lttng_ust_field_integer(int32_t, tid, g->tid)
        lttng_ust_field_integer(uint64_t, driver_ns, g->driver_ns)
        lttng_ust_field_integer_hex(uint64_t, caller, g->caller)
        lttng_ust_field_sequence_hex(uint64_t, defs, g->defs, uint32_t, g->ndefs)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, graph, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* A launch of an executable graph holding batch nodes, not onto a stream
 * being captured (cbt_ev_launch_pack of events.h): one array of six
 * 64-bit words, a single write, where eight fields would cost a recorder
 * eight (bench/graph-launch.sh). */
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, launch,
    LTTNG_UST_TP_ARGS(const uint64_t *, rec, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_array_hex(uint64_t, rec, rec, CBT_EV_LAUNCH_WORDS)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, launch, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* Once per process image (again after exec and in a forked child), when the
 * shim loads the provider: who the process is in a job of many processes and
 * hosts, and which image (src/process.c). */
LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, process,
    LTTNG_UST_TP_ARGS(const char *, hostname, int64_t, rank, const char *, rank_var, int, gpu_time, uint32_t, gpu_every,
                      uint64_t, image,
                      uint64_t, pid_ns, uint64_t, start_ns, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_string(hostname, hostname)
        lttng_ust_field_integer(int64_t, rank, rank)
        lttng_ust_field_string(rank_var, rank_var)
        lttng_ust_field_integer(uint8_t, gpu_time, gpu_time) /* 1: CUBATCHTRACE_GPU_TIME on */
        lttng_ust_field_integer(uint32_t, gpu_every, gpu_every) /* one batch in N of each stream timed (0: off) */
        lttng_ust_field_integer_hex(uint64_t, image, image)  /* the process image; its high 32 bits tag its batch ids */
        lttng_ust_field_integer(uint64_t, pid_ns, pid_ns)    /* inode of its pid namespace; 0 unknown */
        lttng_ust_field_integer(uint64_t, start_ns, start_ns) /* CLOCK_REALTIME when the image started */
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, process, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

#endif /* CUBATCHTRACE_TP_H */

#include <lttng/tracepoint-event.h>
