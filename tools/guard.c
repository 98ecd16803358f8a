/* SPDX-License-Identifier: MIT */
/*
 * Reading behind a guard.  libbabeltrace2 crashes, allocates without bound or
 * loops forever on some damaged traces, so the step of a command that decodes
 * (read, aggregate, print) runs guarded, in this process:
 *
 *   - with a memory limit (RLIMIT_DATA, lowered for the step: heap and
 *     anonymous memory; the stream files babeltrace2 maps read-only do not
 *     count, so a large trace of many streams is not refused for its size);
 *   - with handlers of the fatal signals (SIGSEGV, SIGABRT, ...), on a stack
 *     of their own in each thread that reads (a stack overflow too);
 *   - watched by a thread of ours: the step counts the decoder calls that
 *     came back (below), and the watchdog ends the process when that count
 *     has not moved for the time-out, which also bounds how long a live peer
 *     may take to answer;
 *   - with its standard output in a scratch file that reaches ours only when
 *     the command succeeded (status other than 2), and its standard error in
 *     another, of which only our own `cubatchtrace:` lines are passed on.
 *
 * When the decoder crashes, goes over its limit or stalls, one line names the
 * trace (and the stream file, when known) and the process ends at once, with
 * status 2 or the one the command set (cbt_guard_on_failure), after removing
 * the file the command named.  What that line needs is made ready before the
 * step; the handler and the watchdog then only copy bytes, write and end
 * (async-signal-safe: the decoder may have died holding any lock).
 *
 * Not a child process: forking the reader, with its libraries mapped and
 * relocated, and tearing the copy down again cost more than reading a trace
 * of a few thousand batches (bench/summary.sh).
 *
 * Progress and "which trace": the guard wraps the three libbabeltrace2 calls
 * every reader goes through (adding a source component, creating a message
 * iterator, taking the next messages) and finds the library's own functions
 * with dlsym(RTLD_NEXT).  So the guard knows nothing of the event format or
 * of how the reader is written.  Outside a guarded step the wrappers only
 * forward.  Several threads read at once (parallel.c): what the wrappers
 * remember (struct wrapped) is behind one lock, taken around the tables
 * only, never across a call into libbabeltrace2 (a filter's iterator calls
 * bt_message_iterator_next from inside ours).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

#include "guard.h"
#include "base/util.h"

#define GUARD_DEFAULT_MEMORY (8ull << 30)
#define GUARD_DEFAULT_TIMEOUT_S 30.0
#define ALTSTACK_BYTES (64 * 1024)

enum { IDLE, RUNNING, DONE, FAILING };

/* The guarded step, as its handlers and its watchdog see it. */
static struct guard {
    int state;              /* IDLE, RUNNING, DONE, FAILING: atomic */
    uint64_t progress;      /* decoder calls that came back */
    char trace[1024];       /* the trace directory or URL being read; "" unknown */
    char stream[1024];      /* the stream file being decoded; "" unknown */
    const char *const *inputs;
    int ninputs;
    int out, err;           /* the scratch files (our fds 1 and 2 during the step) */
    int user_out, user_err; /* our standard output and error, kept aside */
    bool debug;             /* CUBATCHTRACE_DEBUG: all of the step's stderr on failure */
    bool shown;             /* the watchdog's "reading ..." line is on the terminal */
    uint64_t limit;         /* the data limit; 0 none */
    double stall_s;         /* the time-out; 0 none */
    char prefix[64];        /* "cubatchtrace COMMAND: " */
    char limit_text[32];    /* the limit: "8 GiB" */
    char stall_text[32];    /* the time-out: "30" */
    int fail_status;        /* the exit status when the step fails */
    char remove[PATH_MAX];  /* a file to remove when it fails; "" none */
} g = {.fail_status = 2};

static long page_size;
static void moved(void);
static void wrapped_reset(void);

/* ---------------------------------------------------------------- limits */

