/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace run: trace one program from start to end.
 *
 * A thin front end: its options, the tools it needs (lttng, the shim), the
 * trace directory, then the session of session.c (the one running session
 * daemon, or a private one as our own child so we know its pid and stop
 * exactly it; a uniquely named session with a blocking channel), the
 * program spawned with the shim preloaded, the session finished (`lttng
 * stop` waits for the data), the summary.  With --relayd the session is the
 * host's, shared by the ranks (relay.c).  Daemons and the lttng client never
 * inherit our stdout/stderr: their output goes to a log file, so a caller
 * reading our output through a pipe is never kept waiting by them.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cubatchtrace/events.h>

#include "analyse/agg.h"
#include "analyse/callsite.h"
#include "commands.h"
#include "guard.h"
#include "render/json.h"
#include "read/reader.h"
#include "relay.h"
#include "analyse/advice.h"
#include "session.h"
#include "render/text.h"
#include "base/util.h"

#ifndef CBT_LIBDIR
#define CBT_LIBDIR "/usr/local/lib"
#endif
#ifndef CBT_BINDIR
#define CBT_BINDIR "/usr/local/bin"
#endif
#ifndef CBT_BUILDDIR
#define CBT_BUILDDIR ""
#endif
#ifndef CBT_LTTNG
#define CBT_LTTNG ""
#endif
#ifndef CBT_LTTNG_SESSIOND
#define CBT_LTTNG_SESSIOND ""
#endif

#define DEFAULT_SUBBUF "1M"
#define DEFAULT_NUM_SUBBUF "8"

static const char usage_run[] =
    "Usage: cubatchtrace run [OPTIONS] -- PROGRAM [ARGS...]\n"
    "Trace every batch copy (3D and 1D: cuMemcpy3DBatchAsync, cuMemcpyBatchAsync)\n"
    "of PROGRAM (and of its children), then print the summary.  Exits with\n"
    "PROGRAM's status (128+N when killed by signal N).\n"
    "\n"
    "  -o, --output DIR      write the trace there (default ./cubatchtrace-YYYYmmdd-HHMMSS)\n"
    "      --strict          CUBATCHTRACE_MODE=strict: the shim refuses invalid batches\n"
    "      --report stderr   CUBATCHTRACE_REPORT=stderr: the shim prints findings too\n"
    "      --gpu-time        CUBATCHTRACE_GPU_TIME=1: each batch timed on its stream\n"
    "                        (GPU time and GB/s in the summary)\n"
    "      --stack N         CUBATCHTRACE_STACK=N: each batch's caller and its callers,\n"
    "                        N frames (1 to 16), named file:line by the findings\n"
    "      --skip-frames LIB place batches and findings at the first frame outside\n"
    "                        LIB (repeatable; e.g. libfoo.so; with --stack)\n"
    "      --advice NAME=V   an advice threshold (cubatchtrace(1)), or `off`; repeatable\n"
    "      --advice-costs FILE  the cost table of the advice's savings\n"
    "                        (bench/advice-costs.sh makes it on a GPU machine)\n"
    "      --json            print the summary as JSON (docs/json-schema.md); the\n"
    "                        program's standard output then goes to standard error,\n"
    "                        so that ours is the JSON alone\n"
    "      --output-json FILE  the JSON summary to FILE instead (implies --json;\n"
    "                        the program's standard output is left as it is)\n"
    "      --raw             print the text summary's bytes and times as exact\n"
    "                        integers (bytes, ns) instead of human units\n"
    "      --lookup-events   also record the DEBUG events: cubatchtrace:lookup, each\n"
    "                        dlsym/cuGetProcAddress answer the shim replaced\n"
    "      --subbuf-size S   channel sub-buffer size (default " DEFAULT_SUBBUF ")\n"
    "      --num-subbuf N    channel sub-buffers per CPU (default " DEFAULT_NUM_SUBBUF ")\n"
    "      --relayd URL      stream to a relay daemon (lttng-relayd) instead of a\n"
    "                        directory: URL as `lttng create --set-url` takes it\n"
    "                        (net://HOST); the ranks of a job on one host share one\n"
    "                        session daemon and one live session (see below)\n"
    "      --session NAME    with --relayd: the host's session (default cubatchtrace,\n"
    "                        cubatchtrace-slurm-ID under Slurm)\n"
    "  -h, --help            this text\n"
    "\n"
    "The channel is BLOCKING (--blocking-timeout=inf; the program runs with\n"
    "LTTNG_UST_ALLOW_BLOCKING=1): when the consumer falls behind, the program waits\n"
    "instead of losing events, and the buffers stay at their set size (per CPU:\n"
    "--num-subbuf x --subbuf-size).  Recorded: cubatchtrace:* at TRACE_INFO and more\n"
    "severe, lttng_ust_statedump:* (to name call sites), contexts vpid, vtid,\n"
    "procname and ip.  The program runs with CUBATCHTRACE_SUBBUF_SIZE set to the\n"
    "sub-buffer size (unless set already): a large batch takes as few events as\n"
    "one sub-buffer holds.\n"
    "\n"
    "Session daemon: the one already running is used; otherwise a private one is\n"
    "started (under a temporary LTTNG_HOME unless root) and stopped afterwards.\n"
    "`lttng destroy`, once `lttng stop` has flushed the trace, is waited for at\n"
    "most CUBATCHTRACE_LTTNG_DESTROY_TIMEOUT seconds (default 60).\n"
    "The shim: $CUBATCHTRACE_SHIM, else libcubatchtrace.so of the build tree when\n"
    "this program runs from it, else the one installed with this program (in\n"
    CBT_LIBDIR ", or where that lies relative to this program when the\n"
    "installation was moved or staged under DESTDIR).\n"
    "\n"
    "With --relayd (under mpirun or srun, one `cubatchtrace run` per rank): the\n"
    "first rank on a host starts a keeper process that starts the session daemon\n"
    "when none runs (in LTTNG_HOME, else HOME; /var/run/lttng as root) and creates\n"
    "the host's live session, per-user buffers, streamed to URL; the other ranks\n"
    "join it.  When the last rank of the host has ended, however it ended, the\n"
    "keeper destroys the session and stops the daemon it started.  No summary is\n"
    "printed: summarise the relay daemon's output directory, or read the session\n"
    "live (net://RELAY/host/HOSTNAME/SESSION), with `cubatchtrace summary`.\n";

