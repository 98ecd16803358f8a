/* SPDX-License-Identifier: MIT */
/*
 * The batches of a trace as an SQLite database (libsqlite3): one row per
 * batch, op, attribute and finding as the reader hands each whole batch
 * over, through prepared statements, in transactions of
 * CBT_SQL_ROWS_PER_TX rows.  Nothing of a batch is kept once its rows are
 * written (op rows wait, as values, until OP_GROUP of them go in by one
 * statement), so memory is SQLite's page cache and the reader's own, whatever
 * the size of the trace.  What only the end knows (the process images' numbers,
 * the call sites named from the statedump, the meta table) is written last.
 *
 * SQLite's own work (binding, encoding records, the B-tree) is most of an
 * export's CPU, so with a second CPU it runs on a thread of its own: the
 * reader's thread turns each batch into commands (a statement's values, its
 * step, a row done) in blocks of QBLOCK_WORDS, and the writing thread binds
 * and steps them, in the same order, while the reader goes on.  QBLOCKS
 * blocks bound the memory; the reader waits when all are full.  The
 * connection is used by one thread at a time: the writing thread from the
 * first batch to cbt_sql_finish's drain, the command's thread before and
 * after.  With one CPU the blocks are replayed on the reader's thread.
 *
 * The file is a scratch file of the command's (export.c renames it once
 * whole), so SQLite keeps no rollback journal and does not sync: a failure
 * leaves a file that is removed, never one that looks finished.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include <cubatchtrace/catalog.h>
#include <cubatchtrace/validate.h>

#include "analyse/callsite.h"
#include "analyse/classes.h"
#include "base/util.h"
#include "render/sqlite.h"

/* The schema (docs/export.md says what each column means). */
static const char schema[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;\n"
    "CREATE TABLE process_image (process_key INTEGER PRIMARY KEY, host TEXT NOT NULL, pid INTEGER,"
    " image INTEGER, images_of_pid INTEGER, image_tag TEXT, pid_ns INTEGER, start_ns INTEGER, procname TEXT,"
    " rank INTEGER, rank_var TEXT);\n"
    "CREATE TABLE thread (process_key INTEGER NOT NULL REFERENCES process_image, tid INTEGER NOT NULL,"
    " batches INTEGER NOT NULL, first_ns INTEGER, last_ns INTEGER, PRIMARY KEY (process_key, tid)) WITHOUT ROWID;\n"
    "CREATE TABLE stream (process_key INTEGER NOT NULL REFERENCES process_image, stream INTEGER NOT NULL,"
    " stream_id INTEGER NOT NULL, device INTEGER, batches INTEGER NOT NULL,"
    " PRIMARY KEY (process_key, stream, stream_id)) WITHOUT ROWID;\n"
    "CREATE TABLE batch (batch_key INTEGER PRIMARY KEY, process_key INTEGER NOT NULL REFERENCES process_image,"
    " id INTEGER NOT NULL, batch_id INTEGER NOT NULL, state TEXT NOT NULL, ts_ns INTEGER,"
    " api TEXT, door TEXT, outcome TEXT, result TEXT, result_code INTEGER, refused_in_capture INTEGER,"
    " num_ops INTEGER, ops_recorded INTEGER, flags INTEGER, op_list INTEGER, stream INTEGER, stream_id INTEGER,"
    " context INTEGER, device INTEGER, capture TEXT, fail_idx INTEGER, driver_ns INTEGER, tid INTEGER,"
    " caller INTEGER, device_count INTEGER, format INTEGER, rules INTEGER, validated INTEGER,"
    " inline_findings INTEGER, srcs INTEGER, sizes INTEGER, attrs INTEGER, attrs_idxs INTEGER, num_attrs INTEGER,"
    " attrs_recorded INTEGER, abi INTEGER, ops INTEGER NOT NULL, bytes INTEGER NOT NULL, first_op_key INTEGER,"
    " gpu_status TEXT, gpu_ns INTEGER, gpu_start_ns INTEGER, gpu_end_ns INTEGER);\n"
    /* the ops' stored rows: enumerations as their numbers, array operands and a pointer's rowLength,
     * layerHeight and locHint where not all 0 aside (op_array, op_pointer); the view op below gives them
     * back by name, one row per op as documented (fewer, narrower values per op row: SQLite's cost is
     * per value bound and encoded); no key of their own: their rowids count them in the order written
     * (SQLite's append, the cheapest insert), and a batch's are batch.first_op_key to first_op_key + ops - 1 */
    "CREATE TABLE op_row (batch_key INTEGER NOT NULL REFERENCES batch, i INTEGER NOT NULL,"
    " src_type INTEGER, src_kind INTEGER, src_device INTEGER, src_ptr INTEGER, src_alloc_base INTEGER, src_alloc_size INTEGER,"
    " dst_type INTEGER, dst_kind INTEGER, dst_device INTEGER, dst_ptr INTEGER, dst_alloc_base INTEGER, dst_alloc_size INTEGER,"
    " width INTEGER, height INTEGER, depth INTEGER, access_order INTEGER, flags INTEGER, bytes INTEGER,"
    " direction INTEGER);\n"
    "CREATE TABLE op_pointer (batch_key INTEGER NOT NULL REFERENCES batch, i INTEGER NOT NULL, side TEXT NOT NULL,"
    " row_length INTEGER, layer_height INTEGER, loc_type INTEGER, loc_id INTEGER,"
    " PRIMARY KEY (batch_key, i, side)) WITHOUT ROWID;\n"
    "CREATE TABLE op_array (batch_key INTEGER NOT NULL REFERENCES batch, i INTEGER NOT NULL, side TEXT NOT NULL,"
    " array INTEGER, x INTEGER, y INTEGER, z INTEGER, array_width INTEGER, array_height INTEGER, array_depth INTEGER,"
    " elem_size INTEGER, PRIMARY KEY (batch_key, i, side)) WITHOUT ROWID;\n"
    "CREATE TABLE enum_name (what TEXT NOT NULL, code INTEGER NOT NULL, name TEXT NOT NULL,"
    " PRIMARY KEY (what, code)) WITHOUT ROWID;\n"
#define NAME_(what, col) \
    " coalesce((SELECT name FROM enum_name WHERE what = '" what "' AND code = o." col "), CAST(o." col " AS TEXT)) AS " col ","
/* x's rowLength, layerHeight or locHint column: its op_pointer value, 0
 * without one; NULL unless x is a POINTER operand (1, asserted below) */
#define PTR_(x, col) \
    " CASE WHEN o." x "_type = 1 THEN coalesce(" x "p." col ", 0) END"
#define SIDE_(x) \
    NAME_("operand_type", x "_type") NAME_("memkind", x "_kind") " o." x "_device, o." x "_ptr, " x "a.array AS " x "_array," \
    " " x "a.x AS " x "_x, " x "a.y AS " x "_y, " x "a.z AS " x "_z," PTR_(x, "row_length") " AS " x "_row_length," \
    PTR_(x, "layer_height") " AS " x "_layer_height, coalesce((SELECT name FROM enum_name WHERE what = 'location' AND code =" \
    PTR_(x, "loc_type") "), CAST(" PTR_(x, "loc_type") " AS TEXT)) AS " x "_loc_type," \
    PTR_(x, "loc_id") " AS " x "_loc_id, o." x "_alloc_base, o." x "_alloc_size," \
    " " x "a.array_width AS " x "_array_width, " x "a.array_height AS " x "_array_height," \
    " " x "a.array_depth AS " x "_array_depth, " x "a.elem_size AS " x "_elem_size,"
    "CREATE VIEW op AS SELECT b.batch_key, o.i," SIDE_("src") SIDE_("dst")
    " o.width, o.height, o.depth," NAME_("access_order", "access_order") " o.flags, o.bytes,"
    " coalesce((SELECT name FROM enum_name WHERE what = 'direction' AND code = o.direction), 'unknown') AS direction"
    " FROM batch b JOIN op_row o ON o.rowid BETWEEN b.first_op_key AND b.first_op_key + b.ops - 1"
    " LEFT JOIN op_array srca ON srca.batch_key = o.batch_key AND srca.i = o.i AND srca.side = 'src'"
    " LEFT JOIN op_array dsta ON dsta.batch_key = o.batch_key AND dsta.i = o.i AND dsta.side = 'dst'"
    " LEFT JOIN op_pointer srcp ON srcp.batch_key = o.batch_key AND srcp.i = o.i AND srcp.side = 'src'"
    " LEFT JOIN op_pointer dstp ON dstp.batch_key = o.batch_key AND dstp.i = o.i AND dstp.side = 'dst';\n"
#undef PTR_
#undef SIDE_
#undef NAME_
    "CREATE TABLE attribute (batch_key INTEGER NOT NULL REFERENCES batch, k INTEGER NOT NULL, idx INTEGER,"
    " access_order TEXT, flags INTEGER, src_loc_type TEXT, src_loc_id INTEGER, dst_loc_type TEXT,"
    " dst_loc_id INTEGER, PRIMARY KEY (batch_key, k)) WITHOUT ROWID;\n"
    "CREATE TABLE finding (finding_key INTEGER PRIMARY KEY, batch_key INTEGER NOT NULL REFERENCES batch,"
    " rule TEXT, severity TEXT, op INTEGER, other_op INTEGER, side TEXT, value INTEGER, limit_value INTEGER,"
    " inline INTEGER, reader INTEGER NOT NULL);\n"
    "CREATE TABLE gpu_time (gpu_key INTEGER PRIMARY KEY, batch_key INTEGER REFERENCES batch,"
    " process_key INTEGER NOT NULL REFERENCES process_image, id INTEGER NOT NULL, batch_id INTEGER NOT NULL,"
    " ts_ns INTEGER, status TEXT, gpu_ns INTEGER, start_rel_ns INTEGER, gpu_start_ns INTEGER, gpu_end_ns INTEGER,"
    " tid INTEGER, api TEXT, stream INTEGER, stream_id INTEGER, device INTEGER, driver_ns INTEGER, ops INTEGER,"
    " bytes INTEGER, src_kind TEXT, dst_kind TEXT, src_device INTEGER, dst_device INTEGER);\n"
    "CREATE TABLE call_site (process_key INTEGER NOT NULL REFERENCES process_image, caller INTEGER NOT NULL,"
    " name TEXT, object TEXT, offset INTEGER, function TEXT, file TEXT, line INTEGER,"
    " PRIMARY KEY (process_key, caller)) WITHOUT ROWID;\n"
    "CREATE UNIQUE INDEX batch_by_id ON batch (process_key, batch_id);\n"
    "CREATE INDEX finding_by_batch ON finding (batch_key);\n"
    "CREATE VIEW allocation AS"
    " SELECT b.process_key, o.src_kind AS kind, o.src_device AS device, o.src_alloc_base AS base,"
    " o.src_alloc_size AS size FROM op o JOIN batch b USING (batch_key) WHERE o.src_alloc_size IS NOT NULL"
    " UNION SELECT b.process_key, o.dst_kind, o.dst_device, o.dst_alloc_base, o.dst_alloc_size"
    " FROM op o JOIN batch b USING (batch_key) WHERE o.dst_alloc_size IS NOT NULL;\n";

_Static_assert(CU_MEMCPY_OPERAND_TYPE_POINTER == 1, "the view op takes operand type 1 for POINTER");

enum { ST_BATCH, ST_OP, ST_OP_GROUP, ST_OP_ARRAY, ST_OP_POINTER, ST_ATTR, ST_FINDING, ST_THREAD, ST_STREAM, ST_GPU, ST_GPU_ROW, ST_COUNT };
static const char *const stmt_sql[ST_COUNT] = {
    [ST_BATCH] = "INSERT INTO batch VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,"
                 "?21,?22,?23,?24,?25,?26,?27,?28,?29,?30,?31,?32,?33,?34,?35,?36,?37,?38,?39,?40,NULL,NULL,NULL,NULL)",
    [ST_OP] = "INSERT INTO op_row VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21)",
    [ST_OP_GROUP] = NULL, /* OP_GROUP rows of ST_OP in one statement, made by op_group_sql() */
    [ST_OP_ARRAY] = "INSERT INTO op_array VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
    [ST_OP_POINTER] = "INSERT INTO op_pointer VALUES (?1,?2,?3,?4,?5,?6,?7)",
    [ST_ATTR] = "INSERT INTO attribute VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
    [ST_FINDING] = "INSERT INTO finding VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
    [ST_THREAD] = "INSERT INTO thread VALUES (?1,?2,1,?3,?3) ON CONFLICT (process_key, tid) DO UPDATE SET batches = batches + 1,"
                  " first_ns = coalesce(min(first_ns, excluded.first_ns), first_ns, excluded.first_ns),"
                  " last_ns = coalesce(max(last_ns, excluded.last_ns), last_ns, excluded.last_ns)",
    [ST_STREAM] = "INSERT INTO stream VALUES (?1,?2,?3,?4,1) ON CONFLICT (process_key, stream, stream_id) DO UPDATE SET batches = batches + 1",
    [ST_GPU] = "UPDATE batch SET gpu_status = ?3, gpu_ns = ?4, gpu_start_ns = ?5, gpu_end_ns = ?6"
               " WHERE process_key = ?1 AND batch_id = ?2",
    [ST_GPU_ROW] = "INSERT INTO gpu_time VALUES (NULL, (SELECT batch_key FROM batch WHERE process_key = ?1"
                   " AND batch_id = ?2),?1,?3,?2,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21)",
};

/* A process image: few per trace, kept whole until the end. */
struct proc {
    uint32_t host, image;
    uint64_t pkey;
    int64_t vpid, rank;
    char *procname, *rank_var;
    uint64_t pid_ns, start_ns;
    bool has_rank, has_image;
};

struct meta_row {
    char *key, *value;
};

/* An op row's values, kept until OP_GROUP of them go in by one statement (a
 * statement's start, its cursor and its transaction check cost as much as
 * the values of a row: multi-row VALUES pays them once per group). */
enum { OP_COLS = 21, OP_GROUP = 32 };
struct op_vals {
    sqlite3_int64 v[OP_COLS];
    uint32_t set; /* bit c: v[c] is a value (else NULL) */
};

struct cbt_sql {
    struct op_vals opbuf[OP_GROUP];
    unsigned nopbuf;
    sqlite3 *db;
    struct cbt_agg *agg;
    sqlite3_stmt *st[ST_COUNT];
    struct proc *procs;
    size_t nprocs, capprocs, last;
    uint32_t *slots;   /* open addressing over procs by (host, pkey): index + 1, 0 empty */
    size_t nslots;     /* a power of two, at least twice nprocs */
    struct meta_row *meta;
    size_t nmeta;
    uint64_t rows_in_tx;  /* the writing side's */
    uint64_t rows_queued; /* the reader's side: rows handed over (progress) */
    uint64_t batches, ops, findings;
    uint64_t formats; /* bit f: a batch recorded in event format f (0..63) */
    bool failed;      /* read and set with atomics: either side may fail */
    struct queue *q;
};

static void sql_fail(struct cbt_sql *s, const char *what)
{
    /* what: a statement, named by its first words (the whole of an INSERT is hundreds of characters) */
    if (!__atomic_exchange_n(&s->failed, true, __ATOMIC_ACQ_REL))
        cbt_err("cannot write the database: %s (%.24s%s)", s->db ? sqlite3_errmsg(s->db) : "out of memory", what,
                strlen(what) > 24 ? "..." : "");
}
static bool failed(struct cbt_sql *s) { return __atomic_load_n(&s->failed, __ATOMIC_ACQUIRE); }

static bool exec(struct cbt_sql *s, const char *sql)
{
    if (failed(s))
        return false;
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        sql_fail(s, sql);
        return false;
    }
    return true;
}

