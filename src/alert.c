/* SPDX-License-Identifier: MIT */
/*
 * Alerts on stderr, asked for by CUBATCHTRACE_REPORT=stderr (`run --report
 * stderr`): each finding once per (rule, call site), in the manner of a
 * sanitizer, for users with no tracing set up.  (Not the tool's `report`
 * command, tools/report.c, nor bench/report.)
 *
 *   cubatchtrace: error: row_length_too_small: op 0's source: rowLength 100 is less than the extent width 256 (rows would overlap)
 *     a pointer operand's rowLength is neither 0 nor >= the width
 *     fix: ...
 *     batch 0 (cuMemcpy3DBatchAsync_v2 via symbol) called from ./app(copy_tiles+0x4c)
 *
 * The words and the fix are those of every output (cbt_finding_words,
 * validate/words.c; cbt_rule_fix, catalog.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "alert.h"

/* Seen (rule, caller) pairs: a lock-free open-addressing set; when it is
 * full, further pairs are reported every time rather than lost. */
#define SEEN_SLOTS 4096
static uint64_t seen[SEEN_SLOTS];

static bool first_time(unsigned rule, void *caller)
{
    uint64_t key = ((uint64_t)(uintptr_t)caller << 8 | rule) + 1; /* never 0 */
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < 64; i++) {
        uint64_t *slot = &seen[(h + i) % SEEN_SLOTS];
        uint64_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (cur == key)
            return false;
        if (cur == 0) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(slot, &expected, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return true;
            if (expected == key)
                return false;
        }
    }
    return true;
}

static void name_caller(void *caller, char *buf, size_t len)
{
    Dl_info info;
    if (caller && dladdr(caller, &info) && info.dli_fname) {
        if (info.dli_sname && info.dli_saddr)
            snprintf(buf, len, "%s(%s+0x%tx)", info.dli_fname, info.dli_sname,
                     (char *)caller - (char *)info.dli_saddr);
        else
            snprintf(buf, len, "%s+0x%tx", info.dli_fname, (char *)caller - (char *)info.dli_fbase);
    } else {
        snprintf(buf, len, "%p", caller);
    }
}

void cbt_alert_finding(const struct cbt_finding *f, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t num_ops,
                       uint64_t batch_id, enum cbt_api api, enum cbt_door door, void *caller)
{
    if (!first_time(f->rule, caller))
        return;
    const struct cbt_rule_info *r = cbt_rule(f->rule);
    /* the words every output uses (validate/words.c), and the catalogue's fix */
    const CUDA_MEMCPY3D_BATCH_OP *op = ops && f->op < num_ops ? &ops[f->op] : NULL;
    const CUDA_MEMCPY3D_BATCH_OP *other =
        !cbt_rule_is_attr(f->rule) && ops && f->other_op != CBT_NO_OP && f->other_op < num_ops ? &ops[f->other_op]
                                                                                               : NULL;
    char what[512], site[512];
    cbt_finding_words(f, op, other, cbt_api_is_1d(api), what, sizeof what);
    const char *fix = cbt_rule_fix(f->rule);
    name_caller(caller, site, sizeof site);
    char line[1600];
    int n = snprintf(line, sizeof line,
                     "cubatchtrace: %s: %s: %s\n"
                     "  %s\n"
                     "%s%s%s"
                     "  batch %" PRIu64 " (%s via %s) called from %s\n",
                     cbt_severity_name(f->severity), r ? r->name : "?", what, r ? r->text : "",
                     fix ? "  fix: " : "", fix ? fix : "", fix ? "\n" : "",
                     batch_id & 0xffffffffu /* its number within the process image */, cbt_api_name(api),
                     cbt_door_name(door), site);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