/* ---------------------------------------------------------------- the options */

/* The smallest sub-buffer that holds the largest chunk event: 64 ops with
 * every operand distinct are about 14.3 KiB (CBT_EV_OPS_PER_EVENT). */
#define MIN_SUBBUF ((uint64_t)16 * 1024)

static int check_subbuf_size(const char *s)
{
    uint64_t v;
    if (cbt_parse_size(s, &v) != 0) {
        cbt_usage_error("run: --subbuf-size %s: expected a size such as 64K or 1M", s);
        return -1;
    }
    if (v < MIN_SUBBUF) {
        cbt_usage_error("run: --subbuf-size %s: below 16K, the smallest sub-buffer that holds a chunk of %d ops", s,
                CBT_EV_OPS_PER_EVENT);
        return -1;
    }
    return 0;
}

struct run_opts {
    const char *output, *report, *subbuf, *nsubbuf, *relayd, *session, *json_path;
    const char *stack;
    bool strict, json, lookup_events, gpu_time, raw;
    char **prog;
};

/* -1: go on; else the exit status (help printed, or a usage error said). */
static int parse_options(int argc, char **argv, struct run_opts *o)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"strict", no_argument, NULL, 's'},
        {"report", required_argument, NULL, 'r'}, {"json", no_argument, NULL, 'j'},
        {"lookup-events", no_argument, NULL, 'P'}, {"per-op-events", no_argument, NULL, 'P'}, {"subbuf-size", required_argument, NULL, 'S'},
        {"num-subbuf", required_argument, NULL, 'N'}, {"relayd", required_argument, NULL, 'U'},
        {"session", required_argument, NULL, 'E'}, {"gpu-time", no_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'}, {"raw", no_argument, NULL, 'A'},
        {"output-json", required_argument, NULL, 'O'}, {"stack", required_argument, NULL, 'K'},
        {"skip-frames", required_argument, NULL, 'F'}, {"advice", required_argument, NULL, 1001},
        {"advice-costs", required_argument, NULL, 1002}, {0, 0, 0, 0},
    };
    *o = (struct run_opts){.subbuf = DEFAULT_SUBBUF, .nsubbuf = DEFAULT_NUM_SUBBUF};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case 's': o->strict = true; break;
        case 'r':
            if (strcmp(optarg, "stderr") != 0) {
                cbt_usage_error("run: --report %s: only `stderr` is supported", optarg);
                return 2;
            }
            o->report = optarg;
            break;
        case 'j': o->json = true; break;
        case 'O': o->json = true; o->json_path = optarg; break;
        case 'A': o->raw = true; break;
        case 'P': o->lookup_events = true; break;
        case 'S':
            if (check_subbuf_size(optarg) != 0)
                return 2;
            o->subbuf = optarg;
            break;
        case 'N': o->nsubbuf = optarg; break;
        case 'U': o->relayd = optarg; break;
        case 'E': o->session = optarg; break;
        case 'G': o->gpu_time = true; break;
        case 'K': {
            char *end;
            unsigned long n = strtoul(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-' || n < 1 || n > CBT_EV_STACK_MAX) {
                cbt_usage_error("run: --stack %s: expected a number of frames from 1 to %d", optarg, CBT_EV_STACK_MAX);
                return 2;
            }
            o->stack = optarg;
            break;
        }
        case 'F': cbt_callsite_skip(optarg); break;
        case 1001: if (cbt_advice_option(optarg) != 0) return 2; break;
        case 1002: if (cbt_advice_costs(optarg) != 0) return 2; break;
        case 'h': fputs(usage_run, stdout); return 0;
        default: return cbt_option_error("run", c, argv, opts);
        }
    }
    if (optind >= argc) {
        cbt_usage_error("no program given (cubatchtrace run [OPTIONS] -- PROGRAM ARGS...)");
        return 2;
    }
    o->prog = argv + optind;
    if (o->session && !o->relayd) {
        cbt_err("run: --session names the host's session of --relayd: give --relayd too");
        return 2;
    }
    if (o->relayd && o->output) {
        cbt_err("run: --relayd and --output: the relay daemon decides where the trace is written");
        return 2;
    }
    return -1;
}

