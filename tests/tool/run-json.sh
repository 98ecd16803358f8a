#!/bin/sh
# SPDX-License-Identifier: MIT
# The JSON of `run --json` and `--output-json FILE`, for a CI to parse:
#  - run --json: our standard output is the JSON alone, the program's own
#    standard output goes to standard error;
#  - run --output-json FILE: the JSON in FILE, the program's output where it was;
#  - summary --output-json FILE: the same JSON as summary --json, nothing on stdout.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
CUBATCHTRACE_SHIM="$top_builddir/src/.libs/libcubatchtrace-tp.so"; export CUBATCHTRACE_SHIM
[ -f "$CUBATCHTRACE_SHIM" ] || skip_all "libcubatchtrace-tp.so not built"

# at least N batches: other programs of the user traced meanwhile join the session
batches() { "$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1]))["batches"] >= int(sys.argv[2]))' "$1" "$2" 2>&1; }

"$CBT" run -o "$CBT_TMP/t1" --json -- sh -c 'echo program-says-hello; exec "$0" n=3' "$GEN" \
    >"$CBT_TMP/t1.out" 2>"$CBT_TMP/t1.err"
is "$?" 0 "run --json: the program's status"
is "$(batches "$CBT_TMP/t1.out" 3)" True "run --json: standard output parses as JSON, the program's 3 batches"
grep -q program-says-hello "$CBT_TMP/t1.out"; is $? 1 "run --json: the program's output is not in it"
grep -q '^program-says-hello$' "$CBT_TMP/t1.err"; ok $? "run --json: the program's output went to standard error"

"$CBT" run -o "$CBT_TMP/t2" --output-json "$CBT_TMP/t2.json" -- sh -c 'echo program-says-hello; exec "$0" n=2' "$GEN" \
    >"$CBT_TMP/t2.out" 2>"$CBT_TMP/t2.err"
is "$?" 0 "run --output-json: the program's status"
is "$(batches "$CBT_TMP/t2.json" 2)" True "run --output-json: the file holds the JSON summary, the program's 2 batches"
is "$(cat "$CBT_TMP/t2.out")" program-says-hello "run --output-json: standard output is the program's alone"

"$CBT" summary --output-json "$CBT_TMP/s.json" "$CBT_TMP/t1" >"$CBT_TMP/s.out" 2>"$CBT_TMP/s.err"
is "$?" 0 "summary --output-json: exit 0"
is "$(wc -c <"$CBT_TMP/s.out" | tr -d ' ')" 0 "summary --output-json: nothing on stdout"
"$CBT" summary --json "$CBT_TMP/t1" >"$CBT_TMP/s2.json"
cmp -s "$CBT_TMP/s.json" "$CBT_TMP/s2.json"; ok $? "summary --output-json: the file is what summary --json prints"
"$CBT" summary --output-json "$CBT_TMP/no-such-dir/s.json" "$CBT_TMP/t1" >"$CBT_TMP/s.out" 2>"$CBT_TMP/s.err"
one_line_error "summary --output-json to a directory that does not exist" $? "$CBT_TMP/s.out" "$CBT_TMP/s.err" "output-json"
done_testing
