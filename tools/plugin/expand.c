/* SPDX-License-Identifier: MIT */
/*
 * The babeltrace2 plugin `cubatchtrace`, filter component class `expand`
 * (filter.cubatchtrace.expand): cubatchtrace's batches as self-describing
 * events, inside anyone's babeltrace2 graph.
 *
 * Its one input port takes the messages of a graph (after source.ctf.fs or
 * source.ctf.lttng-live and a muxer: time order within each trace); each one
 * goes to the tool's own decoder (read/reader.h: the same event decoding,
 * compact record, reassembly and validation as `cubatchtrace show`).  The
 * events of a batch (formats 3 and 4: b, bs, bo, c, cs, co, ca, operand, stream; format 2's
 * batch, batch_ops, batch1d, batch_attrs; batch_end and the shim's inline
 * finding events) stay here; every other message goes out as it came, the
 * same object (process, gpu_time, lookup, statedump, other providers,
 * stream and packet messages, discarded events).
 *
 * Once a batch is whole (or the input ends before it is), its events go out
 * in a trace of this component's own, one per host of the input (its
 * `hostname` environment entry), on one stream, with a clock that is a copy
 * of the input's: `batch` (or `batch1d`), then an `attr` per attribute, an
 * `op` per op whose chunk came, a `finding` per finding of the read-time
 * validator and an `inline_finding` per finding only the shim made, in the
 * order `cubatchtrace show` prints them and with the same values; and, for
 * each cubatchtrace:gpu_time event (which passes through too), a `gpu`
 * event: its fields joined with its batch's, as show's gpu line.  They are
 * stamped with the time of the event that completed the batch (at the end of
 * the input: the last time seen on that host), so the output stays in time
 * order.  docs/events.md lists their fields.
 *
 * Call sites by babeltrace2's own flt.lttng-utils.debug-info, placed after
 * this filter: every expanded event carries the common context that filter
 * reads, `vpid` and `ip` (the batch's caller), and the statedump events that
 * place the objects (lttng_ust_statedump, lttng_ust_lib, lttng_ust_dl) are
 * copied into the expanded trace too, since debug-info learns them per trace.
 *
 * An input the decoder cannot read (a trace of another catalogue, of a newer
 * format) ends the graph with babeltrace2's error, whose cause names it.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <babeltrace2/babeltrace.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "read/reader.h"

BT_PLUGIN_MODULE();
BT_PLUGIN(cubatchtrace);
BT_PLUGIN_DESCRIPTION("cubatchtrace's CUDA batched copies as self-describing events");
BT_PLUGIN_AUTHOR("cubatchtrace");
BT_PLUGIN_LICENSE("MIT");
BT_PLUGIN_VERSION(0, 1, 0, NULL);

#define EV_PREFIX "cubatchtrace.expand:"

/* The value of inline on a finding event, as cbt_read_batch's finding_inline. */
enum { INLINE_NO = 0, INLINE_YES = 1, INLINE_NOT_COMPARED = 2 };

/* ---------------------------------------------------------------- field classes */

static bool add_mapping(bt_field_class *fc, const char *label, uint64_t v)
{
    bt_integer_range_set_unsigned *rs = bt_integer_range_set_unsigned_create();
    bool ok = rs && bt_integer_range_set_unsigned_add_range(rs, v, v) == BT_INTEGER_RANGE_SET_ADD_RANGE_STATUS_OK &&
              bt_field_class_enumeration_unsigned_add_mapping(fc, label, rs) ==
                  BT_FIELD_CLASS_ENUMERATION_ADD_MAPPING_STATUS_OK;
    bt_integer_range_set_unsigned_put_ref(rs);
    return ok;
}

/* One enumeration field class per list of catalog.h: enum_api(tc), enum_door(tc), ... */
#define MAP_(ID, val, name) ok = ok && add_mapping(fc, name, val);
#define ENUM_FROM_LIST_(en, LIST)                                               \
    static bt_field_class *enum_##en(bt_trace_class *tc)                        \
    {                                                                           \
        bt_field_class *fc = bt_field_class_enumeration_unsigned_create(tc);   \
        bool ok = fc != NULL;                                                   \
        LIST(MAP_)                                                              \
        if (!ok) {                                                              \
            bt_field_class_put_ref(fc);                                         \
            return NULL;                                                        \
        }                                                                       \
        return fc;                                                              \
    }
ENUM_FROM_LIST_(api, CBT_API_LIST)
ENUM_FROM_LIST_(door, CBT_DOOR_LIST)
ENUM_FROM_LIST_(outcome, CBT_OUTCOME_LIST)
ENUM_FROM_LIST_(curesult, CBT_CURESULT_LIST)
ENUM_FROM_LIST_(capture, CBT_CAPTURE_LIST)
ENUM_FROM_LIST_(severity, CBT_SEVERITY_LIST)
ENUM_FROM_LIST_(side, CBT_SIDE_LIST)
ENUM_FROM_LIST_(operand, CBT_OPERAND_LIST)
ENUM_FROM_LIST_(memkind, CBT_MEMKIND_LIST)
ENUM_FROM_LIST_(access_order, CBT_ACCESS_ORDER_LIST)
ENUM_FROM_LIST_(location, CBT_LOCATION_LIST)
ENUM_FROM_LIST_(gpu_status, CBT_GPU_STATUS_LIST)
/* the reader's own lists: a batch's state (assemble.h) and a finding's inline */
#define STATE_LIST_(X)                                                                                        \
    X(_, CBT_BS_COMPLETE, "complete") X(_, CBT_BS_PENDING, "pending") X(_, CBT_BS_INCOMPLETE, "incomplete")  \
    X(_, CBT_BS_MALFORMED, "malformed") X(_, CBT_BS_GIVEN_UP, "given_up") X(_, CBT_BS_NO_HEADER, "no_header")
ENUM_FROM_LIST_(state, STATE_LIST_)
#define INLINE_LIST_(X) X(_, INLINE_NO, "no") X(_, INLINE_YES, "yes") X(_, INLINE_NOT_COMPARED, "not_compared")
ENUM_FROM_LIST_(inline, INLINE_LIST_)
#undef MAP_
#define RULE_MAP_(name, val, sev, text) ok = ok && add_mapping(fc, #name, val);
static bt_field_class *enum_rule(bt_trace_class *tc)
{
    bt_field_class *fc = bt_field_class_enumeration_unsigned_create(tc);
    bool ok = fc != NULL;
    CBT_RULE_LIST(RULE_MAP_)
    if (!ok) {
        bt_field_class_put_ref(fc);
        return NULL;
    }
    return fc;
}
#undef RULE_MAP_