/* Runs a bound statement and resets it for the next row (its values unbound:
 * clear, or every one bound again, as the op rows do). */
static void run_stmt(struct cbt_sql *s, sqlite3_stmt *st, bool clear)
{
    if (failed(s))
        return;
    if (sqlite3_step(st) != SQLITE_DONE)
        sql_fail(s, sqlite3_sql(st));
    sqlite3_reset(st);
    if (clear)
        sqlite3_clear_bindings(st);
}
static void step(struct cbt_sql *s, sqlite3_stmt *st) { run_stmt(s, st, true); }

/* One more row written; every CBT_SQL_ROWS_PER_TX rows the transaction is
 * committed (a transaction per row would sync nothing but still cost a page
 * write each).  The writing side's. */
static void tx_row(struct cbt_sql *s)
{
    if (++s->rows_in_tx < CBT_SQL_ROWS_PER_TX)
        return;
    s->rows_in_tx = 0;
    exec(s, "COMMIT");
    exec(s, "BEGIN");
}

/* ---- binding helpers of the statements made at the end (the command's thread): the value, or NULL */
static void bind_u64(sqlite3_stmt *st, int i, uint64_t v) { sqlite3_bind_int64(st, i, (sqlite3_int64)v); }
static void bind_i64(sqlite3_stmt *st, int i, int64_t v) { sqlite3_bind_int64(st, i, v); }
static void bind_text(sqlite3_stmt *st, int i, const char *t)
{
    if (t)
        sqlite3_bind_text(st, i, t, -1, SQLITE_TRANSIENT);
}