/* ---------------------------------------------------------------- the tools */

static bool executable(const char *p) { return p && *p && access(p, X_OK) == 0; }

static const char *find_tool(const char *env, const char *configured, const char *name, char *buf, size_t len)
{
    const char *e = getenv(env);
    if (executable(e))
        return e;
    if (executable(configured))
        return configured;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t n = c ? (size_t)(c - path) : strlen(path);
        snprintf(buf, len, "%.*s/%s", (int)n, path, name);
        if (n && executable(buf))
            return buf;
        path += n + (c != NULL);
    }
    return NULL;
}

/* The libdir of a moved installation: CBT_LIBDIR as it lies relative to
 * CBT_BINDIR, applied to the directory this program runs from (bin -> lib);
 * "" when this program's directory does not end as CBT_BINDIR does. */
static void moved_libdir(const char *exe, char *out, size_t len)
{
    const char *b = CBT_BINDIR, *l = CBT_LIBDIR;
    size_t common = 0; /* the longest common prefix ending at a '/' */
    for (size_t i = 0; b[i] && b[i] == l[i]; i++)
        if (b[i] == '/')
            common = i;
    out[0] = 0;
    const char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    size_t dl = (size_t)(slash - exe), bsuf = strlen(b + common);
    if (dl < bsuf || strncmp(exe + dl - bsuf, b + common, bsuf) != 0)
        return;
    snprintf(out, len, "%.*s%s", (int)(dl - bsuf), exe, l + common);
}

