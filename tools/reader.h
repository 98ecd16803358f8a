/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): reading traces with libbabeltrace2 (reader.c): one
 * source per trace, our own sink, the decoded events handed to assemble.c.
 */
#ifndef CBT_READER_H
#define CBT_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "agg.h"
#include "assemble.h"

struct cbt_read_opts {
    const char *const *inputs; /* trace directories (searched for `metadata`) or net:// URLs */
    int ninputs;
    const int64_t *pids;       /* restrict to these vpids (none: all) */
    int npids;
    bool allow_empty;          /* no trace / no cubatchtrace event is not an error (run) */
    const char *begin, *end;   /* a time window (babeltrace2's trimmer: --begin/--end), or NULL */
};
/* 0: read; 2: the input could not be read (one line already printed on stderr) */
int cbt_read(const struct cbt_read_opts *o, struct cbt_agg *a);
/* The same, also handing each batch to fn once put back together (show). */
int cbt_read_batches(const struct cbt_read_opts *o, struct cbt_agg *a, cbt_batch_fn fn, void *ctx);

#endif
