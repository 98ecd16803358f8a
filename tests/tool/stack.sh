#!/bin/sh
# SPDX-License-Identifier: MIT
# The short stack (run --stack N, CUBATCHTRACE_STACK=N): a batch made through
# two helpers of a wrapper library (tests/clients/client_stack.c ->
# stack_wrap.c: stackwrap_outer -> wrap_inner -> cuMemcpy3DBatchAsync_v2),
# with a row_length_too_small finding.  With --stack 4, check (text, JSON,
# SARIF), the summary's findings and show name all three lines (the marks
# STACK-LINE-inner, -outer, -main); without it, only the direct caller, and
# the trace holds no cubatchtrace:stack event.  --skip-frames
# libstackwrap.so places the batch and the finding at the user's line.
# CUBATCHTRACE_STACK that is not a number of frames is said once.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
tracing_alone
C="$top_builddir/tests/clients"
W="$top_srcdir/tests/clients/stack_wrap.c"
M="$top_srcdir/tests/clients/client_stack.c"
inner="stack_wrap.c:$(grep -n 'STACK-LINE-inner' "$W" | cut -d: -f1)"
outer="stack_wrap.c:$(grep -n 'STACK-LINE-outer' "$W" | cut -d: -f1)"
main="client_stack.c:$(grep -n 'STACK-LINE-main' "$M" | cut -d: -f1)"
unset CUBATCHTRACE_SHIM
export LD_LIBRARY_PATH="$C/.libs:$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

"$CBT" run --stack 4 -o "$CBT_TMP/s4" -- "$C/client_stack" 3 >"$CBT_TMP/s4.out" 2>"$CBT_TMP/s4.err"
is "$?" 0 "run --stack 4 -- client_stack exits 0"
diag "$(cat "$CBT_TMP/s4.out" "$CBT_TMP/s4.err" | head -n 40)"

"$CBT" check "$CBT_TMP/s4" >"$CBT_TMP/check.txt" 2>&1
line=$(grep '^error row_length_too_small' "$CBT_TMP/check.txt" | head -n 1)
diag "$line"
for want in "$inner" "$outer" "$main"; do
    case $line in *"$want "*) ok 0 "check text names $want" ;; *) ok 1 "check text names $want" ;; esac
done
case $line in *"caller=$inner "*"<- $outer "*"<- $main "*) ok 0 "check text: the caller first, then its callers in order" ;;
              *) ok 1 "check text: the caller first, then its callers in order" ;; esac

"$CBT" check --format json "$CBT_TMP/s4" >"$CBT_TMP/check.json" 2>&1
is "$("$PYTHON3" -c '
import json, os, sys
f = json.load(open(sys.argv[1]))["findings"][0]
print(" ".join("%s:%s" % (os.path.basename(s["file"]), s["line"]) for s in ([f["site"]] + f["callers"])[:3]))' "$CBT_TMP/check.json")" \
   "$inner $outer $main" "check JSON: site, then callers (file:line; the first three of the four frames)"

"$CBT" check --format sarif "$CBT_TMP/s4" >"$CBT_TMP/check.sarif" 2>&1
is "$("$PYTHON3" -c '
import json, os, sys
r = json.load(open(sys.argv[1]))["runs"][0]["results"][0]
locs = (r["locations"] + r["relatedLocations"])[:3]
print(" ".join("%s:%s" % (os.path.basename(l["physicalLocation"]["artifactLocation"]["uri"]),
                          l["physicalLocation"]["region"]["startLine"]) for l in locs))' "$CBT_TMP/check.sarif")" \
   "$inner $outer $main" "check SARIF: location, then relatedLocations (file:line)"

"$CBT" summary "$CBT_TMP/s4" >"$CBT_TMP/sum.txt" 2>&1
first=$(grep -A0 '^error row_length_too_small' "$CBT_TMP/sum.txt" | head -n 1)
diag "$first"
case $first in *"$inner "*"<- $outer "*"<- $main "*) ok 0 "summary: the rule's first finding names the three lines" ;;
               *) ok 1 "summary: the rule's first finding names the three lines" ;; esac

