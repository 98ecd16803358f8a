/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the small helpers every part uses.  Nothing here
 * calls into another file of the tool.
 */
#ifndef CBT_UTIL_H
#define CBT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CBT_PROG "cubatchtrace"

/* The time-window options every reading command takes (babeltrace2's trimmer). */
#define CBT_USAGE_WINDOW                                                                 \
    "  --begin TIME      only events at or after TIME, --end TIME at or before it:\n"   \
    "  --end TIME        +SECONDS[.NS] after the trace's start (its earliest stream),\n" \
    "                    or an absolute time as babeltrace2 --begin/--end take it\n"    \
    "                    (flt.utils.trimmer): [YYYY-MM-DD ][HH:MM[:SS[.NNNNNNNNN]]]\n"  \
    "                    or [-]SECONDS[.NS] since the clock's origin (the epoch for\n" \
    "                    LTTng); a batch cut by the window is incomplete\n"

/* One line on stderr, "cubatchtrace COMMAND: ..." (the command set with
 * cbt_set_command, if any): newlines in the text become spaces. */
void cbt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error: that line, then "Try 'cubatchtrace COMMAND --help' for more information." */
void cbt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cbt_set_command(const char *cmd);
const char *cbt_command(void); /* NULL before a command is known */

/* Runs argv[0] (a path) with argv, stdin from /dev/null, stdout and stderr
 * appended to the file `log` (after a "$ ARGV..." line; NULL: inherited),
 * SIGINT and SIGTERM at their defaults; returns its exit status (128+N when
 * killed by signal N), -1 when it could not be run, or, with limit_s above
 * 0, CBT_SPAWN_TIMED_OUT when it had not ended after limit_s seconds (then
 * it is killed and reaped). */
#define CBT_SPAWN_TIMED_OUT (-2)
int cbt_spawn_logged(const char *log, char *const argv[], unsigned limit_s);

/* CLOCK_MONOTONIC in ns. */
uint64_t cbt_now_ns(void);
/* The CPUs this process may run on (its affinity mask), at least 1. */
int cbt_usable_cpus(void);

/* ---- usage errors ---- */
struct option;
/* A usage error for getopt_long's '?' or ':' (c) with opterr = 0 and optstring
 * "+:...": the unknown option and the closest known one, or the option that
 * lacks its value; returns 2. */
int cbt_option_error(const char *cmd, int c, char **argv, const struct option *opts);
/* The candidate closest to `word` when it is close enough to be a slip, else NULL. */
const char *cbt_closest(const char *word, const char *const *cands, size_t n);
/* --pid PID: appends to *pids; -1 after a usage error. */
int cbt_parse_pid(const char *s, int64_t **pids, int *npids);
/* A size: bytes, or with a suffix k, M, G, T (powers of 1024; "Ki", "KiB",
 * "KB" alike); -1 when it is not one. */
int cbt_parse_size(const char *s, uint64_t *out);

/* ---- human units (the text tables; --raw prints exact integers instead) ---- */
/* Bytes in B below 1024, else KiB, MiB, GiB, TiB, PiB, EiB (powers of 1024)
 * with 3 significant digits: "512 B", "1.50 KiB", "16.0 EiB"; returns buf. */
const char *cbt_fmt_bytes(uint64_t bytes, char *buf, size_t len);
/* Nanoseconds as ns, us (the micro sign), ms or s (3 significant digits, whole seconds from
 * 1000 s): "0 ns", "12.3 us", "1.00 s"; returns buf. */
const char *cbt_fmt_ns(double ns, char *buf, size_t len);
/* GB/s (1e9 bytes per second, i.e. bytes per ns), 3 significant digits:
 * "412 GB/s", "0.0123 GB/s"; returns buf. */
const char *cbt_fmt_gbps(double gbps, char *buf, size_t len);

/* The columns s takes on a terminal (its UTF-8 characters: the micro sign is one). */
size_t cbt_text_width(const char *s);
/* s in a column of `width` (cbt_text_width) columns: right-aligned, or left when `left`. */
void cbt_print_cell(FILE *out, const char *s, size_t width, bool left);

/* Room for `want` elements of sz bytes in *p (capacity *cap, in elements),
 * doubling from 16; false (nothing changed) when out of memory or beyond
 * any size memory can hold. */
bool cbt_grow_to(void **p, uint64_t *cap, uint64_t want, size_t sz);
static inline bool cbt_grow(void **p, uint64_t *cap, uint64_t want, size_t sz)
{
    return (want <= *cap && *p) || cbt_grow_to(p, cap, want, sz); /* mostly large enough already */
}

/* A finding's value or limit as printed: hexadecimal ("0x...") for the rules
 * whose values are addresses, handles or flags, else decimal; returns buf. */
const char *cbt_rule_value(unsigned rule, uint64_t v, char *buf, size_t len);

/* Whether an input names a live session (net://, net4://) rather than files. */
static inline bool cbt_is_url(const char *s) { return strncmp(s, "net://", 6) == 0 || strncmp(s, "net4://", 7) == 0; }

/* The last non-empty line of the log at `path` that is not a command line
 * (`$ ...`): what a failed lttng command said; "" when there is none. */
void cbt_log_last_line(const char *path, char *buf, size_t len);

/* ---- progress, threads ---- */
/* A long step of our own tells whoever watches (guard.c) that the work
 * moves; nothing happens when nobody listens. */
void cbt_progress(void);
void cbt_progress_listen(void (*fn)(void));

/* A thread of the reader's own calls cbt_thread_enter first and
 * cbt_thread_leave last, for whoever listens (guard.c: its signal stack). */
void cbt_thread_enter(void);
void cbt_thread_leave(void);
void cbt_thread_listen(void (*enter)(void), void (*leave)(void));

#endif
