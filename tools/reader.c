/*
 * Reading traces with libbabeltrace2: one source.ctf.fs component per trace
 * directory (source.ctf.lttng-live for net:// URLs) and our own sink, which
 * pulls every source port round-robin without a muxer: all the events of one
 * batch share (vpid, batch_id), so agg.c pairs them without a global order.
 *
 * Field indices are looked up once per event class; the per-event path only
 * borrows members by index.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

#include "cbt.h"

enum ev_kind { EK_OTHER, EK_BATCH, EK_BATCH_OPS, EK_FINDING, EK_CBT_OTHER, EK_BIN_INFO };

/* payload fields, by kind */
enum {
    F_BATCH_ID, F_API, F_DOOR, F_OUTCOME, F_RESULT, F_NUM_OPS, F_OP_LIST, F_STREAM, F_STREAM_ID, F_DEVICE,
    F_DRIVER_NS, F_CALLER,
    F_OPS_FIRST, F_SRC_TYPE, F_SRC_MEM, F_SRC_DEV, F_DST_TYPE, F_DST_MEM, F_DST_DEV, F_ORDER, F_BYTES,
    F_COUNT_
};
static const char *const batch_fields[F_COUNT_] = {
    "batch_id", "api", "door", "outcome", "result", "num_ops", "op_list", "stream", "stream_id", "device",
    "driver_ns", "caller",
    "ops_first", "src_type", "src_mem", "src_device", "dst_type", "dst_mem", "dst_device", "access_order", "bytes",
};
enum { G_BATCH_ID, G_RULE, G_SEVERITY, G_SIDE, G_OP, G_OTHER_OP, G_VALUE, G_LIMIT, G_CALLER, G_COUNT_ };
static const char *const finding_fields[G_COUNT_] = {
    "batch_id", "rule", "severity", "side", "op", "other_op", "value", "limit", "caller",
};
enum { H_BADDR, H_MEMSZ, H_PATH, H_IS_PIC, H_COUNT_ };
static const char *const bin_info_fields[H_COUNT_] = {"baddr", "memsz", "path", "is_pic"};

struct ecinfo {
    const bt_event_class *ec;
    enum ev_kind kind;
    bool has_clock;
    int ctx_vpid, ctx_vtid, ctx_procname; /* -1 when absent */
    bool vpid_signed, vtid_signed;
    int idx[F_COUNT_];
    bool sgn[F_COUNT_];
    int tid_idx;  /* batch and finding: the calling thread (-1 in traces older than the field) */
    bool tid_sgn;
};

#define EC_SLOTS 1024u

struct reader {
    const struct cbt_read_opts *o;
    struct cbt_agg *agg;
    /* sources */
    char **paths;        /* one per source component (trace dir or URL) */
    int npaths;
    /* sink */
    bt_message_iterator **its;
    uint64_t nits, nlive, rr;
    /* caches */
    struct ecinfo *ecs[EC_SLOTS];
    const bt_stream *last_stream;
    uint32_t last_host;
    /* results */
    uint64_t cbt_events;
    char fail[1024];     /* our own error, when set */
    struct cbt_ops ops;  /* scratch */
};

/* ---------------------------------------------------------------- caches */

static int member_index(const bt_field_class *st, const char *name, bool *is_signed)
{
    if (!st || bt_field_class_get_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return -1;
    uint64_t n = bt_field_class_structure_get_member_count(st);
    for (uint64_t i = 0; i < n; i++) {
        const bt_field_class_structure_member *m = bt_field_class_structure_borrow_member_by_index_const(st, i);
        if (strcmp(bt_field_class_structure_member_get_name(m), name) != 0)
            continue;
        const bt_field_class *fc = bt_field_class_structure_member_borrow_field_class_const(m);
        bt_field_class_type t = bt_field_class_get_type(fc);
        if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY)) {
            fc = bt_field_class_array_borrow_element_field_class_const(fc);
            t = bt_field_class_get_type(fc);
        }
        if (is_signed)
            *is_signed = bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
        return (int)i;
    }
    return -1;
}