/* A payload being described: members appended in the order they are filled. */
struct fcb {
    bt_trace_class *tc;
    bt_field_class *st;
    bool ok;
};

static void add_member(struct fcb *b, const char *name, bt_field_class *fc)
{
    if (!fc) {
        b->ok = false;
        return;
    }
    if (b->ok && bt_field_class_structure_append_member(b->st, name, fc) !=
                     BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK)
        b->ok = false;
    bt_field_class_put_ref(fc);
}

static void add_u(struct fcb *b, const char *name, bool hex)
{
    bt_field_class *fc = bt_field_class_integer_unsigned_create(b->tc);
    if (fc && hex)
        bt_field_class_integer_set_preferred_display_base(fc, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
    add_member(b, name, fc);
}

static void add_s(struct fcb *b, const char *name) { add_member(b, name, bt_field_class_integer_signed_create(b->tc)); }
static void add_str(struct fcb *b, const char *name) { add_member(b, name, bt_field_class_string_create(b->tc)); }

#define SIGNED_(type) _Generic((type)0, int8_t: 1, int16_t: 1, int32_t: 1, int64_t: 1, default: 0)
#define FIELD_CLASS_(kind, type, name, en) FIELD_CLASS_##kind##_(type, name, en)
#define FIELD_CLASS_INT_(type, name, en)                                                                       \
    if (SIGNED_(type))                                                                                         \
        add_s(b, #name);                                                                                       \
    else                                                                                                       \
        add_u(b, #name, false);
#define FIELD_CLASS_HEX_(type, name, en) add_u(b, #name, true);
#define FIELD_CLASS_ENUM_(type, name, en) add_member(b, #name, enum_##en(b->tc));

/* ---------------------------------------------------------------- the layouts out */

/*
 * The members of the records out besides the batch's (whose fields are
 * events.h's lists), each layout written once: X(kind, enumeration, name,
 * value).  kind: U unsigned, HEX unsigned shown in hex, S signed, ENUM an
 * unsigned with the labels of enum_<enumeration>; value: what fills the
 * member, an expression over the layout's arguments (not evaluated where a
 * layout is only described).
 */

/* Every record starts with where its batch is. */
#define WHERE_LAYOUT_(X, vpid, id, image)                                                                     \
    X(S, _, "vpid", vpid)                                                                                    \
    X(U, _, "id", id)          /* the batch's number within its image */                                    \
    X(HEX, _, "image", image)  /* the image's tag; 0 untagged */

/* One side of an op (side "src" or "dst"): the operand o as passed, and what
 * the shim learnt of its memory (in, struct cbt_operand_info). */
#define OPND_ARR_(o) ((o)->type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
#define OPND_PTR_(o) ((o)->type == CU_MEMCPY_OPERAND_TYPE_POINTER)
#define OPERAND_LAYOUT_(X, side, o, in)                                                                       \
    X(ENUM, operand, side "_type", (o)->type)                                                                \
    X(ENUM, memkind, side "_kind", (in)->kind)                                                               \
    X(S, _, side "_device", (in)->device)                                                                    \
    X(HEX, _, side "_address",                                                                               \
      OPND_ARR_(o) ? (uint64_t)(uintptr_t)(o)->op.array.array : (uint64_t)(o)->op.ptr.ptr)                   \
    X(U, _, side "_offset_x", OPND_ARR_(o) ? (o)->op.array.offset.x : 0)                                     \
    X(U, _, side "_offset_y", OPND_ARR_(o) ? (o)->op.array.offset.y : 0)                                     \
    X(U, _, side "_offset_z", OPND_ARR_(o) ? (o)->op.array.offset.z : 0)                                     \
    X(U, _, side "_rowLength", OPND_PTR_(o) ? (o)->op.ptr.rowLength : 0)                                     \
    X(U, _, side "_layerHeight", OPND_PTR_(o) ? (o)->op.ptr.layerHeight : 0)                                 \
    X(ENUM, location, side "_locHint_type", OPND_PTR_(o) ? (uint64_t)(o)->op.ptr.locHint.type : 0)           \
    X(S, _, side "_locHint_id", OPND_PTR_(o) ? (o)->op.ptr.locHint.id : 0)                                   \
    X(HEX, _, side "_alloc_base", (in)->alloc_base)                                                          \
    X(U, _, side "_alloc_size", (in)->alloc_size)                                                            \
    X(U, _, side "_array_width", (in)->array_width)                                                          \
    X(U, _, side "_array_height", (in)->array_height)                                                        \
    X(U, _, side "_array_depth", (in)->array_depth)                                                          \
    X(U, _, side "_elem_size", (in)->elem_size)

/* Op i of batch rb. */
#define OP_LAYOUT_(X, rb, i)                                                                                  \
    X(U, _, "i", i)                                                                                          \
    OPERAND_LAYOUT_(X, "src", &(rb)->ops[i].src, &(rb)->src[i])                                              \
    OPERAND_LAYOUT_(X, "dst", &(rb)->ops[i].dst, &(rb)->dst[i])                                              \
    X(U, _, "extent_width", (rb)->ops[i].extent.width)                                                       \
    X(U, _, "extent_height", (rb)->ops[i].extent.height)                                                     \
    X(U, _, "extent_depth", (rb)->ops[i].extent.depth)                                                       \
    X(ENUM, access_order, "order", (rb)->ops[i].srcAccessOrder)                                              \
    X(HEX, _, "flags", (rb)->ops[i].flags)                                                                   \
    X(U, _, "bytes", cbt_op_bytes(&(rb)->ops[i], &(rb)->src[i], &(rb)->dst[i]))

/* Attribute k of batch rb (a 1D batch's CUmemcpyAttributes). */
#define ATTR_LAYOUT_(X, rb, k)                                                                                \
    X(U, _, "k", k)                                                                                          \
    X(U, _, "idx", (rb)->attrs_idxs[k])                                                                      \
    X(ENUM, access_order, "order", (rb)->attrs[k].srcAccessOrder)                                            \
    X(HEX, _, "flags", (rb)->attrs[k].flags)                                                                 \
    X(ENUM, location, "src_locHint_type", (rb)->attrs[k].srcLocHint.type)                                    \
    X(S, _, "src_locHint_id", (rb)->attrs[k].srcLocHint.id)                                                  \
    X(ENUM, location, "dst_locHint_type", (rb)->attrs[k].dstLocHint.type)                                    \
    X(S, _, "dst_locHint_id", (rb)->attrs[k].dstLocHint.id)

/* A finding fd (struct cbt_finding); the finding records add "inline". */
#define FINDING_LAYOUT_(X, fd)                                                                                \
    X(ENUM, rule, "rule", (fd)->rule)                                                                        \
    X(ENUM, severity, "severity", (fd)->severity)                                                            \
    X(ENUM, side, "side", (fd)->side)                                                                        \
    X(U, _, "op", (fd)->op)             /* 2^64-1: none */                                                   \
    X(U, _, "other_op", (fd)->other_op) /* 2^64-1: none; the attribute's index for the attr_* rules */       \
    X(U, _, "value", (fd)->value)                                                                            \
    X(U, _, "limit", (fd)->limit)

/* A batch's GPU time g (struct cbt_ev_gpu, the reader's join), as show's gpu
 * line: the memory kinds 255 and the devices -2 when the ops differ. */
#define GPU_LAYOUT_(X, g)                                                                                     \
    X(ENUM, gpu_status, "status", (g)->status)                                                               \
    X(U, _, "gpu_ns", (g)->gpu_ns)                                                                           \
    X(S, _, "start_rel_ns", (g)->start_rel_ns)                                                               \
    X(S, _, "tid", (g)->tid)                                                                                 \
    X(ENUM, api, "api", (g)->api)                                                                            \
    X(HEX, _, "stream", (g)->stream)                                                                         \
    X(U, _, "stream_id", (g)->stream_id)                                                                     \
    X(S, _, "device", (g)->device)                                                                           \
    X(U, _, "driver_ns", (g)->driver_ns)                                                                     \
    X(U, _, "ops", (g)->ops)                                                                                 \
    X(U, _, "bytes", (g)->bytes)                                                                             \
    X(ENUM, memkind, "src_kind", (g)->src_kind)                                                              \
    X(ENUM, memkind, "dst_kind", (g)->dst_kind)                                                              \
    X(S, _, "src_device", (g)->src_device)                                                                   \
    X(S, _, "dst_device", (g)->dst_device)

/* A layout described: its members appended to b's payload (values unused). */
#define DESCRIBE_(kind, en, name, value) DESCRIBE_##kind##_(en, name)
#define DESCRIBE_U_(en, name) add_u(b, name, false);
#define DESCRIBE_HEX_(en, name) add_u(b, name, true);
#define DESCRIBE_S_(en, name) add_s(b, name);
#define DESCRIBE_ENUM_(en, name) add_member(b, name, enum_##en(b->tc));

static void describe_where(struct fcb *b) { WHERE_LAYOUT_(DESCRIBE_, _, _, _) }

static void describe_op(struct fcb *b)
{
    describe_where(b);
    OP_LAYOUT_(DESCRIBE_, _, _)
}

static void describe_attr(struct fcb *b)
{
    describe_where(b);
    ATTR_LAYOUT_(DESCRIBE_, _, _)
}

static void describe_finding(struct fcb *b, bool with_inline)
{
    describe_where(b);
    FINDING_LAYOUT_(DESCRIBE_, _)
    if (with_inline)
        add_member(b, "inline", enum_inline(b->tc));
}

static void describe_gpu(struct fcb *b)
{
    describe_where(b);
    GPU_LAYOUT_(DESCRIBE_, _)
}

static void describe_batch(struct fcb *b, bool d1)
{
    describe_where(b);
    add_str(b, "host");
    add_member(b, "state", enum_state(b->tc));
    CBT_EV_BATCH_FIELDS(FIELD_CLASS_)
    if (d1) {
        CBT_EV_BATCH1D_FIELDS(FIELD_CLASS_)
    }
}

/* ---------------------------------------------------------------- the output traces */

enum { EC_BATCH, EC_BATCH1D, EC_ATTR, EC_OP, EC_FINDING, EC_INLINE_FINDING, EC_GPU, EC_COUNT_ };
static const char *const ec_names[EC_COUNT_] = {
    EV_PREFIX "batch", EV_PREFIX "batch1d", EV_PREFIX "attr", EV_PREFIX "op", EV_PREFIX "finding",
    EV_PREFIX "inline_finding", EV_PREFIX "gpu",
};

/* One host of the input: its trace and stream out, made at its first event. */
struct host {
    char *name;
    bool has_clock;
    bt_stream_class *sc;
    bt_event_class *ec[EC_COUNT_];
    bt_trace *trace;
    bt_stream *stream;
    bool began;
    uint64_t last_cs; /* the latest clock value seen on this host (the input's clock, which ours copies) */
    /* the statedump's event classes of the input and their copies here (NULL: not copied, a type not known) */
    const bt_event_class **dump_in;
    bt_event_class **dump_out;
    uint32_t ndump, capdump;
};

struct expand_iter {
    bt_self_message_iterator *self;
    bt_message_iterator *up;
    bt_trace_class *tc;
    struct cbt_decoder *dec;
    struct host *hosts;
    uint32_t nhosts, caphosts;
    const bt_message *cur; /* the message being decoded */
    /* messages to hand on, in order */
    const bt_message **q;
    uint64_t qhead, qlen, qcap;
    bool up_ended, done;
    bool oom;               /* set by a callback: the next call fails */
};

static bool push(struct expand_iter *it, const bt_message *m)
{
    if (!m)
        return false;
    if (it->qhead + it->qlen == it->qcap) {
        if (it->qhead) { /* room at the front: slide down */
            memmove(it->q, it->q + it->qhead, it->qlen * sizeof *it->q);
            it->qhead = 0;
        } else {
            uint64_t cap = it->qcap ? 2 * it->qcap : 256;
            const bt_message **q = realloc(it->q, cap * sizeof *q);
            if (!q) {
                bt_message_put_ref(m);
                return false;
            }
            it->q = q;
            it->qcap = cap;
        }
    }
    it->q[it->qhead + it->qlen++] = m;
    return true;
}

static const bt_clock_class *clock_of(const bt_message *m)
{
    if (!m || bt_message_get_type(m) != BT_MESSAGE_TYPE_EVENT)
        return NULL;
    const bt_event *ev = bt_message_event_borrow_event_const(m);
    return bt_stream_class_borrow_default_clock_class_const(
        bt_stream_borrow_class_const(bt_event_borrow_stream_const(ev)));
}

/* Our clock: the input's, copied (so that a value means the same time). */
static bt_clock_class *copy_clock(bt_self_component *self, const bt_clock_class *in)
{
    bt_clock_class *cc = bt_clock_class_create(self);
    if (!cc)
        return NULL;
    int64_t s;
    uint64_t c;
    bt_clock_class_set_frequency(cc, bt_clock_class_get_frequency(in));
    bt_clock_class_get_offset(in, &s, &c);
    bt_clock_class_set_offset(cc, s, c);
    bt_clock_class_set_precision(cc, bt_clock_class_get_precision(in));
    bt_clock_class_set_origin_is_unix_epoch(cc, bt_clock_class_origin_is_unix_epoch(in));
    if (bt_clock_class_get_uuid(in))
        bt_clock_class_set_uuid(cc, bt_clock_class_get_uuid(in));
    const char *name = bt_clock_class_get_name(in);
    if (name && bt_clock_class_set_name(cc, name) != BT_CLOCK_CLASS_SET_NAME_STATUS_OK) {
        bt_clock_class_put_ref(cc);
        return NULL;
    }
    return cc;
}

/* The input trace's environment (domain, tracer, hostname...): the expanded
 * trace comes from it, and flt.lttng-utils.debug-info reads an LTTng-UST
 * trace's events alone. */
static bool copy_environment(bt_trace *out, const bt_trace *in)
{
    uint64_t n = in ? bt_trace_get_environment_entry_count(in) : 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *name;
        const bt_value *v;
        bt_trace_borrow_environment_entry_by_index_const(in, i, &name, &v);
        bool ok = bt_value_is_string(v)
                      ? bt_trace_set_environment_entry_string(out, name, bt_value_string_get(v)) ==
                            BT_TRACE_SET_ENVIRONMENT_ENTRY_STATUS_OK
                  : bt_value_is_signed_integer(v)
                      ? bt_trace_set_environment_entry_integer(out, name, bt_value_integer_signed_get(v)) ==
                            BT_TRACE_SET_ENVIRONMENT_ENTRY_STATUS_OK
                      : true;
        if (!ok)
            return false;
    }
    return true;
}

static bool host_make(struct expand_iter *it, struct host *h, const bt_clock_class *in_clock, const bt_trace *in_trace)
{
    bt_self_component *self = bt_self_message_iterator_borrow_component(it->self);
    if (!it->tc && !(it->tc = bt_trace_class_create(self)))
        return false;
    if (!(h->sc = bt_stream_class_create(it->tc)))
        return false;
    if (in_clock) {
        bt_clock_class *cc = copy_clock(self, in_clock);
        if (!cc || bt_stream_class_set_default_clock_class(h->sc, cc) != BT_STREAM_CLASS_SET_DEFAULT_CLOCK_CLASS_STATUS_OK) {
            bt_clock_class_put_ref(cc);
            return false;
        }
        bt_clock_class_put_ref(cc);
        h->has_clock = true;
    }
    /* what flt.lttng-utils.debug-info reads: the process and the address to name */
    struct fcb cx = {.tc = it->tc, .st = bt_field_class_structure_create(it->tc), .ok = true};
    if (!cx.st)
        return false;
    bt_field_class *vpid = bt_field_class_integer_signed_create(it->tc);
    if (vpid)
        bt_field_class_integer_set_field_value_range(vpid, 32); /* as LTTng's, which debug-info asks for */
    add_member(&cx, "vpid", vpid);
    add_u(&cx, "ip", true);
    cx.ok = cx.ok && bt_stream_class_set_event_common_context_field_class(h->sc, cx.st) ==
                         BT_STREAM_CLASS_SET_FIELD_CLASS_STATUS_OK;
    bt_field_class_put_ref(cx.st);
    if (!cx.ok)
        return false;
    for (int k = 0; k < EC_COUNT_; k++) {
        struct fcb b = {.tc = it->tc, .st = bt_field_class_structure_create(it->tc), .ok = true};
        if (!b.st || !(h->ec[k] = bt_event_class_create(h->sc))) {
            bt_field_class_put_ref(b.st);
            return false;
        }
        switch (k) {
        case EC_BATCH: describe_batch(&b, false); break;
        case EC_BATCH1D: describe_batch(&b, true); break;
        case EC_ATTR: describe_attr(&b); break;
        case EC_OP: describe_op(&b); break;
        case EC_FINDING: describe_finding(&b, true); break;
        case EC_GPU: describe_gpu(&b); break;
        default: describe_finding(&b, false); break;
        }
        b.ok = b.ok && bt_event_class_set_name(h->ec[k], ec_names[k]) == BT_EVENT_CLASS_SET_NAME_STATUS_OK &&
               bt_event_class_set_payload_field_class(h->ec[k], b.st) ==
                   BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK;
        bt_field_class_put_ref(b.st);
        if (!b.ok)
            return false;
    }
    if (!(h->trace = bt_trace_create(it->tc)))
        return false;
    char tname[300];
    snprintf(tname, sizeof tname, "cubatchtrace-expand-%s", h->name);
    if (bt_trace_set_name(h->trace, tname) != BT_TRACE_SET_NAME_STATUS_OK || !copy_environment(h->trace, in_trace) ||
        bt_trace_set_environment_entry_string(h->trace, "hostname", h->name) !=
            BT_TRACE_SET_ENVIRONMENT_ENTRY_STATUS_OK ||
        bt_trace_set_environment_entry_string(h->trace, "cubatchtrace_expand", PACKAGE_VERSION) !=
            BT_TRACE_SET_ENVIRONMENT_ENTRY_STATUS_OK)
        return false;
    return (h->stream = bt_stream_create(h->sc, h->trace)) != NULL;
}

/* The reader asks for a host's index the first time an event of it comes
 * (it->cur is that event): its trace out is made then, with its clock. */
static uint32_t on_host(void *ctx, const char *name)
{
    struct expand_iter *it = ctx;
    for (uint32_t i = 0; i < it->nhosts; i++)
        if (strcmp(it->hosts[i].name, name) == 0)
            return i;
    if (it->nhosts == it->caphosts) {
        uint32_t cap = it->caphosts ? 2 * it->caphosts : 4;
        struct host *h = realloc(it->hosts, cap * sizeof *h);
        if (!h) {
            it->oom = true;
            return 0;
        }
        it->hosts = h;
        it->caphosts = cap;
    }
    struct host *h = &it->hosts[it->nhosts];
    memset(h, 0, sizeof *h);
    const bt_trace *in_trace = it->cur && bt_message_get_type(it->cur) == BT_MESSAGE_TYPE_EVENT
                                   ? bt_stream_borrow_trace_const(
                                         bt_event_borrow_stream_const(bt_message_event_borrow_event_const(it->cur)))
                                   : NULL;
    if (!(h->name = strdup(name)) || !host_make(it, h, clock_of(it->cur), in_trace)) {
        it->oom = true;
        return 0;
    }
    if (h->has_clock) /* a batch whole in the host's very first event is stamped with that event's time */
        h->last_cs = bt_clock_snapshot_get_value(bt_message_event_borrow_default_clock_snapshot_const(it->cur));
    return it->nhosts++;
}

/* ---------------------------------------------------------------- the records out */

/* A payload being filled, member by member in the order described. */
struct fw {
    bt_field *pl;
    uint64_t i;
};

static void put_u(struct fw *f, uint64_t v)
{
    bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(f->pl, f->i++), v);
}

static void put_s(struct fw *f, int64_t v)
{
    bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(f->pl, f->i++), v);
}

