/* SPDX-License-Identifier: MIT */
/*
 * The LTTng session a traced program writes to, its session daemon, and the
 * spawn of the traced program: what `run` and the keeper of `run --relayd`
 * (relay.c) share.  See session.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"
#include "base/util.h"

unsigned cbt_lttng_destroy_limit(void)
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

int cbt_lttng_call(const struct cbt_lttng *l, char *const args[], unsigned limit_s, char *err, size_t errlen)
{
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)l->lttng;
    argv[n++] = (char *)"--no-sessiond"; /* never let the client spawn a daemon we would not stop */
    for (int i = 0; args[i] && n < 39; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int st = cbt_spawn_logged(l->log, argv, limit_s);
    if (st == CBT_SPAWN_TIMED_OUT) {
        snprintf(err, errlen, "`lttng %s` had not ended after %u s and was stopped (see %s)", args[0], limit_s, l->log);
    } else if (st != 0) {
        char line[1024];
        cbt_log_last_line(l->log, line, sizeof(line));
        snprintf(err, errlen, "`lttng %s` failed (status %d): %s", args[0], st, *line ? line : "no output");
    }
    return st;
}

int cbt_session_start(const struct cbt_lttng *l, const struct cbt_session_spec *s, char *err, size_t errlen)
{
    char out[4200], url[4200], sub[64], num[64];
    snprintf(out, sizeof(out), "--output=%s", s->output ? s->output : "");
    snprintf(url, sizeof(url), "--set-url=%s", s->live_url ? s->live_url : "");
    snprintf(sub, sizeof(sub), "--subbuf-size=%s", s->subbuf);
    snprintf(num, sizeof(num), "--num-subbuf=%s", s->nsubbuf);
    char *name = (char *)s->name;
    char *create[] = {"create", name, s->live_url ? "--live" : out, s->live_url ? url : NULL, NULL};
    char *channel[] = {"enable-channel", "-u", "-s", name, "--blocking-timeout=inf", sub, num, "cbt", NULL, NULL};
    if (s->per_uid) { /* before the channel's name */
        memmove(channel + 5, channel + 4, 4 * sizeof(char *));
        channel[4] = "--buffers-uid";
    }
    char *events[] = {"enable-event", "-u", "-s", name, "-c", "cbt", "cubatchtrace:*", "--loglevel=TRACE_INFO", NULL};
    if (s->lookup_events)
        events[7] = NULL;
    char *statedump[] = {"enable-event", "-u", "-s", name, "-c", "cbt", "lttng_ust_statedump:*", NULL};
    char *context[] = {"add-context", "-u", "-s", name, "-c", "cbt", "-t", "vpid", "-t", "vtid",
                       "-t", "procname", "-t", "ip", NULL};
    char *start[] = {"start", name, NULL};
    char *const *steps[] = {create, channel, events, statedump, context, start};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (cbt_lttng_call(l, steps[i], 0, err, errlen) != 0) {
            if (i > 0) {
                char ignored[8];
                char *destroy[] = {"destroy", name, NULL};
                cbt_lttng_call(l, destroy, l->destroy_limit_s, ignored, sizeof(ignored));
            }
            return -1;
        }
    return 0;
}

int cbt_session_finish(const struct cbt_lttng *l, const char *name, char *err, size_t errlen)
{
    char *stop[] = {"stop", (char *)name, NULL}, *destroy[] = {"destroy", (char *)name, NULL};
    char e1[1200] = "", e2[1200] = "";
    int s1 = cbt_lttng_call(l, stop, 0, e1, sizeof(e1)); /* destroyed all the same */
    int s2 = cbt_lttng_call(l, destroy, l->destroy_limit_s, e2, sizeof(e2));
    snprintf(err, errlen, "%s%s%s", e1, *e1 && *e2 ? "; " : "", e2);
    return s1 || s2 ? -1 : 0;
}

/* ---------------------------------------------------------------- the daemon */

bool cbt_pid_alive(pid_t p) { return p > 0 && (kill(p, 0) == 0 || errno == EPERM); }

