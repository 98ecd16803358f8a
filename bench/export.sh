#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/export.sh: how fast `cubatchtrace export` writes the SQLite database
# of a trace, next to `babeltrace2 --output-format=dummy` (the decoder alone)
# and `cubatchtrace summary` on the same trace, and its peak RSS, measured in
# one run.
#
#   bench/export.sh [OPS...]   (default: 1000000 4000000)
#
# Run from the build directory after `make`.  Each OPS point is the trace of
# bench/summary.sh (cbt-gen --mix OPS in the shim's format), recorded by it
# when $CBT_BENCH_DIR (default /tmp/cbt-bench) does not hold it yet.  Best of
# $CBT_BENCH_REPEAT (default 3) wall times, the least CPU time (user +
# system: what a busy machine changes least) and the max RSS of each reader.
# The database goes beside the trace and is removed after each run.  The goal
# (issue 52): at most 2x the dummy sink's time at 1 M ops; RSS flat from the
# first point to the last (rows are streamed, one transaction per 65536).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${top_builddir:-$(pwd)}
CBT="$build/tools/cubatchtrace"
BT=${BABELTRACE2:-$(command -v babeltrace2 || true)}
dir=${CBT_BENCH_DIR:-/tmp/cbt-bench}
repeat=${CBT_BENCH_REPEAT:-3}
[ -x "$CBT" ] || { echo "export.sh: build first (run it from the build directory)" >&2; exit 2; }
[ -n "$BT" ] || { echo "export.sh: babeltrace2 not found" >&2; exit 2; }
format=$(sed -n 's/^#define CBT_EV_FORMAT \([0-9]*\).*/\1/p' "$top/include/cubatchtrace/events.h")
[ $# -gt 0 ] || set -- 1000000 4000000

# measure CMD...: best wall time, max RSS (KiB), least CPU time (user + system s) of $repeat runs
measure() { python3 "$top/bench/measure.py" "$repeat" "$@"; }

printf '# cubatchtrace export vs babeltrace2 --output-format=dummy and cubatchtrace summary (best of %s; RSS: max resident KiB; CPU: user + system s)\n' "$repeat"
printf '# host: %s, %s CPUs, load average %s; libsqlite3 %s\n' "$(uname -n)" "$(nproc)" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" "$(pkg-config --modversion sqlite3 2>/dev/null || echo '?')"
printf '%-9s | %-8s | %-8s | %-9s | %-9s | %-6s | %-9s | %-9s | %-10s | %-9s | %-9s | %-10s | %s\n' \
    Ops "Trace MB" "DB MB" "dummy s" "export s" ratio "dummy CPU" "export CPU" "CPU ratio" "summary s" \
    "dummy RSS" "export RSS" "summary RSS"
first="" last=""
for ops in "$@"; do
    t="$dir/mix-f$format-$ops"
    if ! [ -f "$t.complete" ]; then
        CBT_BENCH_REPEAT=1 sh "$top/bench/summary.sh" "$ops" >/dev/null || { echo "export.sh: no trace of $ops ops" >&2; exit 1; }
    fi
    db="$t.export.sqlite"
    rm -f "$db"
    "$CBT" export -o "$db" "$t" >/dev/null
    dbmb=$(du -m "$db" | cut -f1)
    rm -f "$db"
    set -- $(measure "$BT" --output-format=dummy "$t") $(measure --remove "$db" "$CBT" export -o "$db" "$t") \
        $(measure "$CBT" summary "$t")
    [ "$1" != FAILED ] && [ "$4" != FAILED ] && [ "$7" != FAILED ] || { echo "export.sh: a reader failed on $t" >&2; exit 1; }
    printf '%-9s | %-8s | %-8s | %-9s | %-9s | %-6s | %-9s | %-9s | %-10s | %-9s | %-9s | %-10s | %s\n' \
        "$ops" "$(du -sm "$t" | cut -f1)" "$dbmb" "$1" "$4" "$(python3 -c "print('%.2fx' % ($4 / $1))")" \
        "$3" "$6" "$(python3 -c "print('%.2fx' % ($6 / $3))")" "$7" "$2" "$5" "$8"
    [ -n "$first" ] && last="$5 $ops $2" || first="$5 $ops $2"
done
if [ -n "$last" ]; then
    set -- $first $last
    printf '# export peak RSS: %s KiB at %s ops, %s KiB at %s ops (x%s)\n' "$1" "$2" "$4" "$5" \
        "$(python3 -c "print('%.2f' % ($4 / $1))")"
    # what babeltrace2's decoding itself grows by (the dummy sink's RSS) is not the export's
    printf '# export peak RSS beyond the dummy sink'"'"'s: %s KiB at %s ops, %s KiB at %s ops (x%s)\n' \
        "$(($1 - $3))" "$2" "$(($4 - $6))" "$5" "$(python3 -c "print('%.2f' % (($4 - $6) / ($1 - $3)))")"
fi