static void write_enum_names(struct cbt_sql *s);

/* INSERT INTO op_row VALUES (?,...),(?,...)...: OP_GROUP rows of OP_COLS values; NULL: out of memory. */
static char *op_group_sql(void)
{
    size_t n = sizeof("INSERT INTO op_row VALUES ") + OP_GROUP * (OP_COLS * 2 + 3);
    char *q = malloc(n), *e = q;
    if (!q)
        return NULL;
    e += sprintf(e, "INSERT INTO op_row VALUES ");
    for (int r = 0; r < OP_GROUP; r++) {
        *e++ = r ? ',' : '(';
        if (r)
            *e++ = '(';
        for (int c = 0; c < OP_COLS; c++) {
            *e++ = '?';
            *e++ = c + 1 < OP_COLS ? ',' : ')';
        }
    }
    *e = 0;
    return q;
}

/* n op rows: by one statement when they are a whole group, else one by one (the writing side). */
static void ops_insert(struct cbt_sql *s, const struct op_vals *rows, unsigned n)
{
    for (unsigned r = 0; r < n && !failed(s);) {
        bool group = r == 0 && n == OP_GROUP;
        sqlite3_stmt *st = s->st[group ? ST_OP_GROUP : ST_OP];
        for (unsigned k = 0; k < (group ? OP_GROUP : 1); k++, r++)
            for (int c = 0; c < OP_COLS; c++) {
                int at = (int)(k * OP_COLS) + c + 1;
                if (rows[r].set & (1u << c))
                    sqlite3_bind_int64(st, at, rows[r].v[c]);
                else
                    sqlite3_bind_null(st, at);
            }
        run_stmt(s, st, false);
    }
}

/* ---- the commands: what the reader's side hands the writing side (see the top) */

/* A command is one word, kind | statement << 8 | column << 16 | count << 32,
 * and its payload words. */
enum { Q_INT, Q_NAME, Q_NUMBER, Q_STEP, Q_ROW, Q_OPS };
#define QBLOCK_WORDS (1u << 17) /* 1 MiB */
#define QBLOCKS 4u
#define OPV_WORDS (sizeof(struct op_vals) / sizeof(uint64_t))
_Static_assert(sizeof(struct op_vals) % sizeof(uint64_t) == 0, "op rows travel as whole words");
_Static_assert(OP_GROUP * OPV_WORDS + 1 < QBLOCK_WORDS, "a group of op rows fits a block");

