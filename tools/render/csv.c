/* SPDX-License-Identifier: MIT */
/*
 * The export as CSV: the database's tables read back with SQLite and
 * written one file each, so the CSV files and the database never disagree
 * on a column.  Rows stream through one statement per table.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/util.h"
#include "render/csv.h"

/* In the order docs/export.md lists them. */
static const char *const tables[] = {"meta", "process_image", "thread", "stream", "batch",
                                     "op", "attribute", "finding", "gpu_time", "call_site", "allocation"};

static void put_field(FILE *f, const unsigned char *t)
{
    if (!strpbrk((const char *)t, ",\"\r\n")) {
        fputs((const char *)t, f);
        return;
    }
    fputc('"', f);
    for (; *t; t++) {
        if (*t == '"')
            fputc('"', f);
        fputc(*t, f);
    }
    fputc('"', f);
}

static int write_table(sqlite3 *db, const char *dir, const char *table)
{
    char sql[128], *path = NULL;
    snprintf(sql, sizeof(sql), "SELECT * FROM %s", table);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK) {
        cbt_err("cannot read table %s back: %s", table, sqlite3_errmsg(db));
        return 2;
    }
    if (asprintf(&path, "%s/%s.csv", dir, table) < 0) {
        sqlite3_finalize(q);
        cbt_err("out of memory");
        return 2;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        cbt_err("cannot write %s: %s", path, strerror(errno));
        free(path);
        sqlite3_finalize(q);
        return 2;
    }
    int n = sqlite3_column_count(q), rc;
    for (int c = 0; c < n; c++) {
        if (c)
            fputc(',', f);
        put_field(f, (const unsigned char *)sqlite3_column_name(q, c));
    }
    fputc('\n', f);
    uint64_t rows = 0;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        for (int c = 0; c < n; c++) {
            if (c)
                fputc(',', f);
            switch (sqlite3_column_type(q, c)) {
            case SQLITE_NULL: break;
            case SQLITE_INTEGER: fprintf(f, "%lld", (long long)sqlite3_column_int64(q, c)); break;
            default: put_field(f, sqlite3_column_text(q, c)); break;
            }
        }
        fputc('\n', f);
        if (++rows % 65536 == 0)
            cbt_progress();
    }
    int st = 0;
    if (rc != SQLITE_DONE) {
        cbt_err("cannot read table %s back: %s", table, sqlite3_errmsg(db));
        st = 2;
    }
    if (ferror(f) | (fclose(f) != 0)) {
        if (!st)
            cbt_err("cannot write %s: %s", path, strerror(errno));
        st = 2;
    }
    sqlite3_finalize(q);
    free(path);
    return st;
}

int cbt_csv_write(sqlite3 *db, const char *dir)
{
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
        if (write_table(db, dir, tables[i]) != 0)
            return 2;
    return 0;
}
