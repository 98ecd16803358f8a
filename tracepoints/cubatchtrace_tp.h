/*
 * The cubatchtrace event catalogue (LTTng-UST provider `cubatchtrace`).
 *
 *   cubatchtrace:batch     INFO     one per batch, after the driver answered:
 *                                   batch fields + the first CBT_TP_OPS_PER_EVENT
 *                                   ops as one integer sequence per op field
 *   cubatchtrace:batch_ops INFO     the following ops of a large batch, same layout
 *   cubatchtrace:finding   WARNING  one per validator finding (before forwarding when
 *                                   recorded inline; see src/recorder.h)
 *   cubatchtrace:op        DEBUG    one per op with enumerations decoded
 *                                   (off unless enabled: it costs several times more per op)
 *   cubatchtrace:lookup    DEBUG    a dlsym/cuGetProcAddress answer the shim replaced
 *
 * All events of one batch carry its batch_id (per process): pair them by
 * (vpid, batch_id) without the muxer.  docs/events.md documents every field.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER cubatchtrace

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "cubatchtrace_tp.h"

#include <cubatchtrace/catalog.h>
#include "cubatchtrace_tp_types.h"

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
LTTNG_UST_TRACEPOINT_ENUM(cubatchtrace, rule, LTTNG_UST_TP_ENUM_VALUES(CBT_RULE_LIST(CBT_TP_RULE_VALUE_)))

/* The per-op fields, shared by `batch` and `batch_ops`: one sequence per field. */
#define CBT_TP_OP_SEQUENCES(o)                                                                                \
    lttng_ust_field_integer(uint64_t, ops_first, (o)->first)                                                  \
    lttng_ust_field_sequence(uint8_t, src_type, (o)->src_type, uint32_t, (o)->count)                          \
    lttng_ust_field_sequence(uint8_t, src_mem, (o)->src_mem, uint32_t, (o)->count)                            \
    lttng_ust_field_sequence(int32_t, src_device, (o)->src_device, uint32_t, (o)->count)                      \
    lttng_ust_field_sequence_hex(uint64_t, src_addr, (o)->src_addr, uint32_t, (o)->count)                     \
    lttng_ust_field_sequence(uint64_t, src_row_length, (o)->src_row_length, uint32_t, (o)->count)             \
    lttng_ust_field_sequence(uint64_t, src_layer_height, (o)->src_layer_height, uint32_t, (o)->count)         \
    lttng_ust_field_sequence(uint8_t, src_lochint_type, (o)->src_lochint_type, uint32_t, (o)->count)          \
    lttng_ust_field_sequence(int32_t, src_lochint_id, (o)->src_lochint_id, uint32_t, (o)->count)              \
    lttng_ust_field_sequence(uint64_t, src_x, (o)->src_x, uint32_t, (o)->count)                               \
    lttng_ust_field_sequence(uint64_t, src_y, (o)->src_y, uint32_t, (o)->count)                               \
    lttng_ust_field_sequence(uint64_t, src_z, (o)->src_z, uint32_t, (o)->count)                               \
    lttng_ust_field_sequence(uint8_t, dst_type, (o)->dst_type, uint32_t, (o)->count)                          \
    lttng_ust_field_sequence(uint8_t, dst_mem, (o)->dst_mem, uint32_t, (o)->count)                            \
    lttng_ust_field_sequence(int32_t, dst_device, (o)->dst_device, uint32_t, (o)->count)                      \
    lttng_ust_field_sequence_hex(uint64_t, dst_addr, (o)->dst_addr, uint32_t, (o)->count)                     \
    lttng_ust_field_sequence(uint64_t, dst_row_length, (o)->dst_row_length, uint32_t, (o)->count)             \
    lttng_ust_field_sequence(uint64_t, dst_layer_height, (o)->dst_layer_height, uint32_t, (o)->count)         \
    lttng_ust_field_sequence(uint8_t, dst_lochint_type, (o)->dst_lochint_type, uint32_t, (o)->count)          \
    lttng_ust_field_sequence(int32_t, dst_lochint_id, (o)->dst_lochint_id, uint32_t, (o)->count)              \
    lttng_ust_field_sequence(uint64_t, dst_x, (o)->dst_x, uint32_t, (o)->count)                               \
    lttng_ust_field_sequence(uint64_t, dst_y, (o)->dst_y, uint32_t, (o)->count)                               \
    lttng_ust_field_sequence(uint64_t, dst_z, (o)->dst_z, uint32_t, (o)->count)                               \
    lttng_ust_field_sequence(uint64_t, width, (o)->width, uint32_t, (o)->count)                               \
    lttng_ust_field_sequence(uint64_t, height, (o)->height, uint32_t, (o)->count)                             \
    lttng_ust_field_sequence(uint64_t, depth, (o)->depth, uint32_t, (o)->count)                               \
    lttng_ust_field_sequence(uint8_t, access_order, (o)->access_order, uint32_t, (o)->count)                  \
    lttng_ust_field_sequence_hex(uint32_t, op_flags, (o)->op_flags, uint32_t, (o)->count)                     \
    lttng_ust_field_sequence(uint32_t, elem_size, (o)->elem_size, uint32_t, (o)->count)                       \
    lttng_ust_field_sequence(uint64_t, bytes, (o)->bytes, uint32_t, (o)->count)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, batch,
    LTTNG_UST_TP_ARGS(const struct cbt_tp_batch *, b, const struct cbt_tp_ops *, o, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer(uint64_t, batch_id, b->batch_id)
        lttng_ust_field_enum(cubatchtrace, api, uint8_t, api, b->api)
        lttng_ust_field_enum(cubatchtrace, door, uint8_t, door, b->door)
        lttng_ust_field_enum(cubatchtrace, outcome, uint8_t, outcome, b->outcome)
        lttng_ust_field_enum(cubatchtrace, curesult, uint32_t, result, b->result)
        lttng_ust_field_integer(uint64_t, num_ops, b->num_ops)
        lttng_ust_field_integer_hex(uint64_t, flags, b->flags)
        lttng_ust_field_integer_hex(uint64_t, op_list, b->op_list)
        lttng_ust_field_integer_hex(uint64_t, stream, b->stream)
        lttng_ust_field_integer(uint64_t, stream_id, b->stream_id)
        lttng_ust_field_integer_hex(uint64_t, context, b->context)
        lttng_ust_field_integer(int32_t, device, b->device)
        lttng_ust_field_enum(cubatchtrace, capture, uint8_t, capture, b->capture)
        lttng_ust_field_integer(uint64_t, fail_idx, b->fail_idx)
        lttng_ust_field_integer(uint64_t, driver_ns, b->driver_ns)
        lttng_ust_field_integer_hex(uint64_t, caller, b->caller)
        lttng_ust_field_integer(int32_t, tid, b->tid)
        lttng_ust_field_integer(uint8_t, validated, b->validated)
        lttng_ust_field_integer(uint32_t, findings, b->findings)
        CBT_TP_OP_SEQUENCES(o)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, batch, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, batch_ops,
    LTTNG_UST_TP_ARGS(const struct cbt_tp_ops *, o, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer(uint64_t, batch_id, o->batch_id)
        CBT_TP_OP_SEQUENCES(o)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, batch_ops, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, finding,
    LTTNG_UST_TP_ARGS(const struct cbt_tp_finding *, f, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer(uint64_t, batch_id, f->batch_id)
        lttng_ust_field_enum(cubatchtrace, rule, uint16_t, rule, f->rule)
        lttng_ust_field_enum(cubatchtrace, severity, uint8_t, severity, f->severity)
        lttng_ust_field_enum(cubatchtrace, side, uint8_t, side, f->side)
        lttng_ust_field_integer(uint64_t, op, f->op)
        lttng_ust_field_integer(uint64_t, other_op, f->other_op)
        lttng_ust_field_integer(uint64_t, value, f->value)
        lttng_ust_field_integer(uint64_t, limit, f->limit)
        lttng_ust_field_integer_hex(uint64_t, caller, f->caller)
        lttng_ust_field_integer(int32_t, tid, f->tid)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, finding, LTTNG_UST_TRACEPOINT_LOGLEVEL_WARNING)

LTTNG_UST_TRACEPOINT_EVENT(cubatchtrace, op,
    LTTNG_UST_TP_ARGS(const struct cbt_tp_ops *, o, unsigned int, i, void *, ip),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_unused(ip)
        lttng_ust_field_integer(uint64_t, batch_id, o->batch_id)
        lttng_ust_field_integer(uint64_t, index, o->first + i)
        lttng_ust_field_enum(cubatchtrace, operand, uint8_t, src_type, o->src_type[i])
        lttng_ust_field_enum(cubatchtrace, memkind, uint8_t, src_mem, o->src_mem[i])
        lttng_ust_field_integer(int32_t, src_device, o->src_device[i])
        lttng_ust_field_integer_hex(uint64_t, src_addr, o->src_addr[i])
        lttng_ust_field_integer(uint64_t, src_row_length, o->src_row_length[i])
        lttng_ust_field_integer(uint64_t, src_layer_height, o->src_layer_height[i])
        lttng_ust_field_enum(cubatchtrace, location, uint8_t, src_lochint_type, o->src_lochint_type[i])
        lttng_ust_field_integer(int32_t, src_lochint_id, o->src_lochint_id[i])
        lttng_ust_field_integer(uint64_t, src_x, o->src_x[i])
        lttng_ust_field_integer(uint64_t, src_y, o->src_y[i])
        lttng_ust_field_integer(uint64_t, src_z, o->src_z[i])
        lttng_ust_field_enum(cubatchtrace, operand, uint8_t, dst_type, o->dst_type[i])
        lttng_ust_field_enum(cubatchtrace, memkind, uint8_t, dst_mem, o->dst_mem[i])
        lttng_ust_field_integer(int32_t, dst_device, o->dst_device[i])
        lttng_ust_field_integer_hex(uint64_t, dst_addr, o->dst_addr[i])
        lttng_ust_field_integer(uint64_t, dst_row_length, o->dst_row_length[i])
        lttng_ust_field_integer(uint64_t, dst_layer_height, o->dst_layer_height[i])
        lttng_ust_field_enum(cubatchtrace, location, uint8_t, dst_lochint_type, o->dst_lochint_type[i])
        lttng_ust_field_integer(int32_t, dst_lochint_id, o->dst_lochint_id[i])
        lttng_ust_field_integer(uint64_t, dst_x, o->dst_x[i])
        lttng_ust_field_integer(uint64_t, dst_y, o->dst_y[i])
        lttng_ust_field_integer(uint64_t, dst_z, o->dst_z[i])
        lttng_ust_field_integer(uint64_t, width, o->width[i])
        lttng_ust_field_integer(uint64_t, height, o->height[i])
        lttng_ust_field_integer(uint64_t, depth, o->depth[i])
        lttng_ust_field_enum(cubatchtrace, access_order, uint8_t, access_order, o->access_order[i])
        lttng_ust_field_integer_hex(uint32_t, op_flags, o->op_flags[i])
        lttng_ust_field_integer(uint32_t, elem_size, o->elem_size[i])
        lttng_ust_field_integer(uint64_t, bytes, o->bytes[i])
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cubatchtrace, op, LTTNG_UST_TRACEPOINT_LOGLEVEL_DEBUG)

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

#endif /* CUBATCHTRACE_TP_H */

#include <lttng/tracepoint-event.h>
