/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace run: trace one program from start to end.
 *
 * Finds a running session daemon (as root always the one of /var/run/lttng,
 * whatever LTTNG_HOME says) or starts a private one as our own child (so we
 * know its pid and stop exactly it); creates a uniquely named session with a
 * blocking channel; runs the program with the shim preloaded; stops (which
 * waits for the data), destroys, stops the daemon we started, summarises.
 * Daemons and the lttng client never inherit our stdout/stderr: their output
 * goes to a log file, so a caller reading our output through a pipe is never
 * kept waiting by them.
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
#include "commands.h"
#include "guard.h"
#include "render/json.h"
#include "read/reader.h"
#include "relay.h"
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
    "Trace every cuMemcpy3DBatchAsync batch of PROGRAM (and of its children), then\n"
    "print the summary.  Exits with PROGRAM's status (128+N when killed by signal N).\n"
    "\n"
    "  -o, --output DIR      write the trace there (default ./cubatchtrace-YYYYmmdd-HHMMSS)\n"
    "      --strict          CUBATCHTRACE_MODE=strict: the shim refuses invalid batches\n"
    "      --report stderr   CUBATCHTRACE_REPORT=stderr: the shim prints findings too\n"
    "      --gpu-time        CUBATCHTRACE_GPU_TIME=1: each batch timed on its stream\n"
    "                        (GPU time and GB/s in the summary)\n"
    "      --json            print the summary as JSON (docs/json-schema.md)\n"
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

/* ---------------------------------------------------------------- state */

static volatile sig_atomic_t got_signal;
static volatile pid_t child_pid;

static void on_signal(int sig)
{
    got_signal = sig;
    if (child_pid > 0)
        kill(child_pid, sig);
}

struct run {
    char tmp[PATH_MAX / 2];  /* our scratch directory (logs, private LTTNG_HOME) */
    char log[PATH_MAX / 2 + 16];
    const char *lttng, *sessiond;
    char session[128];
    bool session_created;
    pid_t daemon;            /* the daemon we started, 0 if none */
    char rundir[PATH_MAX + 64];
};

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

/* `lttng ARGS...` (what: its command, for the messages); 0 when it succeeded,
 * CBT_SPAWN_TIMED_OUT when it had not ended after limit_s seconds (0: no
 * limit; see cbt_spawn_logged), else -1.  Every failure is reported in one line. */
static int lttng_within(struct run *r, const char *what, char *const args[], unsigned limit_s)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)r->lttng;
    argv[n++] = (char *)"--no-sessiond"; /* never let the client spawn a daemon we would not stop */
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int st = cbt_spawn_logged(r->log, argv, limit_s);
    if (st == CBT_SPAWN_TIMED_OUT) {
        cbt_err("run: `lttng %s` had not ended after %u s and was stopped (see %s)", what, limit_s, r->log);
        return CBT_SPAWN_TIMED_OUT;
    }
    if (st != 0) {
        char line[1024];
        cbt_log_last_line(r->log, line, sizeof(line));
        cbt_err("run: `lttng %s` failed (status %d): %s", what, st, *line ? line : "no output");
        return -1;
    }
    return 0;
}

static int lttng(struct run *r, const char *what, char *const args[]) { return lttng_within(r, what, args, 0); }

/* How long `lttng destroy` may take, after `lttng stop` has returned (the
 * trace is then complete on disk): LTTng 2.13's client was seen to wait
 * forever after a traced child had exited right after fork, the session
 * already gone from the daemon's list.  CUBATCHTRACE_LTTNG_DESTROY_TIMEOUT
 * (seconds, 1 to 3600) sets it. */
static unsigned destroy_limit(void)
{
    const char *e = getenv("CUBATCHTRACE_LTTNG_DESTROY_TIMEOUT");
    char *end;
    if (!e || !*e)
        return 60;
    unsigned long v = strtoul(e, &end, 10);
    if (*end || v < 1 || v > 3600) {
        cbt_err("run: CUBATCHTRACE_LTTNG_DESTROY_TIMEOUT=%s is not a number of seconds from 1 to 3600: 60 s", e);
        return 60;
    }
    return (unsigned)v;
}