struct qblock {
    uint64_t n; /* words used */
    uint64_t w[QBLOCK_WORDS];
};
struct queue {
    pthread_t th;
    bool threaded;           /* a writing thread runs; else blocks are replayed as they fill */
    pthread_mutex_t lock;
    pthread_cond_t filled;   /* the writing thread waits for a block, or the end */
    pthread_cond_t replayed; /* the reader waits for a block to fill */
    uint64_t head, tail;     /* blocks handed over, blocks replayed (under lock) */
    bool end;
    struct qblock *cur;      /* the block being filled: b[head % QBLOCKS] */
    struct qblock *b[QBLOCKS];
};

/* The commands of a block, in order (the writing side). */
static void replay(struct cbt_sql *s, const struct qblock *b)
{
    for (uint64_t i = 0; i < b->n && !failed(s);) {
        uint64_t h = b->w[i++];
        unsigned kind = h & 0xff, col = (h >> 16) & 0xffff, n = (unsigned)(h >> 32);
        sqlite3_stmt *st = s->st[(h >> 8) & 0xff];
        switch (kind) {
        case Q_INT: sqlite3_bind_int64(st, (int)col, (sqlite3_int64)b->w[i++]); break;
        case Q_NAME: sqlite3_bind_text(st, (int)col, (const char *)(uintptr_t)b->w[i++], -1, SQLITE_STATIC); break;
        case Q_NUMBER: {
            char t[24];
            snprintf(t, sizeof(t), "%" PRIu64, b->w[i++]);
            sqlite3_bind_text(st, (int)col, t, -1, SQLITE_TRANSIENT);
            break;
        }
        case Q_STEP: run_stmt(s, st, col != 0); break;
        case Q_ROW: tx_row(s); break;
        case Q_OPS:
            ops_insert(s, (const struct op_vals *)(const void *)&b->w[i], n);
            i += n * OPV_WORDS;
            break;
        }
    }
}

static void *writer_main(void *arg)
{
    struct cbt_sql *s = arg;
    struct queue *q = s->q;
    cbt_thread_enter();
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (q->tail == q->head && !q->end)
            pthread_cond_wait(&q->filled, &q->lock);
        if (q->tail == q->head)
            break; /* the end, every block replayed */
        const struct qblock *b = q->b[q->tail % QBLOCKS];
        pthread_mutex_unlock(&q->lock);
        replay(s, b);
        pthread_mutex_lock(&q->lock);
        q->tail++;
        pthread_cond_signal(&q->replayed);
    }
    pthread_mutex_unlock(&q->lock);
    cbt_thread_leave();
    return NULL;
}

/* The block filled goes to the writing side; the next one, once free, is filled. */
static void q_hand(struct cbt_sql *s)
{
    struct queue *q = s->q;
    if (!q->threaded) {
        replay(s, q->cur);
        q->cur->n = 0;
        return;
    }
    pthread_mutex_lock(&q->lock);
    q->head++;
    pthread_cond_signal(&q->filled);
    while (q->head - q->tail >= QBLOCKS)
        pthread_cond_wait(&q->replayed, &q->lock);
    q->cur = q->b[q->head % QBLOCKS];
    pthread_mutex_unlock(&q->lock);
    q->cur->n = 0;
}

/* Room for `words` more words of the block being filled. */
static uint64_t *q_put(struct cbt_sql *s, size_t words)
{
    struct qblock *c = s->q->cur;
    if (c->n + words > QBLOCK_WORDS) {
        q_hand(s);
        c = s->q->cur;
    }
    uint64_t *w = &c->w[c->n];
    c->n += words;
    return w;
}
static inline void q_cmd(struct cbt_sql *s, unsigned kind, int st, int col, uint64_t payload)
{
    uint64_t *w = q_put(s, 2);
    w[0] = kind | (uint64_t)st << 8 | (uint64_t)col << 16;
    w[1] = payload;
}
/* ---- the reader's side of the hot statements: their values, their steps and rows */
static void q_u64(struct cbt_sql *s, int st, int col, uint64_t v) { q_cmd(s, Q_INT, st, col, v); }
static void q_i64(struct cbt_sql *s, int st, int col, int64_t v) { q_cmd(s, Q_INT, st, col, (uint64_t)v); }
static void q_static(struct cbt_sql *s, int st, int col, const char *t) { q_cmd(s, Q_NAME, st, col, (uintptr_t)t); }
/* A name of the catalogue (static), or the number as text when it has none. */
static void q_name(struct cbt_sql *s, int st, int col, const char *name, uint64_t v)
{
    if (name)
        q_static(s, st, col, name);
    else
        q_cmd(s, Q_NUMBER, st, col, v);
}
/* The statement's row, its values unbound after (clear) or all bound again by the next. */
static void q_step(struct cbt_sql *s, int st, bool clear)
{
    uint64_t *w = q_put(s, 1);
    w[0] = Q_STEP | (uint64_t)st << 8 | (uint64_t)clear << 16;
}
static void row_done(struct cbt_sql *s)
{
    *q_put(s, 1) = Q_ROW;
    if (++s->rows_queued % CBT_SQL_ROWS_PER_TX == 0)
        cbt_progress();
}

/* The op rows kept (opbuf), handed over. */
static void op_flush(struct cbt_sql *s)
{
    unsigned n = s->nopbuf;
    s->nopbuf = 0;
    if (!n)
        return;
    uint64_t *w = q_put(s, 1 + n * OPV_WORDS);
    w[0] = Q_OPS | (uint64_t)n << 32;
    memcpy(&w[1], s->opbuf, n * sizeof(*s->opbuf));
}

/* Every command handed over is written, the writing thread ended: the
 * connection is the command's thread's again. */
static void q_drain(struct cbt_sql *s)
{
    struct queue *q = s->q;
    if (!q)
        return;
    op_flush(s);
    if (q->cur->n)
        q_hand(s);
    if (q->threaded) {
        pthread_mutex_lock(&q->lock);
        q->end = true;
        pthread_cond_signal(&q->filled);
        pthread_mutex_unlock(&q->lock);
        pthread_join(q->th, NULL);
        q->threaded = false;
        q->cur->n = 0;
    }
}

static void q_free(struct cbt_sql *s)
{
    struct queue *q = s->q;
    if (!q)
        return;
    q_drain(s);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->filled);
    pthread_cond_destroy(&q->replayed);
    for (unsigned i = 0; i < QBLOCKS; i++)
        free(q->b[i]);
    free(q);
    s->q = NULL;
}

/* The blocks, and the writing thread where a second CPU is there (not with
 * CUBATCHTRACE_PIPELINE=0, as the reader's own thread); false: out of memory. */
