/* SPDX-License-Identifier: MIT */
/*
 * Reading traces with libbabeltrace2: one source.ctf.fs component per trace
 * directory (source.ctf.lttng-live for net:// URLs), a babeltrace2 muxer
 * (flt.utils.muxer) behind each, and our own sink, which pulls the muxers
 * round-robin.  Within a trace the events come in time order: a thread's
 * compact records (formats 3 and 4) refer to its dictionary entries and its
 * previous batch, written before them, and a thread that moves to another
 * CPU goes on in another stream of the same trace.  Across traces no order is
 * needed (a thread's events all lie in one), and none is asked: traces of
 * other hosts or clocks need not be comparable.  The high 32 bits of a batch id are the tag of
 * the process image that made it (0 in traces recorded before images): each
 * event that carries a batch id sets the image of its struct cbt_where from
 * it (cbt_where_image_of_batch), the process event from its `image`.  A time window (--begin/--end) is babeltrace2's
 * own trimmer (flt.utils.trimmer), one between each source port and the
 * sink, so that the times mean what they mean to `babeltrace2 --begin`.
 *
 * The fields are those of <cubatchtrace/events.h>, looked up by name once per
 * event class; the per-event path only borrows members by index.  The
 * sequences (format 2's chunks, the compact record's t, ops, arrays, refs) are
 * copied out one element at a time (babeltrace2 2.0 has no bulk accessor)
 * into buffers that are reused, each element as wide as its field.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

#include "read/assemble.h"
#include "read/compact.h"
#include "read/precheck.h"
#include "read/reader.h"
#include "base/util.h"

enum ev_kind {
    EK_OTHER, EK_BATCH, EK_BATCH_OPS, EK_BATCH_END, EK_FINDING, EK_CBT_OTHER, EK_BIN_INFO, EK_BATCH1D, EK_BATCH_ATTRS,
    EK_PROCESS, EK_BUILD_ID, EK_GPU_TIME, EK_STACK, EK_GRAPH, EK_FABRIC, EK_LAUNCH,
    /* formats 3 and 4, the compact record (bs and cs read as b and c) */
    EK_B, EK_BO, EK_C, EK_CO, EK_CA, EK_OPERAND, EK_STREAM
};

/* The fields, by the lists of events.h */
#define CBT_FIELD_ENUM_(kind, type, name, en) B_##name,
#define CBT_FIELD_NAME_(kind, type, name, en) #name,
enum { CBT_EV_BATCH_FIELDS(CBT_FIELD_ENUM_) B_COUNT_ };
static const char *const batch_fields[B_COUNT_] = {CBT_EV_BATCH_FIELDS(CBT_FIELD_NAME_)};
#undef CBT_FIELD_ENUM_
#define CBT_FIELD_ENUM_(kind, type, name, en) D_##name,
enum { CBT_EV_BATCH1D_FIELDS(CBT_FIELD_ENUM_) D_COUNT_ };
static const char *const batch1d_fields[D_COUNT_] = {CBT_EV_BATCH1D_FIELDS(CBT_FIELD_NAME_)};
#undef CBT_FIELD_ENUM_
#define CBT_FIELD_ENUM_(kind, type, name, en) G_##name,
enum { CBT_EV_FINDING_FIELDS(CBT_FIELD_ENUM_) G_COUNT_ };
static const char *const finding_fields[G_COUNT_] = {CBT_EV_FINDING_FIELDS(CBT_FIELD_NAME_)};
#undef CBT_FIELD_ENUM_
#define CBT_FIELD_ENUM_(kind, type, name, en) U_##name,
enum { CBT_EV_GPU_FIELDS(CBT_FIELD_ENUM_) U_COUNT_ };
#define CBT_FIELD_ONE_(kind, type, name, en) +1
enum { U_SHORT_COUNT_ = 0 CBT_EV_GPU_TIME_FIELDS(CBT_FIELD_ONE_) }; /* the event's own: the first of the U_ fields */
#undef CBT_FIELD_ONE_
static const char *const gpu_fields[U_COUNT_] = {CBT_EV_GPU_FIELDS(CBT_FIELD_NAME_)};
#undef CBT_FIELD_ENUM_
#define CBT_FIELD_ENUM_(kind, type, name, en) F_##name,
enum { CBT_EV_FABRIC_FIELDS(CBT_FIELD_ENUM_) F_COUNT_ };
static const char *const fabric_fields[F_COUNT_] = {CBT_EV_FABRIC_FIELDS(CBT_FIELD_NAME_)};
#undef CBT_FIELD_ENUM_
#undef CBT_FIELD_NAME_
#define CBT_CHUNK_ENUM_(name) C_##name,
#define CBT_CHUNK_NAME_(name) #name,
enum { CBT_EV_CHUNK_FIELDS(CBT_CHUNK_ENUM_) C_COUNT_ };
static const char *const chunk_fields[C_COUNT_] = {CBT_EV_CHUNK_FIELDS(CBT_CHUNK_NAME_)};
#undef CBT_CHUNK_ENUM_
#undef CBT_CHUNK_NAME_
#define CBT_ATTRS_ENUM_(name) A_##name,
#define CBT_ATTRS_NAME_(name) #name,
enum { CBT_EV_ATTRS_FIELDS(CBT_ATTRS_ENUM_) A_COUNT_ };
static const char *const attrs_fields[A_COUNT_] = {CBT_EV_ATTRS_FIELDS(CBT_ATTRS_NAME_)};
#undef CBT_ATTRS_ENUM_
#undef CBT_ATTRS_NAME_
enum { H_BADDR, H_MEMSZ, H_PATH, H_IS_PIC, H_COUNT_ };
static const char *const bin_info_fields[H_COUNT_] = {"baddr", "memsz", "path", "is_pic"};

/* The members of the compact record's events (formats 3 and 4), integers then sequences and arrays. */
enum {
    X_id, X_w, X_driver_ns, X_caller, X_first, X_key, X_index, X_handle, X_stream_id, X_context, X_device,
    X_device_count, X_rules, X_hdr, X_ops, X_refs, X_dsts, X_srcs, X_sizes, X_attrs, X_attr_idxs, X_t, X_info,
    X_COUNT_
};
#define X_FIRST_SEQ_ X_hdr
static const char *const compact_fields[X_COUNT_] = {
    "id", "w", "driver_ns", "caller", "first", "key", "index", "handle", "stream_id", "context", "device",
    "device_count", "rules", "hdr", "ops", "refs", "dsts", "srcs", "sizes", "attrs", "attr_idxs", "t", "info",
};
/* Which members each event has: bit X_... (b and c of format 4 below, of format 3 here). */
#define XB(x) (1u << X_##x)
static const unsigned compact_members[] = {
    [EK_B] = XB(id) | XB(w) | XB(driver_ns) | XB(caller) | XB(hdr) | XB(ops) | XB(refs),
    [EK_BO] = XB(id) | XB(first) | XB(ops) | XB(refs),
    [EK_C] = XB(id) | XB(w) | XB(driver_ns) | XB(caller) | XB(hdr) | XB(attrs) | XB(attr_idxs) | XB(dsts) |
             XB(srcs) | XB(sizes) | XB(refs),
    [EK_CO] = XB(id) | XB(first) | XB(dsts) | XB(srcs) | XB(sizes) | XB(refs),
    [EK_CA] = XB(id) | XB(first) | XB(attrs) | XB(attr_idxs),
    [EK_OPERAND] = XB(key) | XB(index) | XB(info),
    [EK_STREAM] = XB(key) | XB(index) | XB(handle) | XB(stream_id) | XB(context) | XB(device) | XB(device_count) |
                  XB(rules),
};
/* Format 4's b and c: everything in t; bs and cs: their ops or copy arrays in sequences, the rest in t. */
#define XB_B4 XB(t)
#define XB_BS4 (XB(ops) | XB(t))
#define XB_C4 XB(t)
#define XB_CS4 (XB(attrs) | XB(dsts) | XB(srcs) | XB(sizes) | XB(t))
/* Slots of the reused sequence buffers: the chunk's, the attributes', the compact record's. */
enum { S_ATTR_WORDS = C_COUNT_, S_ATTR_IDXS, S_X, S_COUNT_ = S_X + X_COUNT_ };
/* The bytes per element of each sequence member. */
static const unsigned compact_width[X_COUNT_] = {[X_hdr] = 1, [X_ops] = 8, [X_refs] = 2, [X_dsts] = 8, [X_srcs] = 8,
                                                  [X_sizes] = 8, [X_attrs] = 8, [X_attr_idxs] = 8,
                                                  [X_t] = 8, [X_info] = 8};

/* A member: its index in the payload, whether it is signed, and for the chunk
 * sequences the bytes per element (1 as recorded now; 2, 4 or 8 read as well). */
struct mem {
    int idx;
    bool sgn;
    unsigned width;
};

struct ecinfo {
    const bt_event_class *ec;
    enum ev_kind kind;
    bool has_clock;
    int ctx_vpid, ctx_vtid, ctx_procname; /* -1 when absent */
    bool vpid_signed, vtid_signed;
    struct mem b[B_COUNT_];   /* batch, batch_end */
    struct mem g[G_COUNT_];   /* finding */
    struct mem c[C_COUNT_];   /* batch, batch_ops, batch1d */
    struct mem d[D_COUNT_];   /* batch1d */
    struct mem a[A_COUNT_];   /* batch1d, batch_attrs */
    struct mem batch_id;      /* batch_ops, batch_attrs */
    struct mem h[H_COUNT_];   /* bin_info */
    struct mem u[U_COUNT_];   /* gpu_time */
    bool gpu_short;           /* gpu_time: the event's own fields only, the rest from its batch */
    bool gpu_multi;           /* gpu_time: those fields as sequences, one element per batch (the shim's now) */
    struct mem rank;          /* process */
    int rank_var;             /* process: the string member, -1 absent */
    struct mem gpu_time;      /* process: idx -1 when absent (recorded before GPU time existed) */
    struct mem gpu_every;     /* process: idx -1 when absent (every batch timed) */
    struct mem image, pid_ns, start_ns; /* process: idx -1 when absent (recorded before process images) */
    struct mem id_baddr, id;  /* build_id */
    struct mem x[X_COUNT_];   /* b, bo, c, co, ca, operand, stream */
    struct mem st_tid;        /* stack */
    int st_frames;            /* stack: the sequence of return addresses */
    struct mem gr[8];         /* graph: kind, id, exec, stream, result, tid, driver_ns, caller */
    int gr_defs;              /* graph: the sequence of records */
    int la_rec;               /* launch: its array of CBT_EV_LAUNCH_WORDS words */
    struct mem fa[F_COUNT_];  /* fabric */
};

#define EC_SLOTS 1024u

