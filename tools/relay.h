/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): `run --relayd`, one session daemon and one
 * session per host, shared by the job's ranks on it and streamed to a relay
 * daemon (relay.c).
 */
#ifndef CBT_RELAY_H
#define CBT_RELAY_H

#include <stdbool.h>

struct cbt_relay_opts {
    const char *lttng, *sessiond; /* the programs */
    const char *url;              /* lttng's --set-url: net://HOST[:PORTS] or tcp://... */
    const char *session;          /* the host's session name, the same for every rank */
    const char *subbuf, *nsubbuf; /* the channel */
    bool lookup_events;           /* also cubatchtrace:lookup (DEBUG) */
    unsigned destroy_limit_s;     /* how long the keeper waits for `lttng destroy` */
};

struct cbt_relay {
    int gate_fd, users_fd;
};

/* Join the host's session, starting its keeper (and the daemon) when this
 * rank is the first; 0, or 2 after one line on stderr. */
int cbt_relay_join(struct cbt_relay *j, const struct cbt_relay_opts *o);
/* This rank is done: the last one to leave lets the keeper stop the session
 * and the daemon it started.  A rank that is killed leaves all the same. */
void cbt_relay_leave(struct cbt_relay *j);

#endif
