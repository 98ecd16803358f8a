/* SPDX-License-Identifier: MIT */
/*
 * What every file of the preload library shares: symbol visibility, the
 * thread-local storage model, branch hints, and the one-line warning.
 */
#ifndef CBT_SRC_UTIL_H
#define CBT_SRC_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define CBT_EXPORT __attribute__((visibility("default")))
#define CBT_TLS __attribute__((tls_model("initial-exec"))) __thread
#define cbt_likely(x) __builtin_expect(!!(x), 1)
/*
 * What every batch reads, kept together: CBT_HOT on a global puts it in the
 * section cbt_hot, which the linker makes one block of all the files'
 * (an orphan section, not merged into .data or .bss), so the steady path's
 * globals share a cache line or two instead of one each (the driver's work
 * evicts them between batches); CBT_HOT_FN on a function of that path puts
 * it in .text.hot, beside the others, at the start of a 64-byte line (the
 * driver's work evicts the path's code too, which is fetched again line by
 * line: a function that spills a few bytes into one more line costs one
 * more fetch); CBT_COLD_FN keeps the rest out.
 */
#define CBT_HOT __attribute__((section("cbt_hot")))
#define CBT_HOT_FN __attribute__((hot, aligned(64)))
/* A function off that path (a first time, a rare case): never inlined
 * into it, so that the path's code stays a few cache lines in a row. */
#define CBT_COLD_FN __attribute__((noinline, cold))
#define cbt_unlikely(x) __builtin_expect(!!(x), 0)

/* Print one line on stderr, prefixed "cubatchtrace: ", at most once per `once` flag. */
void cbt_warn_once(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* How many places from its hash on a stream handle may take (batch.c's
 * slots, record.c's stream indices): a thread's few streams keep a place
 * each even where their hashes meet (as the driver's handles do often). */
#define CBT_STREAM_PROBES 4
/* The slot of stream handle s among n (a power of two, at most 64): its
 * bits mixed (Fibonacci hashing), since the driver's handles lie at strides
 * whose low bits repeat. */
static inline unsigned cbt_stream_hash(const void *s, unsigned n)
{
    return (unsigned)(((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull) >> 58) & (n - 1);
}

/* Room for `want` elements of `elem` bytes in *p (capacity *cap, doubling
 * from 64); false when out of memory or beyond any size memory can hold (a
 * corrupt count must not loop or overflow). */
static inline bool cbt_grow(void **p, size_t *cap, size_t want, size_t elem)
{
    if (want <= *cap)
        return true;
    if (want > SIZE_MAX / 4 / elem)
        return false;
    size_t n = *cap ? *cap : 64;
    while (n < want)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

/* The page size, asked once: relaxed atomics, since threads of a first
 * batch may each ask (and store the same value) while others read it. */
static inline uint64_t cbt_page_size(void)
{
    static uint64_t page;
    uint64_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);
    if (__builtin_expect(!p, 0)) {
        p = (uint64_t)sysconf(_SC_PAGESIZE);
        __atomic_store_n(&page, p, __ATOMIC_RELAXED);
    }
    return p;
}

#endif
