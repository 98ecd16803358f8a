/* SPDX-License-Identifier: MIT */
/*
 * The advisor (tools/analyse/advice.c), built from its source, on batches
 * whose times are chosen: what only exact times can pin down.  unbatched_run
 * ends a run at a gap above run_gap_us, at a batch of more copies, at a
 * failed call and at a batch of another stream, follows threads and streams
 * apart, and is answered at the end of the input (cbt_advice_flush) for the
 * runs still open; its saving is (calls - 1) x the cheapest call.  The cost
 * table's figures give the savings of the table rules; a table without its
 * GPU and driver, or with a figure that is not a bandwidth, is refused.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "analyse/advice.h"

#include "../tap.h"

static struct cbt_advisor *v;
static uint64_t next_id;
static struct cbt_advice got[64];
static size_t ngot;

static void take(void *ctx, const struct cbt_advice *a)
{
    (void)ctx;
    if (ngot < 64)
        got[ngot++] = *a;
}

/* A batch of `ops` copies of thread tid on stream s at time ts (ns), driver_ns ns in the driver. */
static void call(int64_t tid, uint64_t s, int64_t ts, uint64_t ops, uint64_t driver_ns, uint32_t result)
{
    struct cbt_where w = {.host = 0, .vpid = 100, .vtid = tid, .image = 1, .ts_ns = ts, .has_ts = true};
    struct cbt_batch b = {.batch_id = next_id++, .num_ops = ops, .stream = s, .driver_ns = driver_ns,
                          .caller = 0x1000, .outcome = CBT_OUTCOME_FORWARDED, .result = result};
    struct cbt_advice_batch ab = {0};
    struct cbt_advice out[CBT_ADVICE_MAX];
    size_t n = cbt_advice_batch(v, &w, &b, &ab, ops, out);
    for (size_t i = 0; i < n && ngot < 64; i++)
        got[ngot++] = out[i];
}

/* The runs advised so far, "calls:saving" each in order, then those still open. */
static const char *runs(char *buf, size_t len)
{
    cbt_advice_flush(v, take, NULL);
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < ngot && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s:%llu:%llu", i ? " " : "",
                               got[i].f.rule == CBT_RULE_unbatched_run ? "run" : "other",
                               (unsigned long long)got[i].f.value, (unsigned long long)got[i].f.saving_ns);
    ngot = 0;
    return buf;
}

static void fresh(void)
{
    cbt_advisor_free(v);
    v = cbt_advisor_new();
    ngot = 0;
}

static void is_str(const char *got_s, const char *want, const char *what)
{
    if (!tap_ok(strcmp(got_s, want) == 0, "%s: %s", what, want))
        tap_diag("  got \"%s\"", got_s);
}

