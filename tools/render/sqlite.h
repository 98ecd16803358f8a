/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): the batches of a trace as an SQLite database
 * (sqlite.c), for `export`.  The reader's whole batches (struct
 * cbt_read_batch) and GPU times go in as they come, row by row, through
 * prepared statements, one transaction per CBT_SQL_ROWS_PER_TX rows, so
 * memory stays flat however large the trace; what is known only at the end
 * (process images, call sites, the meta table) is written by cbt_sql_finish.
 * The tables and their columns are docs/export.md's.
 */
#ifndef CBT_RENDER_SQLITE_H
#define CBT_RENDER_SQLITE_H

#include <stdint.h>

#include "analyse/agg.h"
#include "read/assemble.h"

#define CBT_SQL_ROWS_PER_TX 65536

struct cbt_sql;
/* Opens (creates) the database at path, an empty or missing file, and makes
 * its tables; the aggregate a names hosts and call sites (it must be fed by
 * the same reading).  NULL after one line on stderr. */
struct cbt_sql *cbt_sql_open(const char *path, struct cbt_agg *a);
/* A batch put back together (a cbt_batch_fn). */
void cbt_sql_batch(void *sql, const struct cbt_read_batch *rb);
/* A cubatchtrace:gpu_time event (the reader's gpu callback). */
void cbt_sql_gpu(void *sql, const struct cbt_where *w, const struct cbt_ev_gpu *g);
/* What the reader says of a process image (its cbt_read_out members of the same names). */
void cbt_sql_process(void *sql, const struct cbt_where *w, int64_t rank, const char *rank_var);
void cbt_sql_image(void *sql, const struct cbt_where *w, uint64_t pid_ns, uint64_t start_ns);
/* A meta row (key, value), written at the end. */
void cbt_sql_meta(struct cbt_sql *s, const char *key, const char *value);
/* Once the aggregate is finished: the process images, call sites and meta
 * rows, the last transaction committed.  0, or 2 after one line on stderr. */
int cbt_sql_finish(struct cbt_sql *s);
/* Rows written so far, by table. */
void cbt_sql_counts(const struct cbt_sql *s, uint64_t *batches, uint64_t *ops, uint64_t *findings);
/* The event formats of the batches written: bit f set for format f. */
uint64_t cbt_sql_formats(const struct cbt_sql *s);
/* The open database (csv.c reads it back); closed by cbt_sql_close. */
struct sqlite3 *cbt_sql_db(struct cbt_sql *s);
/* Closes the database; 0, or 2 after one line on stderr (an error of
 * an earlier call counts: a database with rows missing is not finished). */
int cbt_sql_close(struct cbt_sql *s);

#endif