static bool put_str(struct fw *f, const char *s)
{
    return bt_field_string_set_value(bt_field_structure_borrow_member_field_by_index(f->pl, f->i++), s) ==
           BT_FIELD_STRING_SET_VALUE_STATUS_OK;
}

static void set_context(bt_message *m, int64_t vpid, uint64_t ip)
{
    bt_field *cx = bt_event_borrow_common_context_field(bt_message_event_borrow_event(m));
    bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(cx, 0), vpid);
    bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(cx, 1), ip);
}

/* The stream's beginning, before its first event. */
static bool begin(struct expand_iter *it, struct host *h)
{
    if (h->began)
        return true;
    h->began = push(it, bt_message_stream_beginning_create(it->self, h->stream));
    return h->began;
}

/* A message of event class k on h's stream for batch rb, stamped now; NULL when out of memory. */
static bt_message *record(struct expand_iter *it, struct host *h, int k, struct fw *f, const struct cbt_read_batch *rb)
{
    if (!begin(it, h))
        return NULL;
    bt_message *m = h->has_clock
                        ? bt_message_event_create_with_default_clock_snapshot(it->self, h->ec[k], h->stream, h->last_cs)
                        : bt_message_event_create(it->self, h->ec[k], h->stream);
    if (m) {
        set_context(m, rb->w.vpid, rb->have_header ? rb->h.caller : 0);
        f->pl = bt_event_borrow_payload_field(bt_message_event_borrow_event(m));
        f->i = 0;
    }
    return m;
}