static bool field_is(const bt_field_class *st, int idx, bt_field_class_type want)
{
    const bt_field_class_structure_member *m = bt_field_class_structure_borrow_member_by_index_const(st, (uint64_t)idx);
    const bt_field_class *fc = bt_field_class_structure_member_borrow_field_class_const(m);
    return bt_field_class_type_is(bt_field_class_get_type(fc), want);
}

static struct ecinfo *ec_describe(struct reader *r, const bt_event_class *ec)
{
    struct ecinfo *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->ec = ec;
    const char *name = bt_event_class_get_name(ec);
    if (!name)
        name = "";
    if (strcmp(name, "cubatchtrace:batch") == 0)
        e->kind = EK_BATCH;
    else if (strcmp(name, "cubatchtrace:batch_ops") == 0)
        e->kind = EK_BATCH_OPS;
    else if (strcmp(name, "cubatchtrace:finding") == 0)
        e->kind = EK_FINDING;
    else if (strncmp(name, "cubatchtrace:", 13) == 0)
        e->kind = EK_CBT_OTHER;
    else if (strcmp(name, "lttng_ust_statedump:bin_info") == 0)
        e->kind = EK_BIN_INFO;
    else
        e->kind = EK_OTHER;
    if (e->kind == EK_OTHER || e->kind == EK_CBT_OTHER)
        return e;

    const bt_stream_class *sc = bt_event_class_borrow_stream_class_const(ec);
    e->has_clock = bt_stream_class_borrow_default_clock_class_const(sc) != NULL;
    const bt_field_class *ctx = bt_stream_class_borrow_event_common_context_field_class_const(sc);
    e->ctx_vpid = member_index(ctx, "vpid", &e->vpid_signed);
    e->ctx_vtid = member_index(ctx, "vtid", &e->vtid_signed);
    e->ctx_procname = member_index(ctx, "procname", NULL);
    if (e->ctx_procname >= 0 && !field_is(ctx, e->ctx_procname, BT_FIELD_CLASS_TYPE_STRING))
        e->ctx_procname = -1;

    const bt_field_class *pl = bt_event_class_borrow_payload_field_class_const(ec);
    const char *const *names;
    int first = 0, count;
    switch (e->kind) {
    case EK_BATCH: names = batch_fields; count = F_COUNT_; break;
    case EK_BATCH_OPS: names = batch_fields; count = F_COUNT_; first = F_OPS_FIRST; break;
    case EK_FINDING: names = finding_fields; count = G_COUNT_; break;
    default: names = bin_info_fields; count = H_COUNT_; break;
    }
    for (int i = 0; i < F_COUNT_; i++)
        e->idx[i] = -1;
    e->tid_idx = -1;
    if (e->kind == EK_BATCH || e->kind == EK_FINDING) {
        e->tid_idx = member_index(pl, "tid", &e->tid_sgn);
        if (e->tid_idx >= 0 && !field_is(pl, e->tid_idx, BT_FIELD_CLASS_TYPE_INTEGER))
            e->tid_idx = -1;
    }
    if (e->kind == EK_BATCH_OPS) {
        e->idx[F_BATCH_ID] = member_index(pl, "batch_id", &e->sgn[F_BATCH_ID]);
        if (e->idx[F_BATCH_ID] < 0)
            goto missing_batch_id;
    }
    for (int i = first; i < count; i++) {
        e->idx[i] = member_index(pl, names[i], &e->sgn[i]);
        if (e->idx[i] < 0) {
            /* bin_info's is_pic is optional for naming; everything else is the catalogue */
            if (e->kind == EK_BIN_INFO && i == H_IS_PIC)
                continue;
            if (e->kind == EK_BIN_INFO) {
                e->kind = EK_OTHER;
                return e;
            }
            snprintf(r->fail, sizeof(r->fail), "event class %s has no field `%s` (a trace of another catalogue?)",
                     name, names[i]);
            free(e);
            return NULL;
        }
        bool seq = i >= F_SRC_TYPE && (e->kind == EK_BATCH || e->kind == EK_BATCH_OPS);
        bool ok = seq ? field_is(pl, e->idx[i], BT_FIELD_CLASS_TYPE_ARRAY)
                      : (e->kind == EK_BIN_INFO && i == H_PATH) ? field_is(pl, e->idx[i], BT_FIELD_CLASS_TYPE_STRING)
                                                                 : field_is(pl, e->idx[i], BT_FIELD_CLASS_TYPE_INTEGER);
        if (!ok) {
            if (e->kind == EK_BIN_INFO) {
                e->kind = EK_OTHER;
                return e;
            }
            snprintf(r->fail, sizeof(r->fail), "event class %s: field `%s` has an unexpected type", name, names[i]);
            free(e);
            return NULL;
        }
    }
    return e;
missing_batch_id:
    snprintf(r->fail, sizeof(r->fail), "event class %s has no field `batch_id`", name);
    free(e);
    return NULL;
}