static int find_shim(char *buf, size_t len)
{
    const char *e = getenv("CUBATCHTRACE_SHIM");
    if (e && *e) {
        if (access(e, R_OK) != 0) {
            cbt_err("run: CUBATCHTRACE_SHIM=%s: %s", e, strerror(errno));
            return -1;
        }
        snprintf(buf, len, "%s", e);
        return 0;
    }
    char exe[PATH_MAX], build[PATH_MAX], inst[PATH_MAX], moved[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    snprintf(build, sizeof(build), "%s/src/.libs/libcubatchtrace.so", CBT_BUILDDIR);
    snprintf(inst, sizeof(inst), "%s/libcubatchtrace.so", CBT_LIBDIR);
    moved_libdir(exe, moved, PATH_MAX);
    if (moved[0])
        strcat(moved, "/libcubatchtrace.so");
    size_t bl = strlen(CBT_BUILDDIR);
    bool in_build = bl && strncmp(exe, CBT_BUILDDIR, bl) == 0 && exe[bl] == '/';
    /* from the build tree: its own shim first; installed: the shim beside it first */
    const char *order[3] = {in_build ? build : moved, in_build ? moved : inst, in_build ? inst : build};
    for (int i = 0; i < 3; i++)
        if (order[i][0] && (bl || order[i] != build))
            if (access(order[i], R_OK) == 0) {
                snprintf(buf, len, "%s", order[i]);
                return 0;
            }
    cbt_err("run: the shim libcubatchtrace.so was found neither at %s nor at %s: set CUBATCHTRACE_SHIM", inst,
            bl ? build : "(no build tree)");
    return -1;
}

/* The file `name` (no directory) in a folder of LD_LIBRARY_PATH, its
 * absolute path into out (PATH_MAX bytes: the program may run elsewhere);
 * false when none holds it. */
static bool on_library_path(const char *name, char *out)
{
    const char *p = getenv("LD_LIBRARY_PATH");
    char cand[PATH_MAX];
    while (p && *p) {
        size_t len = strcspn(p, ":");
        if (len && (size_t)snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, p, name) < sizeof(cand) &&
            access(cand, R_OK) == 0 && realpath(cand, out))
            return true;
        p += len + (p[len] == ':');
    }
    return false;
}

/* LD_PRELOAD for the program: the caller's, then the shim, then
 * liblttng-ust-fork (children of a fork stay traced): the configured one or
 * CUBATCHTRACE_UST_FORK_LIB; a bare file name, or a configured library no
 * longer where configure found it (LTTng moved, or installed elsewhere on
 * this machine), is looked for in the folders of LD_LIBRARY_PATH; left out
 * with a warning when missing.  NULL after one line. */
static char *make_preload(void)
{
    char shim[PATH_MAX], found[PATH_MAX];
    if (find_shim(shim, sizeof(shim)) != 0)
        return NULL;
    const char *old = getenv("LD_PRELOAD");
    const char *fork_lib = getenv("CUBATCHTRACE_UST_FORK_LIB");
    bool configured = !fork_lib || !*fork_lib;
    if (configured)
        fork_lib = CBT_LTTNG_UST_FORK_LIB;
    const char *base = strrchr(fork_lib, '/');
    bool missing = *fork_lib && (!base || access(fork_lib, R_OK) != 0);
    /* searched for: a bare name, or the configured library gone (an explicit path is taken as given) */
    if (missing && (!base || configured) && on_library_path(base ? base + 1 : fork_lib, found)) {
        fork_lib = found;
        missing = false;
    }
    if (missing) {
        cbt_err("run: %s not found%s: children the program forks are not traced", fork_lib,
                base ? "" : " in LD_LIBRARY_PATH");
        fork_lib = "";
    }
    size_t need = (old ? strlen(old) : 0) + strlen(shim) + strlen(fork_lib) + 4;
    char *preload = malloc(need);
    if (!preload) {
        cbt_err("out of memory");
        return NULL;
    }
    snprintf(preload, need, "%s%s%s%s%s", old && *old ? old : "", old && *old ? ":" : "", shim,
             *fork_lib ? ":" : "", fork_lib);
    return preload;
}

/* ---------------------------------------------------------------- the directories */

static bool dir_nonempty(const char *p)
{
    struct stat st;
    if (stat(p, &st) != 0)
        return false;
    if (!S_ISDIR(st.st_mode))
        return true;
    DIR *d = opendir(p);
    if (!d)
        return true;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n > 0;
}

/* The trace directory: `rel` as given (or the default name), `abs` made
 * absolute; 0, or 2 after one line (it exists and is not empty). */
