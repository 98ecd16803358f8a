/* SPDX-License-Identifier: MIT */
/*
 * The report's HTML pieces over the summary JSON (html.c): escaped text,
 * exact numbers, cells in the text summary's human units (util.c's
 * cbt_fmt_*: a cell reads as `summary` prints it), tables of rows.
 */
#ifndef CBT_HTML_H
#define CBT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* A member of a JSON object: an integer (0 when none), a string ("" when none). */
json_int_t cbt_jint(const json_t *o, const char *key);
const char *cbt_jstr(const json_t *o, const char *key);

/* Text of the trace (names, paths) as HTML text or attribute value. */
void cbt_html_esc(FILE *o, const char *s);
/* A JSON number exactly as the plotted-numbers tables and the data blocks hold it. */
void cbt_json_exact(FILE *o, const json_t *v);

enum cbt_unit { U_TEXT, U_COUNT, U_BYTES, U_NS, U_GBPS, U_PCT };
struct cbt_col {
    const char *head, *key;
    enum cbt_unit u;
};
/* A cell of v in unit u (the exact figure on hovering). */
void cbt_html_cell(FILE *o, const json_t *v, enum cbt_unit u);
/* A table of the summary's rows (objects); nothing but a line when empty. */
void cbt_html_rows_table(FILE *o, const char *id, const json_t *rows, const struct cbt_col *cols, size_t ncols,
                         const char *empty);

#endif
