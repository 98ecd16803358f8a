#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare an export database with what `show` and `summary --json` say of
the same traces, row for row.

    export_compare.py DB SHOW-OUTPUT SUMMARY-JSON

Prints one line per comparison, NAME<TAB>WANT<TAB>GOT (tests/tool/export.sh
makes a test of each): every batch, op, attr, finding and inline_finding line
of `show` rebuilt from the tables (in show's key=value form, in the order the
batches were put back together), every gpu line's status and GPU time, and
the summary's totals, directions, findings by rule, process images and call
sites computed with SQL.
"""
import json
import re
import sqlite3
import sys

HEX_RULES = {"flags_nonzero", "stream_legacy", "op_flags_invalid", "pointer_unmapped", "device_out_of_bounds",
             "overlap_dst_dst", "overlap_src_dst", "overlap_self"}


def u64(v):
    return v & 0xFFFFFFFFFFFFFFFF if v is not None else None


def hx(v):
    return "0x%x" % u64(v)


def dash(v):
    return "-" if v is None else str(v)


WORDS = re.compile(r' words="(?:[^"\\]|\\.)*" fix="(?:[^"\\]|\\.)*"$')


def show_lines(path):
    """show's records, `#` lines left out, and a finding's words and fix (the tables hold the raw fields)."""
    return [WORDS.sub("", line.rstrip("\n")) for line in open(path) if line.strip() and not line.startswith("#")]


def operand(side, r):
    t, kind, dev = r[side + "_type"], r[side + "_kind"], r[side + "_device"]
    if r[side + "_array"] is not None:
        main = " %s=%s:%s:%d:%s+%d,%d,%d" % (side, t, kind, dev, hx(r[side + "_array"]), r[side + "_x"],
                                            r[side + "_y"], r[side + "_z"])
    else:
        main = " %s=%s:%s:%d:%s" % (side, t, kind, dev, hx(r[side + "_ptr"]))
    detail = ""
    if t == "POINTER":
        detail = " %s_rowLength=%d %s_layerHeight=%d %s_locHint=%s:%d" % (
            side, r[side + "_row_length"], side, r[side + "_layer_height"], side, r[side + "_loc_type"],
            r[side + "_loc_id"])
        if r[side + "_alloc_size"] is not None:
            detail += " %s_alloc=%s+%d" % (side, hx(r[side + "_alloc_base"]), r[side + "_alloc_size"])
    elif t == "ARRAY" and r[side + "_array_width"] is not None:
        detail = " %s_array=%dx%dx%d*%d" % (side, r[side + "_array_width"], r[side + "_array_height"],
                                           r[side + "_array_depth"], r[side + "_elem_size"])
    return main, detail


def finding_keys(f):
    def val(v):
        return hx(v) if f["rule"] in HEX_RULES else str(u64(v))
    return " rule=%s severity=%s op=%s other_op=%s side=%s value=%s limit=%s" % (
        f["rule"], f["severity"], dash(f["op"]), dash(f["other_op"]), f["side"], val(f["value"]),
        val(f["limit_value"]))


def rebuilt(db):
    """show's lines (gpu lines apart), from the tables."""
    out = []
    procs = {r["process_key"]: r for r in db.execute("SELECT * FROM process_image")}
    for b in db.execute("SELECT * FROM batch ORDER BY batch_key").fetchall():
        p = procs[b["process_key"]]
        img = " image=%s" % p["image_tag"] if p["image_tag"] else ""
        who = "vpid=%d id=%d" % (p["pid"], b["id"])
        line = "batch " + who
        if b["api"] is not None:
            line += (" api=%s door=%s outcome=%s result=%s num_ops=%d recorded=%d flags=%s op_list=%s stream=%s"
                     " stream_id=%d context=%s device=%d capture=%s fail_idx=%s driver_ns=%d tid=%d caller=%s"
                     " device_count=%d format=%d rules=%d validated=%d inline_findings=%d") % (
                b["api"], b["door"], b["outcome"], b["result"], u64(b["num_ops"]), u64(b["ops_recorded"]),
                hx(b["flags"]), hx(b["op_list"]), hx(b["stream"]), u64(b["stream_id"]), hx(b["context"]),
                b["device"], b["capture"], dash(b["fail_idx"]), b["driver_ns"], b["tid"], hx(b["caller"]),
                b["device_count"], b["format"], b["rules"], b["validated"], b["inline_findings"])
            if b["srcs"] is not None:
                line += " srcs=%s sizes=%s attrs=%s attrs_idxs=%s num_attrs=%d attrs_recorded=%d abi=%d" % (
                    hx(b["srcs"]), hx(b["sizes"]), hx(b["attrs"]), hx(b["attrs_idxs"]), u64(b["num_attrs"]),
                    u64(b["attrs_recorded"]), b["abi"])
            if b["refused_in_capture"]:
                line += " mark=refused_in_capture"
        line += " host=%s state=%s%s" % (p["host"], b["state"], img)
        out.append(line)
        for a in db.execute("SELECT * FROM attribute WHERE batch_key = ? ORDER BY k", (b["batch_key"],)):
            out.append("attr %s k=%d idx=%d order=%s flags=%s src_locHint=%s:%d dst_locHint=%s:%d%s" % (
                who, a["k"], u64(a["idx"]), a["access_order"], hx(a["flags"]), a["src_loc_type"], a["src_loc_id"],
                a["dst_loc_type"], a["dst_loc_id"], img))
        for o in db.execute("SELECT * FROM op WHERE batch_key = ? ORDER BY i", (b["batch_key"],)):
            s_main, s_detail = operand("src", o)
            d_main, d_detail = operand("dst", o)
            out.append("op %s i=%d%s%s extent=%dx%dx%d order=%s flags=%s bytes=%d%s%s%s" % (
                who, o["i"], s_main, d_main, o["width"], o["height"], o["depth"], o["access_order"], hx(o["flags"]),
                u64(o["bytes"]), s_detail, d_detail, img))
        for f in db.execute("SELECT * FROM finding WHERE batch_key = ? ORDER BY reader DESC, finding_key",
                            (b["batch_key"],)):
            if f["reader"]:
                out.append("finding %s%s inline=%s%s" % (who, finding_keys(f), dash(f["inline"]), img))
            else:
                out.append("inline_finding %s%s%s" % (who, finding_keys(f), img))
    return out