static int output_dir(const char *output, char *rel, size_t rlen, char *abs, size_t alen)
{
    if (output) {
        snprintf(rel, rlen, "%s", output);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(rel, rlen, "cubatchtrace-%Y%m%d-%H%M%S", &tm);
    }
    if (rel[0] == '/') {
        snprintf(abs, alen, "%s", rel);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd))) {
            cbt_err("run: getcwd: %s", strerror(errno));
            return 2;
        }
        snprintf(abs, alen, "%s/%s", cwd, rel);
    }
    if (dir_nonempty(abs)) {
        cbt_err("run: %s already exists and is not empty: choose another --output", abs);
        return 2;
    }
    return 0;
}

/* Whether dir holds a CTF trace (a `metadata` file somewhere under it):
 * LTTng writes one once a process that loaded the shim registers. */
static bool holds_trace(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return false;
    const char *in[1] = {dir};
    const struct cbt_read_opts ro = {.inputs = in, .ninputs = 1, .allow_empty = true};
    char **paths = NULL;
    int n = 0;
    if (cbt_trace_dirs(&ro, &paths, &n) != 0)
        return true; /* not known: kept, and the summary says what it finds */
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return n > 0;
}

/* The libraries the dynamic loader does not find for prog, as ldd lists
 * them ("NAME => not found"; ldd never runs a program the loader would
 * not load, a static one included), comma-separated into buf; "" when it
 * names none. */