/* CUBATCHTRACE_MAX_MEMORY: a size (4G, 512M, bytes) or 0 / off for none. */
static int memory_limit(uint64_t *limit)
{
    const char *s = getenv("CUBATCHTRACE_MAX_MEMORY");
    if (s && *s) {
        if (strcmp(s, "off") == 0 || strcmp(s, "none") == 0) {
            *limit = 0;
            return 0;
        }
        if (cbt_parse_size(s, limit) != 0) {
            cbt_err("CUBATCHTRACE_MAX_MEMORY=%s: expected a size such as 4G or 512M, or off", s);
            return -1;
        }
    }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    *limit = 0; /* a sanitizer's shadow memory counts as data: no limit in its builds (docs/sanitizers.md) */
    return 0;
#endif
    if (s && *s)
        return 0;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t half = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 2 : GUARD_DEFAULT_MEMORY;
    *limit = half < GUARD_DEFAULT_MEMORY ? half : GUARD_DEFAULT_MEMORY;
    return 0;
}

/* The limit the step gets: ours, or a lower one already set on us. */
static uint64_t effective_limit(uint64_t limit)
{
    struct rlimit cur;
    if (getrlimit(RLIMIT_DATA, &cur) == 0 && cur.rlim_cur != RLIM_INFINITY && (!limit || cur.rlim_cur < limit))
        return (uint64_t)cur.rlim_cur;
    return limit;
}

/* CUBATCHTRACE_TIMEOUT: seconds without progress, or 0 / off for none. */
static int stall_limit(double *seconds)
{
    const char *s = getenv("CUBATCHTRACE_TIMEOUT");
    *seconds = GUARD_DEFAULT_TIMEOUT_S;
    if (!s || !*s)
        return 0;
    if (strcmp(s, "off") == 0 || strcmp(s, "none") == 0) {
        *seconds = 0;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || v < 0 || v > 1e6) {
        cbt_err("CUBATCHTRACE_TIMEOUT=%s: expected seconds (such as 30 or 2.5), or off", s);
        return -1;
    }
    *seconds = v;
    return 0;
}

static void format_size(char *buf, size_t len, uint64_t v)
{
    if (v >= (1ull << 30))
        snprintf(buf, len, "%.3g GiB", (double)v / (double)(1ull << 30));
    else
        snprintf(buf, len, "%.3g MiB", (double)v / (double)(1ull << 20));
}

/* ---------------------------------------------------------------- the line, async-signal-safe */

/* A line built by appending, cut at its size. */
struct line {
    char buf[3072];
    size_t n;
};

static void add_n(struct line *l, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i] && l->n < sizeof(l->buf) - 2; i++)
        l->buf[l->n++] = s[i];
}

static void add(struct line *l, const char *s) { add_n(l, s, SIZE_MAX); }

static void add_uint(struct line *l, unsigned v)
{
    char d[16];
    int k = 0;
    do
        d[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < (int)sizeof(d));
    while (k)
        add_n(l, &d[--k], 1);
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* What this thread was reading, as publish() last named it (see there). */
static __thread char own_trace[sizeof(g.trace)], own_stream[sizeof(g.stream)];

/* What the step was reading: the trace (its directory, else that of its
 * stream file, else the inputs given); true when it is a live session.
 * own: the calling thread's names first (a fatal signal's thread). */
static void named_now(char *trace, char *stream);
static bool add_input(struct line *l, bool own)
{
    char trace_now[sizeof(g.trace)], stream_now[sizeof(g.stream)];
    const char *trace = g.trace, *stream = g.stream; /* a signal handler takes no lock: as they are */
    if (own && own_trace[0]) {
        trace = own_trace;
        stream = own_stream;
    } else if (!own) {
        named_now(trace_now, stream_now);
        trace = trace_now;
        stream = stream_now;
    }
    const char *what = trace[0] ? trace : NULL;
    size_t len = SIZE_MAX;
    const char *slash = strrchr(stream, '/');
    if (!what && stream[0] == '/' && slash) {
        what = stream;
        len = slash > stream ? (size_t)(slash - stream) : 1;
    }
    const char *more = "";
    if (!what && g.ninputs > 0) {
        what = g.inputs[0];
        more = g.ninputs > 1 ? " (or another input)" : "";
    }
    if (!what) {
        add(l, "the trace");
        return false;
    }
    bool live = cbt_is_url(what);
    add(l, live ? "live session " : "trace ");
    add_n(l, what, len);
    add(l, more);
    return live;
}

/* The data size from /proc/self/statm (its sixth field, pages). */
static uint64_t data_bytes(void)
{
    char buf[256];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = buf;
    for (int field = 0; field < 5 && *p; p++)
        if (*p == ' ')
            field++;
    uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    return v * (uint64_t)page_size;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGSYS: return "SIGSYS";
    default: return NULL;
    }
}

