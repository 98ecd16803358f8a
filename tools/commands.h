/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the commands that live in a file of their own;
 * main.c dispatches to them.  Each parses its own command line and returns
 * the exit status.
 */
#ifndef CBT_COMMANDS_H
#define CBT_COMMANDS_H

#include <stdbool.h>

#include "read/reader.h"

int cbt_cmd_run(int argc, char **argv);  /* run.c */
int cbt_cmd_show(int argc, char **argv); /* show.c */
int cbt_cmd_timeline(int argc, char **argv); /* timeline.c */
int cbt_cmd_report(int argc, char **argv); /* report.c */
int cbt_cmd_export(int argc, char **argv); /* export.c */

/* summary.c: what `summary` and `run` read and print, behind the guard
 * (the argument of cbt_guard_run; returns the exit status). */
struct cbt_summary_job {
    struct cbt_read_opts ro;
    unsigned by;  /* enum cbt_by bits: the extra tables */
    bool json;
    const char *json_path; /* the JSON to this file instead of our standard output (--output-json) */
    bool raw;     /* text: exact bytes and ns instead of human units */
    int jobs;        /* threads reading trace directories (0: one per CPU) */
    double refresh;  /* live: print the summary so far every `refresh` s (0: never) */
    int live_fd;     /* where those go (a copy of our standard output) */
    const char *program; /* `run`: the program traced (a trace without batches is said, not summarised) */
};
int cbt_summary_read(void *arg);

#endif
