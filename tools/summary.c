/* SPDX-License-Identifier: MIT */
/*
 * The summary of one or more traces, as `summary` and `run` print it: read,
 * aggregate, print text or JSON.  Runs behind the guard (guard.c), in its
 * child process.
 */
#include "config.h"

#include <stdio.h>

#include "agg.h"
#include "commands.h"
#include "json.h"
#include "text.h"
#include "util.h"

int cbt_summary_read(void *arg)
{
    const struct cbt_summary_job *j = arg;
    struct cbt_agg *a = cbt_agg_new(j->by);
    if (!a) {
        cbt_err("out of memory");
        return 2;
    }
    int rc = cbt_read(&j->ro, a);
    if (rc == 0) {
        cbt_progress();
        cbt_agg_finish(a);
        bool none = j->program && cbt_agg_batches(a) == 0;
        if (none)
            cbt_err("run: %s made no cuMemcpy3DBatchAsync batch that reached the shim: nothing was recorded "
                    "(a statically linked or setuid program does not load it)%s",
                    j->program, j->json ? "" : "; no summary");
        if (j->json)
            rc = cbt_agg_print_json(a, stdout, j->ro.inputs, j->ro.ninputs) == 0 ? 0 : 2;
        else if (!none)
            cbt_agg_print_text(a, stdout, j->ro.inputs, j->ro.ninputs);
    }
    cbt_agg_free(a);
    return rc;
}
