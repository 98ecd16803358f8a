/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool and the plugin): batches put back together from
 * their chunks, validated, their inline findings compared (assemble.c); each
 * batch goes to the reader's consumer (struct cbt_read_out: the aggregate, in
 * the tool) and, when asked, whole to a callback (show, timeline, the plugin).
 */
#ifndef CBT_ASSEMBLE_H
#define CBT_ASSEMBLE_H

#include <stdbool.h>
#include <stdint.h>

#include <cubatchtrace/events.h>
#include <cubatchtrace/validate.h>

#include "base/records.h"

enum cbt_batch_state {
    CBT_BS_COMPLETE,   /* every recorded op, validated */
    CBT_BS_PENDING,    /* outcome "pending" and no batch_end: the process ended inside the driver call; validated */
    CBT_BS_INCOMPLETE, /* chunks missing at the end of the input (discarded events?): not validated */
    CBT_BS_MALFORMED,  /* chunks that do not fit the event format: not validated */
    CBT_BS_GIVEN_UP,   /* the reader's memory cap: later ops are summarised, not shown, not validated */
    CBT_BS_NO_HEADER,  /* chunks whose cubatchtrace:batch event never came */
};
const char *cbt_batch_state_name(enum cbt_batch_state s);

/* A batch as the reader put it back together, for show.c.  Valid during the call only. */
struct cbt_read_batch {
    struct cbt_where w;
    bool have_header;
    struct cbt_ev_batch h;   /* the header, with batch_end's fields over it when it came */
    enum cbt_batch_state state;
    uint64_t nops;           /* ops[0..nops) */
    const uint64_t *spans;   /* pairs [lo, hi): the ops whose chunk came; NULL: all of [0, nops) */
    uint32_t nspans;
    const CUDA_MEMCPY3D_BATCH_OP *ops;
    const struct cbt_operand_info *src, *dst;
    const struct cbt_finding *findings; /* read-time, in the validator's order */
    uint64_t nfindings;
    const uint8_t *finding_inline;      /* per finding: 1 the inline validator made it too, 0 it did not, 2 not compared */
    const struct cbt_finding *inline_only; /* inline findings the read-time validator did not make */
    uint64_t ninline_only;
    /* A 1D batch (cuMemcpyBatchAsync, cbt_api_is_1d(h.api)): its ops are its copies */
    bool is1d;
    struct cbt_ev_batch1d d;
    const CUmemcpyAttributes *attrs;  /* the attributes recorded: d.attrs_recorded, when whole */
    const uint64_t *attrs_idxs;
    uint64_t nattrs;                  /* attributes held */
};
typedef void (*cbt_batch_fn)(void *ctx, const struct cbt_read_batch *b);

/* The first op at or after i whose chunk came (b->nops when none; *sp, from
 * 0, tracks the span): for (i = cbt_read_op(b, 0, &sp); i < b->nops; i = cbt_read_op(b, i + 1, &sp)). */
static inline uint64_t cbt_read_op(const struct cbt_read_batch *b, uint64_t i, uint32_t *sp)
{
    if (!b->spans)
        return i;
    while (*sp < b->nspans && b->spans[2 * *sp + 1] <= i)
        (*sp)++;
    if (*sp == b->nspans)
        return b->nops;
    return i < b->spans[2 * *sp] ? b->spans[2 * *sp] : i;
}

struct cbt_asm;
struct cbt_chunk_bytes {
    uint64_t first;                               /* ops_first */
    const uint8_t *ops, *operand_of, *operands;   /* the three sequences */
    uint64_t ops_len, operand_of_len, operands_len;
    /* or, decoded already (compact.c): each op's operands, ops_len / CBT_EV_OP_SIZE
     * of each; operand_of and operands are then not read */
    const struct cbt_operand_info *src, *dst;
};
/* The attribute sequences of a 1D batch's event. */
struct cbt_attr_bytes {
    uint64_t first;                 /* attrs_first */
    const uint8_t *words, *idxs;    /* attr_words, attr_idxs */
    uint64_t words_len, idxs_len;
};
/* Batches go to out (copied) and, when fn is set, each whole batch to fn(ctx, ...). */
struct cbt_asm *cbt_asm_new(const struct cbt_read_out *out, cbt_batch_fn fn, void *ctx);
void cbt_asm_free(struct cbt_asm *m);
void cbt_asm_header(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h,
                    const struct cbt_chunk_bytes *c);
/* A 1D batch's header event (batch1d) and its further attributes (batch_attrs). */
void cbt_asm_header1d(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h,
                      const struct cbt_ev_batch1d *d, const struct cbt_attr_bytes *a, const struct cbt_chunk_bytes *c);
void cbt_asm_attrs(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id, const struct cbt_attr_bytes *a);
void cbt_asm_chunk(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id, const struct cbt_chunk_bytes *c);
void cbt_asm_end(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_batch *h);
void cbt_asm_inline_finding(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_finding *f);
/* A batch whose record says a gpu_time event of it follows (read/gpujoin.h). */
void cbt_asm_gpu_expect(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id);
/* A short gpu_time event, with its batch's fields into out; false: the batch was not known. */
bool cbt_asm_gpu_time(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_gpu_time *e,
                      struct cbt_ev_gpu *out);
/* The end of the input: every batch still assembling is handed over; the stats go to agg. */
void cbt_asm_finish(struct cbt_asm *m);

#endif
