/* SPDX-License-Identifier: MIT */
/*
 * libcbtdlsymwrap: a dlsym wrapper in the careful manner: it forwards to
 * dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34") (then GLIBC_2.2.5, glibc's
 * older version), never to a name its own dlsym would answer.  It counts the
 * lookups of driver names ("cu...") it sees and prints the count at exit.
 *
 * A versioned lookup passes over unversioned definitions: preloaded before
 * the shim, it reaches the shim's dlsym only if the shim exports dlsym under
 * glibc's versions.  Preloaded after the shim, the shim's dlsym must hand
 * every lookup on to it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

static unsigned long driver_lookups;

/* Not instrumented: a sanitizer's runtime looks up libc's functions with
 * dlsym while it starts, before its shadow memory exists (as the shim's own
 * dlsym, src/doors.c). */
__attribute__((no_sanitize_address, no_sanitize_thread)) void *dlsym(void *handle, const char *name)
{
    static void *(*real)(void *, const char *);
    if (!real) {
        real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!real)
            real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (!real)
            return NULL;
    }
    if (name[0] == 'c' && name[1] == 'u')
        __atomic_fetch_add(&driver_lookups, 1, __ATOMIC_RELAXED);
    return real(handle, name);
}

__attribute__((destructor)) static void report(void)
{
    printf("dlsym wrapper: driver lookups=%lu\n", driver_lookups);
    fflush(stdout);
}