static bool q_start(struct cbt_sql *s)
{
    struct queue *q = calloc(1, sizeof(*q));
    if (!q)
        return false;
    s->q = q;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->filled, NULL);
    pthread_cond_init(&q->replayed, NULL);
    for (unsigned i = 0; i < QBLOCKS; i++)
        if (!(q->b[i] = malloc(sizeof(struct qblock))))
            return false;
    q->cur = q->b[0];
    q->cur->n = 0;
    const char *env = getenv("CUBATCHTRACE_PIPELINE");
    if (cbt_usable_cpus() >= 2 && !(env && strcmp(env, "0") == 0))
        q->threaded = pthread_create(&q->th, NULL, writer_main, s) == 0;
    return true;
}

/* Value c (from 1, as the single-row statement numbers them) of the op row being filled. */
static inline void op_set(struct op_vals *o, int c, sqlite3_int64 v)
{
    o->v[c - 1] = v;
    o->set |= 1u << (c - 1);
}

struct cbt_sql *cbt_sql_open(const char *path, struct cbt_agg *a)
{
    struct cbt_sql *s = calloc(1, sizeof(*s));
    if (!s) {
        cbt_err("out of memory");
        return NULL;
    }
    s->agg = a;
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        cbt_err("cannot write %s: %s", path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
        sqlite3_close(s->db);
        free(s);
        return NULL;
    }
    /* a scratch file renamed once whole: no journal, no sync (see above) */
    exec(s, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;"
            " PRAGMA temp_store = FILE");
    exec(s, "BEGIN");
    exec(s, schema);
    write_enum_names(s);
    char *group = op_group_sql();
    for (int i = 0; i < ST_COUNT && !failed(s); i++) {
        const char *sql = i == ST_OP_GROUP ? group : stmt_sql[i];
        if (!sql || sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) != SQLITE_OK)
            sql_fail(s, sql ? sql : "INSERT INTO op_row");
    }
    free(group);
    if (!failed(s) && !q_start(s))
        sql_fail(s, "out of memory");
    if (failed(s)) {
        cbt_sql_close(s);
        return NULL;
    }
    return s;
}

static size_t proc_slot(uint32_t host, uint64_t pkey, size_t nslots)
{
    uint64_t h = (pkey ^ (uint64_t)host << 40) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (nslots - 1);
}

/* The slot table at twice its size (a job's thousands of ranks stay cheap to find). */
static bool proc_rehash(struct cbt_sql *s)
{
    size_t n = s->nslots ? 2 * s->nslots : 64;
    uint32_t *t = calloc(n, sizeof(*t));
    if (!t)
        return false;
    for (size_t i = 0; i < s->nprocs; i++) {
        size_t k = proc_slot(s->procs[i].host, s->procs[i].pkey, n);
        while (t[k])
            k = (k + 1) & (n - 1);
        t[k] = (uint32_t)(i + 1);
    }
    free(s->slots);
    s->slots = t;
    s->nslots = n;
    return true;
}

/* The process image of w, from 1 in the order first seen (its process_key); 0: out of memory. */
static size_t proc_of(struct cbt_sql *s, const struct cbt_where *w)
{
    uint64_t k = cbt_where_pkey(w);
    if (s->nprocs && s->procs[s->last].host == w->host && s->procs[s->last].pkey == k)
        return s->last + 1;
    if (2 * (s->nprocs + 1) > s->nslots && !proc_rehash(s))
        goto oom;
    size_t slot = proc_slot(w->host, k, s->nslots);
    for (; s->slots[slot]; slot = (slot + 1) & (s->nslots - 1)) {
        const struct proc *p = &s->procs[s->slots[slot] - 1];
        if (p->host == w->host && p->pkey == k)
            return (s->last = s->slots[slot] - 1) + 1;
    }
    if (s->nprocs == s->capprocs) {
        size_t c = s->capprocs ? 2 * s->capprocs : 16;
        struct proc *n = realloc(s->procs, c * sizeof(*n));
        if (!n)
            goto oom;
        s->procs = n;
        s->capprocs = c;
    }
    s->procs[s->nprocs] = (struct proc){.host = w->host, .image = w->image, .pkey = k, .vpid = w->vpid, .rank = -1};
    s->slots[slot] = (uint32_t)(s->nprocs + 1);
    s->last = s->nprocs++;
    return s->nprocs;
oom:
    if (!__atomic_exchange_n(&s->failed, true, __ATOMIC_ACQ_REL))
        cbt_err("out of memory");
    return 0;
}

static void proc_name(struct cbt_sql *s, size_t key, const char *procname)
{
    struct proc *p = key ? &s->procs[key - 1] : NULL;
    if (p && !p->procname && procname && *procname)
        p->procname = strdup(procname);
}

void cbt_sql_process(void *sql, const struct cbt_where *w, int64_t rank, const char *rank_var)
{
    struct cbt_sql *s = sql;
    size_t key = proc_of(s, w);
    if (!key)
        return;
    struct proc *p = &s->procs[key - 1];
    proc_name(s, key, w->procname);
    if (rank >= 0 && !p->has_rank) {
        p->has_rank = true;
        p->rank = rank;
        p->rank_var = rank_var && *rank_var ? strdup(rank_var) : NULL;
    }
}

void cbt_sql_image(void *sql, const struct cbt_where *w, uint64_t pid_ns, uint64_t start_ns)
{
    struct cbt_sql *s = sql;
    size_t key = proc_of(s, w);
    if (!key)
        return;
    struct proc *p = &s->procs[key - 1];
    proc_name(s, key, w->procname);
    p->has_image = true;
    p->pid_ns = pid_ns;
    p->start_ns = start_ns;
}

/* One operand's values of op_row, from column c: type, kind, device, ptr,
 * alloc_base, alloc_size; NULL (not set) where the operand has none.  An
 * array operand's own columns are a row of op_array, a pointer's rowLength,
 * layerHeight and locHint one of op_pointer unless all are 0. */
