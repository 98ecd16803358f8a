/*
 * CUBATCHTRACE_REPORT=stderr: each finding once per (rule, call site), in
 * the manner of a sanitizer, for users with no tracing set up.
 *
 *   cubatchtrace: error: row_length_too_small in op 0 (src): value 100, limit 256
 *     a pointer operand's rowLength is neither 0 nor >= the width
 *     batch 0 (cuMemcpy3DBatchAsync_v2 via symbol) called from ./app(copy_tiles+0x4c)
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

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

void cbt_report_finding(const struct cbt_finding *f, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t num_ops,
                        uint64_t batch_id, enum cbt_api api, enum cbt_door door, void *caller)
{
    if (!first_time(f->rule, caller))
        return;
    const struct cbt_rule_info *r = cbt_rule(f->rule);
    char where[96] = "", other[48] = "", extent[96] = "", site[512];
    if (f->op != CBT_NO_OP) {
        snprintf(where, sizeof where, " in op %" PRIu64 "%s%s%s", f->op, f->side ? " (" : "",
                 f->side ? cbt_side_name(f->side) : "", f->side ? ")" : "");
        if (ops && f->op < num_ops)
            snprintf(extent, sizeof extent, ", extent %zux%zux%zu", ops[f->op].extent.width,
                     ops[f->op].extent.height, ops[f->op].extent.depth);
    }
    if (f->other_op != CBT_NO_OP)
        snprintf(other, sizeof other, " and op %" PRIu64, f->other_op);
    name_caller(caller, site, sizeof site);
    char line[1400];
    int n = snprintf(line, sizeof line,
                     "cubatchtrace: %s: %s%s%s: value %" PRIu64 " (0x%" PRIx64 "), limit %" PRIu64 "%s\n"
                     "  %s\n"
                     "  batch %" PRIu64 " (%s via %s) called from %s\n",
                     cbt_severity_name(f->severity), r ? r->name : "?", where, other, f->value, f->value, f->limit,
                     extent, r ? r->text : "", batch_id, cbt_api_name(api), cbt_door_name(door), site);
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
