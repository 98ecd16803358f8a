/* SPDX-License-Identifier: MIT */
/*
 * The small helpers every part of the tool uses: error lines, the clock,
 * usage errors, option values, progress.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cubatchtrace/catalog.h>

#include "base/util.h"

static const char *command; /* the command running, for the prefix of error lines */

void cbt_set_command(const char *cmd) { command = cmd; }

const char *cbt_command(void) { return command; }

static void verr(const char *fmt, va_list ap)
{
    char buf[2048];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    for (char *p = buf; *p; p++) /* one line, always */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    const char *msg = buf;
    size_t cl = command ? strlen(command) : 0;
    if (cl && strncmp(msg, command, cl) == 0 && msg[cl] == ':' && msg[cl + 1] == ' ')
        msg += cl + 2; /* "run: ..." from a caller that names its command itself */
    fprintf(stderr, "%s%s%s: %s\n", CBT_PROG, command ? " " : "", command ? command : "", msg);
}

void cbt_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verr(fmt, ap);
    va_end(ap);
}

void cbt_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verr(fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try '%s%s%s --help' for more information.\n", CBT_PROG, command ? " " : "",
            command ? command : "");
}

uint64_t cbt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int cbt_usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---------------------------------------------------------------- usage errors */

/* Edit distance (adjacent transpositions count one), capped at 9. */
static unsigned distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 32 || lb > 32)
        return 9;
    unsigned d[33][33];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb] > 9 ? 9 : d[la][lb];
}

/* The candidate closest to `word` when it is close enough to be a slip, else NULL. */
const char *cbt_closest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    unsigned bestd = 9;
    size_t lw = strlen(word);
    for (size_t i = 0; i < n; i++) {
        unsigned d = distance(word, cands[i]);
        if (lw >= 2 && strncmp(cands[i], word, lw) == 0)
            d = 1; /* a prefix */
        if (d < bestd) {
            bestd = d;
            best = cands[i];
        }
    }
    unsigned allowed = lw <= 4 ? 1 : lw <= 8 ? 2 : 3;
    return bestd <= allowed ? best : NULL;
}

int cbt_option_error(const char *cmd, int c, char **argv, const struct option *opts)
{
    (void)cmd; /* the command set with cbt_set_command */
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (strncmp(arg, "--", 2) != 0) {
        if (c == ':')
            cbt_usage_error("option '-%c' needs a value", optopt);
        else
            cbt_usage_error("unknown option '-%c'", optopt);
        return 2;
    }
    char name[64];
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
    if (c == ':') {
        cbt_usage_error("option '--%s' needs a value", name);
        return 2;
    }
    const char *names[32];
    size_t n = 0;
    for (const struct option *p = opts; p->name && n < 32; p++) {
        if (strcmp(p->name, name) == 0 && p->has_arg == no_argument) {
            cbt_usage_error("option '--%s' takes no value", name);
            return 2;
        }
        names[n++] = p->name;
    }
    const char *near = cbt_closest(name, names, n);
    if (near)
        cbt_usage_error("unknown option '--%s'; did you mean '--%s'?", name, near);
    else
        cbt_usage_error("unknown option '--%s'", name);
    return 2;
}

/* ---------------------------------------------------------------- option values */

int cbt_parse_pid(const char *s, int64_t **pids, int *npids)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < 0) {
        cbt_usage_error("--pid %s: not a process id", s);
        return -1;
    }
    int64_t *n = realloc(*pids, sizeof(*n) * (size_t)(*npids + 1));
    if (!n) {
        cbt_err("out of memory");
        return -1;
    }
    *pids = n;
    n[(*npids)++] = v;
    return 0;
}

int cbt_parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0)) /* NaN too */
        return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (mul > 1 && *end == 'i')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end || v * mul >= 18e18)
        return -1;
    *out = (uint64_t)(v * mul);
    return 0;
}

/* ---------------------------------------------------------------- human units */

/* x (>= 0) in units[0] with 3 significant digits, moving up a unit (of
 * `step` each, as long as there is one) when x or what it rounds to reaches
 * `step`: 1023.99 KiB prints as "1.00 MiB", 9.999 as "10.0". */
static const char *sig3(double x, const char *const *units, unsigned nunits, double step, char *buf, size_t len)
{
    unsigned u = 0;
    while (u + 1 < nunits && x >= step) {
        x /= step;
        u++;
    }
    char num[48];
    for (int prec = x < 10 ? 2 : x < 100 ? 1 : 0;;) {
        snprintf(num, sizeof(num), "%.*f", prec, x);
        double r = strtod(num, NULL);
        if (prec > 0 && r >= (prec == 2 ? 10 : 100)) {
            prec--; /* 9.996 rounds to 10.00: three digits are "10.0" */
            continue;
        }
        if (u + 1 < nunits && r >= step) {
            x /= step;
            u++;
            prec = 2;
            continue;
        }
        break;
    }
    snprintf(buf, len, "%s %s", num, units[u]);
    return buf;
}

const char *cbt_fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return buf;
    }
    return sig3((double)bytes / 1024.0, units, 6, 1024.0, buf, len);
}