int main(void)
{
    char buf[512];
    const int64_t us = 1000;

    /* 8 calls 50 us apart: one run; the cheapest call (700 ns) times 7 */
    fresh();
    for (int i = 0; i < 8; i++)
        call(1, 0x10, i * 50 * us, 1, i == 3 ? 700 : 1000, 0);
    is_str(runs(buf, sizeof buf), "run:8:4900", "8 calls 50 us apart: one run, 7 x the cheapest call");

    /* a gap of 101 us splits 16 calls into 8 and 8 */
    fresh();
    for (int i = 0; i < 16; i++)
        call(1, 0x10, i * 50 * us + (i >= 8 ? 51 * us : 0), 1, 1000, 0);
    is_str(runs(buf, sizeof buf), "run:8:7000 run:8:7000", "a gap above 100 us ends the run");

    /* exactly 100 us apart: still one run */
    fresh();
    for (int i = 0; i < 9; i++)
        call(1, 0x10, i * 100 * us, 1, 1000, 0);
    is_str(runs(buf, sizeof buf), "run:9:8000", "100 us apart (run_gap_us): one run");

    /* a batch of 5 copies in the middle ends a run of 7 and starts none */
    fresh();
    for (int i = 0; i < 15; i++)
        call(1, 0x10, i * 10 * us, i == 7 ? 5 : 4, 1000, 0);
    is_str(runs(buf, sizeof buf), "", "7 + 7 calls around a batch of 5 copies: two runs too short");

    /* a failed call ends the run */
    fresh();
    for (int i = 0; i < 17; i++)
        call(1, 0x10, i * 10 * us, 1, 1000, i == 8 ? 1 : 0);
    is_str(runs(buf, sizeof buf), "run:8:7000 run:8:7000", "a failed call ends the run and is not counted");

    /* two threads, and two streams of one thread, interleaved: runs of their own */
    fresh();
    for (int i = 0; i < 8; i++) {
        call(1, 0x10, i * 10 * us, 1, 1000, 0);
        call(2, 0x10, i * 10 * us + 1, 2, 2000, 0);
        call(1, 0x20, i * 10 * us + 2, 1, 3000, 0);
    }
    cbt_advice_flush(v, take, NULL);
    uint64_t seen = 0;
    for (size_t i = 0; i < ngot; i++)
        seen += got[i].f.saving_ns;
    tap_is_u64(ngot, 3, "three runs: two threads, and a second stream of the first");
    tap_is_u64(seen, 7 * 1000 + 7 * 2000 + 7 * 3000, "each run's saving is its own calls'");
    ngot = 0;

    /* the run's advice names its first batch, its calls and the most copies of one call */
    fresh();
    next_id = 40;
    for (int i = 0; i < 10; i++)
        call(7, 0x30, 1000000 + i * us, i == 4 ? 3 : 2, 1000, 0);
    cbt_advice_flush(v, take, NULL);
    tap_is_u64(ngot, 1, "one run of 10");
    tap_is_u64(got[0].f.batch_id, 40, "placed at its first batch");
    tap_is_u64((uint64_t)got[0].w.ts_ns, 1000000, "at its first batch's time");
    tap_is_u64(got[0].f.value, 10, "value: its calls");
    tap_is_u64(got[0].f.limit, 3, "limit: the most copies of one call");
    tap_is_u64(got[0].f.spent_ns, 10000, "the host time its calls took");
    tap_is_u64(got[0].f.saving, CBT_SAVING_BOUND, "without a cost table: at most, the bound the trace gives");
    ngot = 0;

    /* --advice run_calls=3, run_gap_us=1 */
    tap_ok(cbt_advice_option("run_calls=3") == 0 && cbt_advice_option("run_gap_us=1") == 0, "thresholds set");
    fresh();
    for (int i = 0; i < 6; i++)
        call(1, 0x10, i * 2 * us, 1, 1000, 0);
    is_str(runs(buf, sizeof buf), "", "run_gap_us=1: calls 2 us apart make no run");
    fresh();
    for (int i = 0; i < 3; i++)
        call(1, 0x10, i * us, 1, 1000, 0);
    is_str(runs(buf, sizeof buf), "run:3:2000", "run_calls=3: 3 calls 1 us apart are a run");

    /* the cost table */
    FILE *f = fopen("test_advice.costs", "w");
    fputs("# test\ngpu=G\ndriver=D\nbatch_d2d_gibps=1\nsm_d2d_gibps=2\nunknown_key=x\n", f);
    fclose(f);
    tap_ok(cbt_advice_costs("test_advice.costs") == 0, "a table with its GPU, driver and a figure is read");
    tap_ok(cbt_advice_table.d2d == 1 && cbt_advice_table.sm_d2d == 2, "its figures");
    f = fopen("test_advice.costs", "w");
    fputs("batch_d2d_gibps=1\n", f);
    fclose(f);
    tap_ok(cbt_advice_costs("test_advice.costs") != 0, "a table without its GPU and driver is refused");
    f = fopen("test_advice.costs", "w");
    fputs("gpu=G\ndriver=D\nbatch_d2d_gibps=fast\n", f);
    fclose(f);
    tap_ok(cbt_advice_costs("test_advice.costs") != 0, "a figure that is not a bandwidth is refused");
    tap_ok(cbt_advice_table.d2d == 1, "a refused table leaves the one before");
    remove("test_advice.costs");

    /* same_device_engine_copy from the table: 1 GiB at 1 rather than 2 GiB/s saves half a second */
    fresh();
    struct cbt_where w = {.vpid = 100, .vtid = 1, .has_ts = true, .ts_ns = 5};
    struct cbt_batch b = {.batch_id = 1, .num_ops = 1, .stream = 0x10, .driver_ns = 1000,
                          .outcome = CBT_OUTCOME_FORWARDED};
    struct cbt_advice_batch ab = {.same_dev = 1, .same_dev_bytes = 1ull << 30};
    struct cbt_advice out[CBT_ADVICE_MAX];
    size_t n = cbt_advice_batch(v, &w, &b, &ab, 1, out);
    tap_is_u64(n, 1, "one advice");
    tap_is_u64(out[0].f.rule, CBT_RULE_same_device_engine_copy, "same_device_engine_copy");
    tap_is_u64(out[0].f.saving, CBT_SAVING_TABLE, "from the table");
    tap_is_u64(out[0].f.saving_ns, 500000000, "1 GiB at 1 rather than 2 GiB/s: 0.5 s");
    /* the overlap flag: the table has no figure with the flag: unknown */
    struct cbt_advice_batch ao = {.overlap = 1, .overlap_bytes = {0, 0, 1ull << 20}};
    n = cbt_advice_batch(v, &w, &b, &ao, 1, out);
    tap_is_u64(n, 1, "one advice");
    tap_is_u64(out[0].f.saving, CBT_SAVING_NO_TABLE, "overlap_flag_large_copy without its figure: no table");
    tap_is_u64(out[0].f.saving_ns, 0, "and no figure");
    cbt_advisor_free(v);
    return tap_done();
}