/* A layout filled, member by member into f. */
#define PUT_(kind, en, name, value) PUT_##kind##_(value)
#define PUT_U_(v) put_u(f, (uint64_t)(v));
#define PUT_HEX_(v) put_u(f, (uint64_t)(v));
#define PUT_ENUM_(v) put_u(f, (uint64_t)(v));
#define PUT_S_(v) put_s(f, (int64_t)(v));

static void put_where(struct fw *f, const struct cbt_read_batch *rb)
{
    WHERE_LAYOUT_(PUT_, rb->w.vpid, cbt_batch_number(rb->h.batch_id), rb->w.image)
}

#define FIELD_PUT_(kind, type, name, en)                                                                       \
    if (SIGNED_(type))                                                                                         \
        put_s(&f, (int64_t)src->name);                                                                         \
    else                                                                                                       \
        put_u(&f, (uint64_t)src->name);

static bool out_batch_record(struct expand_iter *it, struct host *h, const struct cbt_read_batch *rb)
{
    bool d1 = rb->have_header && rb->is1d;
    struct fw f;
    bt_message *m = record(it, h, d1 ? EC_BATCH1D : EC_BATCH, &f, rb);
    if (!m)
        return false;
    put_where(&f, rb);
    if (!put_str(&f, h->name)) {
        bt_message_put_ref(m);
        return false;
    }
    put_u(&f, rb->state);
    static const struct cbt_ev_batch none; /* no_header: its ops only */
    const struct cbt_ev_batch *src = rb->have_header ? &rb->h : &none;
    CBT_EV_BATCH_FIELDS(FIELD_PUT_)
    if (d1) {
        const struct cbt_ev_batch1d *src1 = &rb->d;
#define FIELD_PUT1_(kind, type, name, en) put_u(&f, (uint64_t)src1->name);
        CBT_EV_BATCH1D_FIELDS(FIELD_PUT1_)
#undef FIELD_PUT1_
    }
    return push(it, m);
}

