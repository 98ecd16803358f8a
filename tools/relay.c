/* SPDX-License-Identifier: MIT */
/*
 * `run --relayd URL`: the ranks of a job on one host share one session
 * daemon and one session that streams to a relay daemon (lttng-relayd).
 *
 * Whichever rank comes first starts a keeper: a process of its own (not a
 * child the rank waits for) that starts the session daemon when none runs,
 * creates the host's session (live, streaming to URL, blocking channel,
 * per-user buffers: every traced process of the user on the host), and
 * stays until the last rank has gone; then it stops and destroys the session
 * (the relay daemon gets every stream's end) and stops the daemon it
 * started, by its pid.  Two lock files in the daemon's run directory make
 * this race-free:
 *
 *   cubatchtrace-gate.lock   held (exclusive) while a rank joins, and by the
 *                            keeper while it tears down: nobody joins a
 *                            session that is going away;
 *   cubatchtrace-users.lock  each rank holds it shared from joining to its
 *                            end; the keeper waits to hold it exclusive,
 *                            which happens once every rank has gone, however
 *                            it ended (the kernel drops the lock of a killed
 *                            process).
 *
 * A rank holding the gate only tries the users lock (a keeper waiting for
 * the gate holds it exclusive): when that fails it lets go of the gate and
 * tries again, so the two never wait on each other.  The state file
 * (cubatchtrace-keeper) names the live keeper and its session.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "relay.h"
#include "session.h"
#include "base/util.h"

#define KEEPER_START_S 60 /* daemon start (10 s) and six lttng commands */
#define JOIN_TRIES 1200 /* x 50 ms: a keeper tearing down, or one starting, has a minute */

static void path_in(char *buf, size_t len, const char *dir, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

/* The run directory of the session daemon the lttng client talks to. */
static int find_rundir(char *buf, size_t len)
{
    const char *home = getenv("LTTNG_HOME"), *h = getenv("HOME");
    if (geteuid() != 0 && (!home || !*home) && (!h || !*h)) {
        cbt_err("run: --relayd: neither LTTNG_HOME nor HOME is set");
        return -1;
    }
    cbt_sessiond_rundir(buf, len);
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
        cbt_err("run: --relayd: cannot create %s: %s", buf, strerror(errno));
        return -1;
    }
    return 0;
}

static pid_t read_pid(const char *path, char *rest, size_t restlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long v = 0;
    char word[256] = "";
    if (fscanf(f, "%ld %255s", &v, word) < 1)
        v = 0;
    fclose(f);
    if (rest)
        snprintf(rest, restlen, "%s", word);
    return (pid_t)v;
}

/* ---------------------------------------------------------------- the keeper */

/* The host's session (session.c): live, streaming to the relay daemon,
 * per-user buffers, the channel `run` makes.  One a keeper killed before
 * its end left behind is destroyed first. */
static int make_session(const struct cbt_lttng *l, const struct cbt_relay_opts *o, char *err, size_t errlen)
{
    char ignored[8];
    char *destroy[] = {"destroy", (char *)o->session, NULL};
    cbt_lttng_call(l, destroy, l->destroy_limit_s, ignored, sizeof(ignored));
    const struct cbt_session_spec spec = {.name = o->session, .live_url = o->url, .per_uid = true,
                                          .subbuf = o->subbuf, .nsubbuf = o->nsubbuf,
                                          .lookup_events = o->lookup_events};
    return cbt_session_start(l, &spec, err, errlen);
}

static void lock_wait(int fd, int op)
{
    while (flock(fd, op) != 0 && errno == EINTR)
        ;
}

