/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): reading traces with libbabeltrace2 (reader.c): one
 * source per trace, our own sink, the decoded events handed to assemble.c.
 */
#ifndef CBT_READER_H
#define CBT_READER_H

#include <stdbool.h>
#include <stdint.h>

#include "analyse/agg.h"
#include "read/assemble.h"

struct cbt_read_opts {
    const char *const *inputs; /* trace directories (searched for `metadata`) or net:// URLs */
    int ninputs;
    const int64_t *pids;       /* restrict to these vpids (none: all) */
    int npids;
    bool allow_empty;          /* no trace / no cubatchtrace event is not an error (run) */
    const char *begin, *end;   /* a time window (babeltrace2's trimmer: --begin/--end), or NULL */
};
/* What a reader of several traces at once (parallel.c) or of a live session
 * (summary.c) asks for besides. */
struct cbt_read_hooks {
    uint64_t events_read;      /* the cubatchtrace events read are added here */
    /* when set, called now and then while reading (a live summary's refresh) */
    void (*tick)(void *ctx, struct cbt_agg *a);
    void *tick_ctx;
    /* when set, called with each cubatchtrace:gpu_time event (w.ts_ns: the
     * event's time, so the GPU start is w.ts_ns + g->start_rel_ns) */
    void (*gpu)(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g);
    void *gpu_ctx;
};
/* The one line said when o's inputs hold no cubatchtrace event (in its window). */
void cbt_read_say_no_events(const struct cbt_read_opts *o);
/* 0: read; 2: the input could not be read (one line already printed on stderr) */
int cbt_read(const struct cbt_read_opts *o, struct cbt_agg *a);
/* The trace directories under o's inputs (directories holding `metadata`)
 * and its URLs, in order; 2 after one line on stderr when an input is
 * missing or (unless allow_empty) holds no trace.  Free each and the array. */
int cbt_trace_dirs(const struct cbt_read_opts *o, char ***paths, int *npaths);
/* The same, with hooks (h may be NULL). */
int cbt_read_hooked(const struct cbt_read_opts *o, struct cbt_agg *a, struct cbt_read_hooks *h);
/* The same, also handing each batch to fn once put back together (show). */
int cbt_read_batches(const struct cbt_read_opts *o, struct cbt_agg *a, cbt_batch_fn fn, void *ctx);
/* Both: each batch to fn, and the hooks (timeline). */
int cbt_read_batches_hooked(const struct cbt_read_opts *o, struct cbt_agg *a, cbt_batch_fn fn, void *ctx,
                            struct cbt_read_hooks *h);

#endif