struct reader {
    const struct cbt_read_opts *o;
    struct cbt_read_out out;
    struct cbt_asm *as;
    struct cbt_compact *compact; /* the compact record's dictionaries */
    /* sources */
    char **paths;        /* one per source component (trace dir or URL) */
    char **canon;        /* each path's realpath (a URL as given): one read of each */
    int npaths;
    int found;           /* paths found, those already there counted too */
    /* sink */
    bt_message_iterator **its;
    uint64_t nits, nlive, rr;
    /* caches */
    struct ecinfo *ecs[EC_SLOTS];
    const bt_stream *last_stream;
    uint32_t last_host;
    /* results */
    uint64_t cbt_events;
    bool shim_seen;       /* a statedump named the shim (libcubatchtrace.so) */
    char begin[CBT_READ_WINDOW_LEN], end[CBT_READ_WINDOW_LEN]; /* --begin/--end as the trimmer takes them (an offset made absolute) */
    enum ev_kind last_kind; /* the kind of the event read last */
    char fail[1024];     /* our own error, when set */
    /* the bytes of the chunk sequences, reused */
    uint8_t *seq[S_COUNT_];
    uint64_t seq_cap[S_COUNT_];
    const bt_field **el;  /* the elements of one sequence */
    uint64_t el_cap;
    struct pipe *pipe;    /* the decoding thread, when there is one */
    /* cubatchtrace:stack events, each waiting for its thread's next batch (direct-mapped by thread) */
    struct {
        uint32_t host;
        int64_t vpid;
        int32_t tid;
        uint8_t n;
        uint64_t frames[CBT_EV_STACK_MAX];
    } stacks[64];
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

static const bt_field_class *member_class(const bt_field_class *st, int idx)
{
    const bt_field_class_structure_member *m = bt_field_class_structure_borrow_member_by_index_const(st, (uint64_t)idx);
    return bt_field_class_structure_member_borrow_field_class_const(m);
}

static bool field_is(const bt_field_class *st, int idx, bt_field_class_type want)
{
    return bt_field_class_type_is(bt_field_class_get_type(member_class(st, idx)), want);
}

/* An array of unsigned integers of 8, 16, 32 or 64 bits: the bytes per element, else 0. */
static unsigned bytes_per_element(const bt_field_class *st, int idx)
{
    const bt_field_class *fc = member_class(st, idx);
    if (!bt_field_class_type_is(bt_field_class_get_type(fc), BT_FIELD_CLASS_TYPE_ARRAY))
        return 0;
    fc = bt_field_class_array_borrow_element_field_class_const(fc);
    if (!bt_field_class_type_is(bt_field_class_get_type(fc), BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return 0;
    uint64_t bits = bt_field_class_integer_get_field_value_range(fc);
    return bits == 8 || bits == 16 || bits == 32 || bits == 64 ? (unsigned)(bits / 8) : 0;
}

/* Look up `count` integer members; false (r->fail set) when one is missing or not an integer. */
static bool find_ints(struct reader *r, const char *ev, const bt_field_class *pl, const char *const *names, int count,
                      struct mem *out)
{
    for (int i = 0; i < count; i++) {
        out[i].idx = member_index(pl, names[i], &out[i].sgn);
        if (out[i].idx < 0) {
            if (strcmp(names[i], "format") == 0)
                snprintf(r->fail, sizeof(r->fail),
                         "event class %s has no field `format`: a trace of an older cubatchtrace (event format 1), "
                         "which this version does not read",
                         ev);
            else
                snprintf(r->fail, sizeof(r->fail), "event class %s has no field `%s` (a trace of another catalogue?)",
                         ev, names[i]);
            return false;
        }
        if (!field_is(pl, out[i].idx, BT_FIELD_CLASS_TYPE_INTEGER)) {
            snprintf(r->fail, sizeof(r->fail), "event class %s: field `%s` has an unexpected type", ev, names[i]);
            return false;
        }
    }
    return true;
}

/* Look up `count` members that are sequences (or arrays) of integers; false (r->fail set) when not. */
static bool find_int_arrays(struct reader *r, const char *ev, const bt_field_class *pl, const char *const *names,
                            int count, struct mem *out)
{
    for (int i = 0; i < count; i++) {
        out[i].idx = member_index(pl, names[i], &out[i].sgn);
        const bt_field_class *fc = out[i].idx >= 0 ? member_class(pl, out[i].idx) : NULL;
        if (!fc || !bt_field_class_type_is(bt_field_class_get_type(fc), BT_FIELD_CLASS_TYPE_ARRAY) ||
            !bt_field_class_type_is(
                bt_field_class_get_type(bt_field_class_array_borrow_element_field_class_const(fc)),
                BT_FIELD_CLASS_TYPE_INTEGER)) {
            snprintf(r->fail, sizeof(r->fail), "event class %s: field `%s` is missing or not a sequence of integers",
                     ev, names[i]);
            return false;
        }
    }
    return true;
}

static bool find_attrs(struct reader *r, const char *ev, const bt_field_class *pl, struct mem *a)
{
    if (!find_ints(r, ev, pl, attrs_fields, 1, a)) /* attrs_first */
        return false;
    for (int i = 1; i < A_COUNT_; i++) {
        a[i].idx = member_index(pl, attrs_fields[i], &a[i].sgn);
        if (a[i].idx < 0 || bytes_per_element(pl, a[i].idx) != 8) {
            snprintf(r->fail, sizeof(r->fail), "event class %s: field `%s` is %s", ev, attrs_fields[i],
                     a[i].idx < 0 ? "missing (a trace of another catalogue?)" : "not a sequence of 64-bit integers");
            return false;
        }
        a[i].width = 8;
    }
    return true;
}

static bool find_chunk(struct reader *r, const char *ev, const bt_field_class *pl, struct mem *c)
{
    if (!find_ints(r, ev, pl, chunk_fields, 1, c)) /* ops_first */
        return false;
    for (int i = 1; i < C_COUNT_; i++) {
        c[i].idx = member_index(pl, chunk_fields[i], &c[i].sgn);
        if (c[i].idx < 0 || !(c[i].width = bytes_per_element(pl, c[i].idx))) {
            snprintf(r->fail, sizeof(r->fail), "event class %s: field `%s` is %s", ev, chunk_fields[i],
                     c[i].idx < 0 ? "missing (a trace of another catalogue?)" : "not a sequence of unsigned integers");
            return false;
        }
    }
    return true;
}

/* The events read, by name; any other cubatchtrace event is EK_CBT_OTHER. */
static const struct {
    const char *name;
    enum ev_kind kind;
} ev_names[] = {
    {"cubatchtrace:batch", EK_BATCH},       {"cubatchtrace:batch_ops", EK_BATCH_OPS},
    {"cubatchtrace:batch_end", EK_BATCH_END}, {"cubatchtrace:finding", EK_FINDING},
    {"cubatchtrace:batch1d", EK_BATCH1D},   {"cubatchtrace:batch_attrs", EK_BATCH_ATTRS},
    {"cubatchtrace:process", EK_PROCESS},   {"cubatchtrace:gpu_time", EK_GPU_TIME},
    {"cubatchtrace:stack", EK_STACK},       {"cubatchtrace:graph", EK_GRAPH},
    {"cubatchtrace:fabric", EK_FABRIC},     {"cubatchtrace:launch", EK_LAUNCH},
    {"cubatchtrace:b", EK_B},               {"cubatchtrace:bs", EK_B}, /* a large 3D batch: as b, its ops in a sequence */
    {"cubatchtrace:bo", EK_BO},             {"cubatchtrace:c", EK_C},
    {"cubatchtrace:cs", EK_C}, /* a large 1D batch: as c, its copies in sequences */
    {"cubatchtrace:co", EK_CO},             {"cubatchtrace:ca", EK_CA},
    {"cubatchtrace:operand", EK_OPERAND},   {"cubatchtrace:stream", EK_STREAM},
    {"lttng_ust_statedump:bin_info", EK_BIN_INFO}, {"lttng_ust_statedump:build_id", EK_BUILD_ID},
};

static enum ev_kind ev_kind_of(const char *name)
{
    for (size_t i = 0; i < sizeof(ev_names) / sizeof(ev_names[0]); i++)
        if (strcmp(name, ev_names[i].name) == 0)
            return ev_names[i].kind;
    return strncmp(name, "cubatchtrace:", 13) == 0 ? EK_CBT_OTHER : EK_OTHER;
}

/* process: rank is an integer, rank_var a string; else not the event we know */
static void describe_process(struct ecinfo *e, const bt_field_class *pl)
{
    e->rank.idx = member_index(pl, "rank", &e->rank.sgn);
    e->rank_var = member_index(pl, "rank_var", NULL);
    if (e->rank.idx < 0 || !field_is(pl, e->rank.idx, BT_FIELD_CLASS_TYPE_INTEGER))
        e->kind = EK_CBT_OTHER;
    else if (e->rank_var >= 0 && !field_is(pl, e->rank_var, BT_FIELD_CLASS_TYPE_STRING))
        e->rank_var = -1;
    e->gpu_every.idx = member_index(pl, "gpu_every", &e->gpu_every.sgn);
    if (e->gpu_every.idx >= 0 && !field_is(pl, e->gpu_every.idx, BT_FIELD_CLASS_TYPE_INTEGER))
        e->gpu_every.idx = -1;
    e->gpu_time.idx = member_index(pl, "gpu_time", &e->gpu_time.sgn);
    if (e->gpu_time.idx >= 0 && !field_is(pl, e->gpu_time.idx, BT_FIELD_CLASS_TYPE_INTEGER))
        e->gpu_time.idx = -1;
    struct mem *im[] = {&e->image, &e->pid_ns, &e->start_ns};
    static const char *const im_names[] = {"image", "pid_ns", "start_ns"};
    for (int i = 0; i < 3; i++) {
        im[i]->idx = member_index(pl, im_names[i], &im[i]->sgn);
        if (im[i]->idx >= 0 && !field_is(pl, im[i]->idx, BT_FIELD_CLASS_TYPE_INTEGER))
            im[i]->idx = -1;
    }
}

/* build_id: baddr and a sequence of bytes, else not the statedump we know */
static void describe_build_id(struct ecinfo *e, const bt_field_class *pl)
{
    e->id_baddr.idx = member_index(pl, "baddr", &e->id_baddr.sgn);
    e->id.idx = member_index(pl, "build_id", NULL);
    if (e->id_baddr.idx < 0 || !field_is(pl, e->id_baddr.idx, BT_FIELD_CLASS_TYPE_INTEGER) || e->id.idx < 0 ||
        bytes_per_element(pl, e->id.idx) != 1)
        e->kind = EK_OTHER;
}

/* stack: an integer tid and a sequence of integers; else not the event we know */
static void describe_stack(struct ecinfo *e, const bt_field_class *pl)
{
    e->st_tid.idx = member_index(pl, "tid", &e->st_tid.sgn);
    e->st_frames = member_index(pl, "frames", NULL);
    if (e->st_tid.idx < 0 || !field_is(pl, e->st_tid.idx, BT_FIELD_CLASS_TYPE_INTEGER) || e->st_frames < 0 ||
        bytes_per_element(pl, e->st_frames) != 8)
        e->kind = EK_CBT_OTHER;
}

static const char *const graph_members[8] = {"kind", "id", "exec", "stream", "result", "tid", "driver_ns", "caller"};

/* graph: eight integers and a sequence of 64-bit integers; else not the event we know */
static void describe_graph(struct ecinfo *e, const bt_field_class *pl)
{
    for (int i = 0; i < 8; i++) {
        e->gr[i].idx = member_index(pl, graph_members[i], &e->gr[i].sgn);
        if (e->gr[i].idx < 0 || !field_is(pl, e->gr[i].idx, BT_FIELD_CLASS_TYPE_INTEGER))
            e->kind = EK_CBT_OTHER;
    }
    e->gr_defs = member_index(pl, "defs", NULL);
    if (e->gr_defs < 0 || bytes_per_element(pl, e->gr_defs) != 8)
        e->kind = EK_CBT_OTHER;
}

/* launch: its array of CBT_EV_LAUNCH_WORDS 64-bit words; else not the event we know */
static void describe_launch(struct ecinfo *e, const bt_field_class *pl)
{
    e->la_rec = member_index(pl, "rec", NULL);
    if (e->la_rec < 0 || bytes_per_element(pl, e->la_rec) != 8 ||
        !field_is(pl, e->la_rec, BT_FIELD_CLASS_TYPE_STATIC_ARRAY) ||
        bt_field_class_array_static_get_length(member_class(pl, e->la_rec)) != CBT_EV_LAUNCH_WORDS)
        e->kind = EK_CBT_OTHER;
}

/* fabric: its integer members (enumerations are integers); else not the event we know */
static void describe_fabric(struct ecinfo *e, const bt_field_class *pl)
{
    for (int i = 0; i < F_COUNT_; i++) {
        e->fa[i].idx = member_index(pl, fabric_fields[i], &e->fa[i].sgn);
        if (e->fa[i].idx < 0 || !field_is(pl, e->fa[i].idx, BT_FIELD_CLASS_TYPE_INTEGER))
            e->kind = EK_CBT_OTHER;
    }
}

/* formats 3 and 4: every member its event has, of its kind; false after r->fail */
static bool describe_compact(struct reader *r, struct ecinfo *e, const bt_field_class *pl, const char *name)
{
    unsigned members = compact_members[e->kind];
    if ((e->kind == EK_B || e->kind == EK_C) && member_index(pl, "t", NULL) >= 0) {
        bool seqs = member_index(pl, e->kind == EK_B ? "ops" : "dsts", NULL) >= 0;
        members = e->kind == EK_B ? (seqs ? XB_BS4 : XB_B4) : (seqs ? XB_CS4 : XB_C4);
    }
    for (int i = 0; i < X_COUNT_; i++) {
        e->x[i].idx = -1;
        if (!(members >> i & 1))
            continue;
        e->x[i].idx = member_index(pl, compact_fields[i], &e->x[i].sgn);
        bool fits = e->x[i].idx >= 0 &&
                    (i < X_FIRST_SEQ_ ? field_is(pl, e->x[i].idx, BT_FIELD_CLASS_TYPE_INTEGER)
                                      : bytes_per_element(pl, e->x[i].idx) == compact_width[i]);
        if (!fits) {
            snprintf(r->fail, sizeof(r->fail), "event class %s: field `%s` is %s", name, compact_fields[i],
                     e->x[i].idx < 0 ? "missing (a trace of another catalogue?)" : "not of the type it should be");
            return false;
        }
        e->x[i].width = compact_width[i];
    }
    return true;
}

/* format 2 and the statedump's bin_info: the members of the events.h lists; false after r->fail */
static bool describe_fields(struct reader *r, struct ecinfo *e, const bt_field_class *pl, const char *name)
{
    if (e->kind != EK_BIN_INFO && member_index(pl, "batch_id", NULL) < 0) { /* the key of everything */
        snprintf(r->fail, sizeof(r->fail), "event class %s has no field `batch_id` (a trace of another catalogue?)",
                 name);
        return false;
    }
    bool ok = true;
    switch (e->kind) {
    case EK_BATCH:
        ok = find_ints(r, name, pl, batch_fields, B_COUNT_, e->b) && find_chunk(r, name, pl, e->c);
        break;
    case EK_BATCH_END:
        ok = find_ints(r, name, pl, batch_fields, B_COUNT_, e->b);
        break;
    case EK_BATCH1D:
        ok = find_ints(r, name, pl, batch_fields, B_COUNT_, e->b) &&
             find_ints(r, name, pl, batch1d_fields, D_COUNT_, e->d) && find_attrs(r, name, pl, e->a) &&
             find_chunk(r, name, pl, e->c);
        break;
    case EK_BATCH_ATTRS: {
        static const char *const id[] = {"batch_id"};
        ok = find_ints(r, name, pl, id, 1, &e->batch_id) && find_attrs(r, name, pl, e->a);
        break;
    }
    case EK_BATCH_OPS: {
        static const char *const id[] = {"batch_id"};
        ok = find_ints(r, name, pl, id, 1, &e->batch_id) && find_chunk(r, name, pl, e->c);
        break;
    }
    case EK_FINDING:
        ok = find_ints(r, name, pl, finding_fields, G_COUNT_, e->g);
        break;
    case EK_GPU_TIME: {
        /* several batches' own fields as sequences (the shim's now), the
         * short event of one batch (the batch's record marked), or the
         * whole one of older traces */
        int id = member_index(pl, "batch_id", NULL);
        e->gpu_multi = id >= 0 && field_is(pl, id, BT_FIELD_CLASS_TYPE_ARRAY);
        e->gpu_short = e->gpu_multi || member_index(pl, "bytes", &e->u[U_bytes].sgn) < 0;
        ok = e->gpu_multi ? find_int_arrays(r, name, pl, gpu_fields, U_SHORT_COUNT_, e->u)
                          : find_ints(r, name, pl, gpu_fields, e->gpu_short ? U_SHORT_COUNT_ : U_COUNT_, e->u);
        break;
    }
    default: /* bin_info: is_pic is optional; anything else missing, and it is not the statedump we know */
        for (int i = 0; i < H_COUNT_; i++) {
            e->h[i].idx = member_index(pl, bin_info_fields[i], &e->h[i].sgn);
            bool fits = e->h[i].idx >= 0 &&
                        field_is(pl, e->h[i].idx, i == H_PATH ? BT_FIELD_CLASS_TYPE_STRING : BT_FIELD_CLASS_TYPE_INTEGER);
            if (!fits && i != H_IS_PIC) {
                e->kind = EK_OTHER;
                return true;
            }
            if (!fits)
                e->h[i].idx = -1;
        }
        break;
    }
    return ok;
}

static struct ecinfo *ec_describe(struct reader *r, const bt_event_class *ec)
{
    struct ecinfo *e = calloc(1, sizeof(*e));
    if (!e) {
        snprintf(r->fail, sizeof(r->fail), "out of memory");
        return NULL;
    }
    e->ec = ec;
    const char *name = bt_event_class_get_name(ec);
    if (!name)
        name = "";
    e->kind = ev_kind_of(name);
    if (strncmp(name, "cubatchtrace:", 13) == 0) {
        /* the recorder's version, where tracepoints/cubatchtrace_tp.h puts it in an event class */
        const char *uri = bt_event_class_get_emf_uri(ec);
        if (uri && strncmp(uri, "urn:cubatchtrace:", 17) == 0)
            if (r->out.recorded_by)
                r->out.recorded_by(r->out.ctx, uri + 17);
    }
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
    if (e->kind == EK_PROCESS)
        describe_process(e, pl);
    else if (e->kind == EK_BUILD_ID)
        describe_build_id(e, pl);
    else if (e->kind == EK_STACK)
        describe_stack(e, pl);
    else if (e->kind == EK_GRAPH)
        describe_graph(e, pl);
    else if (e->kind == EK_FABRIC)
        describe_fabric(e, pl);
    else if (e->kind == EK_LAUNCH)
        describe_launch(e, pl);
    else if (!(e->kind >= EK_B ? describe_compact(r, e, pl, name) : describe_fields(r, e, pl, name))) {
        free(e);
        return NULL;
    }
    return e;
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

static inline uint64_t member_int(const bt_field *st, struct mem m)
{
    return get_int(bt_field_structure_borrow_member_field_by_index_const(st, (uint64_t)m.idx), m.sgn);
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
    r->last_host = r->out.host(r->out.ctx, host);
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

/*
 * The bytes of sequence member `which` of `pl`, copied into r->seq[which]:
 * each element in the machine's byte order (the recorder's, for elements
 * wider than a byte).  Every element is an object of its own that the
 * decoder wrote a while ago, mostly out of cache by now: the element
 * pointers are collected first (one array, read in order), then the values
 * are read with the objects fetched ahead.
 */
static const uint8_t *seq_bytes_of(struct reader *r, struct mem m, const bt_field *pl, int which, uint64_t *len)
{
    enum { AHEAD = 32 }; /* elements: the best of 0, 16, 32 and 64 measured */
    const bt_field *s = bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)m.idx);
    uint64_t n = bt_field_array_get_length(s), w = m.width;
    if (!cbt_grow((void **)&r->el, &r->el_cap, n, sizeof(*r->el)) ||
        !cbt_grow((void **)&r->seq[which], &r->seq_cap[which], n * w, 1)) {
        snprintf(r->fail, sizeof(r->fail), "out of memory (a sequence of %" PRIu64 " elements)", n);
        return NULL;
    }
    static uint8_t empty[1];
    const bt_field **el = r->el;
    uint8_t *b = r->seq[which] ? r->seq[which] : empty; /* nothing read yet: not NULL, which is the error */
    for (uint64_t i = 0; i < n; i++)
        el[i] = bt_field_array_borrow_element_field_by_index_const(s, i);
    /* one loop per width, the width's test out of it */
#define SEQ_COPY_(T)                                                                                                   \
    for (uint64_t i = 0; i < n; i++) {                                                                                 \
        if (i + AHEAD < n) {                                                                                           \
            __builtin_prefetch(el[i + AHEAD]);                                                                         \
            __builtin_prefetch((const char *)el[i + AHEAD] + 64);                                                      \
        }                                                                                                              \
        T x = (T)bt_field_integer_unsigned_get_value(el[i]);                                                           \
        memcpy(b + sizeof(T) * i, &x, sizeof(T));                                                                      \
    }
    switch (w) {
    case 1: SEQ_COPY_(uint8_t) break;
    case 2: SEQ_COPY_(uint16_t) break;
    case 4: SEQ_COPY_(uint32_t) break;
    default: SEQ_COPY_(uint64_t) break;
    }
#undef SEQ_COPY_
    *len = n * w;
    return b;
}

static const uint8_t *seq_bytes(struct reader *r, const struct ecinfo *e, const bt_field *pl, int which, uint64_t *len)
{
    return seq_bytes_of(r, e->c[which], pl, which, len);
}

static bool read_attrs(struct reader *r, const struct ecinfo *e, const bt_field *pl, struct cbt_attr_bytes *a)
{
    a->first = member_int(pl, e->a[A_attrs_first]);
    return (a->words = seq_bytes_of(r, e->a[A_attr_words], pl, S_ATTR_WORDS, &a->words_len)) &&
           (a->idxs = seq_bytes_of(r, e->a[A_attr_idxs], pl, S_ATTR_IDXS, &a->idxs_len));
}

static bool read_chunk(struct reader *r, const struct ecinfo *e, const bt_field *pl, struct cbt_chunk_bytes *c)
{
    c->first = member_int(pl, e->c[C_ops_first]);
    c->src = c->dst = NULL; /* the byte sequences, to decode */
    return (c->ops = seq_bytes(r, e, pl, C_ops, &c->ops_len)) &&
           (c->operand_of = seq_bytes(r, e, pl, C_operand_of, &c->operand_of_len)) &&
           (c->operands = seq_bytes(r, e, pl, C_operands, &c->operands_len));
}

static bool read_batch_fields(struct reader *r, const struct ecinfo *e, const bt_field *pl, struct cbt_ev_batch *h)
{
#define CBT_FIELD_GET_(kind, type, name, en) h->name = (type)member_int(pl, e->b[B_##name]);
    CBT_EV_BATCH_FIELDS(CBT_FIELD_GET_)
#undef CBT_FIELD_GET_
    if (h->format > CBT_EV_FORMAT) {
        snprintf(r->fail, sizeof(r->fail),
                 "recorded in event format %u, newer than this cubatchtrace reads (%u): read it with a newer cubatchtrace",
                 (unsigned)h->format, (unsigned)CBT_EV_FORMAT);
        return false;
    }
    return true;
}

/* A compact event's members into e (what it lacks stays 0/NULL); false on error (r->fail). */
static bool read_compact(struct reader *r, const struct ecinfo *e, const bt_field *pl, struct cbt_compact_ev *x,
                         uint64_t ints[X_FIRST_SEQ_])
{
    memset(x, 0, sizeof *x);
    for (int i = 0; i < X_FIRST_SEQ_; i++)
        ints[i] = e->x[i].idx >= 0 ? member_int(pl, e->x[i]) : 0;
    x->id = ints[X_id];
    x->w = ints[X_w];
    x->driver_ns = ints[X_driver_ns];
    x->caller = ints[X_caller];
    x->first = ints[X_first];
    const uint8_t *t = NULL;
    uint64_t t_len = 0;
    const uint8_t **seqs[] = {&x->hdr, &x->ops, &x->refs, &x->dsts, &x->srcs, &x->sizes, &x->attrs, &x->attr_idxs,
                              &t, NULL};
    uint64_t *lens[] = {&x->hdr_len, &x->ops_len, &x->refs_len, &x->dsts_len, &x->srcs_len, &x->sizes_len,
                        &x->attrs_len, &x->attr_idxs_len, &t_len, NULL};
    for (int i = X_FIRST_SEQ_; i < X_info; i++) {
        if (e->x[i].idx < 0)
            continue;
        if (!(*seqs[i - X_FIRST_SEQ_] = seq_bytes_of(r, e->x[i], pl, S_X + i, lens[i - X_FIRST_SEQ_])))
            return false;
    }
    if (t) { /* format 4: t's bytes are the head words, then hdr and what follows it */
        uint64_t words[CBT_EV_HEAD_WORDS] = {0};
        uint64_t hl = t_len < sizeof words ? t_len : sizeof words;
        memcpy(words, t, hl);
        x->hdr = t + hl;
        x->hdr_len = t_len - hl;
        x->tail_inline = e->x[X_ops].idx < 0 && e->x[X_dsts].idx < 0; /* b, c: the ops or copies in t */
        x->id = words[CBT_H_ID];
        x->w = words[CBT_H_W];
        x->driver_ns = words[CBT_H_DRIVER_NS];
        x->caller = words[CBT_H_CALLER];
        x->tail = true;
    }
    return true;
}

static void event_time(const struct ecinfo *e, const bt_message *msg, struct cbt_where *w)
{
    if (!e->has_clock)
        return;
    const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
    int64_t ns;
    if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
        w->ts_ns = ns;
        w->has_ts = true;
    }
}

/* A batch's GPU time, joined: handed on at w (the gpu_time event's process and time). */
static void gpu_out(struct reader *r, struct cbt_where w, const struct cbt_ev_gpu *g)
{
    w.vtid = g->tid;
    cbt_where_image_of_batch(&w, g->batch_id);
    if (r->out.gpu_time)
        r->out.gpu_time(r->out.ctx, &w, g);
    if (r->o->gpu)
        r->o->gpu(r->o->gpu_ctx, &w, g);
}

/* A batch's own GPU time (the short form): joined with its batch, handed on. */
static void gpu_time_one(struct reader *r, const struct cbt_where w, const struct cbt_ev_gpu_time *t)
{
    struct cbt_ev_gpu g;
    /* a batch not seen: cut off by --begin (its record before the window,
     * its read-back in it): outside the window, as its batch is; else (its
     * events discarded, a session started late) handed on, the batch's
     * fields unknown */
    if (!cbt_asm_gpu_time(r->as, &w, t, &g) && (r->o->begin || r->o->end))
        return;
    gpu_out(r, w, &g);
}

/* The batch events of format 2 (batch, batch1d, their ops and attributes,
 * batch_end) and the shim's inline findings; -1 after r->fail. */
static int on_format2(struct reader *r, const struct ecinfo *e, const bt_message *msg, const bt_field *pl,
                      struct cbt_where w)
{
    switch (e->kind) {
    case EK_BATCH: {
        struct cbt_ev_batch h;
        struct cbt_chunk_bytes c;
        if (!read_batch_fields(r, e, pl, &h) || !read_chunk(r, e, pl, &c))
            return -1;
        w.vtid = h.tid;
        cbt_where_image_of_batch(&w, h.batch_id);
        event_time(e, msg, &w);
        cbt_asm_header(r->as, &w, &h, &c);
        break;
    }
    case EK_BATCH1D: {
        struct cbt_ev_batch h;
        struct cbt_ev_batch1d d;
        struct cbt_attr_bytes a;
        struct cbt_chunk_bytes c;
        if (!read_batch_fields(r, e, pl, &h) || !read_attrs(r, e, pl, &a) || !read_chunk(r, e, pl, &c))
            return -1;
#define CBT_FIELD_GET_(kind, type, name, en) d.name = (type)member_int(pl, e->d[D_##name]);
        CBT_EV_BATCH1D_FIELDS(CBT_FIELD_GET_)
#undef CBT_FIELD_GET_
        w.vtid = h.tid;
        cbt_where_image_of_batch(&w, h.batch_id);
        event_time(e, msg, &w);
        cbt_asm_header1d(r->as, &w, &h, &d, &a, &c);
        break;
    }
    case EK_BATCH_ATTRS: {
        struct cbt_attr_bytes a;
        if (!read_attrs(r, e, pl, &a))
            return -1;
        uint64_t id = member_int(pl, e->batch_id);
        cbt_where_image_of_batch(&w, id);
        cbt_asm_attrs(r->as, &w, id, &a);
        break;
    }
    case EK_BATCH_OPS: {
        struct cbt_chunk_bytes c;
        if (!read_chunk(r, e, pl, &c))
            return -1;
        uint64_t id = member_int(pl, e->batch_id);
        cbt_where_image_of_batch(&w, id);
        cbt_asm_chunk(r->as, &w, id, &c);
        break;
    }
    case EK_BATCH_END: {
        struct cbt_ev_batch h;
        if (!read_batch_fields(r, e, pl, &h))
            return -1;
        w.vtid = h.tid;
        cbt_where_image_of_batch(&w, h.batch_id);
        event_time(e, msg, &w); /* when the call returned: the batch's time */
        cbt_asm_end(r->as, &w, &h);
        break;
    }
    case EK_FINDING: {
        struct cbt_ev_finding f;
#define CBT_FIELD_GET_(kind, type, name, en) f.name = (type)member_int(pl, e->g[G_##name]);
        CBT_EV_FINDING_FIELDS(CBT_FIELD_GET_)
#undef CBT_FIELD_GET_
        w.vtid = f.tid;
        cbt_where_image_of_batch(&w, f.batch_id);
        cbt_asm_inline_finding(r->as, &w, &f);
        break;
    }
    default:
        break;
    }
    return 0;
}

/* The compact record's events (formats 3 and 4); -1 after r->fail. */
static int on_compact(struct reader *r, const struct ecinfo *e, const bt_message *msg, const bt_field *pl,
                      struct cbt_where w)
{
    struct cbt_compact_ev x;
    uint64_t ints[X_FIRST_SEQ_];
    if (!read_compact(r, e, pl, &x, ints))
        return -1;
    if (e->kind == EK_OPERAND || e->kind == EK_STREAM) {
        if (e->kind == EK_STREAM) {
            const struct cbt_ev_stream s = {
                .key = ints[X_key], .index = (uint8_t)ints[X_index], .handle = ints[X_handle],
                .stream_id = ints[X_stream_id], .context = ints[X_context], .device = (int32_t)ints[X_device],
                .device_count = (int32_t)ints[X_device_count], .rules = (uint16_t)ints[X_rules],
            };
            if (ints[X_index] < CBT_EV_STREAMS)
                cbt_compact_stream(r->compact, &w, &s);
            return 0;
        }
        uint64_t len = 0;
        const uint8_t *info = seq_bytes_of(r, e->x[X_info], pl, S_X + X_info, &len);
        if (!info)
            return -1;
        if (len == 8 * CBT_EV_OPERAND_WORDS) {
            uint64_t words[CBT_EV_OPERAND_WORDS];
            memcpy(words, info, sizeof words);
            cbt_compact_operand(r->compact, &w, ints[X_key], ints[X_index], words);
        }
        return 0;
    }
    if (e->kind == EK_CA) {
        cbt_compact_attrs(r->compact, &w, &x);
        return 0;
    }
    cbt_where_image_of_batch(&w, x.id);
    event_time(e, msg, &w);
    if (e->kind == EK_B || e->kind == EK_C) {
        /* the thread's stack, written just before this batch and starting at its caller */
        int32_t tid = CBT_W_TID(x.w);
        __typeof__(r->stacks[0]) *s = &r->stacks[(uint32_t)tid % (sizeof r->stacks / sizeof r->stacks[0])];
        if (s->n && s->tid == tid && s->vpid == w.vpid && s->host == w.host) {
            if (s->frames[0] == x.caller)
                cbt_asm_stack(r->as, &w, x.id, s->frames, s->n);
            s->n = 0;
        }
        cbt_compact_batch(r->compact, &w, e->kind == EK_C, &x);
    } else {
        cbt_compact_chunk(r->compact, &w, e->kind == EK_CO, &x);
    }
    return 0;
}

/* cubatchtrace:stack: held for the thread's next batch (on_compact) */
static void on_stack(struct reader *r, const struct ecinfo *e, const bt_field *pl, struct cbt_where w)
{
    int32_t tid = (int32_t)member_int(pl, e->st_tid);
    const bt_field *seq = bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->st_frames);
    uint64_t n = bt_field_array_get_length(seq);
    __typeof__(r->stacks[0]) *s = &r->stacks[(uint32_t)tid % (sizeof r->stacks / sizeof r->stacks[0])];
    s->host = w.host;
    s->vpid = w.vpid;
    s->tid = tid;
    s->n = (uint8_t)(n < CBT_EV_STACK_MAX ? n : CBT_EV_STACK_MAX);
    for (uint8_t i = 0; i < s->n; i++)
        s->frames[i] = bt_field_integer_unsigned_get_value(bt_field_array_borrow_element_field_by_index_const(seq, i));
}

/* cubatchtrace:graph: to the assembler, which expands a launch to its copies */
static void event_time(const struct ecinfo *e, const bt_message *msg, struct cbt_where *w);
static void on_graph(struct reader *r, const struct ecinfo *e, const bt_message *msg, const bt_field *pl,
                     struct cbt_where w)
{
    event_time(e, msg, &w);
    struct cbt_ev_graph g = {
        .kind = (uint8_t)member_int(pl, e->gr[0]), .id = (uint64_t)member_int(pl, e->gr[1]),
        .exec = (uint64_t)member_int(pl, e->gr[2]), .stream = (uint64_t)member_int(pl, e->gr[3]),
        .result = (uint32_t)member_int(pl, e->gr[4]), .tid = (int32_t)member_int(pl, e->gr[5]),
        .driver_ns = (uint64_t)member_int(pl, e->gr[6]), .caller = (uint64_t)member_int(pl, e->gr[7]),
    };
    const bt_field *seq = bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->gr_defs);
    uint64_t n = bt_field_array_get_length(seq);
    uint64_t *defs = malloc((n ? n : 1) * sizeof *defs);
    if (!defs)
        return;
    for (uint64_t i = 0; i < n; i++)
        defs[i] = bt_field_integer_unsigned_get_value(bt_field_array_borrow_element_field_by_index_const(seq, i));
    g.defs = defs;
    g.ndefs = (uint32_t)n;
    if (g.kind == CBT_GRAPH_LAUNCH || g.kind == CBT_GRAPH_CAPTURED)
        cbt_where_image_of_batch(&w, g.id);
    cbt_asm_graph(r->as, &w, &g);
    free(defs);
}