static void set_operand(struct cbt_sql *s, struct op_vals *ov, int c, const CUmemcpy3DOperand *o,
                        const struct cbt_operand_info *in, int64_t key, uint64_t i, const char *side)
{
    op_set(ov, c, (sqlite3_int64)o->type);
    op_set(ov, c + 1, in->kind);
    op_set(ov, c + 2, in->device);
    if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
        int a = ST_OP_ARRAY;
        q_i64(s, a, 1, key);
        q_u64(s, a, 2, i);
        q_static(s, a, 3, side);
        q_u64(s, a, 4, (uint64_t)(uintptr_t)o->op.array.array);
        q_u64(s, a, 5, o->op.array.offset.x);
        q_u64(s, a, 6, o->op.array.offset.y);
        q_u64(s, a, 7, o->op.array.offset.z);
        if (in->kind == CBT_MEM_ARRAY && in->array_width) {
            q_u64(s, a, 8, in->array_width);
            q_u64(s, a, 9, in->array_height);
            q_u64(s, a, 10, in->array_depth);
            q_i64(s, a, 11, in->elem_size);
        }
        q_step(s, a, true);
        row_done(s);
    } else {
        op_set(ov, c + 3, (sqlite3_int64)o->op.ptr.ptr);
        if (o->type == CU_MEMCPY_OPERAND_TYPE_POINTER) {
            const CUmemcpy3DOperand *p = o;
            if (p->op.ptr.rowLength || p->op.ptr.layerHeight || p->op.ptr.locHint.type || p->op.ptr.locHint.id) {
                int a = ST_OP_POINTER;
                q_i64(s, a, 1, key);
                q_u64(s, a, 2, i);
                q_static(s, a, 3, side);
                q_u64(s, a, 4, p->op.ptr.rowLength);
                q_u64(s, a, 5, p->op.ptr.layerHeight);
                q_i64(s, a, 6, (sqlite3_int64)p->op.ptr.locHint.type);
                q_i64(s, a, 7, p->op.ptr.locHint.id);
                q_step(s, a, false);
                row_done(s);
            }
            if (in->alloc_size) {
                op_set(ov, c + 4, (sqlite3_int64)in->alloc_base);
                op_set(ov, c + 5, (sqlite3_int64)in->alloc_size);
            }
        }
    }
}

/* The names of the enumerations op_row stores as numbers (the catalogue's), for the view op. */
static void write_enum_names(struct cbt_sql *s)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "INSERT INTO enum_name VALUES (?1, ?2, ?3)", -1, &st, NULL) != SQLITE_OK) {
        sql_fail(s, "enum_name");
        return;
    }
    static const char *const what[] = {"operand_type", "memkind", "location", "access_order", "direction"};
    for (unsigned w = 0; w < sizeof(what) / sizeof(*what); w++)
        for (unsigned v = 0; v < 256 && !failed(s); v++) {
            const char *n = w == 0 ? cbt_operand_name(v) : w == 1 ? cbt_memkind_name(v) : w == 2 ? cbt_location_name(v)
                          : w == 3 ? cbt_access_order_name(v) : v < DIR_COUNT ? cbt_direction_name((int)v) : NULL;
            if (!n)
                continue;
            sqlite3_bind_text(st, 1, what[w], -1, SQLITE_STATIC);
            sqlite3_bind_int(st, 2, (int)v);
            sqlite3_bind_text(st, 3, n, -1, SQLITE_STATIC);
            step(s, st);
        }
    sqlite3_finalize(st);
}

static void write_finding(struct cbt_sql *s, int64_t batch_key, const struct cbt_finding *f, int in, bool reader)
{
    int st = ST_FINDING;
    const struct cbt_rule_info *ri = cbt_rule(f->rule);
    q_i64(s, st, 1, batch_key);
    q_name(s, st, 2, ri ? ri->name : NULL, f->rule);
    q_name(s, st, 3, cbt_severity_name(f->severity), f->severity);
    if (f->op != UINT64_MAX)
        q_u64(s, st, 4, f->op);
    if (f->other_op != UINT64_MAX)
        q_u64(s, st, 5, f->other_op);
    q_name(s, st, 6, cbt_side_name(f->side), f->side);
    q_u64(s, st, 7, f->value);
    q_u64(s, st, 8, f->limit);
    if (in == 0 || in == 1)
        q_i64(s, st, 9, in);
    q_i64(s, st, 10, reader);
    q_step(s, st, true);
    s->findings++;
    row_done(s);
}

/* The batch's op rows; *nops and *bytes what they count and move. */
static void write_ops(struct cbt_sql *s, int64_t key, const struct cbt_read_batch *rb, uint64_t *nops_out,
                      uint64_t *bytes_out)
{
    uint64_t nops = 0, bytes = 0;
    uint32_t sp = 0;
    for (uint64_t i = cbt_read_op(rb, 0, &sp); i < rb->nops && !failed(s); i = cbt_read_op(rb, i + 1, &sp)) {
        const CUDA_MEMCPY3D_BATCH_OP *op = &rb->ops[i];
        const struct cbt_operand_info *si = &rb->src[i], *di = &rb->dst[i];
        uint64_t b = cbt_op_bytes(op, si, di);
        struct op_vals *ov = &s->opbuf[s->nopbuf];
        ov->set = 0;
        op_set(ov, 1, key);
        op_set(ov, 2, (sqlite3_int64)i);
        set_operand(s, ov, 3, &op->src, si, key, i, "src");
        set_operand(s, ov, 9, &op->dst, di, key, i, "dst");
        op_set(ov, 15, (sqlite3_int64)op->extent.width);
        op_set(ov, 16, (sqlite3_int64)op->extent.height);
        op_set(ov, 17, (sqlite3_int64)op->extent.depth);
        op_set(ov, 18, (sqlite3_int64)op->srcAccessOrder);
        op_set(ov, 19, op->flags);
        op_set(ov, 20, (sqlite3_int64)b);
        op_set(ov, 21, cbt_direction(cbt_mem_class(si->kind, (uint8_t)op->src.type),
                                     cbt_mem_class(di->kind, (uint8_t)op->dst.type), si->device, di->device));
        if (++s->nopbuf == OP_GROUP)
            op_flush(s);
        nops++;
        bytes += b;
        row_done(s);
    }
    s->ops += nops;
    *nops_out = nops;
    *bytes_out = bytes;
}

