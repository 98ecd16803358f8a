/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the waivers file (tools/analyse/waivers.c; JSON read by
 * jansson, whose parsing is not ours, then checked and matched by us).  The
 * input up to its first NUL is the file; what follows names call sites
 * (rule, object, function, file, NUL-separated) matched against what loaded.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyse/waivers.h"

static const char *next(const char **p, const char *end)
{
    const char *s = *p;
    if (s >= end)
        return "";
    const char *z = memchr(s, 0, (size_t)(end - s));
    if (!z)
        return "";
    *p = z + 1;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        if ((fd = memfd_create("waivers", MFD_CLOEXEC)) < 0)
            abort();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    const char *d = (const char *)data, *end = d + size;
    const char *z = memchr(d, 0, size);
    size_t flen = z ? (size_t)(z - d) : size;
    if (ftruncate(fd, 0) != 0 || pwrite(fd, d, flen, 0) != (ssize_t)flen)
        abort();
    struct cbt_waivers *ws = cbt_waivers_load(path);
    if (!ws)
        return 0;
    const char *p = z ? z + 1 : end;
    for (int k = 0; k < 4 && p < end; k++) {
        const char *rule = next(&p, end);
        struct cbt_callsite cs;
        memset(&cs, 0, sizeof(cs));
        cs.object = next(&p, end);
        snprintf(cs.function, sizeof(cs.function), "%s", next(&p, end));
        snprintf(cs.file, sizeof(cs.file), "%s", next(&p, end));
        struct cbt_waiver *w = cbt_waivers_match(ws, rule, &cs);
        if (w && (!w->rule || !w->reason))
            abort(); /* a waiver that loaded has its rule and reason */
    }
    cbt_waivers_free(ws);
    return 0;
}
