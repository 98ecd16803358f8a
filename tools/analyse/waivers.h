/* SPDX-License-Identifier: MIT */
/*
 * Waivers (waivers.c): known findings a team accepts, each with a reason,
 * read from a JSON file (`check --waivers FILE`).
 */
#ifndef CBT_WAIVERS_H
#define CBT_WAIVERS_H

#include <stddef.h>
#include <stdint.h>

#include "analyse/callsite.h"

struct cbt_waiver {
    char *rule;     /* a rule name or a glob of them ("overlap_*") */
    char *object;   /* globs; NULL: any.  object: the object's path or file name */
    char *function; /* the (demangled) function */
    char *file;     /* the source file's path or file name */
    char *reason;
    uint64_t matched;
};

struct cbt_waivers {
    struct cbt_waiver *w;
    size_t n;
};

/* Read FILE; NULL after one line on stderr when it cannot be read or is not
 * a waiver file. */
struct cbt_waivers *cbt_waivers_load(const char *path);
void cbt_waivers_free(struct cbt_waivers *ws);
/* The first waiver that covers a finding of `rule` at call site `cs`, or NULL;
 * counts the match. */
struct cbt_waiver *cbt_waivers_match(struct cbt_waivers *ws, const char *rule, const struct cbt_callsite *cs);

#endif