/* The batch's own row: its header's fields, its ops' count and bytes. */
static void write_batch_row(struct cbt_sql *s, int64_t key, size_t pk, const struct cbt_read_batch *rb, uint64_t nops,
                            uint64_t bytes, uint64_t first_op)
{
    const struct cbt_ev_batch *h = &rb->h;
    int st = ST_BATCH;
    q_i64(s, st, 1, key);
    q_i64(s, st, 2, (sqlite3_int64)pk);
    q_u64(s, st, 3, cbt_batch_number(h->batch_id));
    q_u64(s, st, 4, h->batch_id);
    q_static(s, st, 5, cbt_batch_state_name(rb->state));
    if (rb->w.has_ts)
        q_i64(s, st, 6, rb->w.ts_ns);
    if (rb->have_header) {
        q_name(s, st, 7, cbt_api_name(h->api), h->api);
        q_name(s, st, 8, cbt_door_name(h->door), h->door);
        q_name(s, st, 9, cbt_outcome_name(h->outcome), h->outcome);
        q_name(s, st, 10, cbt_curesult_name(h->result), h->result);
        q_u64(s, st, 11, h->result);
        q_i64(s, st, 12, h->outcome == CBT_OUTCOME_FORWARDED && h->result == CBT_CU_CAPTURE_UNSUPPORTED);
        q_u64(s, st, 13, h->num_ops);
        q_u64(s, st, 14, h->ops_recorded);
        q_u64(s, st, 15, h->flags);
        q_u64(s, st, 16, h->op_list);
        q_u64(s, st, 17, h->stream);
        q_u64(s, st, 18, h->stream_id);
        q_u64(s, st, 19, h->context);
        q_i64(s, st, 20, (int)h->device);
        q_name(s, st, 21, cbt_capture_name(h->capture), h->capture);
        if (h->fail_idx != UINT64_MAX)
            q_u64(s, st, 22, h->fail_idx);
        q_u64(s, st, 23, h->driver_ns);
        q_i64(s, st, 24, (int)h->tid);
        q_u64(s, st, 25, h->caller);
        q_i64(s, st, 26, (int)h->device_count);
        q_i64(s, st, 27, (int)h->format);
        q_i64(s, st, 28, (int)h->rules);
        q_i64(s, st, 29, (int)h->validated);
        q_i64(s, st, 30, (int)h->findings);
        if (rb->is1d) {
            q_u64(s, st, 31, rb->d.srcs);
            q_u64(s, st, 32, rb->d.sizes);
            q_u64(s, st, 33, rb->d.attrs);
            q_u64(s, st, 34, rb->d.attrs_idxs);
            q_u64(s, st, 35, rb->d.num_attrs);
            q_u64(s, st, 36, rb->d.attrs_recorded);
            q_i64(s, st, 37, (int)rb->d.abi);
        }
    }
    q_u64(s, st, 38, nops);
    q_u64(s, st, 39, bytes);
    if (nops)
        q_u64(s, st, 40, first_op);
    q_step(s, st, true);
    row_done(s);
}

/* The thread and the stream the batch names (rows made once, by their keys). */
static void write_thread_stream(struct cbt_sql *s, size_t pk, const struct cbt_read_batch *rb)
{
    const struct cbt_ev_batch *h = &rb->h;
    if (!rb->have_header)
        return;
    int st = ST_THREAD;
    q_i64(s, st, 1, (sqlite3_int64)pk);
    q_i64(s, st, 2, (int)h->tid);
    if (rb->w.has_ts)
        q_i64(s, st, 3, rb->w.ts_ns);
    q_step(s, st, true);
    st = ST_STREAM;
    q_i64(s, st, 1, (sqlite3_int64)pk);
    q_u64(s, st, 2, h->stream);
    q_u64(s, st, 3, h->stream_id);
    q_i64(s, st, 4, (int)h->device);
    q_step(s, st, true);
}

/* A 1D batch's attributes, one row each. */
static void write_attrs(struct cbt_sql *s, int64_t key, const struct cbt_read_batch *rb)
{
    int st = ST_ATTR;
    for (uint64_t k = 0; rb->attrs && k < rb->nattrs; k++) {
        const CUmemcpyAttributes *at = &rb->attrs[k];
        q_i64(s, st, 1, key);
        q_u64(s, st, 2, k);
        q_u64(s, st, 3, rb->attrs_idxs[k]);
        q_name(s, st, 4, cbt_access_order_name((unsigned)at->srcAccessOrder), (uint64_t)at->srcAccessOrder);
        q_i64(s, st, 5, at->flags);
        q_name(s, st, 6, cbt_location_name((unsigned)at->srcLocHint.type), (uint64_t)at->srcLocHint.type);
        q_i64(s, st, 7, at->srcLocHint.id);
        q_name(s, st, 8, cbt_location_name((unsigned)at->dstLocHint.type), (uint64_t)at->dstLocHint.type);
        q_i64(s, st, 9, at->dstLocHint.id);
        q_step(s, st, true);
        row_done(s);
    }
}

void cbt_sql_batch(void *sql, const struct cbt_read_batch *rb)
{
    struct cbt_sql *s = sql;
    if (failed(s) || rb->not_run) /* copies that run at graph launches, exported there */
        return;
    size_t pk = proc_of(s, &rb->w);
    if (!pk)
        return;
    proc_name(s, pk, rb->w.procname);
    int64_t key = (int64_t)++s->batches;
    if (rb->have_header && rb->h.format < 64)
        s->formats |= 1ull << rb->h.format;
    uint64_t nops = 0, bytes = 0, first_op = s->ops + 1; /* op_row's rowids: 1, 2, ... in the order written */
    write_ops(s, key, rb, &nops, &bytes); /* first: the batch row carries their count and bytes */
    write_batch_row(s, key, pk, rb, nops, bytes, first_op);
    write_thread_stream(s, pk, rb);
    write_attrs(s, key, rb);
    for (uint64_t i = 0; i < rb->nfindings; i++)
        write_finding(s, key, &rb->findings[i], rb->finding_inline[i], true);
    for (uint64_t i = 0; i < rb->ninline_only; i++)
        write_finding(s, key, &rb->inline_only[i], 1, false);
}

/* A gpu_time event's kind or device of its sources or destinations: "mixed" (NULL for a device) when not all alike. */
static void q_gpu_kind(struct cbt_sql *s, int st, int i, uint8_t kind)
{
    if (kind == CBT_GPU_MIXED_KIND)
        q_static(s, st, i, "mixed");
    else
        q_name(s, st, i, cbt_memkind_name(kind), kind);
}
static void q_gpu_device(struct cbt_sql *s, int st, int i, int32_t d)
{
    if (d != CBT_GPU_MIXED_DEVICE)
        q_i64(s, st, i, d);
}

void cbt_sql_gpu(void *sql, const struct cbt_where *w, const struct cbt_ev_gpu *g)
{
    struct cbt_sql *s = sql;
    if (failed(s))
        return;
    size_t pk = proc_of(s, w);
    if (!pk)
        return;
    bool timed = g->status == CBT_GPU_TIMED;
    int64_t start = w->ts_ns + g->start_rel_ns;
    /* the batch's own columns, when its row was written (the batch comes before its GPU time) */
    int st = ST_GPU;
    q_i64(s, st, 1, (sqlite3_int64)pk);
    q_u64(s, st, 2, g->batch_id);
    q_name(s, st, 3, cbt_gpu_status_name(g->status), g->status);
    if (timed) {
        q_u64(s, st, 4, g->gpu_ns);
        if (w->has_ts) {
            q_i64(s, st, 5, start);
            q_i64(s, st, 6, start + (int64_t)g->gpu_ns);
        }
    }
    q_step(s, st, true);
    /* and the event as it came, whether or not its batch is in the export */
    st = ST_GPU_ROW;
    q_i64(s, st, 1, (sqlite3_int64)pk);
    q_u64(s, st, 2, g->batch_id);
    q_u64(s, st, 3, cbt_batch_number(g->batch_id));
    if (w->has_ts)
        q_i64(s, st, 4, w->ts_ns);
    q_name(s, st, 5, cbt_gpu_status_name(g->status), g->status);
    q_u64(s, st, 6, g->gpu_ns);
    q_i64(s, st, 7, g->start_rel_ns);
    if (timed && w->has_ts) {
        q_i64(s, st, 8, start);
        q_i64(s, st, 9, start + (int64_t)g->gpu_ns);
    }
    q_i64(s, st, 10, (int)g->tid);
    q_name(s, st, 11, cbt_api_name(g->api), g->api);
    q_u64(s, st, 12, g->stream);
    q_u64(s, st, 13, g->stream_id);
    q_i64(s, st, 14, (int)g->device);
    q_u64(s, st, 15, g->driver_ns);
    q_u64(s, st, 16, g->ops);
    q_u64(s, st, 17, g->bytes);
    q_gpu_kind(s, st, 18, g->src_kind);
    q_gpu_kind(s, st, 19, g->dst_kind);
    q_gpu_device(s, st, 20, g->src_device);
    q_gpu_device(s, st, 21, g->dst_device);
    q_step(s, st, true);
    row_done(s);
}

