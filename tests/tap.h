/* SPDX-License-Identifier: MIT */
/* Minimal TAP producer for the C tests (read by build-aux/tap-driver.sh). */
#ifndef CBT_TESTS_TAP_H
#define CBT_TESTS_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n_, tap_failed_;

static inline void tap_plan(int n) { printf("1..%d\n", n); fflush(stdout); }

static inline void tap_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    fflush(stdout);
    exit(0);
}

__attribute__((format(printf, 2, 3))) static inline int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    printf("%sok %d - ", cond ? "" : "not ", ++tap_n_);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!cond)
        tap_failed_++;
    return cond;
}

/* n tests that cannot run here, each reported as skipped. */
static inline void tap_skip(int n, const char *why)
{
    for (int i = 0; i < n; i++)
        printf("ok %d # SKIP %s\n", ++tap_n_, why);
    fflush(stdout);
}

__attribute__((format(printf, 1, 2))) static inline void tap_diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

#define tap_is_u64(got, want, ...)                                                                 \
    do {                                                                                           \
        uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                                      \
        if (!tap_ok(g_ == w_, __VA_ARGS__))                                                        \
            tap_diag("  got %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")", g_, g_, w_, w_); \
    } while (0)

/* Print a trailing plan when the count was not known up front; returns the exit status. */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_n_);
    fflush(stdout);
    return tap_failed_ ? 1 : 0;
}

#endif
