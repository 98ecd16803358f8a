/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the tables of an export database as CSV files
 * (csv.c), one per table, for `export --format csv`.
 */
#ifndef CBT_RENDER_CSV_H
#define CBT_RENDER_CSV_H

struct sqlite3;

/* Writes DIR/TABLE.csv for every table and view of db (docs/export.md):
 * a header line of column names, then one line per row (RFC 4180: fields
 * with a comma, quote or line break quoted; NULL as an empty field).
 * 0, or 2 after one line on stderr. */
int cbt_csv_write(struct sqlite3 *db, const char *dir);

#endif
