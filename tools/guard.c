/* SPDX-License-Identifier: MIT */
/*
 * Reading behind a guard.  libbabeltrace2 crashes, allocates without bound or
 * loops forever on some damaged traces, so the step of a command that decodes
 * (read, aggregate, print) runs in a child process:
 *
 *   - with a memory limit (RLIMIT_DATA: heap and anonymous memory; the stream
 *     files babeltrace2 maps read-only do not count, so a large trace of many
 *     streams is not refused for its size) and no core dump;
 *   - watched: the child counts the decoder calls that came back (below), and
 *     the parent stops it when that count has not moved for the time-out,
 *     which also bounds how long a live peer may take to answer;
 *   - writing its standard output to a scratch file that reaches ours only
 *     when the command succeeded (status other than 2), and its standard error
 *     to another, of which only our own `cubatchtrace:` lines are passed on.
 *
 * When the child dies by a signal, goes over its limit or stalls, the parent
 * prints one line that names the trace (and the stream file, when known) and
 * returns 2.
 *
 * Progress and "which trace": the child wraps the three libbabeltrace2 calls
 * every reader goes through (adding a source component, creating a message
 * iterator, taking the next messages) and finds the library's own functions
 * with dlsym(RTLD_NEXT).  So the guard knows nothing of the event format or
 * of how the reader is written.  Outside a guarded child the wrappers only
 * forward.  Several threads read at once (parallel.c): what the wrappers
 * remember (struct wrapped) is behind one lock, taken around the tables
 * only, never across a call into libbabeltrace2 (a filter's iterator calls
 * bt_message_iterator_next from inside ours).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

#include "guard.h"
#include "base/util.h"

#define GUARD_DEFAULT_MEMORY (8ull << 30)
#define GUARD_DEFAULT_TIMEOUT_S 30.0

/* What the child tells the parent, in memory both share. */
struct guard_shared {
    uint64_t progress;      /* decoder calls that came back */
    int fatal_signal;       /* set by the child's handler of a fatal signal */
    uint64_t data_at_fatal; /* bytes of data (heap) the child had then */
    char trace[1024];       /* the trace directory or URL being read; "" unknown */
    char stream[1024];      /* the stream file being decoded; "" unknown */
};

static struct guard_shared *shared; /* set in the guarded child only */
static void moved(void);
static long page_size;

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
        return 0;
    }
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t half = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 2 : GUARD_DEFAULT_MEMORY;
    *limit = half < GUARD_DEFAULT_MEMORY ? half : GUARD_DEFAULT_MEMORY;
    return 0;
}

/* The limit the child gets: ours, or a lower one already set on us. */
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

/* ---------------------------------------------------------------- the child */

/* The data size from /proc/self/statm (its sixth field, pages): async-signal-safe. */
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

static void on_fatal_signal(int sig)
{
    /* SA_RESETHAND: the default action follows, with this one blocked until we return */
    shared->data_at_fatal = data_bytes();
    __atomic_store_n(&shared->fatal_signal, sig, __ATOMIC_RELEASE);
    raise(sig);
}

static void child_setup(uint64_t limit)
{
    static char altstack[64 * 1024]; /* a stack overflow in the decoder still reaches the handler */
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    struct rlimit data;
    if (limit && getrlimit(RLIMIT_DATA, &data) == 0) {
        data.rlim_cur = (rlim_t)limit;
        setrlimit(RLIMIT_DATA, &data);
    }
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {.sa_handler = on_fatal_signal, .sa_flags = SA_RESETHAND | SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGTRAP, SIGFPE, SIGILL, SIGSYS};
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
        sigaction(fatal[i], &sa, NULL);
}

/* ---------------------------------------------------------------- the parent */

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

