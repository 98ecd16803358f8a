/* SPDX-License-Identifier: MIT */
/*
 * `cubatchtrace export`: the batches, ops and findings of the traces as an
 * SQLite database (render/sqlite.c) or as CSV files, one per table
 * (render/csv.c), for SQL and data frames.  Reads like `show` (the whole
 * batches) and `summary` (its aggregate names hosts, process images and call
 * sites), behind the same guard.  The tables: docs/export.md.
 *
 * The output is written beside its final name and renamed once whole, so a
 * trace that fails half-way leaves no database that looks finished.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <cubatchtrace/catalog.h>

#include "analyse/agg.h"
#include "base/util.h"
#include "commands.h"
#include "guard.h"
#include "read/reader.h"
#include "render/csv.h"
#include "render/sqlite.h"

static const char usage_export[] =
    "Usage: cubatchtrace export -o FILE [--format sqlite|csv] [--force] [--pid PID]...\n"
    "                           [--begin TIME] [--end TIME] TRACE...\n"
    "Write every batch, op and finding of the traces to an SQLite database (or CSV\n"
    "files) for SQL and data frames: tables process_image, thread, stream, batch, op,\n"
    "attribute, finding, gpu_time, call_site, allocation and meta (docs/export.md).\n"
    "\n"
    "TRACE is a directory (searched recursively for CTF traces) or an LTTng live URL.\n"
    "\n"
    "  -o, --output FILE the database to write (with --format csv: a directory,\n"
    "                    one TABLE.csv per table)\n"
    "  --format FMT      sqlite (default) or csv\n"
    "  --force           replace FILE (csv: the files of the directory) if it exists\n"
    "  --pid PID         only events of this process id (vpid); repeatable\n"
    CBT_USAGE_WINDOW
    "  -h, --help        this text\n"
    "\n"
    "The output is written under a temporary name beside FILE and renamed once\n"
    "whole: a trace that cannot be read leaves nothing behind.\n"
    "\n"
    "Exit status: 0 written; 2 the input could not be read, the output cannot be\n"
    "written or the command line is wrong (one line on stderr).\n";

struct export_job {
    struct cbt_read_opts ro;
    const char *db_path;  /* the scratch database */
    const char *csv_dir;  /* --format csv: the scratch directory; NULL: sqlite */
    const char *output;   /* the name the output will have */
    char *command;        /* the command line, for the meta table */
    const char *pids_text;
};

/* The aggregate's reader consumer, with the process events also handed to
 * the database (it names the images, ranks and namespaces). */
struct export_out {
    struct cbt_read_out agg;
    struct cbt_sql *sql;
};
static uint32_t x_host(void *c, const char *h)
{
    struct export_out *x = c;
    return x->agg.host(x->agg.ctx, h);
}
static void x_batch(void *c, const struct cbt_where *w, const struct cbt_batch *b, const struct cbt_ops *ops)
{
    struct export_out *x = c;
    x->agg.batch(x->agg.ctx, w, b, ops);
}
static void x_batch_ops(void *c, const struct cbt_where *w, uint64_t id, const struct cbt_ops *ops)
{
    struct export_out *x = c;
    x->agg.batch_ops(x->agg.ctx, w, id, ops);
}
static void x_finding(void *c, const struct cbt_where *w, const struct cbt_batch_finding *f)
{
    struct export_out *x = c;
    x->agg.finding(x->agg.ctx, w, f);
}
static void x_read_stats(void *c, const struct cbt_read_stats *s)
{
    struct export_out *x = c;
    x->agg.read_stats(x->agg.ctx, s);
}
static void x_recorded_by(void *c, const char *v)
{
    struct export_out *x = c;
    x->agg.recorded_by(x->agg.ctx, v);
}
static void x_process(void *c, const struct cbt_where *w, int64_t rank, const char *rank_var, int gpu_time,
                      uint32_t gpu_every)
{
    struct export_out *x = c;
    x->agg.process(x->agg.ctx, w, rank, rank_var, gpu_time, gpu_every);
    cbt_sql_process(x->sql, w, rank, rank_var);
}
static void x_image(void *c, const struct cbt_where *w, uint64_t pid_ns, uint64_t start_ns)
{
    struct export_out *x = c;
    x->agg.image(x->agg.ctx, w, pid_ns, start_ns);
    cbt_sql_image(x->sql, w, pid_ns, start_ns);
}
static void x_gpu_time(void *c, const struct cbt_where *w, const struct cbt_ev_gpu *g)
{
    struct export_out *x = c;
    x->agg.gpu_time(x->agg.ctx, w, g);
}
static void x_bin_info(void *c, const struct cbt_where *w, uint64_t baddr, uint64_t memsz, const char *path,
                       bool is_pic)
{
    struct export_out *x = c;
    x->agg.bin_info(x->agg.ctx, w, baddr, memsz, path, is_pic);
}
static void x_build_id(void *c, const struct cbt_where *w, uint64_t baddr, const uint8_t *id, size_t len)
{
    struct export_out *x = c;
    x->agg.build_id(x->agg.ctx, w, baddr, id, len);
}
static void x_discarded(void *c, bool packets, uint64_t count, bool known)
{
    struct export_out *x = c;
    x->agg.discarded(x->agg.ctx, packets, count, known);
}