static bool out_op(struct expand_iter *it, struct host *h, const struct cbt_read_batch *rb, uint64_t i)
{
    struct fw fv, *f = &fv;
    bt_message *m = record(it, h, EC_OP, f, rb);
    if (!m)
        return false;
    put_where(f, rb);
    OP_LAYOUT_(PUT_, rb, i)
    return push(it, m);
}

static bool out_attr(struct expand_iter *it, struct host *h, const struct cbt_read_batch *rb, uint64_t k)
{
    struct fw fv, *f = &fv;
    bt_message *m = record(it, h, EC_ATTR, f, rb);
    if (!m)
        return false;
    put_where(f, rb);
    ATTR_LAYOUT_(PUT_, rb, k)
    return push(it, m);
}

static bool out_finding(struct expand_iter *it, struct host *h, const struct cbt_read_batch *rb,
                        const struct cbt_finding *fd, int inl)
{
    struct fw fv, *f = &fv;
    bt_message *m = record(it, h, inl < 0 ? EC_INLINE_FINDING : EC_FINDING, f, rb);
    if (!m)
        return false;
    put_where(f, rb);
    FINDING_LAYOUT_(PUT_, fd)
    if (inl >= 0)
        put_u(f, (uint64_t)inl);
    return push(it, m);
}

