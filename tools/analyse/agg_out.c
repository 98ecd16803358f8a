/* SPDX-License-Identifier: MIT */
/*
 * The aggregate as the reader's consumer: each member of struct
 * cbt_read_out (base/records.h) calls agg.c's function of the same name.
 * The reader (read/) and the aggregate know nothing of each other; the
 * commands join them with cbt_agg_read_out.
 */
#include "config.h"

#include "analyse/agg.h"

static uint32_t out_host(void *a, const char *hostname) { return cbt_agg_host(a, hostname); }

static void out_batch(void *a, const struct cbt_where *w, const struct cbt_batch *b, const struct cbt_ops *ops)
{
    cbt_agg_batch(a, w, b, ops);
}

static void out_batch_ops(void *a, const struct cbt_where *w, uint64_t batch_id, const struct cbt_ops *ops)
{
    cbt_agg_batch_ops(a, w, batch_id, ops);
}

static void out_finding(void *a, const struct cbt_where *w, const struct cbt_batch_finding *f)
{
    cbt_agg_finding(a, w, f);
}

static void out_read_stats(void *a, const struct cbt_read_stats *s) { cbt_agg_read_stats(a, s); }

static void out_recorded_by(void *a, const char *version) { cbt_agg_recorded_by(a, version); }

static void out_process(void *a, const struct cbt_where *w, int64_t rank, const char *rank_var, int gpu_time,
                        uint32_t gpu_every)
{
    cbt_agg_process(a, w, rank, rank_var, gpu_time, gpu_every);
}

static void out_image(void *a, const struct cbt_where *w, uint64_t pid_ns, uint64_t start_ns)
{
    cbt_agg_image(a, w, pid_ns, start_ns);
}

static void out_gpu_time(void *a, const struct cbt_where *w, const struct cbt_ev_gpu *g) { cbt_agg_gpu_time(a, w, g); }

static void out_bin_info(void *a, const struct cbt_where *w, uint64_t baddr, uint64_t memsz, const char *path,
                         bool is_pic)
{
    cbt_agg_bin_info(a, w, baddr, memsz, path, is_pic);
}

static void out_build_id(void *a, const struct cbt_where *w, uint64_t baddr, const uint8_t *id, size_t len)
{
    cbt_agg_build_id(a, w, baddr, id, len);
}

static void out_discarded(void *a, bool packets, uint64_t count, bool count_known)
{
    cbt_agg_discarded(a, packets, count, count_known);
}

static void out_fabric(void *a, const struct cbt_where *w, const struct cbt_ev_fabric *f)
{
    (void)w;
    cbt_agg_fabric(a, f);
}

void cbt_agg_read_out(struct cbt_agg *a, struct cbt_read_out *out)
{
    *out = (struct cbt_read_out){
        .ctx = a,
        .host = out_host,
        .batch = out_batch,
        .batch_ops = out_batch_ops,
        .finding = out_finding,
        .read_stats = out_read_stats,
        .recorded_by = out_recorded_by,
        .process = out_process,
        .image = out_image,
        .gpu_time = out_gpu_time,
        .bin_info = out_bin_info,
        .build_id = out_build_id,
        .discarded = out_discarded,
        .fabric = out_fabric,
    };
}
