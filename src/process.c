/* SPDX-License-Identifier: MIT */
/*
 * The cubatchtrace:process event: once per process, who it is in a job of
 * many processes on many hosts.  The hostname is the process's own (its UTS
 * namespace, which may differ from the session daemon's); the rank is the
 * first of OMPI_COMM_WORLD_RANK (Open MPI), PMI_RANK (MPICH, Intel MPI) and
 * SLURM_PROCID (srun) that holds an integer, -1 when none does.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "process.h"
#include "settings.h"
#include "tp.h"

static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};

static int64_t job_rank(const char **var)
{
    for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
        const char *v = getenv(rank_vars[i]);
        if (!v || !*v)
            continue;
        char *end;
        errno = 0;
        long long r = strtoll(v, &end, 10);
        if (errno || *end || r < 0)
            continue;
        *var = rank_vars[i];
        return (int64_t)r;
    }
    *var = "";
    return -1;
}

/* Once per process, however many threads make their first batch at once. */
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

/* A forked child is a process of its own: its next batch takes the first
 * batch's path again (src/batch.c), which writes its process event. */
static void in_child(void)
{
    process_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    __atomic_store_n(&cbt_ready, 0, __ATOMIC_RELEASE);
}

static void trace_process(void)
{
    static int atfork_installed;
    if (!atfork_installed) {
        atfork_installed = 1;
        pthread_atfork(NULL, NULL, in_child);
    }
    if (!cbt_tp_enabled(process))
        return;
    char host[256];
    if (gethostname(host, sizeof(host)) != 0)
        host[0] = 0;
    host[sizeof(host) - 1] = 0;
    const char *var;
    int64_t rank = job_rank(&var);
    /* gpu_time 1 only where its events are recorded too: a reader then
     * counts a batch without one as not read back */
    int gpu = cbt_config()->gpu_time && cbt_tp_enabled(gpu_time);
    cbt_tp(process, host, rank, var, gpu, __builtin_return_address(0));
}

void cbt_trace_process(void) { pthread_once(&process_once, trace_process); }