static inline struct ecinfo *ec_lookup(struct reader *r, const bt_event_class *ec)
{
    uintptr_t h = ((uintptr_t)ec >> 4) * 0x9E3779B97F4A7C15ull;
    unsigned s = (unsigned)(h >> 54) & (EC_SLOTS - 1);
    for (unsigned n = 0; n < EC_SLOTS; n++, s = (s + 1) & (EC_SLOTS - 1)) {
        struct ecinfo *e = r->ecs[s];
        if (e && e->ec == ec)
            return e;
        if (!e) {
            e = ec_describe(r, ec);
            r->ecs[s] = e;
            return e;
        }
    }
    snprintf(r->fail, sizeof(r->fail), "more than %u event classes", EC_SLOTS);
    return NULL;
}

/* ---------------------------------------------------------------- events */

static inline uint64_t get_int(const bt_field *f, bool sgn)
{
    return sgn ? (uint64_t)bt_field_integer_signed_get_value(f) : bt_field_integer_unsigned_get_value(f);
}

static inline uint64_t member_int(const bt_field *st, const struct ecinfo *e, int i)
{
    return get_int(bt_field_structure_borrow_member_field_by_index_const(st, (uint64_t)e->idx[i]), e->sgn[i]);
}

static uint32_t stream_host(struct reader *r, const bt_event *ev)
{
    const bt_stream *s = bt_event_borrow_stream_const(ev);
    if (s == r->last_stream)
        return r->last_host;
    const bt_trace *t = bt_stream_borrow_trace_const(s);
    const bt_value *v = bt_trace_borrow_environment_entry_value_by_name_const(t, "hostname");
    const char *host = v && bt_value_is_string(v) ? bt_value_string_get(v) : "?";
    r->last_stream = s;
    r->last_host = cbt_agg_host(r->agg, host);
    return r->last_host;
}

static bool pid_wanted(const struct reader *r, int64_t vpid)
{
    if (r->o->npids == 0)
        return true;
    for (int i = 0; i < r->o->npids; i++)
        if (r->o->pids[i] == vpid)
            return true;
    return false;
}

