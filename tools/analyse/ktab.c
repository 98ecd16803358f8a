/* SPDX-License-Identifier: MIT */
/*
 * The aggregate's bounded hash tables keyed by three words (struct ktab of
 * agg_internal.h): processes, threads, streams, call sites, GPU streams.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/ktab.h"

uint64_t cbt_mix3(const uint64_t k[3])
{
    uint64_t h = k[0] * 0x9E3779B97F4A7C15ull ^ (k[1] + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= (k[2] + 0x165667B19E3779F9ull) * 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

void cbt_ktab_init(struct ktab *t, size_t limit) { memset(t, 0, sizeof(*t)); t->limit = limit; }

void cbt_ktab_free(struct ktab *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->ents[i].label);
        free(t->ents[i].over_time);
    }
    free(t->other.over_time);
    free(t->ents);
    free(t->slots);
}

static int ktab_rehash(struct ktab *t, size_t nslots)
{
    uint32_t *s = calloc(nslots, sizeof(*s));
    if (!s)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = cbt_mix3(t->ents[i].k) & (nslots - 1);
        while (s[j])
            j = (j + 1) & (nslots - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = s;
    t->nslots = nslots;
    return 0;
}

struct kent *cbt_ktab_get_hashed(struct ktab *t, uint64_t k0, uint64_t k1, uint64_t k2, bool *created)
{
    uint64_t k[3] = {k0, k1, k2};
    *created = false;
    if (t->nslots) {
        size_t j = cbt_mix3(k) & (t->nslots - 1);
        while (t->slots[j]) {
            struct kent *e = &t->ents[t->slots[j] - 1];
            if (e->k[0] == k0 && e->k[1] == k1 && e->k[2] == k2) {
                t->last = t->slots[j];
                return e;
            }
            j = (j + 1) & (t->nslots - 1);
        }
    }
    if (t->n >= t->limit)
        goto other;
    if ((t->n + 1) * 2 > t->nslots && ktab_rehash(t, t->nslots ? t->nslots * 2 : 64) != 0)
        goto other;
    if (t->n == t->cap_ents) {
        size_t c = t->cap_ents ? t->cap_ents * 2 : 32;
        struct kent *e = realloc(t->ents, c * sizeof(*e));
        if (!e)
            goto other;
        t->ents = e;
        t->cap_ents = c;
    }
    struct kent *e = &t->ents[t->n];
    memset(e, 0, sizeof(*e));
    memcpy(e->k, k, sizeof(k));
    size_t j = cbt_mix3(k) & (t->nslots - 1);
    while (t->slots[j])
        j = (j + 1) & (t->nslots - 1);
    t->slots[j] = (uint32_t)(++t->n);
    t->last = t->n;
    *created = true;
    return e;
other:
    t->overflowed++;
    return &t->other;
}

