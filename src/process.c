/* SPDX-License-Identifier: MIT */
/*
 * The cubatchtrace:process event: once per process, who it is in a job of
 * many processes on many hosts.  The hostname is the process's own (its UTS
 * namespace, which may differ from the session daemon's); the rank is the
 * first of OMPI_COMM_WORLD_RANK (Open MPI), PMI_RANK (MPICH, Intel MPI) and
 * SLURM_PROCID (srun) that holds an integer, -1 when none does.  It also
 * names the process image (below), its pid namespace and when it started.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

/*
 * The process image: a random 64-bit id drawn when the library loads (so
 * afresh after exec) and again in a forked child.  Its high 32 bits (the
 * tag, never 0) are the high 32 bits of every batch id of the image, so a
 * reader tells images apart with no field per batch: after exec (same pid),
 * across pid namespaces (every container's pid 1) and for reused pids.
 */
CBT_HOT static uint64_t image_id;
static uint64_t image_start_ns;
CBT_HOT uint64_t cbt_batch_counter; /* the image's batch counter */

static void new_image(void)
{
    uint64_t id = 0;
    if (getrandom(&id, sizeof id, GRND_NONBLOCK) != (ssize_t)sizeof id) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        id = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) * 0x9e3779b97f4a7c15ull;
        id ^= (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&id;
    }
    if (!(id >> 32))
        id |= 1ull << 32;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    __atomic_store_n(&image_start_ns, (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec, __ATOMIC_RELAXED);
    __atomic_store_n(&cbt_batch_counter, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&image_id, id, __ATOMIC_RELEASE);
}

/* At load, so that a child forked before the first batch is an image of its own too. */
__attribute__((constructor)) static void image_at_load(void)
{
    if (!__atomic_load_n(&image_id, __ATOMIC_ACQUIRE))
        new_image();
}

uint64_t cbt_image_id(void)
{
    uint64_t id = __atomic_load_n(&image_id, __ATOMIC_ACQUIRE);
    if (cbt_unlikely(!id)) {
        /* a batch from another library's constructor, before ours ran */
        static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
        pthread_mutex_lock(&m);
        if (!(id = __atomic_load_n(&image_id, __ATOMIC_ACQUIRE))) {
            new_image();
            id = image_id;
        }
        pthread_mutex_unlock(&m);
    }
    return id;
}

CBT_HOT_FN uint64_t cbt_next_batch_id(void)
{
    uint64_t tag = cbt_image_id() & 0xffffffff00000000ull;
    return cbt_next_batch_id_tagged(tag);
}

/* The inode of this process's pid namespace; 0 when it cannot be told. */
static uint64_t pid_namespace(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Once per process image, however many threads make their first batch at
 * once (the others wait for it, as for a pthread_once): a lock and a flag,
 * which a forked child can set back (src/batch.c's after-fork function). */
static pthread_mutex_t process_lock = PTHREAD_MUTEX_INITIALIZER;
static bool process_traced;

/* A forked child is a process of its own: a new image, whose process event
 * its first batch writes again. */
void cbt_process_after_fork_child(void)
{
    new_image();
    pthread_mutex_init(&process_lock, NULL);
    process_traced = false;
}

static void trace_process(void)
{
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
    cbt_tp(process, host, rank, var, gpu, gpu ? cbt_config()->gpu_every : 0, cbt_image_id(), pid_namespace(),
           __atomic_load_n(&image_start_ns, __ATOMIC_RELAXED), __builtin_return_address(0));
}

void cbt_trace_process(void)
{
    pthread_mutex_lock(&process_lock);
    if (!process_traced) {
        trace_process();
        process_traced = true;
    }
    pthread_mutex_unlock(&process_lock);
}
