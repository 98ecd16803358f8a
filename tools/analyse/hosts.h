/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the job view of a summary (hosts.c): one row per
 * host and one per process image with its rank, sorted; render/hosts.c
 * prints them as text and JSON.
 */
#ifndef CBT_HOSTS_H
#define CBT_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyse/agg.h"
#include "analyse/ktab.h"

/* A process image with batches, and the host it ran on. */
struct cbt_proc_row {
    const struct kent *e;
    const char *host;
};

/* A host: its active processes, how many of them recorded a rank, their batches. */
struct cbt_host_row {
    const char *host;
    struct row row;
    uint64_t procs, ranked;
};

/* The rows, sorted: hosts by name, processes by host name, rank, pid and
 * image number, so the order does not depend on the order of reading. */
struct cbt_hosts {
    struct cbt_proc_row *procs;
    size_t nprocs;
    struct cbt_host_row *hosts;
    size_t nhosts;
    bool several_images; /* some (host, pid) had several process images */
    uint64_t overflowed; /* processes the process table had no room for */
};

/* Whether the text summary shows these tables: more than one host, a rank
 * recorded, or --by host. */
bool cbt_hosts_shown(const struct cbt_agg *a);
/* The rows of a finished aggregate (-1 out of memory); freeing them. */
int cbt_hosts_build(const struct cbt_agg *a, struct cbt_hosts *h);
void cbt_hosts_free(struct cbt_hosts *h);
/* Whether the shim recorded e's rank, and the variable it came from. */
bool cbt_hosts_has_rank(const struct kent *e);
const char *cbt_hosts_rank_var(const struct kent *e);
/* A process image's number among the images of its (host, pid): from 1 in
 * the order they started; 0 when untagged or unknown. */
uint32_t cbt_hosts_image_number(const struct cbt_agg *a, uint32_t host, uint64_t pkey);

#endif
