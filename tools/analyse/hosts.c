/* SPDX-License-Identifier: MIT */
/*
 * The job view of a summary: one row per host and one per process image
 * (host, pid, the image's number when the pid had several, procname and,
 * when the shim recorded it, the job rank), for traces of many processes on
 * many hosts (a relay daemon's output tree) and of processes that exec or
 * share a pid (containers, reused pids).  render/hosts.c prints these
 * rows (text and JSON); they are sorted by host name, rank, pid and image
 * number, so the order does not depend on the order of reading.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/agg_internal.h"
#include "analyse/hosts.h"
#include "base/util.h"

static const char *const rank_var_names[] = {"", "", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "other"};

bool cbt_hosts_has_rank(const struct kent *e) { return e->rank_var >= RV_OMPI && e->rank >= 0; }

const char *cbt_hosts_rank_var(const struct kent *e) { return rank_var_names[e->rank_var]; }

static bool active(const struct kent *e) { return e->row.batches || e->row.ops; }

static int cmp_prow(const void *x, const void *y)
{
    const struct cbt_proc_row *a = x, *b = y;
    int c = strcmp(a->host, b->host);
    if (c)
        return c;
    bool ra = cbt_hosts_has_rank(a->e), rb = cbt_hosts_has_rank(b->e);
    if (ra != rb)
        return ra ? -1 : 1;
    if (ra && a->e->rank != b->e->rank)
        return a->e->rank < b->e->rank ? -1 : 1;
    int64_t pa = cbt_pkey_vpid(a->e->k[1]), pb = cbt_pkey_vpid(b->e->k[1]);
    if (pa != pb)
        return pa < pb ? -1 : 1;
    return (a->e->img_no > b->e->img_no) - (a->e->img_no < b->e->img_no);
}

/* Whether some (host, pid) had several process images. */
static bool several_images(const struct cbt_agg *a)
{
    for (size_t i = 0; i < a->procs.n; i++)
        if (a->procs.ents[i].img_count > 1)
            return true;
    return false;
}

static int cmp_hrow(const void *x, const void *y)
{
    return strcmp(((const struct cbt_host_row *)x)->host, ((const struct cbt_host_row *)y)->host);
}

bool cbt_hosts_shown(const struct cbt_agg *a)
{
    if (a->by & CBT_BY_HOST || a->nhosts > 1 || several_images(a))
        return true;
    for (size_t i = 0; i < a->procs.n; i++)
        if (cbt_hosts_has_rank(&a->procs.ents[i]) && active(&a->procs.ents[i]))
            return true;
    return false;
}

int cbt_hosts_build(const struct cbt_agg *a, struct cbt_hosts *hs)
{
    *hs = (struct cbt_hosts){.several_images = several_images(a), .overflowed = a->procs.overflowed};
    struct cbt_proc_row *p = calloc(a->procs.n + 1, sizeof(*p));
    struct cbt_host_row *h = calloc(a->nhosts + 1, sizeof(*h));
    if (!p || !h) {
        free(p);
        free(h);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < a->procs.n; i++) {
        const struct kent *e = &a->procs.ents[i];
        if (!active(e))
            continue;
        p[n].e = e;
        p[n].host = cbt_agg_host_name(a, (uint32_t)e->k[0]);
        n++;
        uint32_t k = (uint32_t)e->k[0] < a->nhosts ? (uint32_t)e->k[0] : a->nhosts;
        struct cbt_host_row *r = &h[k];
        r->host = k < a->nhosts ? a->hosts[k] : "?";
        r->procs++;
        r->ranked += cbt_hosts_has_rank(e);
        r->row.batches += e->row.batches;
        r->row.ops += e->row.ops;
        r->row.bytes += e->row.bytes;
    }
    qsort(p, n, sizeof(*p), cmp_prow);
    size_t m = 0;
    for (size_t k = 0; k <= a->nhosts; k++)
        if (h[k].procs)
            h[m++] = h[k];
    qsort(h, m, sizeof(*h), cmp_hrow);
    hs->procs = p;
    hs->nprocs = n;
    hs->hosts = h;
    hs->nhosts = m;
    return 0;
}

void cbt_hosts_free(struct cbt_hosts *h)
{
    free(h->procs);
    free(h->hosts);
    *h = (struct cbt_hosts){0};
}

uint32_t cbt_hosts_image_number(const struct cbt_agg *a, uint32_t host, uint64_t pkey)
{
    const struct kent *e = cbt_pkey_image(pkey) ? cbt_agg_proc(a, host, pkey) : NULL;
    return e ? e->img_no : 0;
}