/* cubatchtrace:launch: a graph event of kind CBT_GRAPH_LAUNCH, packed */
static void on_launch(struct reader *r, const struct ecinfo *e, const bt_message *msg, const bt_field *pl,
                      struct cbt_where w)
{
    event_time(e, msg, &w);
    const bt_field *a = bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->la_rec);
    uint64_t rec[CBT_EV_LAUNCH_WORDS];
    for (uint64_t i = 0; i < CBT_EV_LAUNCH_WORDS; i++)
        rec[i] = bt_field_integer_unsigned_get_value(bt_field_array_borrow_element_field_by_index_const(a, i));
    struct cbt_ev_graph g;
    cbt_ev_launch_unpack(&g, rec);
    cbt_where_image_of_batch(&w, g.id);
    cbt_asm_graph(r->as, &w, &g);
}

static void on_fabric(struct reader *r, const struct ecinfo *e, const bt_message *msg, const bt_field *pl,
                      struct cbt_where w)
{
    if (!r->out.fabric)
        return;
    event_time(e, msg, &w);
    struct cbt_ev_fabric f;
#define CBT_FIELD_GET_(kind, type, name, en) f.name = (type)member_int(pl, e->fa[F_##name]);
    CBT_EV_FABRIC_FIELDS(CBT_FIELD_GET_)
#undef CBT_FIELD_GET_
    r->out.fabric(r->out.ctx, &w, &f);
}

