#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/results/ as bench/README.md says it is: current/ (what
# docs/PERFORMANCE.md is made of) and history/ (the experiments), nothing
# else; every experiment of history/ has its one line in history/INDEX.md,
# whose sections exist in the documents it names; and bench/report makes
# docs/PERFORMANCE.md and docs/EXPERIMENTS.md from bench/results as they are
# committed.
. "$top_srcdir/tests/lib.sh"
B=$top_srcdir/bench/results
[ -d "$B" ] || skip_all "no bench/results in this tree"
is "$(ls "$B" | tr '\n' ' ')" "current history " "bench/results holds current/ and history/, nothing else"
ok "$(test -s "$B/current/overhead-session.csv" && test -s "$B/current/analysis.md"; echo $?)" \
    "current/ holds the session pass and the reading"
I=$B/history/INDEX.md
ok "$(test -s "$I"; echo $?)" "history/INDEX.md"
dirs=$(cd "$B/history" && ls -d */ | tr -d / | sort | tr '\n' ' ')
listed=$(sed -n 's/^| `\([^`/]*\)\/` |.*/\1/p' "$I" | sort | tr '\n' ' ')
is "$listed" "$dirs" "INDEX.md: one line per experiment, each directory of history/"
is "$(sed -n 's/^| `\([^`/]*\)\/` |.*/\1/p' "$I" | sort | uniq -d)" "" "INDEX.md: no experiment twice"
# every line: directory | what | verdict | where, four non-empty cells
is "$(grep '^| `' "$I" | awk -F' [|] ' '{ c = $0; gsub(/[^|]/, "", c) } length(c) != 5 || $2 == "" || $3 == "" || $4 == "" { print }')" "" \
    "INDEX.md: every line has what it tried, its verdict and where it is read"
missing=$(grep -o '`docs/[A-Z]*\.md` § [^|]*' "$I" | sed 's/ *$//' | while IFS= read -r l; do
    doc=$(printf '%s' "$l" | sed 's/^`\([^`]*\)`.*/\1/')
    title=$(printf '%s' "$l" | sed 's/^[^§]*§ //')
    grep -qxF "## $title" "$top_srcdir/$doc" || printf '%s\n' "$l"
done)
is "$missing" "" "INDEX.md: every section it names is in its document"
bash "$top_srcdir/bench/report" "$B" >"$CBT_TMP/perf.md" 2>"$CBT_TMP/err"
ok "$(cmp -s "$CBT_TMP/perf.md" "$top_srcdir/docs/PERFORMANCE.md"; echo $?)" \
    "bench/report bench/results makes docs/PERFORMANCE.md as committed"
bash "$top_srcdir/bench/report" --experiments "$B" >"$CBT_TMP/exp.md" 2>>"$CBT_TMP/err"
ok "$(cmp -s "$CBT_TMP/exp.md" "$top_srcdir/docs/EXPERIMENTS.md"; echo $?)" \
    "bench/report --experiments bench/results makes docs/EXPERIMENTS.md as committed"
is "$(cat "$CBT_TMP/err")" "" "bench/report writes nothing to stderr"
done_testing