/* Decode ops [from, from+n) of the op sequences of `pl` into r->ops. */
static void read_ops(struct reader *r, const struct ecinfo *e, const bt_field *pl, uint64_t first, uint64_t from,
                     uint32_t n)
{
    struct cbt_ops *o = &r->ops;
    o->first = first + from;
    o->count = n;
#define SEQ(F) bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->idx[F])
#define EL(S, i) bt_field_array_borrow_element_field_by_index_const(S, from + (i))
    const bt_field *s;
    s = SEQ(F_SRC_TYPE); for (uint32_t i = 0; i < n; i++) o->src_type[i] = (uint8_t)get_int(EL(s, i), e->sgn[F_SRC_TYPE]);
    s = SEQ(F_DST_TYPE); for (uint32_t i = 0; i < n; i++) o->dst_type[i] = (uint8_t)get_int(EL(s, i), e->sgn[F_DST_TYPE]);
    s = SEQ(F_SRC_MEM); for (uint32_t i = 0; i < n; i++) o->src_mem[i] = (uint8_t)get_int(EL(s, i), e->sgn[F_SRC_MEM]);
    s = SEQ(F_DST_MEM); for (uint32_t i = 0; i < n; i++) o->dst_mem[i] = (uint8_t)get_int(EL(s, i), e->sgn[F_DST_MEM]);
    s = SEQ(F_SRC_DEV); for (uint32_t i = 0; i < n; i++) o->src_dev[i] = (int32_t)get_int(EL(s, i), e->sgn[F_SRC_DEV]);
    s = SEQ(F_DST_DEV); for (uint32_t i = 0; i < n; i++) o->dst_dev[i] = (int32_t)get_int(EL(s, i), e->sgn[F_DST_DEV]);
    s = SEQ(F_ORDER); for (uint32_t i = 0; i < n; i++) o->order[i] = (uint8_t)get_int(EL(s, i), e->sgn[F_ORDER]);
    s = SEQ(F_BYTES); for (uint32_t i = 0; i < n; i++) o->bytes[i] = get_int(EL(s, i), e->sgn[F_BYTES]);
#undef SEQ
#undef EL
}

static uint64_t ops_length(const struct ecinfo *e, const bt_field *pl)
{
    static const int seqs[] = {F_SRC_TYPE, F_DST_TYPE, F_SRC_MEM, F_DST_MEM, F_SRC_DEV, F_DST_DEV, F_ORDER, F_BYTES};
    uint64_t n = UINT64_MAX;
    for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
        uint64_t l = bt_field_array_get_length(
            bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->idx[seqs[i]]));
        if (l < n)
            n = l;
    }
    return n;
}

