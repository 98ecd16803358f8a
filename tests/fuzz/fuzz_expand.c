/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the babeltrace2 plugin's expansion of decoded events
 * (tools/plugin/expand.c, filter.cubatchtrace.expand), in the graph a user
 * builds: source.ctf.fs over a trace, babeltrace2's muxer, the filter, and a
 * sink here that reads every field of every message that comes out (the
 * expanded batch, op, attr, finding and gpu events, and what passes through).
 * The input is a trace's stream file after one byte that picks its metadata
 * among those of tests/fuzz/expand/ (metadata-0, -1, ...: the traces of the
 * seeds, tests/tool/gpu1.tar.xz, format3.tar.xz and format2.tar.xz): the
 * metadata stays whole, since babeltrace2 2.0.4 aborts on some damaged
 * metadata (a member named twice) and loops on other (tests/fuzz/bt2-hang.sh)
 * before the filter sees a message; the fuzz target `trace` is the one
 * that damages metadata.  What the framing check (tools/read/precheck.c)
 * refuses is not handed over, as the tool does not.  Seeds:
 * tests/fuzz/corpus/expand, the stream files of those traces.
 *
 * The plugin's source is included here, so that its methods (static there)
 * make a filter class of this program's own, without loading a module.
 */
#define _GNU_SOURCE
#include "plugin/expand.c"

#include <dlfcn.h>
#include <unistd.h>

#include "read/precheck.h"

static uint64_t sink;

/* babeltrace2 makes a field for each element a damaged sequence length
 * declares before it reads one (source.ctf.fs calls this with the length it
 * decoded): gigabytes for one byte gone wrong, in babeltrace2, before our
 * filter sees the event.  The tool bounds that with its memory limit
 * (RLIMIT_DATA, tools/guard.c), which a process with ASan's shadow memory
 * cannot have; here a length that the stream file cannot hold (every
 * element of these metadata is at least a byte) fails as such an
 * allocation would (the executable's definition comes first for the ctf
 * plugin: fuzz.mk exports it). */
static uint64_t stream_bytes;
bt_field_array_dynamic_set_length_status bt_field_array_dynamic_set_length(bt_field *field, uint64_t length)
{
    static bt_field_array_dynamic_set_length_status (*real)(bt_field *, uint64_t);
    if (!real && !(real = (bt_field_array_dynamic_set_length_status(*)(bt_field *, uint64_t))dlsym(
                       RTLD_NEXT, "bt_field_array_dynamic_set_length")))
        abort();
    if (length > stream_bytes)
        return BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_MEMORY_ERROR;
    return real(field, length);
}

/* Every field below f, read as its class says. */
static void walk(const bt_field *f)
{
    if (!f)
        return;
    switch (bt_field_get_class_type(f)) {
    case BT_FIELD_CLASS_TYPE_STRUCTURE: {
        uint64_t n = bt_field_class_structure_get_member_count(bt_field_borrow_class_const(f));
        for (uint64_t i = 0; i < n; i++)
            walk(bt_field_structure_borrow_member_field_by_index_const(f, i));
        break;
    }
    case BT_FIELD_CLASS_TYPE_STATIC_ARRAY:
    case BT_FIELD_CLASS_TYPE_DYNAMIC_ARRAY_WITHOUT_LENGTH_FIELD:
    case BT_FIELD_CLASS_TYPE_DYNAMIC_ARRAY_WITH_LENGTH_FIELD: {
        uint64_t n = bt_field_array_get_length(f);
        for (uint64_t i = 0; i < n; i++)
            walk(bt_field_array_borrow_element_field_by_index_const(f, i));
        break;
    }
    case BT_FIELD_CLASS_TYPE_STRING:
        sink += strlen(bt_field_string_get_value(f));
        break;
    case BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER:
    case BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION:
        sink += bt_field_integer_unsigned_get_value(f);
        break;
    case BT_FIELD_CLASS_TYPE_SIGNED_INTEGER:
    case BT_FIELD_CLASS_TYPE_SIGNED_ENUMERATION:
        sink += (uint64_t)bt_field_integer_signed_get_value(f);
        break;
    default:
        break;
    }
}

