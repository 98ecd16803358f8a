/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the compact record decoder (tools/read/compact.c) and the
 * batch reassembly behind it (tools/read/assemble.c, validate/), fed events
 * made from the input as the reader would hand them over: operand and stream
 * dictionary entries, b/c batches with their sequences (format 3 and 4's t),
 * further chunks and 1D attributes, from a few threads in turn.  Every
 * batch put back together is walked, op by op.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read/assemble.h"
#include "read/compact.h"

#include "fuzzread.h"

/* Small values most of the time: ids and counts that meet each other. */
static uint64_t val(struct rd *r)
{
    uint8_t s = byte(r);
    switch (s % 4) {
    case 0: case 1: return byte(r) % 8;
    case 2: return byte(r);
    default: return u64(r);
    }
}
/* A sequence of `w`-byte elements taken from the input (its bytes as they lie). */
static const uint8_t *seq(struct rd *r, unsigned w, uint64_t *len)
{
    uint64_t n = byte(r) % 48;
    size_t left = r->n - r->i;
    if (n * w > left)
        n = left / w;
    *len = n;
    const uint8_t *p = n ? r->d + r->i : NULL;
    r->i += n * w;
    return p;
}

static uint64_t sink;
static void on_batch(void *ctx, const struct cbt_where *w, const struct cbt_batch *b, const struct cbt_ops *ops)
{
    (void)ctx, (void)w, (void)b, (void)ops;
    sink++;
}
static void on_batch_ops(void *ctx, const struct cbt_where *w, uint64_t id, const struct cbt_ops *ops)
{
    (void)ctx, (void)w, (void)ops;
    sink += id;
}
static void on_finding(void *ctx, const struct cbt_where *w, const struct cbt_batch_finding *f)
{
    (void)ctx, (void)w, (void)f;
    sink++;
}
static void on_stats(void *ctx, const struct cbt_read_stats *s) { (void)ctx, (void)s; }
static void on_read_batch(void *ctx, const struct cbt_read_batch *b)
{
    (void)ctx;
    uint32_t sp = 0;
    for (uint64_t i = cbt_read_op(b, 0, &sp); i < b->nops; i = cbt_read_op(b, i + 1, &sp))
        sink += b->ops[i].srcAccessOrder + (b->src ? b->src[i].alloc_size : 0) + (b->dst ? b->dst[i].alloc_size : 0);
    for (uint64_t k = 0; k < b->nattrs; k++)
        sink += b->attrs[k].srcAccessOrder + b->attrs_idxs[k];
    for (uint64_t k = 0; k < b->nfindings; k++)
        sink += b->findings[k].rule;
}

static void fill(struct rd *r, struct cbt_compact_ev *e)
{
    memset(e, 0, sizeof(*e));
    e->id = val(r), e->w = val(r), e->driver_ns = val(r), e->caller = val(r), e->first = val(r);
    uint8_t have = byte(r);
    e->tail = have & 1, e->tail_inline = have & 2;
    if (have & 4) e->hdr = seq(r, 1, &e->hdr_len);
    if (have & 8) e->ops = seq(r, 8, &e->ops_len);
    if (have & 16) e->refs = seq(r, 2, &e->refs_len);
    if (have & 32) {
        e->dsts = seq(r, 8, &e->dsts_len);
        e->srcs = seq(r, 8, &e->srcs_len);
        e->sizes = seq(r, 8, &e->sizes_len);
    }
    if (have & 64) {
        e->attrs = seq(r, 8, &e->attrs_len);
        e->attr_idxs = seq(r, 8, &e->attr_idxs_len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct cbt_read_out out = {
        .batch = on_batch, .batch_ops = on_batch_ops, .finding = on_finding, .read_stats = on_stats,
    };
    struct cbt_asm *as = cbt_asm_new(&out, on_read_batch, NULL);
    struct cbt_compact *c = as ? cbt_compact_new(as) : NULL;
    if (!c) {
        cbt_asm_free(as);
        return 0;
    }
    struct rd r = {data, size, 0};
    int64_t ts = 0;
    while (r.i < r.n) {
        uint8_t sel = byte(&r);
        struct cbt_where w = {.host = 0, .vpid = sel >> 6, .vtid = (sel >> 4) & 3, .ts_ns = ts += 10, .has_ts = true};
        cbt_where_image(&w, (sel >> 3) & 1);
        struct cbt_compact_ev e;
        switch (sel % 7) {
        case 0: {
            uint64_t key = val(&r), index = byte(&r), info[CBT_EV_OPERAND_WORDS];
            for (int k = 0; k < CBT_EV_OPERAND_WORDS; k++)
                info[k] = val(&r);
            cbt_compact_operand(c, &w, key, index, info);
            break;
        }
        case 1: {
            struct cbt_ev_stream s = {.key = val(&r), .index = byte(&r), .handle = val(&r), .stream_id = val(&r),
                                      .context = val(&r), .device = (int8_t)byte(&r),
                                      .device_count = (int8_t)byte(&r), .rules = byte(&r)};
            cbt_compact_stream(c, &w, &s);
            break;
        }
        case 2: case 3:
            fill(&r, &e);
            cbt_compact_batch(c, &w, sel % 7 == 3, &e);
            break;
        case 4: case 5:
            fill(&r, &e);
            cbt_compact_chunk(c, &w, sel % 7 == 5, &e);
            break;
        default:
            fill(&r, &e);
            cbt_compact_attrs(c, &w, &e);
            break;
        }
    }
    cbt_asm_finish(as);
    cbt_compact_free(c);
    cbt_asm_free(as);
    return 0;
}
