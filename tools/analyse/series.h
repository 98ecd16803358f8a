/* SPDX-License-Identifier: MIT */
/*
 * What the report's plots draw, picked from the summary JSON (series.c):
 * the rows with a number, the directions of the bandwidth lines, the
 * busiest streams over time.  render/plots.c draws them.
 */
#ifndef CBT_SERIES_H
#define CBT_SERIES_H

#include <stddef.h>

#include <jansson.h>

/* How many rows (objects) of `rows` have a number at key. */
size_t cbt_series_plottable(const json_t *rows, const char *key);
/* The "direction" of the rows with a "gbps", in order of first appearance,
 * at most max of them into dirs (strings of rows); how many. */
size_t cbt_series_directions(const json_t *rows, const char **dirs, size_t max);
/* The indexes of the busiest of gpu.over_time's streams (the largest sum
 * of "gpu_ns"; ties: in the summary's order), at most max, busiest first,
 * into pick, *n how many; -1 out of memory. */
int cbt_series_busiest(const json_t *streams, size_t *pick, size_t max, size_t *n);

#endif