/* The sink: pulls the filter's messages and reads each event whole. */
struct reader_sink {
    bt_message_iterator *it;
};

static bt_component_class_initialize_method_status sink_init(bt_self_component_sink *self,
                                                            bt_self_component_sink_configuration *cfg,
                                                            const bt_value *params, void *data)
{
    (void)cfg, (void)params, (void)data;
    struct reader_sink *s = calloc(1, sizeof(*s));
    if (!s || bt_self_component_sink_add_input_port(self, "in", NULL, NULL) != BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
        free(s);
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    }
    bt_self_component_set_data(bt_self_component_sink_as_self_component(self), s);
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_sink_graph_is_configured_method_status sink_configured(bt_self_component_sink *self)
{
    struct reader_sink *s = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    bt_self_component_port_input *in = bt_self_component_sink_borrow_input_port_by_index(self, 0);
    return bt_message_iterator_create_from_sink_component(self, in, &s->it) == BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK
               ? BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK
               : BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
}

static void sink_finalize(bt_self_component_sink *self)
{
    struct reader_sink *s = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    if (s)
        bt_message_iterator_put_ref(s->it);
    free(s);
}

static bt_component_class_sink_consume_method_status sink_consume(bt_self_component_sink *self)
{
    struct reader_sink *s = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    bt_message_array_const msgs;
    uint64_t n;
    switch (bt_message_iterator_next(s->it, &msgs, &n)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
    default:
        return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (bt_message_get_type(msgs[i]) == BT_MESSAGE_TYPE_EVENT) {
            const bt_event *ev = bt_message_event_borrow_event_const(msgs[i]);
            const char *name = bt_event_class_get_name(bt_event_borrow_class_const(ev));
            sink += strlen(name ? name : "");
            walk(bt_event_borrow_common_context_field_const(ev));
            walk(bt_event_borrow_payload_field_const(ev));
        }
        bt_message_put_ref(msgs[i]);
    }
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
}

static const bt_plugin *ctf, *utils;
static bt_component_class_filter *expand_cls;
static bt_component_class_sink *sink_cls;
static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "%s/cbt-fuzz-expand.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir) ||
        bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf) != BT_PLUGIN_FIND_STATUS_OK ||
        bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &utils) != BT_PLUGIN_FIND_STATUS_OK)
        abort();
    /* the plugin's filter class, as its BT_PLUGIN_FILTER_COMPONENT_CLASS lines declare it */
    bt_message_iterator_class *ic = bt_message_iterator_class_create(expand_iter_next);
    if (!ic ||
        bt_message_iterator_class_set_initialize_method(ic, expand_iter_init) != BT_MESSAGE_ITERATOR_CLASS_SET_METHOD_STATUS_OK ||
        bt_message_iterator_class_set_finalize_method(ic, expand_iter_finalize) != BT_MESSAGE_ITERATOR_CLASS_SET_METHOD_STATUS_OK)
        abort();
    expand_cls = bt_component_class_filter_create("expand", ic);
    bt_message_iterator_class_put_ref(ic);
    sink_cls = bt_component_class_sink_create("reader", sink_consume);
    if (!expand_cls || !sink_cls ||
        bt_component_class_filter_set_initialize_method(expand_cls, expand_init) != BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
        bt_component_class_sink_set_initialize_method(sink_cls, sink_init) != BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
        bt_component_class_sink_set_graph_is_configured_method(sink_cls, sink_configured) !=
            BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
        bt_component_class_sink_set_finalize_method(sink_cls, sink_finalize) != BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK)
        abort();
}