void cbt_sql_meta(struct cbt_sql *s, const char *key, const char *value)
{
    struct meta_row *n = realloc(s->meta, (s->nmeta + 1) * sizeof(*n));
    if (!n)
        return;
    s->meta = n;
    s->meta[s->nmeta].key = strdup(key);
    s->meta[s->nmeta].value = value ? strdup(value) : NULL;
    s->nmeta++;
}

/* Each process image, numbered among the images of its (host, pid) as the summary numbers them. */
static void write_procs(struct cbt_sql *s)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "INSERT INTO process_image VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)", -1, &st,
                           NULL) != SQLITE_OK) {
        sql_fail(s, "process_image");
        return;
    }
    for (size_t i = 0; i < s->nprocs && !failed(s); i++) {
        const struct proc *p = &s->procs[i];
        sqlite3_bind_int64(st, 1, (sqlite3_int64)(i + 1));
        bind_text(st, 2, cbt_agg_host_name(s->agg, p->host));
        if (p->vpid >= 0)
            bind_i64(st, 3, p->vpid);
        uint32_t no = p->image ? cbt_agg_image_number(s->agg, p->host, p->pkey) : 0;
        if (no) {
            uint32_t n = 0;
            for (size_t j = 0; j < s->nprocs; j++)
                n += s->procs[j].host == p->host && s->procs[j].vpid == p->vpid && s->procs[j].image;
            sqlite3_bind_int64(st, 4, no);
            sqlite3_bind_int64(st, 5, n);
        }
        if (p->image) {
            char tag[16];
            snprintf(tag, sizeof(tag), "0x%08" PRIx32, p->image);
            bind_text(st, 6, tag);
        }
        if (p->has_image && p->pid_ns)
            bind_u64(st, 7, p->pid_ns);
        if (p->has_image && p->start_ns)
            bind_u64(st, 8, p->start_ns);
        bind_text(st, 9, p->procname);
        if (p->has_rank) {
            bind_i64(st, 10, p->rank);
            bind_text(st, 11, p->rank_var);
        }
        step(s, st);
    }
    sqlite3_finalize(st);
}

/* Every (process, caller) of the batches, named as the summary's callers are. */
static void write_call_sites(struct cbt_sql *s)
{
    sqlite3_stmt *q = NULL, *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT DISTINCT process_key, caller FROM batch WHERE caller IS NOT NULL", -1, &q,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT INTO call_site VALUES (?1,?2,?3,?4,?5,?6,?7,?8)", -1, &st, NULL) !=
            SQLITE_OK) {
        sql_fail(s, "call_site");
        sqlite3_finalize(q);
        return;
    }
    struct cbt_objmap *objs = cbt_agg_callsites(s->agg);
    int rc;
    while (!failed(s) && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t pk = sqlite3_column_int64(q, 0);
        uint64_t caller = (uint64_t)sqlite3_column_int64(q, 1);
        if (pk < 1 || (size_t)pk > s->nprocs)
            continue;
        const struct proc *p = &s->procs[pk - 1];
        struct cbt_callsite cs;
        char name[1024];
        cbt_callsite_lookup(objs, p->host, p->vpid, caller, &cs);
        cbt_callsite_format(&cs, name, sizeof(name));
        sqlite3_bind_int64(st, 1, pk);
        bind_u64(st, 2, caller);
        bind_text(st, 3, name);
        if (cs.object && *cs.object) {
            bind_text(st, 4, cs.object);
            bind_u64(st, 5, cs.offset);
        }
        if (*cs.function)
            bind_text(st, 6, cs.function);
        if (*cs.file)
            bind_text(st, 7, cs.file);
        if (cs.line)
            sqlite3_bind_int64(st, 8, cs.line);
        step(s, st);
        cbt_progress();
    }
    sqlite3_finalize(q);
    sqlite3_finalize(st);
}

int cbt_sql_finish(struct cbt_sql *s)
{
    /* made once the rows are in: one sort of keys already in order, cheaper
     * than an index kept up row by row */
    q_drain(s);
    cbt_progress();
    write_procs(s);
    write_call_sites(s);
    sqlite3_stmt *st = NULL;
    if (!failed(s) && sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO meta VALUES (?1, ?2)", -1, &st, NULL) != SQLITE_OK)
        sql_fail(s, "meta");
    for (size_t i = 0; i < s->nmeta && !failed(s); i++) {
        bind_text(st, 1, s->meta[i].key);
        bind_text(st, 2, s->meta[i].value);
        step(s, st);
    }
    sqlite3_finalize(st);
    exec(s, "COMMIT");
    return failed(s) ? 2 : 0;
}

uint64_t cbt_sql_formats(const struct cbt_sql *s) { return s->formats; }

void cbt_sql_counts(const struct cbt_sql *s, uint64_t *batches, uint64_t *ops, uint64_t *findings)
{
    *batches = s->batches;
    *ops = s->ops;
    *findings = s->findings;
}

struct sqlite3 *cbt_sql_db(struct cbt_sql *s) { return s->db; }

int cbt_sql_close(struct cbt_sql *s)
{
    if (!s)
        return 2;
    q_free(s); /* the writing thread ended first: it uses the statements */
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    if (sqlite3_close(s->db) != SQLITE_OK)
        sql_fail(s, "close");
    int rc = failed(s) ? 2 : 0;
    for (size_t i = 0; i < s->nprocs; i++) {
        free(s->procs[i].procname);
        free(s->procs[i].rank_var);
    }
    free(s->procs);
    free(s->slots);
    for (size_t i = 0; i < s->nmeta; i++) {
        free(s->meta[i].key);
        free(s->meta[i].value);
    }
    free(s->meta);
    free(s);
    return rc;
}
