/* SPDX-License-Identifier: MIT */
/*
 * gnuplot for the report (gnuplot.c): found on PATH or named, run as a child
 * process with the data inline in its script (its svg terminal), its SVG
 * written inline in a figure beside a table of exactly the numbers it plots.
 */
#ifndef CBT_GNUPLOT_H
#define CBT_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The gnuplot to run: CUBATCHTRACE_GNUPLOT (a path, or a name looked up on
 * PATH), else `gnuplot` on PATH; NULL (and one line on stderr) when none. */
char *cbt_gnuplot_find(void);

/* A gnuplot string: single-quoted ('' for a quote), control characters as spaces. */
void cbt_gp_str(FILE *g, const char *s);

/* A plot being made: the gnuplot script and the table of its numbers. */
struct cbt_plot {
    const char *id, *title, *caption;
    char *script, *table;
    size_t slen, tlen;
    FILE *g, *t;
};

/* A plot begun: its script has the settings every plot shares and the
 * title, its table is open (false after one line on stderr); then drawn
 * (unless gnuplot is NULL: tables only) and written as a figure to o (false
 * after one line on stderr), its memory freed either way. */
bool cbt_plot_open(struct cbt_plot *p, const char *id, const char *title, const char *caption);
bool cbt_plot_emit(FILE *o, struct cbt_plot *p, const char *gnuplot);

#endif
