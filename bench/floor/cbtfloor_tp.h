/* SPDX-License-Identifier: MIT */
/*
 * The floor's one event (LTTng-UST provider `cbtfloor`): what the least a
 * batch recorder could write costs.  Five batch fields and the op list as
 * raw bytes, nothing else; bench/floor/floor.c defines the probe.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER cbtfloor

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "cbtfloor_tp.h"

#if !defined(CBTFLOOR_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define CBTFLOOR_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

#ifndef CBTFLOOR_1D_DEFINED
#define CBTFLOOR_1D_DEFINED
/* What cbtfloor:batch1d records (more arguments than a tracepoint takes). */
struct cbtfloor_1d {
    uint64_t count, stream, driver_ns;
    uint32_t result, array_bytes, attrs_bytes, idxs_bytes;
    const uint8_t *dsts, *srcs, *sizes, *attrs, *idxs;
};
#endif

LTTNG_UST_TRACEPOINT_EVENT(cbtfloor, batch,
    LTTNG_UST_TP_ARGS(uint64_t, num_ops, uint64_t, flags, uint64_t, stream, uint32_t, result,
                      uint64_t, driver_ns, const uint8_t *, ops, uint32_t, ops_bytes),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, num_ops, num_ops)
        lttng_ust_field_integer_hex(uint64_t, flags, flags)
        lttng_ust_field_integer_hex(uint64_t, stream, stream)
        lttng_ust_field_integer(uint32_t, result, result)
        lttng_ust_field_integer(uint64_t, driver_ns, driver_ns)
        lttng_ust_field_sequence(uint8_t, ops, ops, uint32_t, ops_bytes)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cbtfloor, batch, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* The 1D call: four batch fields and the arrays as raw bytes (dsts, srcs and
 * sizes: 8 bytes a copy; the attributes with their start indices: 32 bytes each). */
LTTNG_UST_TRACEPOINT_EVENT(cbtfloor, batch1d,
    LTTNG_UST_TP_ARGS(const struct cbtfloor_1d *, a),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, count, a->count)
        lttng_ust_field_integer_hex(uint64_t, stream, a->stream)
        lttng_ust_field_integer(uint32_t, result, a->result)
        lttng_ust_field_integer(uint64_t, driver_ns, a->driver_ns)
        lttng_ust_field_sequence(uint8_t, dsts, a->dsts, uint32_t, a->array_bytes)
        lttng_ust_field_sequence(uint8_t, srcs, a->srcs, uint32_t, a->array_bytes)
        lttng_ust_field_sequence(uint8_t, sizes, a->sizes, uint32_t, a->array_bytes)
        lttng_ust_field_sequence(uint8_t, attrs, a->attrs, uint32_t, a->attrs_bytes)
        lttng_ust_field_sequence(uint8_t, idxs, a->idxs, uint32_t, a->idxs_bytes)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cbtfloor, batch1d, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

/* One launch of an executable graph (cuGraphLaunch): the least a recorder
 * of graph launches writes (the shim's cubatchtrace:graph launch record
 * holds these and its batch id, thread, caller and kind). */
LTTNG_UST_TRACEPOINT_EVENT(cbtfloor, launch,
    LTTNG_UST_TP_ARGS(uint64_t, exec, uint64_t, stream, uint32_t, result, uint64_t, driver_ns),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, exec, exec)
        lttng_ust_field_integer_hex(uint64_t, stream, stream)
        lttng_ust_field_integer(uint32_t, result, result)
        lttng_ust_field_integer(uint64_t, driver_ns, driver_ns)
    )
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(cbtfloor, launch, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

#endif /* CBTFLOOR_TP_H */

#include <lttng/tracepoint-event.h>