def kv(line):
    return dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)


def main():
    db = sqlite3.connect(sys.argv[1])
    db.row_factory = sqlite3.Row
    lines = show_lines(sys.argv[2])
    summary = json.load(open(sys.argv[3]))
    res = []

    def cmp(name, want, got):
        res.append((name, str(want), str(got)))

    # ---- show, row for row
    want = [x for x in lines if not x.startswith("gpu ")]
    got = rebuilt(db)
    cmp("rows rebuilt from the tables", len(want), len(got))
    first = next((i for i in range(min(len(want), len(got))) if want[i] != got[i]), None)
    cmp("first row that differs from show's (none: -)", "-" if first is None else want[first],
        "-" if first is None else got[first])
    for kind in ("batch", "op", "attr", "finding", "inline_finding"):
        cmp("%s rows" % kind, sum(x.startswith(kind + " ") for x in want), sum(x.startswith(kind + " ") for x in got))
    # gpu lines: one row of gpu_time each, in order; the batch's own columns agree
    gw = [x for x in lines if x.startswith("gpu ")]
    gg = []
    procs = {r["process_key"]: r for r in db.execute("SELECT * FROM process_image")}
    for g in db.execute("SELECT * FROM gpu_time ORDER BY gpu_key"):
        p = procs[g["process_key"]]
        gg.append("gpu vpid=%d id=%d status=%s gpu_ns=%d start_rel_ns=%d tid=%d api=%s stream=%s stream_id=%d"
                  " device=%d driver_ns=%d ops=%d bytes=%d src_kind=%s dst_kind=%s src_device=%s dst_device=%s%s" % (
                      p["pid"], g["id"], g["status"], g["gpu_ns"], g["start_rel_ns"], g["tid"], g["api"],
                      hx(g["stream"]), g["stream_id"], g["device"], g["driver_ns"], g["ops"], g["bytes"],
                      g["src_kind"], g["dst_kind"], "mixed" if g["src_device"] is None else g["src_device"],
                      "mixed" if g["dst_device"] is None else g["dst_device"],
                      " image=%s" % p["image_tag"] if p["image_tag"] else ""))
    cmp("gpu rows", len(gw), len(gg))
    first = next((i for i in range(min(len(gw), len(gg))) if gw[i] != gg[i]), None)
    cmp("first gpu row that differs from show's (none: -)", "-" if first is None else gw[first],
        "-" if first is None else gg[first])
    cmp("batches' GPU columns agree with their gpu_time rows", 0, db.execute(
        "SELECT count(*) FROM batch b JOIN gpu_time g USING (batch_key) WHERE b.gpu_status IS NOT g.status"
        " OR (g.status = 'timed' AND (b.gpu_ns IS NOT g.gpu_ns OR b.gpu_start_ns IS NOT g.gpu_start_ns))"
    ).fetchone()[0])

    # ---- summary --json
    one = lambda q: db.execute(q).fetchone()[0]
    counted = "FROM batch WHERE state != 'no_header'"
    cmp("batches", summary["batches"], one("SELECT count(*) " + counted))
    # The summary counts the ops of every chunk read; show (and the export) hold the ops of the
    # chunks that fit their batch: on traces with malformed chunks the op figures are show's alone.
    whole = sum(x.startswith("op ") for x in lines) == summary["ops"]
    if not whole:
        print("# the summary counts %d ops, show holds %d: op figures compared with show's only" % (
            summary["ops"], sum(x.startswith("op ") for x in lines)), file=sys.stderr)
    if whole:
        cmp("ops", summary["ops"], one("SELECT coalesce(sum(ops), 0) FROM batch"))
        cmp("bytes", summary["bytes"], one("SELECT coalesce(sum(bytes), 0) FROM batch"))
    cmp("driver_ns", summary["driver_ns"], one("SELECT coalesce(sum(driver_ns), 0) " + counted))
    cmp("failed_batches", summary["failed_batches"],
        one("SELECT count(*) " + counted + " AND outcome = 'forwarded' AND result != 'CUDA_SUCCESS'"))
    cmp("refused_batches", summary["refused_batches"], one("SELECT count(*) " + counted + " AND outcome = 'refused'"))
    cmp("refused_in_capture_batches", summary["refused_in_capture_batches"],
        one("SELECT count(*) " + counted + " AND refused_in_capture"))
    cmp("processes", summary["processes"],
        one("SELECT count(DISTINCT process_key) FROM batch WHERE state != 'no_header' OR ops > 0"))
    cmp("threads", summary["threads"], one("SELECT count(*) FROM thread"))
    if whole:
      cmp("by_direction (name, ops, bytes)",
        sorted((r["name"], r["ops"], r["bytes"]) for r in summary["by_direction"]),
          sorted(tuple(r) for r in db.execute("SELECT direction, count(*), sum(bytes) FROM op GROUP BY direction")))
    cmp("findings by rule (read-time)", sorted((f["rule"], f["count"]) for f in summary["findings"]),
        sorted(tuple(r) for r in db.execute("SELECT rule, count(*) FROM finding WHERE reader GROUP BY rule")))
    cmp("by_process_rank (host, pid, image, image_tag, procname, rank, rank_var, batches[, ops, bytes])",
        sorted(((r["host"], r["pid"], r["image"], r["image_tag"], r["procname"], r["rank"], r["rank_var"],
                 r["batches"]) + ((r["ops"], r["bytes"]) if whole else ()) for r in summary["by_process_rank"]), key=str),
        sorted((tuple(r) for r in db.execute(
            "SELECT p.host, p.pid, p.image, p.image_tag, p.procname, p.rank, p.rank_var,"
            " sum(b.state != 'no_header')" + (", sum(b.ops), sum(b.bytes)" if whole else "") +
            " FROM process_image p JOIN batch b USING (process_key) GROUP BY p.process_key")), key=str))
    callers = [r for r in summary["callers"] if r["name"] != "other"]
    if whole and len(callers) == len(summary["callers"]):  # no "other" row: every call site is named
        cmp("callers (name, batches, ops, bytes)",
            sorted((r["name"], r["batches"], r["ops"], r["bytes"]) for r in callers),
            sorted(tuple(r) for r in db.execute(
                "SELECT c.name, count(*), sum(b.ops), sum(b.bytes) FROM batch b JOIN call_site c"
                " USING (process_key, caller) WHERE b.state != 'no_header' GROUP BY c.name")))
    gpu = summary["gpu"]
    cmp("gpu batches_timed", gpu["batches_timed"], one("SELECT count(*) FROM gpu_time WHERE status = 'timed'"))
    cmp("gpu gpu_ns", gpu["gpu_ns"], one("SELECT coalesce(sum(gpu_ns), 0) FROM gpu_time WHERE status = 'timed'"))
    meta = dict(db.execute("SELECT key, value FROM meta"))
    cmp("meta read_by", summary["read_by"], meta.get("read_by"))
    cmp("meta recorded_by", summary["recorded_by"], json.loads(meta.get("recorded_by", "null")))
    cmp("meta rules_recorded", summary["rules"]["recorded"], json.loads(meta.get("rules_recorded", "null")))
    cmp("meta rules_checked", summary["rules"]["checked"], int(meta.get("rules_checked", -1)))
    for k in ("pending_batches", "malformed_batches", "incomplete_batches", "not_validated_batches"):
        cmp("meta " + k, summary["read"][k], int(meta.get(k, -1)))
    cmp("meta discarded_events", summary["discarded_events"], int(meta.get("discarded_events", -1)))
    for name, w, g in res:
        print("%s\t%s\t%s" % (name, w, g))


if __name__ == "__main__":
    main()
