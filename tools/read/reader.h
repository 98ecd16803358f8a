/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool and the plugin): reading traces with libbabeltrace2
 * (reader.c).  The tool reads whole inputs with cbt_read (one source per
 * trace, a muxer behind each, our own sink); the babeltrace2 plugin, which
 * lives inside someone else's graph, hands the messages it receives one by
 * one to a decoder (struct cbt_decoder).  Both go through the same event
 * decoding, compact.c and assemble.c, and hand what they read to a struct
 * cbt_read_out (base/records.h).
 */
#ifndef CBT_READER_H
#define CBT_READER_H

#include <stdbool.h>
#include <stdint.h>

#include <babeltrace2/babeltrace.h>

#include "base/records.h"
#include "read/assemble.h"

struct cbt_read_opts {
    const char *const *inputs; /* trace directories (searched for `metadata`) or net:// URLs */
    int ninputs;
    const int64_t *pids;       /* restrict to these vpids (none: all) */
    int npids;
    bool allow_empty;          /* no trace / no cubatchtrace event is not an error (run) */
    const char *begin, *end;   /* a time window (babeltrace2's trimmer: --begin/--end), or NULL */
    /* What some readers ask for besides (each may be left 0/NULL): */
    cbt_batch_fn batch;        /* each batch once put back together (show, timeline) */
    void *batch_ctx;
    void (*tick)(void *ctx);   /* called now and then while reading (a live summary's refresh) */
    void *tick_ctx;
    /* each cubatchtrace:gpu_time event, after out's gpu_time (w->ts_ns: the
     * event's time, so the GPU start is w->ts_ns + g->start_rel_ns) (timeline) */
    void (*gpu)(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g);
    void *gpu_ctx;
    uint64_t *events_read;     /* the cubatchtrace events read (of the pids asked for) are added here */
    bool *shim_seen;           /* set when a statedump names the shim: a program traced that made no batch */
    /* Decode on the thread that runs the graph.  Else, when two CPUs are
     * usable, the trace files hold 16 MiB or more, and neither a tick nor a
     * live session is read, the events are decoded on a second thread while
     * the graph reads on (reader.c; the callbacks above are then called on
     * that thread, one at a time, in the same order).
     * CUBATCHTRACE_PIPELINE=0 or 1 in the environment: never or always. */
    bool one_thread;
};
/* Whether inputs without a cubatchtrace event (of o's pids, in o's window)
 * are an error: always with --pid or --begin/--end (a filter that selects
 * nothing), else unless the shim was seen loaded (a program traced that
 * made no batch: an empty summary, not an error). */
bool cbt_read_empty_is_error(const struct cbt_read_opts *o, bool shim_seen);
/* o's --begin/--end as babeltrace2's trimmer takes them, into begin and end
 * (CBT_READ_WINDOW_LEN bytes each; "" when not given): an offset from the
 * traces' start, +SECONDS[.NNNNNNNNN], made absolute over the trace
 * directories paths (the earliest stream of them all), any other form
 * copied.  0, or 2 after one line. */
#define CBT_READ_WINDOW_LEN 64
int cbt_read_window(const struct cbt_read_opts *o, char *const *paths, int npaths, char *begin, char *end);
/* The one line said when o's inputs hold no cubatchtrace event (of its pids, in its window). */
void cbt_read_say_no_events(const struct cbt_read_opts *o);
/* Reads o's inputs into out.  0: read; 2: the input could not be read (one
 * line already printed on stderr). */
int cbt_read(const struct cbt_read_opts *o, const struct cbt_read_out *out);
/* The trace directories under o's inputs (directories holding `metadata`)
 * and its URLs, in order; 2 after one line on stderr when an input is
 * missing or (unless allow_empty) holds no trace.  Free each and the array. */
int cbt_trace_dirs(const struct cbt_read_opts *o, char ***paths, int *npaths);

/* ---- a message at a time (the plugin) ---- */
struct cbt_decoder;
/* NULL when out of memory.  Batches go to out and, whole, to fn(ctx, ...). */
struct cbt_decoder *cbt_decoder_new(const struct cbt_read_out *out, cbt_batch_fn fn, void *ctx);
void cbt_decoder_free(struct cbt_decoder *d);
enum cbt_decoded {
    CBT_DECODED_ERROR = -1, /* cbt_decoder_error says why; the decoder should not be fed more */
    CBT_DECODED_OTHER,      /* not an event of cubatchtrace's batches (or a message that is no event) */
    CBT_DECODED_BATCH,      /* an event of a batch (format 2 or 3, its dictionaries, batch_end,
                             * an inline finding): read into the batches it belongs to */
};
/* Messages must come in trace order (time order within each trace). */
enum cbt_decoded cbt_decoder_message(struct cbt_decoder *d, const bt_message *msg);
/* The end of the input: every batch still being put back together is handed over. */
void cbt_decoder_finish(struct cbt_decoder *d);
const char *cbt_decoder_error(const struct cbt_decoder *d);

#endif
