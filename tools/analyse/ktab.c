/* SPDX-License-Identifier: MIT */
/*
 * Three-word keys: the index of keys to numbers (struct kmap) and on it the
 * aggregate's bounded hash tables (struct ktab of ktab.h): processes,
 * threads, streams, call sites, GPU streams.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "analyse/ktab.h"
#include "base/util.h"

uint64_t cbt_mix3(const uint64_t k[3])
{
    uint64_t h = k[0] * 0x9E3779B97F4A7C15ull ^ (k[1] + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= (k[2] + 0x165667B19E3779F9ull) * 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* ---------------------------------------------------------------- the index */

/* The slot of the key in s (cap slots): its own, or the empty one it would take. */
static struct kslot *kmap_probe(struct kslot *s, size_t cap, const uint64_t k[3])
{
    size_t j = cbt_mix3(k) & (cap - 1);
    while (s[j].v && (s[j].k[0] != k[0] || s[j].k[1] != k[1] || s[j].k[2] != k[2]))
        j = (j + 1) & (cap - 1);
    return &s[j];
}

uint32_t cbt_kmap_get(const struct kmap *m, uint64_t k0, uint64_t k1, uint64_t k2)
{
    uint64_t k[3] = {k0, k1, k2};
    return m->cap ? kmap_probe(m->s, m->cap, k)->v : 0;
}

int cbt_kmap_add(struct kmap *m, uint64_t k0, uint64_t k1, uint64_t k2, uint32_t number)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        struct kslot *s = calloc(cap, sizeof(*s));
        if (!s)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->s[i].v)
                *kmap_probe(s, cap, m->s[i].k) = m->s[i];
        free(m->s);
        m->s = s;
        m->cap = cap;
    }
    uint64_t k[3] = {k0, k1, k2};
    *kmap_probe(m->s, m->cap, k) = (struct kslot){{k0, k1, k2}, number + 1};
    m->n++;
    return 0;
}

void cbt_kmap_free(struct kmap *m)
{
    free(m->s);
    *m = (struct kmap){0};
}

/* ---------------------------------------------------------------- the tables */

void cbt_ktab_init(struct ktab *t, size_t limit) { memset(t, 0, sizeof(*t)); t->limit = limit; }

void cbt_ktab_free(struct ktab *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->ents[i].label);
        free(t->ents[i].over_time);
    }
    free(t->other.over_time);
    free(t->ents);
    cbt_kmap_free(&t->index);
}

const struct kent *cbt_ktab_find(const struct ktab *t, uint64_t k0, uint64_t k1, uint64_t k2)
{
    uint32_t v = cbt_kmap_get(&t->index, k0, k1, k2);
    return v ? &t->ents[v - 1] : NULL;
}

struct kent *cbt_ktab_get_hashed(struct ktab *t, uint64_t k0, uint64_t k1, uint64_t k2, bool *created)
{
    *created = false;
    uint32_t v = cbt_kmap_get(&t->index, k0, k1, k2);
    if (v) {
        t->last = v;
        return &t->ents[v - 1];
    }
    if (t->n >= t->limit)
        goto other;
    if (!cbt_grow((void **)&t->ents, &t->cap_ents, t->n + 1, sizeof(*t->ents)))
        goto other;
    if (cbt_kmap_add(&t->index, k0, k1, k2, (uint32_t)t->n) != 0)
        goto other;
    struct kent *e = &t->ents[t->n];
    memset(e, 0, sizeof(*e));
    e->k[0] = k0;
    e->k[1] = k1;
    e->k[2] = k2;
    t->last = ++t->n;
    *created = true;
    return e;
other:
    t->overflowed++;
    return &t->other;
}