static void meta_u64(struct cbt_sql *s, const char *key, uint64_t v)
{
    char b[24];
    snprintf(b, sizeof(b), "%" PRIu64, v);
    cbt_sql_meta(s, key, b);
}

/* A JSON value as a meta row (arrays of the meta table are JSON text). */
static void meta_json(struct cbt_sql *s, const char *key, json_t *v)
{
    char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    cbt_sql_meta(s, key, t);
    free(t);
    json_decref(v);
}

/* What the meta table says of the export and of the traces read. */
static void write_meta(struct cbt_sql *s, const struct export_job *j, struct cbt_agg *a)
{
    struct cbt_agg_totals t;
    cbt_agg_totals(a, &t);
    cbt_sql_meta(s, "schema", "cubatchtrace-export");
    cbt_sql_meta(s, "schema_version", "1");
    cbt_sql_meta(s, "read_by", PACKAGE_VERSION);
    cbt_sql_meta(s, "command", j->command);
    json_t *in = json_array();
    for (int i = 0; i < j->ro.ninputs; i++)
        json_array_append_new(in, json_string(j->ro.inputs[i]));
    meta_json(s, "inputs", in);
    cbt_sql_meta(s, "begin", j->ro.begin);
    cbt_sql_meta(s, "end", j->ro.end);
    cbt_sql_meta(s, "pids", j->pids_text);
    json_t *rec = json_array();
    for (unsigned i = 0; i < t.nrecorders && i < 4; i++)
        json_array_append_new(rec, json_string(t.recorders[i]));
    meta_json(s, "recorded_by", rec);
    json_t *fmt = json_array();
    uint64_t f = cbt_sql_formats(s);
    for (unsigned i = 0; i < 64; i++)
        if (f >> i & 1)
            json_array_append_new(fmt, json_integer(i));
    meta_json(s, "formats", fmt);
    json_t *rules = json_array();
    for (unsigned i = 0; t.rs && i < t.rs->nrules_seen && i < 8; i++)
        json_array_append_new(rules, json_integer(t.rs->rules_seen[i]));
    meta_json(s, "rules_recorded", rules);
    meta_u64(s, "rules_checked", CBT_RULES_VERSION);
    meta_u64(s, "discarded_events", t.discarded_events);
    meta_u64(s, "discarded_packets", t.discarded_packets);
    if (t.rs) {
        meta_u64(s, "pending_batches", t.rs->pending);
        meta_u64(s, "malformed_batches", t.rs->malformed);
        meta_u64(s, "incomplete_batches", t.rs->incomplete);
        meta_u64(s, "not_validated_batches", t.rs->given_up);
        meta_u64(s, "findings_not_counted", t.rs->findings_dropped);
    }
}

