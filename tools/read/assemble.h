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

/* enum cbt_batch_state, struct cbt_read_batch: base/records.h. */
const char *cbt_batch_state_name(enum cbt_batch_state s);

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
/* A batch's short stack (cubatchtrace:stack), read before the batch: handed
 * over with it (struct cbt_batch, its findings, struct cbt_read_batch). */
void cbt_asm_stack(struct cbt_asm *m, const struct cbt_where *w, uint64_t batch_id, const uint64_t *frames,
                   unsigned n);
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
/* A cubatchtrace:graph event (CUDA graphs holding batch nodes, events.h):
 * an executable graph's nodes kept, a launch handed over as one batch of
 * door graph_launch with the copies it ran. */
void cbt_asm_graph(struct cbt_asm *m, const struct cbt_where *w, const struct cbt_ev_graph *g);
/* The end of the input: every batch still assembling is handed over; the stats go to agg. */
void cbt_asm_finish(struct cbt_asm *m);

#endif