static void missing_libraries(const char *prog, char *buf, size_t len)
{
    char path[PATH_MAX], ldd[PATH_MAX];
    const char *exe = strchr(prog, '/') ? prog : find_tool("", "", prog, path, sizeof(path));
    const char *ldd_exe = find_tool("", "", "ldd", ldd, sizeof(ldd));
    int p[2];
    buf[0] = 0;
    if (!exe || !ldd_exe || pipe2(p, O_CLOEXEC) != 0)
        return;
    fflush(NULL);
    pid_t c = fork();
    if (c == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(p[1], 1);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        unsetenv("LD_PRELOAD");
        execl(ldd_exe, ldd_exe, exe, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    FILE *f = c > 0 ? fdopen(p[0], "r") : NULL;
    char line[1024];
    size_t n = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char name[256];
        if (strstr(line, "=> not found") && sscanf(line, " %255s", name) == 1 && n + strlen(name) + 3 < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
    }
    if (f)
        fclose(f);
    else
        close(p[0]);
    if (c > 0)
        while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
            ;
}

static void rm_rf(const char *path)
{
    char *argv[] = {(char *)"/bin/rm", (char *)"-rf", (char *)path, NULL};
    cbt_spawn_logged("/dev/null", argv, 0); /* our scratch dir, or a trace of nothing */
}

/* ---------------------------------------------------------------- the program */

/* Runs the program with the shim preloaded and the settings of the options;
 * its status (cbt_spawn_program). */
static int trace_program(const struct run_opts *o, const char *preload, int *exec_errno)
{
    /* the shim writes a large batch in as few events as this channel's
     * sub-buffers hold; a value of the caller's own (another session with
     * smaller ones) is kept */
    char sb[64] = "";
    uint64_t v;
    if (cbt_parse_size(o->subbuf, &v) == 0)
        snprintf(sb, sizeof(sb), "CUBATCHTRACE_SUBBUF_SIZE=%llu", (unsigned long long)v);
    char report[64];
    snprintf(report, sizeof(report), "CUBATCHTRACE_REPORT=%s", o->report ? o->report : "");
    char stack[64];
    snprintf(stack, sizeof(stack), "CUBATCHTRACE_STACK=%s", o->stack ? o->stack : "");
    const char *env[6], *keep[] = {sb[0] ? sb : NULL, NULL};
    int n = 0;
    env[n++] = "LTTNG_UST_ALLOW_BLOCKING=1";
    if (o->strict)
        env[n++] = "CUBATCHTRACE_MODE=strict";
    if (o->report)
        env[n++] = report;
    if (o->gpu_time)
        env[n++] = "CUBATCHTRACE_GPU_TIME=1";
    if (o->stack)
        env[n++] = stack;
    env[n] = NULL;
    /* the JSON on our standard output is never mixed with the program's */
    const struct cbt_spawn s = {.argv = o->prog, .preload = preload, .env = env, .env_keep = keep,
                                .stdout_to_stderr = o->json && !o->json_path};
    return cbt_spawn_program(&s, exec_errno);
}

/* ---------------------------------------------------------------- run */

/* --relayd: join the host's session (relay.c), run the program, leave. */
static int run_relayd(const struct run_opts *o, const struct cbt_lttng *l, const char *preload)
{
    char session[128];
    const char *job = getenv("SLURM_JOB_ID");
    if (!o->session && job && *job)
        snprintf(session, sizeof(session), "cubatchtrace-slurm-%s", job);
    else
        snprintf(session, sizeof(session), "%s", o->session ? o->session : "cubatchtrace");
    struct cbt_relay relay;
    struct cbt_relay_opts ro = {l->lttng, l->sessiond, o->relayd, session, o->subbuf, o->nsubbuf, o->lookup_events,
                                l->destroy_limit_s};
    if (cbt_relay_join(&relay, &ro) != 0)
        return 2;
    int exec_errno, status = cbt_signal_caught() ? -1 : trace_program(o, preload, &exec_errno);
    cbt_relay_leave(&relay);
    if (status < 0) /* not run: a signal came first, or it could not be started */
        return cbt_signal_caught() ? 128 + cbt_signal_caught() : 2;
    char host[256] = "?";
    gethostname(host, sizeof(host));
    host[sizeof(host) - 1] = 0;
    fprintf(stderr, "%s: traced in session %s of host %s, streamed to %s\n", CBT_PROG, session, host, o->relayd);
    return status;
}

/* Our scratch directory (logs, a private LTTNG_HOME) and the daemon we
 * started, if any. */
struct local {
    char tmp[PATH_MAX / 2];
    char log[PATH_MAX / 2 + 16];
    pid_t daemon;
};

/* The session daemon: the one running (in the run directory lttng's client
 * uses), else a private one under a temporary LTTNG_HOME (unless root). */
static int start_daemon(struct local *w, struct cbt_lttng *l)
{
    char rundir[PATH_MAX + 64], err[1024];
    cbt_sessiond_rundir(rundir, sizeof(rundir));
    if (cbt_pid_alive(cbt_sessiond_pid(rundir)))
        return 0; /* reuse */
    if (geteuid() != 0) {
        char home[PATH_MAX / 2 + 16];
        snprintf(home, sizeof(home), "%s/home", w->tmp);
        mkdir(home, 0700);
        setenv("LTTNG_HOME", home, 1);
        snprintf(rundir, sizeof(rundir), "%s/.lttng", home);
    }
    char dlog[PATH_MAX + 32];
    snprintf(dlog, sizeof(dlog), "%s/sessiond.log", w->tmp);
    struct cbt_lttng d = *l;
    d.log = dlog;
    if (!l->sessiond) {
        cbt_err("run: no session daemon is running and lttng-sessiond was not found (install lttng-tools)");
        return -1;
    }
    w->daemon = cbt_sessiond_start(&d, rundir, err, sizeof(err));
    if (w->daemon < 0) {
        w->daemon = 0;
        cbt_err("run: %s", err);
        return -1;
    }
    return 0;
}

/* A session of our own writing to a directory: start, run the program,
 * finish, then the summary of the trace. */
static int run_local(const struct run_opts *o, struct cbt_lttng *l, const char *preload)
{
    char rel[PATH_MAX], outdir[2 * PATH_MAX + 2], err[4096];
    if (output_dir(o->output, rel, sizeof(rel), outdir, sizeof(outdir)) != 0)
        return 2;
    struct local w = {.daemon = 0};
    const char *tmpbase = getenv("TMPDIR");
    snprintf(w.tmp, sizeof(w.tmp), "%s/cubatchtrace-run.XXXXXX", tmpbase && *tmpbase ? tmpbase : "/tmp");
    if (!mkdtemp(w.tmp)) {
        cbt_err("run: cannot create a temporary directory under %s: %s", tmpbase ? tmpbase : "/tmp", strerror(errno));
        return 2;
    }
    snprintf(w.log, sizeof(w.log), "%s/lttng.log", w.tmp);
    l->log = w.log;
    char session[128];
    snprintf(session, sizeof(session), "cubatchtrace-%ld-%" PRIu64, (long)getpid(), (uint64_t)(cbt_now_ns() % 1000000000u));
    const struct cbt_session_spec spec = {.name = session, .output = outdir, .subbuf = o->subbuf, .nsubbuf = o->nsubbuf,
                                          .lookup_events = o->lookup_events};

    int status = -1, exec_errno = 0;
    if (start_daemon(&w, l) != 0) /* keep the daemon's log named in the error line */
        return 2;
    bool started = cbt_session_start(l, &spec, err, sizeof(err)) == 0;
    if (!started)
        cbt_err("run: %s", err);
    else if (!cbt_signal_caught())
        status = trace_program(o, preload, &exec_errno);
    bool ran = status >= 0;
    if (!ran) /* not run: the session failed, a signal came first, or it could not be started */
        status = cbt_signal_caught() ? 128 + cbt_signal_caught() : 2;
    if (started && cbt_session_finish(l, session, err, sizeof(err)) != 0)
        cbt_err("run: %s", err); /* the trace is complete once `lttng stop` has returned */
    cbt_sessiond_stop(w.daemon);
    rm_rf(w.tmp);
    if (!ran)
        return status;
    if (exec_errno) { /* the session recorded nobody: no trace is kept, no summary is made */
        cbt_err("run: cannot execute %s: %s: nothing was recorded", o->prog[0], strerror(exec_errno));
        rm_rf(outdir);
        return status;
    }
    /* a program the loader could not start (the libraries it did not find),
     * or none that loaded the shim: no trace is kept
     * (what other processes of the user wrote to the session meanwhile is
     * not the program's) */
    char missing[512] = "";
    if (status == 127)
        missing_libraries(o->prog[0], missing, sizeof(missing));
    if (*missing || !holds_trace(outdir)) {
        if (status == 126 || status == 127)
            cbt_err("run: %s could not start (exit status %d%s%s): nothing was recorded", o->prog[0], status,
                    *missing ? ": the loader did not find " : ", the loader's message above", missing);
        else
            cbt_err("run: %s (exit status %d) never loaded the shim (a statically linked or setuid program does "
                    "not): nothing was recorded", o->prog[0], status);
        rm_rf(outdir);
        return status;
    }
    /* named as the user would: relative to the working directory when given so (or by default) */
    char shown[PATH_MAX + 8];
    snprintf(shown, sizeof(shown), "%s%s", rel[0] == '/' || strncmp(rel, "./", 2) == 0 ? "" : "./", rel);
    fprintf(stderr, "%s: trace written to %s\n", CBT_PROG, shown);
    /* last: a trace it cannot read ends the process (one line; the status stays the program's) */
    const char *inputs[1] = {shown};
    struct cbt_summary_job j = {.ro = {inputs, 1, NULL, 0, true, NULL, NULL}, .json = o->json, .raw = o->raw,
                                .json_path = o->json_path,
                                .live_fd = -1, .program = o->prog[0]};
    cbt_guard_on_failure(status, NULL);
    cbt_guard_run(inputs, 1, cbt_summary_read, &j);
    return status;
}

int cbt_cmd_run(int argc, char **argv)
{
    struct run_opts o;
    int rc = parse_options(argc, argv, &o);
    if (rc >= 0)
        return rc;
    char lbuf[PATH_MAX], sbuf[PATH_MAX];
    struct cbt_lttng l = {.destroy_limit_s = 0};
    l.lttng = find_tool("LTTNG", CBT_LTTNG, "lttng", lbuf, sizeof(lbuf));
    l.sessiond = find_tool("LTTNG_SESSIOND", CBT_LTTNG_SESSIOND, "lttng-sessiond", sbuf, sizeof(sbuf));
    char *preload = make_preload();
    if (!preload)
        return 2;
    if (!l.lttng) {
        cbt_err("run: the lttng command was not found (install lttng-tools)");
        free(preload);
        return 2;
    }
    l.destroy_limit_s = cbt_lttng_destroy_limit();
    cbt_signals_catch();
    rc = o.relayd ? run_relayd(&o, &l, preload) : run_local(&o, &l, preload);
    free(preload);
    return rc;
}