/* The scratch file `from`, from its start, onto `to`. */
static void copy_fd(int from, int to)
{
    char buf[4096]; /* small: this may run on the handler's stack */
    ssize_t n;
    if (lseek(from, 0, SEEK_SET) != 0)
        return;
    while ((n = read(from, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        write_all(to, buf, (size_t)n);
    }
}

/* The step failed (sig: the fatal signal; 0: it stalled): the one line (all
 * of the step's stderr first with CUBATCHTRACE_DEBUG), the command's file
 * removed, and the process ends.  A second failure waits for that end. */
static _Noreturn void fail(int sig)
{
    int running = RUNNING;
    if (!__atomic_compare_exchange_n(&g.state, &running, FAILING, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        for (;;)
            pause();
    uint64_t data = sig ? data_bytes() : 0;
    if (g.shown)
        write_all(g.user_err, "\r\033[K", 4);
    if (g.debug)
        copy_fd(g.err, g.user_err);
    struct line l = {.n = 0};
    add(&l, g.prefix);
    add(&l, "cannot read ");
    bool live = add_input(&l, sig != 0);
    if (!sig && live) {
        add(&l, ": no answer in ");
        add(&l, g.stall_text);
        add(&l, " s (CUBATCHTRACE_TIMEOUT sets the time-out)");
    } else {
        if (!sig) {
            add(&l, ": the trace decoder made no progress in ");
            add(&l, g.stall_text);
            add(&l, " s: damaged input? (CUBATCHTRACE_TIMEOUT sets the time-out)");
        } else if (g.limit && data >= g.limit / 8 * 7) {
            add(&l, ": the trace decoder went over its memory limit of ");
            add(&l, g.limit_text);
            add(&l, ": damaged input? (CUBATCHTRACE_MAX_MEMORY sets the limit)");
        } else {
            add(&l, ": the trace decoder crashed (");
            const char *name = signal_name(sig);
            if (name) {
                add(&l, name);
            } else {
                add(&l, "signal ");
                add_uint(&l, (unsigned)sig);
            }
            add(&l, ") on damaged input");
        }
        const char *stream = sig && own_trace[0] ? own_stream : g.stream;
        if (stream[0]) {
            add(&l, " (in ");
            add(&l, stream);
            add(&l, ")");
        }
    }
    add(&l, "\n");
    write_all(g.user_err, l.buf, l.n);
    if (g.remove[0])
        unlink(g.remove);
    _exit(g.fail_status);
}

static void on_fatal_signal(int sig)
{
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == RUNNING || __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == FAILING)
        fail(sig);
    /* the step is over: what the signal does without us */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---------------------------------------------------------------- the handler's stacks */

/* Each thread that reads has a stack for the handler, so that a stack
 * overflow in the decoder still reaches it: this thread, and those the
 * reader starts (cbt_thread_enter). */
static _Thread_local void *altstack;

static void altstack_on(void)
{
    void *p = mmap(NULL, ALTSTACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    stack_t ss = {.ss_sp = p, .ss_size = ALTSTACK_BYTES};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(p, ALTSTACK_BYTES);
        return;
    }
    altstack = p;
}

static void altstack_off(void)
{
    if (!altstack)
        return;
    stack_t ss = {.ss_flags = SS_DISABLE};
    sigaltstack(&ss, NULL);
    munmap(altstack, ALTSTACK_BYTES);
    altstack = NULL;
}

/* ---------------------------------------------------------------- the watchdog */

static double now_s(void) { return (double)cbt_now_ns() / 1e9; }

/* Until told to stop (end of file on `arg`, a pipe): ends the process when
 * the progress count has not moved for g.stall_s seconds (0: never).  When
 * stderr is a terminal and the reading takes more than a second, one line
 * there says what is being read and for how long, rewritten in place and
 * erased at the end. */
static void *watchdog(void *arg)
{
    int stop = (int)(intptr_t)arg;
    uint64_t seen = 0;
    double start = now_s(), last_move = start;
    bool tty = isatty(g.user_err);
    int wait_ms = g.stall_s > 0 ? (int)(g.stall_s * 1000 / 8) + 1 : -1;
    if (wait_ms > 500 || (tty && wait_ms < 0))
        wait_ms = 500;
    for (;;) {
        struct pollfd p = {.fd = stop, .events = POLLIN};
        int n = poll(&p, 1, wait_ms);
        if (n > 0 || (n < 0 && errno != EINTR))
            break;
        if (tty && now_s() - start >= 1.0) {
            struct line l = {.n = 0};
            add(&l, "\r\033[K");
            add_n(&l, g.prefix, strlen(g.prefix) - 2); /* without its ": " */
            add(&l, ": reading ");
            add_input(&l, false);
            char secs[32];
            snprintf(secs, sizeof(secs), ": %.0f s", now_s() - start);
            add(&l, secs);
            write_all(g.user_err, l.buf, l.n);
            g.shown = true;
        }
        uint64_t progress = __atomic_load_n(&g.progress, __ATOMIC_RELAXED);
        if (progress != seen) {
            seen = progress;
            last_move = now_s();
        } else if (g.stall_s > 0 && now_s() - last_move >= g.stall_s) {
            fail(0);
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- the step */

/* An unnamed scratch file: in TMPDIR (or /tmp), else in memory. */
static int scratch_file(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    char path[4096];
    snprintf(path, sizeof(path), "%s/cubatchtrace-XXXXXX", dir);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) {
        unlink(path);
        return fd;
    }
    return memfd_create("cubatchtrace", MFD_CLOEXEC);
}

/* fd, moved above 0, 1 and 2 (which may be closed, and are ours to redirect). */
static int above_stdio(int fd)
{
    if (fd < 0 || fd > STDERR_FILENO)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return moved;
}

/* The step's standard error: everything with CUBATCHTRACE_DEBUG; else its
 * own `cubatchtrace:` lines (libraries print other lines on damaged input),
 * only the last one when it failed (status 2), or failing any such line its
 * first line.  Returns how many lines. */
static int relay_stderr(int fd, bool all, bool last_only)
{
    fflush(stderr);
    if (all) {
        copy_fd(fd, STDERR_FILENO);
        return 1;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    if (size <= 0 || lseek(fd, 0, SEEK_SET) != 0)
        return 0;
    size_t cap = size > (1 << 20) ? (1 << 20) : (size_t)size;
    char *text = malloc(cap + 1);
    if (!text)
        return 0;
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, text + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    text[got] = 0;
    static const char prefix[] = CBT_PROG; /* then ": " or " COMMAND: " */
    const char *last = NULL, *first = NULL;
    int lines = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        if (!first && *line)
            first = line;
        if (strncmp(line, prefix, sizeof(prefix) - 1) != 0 ||
            (line[sizeof(prefix) - 1] != ':' && line[sizeof(prefix) - 1] != ' '))
            continue;
        if (last_only) {
            last = line;
            lines = 1;
        } else {
            fprintf(stderr, "%s\n", line);
            lines++;
        }
    }
    if (!last && !lines && last_only && first && *first) {
        last = first;
        lines = 1;
    }
    if (last)
        fprintf(stderr, "%s\n", last);
    free(text);
    return lines;
}

void cbt_guard_on_failure(int status, const char *remove)
{
    g.fail_status = status;
    snprintf(g.remove, sizeof(g.remove), "%s", remove ? remove : "");
}

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGTRAP, SIGFPE, SIGILL, SIGSYS};
#define NFATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

/* What the step changed in the process, to be put back after it. */
struct saved {
    struct rlimit data;
    bool limited;
    struct sigaction handlers[NFATAL];
    pthread_t dog;
    int stop[2]; /* the watchdog's pipe */
};

/* Scratch files in place of fds 1 and 2, the watchdog, the limit, the handlers. */
static int step_begin(struct saved *s)
{
    fflush(stdout);
    fflush(stderr);
    s->stop[0] = s->stop[1] = -1;
    /* ours kept aside (-1: closed, and closed again after the step; any
     * other failure to keep them, such as no fd left, is an error) */
    int e = 0;
    if ((g.user_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) < 0 && errno != EBADF)
        e = errno;
    if ((g.user_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)) < 0 && errno != EBADF && !e)
        e = errno;
    g.out = g.err = -1;
    if (!e && ((g.out = above_stdio(scratch_file())) < 0 || (g.err = above_stdio(scratch_file())) < 0 ||
               pipe2(s->stop, O_CLOEXEC) != 0))
        e = errno;
    if (!e && ((s->stop[0] = above_stdio(s->stop[0])) < 0 || (s->stop[1] = above_stdio(s->stop[1])) < 0))
        e = errno;
    if (!e)
        e = pthread_create(&s->dog, NULL, watchdog, (void *)(intptr_t)s->stop[0]);
    if (e) {
        cbt_err("cannot set up the reading: %s", strerror(e));
        int fds[] = {g.out, g.err, g.user_out, g.user_err, s->stop[0], s->stop[1]};
        for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
            if (fds[i] >= 0)
                close(fds[i]);
        return -1;
    }
    dup2(g.out, STDOUT_FILENO);
    dup2(g.err, STDERR_FILENO);
    s->limited = false;
    if (g.limit && getrlimit(RLIMIT_DATA, &s->data) == 0) {
        struct rlimit data = s->data;
        data.rlim_cur = (rlim_t)g.limit;
        s->limited = setrlimit(RLIMIT_DATA, &data) == 0;
    }
    struct sigaction sa = {.sa_handler = on_fatal_signal, .sa_flags = SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NFATAL; i++)
        sigaction(fatal_signals[i], &sa, &s->handlers[i]);
    altstack_on();
    cbt_progress_listen(moved);
    cbt_thread_listen(altstack_on, altstack_off);
    __atomic_store_n(&g.state, RUNNING, __ATOMIC_RELEASE);
    return 0;
}

/* The step ended by itself: all put back, fds 1 and 2 ours again. */
static void step_end(struct saved *s)
{
    int running = RUNNING;
    if (!__atomic_compare_exchange_n(&g.state, &running, DONE, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        for (;;) /* a failure is being told; the process ends there */
            pause();
    close(s->stop[1]);
    pthread_join(s->dog, NULL);
    close(s->stop[0]);
    if (g.shown)
        write_all(g.user_err, "\r\033[K", 4);
    cbt_thread_listen(NULL, NULL);
    cbt_progress_listen(NULL);
    altstack_off();
    for (size_t i = 0; i < NFATAL; i++)
        sigaction(fatal_signals[i], &s->handlers[i], NULL);
    if (s->limited)
        setrlimit(RLIMIT_DATA, &s->data);
    const int user[2] = {g.user_out, g.user_err};
    for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
        if (user[fd - 1] >= 0) {
            dup2(user[fd - 1], fd);
            close(user[fd - 1]);
        } else {
            close(fd);
        }
    }
    wrapped_reset();
    __atomic_store_n(&g.state, IDLE, __ATOMIC_RELEASE);
}

int cbt_guard_run(const char *const *inputs, int ninputs, int (*body)(void *arg), void *arg)
{
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != IDLE) /* already inside a guarded step */
        return body(arg);
    int rc = 2;
    if (memory_limit(&g.limit) != 0 || stall_limit(&g.stall_s) != 0)
        goto out;
    g.limit = effective_limit(g.limit);
    page_size = sysconf(_SC_PAGESIZE);
    g.inputs = inputs;
    g.ninputs = ninputs;
    g.trace[0] = g.stream[0] = 0;
    g.progress = 0;
    g.shown = false;
    g.debug = getenv("CUBATCHTRACE_DEBUG") != NULL;
    const char *cmd = cbt_command();
    snprintf(g.prefix, sizeof(g.prefix), "%s%s%s: ", CBT_PROG, cmd ? " " : "", cmd ? cmd : "");
    format_size(g.limit_text, sizeof(g.limit_text), g.limit);
    snprintf(g.stall_text, sizeof(g.stall_text), "%g", g.stall_s);

    struct saved s;
    if (step_begin(&s) != 0)
        goto out;
    rc = body(arg);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        const char *tmp = getenv("TMPDIR");
        cbt_err("cannot write the output to a scratch file in %s: %s", tmp && *tmp ? tmp : "/tmp",
                strerror(errno));
        rc = 2;
    }
    fflush(stderr);
    step_end(&s);

    if (rc != 2)
        copy_fd(g.out, STDOUT_FILENO);
    if (relay_stderr(g.err, g.debug, rc == 2) == 0 && rc == 2) {
        struct line l = {.n = 0};
        add_input(&l, false);
        l.buf[l.n] = 0;
        cbt_err("cannot read %s: the trace decoder failed", l.buf);
    }
    close(g.out);
    close(g.err);
out:
    g.remove[0] = 0;
    g.fail_status = 2;
    return rc;
}

/* ---------------------------------------------------------------- progress */

static void moved(void) { __atomic_fetch_add(&g.progress, 1, __ATOMIC_RELAXED); }

/* Whether a guarded step runs: the wrappers then watch, else they only forward. */
static bool guarded(void) { return __atomic_load_n(&g.state, __ATOMIC_RELAXED) == RUNNING; }


/* Under wrapped.lock: one thread at a time names what is being read; each
 * reading thread also keeps its own names, which a fatal signal (delivered
 * to the thread that faulted) reports, so that with several trace
 * directories read at once (--jobs) a crash names the trace of the thread
 * that crashed, not the last one named by another. */
static void publish(const char *trace, const char *stream)
{
    snprintf(g.trace, sizeof(g.trace), "%s", trace ? trace : "");
    snprintf(g.stream, sizeof(g.stream), "%s", stream ? stream : "");
    memcpy(own_trace, g.trace, sizeof(own_trace));
    memcpy(own_stream, g.stream, sizeof(own_stream));
}

/* libbabeltrace2's own function NAME, found once. */
static void *real_fn(const char *name, void **slot)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        if (!f) {
            cbt_err("libbabeltrace2 has no %s", name);
            if (guarded()) /* the line went to the step's scratch stderr */
                copy_fd(g.err, g.user_err);
            _exit(2);
        }
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}
#define REAL(fn) ((__typeof__(&fn))real_fn(#fn, &real_##fn))

/* Source components and the trace each reads (its `inputs`' first element). */
struct source_rec {
    const bt_component *comp;
    char *trace;
};

/* Message iterators: the trace their source reads, and the stream they last delivered. */
#define ITER_SLOTS 8192u
struct iter_rec {
    const bt_message_iterator *it;
    const char *trace;
    const bt_stream *stream;
    char *stream_name;
};

/* All that the wrappers remember, shared by the reading threads. */
static struct wrapped {
    pthread_mutex_t lock;
    struct source_rec *sources;
    size_t nsources;
    struct iter_rec *iters;           /* ITER_SLOTS, open addressing */
    const struct iter_rec *published; /* whose trace and stream g.trace and g.stream name now */
} wrapped = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* g.trace and g.stream as a reading thread last named them, copied whole
 * (the watchdog's thread: a reading thread may be naming others). */
static void named_now(char *trace, char *stream)
{
    pthread_mutex_lock(&wrapped.lock);
    memcpy(trace, g.trace, sizeof(g.trace));
    memcpy(stream, g.stream, sizeof(g.stream));
    pthread_mutex_unlock(&wrapped.lock);
}

/* After a step: what the wrappers remembered of its graphs, forgotten. */
static void wrapped_reset(void)
{
    pthread_mutex_lock(&wrapped.lock);
    for (size_t i = 0; i < wrapped.nsources; i++)
        free(wrapped.sources[i].trace);
    free(wrapped.sources);
    wrapped.sources = NULL;
    wrapped.nsources = 0;
    if (wrapped.iters)
        for (unsigned i = 0; i < ITER_SLOTS; i++)
            free(wrapped.iters[i].stream_name);
    free(wrapped.iters);
    wrapped.iters = NULL;
    wrapped.published = NULL;
    pthread_mutex_unlock(&wrapped.lock);
}

/* Under wrapped.lock. */
static struct iter_rec *iter_slot(const bt_message_iterator *it, bool add)
{
    struct iter_rec *iters = wrapped.iters;
    if (!iters && !(add && (iters = wrapped.iters = calloc(ITER_SLOTS, sizeof(*iters)))))
        return NULL;
    unsigned s = (unsigned)(((uintptr_t)it >> 4) * 0x9E3779B97F4A7C15ull >> 51) & (ITER_SLOTS - 1);
    for (unsigned n = 0; n < ITER_SLOTS; n++, s = (s + 1) & (ITER_SLOTS - 1)) {
        if (iters[s].it == it)
            return &iters[s];
        if (!iters[s].it) {
            if (!add)
                return NULL;
            iters[s].it = it;
            return &iters[s];
        }
    }
    return NULL;
}

static const char *input_of(const bt_value *params)
{
    if (!params || !bt_value_is_map(params))
        return NULL;
    const bt_value *in = bt_value_map_borrow_entry_value_const(params, "inputs");
    if (!in || !bt_value_is_array(in) || bt_value_array_get_length(in) == 0)
        return NULL;
    const bt_value *first = bt_value_array_borrow_element_by_index_const(in, 0);
    return bt_value_is_string(first) ? bt_value_string_get(first) : NULL;
}

static const bt_stream *stream_of(const bt_message *m)
{
    switch (bt_message_get_type(m)) {
    case BT_MESSAGE_TYPE_EVENT:
        return bt_event_borrow_stream_const(bt_message_event_borrow_event_const(m));
    case BT_MESSAGE_TYPE_STREAM_BEGINNING:
        return bt_message_stream_beginning_borrow_stream_const(m);
    case BT_MESSAGE_TYPE_STREAM_END:
        return bt_message_stream_end_borrow_stream_const(m);
    case BT_MESSAGE_TYPE_PACKET_BEGINNING:
        return bt_packet_borrow_stream_const(bt_message_packet_beginning_borrow_packet_const(m));
    case BT_MESSAGE_TYPE_PACKET_END:
        return bt_packet_borrow_stream_const(bt_message_packet_end_borrow_packet_const(m));
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
        return bt_message_discarded_events_borrow_stream_const(m);
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
        return bt_message_discarded_packets_borrow_stream_const(m);
    default:
        return NULL;
    }
}

static void *real_bt_graph_add_source_component;
bt_graph_add_component_status bt_graph_add_source_component(bt_graph *graph,
                                                             const bt_component_class_source *component_class,
                                                             const char *name, const bt_value *params,
                                                             bt_logging_level logging_level,
                                                             const bt_component_source **component)
{
    bool on = guarded();
    const char *trace = on ? input_of(params) : NULL;
    if (on) {
        pthread_mutex_lock(&wrapped.lock);
        publish(trace, NULL);
        wrapped.published = NULL;
        pthread_mutex_unlock(&wrapped.lock);
    }
    bt_graph_add_component_status st =
        REAL(bt_graph_add_source_component)(graph, component_class, name, params, logging_level, component);
    if (on && st == BT_GRAPH_ADD_COMPONENT_STATUS_OK && component && *component && trace) {
        pthread_mutex_lock(&wrapped.lock);
        struct source_rec *n = realloc(wrapped.sources, sizeof(*n) * (wrapped.nsources + 1));
        if (n) {
            wrapped.sources = n;
            n[wrapped.nsources].comp = bt_component_source_as_component_const(*component);
            n[wrapped.nsources].trace = strdup(trace);
            wrapped.nsources++;
        }
        pthread_mutex_unlock(&wrapped.lock);
    }
    moved();
    return st;
}

static void *real_bt_message_iterator_create_from_sink_component;
bt_message_iterator_create_from_sink_component_status
bt_message_iterator_create_from_sink_component(bt_self_component_sink *self_component_sink,
                                               bt_self_component_port_input *port,
                                               bt_message_iterator **message_iterator)
{
    const char *trace = NULL;
    bool on = guarded();
    if (on) {
        const bt_connection *c = bt_port_borrow_connection_const(
            bt_port_input_as_port_const(bt_self_component_port_input_as_port_input(port)));
        const bt_component *up =
            c ? bt_port_borrow_component_const(bt_port_output_as_port_const(bt_connection_borrow_upstream_port_const(c)))
              : NULL;
        /* through the filters (a trace's muxer, trimmers) up to the source they read */
        for (int hops = 0; up && bt_component_is_filter(up) && hops < 4; hops++) {
            const bt_component_filter *f = (const bt_component_filter *)up;
            const bt_port_input *in = bt_component_filter_get_input_port_count(f)
                                          ? bt_component_filter_borrow_input_port_by_index_const(f, 0)
                                          : NULL;
            const bt_connection *fc = in ? bt_port_borrow_connection_const(bt_port_input_as_port_const(in)) : NULL;
            up = fc ? bt_port_borrow_component_const(
                          bt_port_output_as_port_const(bt_connection_borrow_upstream_port_const(fc)))
                    : NULL;
        }
        pthread_mutex_lock(&wrapped.lock);
        for (size_t i = 0; i < wrapped.nsources && !trace; i++)
            if (wrapped.sources[i].comp == up)
                trace = wrapped.sources[i].trace;
        publish(trace, NULL);
        wrapped.published = NULL;
        pthread_mutex_unlock(&wrapped.lock);
    }
    bt_message_iterator_create_from_sink_component_status st =
        REAL(bt_message_iterator_create_from_sink_component)(self_component_sink, port, message_iterator);
    if (on && st == BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK && *message_iterator) {
        pthread_mutex_lock(&wrapped.lock);
        struct iter_rec *r = iter_slot(*message_iterator, true);
        if (r)
            r->trace = trace;
        pthread_mutex_unlock(&wrapped.lock);
    }
    moved();
    return st;
}

static void *real_bt_message_iterator_next;
bt_message_iterator_next_status bt_message_iterator_next(bt_message_iterator *message_iterator,
                                                         bt_message_array_const *messages, uint64_t *count)
{
    if (!guarded())
        return REAL(bt_message_iterator_next)(message_iterator, messages, count);
    pthread_mutex_lock(&wrapped.lock);
    struct iter_rec *r = iter_slot(message_iterator, false);
    if (r && r != wrapped.published) {
        publish(r->trace, r->stream_name);
        wrapped.published = r;
    }
    pthread_mutex_unlock(&wrapped.lock);
    /* r NULL: an iterator of a filter's own (a trace's muxer reading its
     * streams): what is being read is still the trace of the sink's iterator above it */
    bt_message_iterator_next_status st = REAL(bt_message_iterator_next)(message_iterator, messages, count);
    if (st == BT_MESSAGE_ITERATOR_NEXT_STATUS_OK && r && *count > 0) {
        const bt_stream *s = stream_of((*messages)[0]);
        pthread_mutex_lock(&wrapped.lock);
        if (s && s != r->stream) {
            const char *name = bt_stream_get_name(s);
            r->stream = s;
            free(r->stream_name);
            r->stream_name = name ? strdup(name) : NULL;
            publish(r->trace, r->stream_name);
            wrapped.published = r;
        }
        pthread_mutex_unlock(&wrapped.lock);
    }
    moved();
    return st;
}
