/* SPDX-License-Identifier: MIT */
/*
 * cbt-gen: emit cubatchtrace events through the real tracepoint provider,
 * for batches whose every op is known, so that tests know the figures a
 * summary must find (and the findings the reader must compute from the ops)
 * and the benchmark gets traces of any size.  No CUDA driver involved: the
 * ops are real CUDA_MEMCPY3D_BATCH_OP structures the generator lays out in
 * an address space of its own imagination.
 *
 *   cbt-gen [--exit N] [--raise SIG] [--format F] [--mix OPS] [--small BATCHES] [--hop] [--pidfile F]
 *           [--gpu-process] [--image TAG] SPEC...
 *
 * Each SPEC is a comma-separated list of key=value describing `n` identical
 * batches (usage() lists the keys); batches get ids 0, 1, 2... in order.
 *
 * Layout of one batch of k ops (every op alike unless a violation says
 * otherwise): op i copies extent W x H x D, elements of E bytes for an
 * operand that is a CUDA array, 1 byte for pointer-to-pointer copies.
 * Pointer sources of op i lie at SRC_BASE + i * stride, destinations at
 * DST_BASE + i * stride, where stride is the op's footprint rounded up to
 * 4 KiB, so no two ops of a batch touch the same bytes.  All sources of a
 * batch belong to one allocation (operand), all destinations to another; an
 * array side is one CUDA array of k * W x H x D elements, op i at x = i * W.
 * With distinct=1 every operand of every op is an allocation (array) of its
 * own, so a chunk carries 2 * 64 operands.
 *
 * violate=RULE[@OP][+RULE[@OP]...] makes op OP (default 0) really break RULE:
 *   overlap_dst_dst   op OP+1 writes op OP's destination
 *   overlap_src_dst   op OP+1 reads op OP's destination
 *   overlap_self      op OP reads its own destination
 *   row_length_too_small, layer_height_too_small
 *                     the destination's rowLength = W-1 / layerHeight = H-1
 *   extent_zero       the extent's depth is 0
 *   access_order_invalid  srcAccessOrder 0 (INVALID)
 *   op_flags_invalid  op flags 0x2
 *   pointer_null      the source pointer is NULL
 *   device_out_of_bounds  the destination starts at its allocation's end
 *   array_null, array_out_of_bounds  the first array operand: CUarray NULL /
 *                     x offset so that the copy runs one element past the array
 *   lochint_ignored   the first pointer operand of device or pinned memory
 *                     gets locHint DEVICE 0
 *   lochint_invalid   the destination's locHint type is 9
 * Other findings follow from the spec itself: pageable_stream_order (src
 * host_pageable, order STREAM), during_api_call_device_source (src device,
 * order DURING_API_CALL), pointer_unmapped (a side unmapped), stream_null
 * (stream=0), stream_legacy (stream=1), flags_nonzero, op_list_null
 * (oplist=0), num_ops_zero (numops=0).
 *
 * inline=1 records the batch as validated on the calling thread: validated=1,
 * findings=N and N `finding` events (before the batch) with the findings
 * these ops really have; inline=wrong records a deliberately wrong list (the
 * first true finding left out, a lochint_invalid on op 0's source that the
 * ops do not have added).
 *
 * gpu=STATUS writes the GPU times of the spec's batches after them, as the
 * shim does with CUBATCHTRACE_GPU_TIME=1: up to 32 batches per
 * cubatchtrace:gpu_time event (timed: GPU start gpu_start ns from the
 * event's time, gpu_ns long), the batch in the shim's format, its record
 * marked (CBT_HDR_GPU): the reader takes the rest from the batch.
 * last_src=KIND, last_srcdev=N give the last op's source an allocation of
 * its own, of that memory kind (a pointer) or on that device, so that the
 * batch's sources are mixed.
 * --gpu-process writes the cubatchtrace:process event first, gpu_time 1.
 * --image TAG starts a process image of that tag (1 to 2^32-1): its process
 * event (gpu_time 0), then batch ids TAG << 32 | n, n from 0, as the shim
 * numbers them; without it ids are untagged, as recorded before images.
 *
 * format=F (or --format F before the SPECs), F the shim's event format
 * (CBT_EV_FORMAT), writes the compact record with the shim's own writer
 * (src/record.c): b and bo, or c and co for copies=1
 * (a 1D batch, its ops made copies under one attribute), after the operand
 * and stream entries they refer to, and first the process event of an
 * image tagged with the process id unless one was written.  format=2 (the default) writes batch and
 * batch_ops; another number writes format 2's events with that number.
 */
#include "config.h"

#define LTTNG_UST_TRACEPOINT_DEFINE
#include "cubatchtrace_tp.h"
/* The shim's format is written by the shim's own writer (src/record.c, built in). */
#include "record.h"

#include <cuda.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SRC_BASE 0x7f0000000000ull
#define DST_BASE 0x7e0000000000ull
#define SRC_ARRAY 0xa0000000ull /* CUarray handles: op i's own (distinct=1) at + i + 1 */
#define DST_ARRAY 0xb0000000ull
#define MAX_VIOL 16
#define MAX_FINDINGS_PER_OP 16

_Static_assert(sizeof(CUDA_MEMCPY3D_BATCH_OP) == CBT_EV_OP_SIZE, "CUDA_MEMCPY3D_BATCH_OP is not the recorded size");

/* The chunks src/record.c writes by (src/settings.c's, from
 * CUBATCHTRACE_SUBBUF_SIZE): the least, as without that setting. */
uint32_t cbt_chunk3d = CBT_EV_CHUNK3D;
uint32_t cbt_chunk1d = CBT_EV_CHUNK1D;

static uint64_t next_batch_id;
static unsigned default_format = CBT_EV_FORMAT2; /* --format: of the SPECs and mixes after it */
static int process_written; /* a cubatchtrace:process event was written (--gpu-process, --image) */
static uint64_t image; /* --image: the process image; 0 none (a trace of before images) */
static int hop; /* --hop: change CPU between the events of a batch (tests pairing across streams) */

