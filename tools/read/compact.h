/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the compact record (formats 3, 4) decoded into what
 * assemble.c puts back together (compact.c).  The decoder carries each
 * writing thread's dictionaries of operands and streams and its previous
 * refs, and hands each batch over in the shape of format 2: its header and
 * chunks of at most CBT_EV_OPS_PER_EVENT ops with their distinct operands,
 * 1D copies made ops as the shim made them.  Events must come in trace order.
 */
#ifndef CBT_COMPACT_H
#define CBT_COMPACT_H

#include <stdbool.h>
#include <stdint.h>

#include "read/assemble.h"

/* One b, bo, c, co or ca event as read (what an event lacks is 0/NULL).
 * Sequences are their bytes in the machine's order: ops, dsts, srcs, sizes,
 * attrs and attr_idxs 8 bytes an element, refs 2, hdr 1. */
struct cbt_compact_ev {
    uint64_t id, w, driver_ns, caller, first;
    const uint8_t *hdr, *ops, *refs, *dsts, *srcs, *sizes, *attrs, *attr_idxs;
    uint64_t hdr_len, ops_len, refs_len, dsts_len, srcs_len, sizes_len, attrs_len, attr_idxs_len;
    bool tail;        /* format 4: hdr is t's bytes after h; what the event carries there follows it */
    bool tail_inline; /* b, c (not bs, cs): the ops or the copies and attributes are in t too */
};

struct cbt_compact;
/* NULL when out of memory. */
struct cbt_compact *cbt_compact_new(struct cbt_asm *as);
void cbt_compact_free(struct cbt_compact *c);

void cbt_compact_operand(struct cbt_compact *c, const struct cbt_where *w, uint64_t key, uint64_t index,
                         const uint64_t info[CBT_EV_OPERAND_WORDS]);
void cbt_compact_stream(struct cbt_compact *c, const struct cbt_where *w, const struct cbt_ev_stream *e);
/* b (d1 false) or c (d1 true): the batch and its first chunk. */
void cbt_compact_batch(struct cbt_compact *c, struct cbt_where *w, bool d1, const struct cbt_compact_ev *e);
/* bo or co: a further chunk. */
void cbt_compact_chunk(struct cbt_compact *c, const struct cbt_where *w, bool d1, const struct cbt_compact_ev *e);
/* ca: attributes of a 1D batch, before its c event. */
void cbt_compact_attrs(struct cbt_compact *c, const struct cbt_where *w, const struct cbt_compact_ev *e);

#endif