static void put(const char *name, const uint8_t *d, size_t n)
{
    char p[128];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(d, 1, n, f) != n || fclose(f) != 0)
        abort();
}

/* source.ctf.fs over dir -> muxer -> expand -> our sink, run to its end. */
static void expand_trace(void)
{
    bt_graph *g = bt_graph_create(0);
    bt_value *params = bt_value_map_create();
    bt_value *inputs = NULL;
    const bt_component_source *src = NULL;
    const bt_component_filter *mux = NULL, *exp = NULL;
    const bt_component_sink *snk = NULL;
    if (!g || !params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
        bt_value_array_append_string_element(inputs, dir) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK)
        abort();
    const bt_component_class_source *fs = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
    const bt_component_class_filter *muxer = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
    if (bt_graph_add_source_component(g, fs, "src", params, BT_LOGGING_LEVEL_NONE, &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_add_filter_component(g, muxer, "mux", NULL, BT_LOGGING_LEVEL_NONE, &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_add_filter_component(g, expand_cls, "expand", NULL, BT_LOGGING_LEVEL_NONE, &exp) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_add_sink_component(g, sink_cls, "sink", NULL, BT_LOGGING_LEVEL_NONE, &snk) != BT_GRAPH_ADD_COMPONENT_STATUS_OK)
        goto out; /* a trace source.ctf.fs refuses */
    uint64_t n = bt_component_source_get_output_port_count(src);
    for (uint64_t j = 0; j < n; j++) /* the muxer makes a new input port each time one is connected */
        if (bt_graph_connect_ports(g, bt_component_source_borrow_output_port_by_index_const(src, j),
                                   bt_component_filter_borrow_input_port_by_index_const(mux, j),
                                   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
            goto out;
    if (bt_graph_connect_ports(g, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                               bt_component_filter_borrow_input_port_by_index_const(exp, 0), NULL) !=
            BT_GRAPH_CONNECT_PORTS_STATUS_OK ||
        bt_graph_connect_ports(g, bt_component_filter_borrow_output_port_by_index_const(exp, 0),
                               bt_component_sink_borrow_input_port_by_index_const(snk, 0), NULL) !=
            BT_GRAPH_CONNECT_PORTS_STATUS_OK)
        goto out;
    bt_graph_run_status st;
    do
        st = bt_graph_run(g);
    while (st == BT_GRAPH_RUN_STATUS_AGAIN);
out:
    bt_current_thread_clear_error();
    bt_value_put_ref(params);
    bt_graph_put_ref(g);
}

/* The metadata files of tests/fuzz/expand/ (EXPAND_DIR, fuzz.mk), read once. */
enum { NMETA_MAX = 16 };
static struct {
    uint8_t *d;
    size_t n;
} meta[NMETA_MAX];
static unsigned nmeta;

static void read_metadata(void)
{
    for (nmeta = 0; nmeta < NMETA_MAX; nmeta++) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/metadata-%u", EXPAND_DIR, nmeta);
        FILE *f = fopen(p, "rb");
        if (!f)
            break;
        uint8_t *d = NULL;
        size_t n = 0, cap = 0, got;
        do {
            if (n == cap && !(d = realloc(d, cap = cap ? 2 * cap : 65536)))
                abort();
            got = fread(d + n, 1, cap - n, f);
            n += got;
        } while (got);
        fclose(f);
        meta[nmeta].d = d, meta[nmeta].n = n;
    }
    if (!nmeta) {
        fprintf(stderr, "fuzz_expand: no %s/metadata-0\n", EXPAND_DIR);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        setup();
        read_metadata();
    }
    if (size < 1)
        return 0;
    put("metadata", meta[data[0] % nmeta].d, meta[data[0] % nmeta].n);
    put("ch_0", data + 1, size - 1);
    stream_bytes = size - 1;
    char why[256];
    if (cbt_precheck_trace(dir, why, sizeof(why)) == 0)
        expand_trace();
    return 0;
}