static void hop_cpu(void)
{
    static int cpu;
    cpu_set_t set;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2)
        return;
    cpu = (cpu + 1) % (int)n;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static void usage(void)
{
    fputs("usage: cbt-gen [--exit N] [--raise SIG] [--format F] [--mix OPS] [--small BATCHES] [--hop]\n"
          "               [--pidfile F] [--gpu-process] [--image TAG] SPEC...\n"
          "SPEC: key=value[,key=value...], keys (default):\n"
          "  n (1) batches; ops (1) ops recorded per batch; numops (ops) numOps;\n"
          "  recorded (ops) the header's ops_recorded\n"
          "  src, dst (device) memory kinds; srcdev, dstdev (0) their devices\n"
          "  bytes (4096) extent width, or shape=WxHxD; elem (4) bytes per array element\n"
          "  order (STREAM); violate=RULE[@OP][+...]; distinct (0)\n"
          "  api (cuMemcpy3DBatchAsync_v2) door (symbol) outcome (forwarded) result (CUDA_SUCCESS)\n"
          "  driver_ns (1000) stream (0x1000) stream_id (7) oplist (0x5000) flags (0) device (0)\n"
          "  opflags (0) every op's flags (1: PREFER_OVERLAP_WITH_COMPUTE)\n"
          "  devices (2) fail_idx (2^64-1) site (0: gen_site_a, 1: gen_site_b)\n"
          "  pending (0; 1: batch with outcome pending + batch_end; lost: no batch_end)\n"
          "  inline (0; 1: finding events of the true findings; wrong: a wrong list)\n"
          "  format (CBT_EV_FORMAT2, or --format's) rules (CBT_RULES_VERSION, format 2 only)\n"
          "  copies (0; 1: a 1D batch of `ops` copies of `bytes` bytes, pointers only, the shim's format)\n"
          "  gpu (none; a gpu_time status: the shim's format) gpu_ns (1000) gpu_start (-2000)\n"
          "  last_src last_srcdev (the last op's source: a pointer of its own, of that kind, on that device)\n"
          "names are the catalogue's (catalog.h); numbers are accepted too\n",
          stderr);
    exit(2);
}

static void die(const char *what, const char *v)
{
    fprintf(stderr, "cbt-gen: %s: %s\n", what, v);
    exit(2);
}

typedef const char *(*namefn)(unsigned);

static unsigned parse_enum(const char *key, const char *v, namefn fn)
{
    char *end;
    unsigned long n = strtoul(v, &end, 0);
    if (*v && !*end)
        return (unsigned)n;
    for (unsigned i = 0; i < 1024; i++) {
        const char *nm = fn(i);
        if (nm && strcmp(nm, v) == 0)
            return i;
    }
    fprintf(stderr, "cbt-gen: %s=%s: unknown name\n", key, v);
    exit(2);
}

static const char *rule_name(unsigned v)
{
    const struct cbt_rule_info *r = cbt_rule(v);
    return r ? r->name : NULL;
}

struct violation {
    unsigned rule;
    uint64_t op;
};

struct spec {
    uint64_t n, ops, numops, recorded, driver_ns, stream, stream_id, oplist, flags, fail_idx;
    uint64_t opflags; /* every op's flags (a 1D batch: its attribute's) */
    uint64_t w, h, d;
    uint32_t elem;
    unsigned api, door, outcome, result, src, dst, order, site, format, rules;
    int srcdev, dstdev, device, devices, distinct, pending, inline_mode;
    int copies; /* a 1D batch (cuMemcpyBatchAsync): its ops are copies, the shim's format only */
    int numops_set, recorded_set;
    int gpu; /* a gpu_time status, -1: no event */
    uint64_t gpu_ns;
    int64_t gpu_start;
    unsigned last_src;
    int last_srcdev;
    int last_src_set, last_srcdev_set;
    struct violation viol[MAX_VIOL];
    int nviol;
};

/* ---- one batch, built -------------------------------------------------- */

