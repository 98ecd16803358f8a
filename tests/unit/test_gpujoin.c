/* SPDX-License-Identifier: MIT */
/*
 * The reader's join of a short gpu_time event with its batch
 * (tools/read/gpujoin.c): what the batch moved, its thread, stream and host
 * time, handed on with the event's own fields; batches told apart by host,
 * process and id; a batch not marked, or not in the input, unknown; ops of
 * several chunks summed, kinds and devices mixed; the waiting batches
 * bounded, the oldest forgotten first.
 */
#include <stdint.h>
#include <string.h>

#include <cubatchtrace/catalog.h>

#include "../tap.h"
#include "read/gpujoin.h"

/* A chunk of n ops from op `first`, every one `bytes` long, src kind/device sk/sd, dst kind/device dk/dd. */
static struct cbt_ops chunk(uint64_t first, uint32_t n, uint64_t bytes, uint8_t sk, int32_t sd, uint8_t dk, int32_t dd)
{
    struct cbt_ops o;
    memset(&o, 0, sizeof o);
    o.first = first;
    o.count = n;
    for (uint32_t i = 0; i < n; i++) {
        o.bytes[i] = bytes;
        o.src_mem[i] = sk;
        o.dst_mem[i] = dk;
        o.src_dev[i] = sd;
        o.dst_dev[i] = dd;
    }
    return o;
}

static struct cbt_batch batch(uint64_t id)
{
    struct cbt_batch b;
    memset(&b, 0, sizeof b);
    b.batch_id = id;
    b.api = 3;
    b.stream = 0x5000;
    b.stream_id = 7;
    b.device = 1;
    b.driver_ns = 1234;
    return b;
}