static int export_read(void *arg)
{
    const struct export_job *j = arg;
    struct cbt_agg *a = cbt_agg_new(0);
    if (!a) {
        cbt_err("out of memory");
        return 2;
    }
    struct cbt_sql *s = cbt_sql_open(j->db_path, a);
    if (!s) {
        cbt_agg_free(a);
        return 2;
    }
    struct export_out x = {.sql = s};
    cbt_agg_read_out(a, &x.agg);
    const struct cbt_read_out out = {
        .ctx = &x, .host = x_host, .batch = x_batch, .batch_ops = x_batch_ops, .finding = x_finding,
        .read_stats = x_read_stats, .recorded_by = x_recorded_by, .process = x_process, .image = x_image,
        .gpu_time = x_gpu_time, .bin_info = x_bin_info, .build_id = x_build_id, .discarded = x_discarded,
    };
    struct cbt_read_opts ro = j->ro;
    ro.batch = cbt_sql_batch;
    ro.batch_ctx = s;
    ro.gpu = cbt_sql_gpu;
    ro.gpu_ctx = s;
    int rc = cbt_read(&ro, &out);
    if (rc == 0) {
        cbt_progress();
        cbt_agg_finish(a);
        write_meta(s, j, a);
        rc = cbt_sql_finish(s);
    }
    if (rc == 0 && j->csv_dir)
        rc = cbt_csv_write(cbt_sql_db(s), j->csv_dir);
    uint64_t nb, no, nf;
    cbt_sql_counts(s, &nb, &no, &nf);
    if (cbt_sql_close(s) != 0)
        rc = 2;
    if (rc == 0)
        printf("# %s: batches: %" PRIu64 ", ops: %" PRIu64 ", findings: %" PRIu64 "\n", j->output, nb, no, nf);
    cbt_agg_free(a);
    return rc;
}

/* The command line as one string, for the meta table. */
static char *join_args(int argc, char **argv)
{
    size_t n = sizeof(CBT_PROG);
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    strcpy(s, CBT_PROG);
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* The CSV files of the scratch directory moved to dir (an existing one,
 * --force), or the scratch directory renamed to dir; 0 or 2 after a line. */
static int csv_into_place(const char *tmpdir, const char *dir, bool exists)
{
    if (!exists) {
        if (rename(tmpdir, dir) == 0)
            return 0;
        cbt_err("cannot write %s: %s", dir, strerror(errno));
        return 2;
    }
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int rc = 0;
    while (d && rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *from = NULL, *to = NULL;
        if (asprintf(&from, "%s/%s", tmpdir, e->d_name) < 0 || asprintf(&to, "%s/%s", dir, e->d_name) < 0 ||
            rename(from, to) != 0) {
            cbt_err("cannot write %s/%s: %s", dir, e->d_name, strerror(errno));
            rc = 2;
        }
        free(from);
        free(to);
    }
    if (d)
        closedir(d);
    return rc;
}

/* Removes the scratch directory and what is in it (files only: ours). */
static void remove_tmpdir(const char *tmpdir)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = NULL;
        if (asprintf(&p, "%s/%s", tmpdir, e->d_name) >= 0)
            unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(tmpdir);
}

/* An existing output of the wrong kind, or one not to be replaced: said in one line. */
static bool output_refused(const char *output, bool csv, bool force, bool *exists)
{
    struct stat st;
    if (stat(output, &st) != 0)
        return false;
    *exists = true;
    if (csv && !S_ISDIR(st.st_mode)) {
        cbt_err("cannot write %s: it exists and is not a directory", output);
        return true;
    }
    if (!csv && !S_ISREG(st.st_mode)) {
        cbt_err("cannot write %s: it exists and is not a regular file", output);
        return true;
    }
    if (!force) {
        cbt_err("%s exists: not replaced (--force replaces it)", output);
        return true;
    }
    return false;
}

/* The scratch output, beside the final one (same file system: rename), with
 * the umask's permissions; *db_path the database written there (inside the
 * scratch directory for CSV).  Returns 0, or -1 after one line. */