static void copy_fd(int from, int to)
{
    char buf[1 << 16];
    ssize_t n;
    if (lseek(from, 0, SEEK_SET) != 0)
        return;
    while ((n = read(from, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(to, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return;
            off += w;
        }
    }
}

/* The child's standard error: everything with CUBATCHTRACE_DEBUG; else its
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
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return NULL;
    }
}

static bool is_url(const char *s) { return strncmp(s, "net://", 6) == 0 || strncmp(s, "net4://", 7) == 0; }

/* What the child was reading: the trace (its directory, else that of its
 * stream file, else the inputs given) and whether it is a live session. */
static void name_input(const struct guard_shared *g, char *buf, size_t len, bool *live, const char *const *inputs,
                       int ninputs)
{
    const char *what = g->trace[0] ? g->trace : NULL;
    int dirlen = -1;
    const char *slash = strrchr(g->stream, '/');
    if (!what && g->stream[0] == '/' && slash) {
        what = g->stream;
        dirlen = slash > g->stream ? (int)(slash - g->stream) : 1;
    }
    const char *more = "";
    if (!what && ninputs > 0) {
        what = inputs[0];
        more = ninputs > 1 ? " (or another input)" : "";
    }
    if (!what) {
        *live = false;
        snprintf(buf, len, "the trace");
        return;
    }
    *live = is_url(what);
    if (dirlen < 0)
        dirlen = (int)strlen(what);
    snprintf(buf, len, "%s %.*s%s", *live ? "live session" : "trace", dirlen, what, more);
}

static double now_s(void) { return (double)cbt_now_ns() / 1e9; }

/* Until the child is gone (end of file on `done`), or stopped here because its
 * progress count has not moved for stall_s seconds (0: never).  True when stopped.
 * When stderr is a terminal and the reading takes more than a second, one
 * line there says what is being read and for how long, rewritten in place
 * and erased at the end. */
static bool watch(pid_t pid, int done, const struct guard_shared *g, double stall_s, int *status,
                  const char *const *inputs, int ninputs)
{
    uint64_t seen = 0;
    double start = now_s(), last_move = start;
    bool stalled = false, tty = isatty(STDERR_FILENO), shown = false;
    int wait_ms = stall_s > 0 ? (int)(stall_s * 1000 / 8) + 1 : -1;
    if (wait_ms > 500 || (tty && wait_ms < 0))
        wait_ms = 500;
    for (;;) {
        struct pollfd p = {.fd = done, .events = POLLIN};
        int n = poll(&p, 1, wait_ms);
        if (n > 0 || (n < 0 && errno != EINTR))
            break;
        if (tty && now_s() - start >= 1.0) {
            char where[2200];
            bool live;
            name_input(g, where, sizeof(where), &live, inputs, ninputs);
            const char *cmd = cbt_command();
            fprintf(stderr, "\r\033[K%s%s%s: reading %.200s: %.0f s", CBT_PROG, cmd ? " " : "", cmd ? cmd : "", where,
                    now_s() - start);
            fflush(stderr);
            shown = true;
        }
        uint64_t progress = __atomic_load_n(&g->progress, __ATOMIC_RELAXED);
        if (progress != seen) {
            seen = progress;
            last_move = now_s();
        } else if (stall_s > 0 && now_s() - last_move >= stall_s) {
            stalled = true;
            kill(pid, SIGKILL);
            break;
        }
    }
    if (shown)
        fputs("\r\033[K", stderr);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return stalled;
}

/* The one line for a child that stalled or died by a signal. */
static void report_failure(const struct guard_shared *g, bool stalled, int status, uint64_t limit, double stall_s,
                           const char *const *inputs, int ninputs)
{
    char where[2200], in_stream[1100] = "";
    bool live;
    name_input(g, where, sizeof(where), &live, inputs, ninputs);
    if (g->stream[0])
        snprintf(in_stream, sizeof(in_stream), " (in %s)", g->stream);
    if (stalled && live) {
        cbt_err("cannot read %s: no answer in %g s (CUBATCHTRACE_TIMEOUT sets the time-out)", where, stall_s);
        return;
    }
    if (stalled) {
        cbt_err("cannot read %s: the trace decoder made no progress in %g s: damaged input? "
                "(CUBATCHTRACE_TIMEOUT sets the time-out)%s",
                where, stall_s, in_stream);
        return;
    }
    int sig = WTERMSIG(status), fatal = __atomic_load_n(&g->fatal_signal, __ATOMIC_ACQUIRE);
    const char *name = signal_name(sig);
    char num[32];
    if (!name) {
        snprintf(num, sizeof(num), "signal %d", sig);
        name = num;
    }
    if (limit && fatal == sig && g->data_at_fatal >= limit / 8 * 7) {
        char sz[32];
        format_size(sz, sizeof(sz), limit);
        cbt_err("cannot read %s: the trace decoder went over its memory limit of %s: damaged input? "
                "(CUBATCHTRACE_MAX_MEMORY sets the limit)%s",
                where, sz, in_stream);
    } else if (fatal == sig) {
        cbt_err("cannot read %s: the trace decoder crashed (%s) on damaged input%s", where, name, in_stream);
    } else {
        cbt_err("cannot read %s: the trace decoder was killed (%s)%s", where, name, in_stream);
    }
}

/* In the child: body with its output in the scratch files, then exit. */
static void run_child(pid_t parent, int done_read, int out, int err, struct guard_shared *g, uint64_t limit,
                      int (*body)(void *arg), void *arg)
{
    /* the write end of `done` stays open until this process ends: the parent's end-of-file */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(2);
    close(done_read);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    close(out);
    close(err);
    shared = g;
    cbt_progress_listen(moved);
    child_setup(limit);
    int rc = body(arg);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        const char *tmp = getenv("TMPDIR");
        cbt_err("cannot write the output to a scratch file in %s: %s", tmp && *tmp ? tmp : "/tmp",
                strerror(errno));
        rc = 2;
    }
    fflush(stderr);
    _exit(rc);
}

int cbt_guard_run(const char *const *inputs, int ninputs, int (*body)(void *arg), void *arg)
{
    if (shared) /* already inside a guarded child */
        return body(arg);
    uint64_t limit;
    double stall_s;
    if (memory_limit(&limit) != 0 || stall_limit(&stall_s) != 0)
        return 2;
    limit = effective_limit(limit);
    page_size = sysconf(_SC_PAGESIZE);
    struct guard_shared *g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int out = scratch_file(), err = scratch_file();
    int done[2] = {-1, -1};
    pid_t pid = -1;
    if (g != MAP_FAILED && out >= 0 && err >= 0 && pipe2(done, O_CLOEXEC) == 0) {
        fflush(stdout);
        fflush(stderr);
        pid_t parent = getpid();
        if ((pid = fork()) == 0)
            run_child(parent, done[0], out, err, g, limit, body, arg);
    }
    int rc = 2;
    if (pid < 0) {
        cbt_err("cannot start the reading process: %s", strerror(errno));
    } else {
        close(done[1]);
        done[1] = -1;
        int status = 0;
        bool stalled = watch(pid, done[0], g, stall_s, &status, inputs, ninputs);
        bool debug = getenv("CUBATCHTRACE_DEBUG") != NULL;
        if (stalled || WIFSIGNALED(status)) {
            if (debug)
                relay_stderr(err, true, false);
            report_failure(g, stalled, status, limit, stall_s, inputs, ninputs);
        } else {
            rc = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
            if (rc != 2) {
                fflush(stdout);
                copy_fd(out, STDOUT_FILENO);
            }
            if (relay_stderr(err, debug, rc == 2) == 0 && rc == 2) {
                char where[2200];
                bool live;
                name_input(g, where, sizeof(where), &live, inputs, ninputs);
                cbt_err("cannot read %s: the trace decoder failed", where);
            }
        }
    }
    if (g != MAP_FAILED)
        munmap(g, sizeof(*g));
    int fds[] = {out, err, done[0], done[1]};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return rc;
}

/* ---------------------------------------------------------------- progress */

static void moved(void)
{
    if (shared)
        __atomic_fetch_add(&shared->progress, 1, __ATOMIC_RELAXED);
}


/* Under wrapped.lock: one thread at a time names what is being read. */
static void publish(const char *trace, const char *stream)
{
    snprintf(shared->trace, sizeof(shared->trace), "%s", trace ? trace : "");
    snprintf(shared->stream, sizeof(shared->stream), "%s", stream ? stream : "");
}

/* libbabeltrace2's own function NAME, found once. */
static void *real_fn(const char *name, void **slot)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        if (!f) {
            cbt_err("libbabeltrace2 has no %s", name);
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
    const struct iter_rec *published; /* whose trace and stream shared->trace/stream name now */
} wrapped = {.lock = PTHREAD_MUTEX_INITIALIZER};

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
    const char *trace = shared ? input_of(params) : NULL;
    if (shared) {
        pthread_mutex_lock(&wrapped.lock);
        publish(trace, NULL);
        wrapped.published = NULL;
        pthread_mutex_unlock(&wrapped.lock);
    }
    bt_graph_add_component_status st =
        REAL(bt_graph_add_source_component)(graph, component_class, name, params, logging_level, component);
    if (shared && st == BT_GRAPH_ADD_COMPONENT_STATUS_OK && component && *component && trace) {
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
    if (shared) {
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
    if (shared && st == BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK && *message_iterator) {
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
    if (!shared)
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
