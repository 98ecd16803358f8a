/* SPDX-License-Identifier: MIT */
/*
 * libcbtnext: wrappers in the manner of every interposing library: cbt_who()
 * and puts() find the definition they wrap with dlsym(RTLD_NEXT, ...), which
 * glibc resolves relative to the library that called dlsym.  Answered from
 * any other library's point of view (the shim's), RTLD_NEXT would find these
 * wrappers themselves and they would recurse.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

const char *cbt_who(void);
/* Referenced so that libcbtbase stays a dependency (--as-needed would drop it). */
const char *cbt_base_name(void);

const char *cbt_who(void)
{
    static char buf[64];
    const char *(*next)(void) = (const char *(*)(void))dlsym(RTLD_NEXT, "cbt_who");
    if (!next)
        return cbt_base_name() ? "next>(none)" : "";
    if (next == cbt_who)
        return "next>(itself)";
    snprintf(buf, sizeof buf, "next>%s", next());
    return buf;
}

int puts(const char *s)
{
    static int depth;
    int (*next)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
    if (!next || next == puts || depth > 0)
        return EOF; /* the wrapper found itself: print nothing rather than recurse */
    depth++;
    fputs("[wrapped] ", stdout);
    int r = next(s);
    depth--;
    return r;
}