static void on_process(struct reader *r, const struct ecinfo *e, const bt_field *pl, struct cbt_where w)
{
    const char *var = e->rank_var >= 0 ? bt_field_string_get_value(bt_field_structure_borrow_member_field_by_index_const(
                                             pl, (uint64_t)e->rank_var))
                                       : "";
    int gpu = e->gpu_time.idx >= 0 ? member_int(pl, e->gpu_time) != 0 : -1;
    if (e->image.idx >= 0) /* the image's tag: the high 32 bits of its id, as of its batch ids */
        cbt_where_image(&w, (uint32_t)(member_int(pl, e->image) >> 32));
    if (r->out.process)
        r->out.process(r->out.ctx, &w, (int64_t)member_int(pl, e->rank), var, gpu,
                       e->gpu_every.idx >= 0 ? (uint32_t)member_int(pl, e->gpu_every) : 1);
    if (w.image && r->out.image)
        r->out.image(r->out.ctx, &w, e->pid_ns.idx >= 0 ? member_int(pl, e->pid_ns) : 0,
                      e->start_ns.idx >= 0 ? member_int(pl, e->start_ns) : 0);
}

static void on_gpu_time(struct reader *r, const struct ecinfo *e, const bt_message *msg, const bt_field *pl,
                        struct cbt_where w)
{
    event_time(e, msg, &w);
    if (e->gpu_multi) {
        /* one batch per element, all at the event's time */
        const bt_field *f[U_SHORT_COUNT_];
        uint64_t n = UINT64_MAX;
        for (int i = 0; i < U_SHORT_COUNT_; i++) {
            f[i] = bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->u[i].idx);
            uint64_t len = bt_field_array_get_length(f[i]);
            n = len < n ? len : n; /* sequences of unequal length: the batches all of them give */
        }
        for (uint64_t k = 0; k < n; k++) {
            struct cbt_ev_gpu_time t;
#define CBT_FIELD_GET_(kind, type, name, en)                                                                           \
    t.name = (type)get_int(bt_field_array_borrow_element_field_by_index_const(f[U_##name], k), e->u[U_##name].sgn);
            CBT_EV_GPU_TIME_FIELDS(CBT_FIELD_GET_)
#undef CBT_FIELD_GET_
            gpu_time_one(r, w, &t);
        }
        return;
    }
    if (e->gpu_short) {
        struct cbt_ev_gpu_time t;
#define CBT_FIELD_GET_(kind, type, name, en) t.name = (type)member_int(pl, e->u[U_##name]);
        CBT_EV_GPU_TIME_FIELDS(CBT_FIELD_GET_)
#undef CBT_FIELD_GET_
        gpu_time_one(r, w, &t);
        return;
    }
    struct cbt_ev_gpu g;
#define CBT_FIELD_GET_(kind, type, name, en) g.name = (type)member_int(pl, e->u[U_##name]);
    CBT_EV_GPU_FIELDS(CBT_FIELD_GET_)
#undef CBT_FIELD_GET_
    gpu_out(r, w, &g);
}

/* lttng_ust_statedump's bin_info and build_id: what names a call site. */
static void on_statedump(struct reader *r, const struct ecinfo *e, const bt_field *pl, struct cbt_where w)
{
    switch (e->kind) {
    case EK_BIN_INFO: {
        const char *path = bt_field_string_get_value(
            bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->h[H_PATH].idx));
        bool pic = e->h[H_IS_PIC].idx >= 0 ? member_int(pl, e->h[H_IS_PIC]) != 0 : true;
        const char *base = path ? strrchr(path, '/') : NULL;
        if (base && strcmp(base, "/libcubatchtrace.so") == 0)
            r->shim_seen = true; /* a process ran with the shim: its trace is ours, batches or none */
        if (r->out.bin_info)
            r->out.bin_info(r->out.ctx, &w, member_int(pl, e->h[H_BADDR]), member_int(pl, e->h[H_MEMSZ]), path, pic);
        break;
    }
    case EK_BUILD_ID: {
        const bt_field *seq = bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->id.idx);
        uint8_t id[64];
        uint64_t n = bt_field_array_get_length(seq);
        if (n > sizeof(id))
            break; /* not a build id this tool knows */
        for (uint64_t i = 0; i < n; i++)
            id[i] = (uint8_t)bt_field_integer_unsigned_get_value(bt_field_array_borrow_element_field_by_index_const(seq, i));
        if (r->out.build_id)
            r->out.build_id(r->out.ctx, &w, member_int(pl, e->id_baddr), id, (size_t)n);
        break;
    }
    default:
        break;
    }
}

