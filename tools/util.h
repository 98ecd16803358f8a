/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the small helpers every part uses.  Nothing here
 * calls into another file of the tool.
 */
#ifndef CBT_UTIL_H
#define CBT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define CBT_PROG "cubatchtrace"

/* One line on stderr, "cubatchtrace: ...": newlines in the text become spaces. */
void cbt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in ns. */
uint64_t cbt_now_ns(void);

/* ---- usage errors ---- */
struct option;
/* One line for getopt_long's '?' or ':' (c) with opterr = 0 and optstring
 * "+:...": the unknown option and the closest known one, or the option that
 * lacks its value; returns 2. */
int cbt_option_error(const char *cmd, int c, char **argv, const struct option *opts);
/* The candidate closest to `word` when it is close enough to be a slip, else NULL. */
const char *cbt_closest(const char *word, const char *const *cands, size_t n);
/* --pid PID: appends to *pids; -1 after one line on stderr. */
int cbt_parse_pid(const char *s, int64_t **pids, int *npids);
/* A size: bytes, or with a suffix k, M, G, T (powers of 1024; "Ki", "KiB",
 * "KB" alike); -1 when it is not one. */
int cbt_parse_size(const char *s, uint64_t *out);

/* ---- progress ---- */
/* A long step of our own tells whoever watches (guard.c, in its child) that
 * the work moves; nothing happens when nobody listens. */
void cbt_progress(void);
void cbt_progress_listen(void (*fn)(void));

#endif