/* The keeper's life; `ready` gets "ok" or the reason it failed. */
static void keeper_main(const struct cbt_relay_opts *o, const char *rundir, int ready)
{
    char log[PATH_MAX];
    path_in(log, sizeof(log), rundir, "cubatchtrace-keeper.log");
    const struct cbt_lttng l = {o->lttng, o->sessiond, log, o->destroy_limit_s};
    char gate[PATH_MAX], users[PATH_MAX], state[PATH_MAX], err[8192] = "";
    path_in(gate, sizeof(gate), rundir, "cubatchtrace-gate.lock");
    path_in(users, sizeof(users), rundir, "cubatchtrace-users.lock");
    path_in(state, sizeof(state), rundir, "cubatchtrace-keeper");
    int gfd = open(gate, O_RDWR | O_CREAT | O_CLOEXEC, 0600), ufd = open(users, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (logfd >= 0)
        close(logfd);
    pid_t daemon = 0;
    if (gfd < 0 || ufd < 0) {
        snprintf(err, sizeof(err), "cannot open the lock files in %s: %s", rundir, strerror(errno));
    } else if (!cbt_pid_alive(cbt_sessiond_pid(rundir)) && (daemon = cbt_sessiond_start(&l, rundir, err, sizeof(err))) < 0) {
        daemon = 0;
    } else if (make_session(&l, o, err, sizeof(err)) == 0) {
        FILE *f = fopen(state, "w");
        if (f) {
            fprintf(f, "%ld %s\n", (long)getpid(), o->session);
            fclose(f);
        }
    }
    if (err[0]) { /* the daemon started for nothing is gone before the rank hears */
        cbt_sessiond_stop(daemon);
        dprintf(ready, "%s", err);
        close(ready);
        _exit(1);
    }
    dprintf(ready, "ok");
    close(ready);

    lock_wait(ufd, LOCK_EX); /* every rank has gone */
    lock_wait(gfd, LOCK_EX); /* and none is joining */
    cbt_session_finish(&l, o->session, err, sizeof(err));
    cbt_sessiond_stop(daemon);
    unlink(state);
    _exit(0);
}

static pid_t start_keeper(const struct cbt_relay_opts *o, const char *rundir, char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) { /* nothing the keeper starts may hold it open */
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* its own session and process group, and none of the rank's files:
         * not its output (a launcher waits for those) nor its locks */
        setsid();
        int in = open("/dev/null", O_RDWR);
        if (in >= 0) {
            dup2(in, 0);
            dup2(in, 1);
            dup2(in, 2);
        }
        for (int fd = 3; fd < 1024; fd++)
            if (fd != p[1])
                close(fd);
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        /* a double fork: the keeper is nobody's child that waits */
        pid_t k = fork();
        if (k != 0)
            _exit(k < 0);
        keeper_main(o, rundir, p[1]);
    }
    close(p[1]);
    waitpid(pid, NULL, 0);
    char buf[1024];
    ssize_t n, got = 0;
    uint64_t until = cbt_now_ns() + (uint64_t)KEEPER_START_S * 1000000000u;
    while (got < (ssize_t)sizeof(buf) - 1) {
        uint64_t now = cbt_now_ns();
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        if (now >= until || poll(&pf, 1, (int)((until - now) / 1000000u) + 1) == 0) {
            close(p[0]);
            snprintf(err, errlen, "the keeper of the host's session did not answer within %d s", KEEPER_START_S);
            return -1;
        }
        n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += n;
    }
    close(p[0]);
    buf[got] = 0;
    if (strcmp(buf, "ok") != 0) {
        snprintf(err, errlen, "%s", got ? buf : "the keeper of the host's session ended at start");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- a rank */

int cbt_relay_join(struct cbt_relay *j, const struct cbt_relay_opts *o)
{
    memset(j, 0, sizeof(*j));
    j->gate_fd = j->users_fd = -1;
    char rundir[PATH_MAX / 2], gate[PATH_MAX], users[PATH_MAX], state[PATH_MAX];
    if (find_rundir(rundir, sizeof(rundir)) != 0)
        return 2;
    path_in(gate, sizeof(gate), rundir, "cubatchtrace-gate.lock");
    path_in(users, sizeof(users), rundir, "cubatchtrace-users.lock");
    path_in(state, sizeof(state), rundir, "cubatchtrace-keeper");
    j->gate_fd = open(gate, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    j->users_fd = open(users, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (j->gate_fd < 0 || j->users_fd < 0) {
        cbt_err("run: --relayd: cannot open the lock files in %s: %s", rundir, strerror(errno));
        cbt_relay_leave(j);
        return 2;
    }
    for (int t = 0; t < JOIN_TRIES; t++) {
        lock_wait(j->gate_fd, LOCK_EX);
        if (flock(j->users_fd, LOCK_SH | LOCK_NB) != 0) { /* a keeper is tearing down */
            flock(j->gate_fd, LOCK_UN);
            usleep(50000);
            continue;
        }
        char session[256];
        pid_t keeper = read_pid(state, session, sizeof(session));
        if (cbt_pid_alive(keeper) && strcmp(session, o->session) == 0) {
            flock(j->gate_fd, LOCK_UN);
            return 0;
        }
        if (cbt_pid_alive(keeper)) {
            cbt_err("run: --relayd: this host's daemon already keeps session %s for another job (`--session`)",
                    session);
            cbt_relay_leave(j);
            return 2;
        }
        char err[8192];
        int rc = start_keeper(o, rundir, err, sizeof(err));
        flock(j->gate_fd, LOCK_UN);
        if (rc != 0) {
            cbt_err("run: --relayd %s: %s", o->url, err);
            cbt_relay_leave(j);
            return 2;
        }
        return 0;
    }
    cbt_err("run: --relayd: the host's session daemon was still being stopped after %d s", JOIN_TRIES / 20);
    cbt_relay_leave(j);
    return 2;
}

void cbt_relay_leave(struct cbt_relay *j)
{
    if (j->users_fd >= 0)
        close(j->users_fd); /* the keeper may go once every rank has */
    if (j->gate_fd >= 0)
        close(j->gate_fd);
    j->users_fd = j->gate_fd = -1;
}
