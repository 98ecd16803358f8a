/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's state (thread.h): one block, one key, freed with the
 * thread.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "thread.h"
#include "util.h"

CBT_TLS struct cbt_thread *cbt_tls_thread;
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void thread_free(void *p)
{
    struct cbt_thread *t = p;
    if (!t)
        return;
    cbt_validator_free(t->validator);
    free(t->src);
    free(t->dst);
    free(t->findings);
    free(t->copies);
    cbt_dict_release(&t->dict);
    cbt_cache_release(&t->cache);
    cbt_gpu_thread_release(&t->gpu_state);
    free(t);
}

static void make_thread_key(void) { (void)pthread_key_create(&thread_key, thread_free); }

CBT_COLD_FN struct cbt_thread *cbt_thread_make(void)
{
    struct cbt_thread *t;
    pthread_once(&thread_key_once, make_thread_key);
    if (posix_memalign((void **)&t, 64, sizeof *t) != 0)
        return NULL;
    memset(t, 0, sizeof *t);
    cbt_tls_thread = t;
    (void)pthread_setspecific(thread_key, t);
    return t;
}