int main(void)
{
    struct cbt_gpujoin *j = cbt_gpujoin_new();
    tap_ok(j != NULL, "a join is made");
    tap_ok(!cbt_gpujoin_waiting(j), "nothing waits at first");

    /* one batch, marked, its ops in two chunks */
    struct cbt_where w = {.host = 0, .vpid = 42, .vtid = 43};
    struct cbt_ev_gpu g;
    const uint64_t id = 7ull << 32 | 5;
    cbt_gpujoin_expect(j, &w, id);
    tap_ok(cbt_gpujoin_waiting(j), "a marked batch waits");
    struct cbt_batch b = batch(id);
    struct cbt_ops o = chunk(0, 3, 100, CBT_MEM_DEVICE, 0, CBT_MEM_DEVICE, 1);
    cbt_gpujoin_batch(j, &w, &b, &o);
    o = chunk(3, 2, 50, CBT_MEM_DEVICE, 0, CBT_MEM_DEVICE, 1);
    cbt_gpujoin_ops(j, &w, id, &o);
    struct cbt_ev_gpu_time t = {.batch_id = id, .status = CBT_GPU_TIMED, .start_rel_ns = -900, .gpu_ns = 800};
    struct cbt_where wr = {.host = 0, .vpid = 42, .vtid = 99}; /* the shim's reader thread wrote the event */
    tap_ok(cbt_gpujoin_take(j, &wr, &t, &g), "its gpu_time event finds it");
    tap_ok(g.ops == 5 && g.bytes == 400, "ops and bytes of both chunks: %llu, %llu", (unsigned long long)g.ops,
           (unsigned long long)g.bytes);
    tap_ok(g.tid == 43 && g.api == 3 && g.stream == 0x5000 && g.stream_id == 7 && g.device == 1 && g.driver_ns == 1234,
           "the batch's thread, api, stream, device and host time");
    tap_ok(g.src_kind == CBT_MEM_DEVICE && g.dst_kind == CBT_MEM_DEVICE && g.src_device == 0 && g.dst_device == 1,
           "kinds and devices every op shares");
    tap_ok(g.batch_id == id && g.status == CBT_GPU_TIMED && g.start_rel_ns == -900 && g.gpu_ns == 800,
           "the event's own fields");
    tap_ok(!cbt_gpujoin_waiting(j), "taken: nothing waits");
    tap_ok(!cbt_gpujoin_take(j, &wr, &t, &g), "a second event of it finds nothing");
    tap_ok(g.tid == -1 && g.device == -1 && g.ops == 0 && g.bytes == 0 && g.src_kind == CBT_MEM_UNKNOWN &&
               g.dst_kind == CBT_MEM_UNKNOWN && g.src_device == -1 && g.dst_device == -1 && g.gpu_ns == 800,
           "a batch not known: its fields unknown, the event's kept");

    /* mixed kinds and devices; a batch not marked is not kept */
    cbt_gpujoin_expect(j, &w, 1);
    b = batch(1);
    o = chunk(0, 2, 10, CBT_MEM_DEVICE, 0, CBT_MEM_HOST_PINNED, -1);
    o.src_mem[1] = CBT_MEM_MANAGED;
    o.dst_dev[1] = 2;
    cbt_gpujoin_batch(j, &w, &b, &o);
    struct cbt_batch b2 = batch(2);
    cbt_gpujoin_batch(j, &w, &b2, &o);
    t.batch_id = 1;
    tap_ok(cbt_gpujoin_take(j, &w, &t, &g) && g.src_kind == CBT_GPU_MIXED_KIND &&
               g.dst_kind == CBT_MEM_HOST_PINNED && g.src_device == 0 && g.dst_device == CBT_GPU_MIXED_DEVICE,
           "kinds and devices that differ are mixed");
    t.batch_id = 2;
    tap_ok(!cbt_gpujoin_take(j, &w, &t, &g) && g.ops == 0, "a batch not marked is not kept");

    /* the same id in another process and on another host: apart */
    struct cbt_where w2 = {.host = 0, .vpid = 77, .vtid = 78}, w3 = {.host = 1, .vpid = 42, .vtid = 44};
    cbt_gpujoin_expect(j, &w, 9);
    cbt_gpujoin_expect(j, &w2, 9);
    cbt_gpujoin_expect(j, &w3, 9);
    cbt_gpujoin_expect(j, &w3, 9); /* a duplicated event: one entry */
    b = batch(9);
    o = chunk(0, 1, 11, CBT_MEM_DEVICE, 0, CBT_MEM_DEVICE, 0);
    cbt_gpujoin_batch(j, &w, &b, &o);
    o = chunk(0, 1, 22, CBT_MEM_DEVICE, 0, CBT_MEM_DEVICE, 0);
    cbt_gpujoin_batch(j, &w2, &b, &o);
    o = chunk(0, 1, 33, CBT_MEM_DEVICE, 0, CBT_MEM_DEVICE, 0);
    cbt_gpujoin_batch(j, &w3, &b, &o);
    cbt_gpujoin_batch(j, &w3, &b, &o); /* handed over twice: counted once */
    t.batch_id = 9;
    uint64_t got[3] = {0, 0, 0};
    int32_t tids[3] = {0, 0, 0};
    const struct cbt_where *ws[3] = {&w3, &w, &w2};
    for (int i = 0; i < 3; i++)
        if (cbt_gpujoin_take(j, ws[i], &t, &g)) {
            got[i] = g.bytes;
            tids[i] = g.tid;
        }
    tap_ok(got[0] == 33 && got[1] == 11 && got[2] == 22 && tids[0] == 44 && tids[1] == 43 && tids[2] == 78,
           "one id in three processes, two hosts: each its own (%llu %llu %llu)", (unsigned long long)got[0],
           (unsigned long long)got[1], (unsigned long long)got[2]);
    tap_ok(!cbt_gpujoin_waiting(j), "nothing left waiting");

    /* bytes saturate */
    cbt_gpujoin_expect(j, &w, 3);
    b = batch(3);
    o = chunk(0, 2, UINT64_MAX - 1, CBT_MEM_DEVICE, 0, CBT_MEM_DEVICE, 0);
    cbt_gpujoin_batch(j, &w, &b, &o);
    t.batch_id = 3;
    tap_ok(cbt_gpujoin_take(j, &w, &t, &g) && g.bytes == UINT64_MAX, "bytes saturate at 2^64-1");

    /* bounded: past 131072 waiting, the oldest is forgotten first */
    const uint64_t max = 1u << 17, extra = 10;
    for (uint64_t i = 0; i < max + extra; i++)
        cbt_gpujoin_expect(j, &w, 1000 + i);
    int old_gone = 1;
    for (uint64_t i = 0; i < extra; i++) {
        t.batch_id = 1000 + i;
        old_gone &= !cbt_gpujoin_take(j, &w, &t, &g);
    }
    tap_ok(old_gone, "the %llu oldest of %llu batches waiting are forgotten", (unsigned long long)extra,
           (unsigned long long)(max + extra));
    int kept = 1;
    for (uint64_t i = extra; i < max + extra; i++) {
        t.batch_id = 1000 + i;
        kept &= cbt_gpujoin_take(j, &w, &t, &g);
    }
    tap_ok(kept, "the %llu newest are kept", (unsigned long long)max);
    tap_ok(!cbt_gpujoin_waiting(j), "and taken, nothing waits");
    cbt_gpujoin_free(j);
    return tap_done();
}