void cbt_sessiond_rundir(char *buf, size_t len)
{
    if (geteuid() == 0) {
        snprintf(buf, len, "/var/run/lttng");
        return;
    }
    const char *home = getenv("LTTNG_HOME");
    if (!home || !*home)
        home = getenv("HOME");
    snprintf(buf, len, "%s/.lttng", home && *home ? home : "/tmp");
}

pid_t cbt_sessiond_pid(const char *rundir)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/lttng-sessiond.pid", rundir);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    long v = 0;
    if (fscanf(f, "%ld", &v) != 1)
        v = 0;
    fclose(f);
    return (pid_t)v;
}

pid_t cbt_sessiond_start(const struct cbt_lttng *l, const char *rundir, char *err, size_t errlen)
{
    if (!l->sessiond) {
        snprintf(err, errlen, "no session daemon is running and lttng-sessiond was not found (install lttng-tools)");
        return -1;
    }
    pid_t p = fork();
    if (p < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (p == 0) {
        setsid(); /* the terminal's ^C goes to the program, not to the daemon */
        int in = open("/dev/null", O_RDONLY), out = open(l->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
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
        execl(l->sessiond, l->sessiond, "--no-kernel", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) { /* 10 s */
        if (cbt_sessiond_pid(rundir) == p)
            return p;
        if (waitpid(p, NULL, WNOHANG) == p) {
            if (cbt_pid_alive(cbt_sessiond_pid(rundir)))
                return 0; /* another one won the race: use it */
            snprintf(err, errlen, "lttng-sessiond exited at start (see %s)", l->log);
            return -1;
        }
        usleep(50000);
    }
    cbt_sessiond_stop(p);
    snprintf(err, errlen, "lttng-sessiond did not come up within 10 s (see %s)", l->log);
    return -1;
}

void cbt_sessiond_stop(pid_t p)
{
    if (p <= 0)
        return;
    kill(p, SIGTERM);
    for (int i = 0; i < 200; i++) {
        pid_t w = waitpid(p, NULL, WNOHANG);
        if (w == p || (w < 0 && errno == ECHILD))
            return;
        usleep(50000);
    }
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
}

/* ---------------------------------------------------------------- the program */

static volatile sig_atomic_t got_signal;
static volatile pid_t child_pid;
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void on_signal(int sig)
{
    got_signal = sig;
    if (child_pid > 0)
        kill(child_pid, sig);
}

void cbt_signals_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
        sigaction(forwarded[i], &sa, NULL);
}

int cbt_signal_caught(void) { return got_signal; }

/* In the child: its environment, then the program; the errno of a failed
 * exec goes back through ep. */
static void spawn_child(const struct cbt_spawn *s, int ep)
{
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
        signal(forwarded[i], SIG_DFL);
    if (s->stdout_to_stderr)
        dup2(2, 1);
    setenv("LD_PRELOAD", s->preload, 1);
    for (int k = 0; k < 2; k++)
        for (const char *const *e = k ? s->env_keep : s->env; e && *e; e++) {
            const char *eq = strchr(*e, '=');
            if (!eq)
                continue;
            char name[128];
            snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
            setenv(name, eq + 1, !k);
        }
    execvp(s->argv[0], s->argv);
    int e = errno;
    if (write(ep, &e, sizeof(e)) < 0)
        _exit(126);
    _exit(e == ENOENT ? 127 : 126);
}

int cbt_spawn_program(const struct cbt_spawn *s, int *exec_errno)
{
    *exec_errno = 0;
    fflush(NULL);
    int ep[2]; /* the child's errno when it could not execute the program; closed on exec */
    if (pipe2(ep, O_CLOEXEC) != 0) {
        cbt_err("run: pipe: %s", strerror(errno));
        return -1;
    }
    pid_t p = fork();
    if (p < 0) {
        cbt_err("run: fork: %s", strerror(errno));
        close(ep[0]);
        close(ep[1]);
        return -1;
    }
    if (p == 0) {
        close(ep[0]);
        spawn_child(s, ep[1]);
    }
    close(ep[1]);
    while (read(ep[0], exec_errno, sizeof(*exec_errno)) < 0 && errno == EINTR)
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
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