static bool pid_alive(pid_t p) { return p > 0 && (kill(p, 0) == 0 || errno == EPERM); }

static pid_t read_pidfile(const char *dir)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/lttng-sessiond.pid", dir);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    long v = 0;
    if (fscanf(f, "%ld", &v) != 1)
        v = 0;
    fclose(f);
    return (pid_t)v;
}

static void rm_rf(const char *path)
{
    /* our own scratch dir only: a few files and sockets, two levels deep */
    char *argv[] = {(char *)"/bin/rm", (char *)"-rf", (char *)path, NULL};
    pid_t p = fork();
    if (p == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    if (p > 0)
        while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
            ;
}

static int start_daemon(struct run *r)
{
    bool root = geteuid() == 0;
    if (root) {
        snprintf(r->rundir, sizeof(r->rundir), "/var/run/lttng");
    } else {
        const char *home = getenv("LTTNG_HOME");
        if (!home || !*home)
            home = getenv("HOME");
        snprintf(r->rundir, sizeof(r->rundir), "%s/.lttng", home ? home : "/tmp");
    }
    if (pid_alive(read_pidfile(r->rundir)))
        return 0; /* reuse */
    if (!r->sessiond) {
        cbt_err("run: no session daemon is running and lttng-sessiond was not found (install lttng-tools)");
        return -1;
    }
    if (!root) {
        char home[PATH_MAX / 2 + 16];
        snprintf(home, sizeof(home), "%s/home", r->tmp);
        mkdir(home, 0700);
        setenv("LTTNG_HOME", home, 1);
        snprintf(r->rundir, sizeof(r->rundir), "%s/.lttng", home);
    }
    char dlog[PATH_MAX + 32];
    snprintf(dlog, sizeof(dlog), "%s/sessiond.log", r->tmp);
    pid_t p = fork();
    if (p < 0) {
        cbt_err("run: fork: %s", strerror(errno));
        return -1;
    }
    if (p == 0) {
        setsid(); /* the terminal's ^C goes to the program, not to the daemon */
        int in = open("/dev/null", O_RDONLY), out = open(dlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in >= 0)
            dup2(in, 0);
        if (out >= 0) {
            dup2(out, 1);
            dup2(out, 2);
        }
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execl(r->sessiond, r->sessiond, "--no-kernel", (char *)NULL);
        _exit(127);
    }
    r->daemon = p;
    for (int i = 0; i < 200; i++) { /* 10 s */
        if (read_pidfile(r->rundir) == p)
            return 0;
        int st;
        if (waitpid(p, &st, WNOHANG) == p) {
            r->daemon = 0;
            if (pid_alive(read_pidfile(r->rundir)))
                return 0; /* another one won the race: use it */
            cbt_err("run: lttng-sessiond exited at start (see %s)", dlog);
            return -1;
        }
        usleep(50000);
    }
    cbt_err("run: lttng-sessiond did not come up within 10 s (see %s)", dlog);
    return -1;
}

static void stop_daemon(struct run *r)
{
    if (r->daemon <= 0)
        return;
    kill(r->daemon, SIGTERM);
    for (int i = 0; i < 200; i++) {
        int st;
        pid_t w = waitpid(r->daemon, &st, WNOHANG);
        if (w == r->daemon || (w < 0 && errno == ECHILD)) {
            r->daemon = 0;
            return;
        }
        usleep(50000);
    }
    kill(r->daemon, SIGKILL);
    waitpid(r->daemon, NULL, 0);
    r->daemon = 0;
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

/* ---------------------------------------------------------------- the summary */


/* ---------------------------------------------------------------- run */

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

int cbt_cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"strict", no_argument, NULL, 's'},
        {"report", required_argument, NULL, 'r'}, {"json", no_argument, NULL, 'j'},
        {"lookup-events", no_argument, NULL, 'P'}, {"per-op-events", no_argument, NULL, 'P'}, {"subbuf-size", required_argument, NULL, 'S'},
        {"num-subbuf", required_argument, NULL, 'N'}, {"relayd", required_argument, NULL, 'U'},
        {"session", required_argument, NULL, 'E'}, {"gpu-time", no_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'}, {"raw", no_argument, NULL, 'A'}, {0, 0, 0, 0},
    };
    const char *relayd = NULL, *session = NULL;
    const char *output = NULL, *report = NULL, *subbuf = DEFAULT_SUBBUF, *nsubbuf = DEFAULT_NUM_SUBBUF;
    bool strict = false, json = false, per_op = false, gpu_time = false, raw = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 's': strict = true; break;
        case 'r':
            if (strcmp(optarg, "stderr") != 0) {
                cbt_usage_error("run: --report %s: only `stderr` is supported", optarg);
                return 2;
            }
            report = optarg;
            break;
        case 'j': json = true; break;
        case 'A': raw = true; break;
        case 'P': per_op = true; break;
        case 'S':
            if (check_subbuf_size(optarg) != 0)
                return 2;
            subbuf = optarg;
            break;
        case 'N': nsubbuf = optarg; break;
        case 'U': relayd = optarg; break;
        case 'E': session = optarg; break;
        case 'G': gpu_time = true; break;
        case 'h': fputs(usage_run, stdout); return 0;
        default: return cbt_option_error("run", c, argv, opts);
        }
    }
    if (optind >= argc) {
        cbt_usage_error("no program given (cubatchtrace run [OPTIONS] -- PROGRAM ARGS...)");
        return 2;
    }
    char **prog = argv + optind;
    if (session && !relayd) {
        cbt_err("run: --session names the host's session of --relayd: give --relayd too");
        return 2;
    }
    if (relayd && output) {
        cbt_err("run: --relayd and --output: the relay daemon decides where the trace is written");
        return 2;
    }

    struct run r;
    memset(&r, 0, sizeof(r));
    char shim[PATH_MAX], lbuf[PATH_MAX], sbuf[PATH_MAX], outdir[2 * PATH_MAX + 2];
    if (find_shim(shim, sizeof(shim)) != 0)
        return 2;
    r.lttng = find_tool("LTTNG", CBT_LTTNG, "lttng", lbuf, sizeof(lbuf));
    r.sessiond = find_tool("LTTNG_SESSIOND", CBT_LTTNG_SESSIOND, "lttng-sessiond", sbuf, sizeof(sbuf));
    if (!r.lttng) {
        cbt_err("run: the lttng command was not found (install lttng-tools)");
        return 2;
    }

    /* the output directory, absolute */
    char rel[PATH_MAX];
    if (output) {
        snprintf(rel, sizeof(rel), "%s", output);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(rel, sizeof(rel), "cubatchtrace-%Y%m%d-%H%M%S", &tm);
    }
    if (rel[0] == '/') {
        snprintf(outdir, sizeof(outdir), "%s", rel);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd))) {
            cbt_err("run: getcwd: %s", strerror(errno));
            return 2;
        }
        snprintf(outdir, sizeof(outdir), "%s/%s", cwd, rel);
    }
    if (dir_nonempty(outdir)) {
        cbt_err("run: %s already exists and is not empty: choose another --output", outdir);
        return 2;
    }

    const char *tmpbase = getenv("TMPDIR");
    snprintf(r.tmp, sizeof(r.tmp), "%s/cubatchtrace-run.XXXXXX", tmpbase && *tmpbase ? tmpbase : "/tmp");
    if (!mkdtemp(r.tmp)) {
        cbt_err("run: cannot create a temporary directory under %s: %s", tmpbase ? tmpbase : "/tmp", strerror(errno));
        return 2;
    }
    snprintf(r.log, sizeof(r.log), "%s/lttng.log", r.tmp);
    snprintf(r.session, sizeof(r.session), "cubatchtrace-%ld-%" PRIu64, (long)getpid(), (uint64_t)(cbt_now_ns() % 1000000000u));

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);

    int status = 2, ran = 0, exec_errno = 0;
    bool keep_tmp = false, summarize = false;
    char shown[PATH_MAX + 8]; /* the trace as the user would name it */
    char outarg[2 * PATH_MAX + 16];
    snprintf(outarg, sizeof(outarg), "--output=%s", outdir);
    char subarg[64], numarg[64];
    snprintf(subarg, sizeof(subarg), "--subbuf-size=%s", subbuf);
    snprintf(numarg, sizeof(numarg), "--num-subbuf=%s", nsubbuf);

    struct cbt_relay relay = {-1, -1};
    char session_buf[128];
    if (relayd) {
        const char *job = getenv("SLURM_JOB_ID");
        if (!session && job && *job)
            snprintf(session_buf, sizeof(session_buf), "cubatchtrace-slurm-%s", job);
        else
            snprintf(session_buf, sizeof(session_buf), "%s", session ? session : "cubatchtrace");
        struct cbt_relay_opts ro = {r.lttng, r.sessiond, relayd, session_buf, subbuf, nsubbuf, per_op, destroy_limit()};
        if (cbt_relay_join(&relay, &ro) != 0)
            goto cleanup;
    } else if (start_daemon(&r) != 0) {
        keep_tmp = true;
        goto cleanup;
    }
    if (!relayd) {
        char *a1[] = {"create", r.session, outarg, NULL};
        if (lttng(&r, "create", a1) != 0)
            goto fail;
        r.session_created = true;
        char *a2[] = {"enable-channel", "-u", "-s", r.session, "--blocking-timeout=inf", subarg, numarg, "cbt", NULL};
        char *a3[] = {"enable-event", "-u", "-s", r.session, "-c", "cbt", "cubatchtrace:*", "--loglevel=TRACE_INFO", NULL};
        if (per_op)
            a3[7] = NULL;
        char *a4[] = {"enable-event", "-u", "-s", r.session, "-c", "cbt", "lttng_ust_statedump:*", NULL};
        char *a5[] = {"add-context", "-u", "-s", r.session, "-c", "cbt", "-t", "vpid", "-t", "vtid",
                      "-t", "procname", "-t", "ip", NULL};
        char *a6[] = {"start", r.session, NULL};
        if (lttng(&r, "enable-channel", a2) || lttng(&r, "enable-event", a3) || lttng(&r, "enable-event", a4) ||
            lttng(&r, "add-context", a5) || lttng(&r, "start", a6))
            goto fail;
    }
    if (got_signal)
        goto fail;

    /* the program */
    {
        const char *old = getenv("LD_PRELOAD");
        /* liblttng-ust-fork keeps children of a fork traced: the configured one,
         * or CUBATCHTRACE_UST_FORK_LIB; left out, with a warning, when missing. */
        const char *fork_lib = getenv("CUBATCHTRACE_UST_FORK_LIB");
        if (!fork_lib || !*fork_lib)
            fork_lib = CBT_LTTNG_UST_FORK_LIB;
        if (*fork_lib && access(fork_lib, R_OK) != 0) {
            cbt_err("run: %s not found: children the program forks are not traced", fork_lib);
            fork_lib = "";
        }
        size_t need = (old ? strlen(old) : 0) + strlen(shim) + strlen(fork_lib) + 4;
        char *preload = malloc(need);
        if (!preload)
            goto fail;
        snprintf(preload, need, "%s%s%s%s%s", old && *old ? old : "", old && *old ? ":" : "", shim,
                 *fork_lib ? ":" : "", fork_lib);
        fflush(NULL);
        int ep[2]; /* the child's errno when it could not execute the program; closed on exec */
        if (pipe2(ep, O_CLOEXEC) != 0) {
            cbt_err("run: pipe: %s", strerror(errno));
            free(preload);
            goto fail;
        }
        pid_t p = fork();
        if (p < 0) {
            cbt_err("run: fork: %s", strerror(errno));
            close(ep[0]);
            close(ep[1]);
            free(preload);
            goto fail;
        }
        if (p == 0) {
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGHUP, SIG_DFL);
            signal(SIGQUIT, SIG_DFL);
            setenv("LD_PRELOAD", preload, 1);
            setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 1);
            /* the shim writes a large batch in as few events as this channel's
             * sub-buffers hold; a value of the caller's own (another session
             * with smaller ones) is kept */
            uint64_t sb;
            if (cbt_parse_size(subbuf, &sb) == 0) {
                char v[24];
                snprintf(v, sizeof v, "%llu", (unsigned long long)sb);
                setenv("CUBATCHTRACE_SUBBUF_SIZE", v, 0);
            }
            if (strict)
                setenv("CUBATCHTRACE_MODE", "strict", 1);
            if (report)
                setenv("CUBATCHTRACE_REPORT", report, 1);
            if (gpu_time)
                setenv("CUBATCHTRACE_GPU_TIME", "1", 1);
            close(ep[0]);
            execvp(prog[0], prog);
            int e = errno;
            if (write(ep[1], &e, sizeof(e)) < 0)
                _exit(126);
            _exit(e == ENOENT ? 127 : 126);
        }
        free(preload);
        close(ep[1]);
        while (read(ep[0], &exec_errno, sizeof(exec_errno)) < 0 && errno == EINTR)
            ;
        close(ep[0]);
        child_pid = p;
        int st;
        while (waitpid(p, &st, 0) < 0)
            if (errno != EINTR) {
                st = 0;
                break;
            }
        child_pid = 0;
        status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        ran = 1;
    }

    if (relayd) {
        char host[256] = "?";
        gethostname(host, sizeof(host));
        host[sizeof(host) - 1] = 0;
        cbt_relay_leave(&relay);
        fprintf(stderr, "%s: traced in session %s of host %s, streamed to %s\n", CBT_PROG, session_buf, host, relayd);
        goto cleanup;
    }
    {
        char *a7[] = {"stop", r.session, NULL};
        char *a8[] = {"destroy", r.session, NULL};
        lttng(&r, "stop", a7); /* a failure is reported; destroy anyway */
        int d = lttng_within(&r, "destroy", a8, destroy_limit());
        if (d == 0 || d == CBT_SPAWN_TIMED_OUT) /* a destroy that hung is not tried again */
            r.session_created = false;
    }
    stop_daemon(&r);
    if (exec_errno) { /* the session recorded nobody: no trace is kept, no summary is made */
        cbt_err("run: cannot execute %s: %s: nothing was recorded", prog[0], strerror(exec_errno));
        rm_rf(outdir);
        goto cleanup;
    }
    /* named as the user would: relative to the working directory when given so (or by default) */
    snprintf(shown, sizeof(shown), "%s%s", rel[0] == '/' || strncmp(rel, "./", 2) == 0 ? "" : "./", rel);
    fprintf(stderr, "%s: trace written to %s\n", CBT_PROG, shown);
    summarize = true;
    goto cleanup;

fail:
    if (!ran && got_signal)
        status = 128 + got_signal;
cleanup:
    cbt_relay_leave(&relay);
    if (r.session_created) {
        char *a8[] = {"destroy", r.session, NULL};
        lttng_within(&r, "destroy", a8, destroy_limit());
    }
    stop_daemon(&r);
    if (!keep_tmp) /* else keep the daemon's log named in the error line */
        rm_rf(r.tmp);
    if (summarize) { /* last: a trace it cannot read ends the process (one line; the status stays the program's) */
        const char *inputs[1] = {shown};
        struct cbt_summary_job j = {.ro = {inputs, 1, NULL, 0, true, NULL, NULL}, .json = json, .raw = raw,
                                    .live_fd = -1, .program = prog[0]};
        cbt_guard_on_failure(status, NULL);
        cbt_guard_run(inputs, 1, cbt_summary_read, &j);
    }
    return status;
}
