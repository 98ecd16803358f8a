/* SPDX-License-Identifier: MIT */
/*
 * The report's plots (plots.c): bandwidth by op size and direction, GPU time
 * per stream over time, batch sizes, findings by rule; each writes its
 * gnuplot data block and its table from the same numbers.
 */
#ifndef CBT_PLOTS_H
#define CBT_PLOTS_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* The page's "Plots" section of the summary root (gnuplot NULL: a line that
 * they were left out); false after one line on stderr. */
bool cbt_render_plots(FILE *o, const json_t *root, const char *gnuplot);

#endif
