/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: a trace's `metadata` and a stream file, read through the
 * path `summary` takes (tools/read/reader.c's cbt_read: the framing check
 * of precheck.c, then libbabeltrace2's source.ctf.fs and our sink).  The
 * input is a 4-byte little-endian length, that many bytes of metadata, then
 * the stream file.  A damaged framing must be refused before babeltrace2
 * sees it (babeltrace2 2.0.4 loops on a metadata packet cut short: libFuzzer's
 * -timeout catches what the check lets through).  Seeds: tests/fuzz/corpus/trace,
 * made from tests/tool/format3.tar.xz.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/precheck.h"
#include "read/reader.h"

static uint64_t sink;
static uint32_t on_host(void *ctx, const char *name) { (void)ctx, (void)name; return 0; }
static void on_batch(void *ctx, const struct cbt_where *w, const struct cbt_batch *b, const struct cbt_ops *ops) { sink++; }
static void on_batch_ops(void *ctx, const struct cbt_where *w, uint64_t id, const struct cbt_ops *ops) { sink++; }
static void on_finding(void *ctx, const struct cbt_where *w, const struct cbt_batch_finding *f) { sink++; }
static void on_stats(void *ctx, const struct cbt_read_stats *s) {}
static void on_version(void *ctx, const char *v) { sink += strlen(v); }
static void on_process(void *ctx, const struct cbt_where *w, int64_t rank, const char *var, int gt, uint32_t every) { sink++; }
static void on_image(void *ctx, const struct cbt_where *w, uint64_t ns, uint64_t start) { sink++; }
static void on_gpu(void *ctx, const struct cbt_where *w, const struct cbt_ev_gpu *g) { sink++; }
static void on_bin(void *ctx, const struct cbt_where *w, uint64_t b, uint64_t m, const char *p, bool pic) { sink++; }
static void on_build_id(void *ctx, const struct cbt_where *w, uint64_t b, const uint8_t *id, size_t n) { sink++; }
static void on_discarded(void *ctx, bool packets, uint64_t n, bool known) { sink++; }

static char dir[64];

static void put(const char *name, const uint8_t *d, size_t n)
{
    char p[128];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(d, 1, n, f) != n || fclose(f) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof(dir), "%s/cbt-fuzz-trace.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir))
            abort();
    }
    if (size < 4)
        return 0;
    size_t mlen = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
    data += 4, size -= 4;
    if (mlen > size)
        mlen = size;
    put("metadata", data, mlen);
    put("ch_0", data + mlen, size - mlen);
    const char *in[] = {dir};
    struct cbt_read_opts o = {.inputs = in, .ninputs = 1, .allow_empty = true, .one_thread = true};
    struct cbt_read_out out = {
        .host = on_host, .batch = on_batch, .batch_ops = on_batch_ops, .finding = on_finding, .read_stats = on_stats,
        .recorded_by = on_version, .process = on_process, .image = on_image, .gpu_time = on_gpu, .bin_info = on_bin,
        .build_id = on_build_id, .discarded = on_discarded,
    };
    cbt_read(&o, &out);
    return 0;
}