static int on_event(struct reader *r, const bt_message *msg)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    const bt_event_class *ec = bt_event_borrow_class_const(ev);
    struct ecinfo *e = ec_lookup(r, ec);
    if (!e)
        return -1;
    r->last_kind = e->kind;
    if (e->kind == EK_OTHER)
        return 0;
    /* the events counted: those of cubatchtrace, of the processes asked for */
    bool ours = e->kind != EK_BIN_INFO && e->kind != EK_BUILD_ID;
    if (e->kind == EK_CBT_OTHER) {
        r->cbt_events += r->o->npids == 0;
        return 0;
    }

    struct cbt_where w = {.vpid = -1, .vtid = -1, .ts_ns = INT64_MIN};
    const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
    if (ctx && e->ctx_vpid >= 0)
        w.vpid = (int64_t)get_int(bt_field_structure_borrow_member_field_by_index_const(ctx, (uint64_t)e->ctx_vpid),
                                  e->vpid_signed);
    if (!pid_wanted(r, w.vpid))
        return 0;
    r->cbt_events += ours;
    if (ctx && e->ctx_vtid >= 0)
        w.vtid = (int64_t)get_int(bt_field_structure_borrow_member_field_by_index_const(ctx, (uint64_t)e->ctx_vtid),
                                  e->vtid_signed);
    if (ctx && e->ctx_procname >= 0)
        w.procname = bt_field_string_get_value(
            bt_field_structure_borrow_member_field_by_index_const(ctx, (uint64_t)e->ctx_procname));
    w.host = stream_host(r, ev);
    const bt_field *pl = bt_event_borrow_payload_field_const(ev);

    switch (e->kind) {
    case EK_B:
    case EK_C:
    case EK_BO:
    case EK_CO:
    case EK_CA:
    case EK_OPERAND:
    case EK_STREAM:
        return on_compact(r, e, msg, pl, w);
    case EK_PROCESS:
        on_process(r, e, pl, w);
        return 0;
    case EK_GPU_TIME:
        on_gpu_time(r, e, msg, pl, w);
        return 0;
    case EK_STACK:
        on_stack(r, e, pl, w);
        return 0;
    case EK_GRAPH:
        on_graph(r, e, msg, pl, w);
        return 0;
    case EK_FABRIC:
        on_fabric(r, e, msg, pl, w);
        return 0;
    case EK_LAUNCH:
        on_launch(r, e, msg, pl, w);
        return 0;
    case EK_BIN_INFO:
    case EK_BUILD_ID:
        on_statedump(r, e, pl, w);
        return 0;
    default:
        return on_format2(r, e, msg, pl, w);
    }
}