static int make_scratch(const char *output, bool csv, char **tmp, char **db_path)
{
    if (asprintf(tmp, "%s.tmp-XXXXXX", output) < 0) {
        *tmp = NULL;
        cbt_err("out of memory");
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (csv) {
        if (!mkdtemp(*tmp) || chmod(*tmp, 0777 & ~mask) != 0) {
            cbt_err("cannot write %s: %s", output, strerror(errno));
            return -1;
        }
        if (asprintf(db_path, "%s/.export.sqlite", *tmp) < 0) {
            *db_path = NULL;
            cbt_err("out of memory");
            rmdir(*tmp);
            return -1;
        }
        return 0;
    }
    int fd = mkstemp(*tmp);
    if (fd < 0) {
        cbt_err("cannot write %s: %s", output, strerror(errno));
        return -1;
    }
    fchmod(fd, 0666 & ~mask);
    close(fd);
    *db_path = strdup(*tmp);
    return 0;
}

/* The --pid filter as meta's text: "1,2,3" (NULL for none). */
static char *pids_join(const int64_t *pids, int npids)
{
    char *text = NULL;
    for (int i = 0; i < npids; i++) {
        char b[24];
        snprintf(b, sizeof(b), "%s%" PRId64, i ? "," : "", pids[i]);
        size_t l = text ? strlen(text) : 0;
        char *n = realloc(text, l + strlen(b) + 1);
        if (!n)
            break;
        strcpy(n + l, b);
        text = n;
    }
    return text;
}

int cbt_cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'f'},
        {"force", no_argument, NULL, 'F'},        {"pid", required_argument, NULL, 'p'},
        {"begin", required_argument, NULL, 'B'},  {"end", required_argument, NULL, 'E'},
        {"help", no_argument, NULL, 'h'},         {0, 0, 0, 0},
    };
    int64_t *pids = NULL;
    const char *begin = NULL, *end = NULL, *output = NULL;
    char *tmp = NULL, *db_path = NULL, *pids_text = NULL;
    bool csv = false, force = false, exists = false;
    int npids = 0, c, rc = 2;
    struct export_job j = {0};
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'f':
            if (strcmp(optarg, "sqlite") == 0)
                csv = false;
            else if (strcmp(optarg, "csv") == 0)
                csv = true;
            else {
                cbt_usage_error("--format %s: expected sqlite or csv", optarg);
                goto out;
            }
            break;
        case 'F': force = true; break;
        case 'p':
            if (cbt_parse_pid(optarg, &pids, &npids) != 0)
                goto out;
            break;
        case 'B': begin = optarg; break;
        case 'E': end = optarg; break;
        case 'h': fputs(usage_export, stdout); rc = 0; goto out;
        default: cbt_option_error("export", c, argv, opts); goto out;
        }
    }
    if (!output || !*output) {
        cbt_usage_error("no output given: -o FILE");
        goto out;
    }
    if (optind >= argc) {
        cbt_usage_error("no trace given");
        goto out;
    }
    if (output_refused(output, csv, force, &exists))
        goto out;
    if (make_scratch(output, csv, &tmp, &db_path) != 0)
        goto out_free;
    pids_text = pids_join(pids, npids);
    j = (struct export_job){
        .ro = {.inputs = (const char *const *)argv + optind, .ninputs = argc - optind, .pids = pids, .npids = npids,
               .begin = begin, .end = end},
        .db_path = db_path, .csv_dir = csv ? tmp : NULL, .output = output, .command = join_args(argc, argv),
        .pids_text = pids_text,
    };
    cbt_guard_on_failure(2, db_path); /* no unfinished database left behind */
    rc = cbt_guard_run(j.ro.inputs, j.ro.ninputs, export_read, &j);
    if (csv) {
        unlink(db_path);
        if (rc == 0)
            rc = csv_into_place(tmp, output, exists);
        remove_tmpdir(tmp);
    } else {
        if (rc == 0 && rename(tmp, output) != 0) {
            cbt_err("cannot write %s: %s", output, strerror(errno));
            rc = 2;
        }
        if (rc != 0)
            unlink(tmp);
    }
out_free:
    free(j.command);
    free(pids_text);
    free(db_path);
    free(tmp);
out:
    free(pids);
    return rc;
}
