/* SPDX-License-Identifier: MIT */
/*
 * The shim's settings: CUBATCHTRACE_* read once from the environment
 * (secure_getenv), each that is not understood said once on stderr.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cubatchtrace/events.h>

#include "settings.h"

CBT_HOT struct cbt_config cbt_config_table;
CBT_HOT uint32_t cbt_chunk3d = CBT_EV_CHUNK3D;
CBT_HOT uint32_t cbt_chunk1d = CBT_EV_CHUNK1D;
CBT_HOT int cbt_config_ready;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* A size as lttng enable-channel --subbuf-size takes it (bytes, or with k,
 * M or G, and KiB, MB...); 0 when it is not one. */
static uint64_t parse_size(const char *v)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || v[0] == '-')
        return 0;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (shift && *end == 'i')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end || n > (UINT64_MAX >> shift))
        return 0;
    return (uint64_t)n << shift;
}

/* The chunk of at least `least` and at most `most` ops or copies of `each`
 * bytes that a sub-buffer of sb bytes holds, `fixed` bytes of it taken. */
static uint32_t chunk_for(uint64_t sb, uint64_t fixed, uint64_t each, uint32_t least, uint32_t most)
{
    uint64_t n = sb > fixed ? (sb - fixed) / each : 0;
    return n < least ? least : n > most ? most : (uint32_t)n;
}

static void read_chunks(void)
{
    const char *v = secure_getenv("CUBATCHTRACE_SUBBUF_SIZE");
    if (!v || !*v)
        return;
    uint64_t sb = parse_size(v);
    if (!sb) {
        cbt_warn_once(NULL, "CUBATCHTRACE_SUBBUF_SIZE=%s is not a size such as 16K or 1M: a large batch is written "
                      "%d ops (%d copies) an event", v, CBT_EV_CHUNK3D, CBT_EV_CHUNK1D);
        return;
    }
    cbt_chunk3d = chunk_for(sb, CBT_EV_CHUNK_SLACK, CBT_EV_OP_SIZE + 4, CBT_EV_CHUNK3D, CBT_EV_CHUNK3D_MAX);
    cbt_chunk1d = chunk_for(sb, CBT_EV_CHUNK_SLACK + CBT_EV_ATTR_BYTES1D, 3 * 8 + 4, CBT_EV_CHUNK1D,
                            CBT_EV_CHUNK1D_MAX);
}

static void read_config(void)
{
    read_chunks();
    const char *m = secure_getenv("CUBATCHTRACE_MODE");
    cbt_config_table.mode = CBT_MODE_OBSERVE;
    if (m && *m) {
        if (!strcmp(m, "off"))
            cbt_config_table.mode = CBT_MODE_OFF;
        else if (!strcmp(m, "strict"))
            cbt_config_table.mode = CBT_MODE_STRICT;
        else if (strcmp(m, "observe"))
            cbt_warn_once(NULL, "CUBATCHTRACE_MODE=%s is not one of observe, strict, off: using observe", m);
    }
    const char *s = secure_getenv("CUBATCHTRACE_STRICT");
    cbt_config_table.strict_hazards = s && !strcmp(s, "hazards");
    if (s && *s && !cbt_config_table.strict_hazards)
        cbt_warn_once(NULL, "CUBATCHTRACE_STRICT=%s is not supported (only 'hazards'): strict mode refuses errors only", s);
    const char *r = secure_getenv("CUBATCHTRACE_REPORT");
    cbt_config_table.report_stderr = r && !strcmp(r, "stderr");
    if (r && *r && !cbt_config_table.report_stderr)
        cbt_warn_once(NULL, "CUBATCHTRACE_REPORT=%s is not supported (only 'stderr'): no report", r);
    const char *g = secure_getenv("CUBATCHTRACE_GPU_TIME");
    if (g && *g) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(g, &end, 10);
        if (errno || *end || g[0] == '-' || n > 1000000)
            cbt_warn_once(NULL, "CUBATCHTRACE_GPU_TIME=%s is not 0, 1 or a number N of batches (one timed in N): "
                          "batches are not GPU-timed", g);
        else if (n) {
            cbt_config_table.gpu_time = true;
            cbt_config_table.gpu_every = (uint32_t)n;
        }
    }
    const char *st = secure_getenv("CUBATCHTRACE_STACK");
    if (st && *st) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(st, &end, 10);
        if (errno || *end || st[0] == '-' || n > CBT_EV_STACK_MAX)
            cbt_warn_once(NULL, "CUBATCHTRACE_STACK=%s is not a number of frames from 0 to %d: no stack is recorded",
                          st, CBT_EV_STACK_MAX);
        else
            cbt_config_table.stack_depth = (uint8_t)n;
    }
    /* Settings of earlier versions, now without effect: say so once. */
    static const char *const gone[] = {"CUBATCHTRACE_RECORD", "CUBATCHTRACE_QUEUE_KB"};
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
        if (secure_getenv(gone[i]))
            cbt_warn_once(NULL, "%s is no longer read: every batch is recorded on its calling thread", gone[i]);
}

const struct cbt_config *cbt_config_slow(void)
{
    pthread_once(&config_once, read_config);
    __atomic_store_n(&cbt_config_ready, 1, __ATOMIC_RELEASE);
    return &cbt_config_table;
}
