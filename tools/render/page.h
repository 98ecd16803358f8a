/* SPDX-License-Identifier: MIT */
/*
 * The report's HTML page (page.c): one page that works offline, inline CSS,
 * the summary's tables, its plots as inline SVG, and the whole summary JSON
 * in a <script type="application/json">.  No script runs.
 */
#ifndef CBT_PAGE_H
#define CBT_PAGE_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* The page of the summary root (the object `summary --json` prints), with
 * plots drawn by gnuplot (NULL: tables only); false after one line on stderr. */
bool cbt_render_page(FILE *o, const json_t *root, const char *gnuplot);

#endif
