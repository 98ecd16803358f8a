/* SPDX-License-Identifier: MIT */
/*
 * Waivers: findings a team accepts (a third-party library it cannot change)
 * while `check` still fails on any other.  The file is JSON, read with
 * jansson:
 *
 *   {"waivers": [
 *     {"rule": "overlap_dst_dst", "object": "libvendor.so*",
 *      "function": "vendor::*", "file": "*.cc",
 *      "reason": "the vendor's copies overlap by design; ticket 1234"}
 *   ]}
 *
 * rule and reason are required, and at least one of object, function and
 * file: a waiver names where the finding is accepted, never a rule
 * everywhere.  Patterns are fnmatch(3) globs; object and file match the full
 * path or its last component.  A finding is waived when every pattern that a
 * waiver gives matches its call site.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <cubatchtrace/catalog.h>

#include "base/util.h"
#include "analyse/waivers.h"

void cbt_waivers_free(struct cbt_waivers *ws)
{
    if (!ws)
        return;
    for (size_t i = 0; i < ws->n; i++) {
        free(ws->w[i].rule);
        free(ws->w[i].object);
        free(ws->w[i].function);
        free(ws->w[i].file);
        free(ws->w[i].reason);
    }
    free(ws->w);
    free(ws);
}

static int member(json_t *o, const char *key, char **out, const char *path, size_t i)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return 0;
    if (!json_is_string(v) || !json_string_length(v)) {
        cbt_err("check: --waivers %s: waiver %zu: \"%s\" must be a non-empty string", path, i + 1, key);
        return -1;
    }
    *out = strdup(json_string_value(v));
    return *out ? 0 : -1;
}

struct cbt_waivers *cbt_waivers_load(const char *path)
{
    json_error_t e;
    json_t *root = json_load_file(path, 0, &e);
    if (!root) {
        cbt_err("check: --waivers %s: line %d: %s", path, e.line, e.text);
        return NULL;
    }
    json_t *arr = json_object_get(root, "waivers");
    struct cbt_waivers *ws = calloc(1, sizeof(*ws));
    if (!json_is_array(arr)) {
        cbt_err("check: --waivers %s: expected an object with an array \"waivers\"", path);
        goto fail;
    }
    if (!ws || !(ws->w = calloc(json_array_size(arr) + 1, sizeof(*ws->w))))
        goto fail;
    static const char *const known[] = {"rule", "object", "function", "file", "reason"};
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i);
        struct cbt_waiver *w = &ws->w[ws->n++];
        if (!json_is_object(o)) {
            cbt_err("check: --waivers %s: waiver %zu is not an object", path, i + 1);
            goto fail;
        }
        const char *key;
        json_t *v;
        json_object_foreach(o, key, v) {
            size_t k = 0;
            while (k < 5 && strcmp(key, known[k]) != 0)
                k++;
            if (k == 5) {
                const char *near = cbt_closest(key, known, 5);
                cbt_err("check: --waivers %s: waiver %zu: unknown member \"%s\"%s%s%s", path, i + 1, key,
                        near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
                goto fail;
            }
        }
        if (member(o, "rule", &w->rule, path, i) || member(o, "object", &w->object, path, i) ||
            member(o, "function", &w->function, path, i) || member(o, "file", &w->file, path, i) ||
            member(o, "reason", &w->reason, path, i))
            goto fail;
        if (!w->rule || !w->reason) {
            cbt_err("check: --waivers %s: waiver %zu: \"rule\" and \"reason\" are required", path, i + 1);
            goto fail;
        }
        if (!w->object && !w->function && !w->file) {
            cbt_err("check: --waivers %s: waiver %zu: give the call site it accepts (\"object\", \"function\" or "
                    "\"file\"): a waiver never accepts a rule everywhere",
                    path, i + 1);
            goto fail;
        }
        bool any = false;
        for (unsigned r = 0; r < CBT_RULE_COUNT; r++)
            any |= fnmatch(w->rule, cbt_rules[r].name, 0) == 0;
        if (!any) {
            const char *names[CBT_RULE_COUNT];
            for (unsigned r = 0; r < CBT_RULE_COUNT; r++)
                names[r] = cbt_rules[r].name;
            const char *near = cbt_closest(w->rule, names, CBT_RULE_COUNT);
            cbt_err("check: --waivers %s: waiver %zu: \"%s\" names no rule%s%s%s (see cubatchtrace rules)", path, i + 1,
                    w->rule, near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
            goto fail;
        }
    }
    json_decref(root);
    return ws;
fail:
    json_decref(root);
    cbt_waivers_free(ws);
    return NULL;
}

/* A glob against a path or its last component. */
static bool path_match(const char *pat, const char *path)
{
    if (!path || !*path)
        return false;
    if (fnmatch(pat, path, 0) == 0)
        return true;
    const char *s = strrchr(path, '/');
    return s && fnmatch(pat, s + 1, 0) == 0;
}

struct cbt_waiver *cbt_waivers_match(struct cbt_waivers *ws, const char *rule, const struct cbt_callsite *cs)
{
    for (size_t i = 0; ws && i < ws->n; i++) {
        struct cbt_waiver *w = &ws->w[i];
        if (fnmatch(w->rule, rule, 0) != 0)
            continue;
        if (w->object && !path_match(w->object, cs->object))
            continue;
        if (w->function && (!cs->function[0] || fnmatch(w->function, cs->function, 0) != 0))
            continue;
        if (w->file && !(cs->line && path_match(w->file, cs->file)))
            continue;
        w->matched++;
        return w;
    }
    return NULL;
}