/* A batch put back together: its records out, in the order of `cubatchtrace show`. */
static void on_batch(void *ctx, const struct cbt_read_batch *rb)
{
    struct expand_iter *it = ctx;
    if (it->oom || rb->w.host >= it->nhosts)
        return;
    struct host *h = &it->hosts[rb->w.host];
    bool ok = out_batch_record(it, h, rb);
    for (uint64_t k = 0; ok && rb->attrs && k < rb->nattrs; k++)
        ok = out_attr(it, h, rb, k);
    uint32_t sp = 0;
    for (uint64_t i = cbt_read_op(rb, 0, &sp); ok && i < rb->nops; i = cbt_read_op(rb, i + 1, &sp))
        ok = out_op(it, h, rb, i);
    for (uint64_t i = 0; ok && i < rb->nfindings; i++)
        ok = out_finding(it, h, rb, &rb->findings[i], rb->finding_inline[i] > 1 ? INLINE_NOT_COMPARED
                                                                               : rb->finding_inline[i]);
    for (uint64_t i = 0; ok && i < rb->ninline_only; i++)
        ok = out_finding(it, h, rb, &rb->inline_only[i], -1);
    if (!ok)
        it->oom = true;
}

/* A gpu_time event, joined with its batch by the reader: a gpu event, stamped
 * with the gpu_time event's time (the message being decoded). */
static void on_gpu(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g)
{
    struct expand_iter *it = ctx;
    if (it->oom || w->host >= it->nhosts)
        return;
    struct host *h = &it->hosts[w->host];
    if (!begin(it, h)) {
        it->oom = true;
        return;
    }
    bt_message *m = h->has_clock
                        ? bt_message_event_create_with_default_clock_snapshot(it->self, h->ec[EC_GPU], h->stream, h->last_cs)
                        : bt_message_event_create(it->self, h->ec[EC_GPU], h->stream);
    if (!m) {
        it->oom = true;
        return;
    }
    set_context(m, w->vpid, 0);
    struct fw fv = {.pl = bt_event_borrow_payload_field(bt_message_event_borrow_event(m))}, *f = &fv;
    WHERE_LAYOUT_(PUT_, w->vpid, cbt_batch_number(g->batch_id), w->image)
    GPU_LAYOUT_(PUT_, g)
    if (!push(it, m))
        it->oom = true;
}

/* ---------------------------------------------------------------- the statedump, copied */

/* A field class of the statedump's payloads, copied: integers, strings,
 * structures and arrays of them; NULL for any other type. */
static bt_field_class *copy_fc(bt_trace_class *tc, const bt_field_class *in)
{
    bt_field_class *fc = NULL;
    switch (bt_field_class_get_type(in)) {
    case BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER:
    case BT_FIELD_CLASS_TYPE_SIGNED_INTEGER:
        fc = bt_field_class_get_type(in) == BT_FIELD_CLASS_TYPE_SIGNED_INTEGER ? bt_field_class_integer_signed_create(tc)
                                                                              : bt_field_class_integer_unsigned_create(tc);
        if (fc) {
            bt_field_class_integer_set_field_value_range(fc, bt_field_class_integer_get_field_value_range(in));
            bt_field_class_integer_set_preferred_display_base(fc, bt_field_class_integer_get_preferred_display_base(in));
        }
        return fc;
    case BT_FIELD_CLASS_TYPE_STRING:
        return bt_field_class_string_create(tc);
    case BT_FIELD_CLASS_TYPE_STRUCTURE: {
        struct fcb b = {.tc = tc, .st = bt_field_class_structure_create(tc), .ok = true};
        uint64_t n = bt_field_class_structure_get_member_count(in);
        for (uint64_t i = 0; b.st && b.ok && i < n; i++) {
            const bt_field_class_structure_member *mb = bt_field_class_structure_borrow_member_by_index_const(in, i);
            add_member(&b, bt_field_class_structure_member_get_name(mb),
                       copy_fc(tc, bt_field_class_structure_member_borrow_field_class_const(mb)));
        }
        if (!b.ok) {
            bt_field_class_put_ref(b.st);
            return NULL;
        }
        return b.st;
    }
    case BT_FIELD_CLASS_TYPE_STATIC_ARRAY:
    case BT_FIELD_CLASS_TYPE_DYNAMIC_ARRAY_WITHOUT_LENGTH_FIELD:
    case BT_FIELD_CLASS_TYPE_DYNAMIC_ARRAY_WITH_LENGTH_FIELD: {
        bt_field_class *el = copy_fc(tc, bt_field_class_array_borrow_element_field_class_const(in));
        if (!el)
            return NULL;
        fc = bt_field_class_get_type(in) == BT_FIELD_CLASS_TYPE_STATIC_ARRAY
                 ? bt_field_class_array_static_create(tc, el, bt_field_class_array_static_get_length(in))
                 : bt_field_class_array_dynamic_create(tc, el, NULL);
        bt_field_class_put_ref(el);
        return fc;
    }
    default:
        return NULL;
    }
}

/* A field's value into its copy (of the class copy_fc made). */
static bool copy_field(bt_field *out, const bt_field *in)
{
    switch (bt_field_get_class_type(in)) {
    case BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER:
        bt_field_integer_unsigned_set_value(out, bt_field_integer_unsigned_get_value(in));
        return true;
    case BT_FIELD_CLASS_TYPE_SIGNED_INTEGER:
        bt_field_integer_signed_set_value(out, bt_field_integer_signed_get_value(in));
        return true;
    case BT_FIELD_CLASS_TYPE_STRING:
        return bt_field_string_set_value(out, bt_field_string_get_value(in)) == BT_FIELD_STRING_SET_VALUE_STATUS_OK;
    case BT_FIELD_CLASS_TYPE_STRUCTURE: {
        uint64_t n = bt_field_class_structure_get_member_count(bt_field_borrow_class_const(in));
        for (uint64_t i = 0; i < n; i++)
            if (!copy_field(bt_field_structure_borrow_member_field_by_index(out, i),
                            bt_field_structure_borrow_member_field_by_index_const(in, i)))
                return false;
        return true;
    }
    case BT_FIELD_CLASS_TYPE_STATIC_ARRAY:
    case BT_FIELD_CLASS_TYPE_DYNAMIC_ARRAY_WITHOUT_LENGTH_FIELD:
    case BT_FIELD_CLASS_TYPE_DYNAMIC_ARRAY_WITH_LENGTH_FIELD: {
        uint64_t n = bt_field_array_get_length(in);
        if (bt_field_get_class_type(out) != BT_FIELD_CLASS_TYPE_STATIC_ARRAY &&
            bt_field_array_dynamic_set_length(out, n) != BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_OK)
            return false;
        for (uint64_t i = 0; i < n; i++)
            if (!copy_field(bt_field_array_borrow_element_field_by_index(out, i),
                            bt_field_array_borrow_element_field_by_index_const(in, i)))
                return false;
        return true;
    }
    default:
        return false;
    }
}