static int on_event(struct reader *r, const bt_message *msg)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    const bt_event_class *ec = bt_event_borrow_class_const(ev);
    struct ecinfo *e = ec_lookup(r, ec);
    if (!e)
        return -1;
    if (e->kind == EK_OTHER)
        return 0;
    if (e->kind != EK_BIN_INFO)
        r->cbt_events++;
    if (e->kind == EK_CBT_OTHER)
        return 0;

    struct cbt_where w = {.vpid = -1, .vtid = -1, .ts_ns = INT64_MIN};
    const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
    if (ctx && e->ctx_vpid >= 0)
        w.vpid = (int64_t)get_int(bt_field_structure_borrow_member_field_by_index_const(ctx, (uint64_t)e->ctx_vpid),
                                  e->vpid_signed);
    if (!pid_wanted(r, w.vpid))
        return 0;
    if (ctx && e->ctx_vtid >= 0)
        w.vtid = (int64_t)get_int(bt_field_structure_borrow_member_field_by_index_const(ctx, (uint64_t)e->ctx_vtid),
                                  e->vtid_signed);
    if (ctx && e->ctx_procname >= 0)
        w.procname = bt_field_string_get_value(
            bt_field_structure_borrow_member_field_by_index_const(ctx, (uint64_t)e->ctx_procname));
    w.host = stream_host(r, ev);
    const bt_field *pl = bt_event_borrow_payload_field_const(ev);
    /* The recorder thread may have written the event: the payload names the calling thread. */
    if (e->tid_idx >= 0)
        w.vtid = (int64_t)get_int(bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->tid_idx),
                                  e->tid_sgn);

    switch (e->kind) {
    case EK_BATCH: {
        struct cbt_batch b = {
            .batch_id = member_int(pl, e, F_BATCH_ID),
            .num_ops = member_int(pl, e, F_NUM_OPS),
            .op_list = member_int(pl, e, F_OP_LIST),
            .stream = member_int(pl, e, F_STREAM),
            .stream_id = member_int(pl, e, F_STREAM_ID),
            .driver_ns = member_int(pl, e, F_DRIVER_NS),
            .caller = member_int(pl, e, F_CALLER),
            .result = (uint32_t)member_int(pl, e, F_RESULT),
            .device = (int32_t)member_int(pl, e, F_DEVICE),
            .api = (uint8_t)member_int(pl, e, F_API),
            .door = (uint8_t)member_int(pl, e, F_DOOR),
            .outcome = (uint8_t)member_int(pl, e, F_OUTCOME),
        };
        uint64_t first = member_int(pl, e, F_OPS_FIRST);
        uint64_t n = ops_length(e, pl);
        uint32_t c = n > CBT_CHUNK ? CBT_CHUNK : (uint32_t)n;
        read_ops(r, e, pl, first, 0, c);
        cbt_agg_batch(r->agg, &w, &b, &r->ops);
        for (uint64_t from = c; from < n; from += c) {
            c = n - from > CBT_CHUNK ? CBT_CHUNK : (uint32_t)(n - from);
            read_ops(r, e, pl, first, from, c);
            cbt_agg_batch_ops(r->agg, &w, b.batch_id, &r->ops);
        }
        break;
    }
    case EK_BATCH_OPS: {
        uint64_t id = member_int(pl, e, F_BATCH_ID);
        uint64_t first = member_int(pl, e, F_OPS_FIRST);
        uint64_t n = ops_length(e, pl);
        for (uint64_t from = 0; from < n; from += CBT_CHUNK) {
            uint32_t c = n - from > CBT_CHUNK ? CBT_CHUNK : (uint32_t)(n - from);
            read_ops(r, e, pl, first, from, c);
            cbt_agg_batch_ops(r->agg, &w, id, &r->ops);
        }
        break;
    }
    case EK_FINDING: {
        if (e->has_clock) {
            const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
            int64_t ns;
            if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
                w.ts_ns = ns;
                w.has_ts = true;
            }
        }
        struct cbt_finding f = {
            .batch_id = member_int(pl, e, G_BATCH_ID),
            .op = member_int(pl, e, G_OP),
            .other_op = member_int(pl, e, G_OTHER_OP),
            .value = member_int(pl, e, G_VALUE),
            .limit = member_int(pl, e, G_LIMIT),
            .caller = member_int(pl, e, G_CALLER),
            .rule = (uint16_t)member_int(pl, e, G_RULE),
            .severity = (uint8_t)member_int(pl, e, G_SEVERITY),
            .side = (uint8_t)member_int(pl, e, G_SIDE),
        };
        cbt_agg_finding(r->agg, &w, &f);
        break;
    }
    case EK_BIN_INFO: {
        const char *path = bt_field_string_get_value(
            bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->idx[H_PATH]));
        bool pic = e->idx[H_IS_PIC] >= 0 ? member_int(pl, e, H_IS_PIC) != 0 : true;
        cbt_agg_bin_info(r->agg, &w, member_int(pl, e, H_BADDR), member_int(pl, e, H_MEMSZ), path, pic);
        break;
    }
    default:
        break;
    }
    return 0;
}

static int on_message(struct reader *r, const bt_message *msg)
{
    switch (bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT:
        return on_event(r, msg);
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
        uint64_t n = 0;
        bool known = bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE;
        cbt_agg_discarded(r->agg, false, n, known);
        return 0;
    }
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
        uint64_t n = 0;
        bool known = bt_message_discarded_packets_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE;
        cbt_agg_discarded(r->agg, true, n, known);
        return 0;
    }
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- the sink */

