/* SPDX-License-Identifier: MIT */
/* The fuzz targets' reader of their input: bytes taken in order, 0 past the end. */
#ifndef CBT_FUZZREAD_H
#define CBT_FUZZREAD_H

#include <stddef.h>
#include <stdint.h>

struct rd {
    const uint8_t *d;
    size_t n, i;
};
static inline uint8_t byte(struct rd *r) { return r->i < r->n ? r->d[r->i++] : 0; }
static inline uint64_t u64(struct rd *r)
{
    uint64_t x = 0;
    for (int k = 0; k < 8; k++)
        x = x << 8 | byte(r);
    return x;
}

#endif