static bool is_dump(const char *name)
{
    return name && (strncmp(name, "lttng_ust_statedump:", 20) == 0 || strncmp(name, "lttng_ust_lib:", 14) == 0 ||
                    strncmp(name, "lttng_ust_dl:", 13) == 0);
}

/* The copy of input event class ec in h's stream class, made at its first
 * event; NULL when its payload is of a type copy_fc does not know. */
static bt_event_class *dump_class(struct expand_iter *it, struct host *h, const bt_event_class *ec)
{
    for (uint32_t i = 0; i < h->ndump; i++)
        if (h->dump_in[i] == ec)
            return h->dump_out[i];
    if (h->ndump == h->capdump) {
        uint32_t cap = h->capdump ? 2 * h->capdump : 16;
        const bt_event_class **in = realloc(h->dump_in, cap * sizeof *in);
        if (in)
            h->dump_in = in;
        bt_event_class **out = in ? realloc(h->dump_out, cap * sizeof *out) : NULL;
        if (!out) {
            it->oom = true;
            return NULL;
        }
        h->dump_out = out;
        h->capdump = cap;
    }
    const bt_field_class *pl = bt_event_class_borrow_payload_field_class_const(ec);
    bt_field_class *fc = pl ? copy_fc(it->tc, pl) : NULL;
    bt_event_class *out = fc ? bt_event_class_create(h->sc) : NULL;
    if (out && (bt_event_class_set_name(out, bt_event_class_get_name(ec)) != BT_EVENT_CLASS_SET_NAME_STATUS_OK ||
                bt_event_class_set_payload_field_class(out, fc) != BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK)) {
        bt_event_class_put_ref(out);
        out = NULL;
    }
    bt_field_class_put_ref(fc);
    h->dump_in[h->ndump] = ec;
    h->dump_out[h->ndump++] = out; /* NULL too: not tried again */
    return out;
}

/* A statedump event of h's input, copied into h's stream (with its vpid). */
static void copy_dump(struct expand_iter *it, struct host *h, const bt_message *m, uint64_t cs)
{
    const bt_event *ev = bt_message_event_borrow_event_const(m);
    bt_event_class *ec = dump_class(it, h, bt_event_borrow_class_const(ev));
    if (!ec || !begin(it, h))
        return;
    bt_message *c = h->has_clock ? bt_message_event_create_with_default_clock_snapshot(it->self, ec, h->stream, cs)
                                 : bt_message_event_create(it->self, ec, h->stream);
    if (!c) {
        it->oom = true;
        return;
    }
    const bt_field *cx = bt_event_borrow_common_context_field_const(ev);
    const bt_field *vpid = cx && bt_field_get_class_type(cx) == BT_FIELD_CLASS_TYPE_STRUCTURE
                               ? bt_field_structure_borrow_member_field_by_name_const(cx, "vpid")
                               : NULL;
    int64_t pid = -1;
    if (vpid && bt_field_get_class_type(vpid) == BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)
        pid = bt_field_integer_signed_get_value(vpid);
    else if (vpid && bt_field_get_class_type(vpid) == BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)
        pid = (int64_t)bt_field_integer_unsigned_get_value(vpid);
    set_context(c, pid, 0);
    if (!copy_field(bt_event_borrow_payload_field(bt_message_event_borrow_event(c)), bt_event_borrow_payload_field_const(ev))) {
        bt_message_put_ref(c);
        return;
    }
    if (!push(it, c))
        it->oom = true;
}

/* ---------------------------------------------------------------- the iterator */

static bt_message_iterator_class_initialize_method_status
expand_iter_init(bt_self_message_iterator *self, bt_self_message_iterator_configuration *cfg,
                 bt_self_component_port_output *port)
{
    (void)cfg;
    (void)port;
    struct expand_iter *it = calloc(1, sizeof *it);
    if (!it)
        return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    it->self = self;
    bt_self_component_filter *comp = bt_self_component_get_data(bt_self_message_iterator_borrow_component(self));
    bt_self_component_port_input *in = bt_self_component_filter_borrow_input_port_by_name(comp, "in");
    if (bt_message_iterator_create_from_message_iterator(self, in, &it->up) !=
        BT_MESSAGE_ITERATOR_CREATE_FROM_MESSAGE_ITERATOR_STATUS_OK) {
        free(it);
        return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
    }
    const struct cbt_read_out out = {.ctx = it, .host = on_host, .gpu_time = on_gpu};
    if (!(it->dec = cbt_decoder_new(&out, on_batch, it))) {
        bt_message_iterator_put_ref(it->up);
        free(it);
        return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    }
    bt_self_message_iterator_set_data(self, it);
    return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static void expand_iter_finalize(bt_self_message_iterator *self)
{
    struct expand_iter *it = bt_self_message_iterator_get_data(self);
    if (!it)
        return;
    cbt_decoder_free(it->dec);
    for (uint64_t i = 0; i < it->qlen; i++)
        bt_message_put_ref(it->q[it->qhead + i]);
    free(it->q);
    for (uint32_t i = 0; i < it->nhosts; i++) {
        struct host *h = &it->hosts[i];
        bt_stream_put_ref(h->stream);
        bt_trace_put_ref(h->trace);
        for (int k = 0; k < EC_COUNT_; k++)
            bt_event_class_put_ref(h->ec[k]);
        for (uint32_t k = 0; k < h->ndump; k++)
            bt_event_class_put_ref(h->dump_out[k]);
        free(h->dump_in);
        free(h->dump_out);
        bt_stream_class_put_ref(h->sc);
        free(h->name);
    }
    free(it->hosts);
    bt_trace_class_put_ref(it->tc);
    bt_message_iterator_put_ref(it->up);
    free(it);
}

static const char *host_name_of(const bt_message *m)
{
    const bt_stream *s = bt_event_borrow_stream_const(bt_message_event_borrow_event_const(m));
    const bt_value *v = bt_trace_borrow_environment_entry_value_by_name_const(bt_stream_borrow_trace_const(s),
                                                                             "hostname");
    return v && bt_value_is_string(v) ? bt_value_string_get(v) : "?";
}

/* The host of an event message's trace, when met already. */
static struct host *host_of(struct expand_iter *it, const bt_message *m)
{
    const char *name = host_name_of(m);
    for (uint32_t i = 0; i < it->nhosts; i++)
        if (strcmp(it->hosts[i].name, name) == 0)
            return &it->hosts[i];
    return NULL;
}

/* One message of the input: decoded; handed on unless it was part of a batch. */
static bool take(struct expand_iter *it, const bt_message *m)
{
    bool event = bt_message_get_type(m) == BT_MESSAGE_TYPE_EVENT;
    const bt_clock_class *cc = clock_of(m);
    uint64_t cs = cc ? bt_clock_snapshot_get_value(bt_message_event_borrow_default_clock_snapshot_const(m)) : 0;
    bool dump = event && is_dump(bt_event_class_get_name(bt_event_borrow_class_const(bt_message_event_borrow_event_const(m))));
    it->cur = m;
    struct host *h = event ? host_of(it, m) : NULL;
    if (!h && dump) { /* the statedump comes before the process's first batch */
        uint32_t k = on_host(it, host_name_of(m));
        h = it->oom ? NULL : &it->hosts[k];
    }
    if (h)
        h->last_cs = cs;
    enum cbt_decoded d = cbt_decoder_message(it->dec, m);
    it->cur = NULL;
    if (event && !h && (h = host_of(it, m))) /* the host met just now */
        h->last_cs = cs;
    if (d == CBT_DECODED_ERROR) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_MESSAGE_ITERATOR(it->self, "cubatchtrace: %s",
                                                                   cbt_decoder_error(it->dec));
        bt_message_put_ref(m);
        return false;
    }
    if (d == CBT_DECODED_BATCH) {
        bt_message_put_ref(m);
        return true;
    }
    if (dump && h)
        copy_dump(it, h, m, cs);
    return push(it, m);
}

