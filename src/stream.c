/* SPDX-License-Identifier: MIT */
/* What a stream handle names (stream.h says how long each answer is kept). */
#include "config.h"

#include "gputime.h"
#include "nodes.h"
#include "stream.h"

/* (stream.h) */
void cbt_streams_catch_up(struct cbt_thread *t, uint64_t g)
{
    struct cbt_mem_change ch;
    int got;
    while ((got = cbt_log_next(&cbt_stream_log, &t->stream_pos, &ch)) > 0)
        for (unsigned j = 0; j < CBT_STREAM_SLOTS; j++)
            if (t->streams[j].valid && (uint64_t)(uintptr_t)t->streams[j].stream == ch.lo) {
                t->streams[j].valid = 0;
                if (j == t->steady.slot)
                    t->steady.valid = 0;
            }
    if (got < 0) {
        for (unsigned j = 0; j < CBT_STREAM_SLOTS; j++)
            t->streams[j].valid = 0;
        t->steady.valid = 0;
    }
    t->steady.generation = g;
}

/* (stream.h) */
struct cbt_stream_slot *cbt_stream_slot_find(struct cbt_thread *t, const void *s, int ptsz)
{
    return cbt_stream_slot_of(t, s, ptsz);
}

/* The slot a stream t does not know goes to: one of its probe's that holds
 * nothing (or the same handle), else the probe's slots in turn. */
static struct cbt_stream_slot *slot_for(struct cbt_thread *t, CUstream s)
{
    const unsigned h = cbt_stream_hash(s, CBT_STREAM_SLOTS);
    for (unsigned j = 0; j < CBT_STREAM_PROBES; j++) {
        struct cbt_stream_slot *x = &t->streams[(h + j) & (CBT_STREAM_SLOTS - 1)];
        if (!x->valid || x->stream == s)
            return x;
    }
    return &t->streams[(h + t->slot_turn++ % CBT_STREAM_PROBES) & (CBT_STREAM_SLOTS - 1)];
}

/*
 * What the record says of the stream, in two steps.  Before the call: its
 * context and device (cuStreamGetCtx, which tells whether the driver knows
 * the stream at all, and so whether it reads the op list).  After it: its id
 * (cuStreamGetId) and capture state.  cuStreamGetId is never asked of a
 * stream being captured into a graph: the driver answers that with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the program's
 * capture (measured on the H200).  The batch's own result says most of the
 * capture state: CUDA_SUCCESS, none; 900, being captured (the batch was
 * refused for it); 901, a capture already invalidated.  Only for other
 * results, and before cuStreamGetId on a stream not seen before, is the
 * driver asked (cuStreamIsCapturing, safe on any stream).
 */
bool cbt_stream_before(struct cbt_thread *t, const struct cbt_real *real, enum cbt_api api, CUstream stream,
                       struct cbt_ev_batch *b, struct cbt_stream_look *l)
{
    int ptsz = cbt_api_is_ptsz(api);
    bool special = (uintptr_t)stream <= (uintptr_t)CU_STREAM_PER_THREAD;
    *l = (struct cbt_stream_look){0};
    b->capture = CBT_CAPTURE_UNKNOWN;
    b->device = -1;
    if (t)
        cbt_streams_current(t);
    struct cbt_stream_slot *slot = special || !t ? NULL : cbt_stream_slot_of(t, stream, ptsz);
    l->slot = slot || special || !t ? slot : slot_for(t, stream);
    if (slot && cbt_kind_cache_enabled()) {
        b->stream_id = slot->id;
        b->context = (uint64_t)(uintptr_t)slot->ctx;
        b->device = slot->device;
        l->have_id = true;
        return true;
    }
    CUcontext ctx = NULL;
    l->ctx_ok = real->stream_get_ctx[ptsz] && real->stream_get_ctx[ptsz](stream, &ctx) == CUDA_SUCCESS;
    if (l->ctx_ok) {
        l->ctx = ctx;
        b->context = (uint64_t)(uintptr_t)ctx;
        CUdevice dev;
        if (ctx && real->ctx_get_device_v2 && real->ctx_get_device_v2(&dev, ctx) == CUDA_SUCCESS)
            b->device = dev;
    }
    /* A stream the driver does not know: it rejects the batch without reading the ops. */
    return !(real->stream_get_ctx[ptsz] && !l->ctx_ok && !special);
}

void cbt_stream_after(const struct cbt_real *real, enum cbt_api api, CUstream stream, struct cbt_ev_batch *b,
                      const struct cbt_stream_look *l, CUresult res, bool forwarded)
{
    int ptsz = cbt_api_is_ptsz(api);
    /* A driver with batch nodes (CUDA 13.5) may take a batch on a capturing
     * stream into the graph and answer CUDA_SUCCESS: there success says
     * nothing of the capture, and the driver is asked. */
    if (b->capture == CBT_CAPTURE_UNKNOWN && forwarded && res == CUDA_SUCCESS && cbt_graph_captures_batches())
        b->capture = cbt_stream_capture(real, ptsz, stream);
    if (b->capture == CBT_CAPTURE_UNKNOWN && forwarded)
        b->capture = res == CUDA_SUCCESS                          ? CBT_CAPTURE_NONE
                     : res == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ? CBT_CAPTURE_ACTIVE
                     : res == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ? CBT_CAPTURE_INVALIDATED
                                                                    : CBT_CAPTURE_UNKNOWN;
    if (b->capture == CBT_CAPTURE_UNKNOWN && (l->have_id || l->ctx_ok))
        b->capture = cbt_stream_capture(real, ptsz, stream); /* the result did not tell */
    if (l->have_id || !l->ctx_ok)
        return;
    /* A stream first seen (or a special handle): its id only if it is not
     * being captured (asked again just before, for a created stream). */
    if (l->slot && b->capture == CBT_CAPTURE_NONE && forwarded)
        b->capture = cbt_stream_capture(real, ptsz, stream);
    if (b->capture != CBT_CAPTURE_NONE)
        return;
    unsigned long long id = 0;
    if (!real->stream_get_id[ptsz] || real->stream_get_id[ptsz](stream, &id) != CUDA_SUCCESS)
        return;
    b->stream_id = id;
    if (l->slot && b->device >= 0)
        *l->slot = (struct cbt_stream_slot){.stream = stream, .id = id, .ctx = l->ctx, .device = b->device,
                                            .ptsz = (uint8_t)ptsz, .valid = 1};
}