static int on_message(struct reader *r, const bt_message *msg)
{
    switch (bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT:
        return on_event(r, msg);
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
        uint64_t n = 0;
        bool known = bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE;
        if (r->out.discarded)
            r->out.discarded(r->out.ctx, false, n, known);
        return 0;
    }
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
        uint64_t n = 0;
        bool known = bt_message_discarded_packets_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE;
        if (r->out.discarded)
            r->out.discarded(r->out.ctx, true, n, known);
        return 0;
    }
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- the decoding thread */

/*
 * With a second CPU to spare, the events are decoded (their fields copied
 * out, batches put back together, validated, aggregated) on a thread of
 * their own while the graph's thread goes on taking the next messages from
 * babeltrace2: the two overlap, which shortens the wall time of a read, not
 * its CPU time.  The graph's thread hands each message over, in order,
 * through a ring of PIPE_MSGS; the decoding thread only reads them (field
 * values and classes, which no one changes while a reference is held), and
 * the graph's thread, which alone calls into babeltrace2 otherwise, releases
 * them once decoded: babeltrace2's reference counts and message pools are
 * not thread-safe.  The ring bounds the messages held, and so the memory:
 * each holds its event's fields, which the source cannot reuse until then.
 * The decoding thread does what the graph's thread would have done, in the
 * same order, so what is read is the same.  A failure stops the decoding
 * (r->fail says why) and the graph's next consume returns an error.
 *
 * Each side sleeps until half a ring is there for it (messages to decode,
 * room to hand over) or the end: a wake costs microseconds, a small event
 * far less.
 */
#define PIPE_MSGS 16u

/* head and done are read and written with atomics, without the lock; a side
 * about to sleep sets its flag, then looks again, under the lock; the other
 * side, having moved head or done, looks at the flag (both sequentially
 * consistent: one of the two sees the other) and wakes it under the lock. */
struct pipe {
    pthread_t th;
    pthread_mutex_t lock;
    pthread_cond_t more;  /* the decoding thread waits for messages, or the end */
    pthread_cond_t room;  /* the graph's thread waits for messages decoded */
    const bt_message *ring[PIPE_MSGS];
    /* what each side writes on a cache line of its own: a store of one
     * side does not take the line the other reads its own fields from */
    _Alignas(64) uint64_t head; /* handed over (the graph's thread writes it) */
    uint64_t freed;       /* released (the graph's thread only) */
    bool graph_waits;
    bool end;             /* no more messages (under lock) */
    _Alignas(64) uint64_t done; /* decoded (the decoding thread writes it) */
    bool decoder_waits;
    bool failed;          /* on_message failed: no more decoding */
};

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

/* Enough for the decoding thread: half a ring, or the end (under lock). */
static bool pipe_ready(const struct pipe *p)
{
    return 2 * (LOAD(p->head) - p->done) >= PIPE_MSGS || p->end;
}

static void *pipe_main(void *arg)
{
    struct reader *r = arg;
    struct pipe *p = r->pipe;
    cbt_thread_enter();
    for (;;) {
        uint64_t from = p->done, to = LOAD(p->head);
        if (2 * (to - from) < PIPE_MSGS) {
            pthread_mutex_lock(&p->lock);
            STORE(p->decoder_waits, true);
            while (!pipe_ready(p))
                pthread_cond_wait(&p->more, &p->lock);
            STORE(p->decoder_waits, false);
            bool end = p->end;
            pthread_mutex_unlock(&p->lock);
            to = LOAD(p->head);
            if (to == from && end)
                break; /* every message decoded */
        }
        int rc = 0;
        bool failed = LOAD(p->failed);
        for (uint64_t i = from; i < to && !failed && rc == 0; i++)
            rc = on_message(r, p->ring[i % PIPE_MSGS]);
        if (rc != 0)
            STORE(p->failed, true);
        STORE(p->done, to);
        if (LOAD(p->graph_waits)) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->room);
            pthread_mutex_unlock(&p->lock);
        }
    }
    cbt_thread_leave();
    return NULL;
}

/* Release the messages decoded (the graph's thread). */
static void pipe_release(struct pipe *p, uint64_t done)
{
    for (; p->freed < done; p->freed++)
        bt_message_put_ref(p->ring[p->freed % PIPE_MSGS]);
}

/* Hand msgs[0, count) over (their references with them); -1 when the
 * decoding failed (the messages are then released). */
static int pipe_push(struct pipe *p, bt_message_array_const msgs, uint64_t count)
{
    uint64_t i = 0;
    while (!LOAD(p->failed)) {
        pipe_release(p, LOAD(p->done));
        uint64_t head = p->head;
        for (; i < count && head - p->freed < PIPE_MSGS; i++, head++)
            p->ring[head % PIPE_MSGS] = msgs[i];
        STORE(p->head, head);
        if (LOAD(p->decoder_waits) && 2 * (head - LOAD(p->done)) >= PIPE_MSGS) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->more);
            pthread_mutex_unlock(&p->lock);
        }
        if (i == count)
            break;
        /* full: wait for half of it decoded */
        if (2 * (head - LOAD(p->done)) > PIPE_MSGS) {
            pthread_mutex_lock(&p->lock);
            STORE(p->graph_waits, true);
            while (2 * (head - LOAD(p->done)) > PIPE_MSGS && !LOAD(p->failed))
                pthread_cond_wait(&p->room, &p->lock);
            STORE(p->graph_waits, false);
            pthread_mutex_unlock(&p->lock);
        }
    }
    bool failed = LOAD(p->failed);
    for (; i < count; i++)
        bt_message_put_ref(msgs[i]);
    return failed ? -1 : 0;
}

/* The bytes of the files in trace directory `dir` (its stream files and metadata). */
static uint64_t trace_bytes(const char *dir)
{
    uint64_t n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    char buf[4096];
    while ((de = readdir(d))) {
        struct stat st;
        snprintf(buf, sizeof(buf), "%s/%s", dir, de->d_name);
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
            n += (uint64_t)st.st_size;
    }
    closedir(d);
    return n;
}

/* Below this much trace, a second thread costs more (its start, its wakes)
 * than it saves. */
#define PIPE_MIN_BYTES (16ull << 20)

/* Whether to decode on a thread of its own: CUBATCHTRACE_PIPELINE=0 never,
 * =1 always (on files); else when the reader may, two CPUs are usable and
 * the trace files hold PIPE_MIN_BYTES.  Live sessions (no tick either: a
 * live summary's refresh reads what is decoded) are decoded as they come,
 * on the graph's thread. */
static bool pipe_wanted(const struct reader *r, const struct cbt_read_opts *o)
{
    const char *s = getenv("CUBATCHTRACE_PIPELINE");
    if ((s && strcmp(s, "0") == 0) || o->tick)
        return false;
    for (int i = 0; i < r->npaths; i++)
        if (cbt_is_url(r->paths[i]))
            return false;
    if (s && strcmp(s, "1") == 0)
        return true;
    if (o->one_thread || cbt_usable_cpus() < 2)
        return false;
    uint64_t bytes = 0;
    for (int i = 0; i < r->npaths && bytes < PIPE_MIN_BYTES; i++)
        bytes += trace_bytes(r->paths[i]);
    return bytes >= PIPE_MIN_BYTES;
}

/* The pipe's lock, conditions and memory given back (its thread ended or never made). */
static void pipe_free(struct reader *r)
{
    struct pipe *p = r->pipe;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->more);
    pthread_cond_destroy(&p->room);
    free(p);
    r->pipe = NULL;
}

/* Start the decoding thread; false (the graph's thread then decodes) when it cannot. */
static bool pipe_start(struct reader *r)
{
    struct pipe *p = aligned_alloc(_Alignof(struct pipe), sizeof(*p)); /* its lines apart */
    if (!p)
        return false;
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    pthread_cond_init(&p->room, NULL);
    r->pipe = p;
    if (pthread_create(&p->th, NULL, pipe_main, r) != 0) {
        pipe_free(r);
        return false;
    }
    return true;
}

/* The end of the messages: wait for the decoding thread to decode what it
 * holds and end, release every message; whether the decoding failed. */