static bt_component_class_initialize_method_status sink_init(bt_self_component_sink *self,
                                                             bt_self_component_sink_configuration *cfg,
                                                             const bt_value *params, void *data)
{
    struct reader *r = data;
    (void)cfg;
    (void)params;
    bt_self_component_set_data(bt_self_component_sink_as_self_component(self), r);
    for (uint64_t i = 0; i < r->nits; i++) {
        char name[32];
        snprintf(name, sizeof(name), "in%" PRIu64, i);
        if (bt_self_component_sink_add_input_port(self, name, NULL, NULL) != BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
            return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    }
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_sink_graph_is_configured_method_status sink_configured(bt_self_component_sink *self)
{
    struct reader *r = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    for (uint64_t i = 0; i < r->nits; i++) {
        bt_self_component_port_input *p = bt_self_component_sink_borrow_input_port_by_index(self, i);
        if (bt_message_iterator_create_from_sink_component(self, p, &r->its[i]) !=
            BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
            return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
    }
    r->nlive = r->nits;
    return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

static bt_component_class_sink_consume_method_status sink_consume(bt_self_component_sink *self)
{
    struct reader *r = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    for (uint64_t tries = 0; tries < r->nits; tries++) {
        uint64_t k = r->rr++ % r->nits;
        bt_message_iterator *it = r->its[k];
        if (!it)
            continue;
        bt_message_array_const msgs;
        uint64_t count;
        switch (bt_message_iterator_next(it, &msgs, &count)) {
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: {
            int rc = 0;
            for (uint64_t i = 0; i < count; i++) {
                if (rc == 0)
                    rc = on_message(r, msgs[i]);
                bt_message_put_ref(msgs[i]);
            }
            return rc == 0 ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK
                           : BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
        }
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
            bt_message_iterator_put_ref(it);
            r->its[k] = NULL;
            r->nlive--;
            return r->nlive ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK
                            : BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
            continue;
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
        default:
            return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
        }
    }
    return r->nlive ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN
                    : BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
}

static void sink_finalize(bt_self_component_sink *self)
{
    struct reader *r = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    for (uint64_t i = 0; i < r->nits; i++) {
        bt_message_iterator_put_ref(r->its[i]);
        r->its[i] = NULL;
    }
}

/* ---------------------------------------------------------------- inputs */

static int add_path(struct reader *r, const char *p)
{
    char **n = realloc(r->paths, sizeof(*n) * (size_t)(r->npaths + 1));
    if (!n)
        return -1;
    r->paths = n;
    if (!(r->paths[r->npaths] = strdup(p)))
        return -1;
    r->npaths++;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every directory under `dir` (itself included) holding a `metadata` file; no descent below one. */
static int find_traces(struct reader *r, const char *dir, int depth)
{
    char buf[4096];
    struct stat st;
    snprintf(buf, sizeof(buf), "%s/metadata", dir);
    if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
        return add_path(r, dir);
    if (depth > 16)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **subs = NULL;
    size_t nsubs = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
            continue;
        snprintf(buf, sizeof(buf), "%s/%s", dir, de->d_name);
        if (lstat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        char **n = realloc(subs, sizeof(*n) * (nsubs + 1));
        if (!n)
            break;
        subs = n;
        subs[nsubs++] = strdup(buf);
    }
    closedir(d);
    if (nsubs)
        qsort(subs, nsubs, sizeof(*subs), cmp_str);
    int rc = 0;
    for (size_t i = 0; i < nsubs; i++) {
        if (rc == 0 && subs[i])
            rc = find_traces(r, subs[i], depth + 1);
        free(subs[i]);
    }
    free(subs);
    return rc;
}

static bool is_url(const char *s) { return strncmp(s, "net://", 6) == 0 || strncmp(s, "net4://", 7) == 0; }

/* A quoted absolute path inside a message ('...' or `...`), copied to buf. */
static bool quoted_path(const char *m, char *buf, size_t len)
{
    for (const char *p = m; *p; p++) {
        if ((*p == '\'' || *p == '`') && p[1] == '/') {
            const char *e = strchr(p + 1, *p == '`' ? '`' : '\'');
            if (!e)
                e = strchr(p + 1, '\'');
            if (e) {
                snprintf(buf, len, "%.*s", (int)(e - p - 1), p + 1);
                return true;
            }
        }
    }
    return false;
}

/* Drop babeltrace2's ": key=value, ..." tail of a message. */
static void trim_details(char *m)
{
    for (char *p = m; (p = strstr(p, ": ")); p++) {
        char *q = p + 2;
        while ((*q >= 'a' && *q <= 'z') || *q == '-' || *q == '_')
            q++;
        if (*q == '=' && q > p + 2) {
            *p = 0;
            return;
        }
    }
}

/* One line from babeltrace2's error causes: the root cause (index 0), plus
 * the stream file it happened in when a cause names one. */
static void report_bt_error(struct reader *r, const char *what)
{
    const bt_error *err = bt_current_thread_take_error();
    char msg[1024] = "", file[600] = "";
    const char *where = r->npaths == 1 ? r->paths[0] : NULL;
    if (err) {
        uint64_t n = bt_error_get_cause_count(err);
        for (uint64_t i = 0; i < n; i++) {
            const bt_error_cause *c = bt_error_borrow_cause_by_index(err, i);
            const char *m = bt_error_cause_get_message(c);
            if (!m)
                m = "";
            if (getenv("CUBATCHTRACE_DEBUG"))
                fprintf(stderr, "[cause %" PRIu64 " %s] %s\n", i, bt_error_cause_get_module_name(c), m);
            const char *mod = bt_error_cause_get_module_name(c);
            int k;
            if (!where && mod && sscanf(mod, "src%d", &k) == 1 && k >= 0 && k < r->npaths)
                where = r->paths[k];
            if (!msg[0] && *m)
                snprintf(msg, sizeof(msg), "%s", m);
            if (!file[0])
                quoted_path(m, file, sizeof(file));
        }
        bt_error_release(err);
    }
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    trim_details(msg);
    size_t l = strlen(msg);
    while (l && (msg[l - 1] == ' ' || msg[l - 1] == '.'))
        msg[--l] = 0;
    char joined[600];
    if (!where) {
        snprintf(joined, sizeof(joined), "%s%s", r->npaths ? r->paths[0] : "?", r->npaths > 1 ? " (or another input)" : "");
        where = joined;
    }
    if (file[0] && !strstr(msg, file))
        cbt_err("%s %s: %s (in %s)", what, where, *msg ? msg : "babeltrace2 reported an error", file);
    else
        cbt_err("%s %s: %s", what, where, *msg ? msg : "babeltrace2 reported an error");
}

int cbt_read(const struct cbt_read_opts *o, struct cbt_agg *agg)
{
    struct reader *r = calloc(1, sizeof(*r));
    bt_graph *graph = NULL;
    bt_component_class_sink *sink_cls = NULL;
    const bt_plugin *plugin = NULL;
    const bt_component_source **srcs = NULL;
    int rc = 2;
    if (!r) {
        cbt_err("out of memory");
        return 2;
    }
    r->o = o;
    r->agg = agg;
    bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);

    for (int i = 0; i < o->ninputs; i++) {
        const char *in = o->inputs[i];
        if (is_url(in)) {
            add_path(r, in);
            continue;
        }
        struct stat st;
        if (stat(in, &st) != 0) {
            cbt_err("%s: %s", in, strerror(errno));
            goto out;
        }
        if (!S_ISDIR(st.st_mode)) {
            cbt_err("%s: not a directory (give a trace directory or a net:// URL)", in);
            goto out;
        }
        int before = r->npaths;
        if (find_traces(r, in, 0) != 0) {
            cbt_err("out of memory");
            goto out;
        }
        if (r->npaths == before && !o->allow_empty) {
            cbt_err("%s: no CTF trace under this directory (no `metadata` file)", in);
            goto out;
        }
    }
    if (r->npaths == 0) { /* allow_empty: nothing recorded at all */
        rc = 0;
        goto out;
    }

    if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &plugin) != BT_PLUGIN_FIND_STATUS_OK) {
        cbt_err("babeltrace2's `ctf` plugin not found (set BABELTRACE_PLUGIN_PATH?)");
        goto out;
    }
    const bt_component_class_source *fs = bt_plugin_borrow_source_component_class_by_name_const(plugin, "fs");
    const bt_component_class_source *live =
        bt_plugin_borrow_source_component_class_by_name_const(plugin, "lttng-live");
    graph = bt_graph_create(0);
    srcs = calloc((size_t)r->npaths, sizeof(*srcs));
    if (!graph || !srcs || !fs || !live) {
        cbt_err("cannot set up babeltrace2 (ctf.fs / ctf.lttng-live missing?)");
        goto out;
    }
    uint64_t nports = 0;
    for (int i = 0; i < r->npaths; i++) {
        bt_value *params = bt_value_map_create();
        bt_value *inputs = NULL;
        bool url = is_url(r->paths[i]);
        if (!params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
            bt_value_array_append_string_element(inputs, r->paths[i]) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK ||
            (url && bt_value_map_insert_string_entry(params, "session-not-found-action", "end") !=
                        BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK)) {
            bt_value_put_ref(params);
            cbt_err("out of memory");
            goto out;
        }
        char name[32];
        snprintf(name, sizeof(name), "src%d", i);
        bt_graph_add_component_status st =
            bt_graph_add_source_component(graph, url ? live : fs, name, params, BT_LOGGING_LEVEL_NONE, &srcs[i]);
        bt_value_put_ref(params);
        if (st != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
            report_bt_error(r, url ? "cannot connect to" : "cannot read trace");
            goto out;
        }
        nports += bt_component_source_get_output_port_count(srcs[i]);
    }
    r->nits = nports;
    r->its = calloc(nports ? nports : 1, sizeof(*r->its));
    sink_cls = bt_component_class_sink_create("cubatchtrace", sink_consume);
    if (!r->its || !sink_cls) {
        cbt_err("out of memory");
        goto out;
    }
    if (nports) {
        bt_component_class_sink_set_initialize_method(sink_cls, sink_init);
        bt_component_class_sink_set_graph_is_configured_method(sink_cls, sink_configured);
        bt_component_class_sink_set_finalize_method(sink_cls, sink_finalize);
        const bt_component_sink *sink;
        if (bt_graph_add_sink_component_with_initialize_method_data(graph, sink_cls, "sink", NULL, r,
                                                                     BT_LOGGING_LEVEL_NONE, &sink) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
            report_bt_error(r, "cannot read");
            goto out;
        }
        uint64_t k = 0;
        for (int i = 0; i < r->npaths; i++) {
            uint64_t n = bt_component_source_get_output_port_count(srcs[i]);
            for (uint64_t j = 0; j < n; j++, k++) {
                const bt_port_output *out = bt_component_source_borrow_output_port_by_index_const(srcs[i], j);
                const bt_port_input *in = bt_component_sink_borrow_input_port_by_index_const(sink, k);
                if (bt_graph_connect_ports(graph, out, in, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                    report_bt_error(r, "cannot read");
                    goto out;
                }
            }
        }
        for (;;) {
            bt_graph_run_status st = bt_graph_run(graph);
            if (st == BT_GRAPH_RUN_STATUS_AGAIN) {
                usleep(20000);
                continue;
            }
            if (st == BT_GRAPH_RUN_STATUS_OK)
                break;
            if (r->fail[0]) {
                bt_current_thread_clear_error();
                cbt_err("cannot read %s: %s", r->npaths == 1 ? r->paths[0] : o->inputs[0], r->fail);
            } else {
                report_bt_error(r, is_url(r->paths[0]) ? "cannot read live session" : "cannot read trace");
            }
            goto out;
        }
    }
    if (r->cbt_events == 0 && !o->allow_empty) {
        if (o->ninputs == 1)
            cbt_err("%s: no cubatchtrace events in this trace (was it recorded with `cubatchtrace run`?)",
                    o->inputs[0]);
        else
            cbt_err("%s and %d other input(s): no cubatchtrace events in these traces", o->inputs[0],
                    o->ninputs - 1);
        goto out;
    }
    rc = 0;
out:
    bt_graph_put_ref(graph);
    bt_component_class_sink_put_ref(sink_cls);
    bt_plugin_put_ref(plugin);
    free(srcs);
    for (unsigned i = 0; i < EC_SLOTS; i++)
        free(r->ecs[i]);
    for (int i = 0; i < r->npaths; i++)
        free(r->paths[i]);
    free(r->paths);
    free(r->its);
    free(r);
    return rc;
}
