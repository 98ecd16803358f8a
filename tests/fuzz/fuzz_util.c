/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the option and value parsers and the human units of
 * tools/base/util.c (--pid, sizes such as CUBATCHTRACE_MAX_MEMORY and
 * --max-memory, "did you mean" over option names, times and sizes printed
 * in the tables, text widths).  The input is NUL-separated strings; the
 * doubles printed are the input's bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static const char *const names[] = {"pid", "begin", "end", "format", "jobs", "waivers", "allow-discarded",
                                    "max-memory", "output", "help", "json", "refresh"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    char buf[64];
    for (char *p = s; p <= s + size; p += strlen(p) + 1) {
        uint64_t v;
        if (cbt_parse_size(p, &v) == 0 && v >= (uint64_t)18e18)
            abort(); /* said in range */
        int64_t *pids = NULL;
        int npids = 0;
        if (cbt_parse_pid(p, &pids, &npids) == 0 && (npids != 1 || pids[0] < 0))
            abort();
        free(pids);
        const char *near = cbt_closest(p, names, sizeof(names) / sizeof(names[0]));
        if (near && strlen(near) > 16)
            abort(); /* one of the names */
        size_t w = cbt_text_width(p);
        if (w > strlen(p))
            abort(); /* a column per byte at most */
    }
    double d[4] = {0};
    memcpy(d, data, size < sizeof(d) ? size : sizeof(d));
    for (int k = 0; k < 4; k++) {
        cbt_fmt_ns(d[k], buf, sizeof(buf));
        cbt_fmt_gbps(d[k], buf, sizeof(buf));
        uint64_t u;
        memcpy(&u, &d[k], sizeof(u));
        cbt_fmt_bytes(u, buf, sizeof(buf));
        if (strlen(buf) >= sizeof(buf) - 1)
            abort(); /* no unit printed past a column's room */
        cbt_rule_value((unsigned)(u % 64), u, buf, sizeof(buf));
    }
    free(s);
    return 0;
}