"$CBT" show --records "$CBT_TMP/s4" >"$CBT_TMP/show.txt" 2>&1
grep '^batch ' "$CBT_TMP/show.txt" | head -n 1 | grep -q ' stack=0x[0-9a-f]*,0x[0-9a-f]*,0x[0-9a-f]*'
ok $? "show --records: the batch's stack (three frames or more)"
"$CBT" show "$CBT_TMP/s4" >"$CBT_TMP/show-pretty.txt" 2>&1
# the batch line names the caller, the next two lines its callers, one a line
first=$(grep -A2 ' batch [0-9]* pid ' "$CBT_TMP/show-pretty.txt" | head -n 3 | tr '\n' '|')
diag "$first"
case $first in *"at $inner "*"|    <- $outer "*"|    <- $main "*) ok 0 "show: the batch names the three lines, one a line" ;;
               *) ok 1 "show: the batch names the three lines, one a line" ;; esac

# --skip-frames: the wrapper library's user sees its own line
"$CBT" summary --skip-frames libstackwrap.so "$CBT_TMP/s4" >"$CBT_TMP/sum-skip.txt" 2>&1
site=$(grep -A4 '^# Top call sites' "$CBT_TMP/sum-skip.txt" | tail -n 1)
diag "$site"
case $site in "$main "*) ok 0 "summary --skip-frames: the call site is $main" ;;
              *) ok 1 "summary --skip-frames: the call site is $main" ;; esac
"$CBT" check --skip-frames libstackwrap.so "$CBT_TMP/s4" >"$CBT_TMP/check-skip.txt" 2>&1
grep '^error row_length_too_small' "$CBT_TMP/check-skip.txt" | head -n 1 | grep -qF "caller=$main "
ok $? "check --skip-frames: the finding is placed at $main"
"$CBT" summary "$CBT_TMP/s4" >"$CBT_TMP/sum-noskip.txt" 2>&1
site=$(grep -A4 '^# Top call sites' "$CBT_TMP/sum-noskip.txt" | tail -n 1)
case $site in "$inner "*) ok 0 "summary without --skip-frames: the call site is $inner" ;;
              *) ok 1 "summary without --skip-frames: the call site is $inner" ;; esac

# without --stack: the direct caller alone, no stack event
"$CBT" run -o "$CBT_TMP/s0" -- "$C/client_stack" >/dev/null 2>&1
is "$?" 0 "run -- client_stack (no --stack) exits 0"
line=$("$CBT" check "$CBT_TMP/s0" 2>&1 | grep '^error row_length_too_small' | head -n 1)
case $line in *"caller=$inner ("*"<-"*) ok 1 "without --stack: only the caller" ;;
              *"caller=$inner ("*) ok 0 "without --stack: only the caller" ;;
              *) ok 1 "without --stack: only the caller" ;; esac
n=$("$BABELTRACE2" "$CBT_TMP/s0" 2>/dev/null | grep -c 'cubatchtrace:stack')
is "$n" 0 "without --stack: no cubatchtrace:stack event"
n=$("$BABELTRACE2" "$CBT_TMP/s4" 2>/dev/null | grep -c 'cubatchtrace:stack')
is "$n" 3 "with --stack 4: one cubatchtrace:stack event per batch"

# the setting itself
"$CBT" run --stack 17 -o "$CBT_TMP/bad" -- true >/dev/null 2>"$CBT_TMP/bad.err"
is "$?" 2 "run --stack 17: a usage error"
CUBATCHTRACE_STACK=x cbt_run "$C/client_stack" >/dev/null 2>"$CBT_TMP/env.err"
is "$(grep -c 'CUBATCHTRACE_STACK=x is not a number of frames' "$CBT_TMP/env.err")" 1 "CUBATCHTRACE_STACK=x is said once"
done_testing
