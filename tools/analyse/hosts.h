/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the job view of a summary, per host and per
 * process with its rank (hosts.c), printed by text.c and json.c.
 */
#ifndef CBT_HOSTS_H
#define CBT_HOSTS_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "analyse/agg.h"

/* Whether the text summary shows these tables: more than one host, a rank
 * recorded, or --by host. */
bool cbt_hosts_shown(const struct cbt_agg *a);
/* raw: bytes and times as exact figures (--raw), else in human units. */
void cbt_hosts_print_text(const struct cbt_agg *a, FILE *out, bool raw);
/* Adds "by_host" and "by_process_rank" to root. */
void cbt_hosts_json(const struct cbt_agg *a, json_t *root);
/* A process image's number among the images of its (host, pid) (JSON
 * "image"): from 1 in the order they started; null when untagged. */
json_t *cbt_hosts_image_json(const struct cbt_agg *a, uint32_t host, uint64_t pkey);

#endif