static bool pipe_stop(struct reader *r)
{
    struct pipe *p = r->pipe;
    if (!p)
        return false;
    pthread_mutex_lock(&p->lock);
    p->end = true;
    pthread_cond_signal(&p->more);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->th, NULL);
    pipe_release(p, p->head);
    bool failed = p->failed;
    pipe_free(r);
    return failed;
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
    if (r->o->tick)
        r->o->tick(r->o->tick_ctx);
    for (uint64_t tries = 0; tries < r->nits; tries++) {
        uint64_t k = r->rr++ % r->nits;
        bt_message_iterator *it = r->its[k];
        if (!it)
            continue;
        bt_message_array_const msgs;
        uint64_t count;
        switch (bt_message_iterator_next(it, &msgs, &count)) {
        case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: {
            if (r->pipe)
                return pipe_push(r->pipe, msgs, count) == 0 ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK
                                                            : BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
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

/* A trace directory or URL, once: an input named twice, or under another
 * input, is read once (every command the same). */
static int add_path(struct reader *r, const char *p)
{
    r->found++;
    char *canon = cbt_is_url(p) ? strdup(p) : realpath(p, NULL);
    if (!canon && !cbt_is_url(p) && errno != ENOMEM)
        canon = strdup(p);
    if (!canon)
        return -1;
    for (int i = 0; i < r->npaths; i++)
        if (strcmp(r->canon[i], canon) == 0) {
            free(canon);
            return 0;
        }
    char **n = realloc(r->paths, sizeof(*n) * (size_t)(r->npaths + 1));
    if (n)
        r->paths = n;
    char **c = n ? realloc(r->canon, sizeof(*c) * (size_t)(r->npaths + 1)) : NULL;
    if (c)
        r->canon = c;
    if (!c || !(r->paths[r->npaths] = strdup(p))) {
        free(canon);
        return -1;
    }
    r->canon[r->npaths++] = canon;
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

/* The trace directories under the inputs, and the URLs, into r->paths; 2
 * after one line on stderr when an input is not there or holds no trace. */
static int list_inputs(struct reader *r, const struct cbt_read_opts *o)
{
    for (int i = 0; i < o->ninputs; i++) {
        const char *in = o->inputs[i];
        if (cbt_is_url(in)) {
            add_path(r, in);
            continue;
        }
        struct stat st;
        if (stat(in, &st) != 0) {
            cbt_err("%s: %s", in, strerror(errno));
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            cbt_err("%s: not a directory (give a trace directory or a net:// URL)", in);
            return 2;
        }
        int before = r->found;
        if (find_traces(r, in, 0) != 0) {
            cbt_err("out of memory");
            return 2;
        }
        if (r->found == before && !o->allow_empty) {
            cbt_err("%s: no CTF trace under this directory (no `metadata` file)", in);
            return 2;
        }
    }
    return 0;
}

int cbt_trace_dirs(const struct cbt_read_opts *o, char ***paths, int *npaths)
{
    struct reader r = {.o = o};
    int rc = list_inputs(&r, o);
    for (int i = 0; i < r.npaths; i++) {
        free(r.canon[i]);
        if (rc != 0)
            free(r.paths[i]);
    }
    free(r.canon);
    if (rc != 0) {
        free(r.paths);
        r.paths = NULL;
        r.npaths = 0;
    }
    *paths = r.paths;
    *npaths = r.npaths;
    return rc;
}

bool cbt_read_empty_is_error(const struct cbt_read_opts *o, bool shim_seen)
{
    return o->npids || o->begin || o->end || !shim_seen;
}

void cbt_read_say_no_events(const struct cbt_read_opts *o)
{
    char pids[128] = "";
    size_t n = 0;
    for (int i = 0; i < o->npids; i++) {
        if (n > sizeof(pids) - 32) {
            snprintf(pids + n, sizeof(pids) - n, ", ...");
            break;
        }
        n += (size_t)snprintf(pids + n, sizeof(pids) - n, "%s%" PRId64, i ? ", " : " of --pid ", o->pids[i]);
    }
    if (o->begin || o->end)
        cbt_err("%s%s: no cubatchtrace events%s between --begin %s and --end %s", o->inputs[0],
                o->ninputs > 1 ? " and the other inputs" : "", pids, o->begin ? o->begin : "(the start)",
                o->end ? o->end : "(the end)");
    else if (o->npids)
        cbt_err("%s%s: no cubatchtrace events%s (no such process in %s)", o->inputs[0],
                o->ninputs > 1 ? " and the other inputs" : "", pids, o->ninputs > 1 ? "these traces" : "this trace");
    else if (o->ninputs == 1)
        cbt_err("%s: no cubatchtrace events in this trace (was it recorded with `cubatchtrace run`?)",
                o->inputs[0]);
    else
        cbt_err("%s and %d other input(s): no cubatchtrace events in these traces", o->inputs[0],
                o->ninputs - 1);
}

static void reader_free(struct reader *r)
{
    for (unsigned i = 0; i < EC_SLOTS; i++)
        free(r->ecs[i]);
    for (int i = 0; i < r->npaths; i++) {
        free(r->paths[i]);
        free(r->canon[i]);
    }
    free(r->canon);
    for (int i = 0; i < S_COUNT_; i++)
        free(r->seq[i]);
    free(r->el);
    cbt_compact_free(r->compact);
    cbt_asm_free(r->as);
    free(r->paths);
    free(r->its);
    free(r);
}

/* Setting up and tearing down a graph loads and unloads plugins, whose
 * reference counts are not atomic: one reader at a time (parallel.c). */
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------------------- the time window */

/* "+SECONDS[.NNNNNNNNN]": an offset from the traces' start, in ns; false
 * when t is not one. */
static bool parse_offset(const char *t, uint64_t *ns)
{
    if (t[0] != '+' || !(t[1] >= '0' && t[1] <= '9'))
        return false;
    char *end;
    errno = 0;
    unsigned long long s = strtoull(t + 1, &end, 10);
    if (errno || s > 4000000000ull)
        return false;
    uint64_t frac = 0, scale = 1000000000u;
    if (*end == '.')
        for (end++; *end >= '0' && *end <= '9' && scale > 1; end++) {
            scale /= 10;
            frac += (uint64_t)(*end - '0') * scale;
        }
    *ns = (uint64_t)s * 1000000000u + frac;
    return *end == 0;
}

/* The earliest time (ns from the clock's origin) of the trace directories'
 * streams, from src.ctf.fs's babeltrace.trace-infos query (their indexes,
 * no event read); false when no stream has one. */
static bool traces_start(const bt_plugin *ctf, char *const *paths, int npaths, int64_t *start)
{
    const bt_component_class_source *fs = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
    bool found = false;
    for (int i = 0; fs && i < npaths; i++) {
        bt_value *params = bt_value_map_create(), *inputs = NULL;
        const bt_value *res = NULL;
        bt_query_executor *q = NULL;
        if (params && bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) == BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK &&
            bt_value_array_append_string_element(inputs, paths[i]) == BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK)
            q = bt_query_executor_create(bt_component_class_source_as_component_class_const(fs),
                                         "babeltrace.trace-infos", params);
        if (q && bt_query_executor_query(q, &res) == BT_QUERY_EXECUTOR_QUERY_STATUS_OK && bt_value_is_array(res))
            for (uint64_t t = 0; t < bt_value_array_get_length(res); t++) {
                const bt_value *streams =
                    bt_value_map_borrow_entry_value_const(bt_value_array_borrow_element_by_index_const(res, t), "stream-infos");
                for (uint64_t k = 0; streams && bt_value_is_array(streams) && k < bt_value_array_get_length(streams); k++) {
                    const bt_value *range = bt_value_map_borrow_entry_value_const(
                        bt_value_array_borrow_element_by_index_const(streams, k), "range-ns");
                    const bt_value *b = range && bt_value_is_map(range) ? bt_value_map_borrow_entry_value_const(range, "begin") : NULL;
                    if (!b || !(bt_value_is_signed_integer(b) || bt_value_is_unsigned_integer(b)))
                        continue;
                    int64_t v = bt_value_is_signed_integer(b) ? bt_value_integer_signed_get(b)
                                                              : (int64_t)bt_value_integer_unsigned_get(b);
                    if (!found || v < *start)
                        *start = v;
                    found = true;
                }
            }
        bt_value_put_ref(res);
        bt_query_executor_put_ref(q);
        bt_value_put_ref(params);
    }
    bt_current_thread_clear_error();
    return found;
}

int cbt_read_window(const struct cbt_read_opts *o, char *const *paths, int npaths, char *begin, char *end)
{
    const char *given[2] = {o->begin, o->end};
    char *out[2] = {begin, end};
    uint64_t off[2];
    bool any = false;
    for (int i = 0; i < 2; i++) {
        snprintf(out[i], CBT_READ_WINDOW_LEN, "%s", given[i] ? given[i] : "");
        if (given[i] && given[i][0] == '+') {
            if (!parse_offset(given[i], &off[i])) {
                cbt_err("--%s %s: an offset from the trace's start is +SECONDS[.NNNNNNNNN]", i ? "end" : "begin", given[i]);
                return 2;
            }
            any = true;
        }
    }
    if (!any)
        return 0;
    for (int i = 0; i < npaths; i++)
        if (cbt_is_url(paths[i])) {
            cbt_err("--begin/--end +SECONDS counts from the start of trace directories, not of a live session (%s)",
                    paths[i]);
            return 2;
        }
    const bt_plugin *ctf = NULL;
    int64_t start = 0;
    pthread_mutex_lock(&setup_lock);
    bool ok = bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf) == BT_PLUGIN_FIND_STATUS_OK &&
              traces_start(ctf, paths, npaths, &start);
    bt_plugin_put_ref(ctf);
    pthread_mutex_unlock(&setup_lock);
    if (!ok) {
        cbt_err("%s: the trace's start is not known (no stream with a clock): give --begin/--end as absolute times",
                npaths ? paths[0] : o->inputs[0]);
        return 2;
    }
    for (int i = 0; i < 2; i++)
        if (given[i] && given[i][0] == '+') {
            uint64_t t = (uint64_t)start + off[i]; /* the trimmer's SECONDS.NNNNNNNNN since the origin */
            snprintf(out[i], CBT_READ_WINDOW_LEN, "%" PRIu64 ".%09" PRIu64, t / 1000000000u, t % 1000000000u);
        }
    return 0;
}

/* The graph of one cbt_read and what it holds a reference to. */
struct graph {
    bt_graph *g;
    bt_component_class_sink *sink_cls;
    const bt_plugin *ctf, *utils;
    const bt_component_source **srcs;
    const bt_component_sink *sink;
    uint64_t nports; /* the sources' output ports, all of them */
};

/* babeltrace2's ctf and utils plugins in one search, as bt_plugin_find()
 * finds each (the first of its name in the search order): every search
 * loads every plugin file.  false after one line. */
static bool load_plugins(struct graph *G)
{
    const bt_plugin_set *found = NULL;
    if (bt_plugin_find_all(BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &found) == BT_PLUGIN_FIND_ALL_STATUS_OK) {
        uint64_t n = bt_plugin_set_get_plugin_count(found);
        for (uint64_t i = 0; i < n; i++) {
            const bt_plugin *p = bt_plugin_set_borrow_plugin_by_index_const(found, i);
            const bt_plugin **want = strcmp(bt_plugin_get_name(p), "ctf") == 0     ? &G->ctf
                                     : strcmp(bt_plugin_get_name(p), "utils") == 0 ? &G->utils
                                                                                    : NULL;
            if (want && !*want) {
                bt_plugin_get_ref(p);
                *want = p;
            }
        }
        bt_plugin_set_put_ref(found);
    }
    if (!G->ctf)
        cbt_err("babeltrace2's `ctf` plugin not found (set BABELTRACE_PLUGIN_PATH?)");
    return G->ctf != NULL;
}

/* One source per trace directory (src.ctf.fs) or URL (src.ctf.lttng-live);
 * false after one line. */
static bool add_sources(struct reader *r, struct graph *G)
{
    const bt_component_class_source *fs = bt_plugin_borrow_source_component_class_by_name_const(G->ctf, "fs");
    const bt_component_class_source *live =
        bt_plugin_borrow_source_component_class_by_name_const(G->ctf, "lttng-live");
    G->g = bt_graph_create(0);
    G->srcs = calloc((size_t)r->npaths, sizeof(*G->srcs));
    if (!G->g || !G->srcs || !fs || !live) {
        cbt_err("cannot set up babeltrace2 (ctf.fs / ctf.lttng-live missing?)");
        return false;
    }
    for (int i = 0; i < r->npaths; i++) {
        bt_value *params = bt_value_map_create();
        bt_value *inputs = NULL;
        bool url = cbt_is_url(r->paths[i]);
        if (!params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
            bt_value_array_append_string_element(inputs, r->paths[i]) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK ||
            (url && bt_value_map_insert_string_entry(params, "session-not-found-action", "end") !=
                        BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK)) {
            bt_value_put_ref(params);
            cbt_err("out of memory");
            return false;
        }
        char name[32];
        snprintf(name, sizeof(name), "src%d", i);
        bt_graph_add_component_status st =
            bt_graph_add_source_component(G->g, url ? live : fs, name, params, BT_LOGGING_LEVEL_NONE, &G->srcs[i]);
        bt_value_put_ref(params);
        if (st != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
            report_bt_error(r, url ? "cannot connect to" : "cannot read trace");
            return false;
        }
        G->nports += bt_component_source_get_output_port_count(G->srcs[i]);
    }
    return true;
}

/* A source's output port through a trimmer of its own (--begin/--end): the
 * trimmer's output port, or NULL after one line. */
static const bt_port_output *trimmed(struct reader *r, struct graph *G, const bt_component_class_filter *trimmer,
                                     const bt_port_output *out, uint64_t k)
{
    const struct cbt_read_opts *o = r->o;
    const char *begin = o->begin ? r->begin : NULL, *end = o->end ? r->end : NULL;
    bt_value *params = bt_value_map_create();
    const bt_component_filter *trim = NULL;
    char name[48];
    snprintf(name, sizeof(name), "trim%" PRIu64, k);
    bool ok = params &&
              (!begin || bt_value_map_insert_string_entry(params, "begin", begin) == BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) &&
              (!end || bt_value_map_insert_string_entry(params, "end", end) == BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) &&
              bt_graph_add_filter_component(G->g, trimmer, name, params, BT_LOGGING_LEVEL_NONE, &trim) ==
                  BT_GRAPH_ADD_COMPONENT_STATUS_OK;
    bt_value_put_ref(params);
    if (!ok) {
        report_bt_error(r, "--begin/--end");
        return NULL;
    }
    if (bt_graph_connect_ports(G->g, out, bt_component_filter_borrow_input_port_by_index_const(trim, 0), NULL) !=
        BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        report_bt_error(r, "cannot read");
        return NULL;
    }
    return bt_component_filter_borrow_output_port_by_index_const(trim, 0);
}

/* Our sink, one muxer per trace in front of it, each source port into its
 * trace's muxer (through a trimmer with --begin/--end); false after one line. */
static bool connect_sink(struct reader *r, struct graph *G)
{
    bt_component_class_sink_set_initialize_method(G->sink_cls, sink_init);
    bt_component_class_sink_set_graph_is_configured_method(G->sink_cls, sink_configured);
    bt_component_class_sink_set_finalize_method(G->sink_cls, sink_finalize);
    if (bt_graph_add_sink_component_with_initialize_method_data(G->g, G->sink_cls, "sink", NULL, r,
                                                                 BT_LOGGING_LEVEL_NONE, &G->sink) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        report_bt_error(r, "cannot read");
        return false;
    }
    const bt_component_class_filter *trimmer = NULL, *muxer = NULL;
    if (!G->utils || !(muxer = bt_plugin_borrow_filter_component_class_by_name_const(G->utils, "muxer")) ||
        ((r->o->begin || r->o->end) &&
         !(trimmer = bt_plugin_borrow_filter_component_class_by_name_const(G->utils, "trimmer")))) {
        cbt_err("babeltrace2's `utils` plugin (flt.utils.muxer, flt.utils.trimmer) not found");
        return false;
    }
    uint64_t k = 0;
    for (int i = 0; i < r->npaths; i++) {
        const bt_component_filter *mux = NULL;
        char mname[32];
        snprintf(mname, sizeof(mname), "mux%d", i);
        if (bt_graph_add_filter_component(G->g, muxer, mname, NULL, BT_LOGGING_LEVEL_NONE, &mux) !=
                BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
            bt_graph_connect_ports(G->g, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                                   bt_component_sink_borrow_input_port_by_index_const(G->sink, (uint64_t)i),
                                   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
            report_bt_error(r, "cannot read");
            return false;
        }
        uint64_t n = bt_component_source_get_output_port_count(G->srcs[i]);
        for (uint64_t j = 0; j < n; j++, k++) {
            const bt_port_output *out = bt_component_source_borrow_output_port_by_index_const(G->srcs[i], j);
            /* the muxer makes a new input port each time one is connected */
            const bt_port_input *in = bt_component_filter_borrow_input_port_by_index_const(mux, j);
            if (trimmer && !(out = trimmed(r, G, trimmer, out, k)))
                return false;
            if (bt_graph_connect_ports(G->g, out, in, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                report_bt_error(r, "cannot read");
                return false;
            }
        }
    }
    return true;
}

/* Runs the graph to its end (a live one calls o->tick while it waits);
 * false after one line. */
static bool run_graph(struct reader *r, struct graph *G)
{
    const struct cbt_read_opts *o = r->o;
    if (pipe_wanted(r, o) && pipe_start(r) && getenv("CUBATCHTRACE_DEBUG"))
        fprintf(stderr, "cubatchtrace: decoding on a second thread\n");
    bt_graph_run_status st;
    for (;;) {
        st = bt_graph_run(G->g);
        if (st == BT_GRAPH_RUN_STATUS_AGAIN) {
            if (o->tick)
                o->tick(o->tick_ctx);
            usleep(20000);
            continue;
        }
        break;
    }
    if (pipe_stop(r) && st == BT_GRAPH_RUN_STATUS_OK)
        st = BT_GRAPH_RUN_STATUS_ERROR; /* the decoding failed on the messages of the graph's last consume */
    if (st == BT_GRAPH_RUN_STATUS_OK)
        return true;
    if (r->fail[0]) {
        bt_current_thread_clear_error();
        cbt_err("cannot read %s: %s", r->npaths == 1 ? r->paths[0] : o->inputs[0], r->fail);
    } else {
        report_bt_error(r, cbt_is_url(r->paths[0]) ? "cannot read live session" : "cannot read trace");
    }
    return false;
}

/* Sets up the graph (under setup_lock, released here once it is built) and
 * runs it; false after one line. */
static bool read_graph(struct reader *r, struct graph *G, bool *locked)
{
    if (!load_plugins(G) || !add_sources(r, G))
        return false;
    r->nits = G->nports ? (uint64_t)r->npaths : 0; /* one muxer's output per trace */
    r->its = calloc(r->npaths ? (size_t)r->npaths : 1, sizeof(*r->its));
    G->sink_cls = bt_component_class_sink_create("cubatchtrace", sink_consume);
    if (!r->its || !G->sink_cls) {
        cbt_err("out of memory");
        return false;
    }
    if (!G->nports)
        return true;
    if (!connect_sink(r, G))
        return false;
    pthread_mutex_unlock(&setup_lock);
    *locked = false;
    return run_graph(r, G);
}

/* Damaged framing (a cut metadata or stream packet) refused before
 * libbabeltrace2 sees it, in one line (precheck.h): babeltrace2 2.0.4 loops
 * on a cut metadata packet.  Live URLs are left to the reader's watchdog. */
static bool framing_sound(const struct reader *r)
{
    for (int i = 0; i < r->npaths; i++) {
        char why[600];
        if (!cbt_is_url(r->paths[i]) && cbt_precheck_trace(r->paths[i], why, sizeof(why)) != 0) {
            cbt_err("cannot read trace %s: %s", r->paths[i], why);
            return false;
        }
    }
    return true;
}

int cbt_read(const struct cbt_read_opts *o, const struct cbt_read_out *to)
{
    struct reader *r = calloc(1, sizeof(*r));
    if (!r) {
        cbt_err("out of memory");
        return 2;
    }
    r->o = o;
    r->out = *to;
    if (!(r->as = cbt_asm_new(to, o->batch, o->batch_ctx)) || !(r->compact = cbt_compact_new(r->as))) {
        cbt_err("out of memory");
        cbt_asm_free(r->as);
        free(r);
        return 2;
    }
    bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);

    struct graph G = {.g = NULL};
    bool locked = false;
    int rc = 2;
    if (list_inputs(r, o) != 0)
        goto out;
    if (r->npaths == 0) { /* allow_empty: nothing recorded at all */
        rc = 0;
        goto out;
    }
    if (!framing_sound(r)) /* before babeltrace2, the window's query included */
        goto out;
    if (cbt_read_window(o, r->paths, r->npaths, r->begin, r->end) != 0)
        goto out;
    pthread_mutex_lock(&setup_lock);
    locked = true;
    if (!read_graph(r, &G, &locked))
        goto out;
    cbt_asm_finish(r->as);
    if (o->events_read)
        *o->events_read += r->cbt_events;
    if (o->shim_seen)
        *o->shim_seen |= r->shim_seen;
    if (r->cbt_events == 0 && !o->allow_empty && cbt_read_empty_is_error(o, r->shim_seen)) {
        cbt_read_say_no_events(o);
        goto out;
    }
    rc = 0;
out:
    if (!locked)
        pthread_mutex_lock(&setup_lock);
    bt_graph_put_ref(G.g);
    bt_component_class_sink_put_ref(G.sink_cls);
    bt_plugin_put_ref(G.ctf);
    bt_plugin_put_ref(G.utils);
    pthread_mutex_unlock(&setup_lock);
    free(G.srcs);
    reader_free(r);
    return rc;
}

/* ---------------------------------------------------------------- a message at a time */

struct cbt_decoder {
    struct reader *r;
};

/* The plugin reads every process and has no inputs of its own. */
static const struct cbt_read_opts decoder_opts;

struct cbt_decoder *cbt_decoder_new(const struct cbt_read_out *out, cbt_batch_fn fn, void *ctx)
{
    struct cbt_decoder *d = calloc(1, sizeof(*d));
    struct reader *r = calloc(1, sizeof(*r));
    if (!d || !r) {
        free(d);
        free(r);
        return NULL;
    }
    d->r = r;
    r->o = &decoder_opts;
    r->out = *out;
    if (!(r->as = cbt_asm_new(out, fn, ctx)) || !(r->compact = cbt_compact_new(r->as))) {
        cbt_decoder_free(d);
        return NULL;
    }
    return d;
}

void cbt_decoder_free(struct cbt_decoder *d)
{
    if (!d)
        return;
    reader_free(d->r);
    free(d);
}

enum cbt_decoded cbt_decoder_message(struct cbt_decoder *d, const bt_message *msg)
{
    d->r->last_kind = EK_OTHER;
    if (on_message(d->r, msg) != 0)
        return CBT_DECODED_ERROR;
    if (bt_message_get_type(msg) != BT_MESSAGE_TYPE_EVENT)
        return CBT_DECODED_OTHER;
    switch (d->r->last_kind) {
    case EK_BATCH: case EK_BATCH_OPS: case EK_BATCH_END: case EK_FINDING: case EK_BATCH1D: case EK_BATCH_ATTRS:
    case EK_B: case EK_BO: case EK_C: case EK_CO: case EK_CA: case EK_OPERAND: case EK_STREAM:
        return CBT_DECODED_BATCH;
    default:
        return CBT_DECODED_OTHER;
    }
}

void cbt_decoder_finish(struct cbt_decoder *d) { cbt_asm_finish(d->r->as); }

const char *cbt_decoder_error(const struct cbt_decoder *d) { return d->r->fail[0] ? d->r->fail : "cannot decode"; }
