#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run the examples of docs/export.md (its three SQL queries, then its Python
with pandas) on an export database and check them against `summary --json`.

    export_example.py DOC DB SUMMARY-JSON [README]

Prints NAME<TAB>WANT<TAB>GOT per check (tests/tool/export-example.sh makes a
test of each), and "SKIP<TAB>reason" when pandas is missing.  With README,
its SQL blocks must be the document's.
"""
import contextlib
import io
import json
import re
import sqlite3
import sys


def blocks(path, lang):
    return re.findall(r"```%s\n(.*?)```" % lang, open(path).read(), re.S)


def main():
    doc, dbpath, summary = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
    db = sqlite3.connect(dbpath)
    out = []

    def cmp(name, want, got):
        out.append("%s\t%s\t%s" % (name, want, got))

    sql = blocks(doc, "sql")
    cmp("docs/export.md: three SQL queries", 3, len(sql))
    if len(sys.argv) > 4:
        cmp("README: its SQL blocks are docs/export.md's", sql, blocks(sys.argv[4], "sql"))
    r1, r2, r3 = (db.execute(q).fetchall() for q in sql[:3])
    cmp("bytes by direction: the summary's by_direction (name, ops, bytes)",
        sorted((r["name"], r["ops"], r["bytes"]) for r in summary["by_direction"]), sorted(r1))
    cmp("bytes by direction: largest first", sorted((r[2] for r in r1), reverse=True), [r[2] for r in r1])
    slowest = max(r["max"] for r in summary["by_api"] if r["max"] is not None)
    cmp("slowest batches: 10 rows, the slowest first, the summary's max host time",
        (min(10, summary["batches"]), slowest), (len(r2), r2[0][6] if r2 else None))
    cmp("slowest batches: in order", sorted((r[6] for r in r2), reverse=True), [r[6] for r in r2])
    per_rule = {}
    for r in r3:
        per_rule[r[1]] = per_rule.get(r[1], 0) + r[3]
    cmp("findings by call site: summed by rule, the summary's findings",
        sorted((f["rule"], f["count"]) for f in summary["findings"]), sorted(per_rule.items()))
    names = {r["name"] for r in summary["callers"]}
    cmp("findings by call site: sites named as the summary's callers", True,
        all(r[0] in names for r in r3) and len(r3) > 0)

    py = blocks(doc, "python")
    cmp("docs/export.md: one Python example", 1, len(py))
    try:
        import pandas  # noqa: F401
    except ImportError:
        out.append("SKIP\tpandas is not installed (scripts/install-deps installs it from PyPI)")
    else:
        ns = {}
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            exec(py[0].replace('"trace.sqlite"', repr(dbpath)), ns)
        cmp("pandas: by_direction is the first query's rows",
            [tuple(r) for r in r1], [tuple(r) for r in ns["by_direction"].itertuples(index=False)])
        cmp("pandas: slowest holds the second query's batches",
            [(r[1], r[2], r[6]) for r in r2], list(zip(ns["slowest"]["pid"], ns["slowest"]["id"],
                                                        ns["slowest"]["driver_ns"])))
        cmp("pandas: findings is the third query's rows",
            [tuple(r) for r in r3], [tuple(r) for r in ns["findings"].itertuples(index=False)])
        cmp("pandas: the example prints its three frames", True, "driver_ns" in stdout.getvalue())
    print("\n".join(out))


if __name__ == "__main__":
    main()
