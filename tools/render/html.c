/* SPDX-License-Identifier: MIT */
/*
 * The report's HTML pieces (html.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "render/html.h"

void cbt_html_esc(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default: fputc(*s, o);
        }
    }
}

json_int_t cbt_jint(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

const char *cbt_jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

void cbt_json_exact(FILE *o, const json_t *v)
{
    if (json_is_integer(v))
        fprintf(o, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        fprintf(o, "%.17g", json_real_value(v));
    else
        fputs("null", o);
}

void cbt_html_cell(FILE *o, const json_t *v, enum cbt_unit u)
{
    char buf[64];
    if (u == U_TEXT) {
        fputs("<td class=\"t\">", o);
        if (json_is_string(v))
            cbt_html_esc(o, json_string_value(v));
        else if (json_is_number(v))
            cbt_json_exact(o, v);
        else
            fputs("–", o);
        fputs("</td>", o);
        return;
    }
    if (!json_is_number(v)) {
        fputs("<td>–</td>", o);
        return;
    }
    double d = json_number_value(v);
    const char *s = buf;
    switch (u) {
    /* the text summary's units (util.c); a mean of bytes rounds to whole bytes there too */
    case U_BYTES:
        cbt_fmt_bytes(json_is_integer(v) ? (uint64_t)json_integer_value(v) : (uint64_t)(d + 0.5), buf, sizeof(buf));
        break;
    case U_NS: cbt_fmt_ns(d, buf, sizeof(buf)); break;
    case U_GBPS: cbt_fmt_gbps(d, buf, sizeof(buf)); break;
    case U_PCT: snprintf(buf, sizeof(buf), "%.2f %%", d); break;
    default:
        if (json_is_integer(v))
            snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else
            snprintf(buf, sizeof(buf), "%.3f", d);
    }
    if (u == U_COUNT) {
        fprintf(o, "<td>%s</td>", s);
        return;
    }
    fputs("<td title=\"", o); /* the exact figure, on hovering */
    cbt_json_exact(o, v);
    fprintf(o, "\">%s</td>", s);
}

void cbt_html_rows_table(FILE *o, const char *id, const json_t *rows, const struct cbt_col *cols, size_t ncols,
                         const char *empty)
{
    if (!json_array_size(rows)) {
        fprintf(o, "<p class=\"none\">%s</p>\n", empty);
        return;
    }
    fprintf(o, "<table class=\"rows\" id=\"table-%s\"><thead><tr>", id);
    for (size_t c = 0; c < ncols; c++)
        fprintf(o, "<th>%s</th>", cols[c].head);
    fputs("</tr></thead><tbody>\n", o);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        fputs("<tr>", o);
        for (size_t c = 0; c < ncols; c++)
            cbt_html_cell(o, json_object_get(r, cols[c].key), cols[c].u);
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
}