const char *cbt_fmt_ns(double ns, char *buf, size_t len)
{
    static const char *const units[] = {"ns", "\xc2\xb5s" /* UTF-8 */, "ms", "s"};
    if (!(ns > 0)) {
        snprintf(buf, len, "0 ns");
        return buf;
    }
    if (ns >= 999.5e9 || (ns < 999.5 && ns == (double)(uint64_t)ns)) { /* whole seconds; whole ns */
        snprintf(buf, len, ns < 999.5 ? "%.0f ns" : "%.0f s", ns < 999.5 ? ns : ns / 1e9);
        return buf;
    }
    return sig3(ns, units, 4, 1000.0, buf, len);
}

const char *cbt_fmt_gbps(double gbps, char *buf, size_t len)
{
    static const char *const units[] = {"GB/s"};
    if (!(gbps > 0)) {
        snprintf(buf, len, "0 GB/s");
        return buf;
    }
    char e[32];
    snprintf(e, sizeof(e), "%.2e", gbps); /* the exponent of gbps rounded to 3 digits */
    int exp10 = atoi(strchr(e, 'e') + 1);
    if (exp10 >= 0)
        return sig3(gbps, units, 1, 1e300, buf, len);
    snprintf(buf, len, "%.*f GB/s", 2 - exp10, gbps);
    return buf;
}

size_t cbt_text_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80; /* not a continuation byte */
    return n;
}

void cbt_print_cell(FILE *out, const char *s, size_t width, bool left)
{
    size_t w = cbt_text_width(s);
    if (left)
        fputs(s, out);
    for (; w < width; w++)
        fputc(' ', out);
    if (!left)
        fputs(s, out);
}

/* ---------------------------------------------------------------- finding values */

const char *cbt_rule_value(unsigned rule, uint64_t v, char *buf, size_t len)
{
    bool hex = false;
    switch (rule) {
    case CBT_RULE_flags_nonzero:
    case CBT_RULE_stream_legacy:
    case CBT_RULE_op_flags_invalid:
    case CBT_RULE_pointer_unmapped:
    case CBT_RULE_device_out_of_bounds: /* an address and its allocation's base, or an offset and a size */
    case CBT_RULE_overlap_dst_dst:
    case CBT_RULE_overlap_src_dst:
    case CBT_RULE_overlap_self:
        hex = true;
        break;
    default:
        break;
    }
    snprintf(buf, len, hex ? "0x%" PRIx64 : "%" PRIu64, v);
    return buf;
}

/* ---------------------------------------------------------------- progress */

static void (*progress_listener)(void);

void cbt_progress_listen(void (*fn)(void)) { progress_listener = fn; }

void cbt_progress(void)
{
    if (progress_listener)
        progress_listener();
}

static void (*thread_enter_listener)(void), (*thread_leave_listener)(void);

void cbt_thread_listen(void (*enter)(void), void (*leave)(void))
{
    thread_enter_listener = enter;
    thread_leave_listener = leave;
}

void cbt_thread_enter(void)
{
    if (thread_enter_listener)
        thread_enter_listener();
}

void cbt_thread_leave(void)
{
    if (thread_leave_listener)
        thread_leave_listener();
}

void cbt_log_last_line(const char *path, char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\n' || line[l - 1] == ' '))
            line[--l] = 0;
        if (l && line[0] != '$')
            snprintf(buf, len, "%s", line);
    }
    fclose(f);
}

/* ---------------------------------------------------------------- buffers */

bool cbt_grow_to(void **p, uint64_t *cap, uint64_t want, size_t sz)
{
    if (want <= *cap && *p)
        return true;
    uint64_t c = *cap ? *cap : 16;
    while (c < want) {
        if (c > UINT64_MAX / 2)
            return false;
        c *= 2;
    }
    if (c > SIZE_MAX / sz)
        return false;
    void *q = realloc(*p, (size_t)(c * sz));
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

int cbt_spawn_logged(const char *log, char *const argv[], unsigned limit_s)
{
    int logfd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
    if (logfd >= 0) {
        dprintf(logfd, "$");
        for (int i = 0; argv[i]; i++)
            dprintf(logfd, " %s", argv[i]);
        dprintf(logfd, "\n");
    }
    pid_t p = fork();
    if (p == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        if (logfd >= 0) {
            dup2(logfd, 1);
            dup2(logfd, 2);
        }
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv(argv[0], argv);
        _exit(127);
    }
    if (logfd >= 0)
        close(logfd);
    if (p < 0)
        return -1;
    int st;
    const uint64_t deadline = cbt_now_ns() + (uint64_t)limit_s * 1000000000u;
    const struct timespec nap = {0, 20 * 1000 * 1000};
    for (;;) {
        pid_t w = waitpid(p, &st, limit_s ? WNOHANG : 0);
        if (w == p)
            break;
        if (w < 0 && errno != EINTR)
            return -1;
        if (w == 0) { /* still running */
            if (cbt_now_ns() >= deadline) {
                kill(p, SIGKILL);
                while (waitpid(p, &st, 0) < 0 && errno == EINTR)
                    ;
                return CBT_SPAWN_TIMED_OUT;
            }
            nanosleep(&nap, NULL);
        }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