struct built {
    CUDA_MEMCPY3D_BATCH_OP *ops;
    uint32_t *opnd; /* 2 per op: indices into operands (source, destination) */
    struct cbt_ev_operand *operands;
    uint32_t noperands;
    size_t cap;
    /* per chunk */
    uint16_t operand_of[CBT_EV_OPS_PER_EVENT]; /* source | destination << 8 */
    struct cbt_ev_operand chunk_operands[2 * CBT_EV_OPS_PER_EVENT];
    uint32_t *local; /* operand -> chunk-local index + 1; 0: not in the chunk */
    /* a 1D batch's arrays, as the program passes them */
    CUdeviceptr *dsts, *srcs;
    size_t *sizes;
    CUmemcpyAttributes attr;
    size_t attr_idx;
    /* the true findings (for inline=1) */
    struct cbt_ev_finding *findings;
    size_t nfindings, findings_cap;
};

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("cbt-gen: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static void reserve(struct built *b, uint64_t nops)
{
    if (nops <= b->cap)
        return;
    size_t c = b->cap ? b->cap : 64;
    while (c < nops)
        c *= 2;
    b->ops = xrealloc(b->ops, c * sizeof *b->ops);
    b->opnd = xrealloc(b->opnd, 2 * c * sizeof *b->opnd);
    b->operands = xrealloc(b->operands, (2 * c + 2) * sizeof *b->operands);
    b->local = xrealloc(b->local, (2 * c + 2) * sizeof *b->local);
    b->dsts = xrealloc(b->dsts, c * sizeof *b->dsts);
    b->srcs = xrealloc(b->srcs, c * sizeof *b->srcs);
    b->sizes = xrealloc(b->sizes, c * sizeof *b->sizes);
    memset(b->local, 0, (2 * c + 2) * sizeof *b->local);
    b->cap = c;
}

static int is_array_kind(unsigned k) { return k == CBT_MEM_ARRAY; }
static int on_device(unsigned k) { return k == CBT_MEM_DEVICE || k == CBT_MEM_MANAGED; }

/* Element size of an op's copy: 1 pointer to pointer, else the array's. */
static uint64_t op_elem(const struct spec *s) { return is_array_kind(s->src) || is_array_kind(s->dst) ? s->elem : 1; }

static uint64_t footprint(const struct spec *s) { return s->w * s->h * s->d * op_elem(s); }

static uint64_t stride(const struct spec *s)
{
    uint64_t f = footprint(s);
    return f ? (f + 4095) & ~4095ull : 4096;
}

static uint32_t add_operand(struct built *b, unsigned kind, int dev, uint64_t base, uint64_t size, uint64_t aw,
                            uint64_t ah, uint64_t ad, uint32_t elem)
{
    struct cbt_ev_operand *o = &b->operands[b->noperands];
    memset(o, 0, sizeof *o);
    o->kind = (uint8_t)kind;
    o->device = on_device(kind) || kind == CBT_MEM_ARRAY ? dev : -1;
    if (kind == CBT_MEM_ARRAY) {
        o->array_width = aw;
        o->array_height = ah;
        o->array_depth = ad;
        o->elem_size = elem;
    } else if (kind != CBT_MEM_HOST_PAGEABLE && kind != CBT_MEM_UNMAPPED && kind != CBT_MEM_UNKNOWN) {
        o->alloc_base = base;
        o->alloc_size = size;
    }
    return b->noperands++;
}

static void set_side(const struct spec *s, CUmemcpy3DOperand *x, unsigned kind, uint64_t base, uint64_t array,
                     uint64_t i, int own)
{
    memset(x, 0, sizeof *x);
    if (is_array_kind(kind)) {
        x->type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
        x->op.array.array = (CUarray)(uintptr_t)(own ? array + i + 1 : array);
        x->op.array.offset.x = own ? 0 : i * s->w;
    } else {
        x->type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        x->op.ptr.ptr = base + i * stride(s);
    }
}

/* The ops of one batch of spec s, with its violations applied. */
static void build(const struct spec *s, struct built *b)
{
    uint64_t k = s->ops;
    reserve(b, k);
    b->noperands = 0;
    uint32_t so = 0, dn = 0;
    if (!s->distinct) {
        so = add_operand(b, s->src, s->srcdev, SRC_BASE, k * stride(s), k * s->w, s->h, s->d, s->elem);
        dn = add_operand(b, s->dst, s->dstdev, DST_BASE, k * stride(s), k * s->w, s->h, s->d, s->elem);
    }
    for (uint64_t i = 0; i < k; i++) {
        CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        memset(op, 0, sizeof *op);
        set_side(s, &op->src, s->src, SRC_BASE, SRC_ARRAY, i, s->distinct);
        set_side(s, &op->dst, s->dst, DST_BASE, DST_ARRAY, i, s->distinct);
        op->extent.width = s->w;
        op->extent.height = s->h;
        op->extent.depth = s->d;
        op->srcAccessOrder = (CUmemcpySrcAccessOrder)s->order;
        op->flags = (unsigned)s->opflags;
        if (s->distinct) {
            so = add_operand(b, s->src, s->srcdev, op->src.op.ptr.ptr, footprint(s), s->w, s->h, s->d, s->elem);
            dn = add_operand(b, s->dst, s->dstdev, op->dst.op.ptr.ptr, footprint(s), s->w, s->h, s->d, s->elem);
        }
        b->opnd[2 * i] = so;
        b->opnd[2 * i + 1] = dn;
    }
    if (s->last_src_set || s->last_srcdev_set) {
        /* the last op's source: a pointer into an allocation of its own, far from the others */
        const uint64_t base = SRC_BASE + 0x10000000000ull;
        CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[k - 1];
        memset(&op->src, 0, sizeof op->src);
        op->src.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
        op->src.op.ptr.ptr = base;
        b->opnd[2 * (k - 1)] = add_operand(b, s->last_src_set ? s->last_src : s->src,
                                           s->last_srcdev_set ? s->last_srcdev : s->srcdev, base, stride(s), s->w,
                                           s->h, s->d, s->elem);
    }
    for (int v = 0; v < s->nviol; v++) {
        uint64_t i = s->viol[v].op;
        const char *name = cbt_rule(s->viol[v].rule)->name;
        int pair = s->viol[v].rule == CBT_RULE_overlap_dst_dst || s->viol[v].rule == CBT_RULE_overlap_src_dst;
        if (i >= k || (pair && i + 1 >= k))
            die("violation beyond the batch's ops", name);
        CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        switch (s->viol[v].rule) {
        case CBT_RULE_overlap_dst_dst:
            b->ops[i + 1].dst = op->dst;
            b->opnd[2 * (i + 1) + 1] = b->opnd[2 * i + 1];
            break;
        case CBT_RULE_overlap_src_dst:
            b->ops[i + 1].src = op->dst;
            b->opnd[2 * (i + 1)] = b->opnd[2 * i + 1];
            break;
        case CBT_RULE_overlap_self:
            op->src = op->dst;
            b->opnd[2 * i] = b->opnd[2 * i + 1];
            break;
        case CBT_RULE_row_length_too_small:
            if (op->dst.type != CU_MEMCPY_OPERAND_TYPE_POINTER || s->w < 2)
                die("row_length_too_small needs a pointer destination and width >= 2", name);
            op->dst.op.ptr.rowLength = s->w - 1;
            break;
        case CBT_RULE_layer_height_too_small:
            if (op->dst.type != CU_MEMCPY_OPERAND_TYPE_POINTER || s->h < 2)
                die("layer_height_too_small needs a pointer destination and height >= 2", name);
            op->dst.op.ptr.layerHeight = s->h - 1;
            break;
        case CBT_RULE_extent_zero:
            op->extent.depth = 0;
            break;
        case CBT_RULE_access_order_invalid:
            op->srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
            break;
        case CBT_RULE_op_flags_invalid:
            op->flags = 0x2;
            break;
        case CBT_RULE_pointer_null:
            if (op->src.type != CU_MEMCPY_OPERAND_TYPE_POINTER)
                die("pointer_null needs a pointer source", name);
            op->src.op.ptr.ptr = 0;
            break;
        case CBT_RULE_device_out_of_bounds: {
            const struct cbt_ev_operand *o = &b->operands[b->opnd[2 * i + 1]];
            if (op->dst.type != CU_MEMCPY_OPERAND_TYPE_POINTER || !on_device(o->kind))
                die("device_out_of_bounds needs a device or managed destination", name);
            op->dst.op.ptr.ptr = o->alloc_base + o->alloc_size;
            break;
        }
        case CBT_RULE_array_null:
        case CBT_RULE_array_out_of_bounds: {
            int src = op->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
            CUmemcpy3DOperand *x = src ? &op->src : &op->dst;
            if (x->type != CU_MEMCPY_OPERAND_TYPE_ARRAY)
                die("needs an array operand", name);
            if (s->viol[v].rule == CBT_RULE_array_null)
                x->op.array.array = NULL;
            else
                x->op.array.offset.x = b->operands[b->opnd[2 * i + !src]].array_width - s->w + 1;
            break;
        }
        case CBT_RULE_lochint_ignored: {
            CUmemcpy3DOperand *x = NULL;
            for (int side = 0; side < 2 && !x; side++) {
                CUmemcpy3DOperand *y = side ? &op->dst : &op->src;
                unsigned kind = b->operands[b->opnd[2 * i + side]].kind;
                if (y->type == CU_MEMCPY_OPERAND_TYPE_POINTER && (kind == CBT_MEM_DEVICE || kind == CBT_MEM_HOST_PINNED))
                    x = y;
            }
            if (!x)
                die("lochint_ignored needs a device or host_pinned pointer operand", name);
            x->op.ptr.locHint.type = CU_MEM_LOCATION_TYPE_DEVICE;
            x->op.ptr.locHint.id = 0;
            break;
        }
        case CBT_RULE_lochint_invalid:
            if (op->dst.type != CU_MEMCPY_OPERAND_TYPE_POINTER)
                die("lochint_invalid needs a pointer destination", name);
            op->dst.op.ptr.locHint.type = (CUmemLocationType)9;
            break;
        default:
            die("no way to violate this rule", name);
        }
    }
}

/* ---- the findings these ops have (inline=1) ------------------------------ */

static void finding(struct built *b, const struct cbt_ev_batch *h, unsigned rule, unsigned side, uint64_t op,
                    uint64_t other, uint64_t value, uint64_t limit)
{
    if (b->nfindings == b->findings_cap) {
        b->findings_cap = b->findings_cap ? 2 * b->findings_cap : 64;
        b->findings = xrealloc(b->findings, b->findings_cap * sizeof *b->findings);
    }
    struct cbt_ev_finding *f = &b->findings[b->nfindings++];
    memset(f, 0, sizeof *f);
    f->batch_id = h->batch_id;
    f->rule = (uint16_t)rule;
    f->severity = (uint8_t)cbt_rule(rule)->severity;
    f->side = (uint8_t)side;
    f->op = op;
    f->other_op = other;
    f->value = value;
    f->limit = limit;
    f->caller = h->caller;
    f->tid = h->tid;
}

static int viol_at(const struct spec *s, unsigned rule, uint64_t i)
{
    for (int v = 0; v < s->nviol; v++)
        if (s->viol[v].rule == rule && s->viol[v].op == i)
            return 1;
    return 0;
}

/* The value a hazard names: a byte both footprints touch, the CUarray for arrays. */
static uint64_t where(const CUmemcpy3DOperand *x)
{
    return x->type == CU_MEMCPY_OPERAND_TYPE_ARRAY ? (uint64_t)(uintptr_t)x->op.array.array : x->op.ptr.ptr;
}

/*
 * In the validator's order (docs/rules.md): batch rules, then per op its
 * errors and warnings, then the hazards by op.  Only the situations this
 * generator can build are covered.
 */
static void true_findings(const struct spec *s, struct built *b, const struct cbt_ev_batch *h)
{
    b->nfindings = 0;
    uint64_t k = s->ops;
    if (h->num_ops == 0)
        finding(b, h, CBT_RULE_num_ops_zero, CBT_SIDE_NONE, UINT64_MAX, UINT64_MAX, 0, 1);
    if (!s->oplist && h->num_ops)
        finding(b, h, CBT_RULE_op_list_null, CBT_SIDE_NONE, UINT64_MAX, UINT64_MAX, 0, 0);
    if (s->flags)
        finding(b, h, CBT_RULE_flags_nonzero, CBT_SIDE_NONE, UINT64_MAX, UINT64_MAX, s->flags, 0);
    if (s->stream == 0)
        finding(b, h, CBT_RULE_stream_null, CBT_SIDE_NONE, UINT64_MAX, UINT64_MAX, 0, 0);
    else if (s->stream == 1)
        finding(b, h, CBT_RULE_stream_legacy, CBT_SIDE_NONE, UINT64_MAX, UINT64_MAX, 1, 0);
    if (h->ops_recorded < h->num_ops && s->oplist)
        finding(b, h, CBT_RULE_ops_not_read, CBT_SIDE_NONE, UINT64_MAX, UINT64_MAX, h->ops_recorded, h->num_ops);
    if (!s->oplist)
        k = 0;
    for (uint64_t i = 0; i < k; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        const CUmemcpy3DOperand *xs[2] = {&op->src, &op->dst};
        const struct cbt_ev_operand *in[2] = {&b->operands[b->opnd[2 * i]], &b->operands[b->opnd[2 * i + 1]]};
        int ext_ok = op->extent.width && op->extent.height && op->extent.depth;
        int ptrs = xs[0]->type == CU_MEMCPY_OPERAND_TYPE_POINTER && xs[1]->type == CU_MEMCPY_OPERAND_TYPE_POINTER;
        uint64_t es = ptrs ? 1 : xs[0]->type == CU_MEMCPY_OPERAND_TYPE_ARRAY ? in[0]->elem_size : in[1]->elem_size;
        if (!ext_ok)
            finding(b, h, CBT_RULE_extent_zero, CBT_SIDE_NONE, i, UINT64_MAX, 0,
                    !op->extent.width ? 0 : !op->extent.height ? 1 : 2);
        if (op->srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM || op->srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY)
            finding(b, h, CBT_RULE_access_order_invalid, CBT_SIDE_NONE, i, UINT64_MAX, op->srcAccessOrder,
                    CU_MEMCPY_SRC_ACCESS_ORDER_ANY);
        if (op->flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE)
            finding(b, h, CBT_RULE_op_flags_invalid, CBT_SIDE_NONE, i, UINT64_MAX, op->flags,
                    CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
        for (int side = 0; side < 2; side++) {
            const CUmemcpy3DOperand *x = xs[side];
            unsigned sd = side ? CBT_SIDE_DST : CBT_SIDE_SRC;
            if (x->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
                int errs = 0;
                if (!x->op.ptr.ptr) {
                    finding(b, h, CBT_RULE_pointer_null, sd, i, UINT64_MAX, 0, 0);
                    errs++;
                }
                if (x->op.ptr.rowLength && x->op.ptr.rowLength < op->extent.width) {
                    finding(b, h, CBT_RULE_row_length_too_small, sd, i, UINT64_MAX, x->op.ptr.rowLength,
                            op->extent.width);
                    errs++;
                }
                if (x->op.ptr.layerHeight && x->op.ptr.layerHeight < op->extent.height) {
                    finding(b, h, CBT_RULE_layer_height_too_small, sd, i, UINT64_MAX, x->op.ptr.layerHeight,
                            op->extent.height);
                    errs++;
                }
                if (errs || in[side]->kind == CBT_MEM_UNKNOWN)
                    continue;
                if (in[side]->kind == CBT_MEM_UNMAPPED)
                    finding(b, h, CBT_RULE_pointer_unmapped, sd, i, UINT64_MAX, x->op.ptr.ptr, 0);
                else if (on_device(in[side]->kind) && in[side]->alloc_size && es && ext_ok) {
                    /* contiguous footprints only: rowLength and layerHeight are 0 here */
                    uint64_t end = x->op.ptr.ptr - in[side]->alloc_base + op->extent.width * op->extent.height *
                                                                              op->extent.depth * es;
                    if (end > in[side]->alloc_size)
                        finding(b, h, CBT_RULE_device_out_of_bounds, sd, i, UINT64_MAX, end, in[side]->alloc_size);
                }
            } else if (x->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
                if (!x->op.array.array)
                    finding(b, h, CBT_RULE_array_null, sd, i, UINT64_MAX, 0, 0);
                else if (ext_ok && x->op.array.offset.x + op->extent.width > in[side]->array_width)
                    finding(b, h, CBT_RULE_array_out_of_bounds, sd, i, UINT64_MAX,
                            x->op.array.offset.x + op->extent.width, in[side]->array_width);
            }
        }
        for (int side = 0; side < 2; side++) {
            const CUmemcpy3DOperand *x = xs[side];
            unsigned sd = side ? CBT_SIDE_DST : CBT_SIDE_SRC;
            if (x->type != CU_MEMCPY_OPERAND_TYPE_POINTER)
                continue;
            uint32_t type = (uint32_t)x->op.ptr.locHint.type;
            if (type > CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
                finding(b, h, CBT_RULE_lochint_invalid, sd, i, UINT64_MAX, type, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
            else if (type && (in[side]->kind == CBT_MEM_DEVICE || in[side]->kind == CBT_MEM_HOST_PINNED))
                finding(b, h, CBT_RULE_lochint_ignored, sd, i, UINT64_MAX, type, in[side]->kind);
        }
        if (xs[0]->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
            if (in[0]->kind == CBT_MEM_HOST_PAGEABLE && op->srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_STREAM)
                finding(b, h, CBT_RULE_pageable_stream_order, CBT_SIDE_SRC, i, UINT64_MAX, op->srcAccessOrder, 0);
            if (in[0]->kind == CBT_MEM_DEVICE && op->srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)
                finding(b, h, CBT_RULE_during_api_call_device_source, CBT_SIDE_SRC, i, UINT64_MAX,
                        op->srcAccessOrder, 0);
        }
    }
    for (uint64_t i = 0; i < k; i++) {
        if (viol_at(s, CBT_RULE_overlap_dst_dst, i))
            finding(b, h, CBT_RULE_overlap_dst_dst, CBT_SIDE_DST, i, i + 1, where(&b->ops[i].dst), 0);
        if (viol_at(s, CBT_RULE_overlap_src_dst, i))
            finding(b, h, CBT_RULE_overlap_src_dst, CBT_SIDE_DST, i, i + 1, where(&b->ops[i].dst), 0);
        if (viol_at(s, CBT_RULE_overlap_self, i))
            finding(b, h, CBT_RULE_overlap_self, CBT_SIDE_NONE, i, i, where(&b->ops[i].dst), 0);
    }
    if (s->inline_mode == 2) { /* wrong: one true finding left out, one the ops do not have added */
        if (b->nfindings) {
            memmove(&b->findings[0], &b->findings[1], (b->nfindings - 1) * sizeof *b->findings);
            b->nfindings--;
        }
        finding(b, h, CBT_RULE_lochint_invalid, CBT_SIDE_SRC, 0, UINT64_MAX, 99, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
    }
}

/* ---- the events ---------------------------------------------------------- */

/* Chunk [first, first + count): its ops, their operands renumbered in order of first use. */
static void chunk_of(struct built *b, struct cbt_ev_chunk *c, uint64_t batch_id, uint64_t first, uint32_t count)
{
    c->batch_id = batch_id;
    c->first = first;
    c->count = count;
    c->noperands = 0;
    for (uint32_t i = 0; i < 2 * count; i++) {
        uint32_t g = b->opnd[2 * first + i];
        if (!b->local[g]) {
            b->chunk_operands[c->noperands] = b->operands[g];
            b->local[g] = ++c->noperands;
        }
        uint16_t slot = (uint16_t)(b->local[g] - 1);
        b->operand_of[i / 2] = i & 1 ? (uint16_t)(b->operand_of[i / 2] | slot << 8) : slot;
    }
    for (uint32_t i = 0; i < 2 * count; i++)
        b->local[b->opnd[2 * first + i]] = 0;
    c->ops = &b->ops[first];
    c->operand_of = b->operand_of;
    c->operands = b->chunk_operands;
}

static struct built scratch;

/* The GPU times of a spec's batches, as the shim writes them once read
 * back: several batches per cubatchtrace:gpu_time event (gpu_flush, after
 * the spec's batches, or when full). */
static struct cbt_ev_gpu_times gpu_pending;
static void *gpu_caller;

static void gpu_flush(void)
{
    if (gpu_pending.n)
        lttng_ust_tracepoint(cubatchtrace, gpu_time, &gpu_pending, gpu_caller);
    gpu_pending.n = 0;
}

static void emit_gpu(const struct spec *s, const struct cbt_ev_batch *h, void *caller)
{
    uint8_t k = gpu_pending.n;
    gpu_pending.batch_id[k] = h->batch_id;
    gpu_pending.status[k] = (uint8_t)s->gpu;
    gpu_pending.start_rel_ns[k] = s->gpu == CBT_GPU_TIMED ? s->gpu_start : 0;
    gpu_pending.gpu_ns[k] = s->gpu == CBT_GPU_TIMED ? s->gpu_ns : 0;
    gpu_pending.n++;
    gpu_caller = caller;
    if (gpu_pending.n == CBT_EV_GPU_TIMES)
        gpu_flush();
}

/* What the shim learned of an operand, as its dictionary takes it. */
static const struct cbt_operand_info *info_of(const struct cbt_ev_operand *o, struct cbt_operand_info *x)
{
    *x = (struct cbt_operand_info){.kind = o->kind, .device = o->device, .alloc_base = o->alloc_base,
                                   .alloc_size = o->alloc_size, .array_width = o->array_width,
                                   .array_height = o->array_height, .array_depth = o->array_depth,
                                   .elem_size = o->elem_size};
    return x;
}

/*
 * The shim's format (CBT_EV_FORMAT), written as the shim writes it (src/batch.c's learn and record
 * steps), by its own writer: the thread's dictionary for the batch, the
 * refs of each op's operands, the stream, then the batch (n ops recorded)
 * by cbt_record_batch, or cbt_record_batch1d with the ops as the copies
 * dsts[i] <- srcs[i] of sizes[i] bytes under one attribute.
 */
static struct cbt_dict gen_dict; /* the thread's dictionary: zeroed is empty (src/record.h) */

static void emit3(const struct spec *s, struct built *b, const struct cbt_ev_batch *h, uint64_t n, void *caller)
{
    struct cbt_dict *d = cbt_dict_for_batch(&gen_dict, true, h->batch_id, h->tid, cbt_mono_ns());
    uint16_t *refs = d ? cbt_dict_refs(d, n) : NULL;
    struct cbt_operand_info tmp;
    for (uint64_t i = 0; refs && i < 2 * n; i++)
        refs[i] = cbt_dict_ref(d, info_of(&b->operands[b->opnd[i]], &tmp));
    uint8_t si = d ? cbt_dict_stream(d, h->stream, h->stream_id, h->context, h->device, h->device_count)
                   : CBT_EV_NO_STREAM;
    if (!s->copies) {
        cbt_record_batch(d, h, si, s->gpu >= 0, b->ops, n, refs, caller);
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &b->ops[i];
        b->dsts[i] = op->dst.op.ptr.ptr;
        b->srcs[i] = op->src.op.ptr.ptr;
        b->sizes[i] = op->extent.width * op->extent.height * op->extent.depth;
    }
    memset(&b->attr, 0, sizeof b->attr);
    b->attr.srcAccessOrder = (CUmemcpySrcAccessOrder)s->order;
    b->attr.flags = (unsigned)s->opflags;
    b->attr_idx = 0;
    struct cbt_ev_batch h1 = *h;
    h1.op_list = s->oplist ? (uint64_t)(uintptr_t)b->dsts : 0;
    h1.flags = 0;
    struct cbt_ev_batch1d b1 = {.srcs = (uint64_t)(uintptr_t)b->srcs, .sizes = (uint64_t)(uintptr_t)b->sizes,
                                .attrs = (uint64_t)(uintptr_t)&b->attr,
                                .attrs_idxs = (uint64_t)(uintptr_t)&b->attr_idx, .num_attrs = 1,
                                .attrs_recorded = 1};
    cbt_record_batch1d(d, &h1, si, s->gpu >= 0, &b1, &b->attr, &b->attr_idx, b->dsts, b->srcs, b->sizes, n, refs, caller);
}

static void write_process(uint64_t image_id, int gpu)
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    lttng_ust_tracepoint(cubatchtrace, process, host, -1, "", gpu, gpu, image_id, gpu ? 0 : 4026531836ull,
                         gpu ? 0 : 1000, NULL);
    process_written = 1;
}

/* --image TAG: a process image of that tag from here on, its process event, its batch ids tag << 32 | n. */
static void start_image(uint64_t tag)
{
    image = tag << 32 | 0x5eed;
    next_batch_id = image & 0xffffffff00000000ull;
    write_process(image, 0);
}

static void emit(const struct spec *s, void *caller)
{
    struct built *b = &scratch;
    struct cbt_ev_batch h;
    memset(&h, 0, sizeof h);
    if (s->format == CBT_EV_FORMAT && !process_written)
        start_image((uint32_t)getpid()); /* the shim writes its image's process event at its first
                                          * batch; its tag (random there) tells processes apart */
    build(s, b);
    h.format = (uint16_t)s->format;
    h.rules = (uint16_t)s->rules;
    h.batch_id = next_batch_id++;
    h.api = (uint8_t)s->api;
    h.door = (uint8_t)s->door;
    h.outcome = (uint8_t)s->outcome;
    h.result = s->result;
    h.num_ops = s->numops_set ? s->numops : s->ops;
    uint64_t nops = s->oplist ? s->ops : 0; /* a NULL op list has no ops to record */
    h.ops_recorded = s->recorded_set ? s->recorded : nops;
    h.flags = s->flags;
    h.op_list = s->oplist;
    h.stream = s->stream;
    h.stream_id = s->stream_id;
    h.context = 0xc0;
    h.device = s->device;
    h.capture = CBT_CAPTURE_NONE;
    h.fail_idx = s->fail_idx;
    h.driver_ns = s->driver_ns;
    h.caller = (uint64_t)(uintptr_t)caller;
    h.tid = (int32_t)syscall(SYS_gettid);
    h.device_count = s->devices;

    int events = 0;
    if (s->inline_mode) {
        true_findings(s, b, &h);
        h.validated = 1;
        h.findings = (uint32_t)b->nfindings;
        for (size_t f = 0; f < b->nfindings; f++) {
            if (hop && events++)
                hop_cpu();
            lttng_ust_tracepoint(cubatchtrace, finding, &b->findings[f], caller);
        }
    }
    struct cbt_ev_batch end = h;
    if (s->pending) {
        h.outcome = CBT_OUTCOME_PENDING;
        h.result = CBT_CU_SUCCESS;
        h.driver_ns = 0;
    }
    if (s->format == CBT_EV_FORMAT) {
        if (h.ops_recorded > nops)
            die("the compact record records the ops it has", "recorded > ops");
        emit3(s, b, &h, h.ops_recorded, caller);
        if (s->pending == 1) {
            if (hop)
                hop_cpu();
            cbt_record_end(&end, caller);
        }
        if (s->gpu >= 0)
            emit_gpu(s, &end, caller);
        return;
    }
    uint64_t first = 0;
    do {
        struct cbt_ev_chunk c;
        uint64_t left = nops - first;
        chunk_of(b, &c, h.batch_id, first, (uint32_t)(left > CBT_EV_OPS_PER_EVENT ? CBT_EV_OPS_PER_EVENT : left));
        if (hop && events++)
            hop_cpu();
        if (first == 0)
            lttng_ust_tracepoint(cubatchtrace, batch, &h, &c, caller);
        else
            lttng_ust_tracepoint(cubatchtrace, batch_ops, &c, caller);
        first += c.count;
    } while (first < nops);
    if (s->pending == 1) {
        if (hop)
            hop_cpu();
        lttng_ust_tracepoint(cubatchtrace, batch_end, &end, caller);
    }
}

/* two distinct call sites the tests can name */
__attribute__((noinline)) void gen_site_a(const struct spec *s);
__attribute__((noinline)) void gen_site_b(const struct spec *s);
void gen_site_a(const struct spec *s) { emit(s, (void *)((uintptr_t)&gen_site_a + 1)); }
void gen_site_b(const struct spec *s) { emit(s, (void *)((uintptr_t)&gen_site_b + 1)); }

static uint64_t num(const char *key, const char *v)
{
    char *end;
    uint64_t n = strtoull(v, &end, 0);
    if (!*v || *end)
        die("not a number", key);
    return n;
}

static void defaults(struct spec *s)
{
    memset(s, 0, sizeof(*s));
    s->n = 1;
    s->ops = 1;
    s->w = 4096;
    s->h = s->d = 1;
    s->elem = 4;
    s->driver_ns = 1000;
    s->stream = 0x1000;
    s->stream_id = 7;
    s->oplist = 0x5000;
    s->fail_idx = UINT64_MAX;
    s->api = CBT_API_V2;
    s->door = CBT_DOOR_SYMBOL;
    s->outcome = CBT_OUTCOME_FORWARDED;
    s->result = CBT_CU_SUCCESS;
    s->src = s->dst = CBT_MEM_DEVICE;
    s->order = CBT_ORDER_STREAM;
    s->devices = 2;
    s->format = default_format;
    s->rules = CBT_RULES_VERSION;
    s->gpu = -1;
    s->gpu_ns = 1000;
    s->gpu_start = -2000;
}

static void parse_violations(struct spec *s, char *v)
{
    char *save = NULL;
    for (char *r = strtok_r(v, "+", &save); r; r = strtok_r(NULL, "+", &save)) {
        if (s->nviol == MAX_VIOL)
            die("too many violations", r);
        char *at = strchr(r, '@');
        if (at)
            *at++ = 0;
        s->viol[s->nviol].rule = parse_enum("violate", r, rule_name);
        s->viol[s->nviol].op = at ? num("violate", at) : 0;
        s->nviol++;
    }
}

static void parse_spec(char *arg, struct spec *s)
{
    defaults(s);
    char *save = NULL;
    for (char *kv = strtok_r(arg, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *v = strchr(kv, '=');
        if (!v)
            usage();
        *v++ = 0;
        if (!strcmp(kv, "n")) s->n = num(kv, v);
        else if (!strcmp(kv, "ops")) s->ops = num(kv, v);
        else if (!strcmp(kv, "numops")) { s->numops = num(kv, v); s->numops_set = 1; }
        else if (!strcmp(kv, "recorded")) { s->recorded = num(kv, v); s->recorded_set = 1; }
        else if (!strcmp(kv, "bytes")) { s->w = num(kv, v); s->h = s->d = 1; }
        else if (!strcmp(kv, "shape")) {
            unsigned long long w, h, d;
            if (sscanf(v, "%llux%llux%llu", &w, &h, &d) != 3)
                die("shape is WxHxD", v);
            s->w = w;
            s->h = h;
            s->d = d;
        }
        else if (!strcmp(kv, "elem")) s->elem = (uint32_t)num(kv, v);
        else if (!strcmp(kv, "driver_ns")) s->driver_ns = num(kv, v);
        else if (!strcmp(kv, "stream")) s->stream = num(kv, v);
        else if (!strcmp(kv, "stream_id")) s->stream_id = num(kv, v);
        else if (!strcmp(kv, "oplist")) s->oplist = num(kv, v);
        else if (!strcmp(kv, "flags")) s->flags = num(kv, v);
        else if (!strcmp(kv, "opflags")) s->opflags = num(kv, v);
        else if (!strcmp(kv, "fail_idx")) s->fail_idx = num(kv, v);
        else if (!strcmp(kv, "site")) s->site = (unsigned)num(kv, v);
        else if (!strcmp(kv, "srcdev")) s->srcdev = atoi(v);
        else if (!strcmp(kv, "dstdev")) s->dstdev = atoi(v);
        else if (!strcmp(kv, "device")) s->device = atoi(v);
        else if (!strcmp(kv, "devices")) s->devices = atoi(v);
        else if (!strcmp(kv, "distinct")) s->distinct = atoi(v) != 0;
        else if (!strcmp(kv, "format")) s->format = (unsigned)num(kv, v);
        else if (!strcmp(kv, "copies")) s->copies = atoi(v) != 0;
        else if (!strcmp(kv, "rules")) s->rules = (unsigned)num(kv, v);
        else if (!strcmp(kv, "pending")) s->pending = !strcmp(v, "lost") ? 2 : atoi(v) != 0;
        else if (!strcmp(kv, "inline")) s->inline_mode = !strcmp(v, "wrong") ? 2 : atoi(v) != 0;
        else if (!strcmp(kv, "violate")) parse_violations(s, v);
        else if (!strcmp(kv, "gpu")) s->gpu = !strcmp(v, "none") ? -1 : (int)parse_enum(kv, v, cbt_gpu_status_name);
        else if (!strcmp(kv, "gpu_ns")) s->gpu_ns = num(kv, v);
        else if (!strcmp(kv, "gpu_start")) s->gpu_start = strtoll(v, NULL, 0);
        else if (!strcmp(kv, "last_src")) { s->last_src = parse_enum(kv, v, cbt_memkind_name); s->last_src_set = 1; }
        else if (!strcmp(kv, "last_srcdev")) { s->last_srcdev = atoi(v); s->last_srcdev_set = 1; }
        else if (!strcmp(kv, "api")) s->api = parse_enum(kv, v, cbt_api_name);
        else if (!strcmp(kv, "door")) s->door = parse_enum(kv, v, cbt_door_name);
        else if (!strcmp(kv, "outcome")) s->outcome = parse_enum(kv, v, cbt_outcome_name);
        else if (!strcmp(kv, "result")) s->result = parse_enum(kv, v, cbt_curesult_name);
        else if (!strcmp(kv, "src")) s->src = parse_enum(kv, v, cbt_memkind_name);
        else if (!strcmp(kv, "dst")) s->dst = parse_enum(kv, v, cbt_memkind_name);
        else if (!strcmp(kv, "order")) s->order = parse_enum(kv, v, cbt_access_order_name);
        else {
            fprintf(stderr, "cbt-gen: unknown key %s\n", kv);
            usage();
        }
    }
    if (s->gpu >= 0)
        s->format = CBT_EV_FORMAT; /* the mark a gpu_time event's batch carries is the compact record's */
    if ((s->last_src_set || s->last_srcdev_set) && (s->ops < 2 || (s->last_src_set && is_array_kind(s->last_src))))
        die("last_src, last_srcdev need two ops or more and a pointer kind", "last_src");
    if (s->copies) {
        if (s->format < CBT_EV_FORMAT)
            die("copies=1 is written in the shim's format only", "format");
        if (is_array_kind(s->src) || is_array_kind(s->dst) || s->h != 1 || s->d != 1 || s->distinct || s->inline_mode)
            die("copies=1 takes pointers, bytes=N, no distinct, no inline", "copies");
        if (!cbt_api_is_1d(s->api))
            s->api = s->api & 1 ? CBT_API_1D_V2_PTSZ : CBT_API_1D_V2;
    }
}

/* Batch k of a mix, its sizes, kinds and API set: the rest as every mix has
 * it (an overlapping pair every 32nd batch of two ops or more; two call
 * sites, alternately), written. */
static void mix_batch(struct spec *s, uint64_t k)
{
    s->d = 1;
    s->driver_ns = 3600 * s->ops;
    s->nviol = 0;
    if (k % 32 == 31 && s->ops >= 2) {
        s->viol[0].rule = CBT_RULE_overlap_dst_dst;
        s->viol[0].op = 0;
        s->nviol = 1;
    }
    if (k & 1)
        gen_site_a(s);
    else
        gen_site_b(s);
}

/*
 * The benchmark's mix, until `total` ops: batch sizes 1 to 1024, four pairs of
 * memory kinds, 2D and 1D extents, two call sites, two API variants.  Every
 * 32nd batch of two ops or more has two ops writing the same bytes (one
 * overlap_dst_dst each); pageable sources use srcAccessOrder ANY, so the
 * rest is clean.
 */
static void mix(uint64_t total)
{
    static const uint64_t sizes[] = {1, 8, 64, 256, 1024, 16, 4, 512};
    static const unsigned kinds[][2] = {{CBT_MEM_HOST_PINNED, CBT_MEM_DEVICE}, {CBT_MEM_DEVICE, CBT_MEM_HOST_PINNED},
                                        {CBT_MEM_DEVICE, CBT_MEM_DEVICE}, {CBT_MEM_HOST_PAGEABLE, CBT_MEM_DEVICE}};
    struct spec s;
    defaults(&s);
    uint64_t done = 0;
    for (unsigned k = 0; done < total; k++) {
        s.ops = sizes[k % 8];
        if (s.ops > total - done)
            s.ops = total - done;
        s.src = kinds[k % 4][0];
        s.dst = kinds[k % 4][1];
        s.order = s.src == CBT_MEM_HOST_PAGEABLE ? CBT_ORDER_ANY : CBT_ORDER_STREAM;
        s.w = 512u << (k % 6);
        s.h = k % 5 == 0 ? 4 : 1;
        s.api = k % 3 == 0 ? CBT_API_V2 : CBT_API_V2_PTSZ;
        mix_batch(&s, k);
        done += s.ops;
    }
}

/*
 * The small batches real programs make, `batches` of them: KvikIO and RMM
 * make one copy per 1D batch, NCCL's copy-engine collectives one per rank.
 * Sizes 1, 1, 2, 1, 4, 1, 8, 3 ops (2.625 a batch); in the shim's format two batches
 * in four are 1D (copies), the others 3D; memory kinds, extents, call sites,
 * API variants and an overlapping pair every 32nd batch of two ops or more
 * as in mix().
 */
static void small_mix(uint64_t batches)
{
    static const uint64_t sizes[] = {1, 1, 2, 1, 4, 1, 8, 3};
    static const unsigned kinds[][2] = {{CBT_MEM_HOST_PINNED, CBT_MEM_DEVICE}, {CBT_MEM_DEVICE, CBT_MEM_HOST_PINNED},
                                        {CBT_MEM_DEVICE, CBT_MEM_DEVICE}, {CBT_MEM_HOST_PAGEABLE, CBT_MEM_DEVICE}};
    struct spec s;
    defaults(&s);
    for (uint64_t k = 0; k < batches; k++) {
        s.ops = sizes[k % 8];
        s.src = kinds[k % 4][0];
        s.dst = kinds[k % 4][1];
        s.order = s.src == CBT_MEM_HOST_PAGEABLE ? CBT_ORDER_ANY : CBT_ORDER_STREAM;
        s.copies = s.format == CBT_EV_FORMAT && k % 4 < 2;
        s.w = 512u << (k % 6);
        s.h = !s.copies && k % 5 == 0 ? 4 : 1;
        s.api = s.copies ? (k % 3 == 0 ? CBT_API_1D_V2 : CBT_API_1D_V2_PTSZ) : (k % 3 == 0 ? CBT_API_V2 : CBT_API_V2_PTSZ);
        mix_batch(&s, k);
    }
}

int main(int argc, char **argv)
{
    int exit_code = 0, raise_sig = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--exit") && i + 1 < argc) {
            exit_code = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--raise") && i + 1 < argc) {
            raise_sig = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--mix") && i + 1 < argc) {
            mix(num("--mix", argv[++i]));
        } else if (!strcmp(argv[i], "--hop")) {
            hop = 1;
        } else if (!strcmp(argv[i], "--small") && i + 1 < argc) {
            small_mix(num("--small", argv[++i]));
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            default_format = (unsigned)num("--format", argv[++i]);
            if (default_format != CBT_EV_FORMAT2 && default_format != CBT_EV_FORMAT)
                die("--format is 2 or the shim's (CBT_EV_FORMAT)", argv[i]);
        } else if (!strcmp(argv[i], "--gpu-process")) {
            write_process(image, 1);
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            start_image(strtoull(argv[++i], NULL, 0));
        } else if (!strcmp(argv[i], "--pidfile") && i + 1 < argc) {
            FILE *f = fopen(argv[++i], "w");
            if (f) {
                fprintf(f, "%ld\n", (long)getpid());
                fclose(f);
            }
        } else if (!strcmp(argv[i], "--help")) {
            usage();
        } else {
            struct spec s;
            parse_spec(argv[i], &s);
            for (uint64_t k = 0; k < s.n; k++) {
                if (s.site == 1)
                    gen_site_b(&s);
                else
                    gen_site_a(&s);
            }
            gpu_flush();
        }
    }
    if (raise_sig) {
        signal(raise_sig, SIG_DFL);
        raise(raise_sig);
    }
    return exit_code;
}