/* The end of the input: the batches still waiting, then the end of our streams. */
static bool finish(struct expand_iter *it)
{
    cbt_decoder_finish(it->dec);
    for (uint32_t i = 0; !it->oom && i < it->nhosts; i++) {
        struct host *h = &it->hosts[i];
        if (!h->began)
            continue;
        bt_message *se = bt_message_stream_end_create(it->self, h->stream);
        if (!push(it, se))
            return false;
    }
    return !it->oom;
}

static bt_message_iterator_class_next_method_status expand_iter_next(bt_self_message_iterator *self,
                                                                     bt_message_array_const msgs, uint64_t capacity,
                                                                     uint64_t *count)
{
    struct expand_iter *it = bt_self_message_iterator_get_data(self);
    while (it->qlen == 0 && !it->done) {
        if (it->up_ended) {
            if (!finish(it)) {
                BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_MESSAGE_ITERATOR(self, "cubatchtrace: out of memory");
                return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR;
            }
            it->done = true;
            break;
        }
        bt_message_array_const in;
        uint64_t n = 0;
        bt_message_iterator_next_status st = bt_message_iterator_next(it->up, &in, &n);
        if (st == BT_MESSAGE_ITERATOR_NEXT_STATUS_OK || st == BT_MESSAGE_ITERATOR_NEXT_STATUS_END) {
            /* Some of babeltrace2's sources, on a damaged stream, report an
             * error and still answer OK or END: the error stays with the
             * thread, and the next library call made with it pending aborts
             * the process.  It is the input's error: end with it. */
            const bt_error *pending = bt_current_thread_take_error();
            if (pending) {
                bt_current_thread_move_error(pending);
                for (uint64_t i = 0; st == BT_MESSAGE_ITERATOR_NEXT_STATUS_OK && i < n; i++)
                    bt_message_put_ref(in[i]);
                BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_MESSAGE_ITERATOR(
                    self, "cubatchtrace: the input reported an error (the cause below) yet went on: read no further");
                return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_ERROR;
            }
        }
        switch (st) {
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: {
            bool ok = true;
            for (uint64_t i = 0; i < n; i++) {
                if (ok)
                    ok = take(it, in[i]);
                else
                    bt_message_put_ref(in[i]);
            }
            if (ok && it->oom) {
                BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_MESSAGE_ITERATOR(self, "cubatchtrace: out of memory");
                ok = false;
            }
            if (!ok)
                return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_ERROR;
            break;
        }
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
            it->up_ended = true;
            break;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
            return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_AGAIN;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
            return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR;
        default:
            return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_ERROR;
        }
    }
    if (it->qlen == 0)
        return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
    uint64_t n = it->qlen < capacity ? it->qlen : capacity;
    memcpy(msgs, it->q + it->qhead, n * sizeof *msgs);
    it->qhead += n;
    it->qlen -= n;
    if (it->qlen == 0)
        it->qhead = 0;
    *count = n;
    return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
}

/* ---------------------------------------------------------------- the component */

static bt_component_class_initialize_method_status expand_init(bt_self_component_filter *self,
                                                               bt_self_component_filter_configuration *cfg,
                                                               const bt_value *params, void *data)
{
    (void)cfg;
    (void)data;
    if (params && bt_value_is_map(params) && bt_value_map_get_size(params) > 0) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(bt_self_component_filter_as_self_component(self),
                                                            "filter.cubatchtrace.expand takes no parameters");
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
    }
    if (bt_self_component_filter_add_input_port(self, "in", NULL, NULL) != BT_SELF_COMPONENT_ADD_PORT_STATUS_OK ||
        bt_self_component_filter_add_output_port(self, "out", NULL, NULL) != BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    /* what the iterators borrow the input port from */
    bt_self_component_set_data(bt_self_component_filter_as_self_component(self), self);
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

BT_PLUGIN_FILTER_COMPONENT_CLASS(expand, expand_iter_next);
BT_PLUGIN_FILTER_COMPONENT_CLASS_DESCRIPTION(expand, "cubatchtrace's batches, ops and findings as events of their own");
BT_PLUGIN_FILTER_COMPONENT_CLASS_HELP(
    expand,
    "Decodes cubatchtrace's batch events (the compact record and format 2) with the cubatchtrace tool's own\n"
    "reader and validator and emits, per batch, cubatchtrace.expand:batch (or batch1d), attr, op, finding and\n"
    "inline_finding events with every field by name, and per gpu_time event a gpu event joined with its\n"
    "batch, in a trace of their own per host. Every other message passes through untouched. Place it after\n"
    "a muxer (the babeltrace2 command line does). No parameters.\n"
    "See docs/events.md of cubatchtrace.");
BT_PLUGIN_FILTER_COMPONENT_CLASS_INITIALIZE_METHOD(expand, expand_init);
BT_PLUGIN_FILTER_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD(expand, expand_iter_init);
BT_PLUGIN_FILTER_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_FINALIZE_METHOD(expand, expand_iter_finalize);
