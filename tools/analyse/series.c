/* SPDX-License-Identifier: MIT */
/*
 * What the report's plots draw, picked from the summary JSON (series.h).
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/series.h"

size_t cbt_series_plottable(const json_t *rows, const char *key)
{
    size_t i, n = 0;
    json_t *r;
    json_array_foreach(rows, i, r) n += json_is_number(json_object_get(r, key));
    return n;
}

size_t cbt_series_directions(const json_t *rows, const char **dirs, size_t max)
{
    size_t nd = 0, i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const char *d = json_string_value(json_object_get(r, "direction"));
        d = d ? d : "";
        size_t k = 0;
        while (k < nd && strcmp(dirs[k], d) != 0)
            k++;
        if (k == nd && nd < max && json_is_number(json_object_get(r, "gbps")))
            dirs[nd++] = d;
    }
    return nd;
}

/* The sum of a stream's "gpu_ns" buckets. */
static json_int_t stream_sum(const json_t *stream)
{
    const json_t *g = json_object_get(stream, "gpu_ns");
    json_int_t sum = 0;
    for (size_t b = 0; b < json_array_size(g); b++)
        sum += json_integer_value(json_array_get(g, b));
    return sum;
}

int cbt_series_busiest(const json_t *streams, size_t *pick, size_t max, size_t *n)
{
    size_t ns = json_array_size(streams), np = 0;
    bool *used = calloc(ns + 1, sizeof(*used));
    if (!used)
        return -1;
    while (np < max && np < ns) {
        size_t best = ns;
        json_int_t best_sum = -1;
        for (size_t s = 0; s < ns; s++) {
            json_int_t sum = used[s] ? -1 : stream_sum(json_array_get(streams, s));
            if (!used[s] && sum > best_sum) {
                best = s;
                best_sum = sum;
            }
        }
        used[best] = true;
        pick[np++] = best;
    }
    free(used);
    *n = np;
    return 0;
}
