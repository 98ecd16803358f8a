/* SPDX-License-Identifier: MIT */
/*
 * The job view printed (hosts.c): text tables and JSON members of the rows
 * of analyse/hosts.c.
 */
#ifndef CBT_RENDER_HOSTS_H
#define CBT_RENDER_HOSTS_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "analyse/agg.h"
#include "analyse/hosts.h"

/* raw: bytes and times as exact figures (--raw), else in human units. */
void cbt_hosts_print_text(const struct cbt_agg *a, FILE *out, bool raw);
/* Adds "by_host" and "by_process_rank" to root. */
void cbt_hosts_json(const struct cbt_agg *a, json_t *root);
/* A process image's number among the images of its (host, pid) (JSON
 * "image"): from 1 in the order they started; null when untagged. */
json_t *cbt_hosts_image_json(const struct cbt_agg *a, uint32_t host, uint64_t pkey);

#endif
