/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the LTTng session a traced program writes to, as
 * `run` (one private session) and `run --relayd`'s keeper (one live session
 * per host) both make it (session.c), and the spawn of the traced program.
 *
 * Every lttng command runs with --no-sessiond (the client never spawns a
 * daemon we would not stop), its output appended to a log file of the
 * caller's (cbt_spawn_logged): a caller reading our output through a pipe is
 * never kept waiting by it.  Failures come back as one line in `err`.
 */
#ifndef CBT_SESSION_H
#define CBT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct cbt_lttng {
    const char *lttng, *sessiond; /* the programs (sessiond may be NULL: not found) */
    const char *log;              /* where their output goes */
    unsigned destroy_limit_s;     /* how long `lttng destroy` may take (cbt_lttng_destroy_limit) */
};

/* The channel and events of a session: a blocking channel `cbt`,
 * cubatchtrace:* at TRACE_INFO (every level with lookup_events),
 * lttng_ust_statedump:*, the contexts vpid, vtid, procname and ip. */
struct cbt_session_spec {
    const char *name;
    const char *output;           /* a directory (`lttng create --output`), or NULL */
    const char *live_url;         /* a live session streamed there (--live --set-url), or NULL */
    bool per_uid;                 /* --buffers-uid: every process of the user on the host */
    const char *subbuf, *nsubbuf; /* the channel's sub-buffers */
    bool lookup_events;
};

/* CUBATCHTRACE_LTTNG_DESTROY_TIMEOUT (1 to 3600 s, default 60): LTTng 2.13's
 * client was seen to wait forever in `lttng destroy` after a traced child
 * had exited right after fork, the session already gone from the daemon's
 * list; by then `lttng stop` has returned and the trace is complete. */
unsigned cbt_lttng_destroy_limit(void);

/* `lttng ARGS...`: 0, CBT_SPAWN_TIMED_OUT when it ran past limit_s (0: no
 * limit), else its status with the log's last line in err. */
int cbt_lttng_call(const struct cbt_lttng *l, char *const args[], unsigned limit_s, char *err, size_t errlen);

/* Creates, sets up and starts the session; 0, or -1 with err (the session,
 * when created, destroyed again). */
int cbt_session_start(const struct cbt_lttng *l, const struct cbt_session_spec *s, char *err, size_t errlen);
/* Stops it (which waits for the data) and destroys it within the destroy
 * limit; 0, or -1 with err naming the first step that failed (every step
 * is tried). */
int cbt_session_finish(const struct cbt_lttng *l, const char *name, char *err, size_t errlen);

/* The run directory of the session daemon the lttng client talks to:
 * /var/run/lttng as root, else $LTTNG_HOME/.lttng or $HOME/.lttng. */
void cbt_sessiond_rundir(char *buf, size_t len);
/* The pid in DIR/lttng-sessiond.pid (0: none) and whether it is alive. */
pid_t cbt_sessiond_pid(const char *rundir);
bool cbt_pid_alive(pid_t p);
/* Starts l->sessiond (--no-kernel) in a session of its own, its output in
 * l->log, and waits up to 10 s for its pid file in rundir.  Its pid; 0 when
 * another daemon came up meanwhile and is used; -1 with err. */
pid_t cbt_sessiond_start(const struct cbt_lttng *l, const char *rundir, char *err, size_t errlen);
/* SIGTERM, then SIGKILL after 10 s; waits for it. */
void cbt_sessiond_stop(pid_t p);

/* The traced program. */
struct cbt_spawn {
    char *const *argv;           /* run with execvp */
    const char *preload;         /* LD_PRELOAD for it */
    const char *const *env;      /* NAME=VALUE set for it (NULL-terminated), and */
    const char *const *env_keep; /* NAME=VALUE set only when NAME is unset */
    bool stdout_to_stderr;       /* its standard output goes to our standard error */
};
/* Runs it and waits for it, forwarding SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * to it.  Its status as a shell gives it (128+N when killed by signal N);
 * *exec_errno is set when it could not be executed at all; -1 when it could
 * not be started (one line said). */
int cbt_spawn_program(const struct cbt_spawn *s, int *exec_errno);
/* Catches those signals for cbt_spawn_program; the last one caught (0: none). */
void cbt_signals_catch(void);
int cbt_signal_caught(void);

#endif
