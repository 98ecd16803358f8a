#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the GPU suite (tests/gpu/suite.py) dry-run over the CPU test
# double, so that its clients, trace parsing and verdicts are exercised on
# every machine.  One TAP line per suite case, plus the report's shape.
. "$top_srcdir/tests/lib.sh"
need_sessiond
[ -x "$top_builddir/tests/gpu/drv" ] && [ -x "$top_builddir/tests/gpu/gpa_table" ] && [ -x "$top_builddir/tests/gpu/peer" ] &&
    [ -x "$top_builddir/tests/gpu/reads" ] ||
    skip_all "the GPU clients are not built"
[ -n "${PYTHON3:-}" ] || skip_all "python3 not installed"

# The clients, and the door tests' client_1d and client_big3d, which the
# suite's 1d- and steady- cases run.
bin=$CBT_TMP/bin
mkdir -p "$bin"
for f in "$top_builddir"/tests/gpu/* "$top_builddir/tests/clients/client_1d" "$top_builddir/tests/clients/client_big3d"; do
    [ -f "$f" ] && [ -x "$f" ] && ln -sf "$f" "$bin/"
done
CBT_GPU_FAKECUDA=$CBT_FAKECUDA_DIR CBT_GPU_SHIM=$CBT_SHIM CBT_GPU_BIN=$bin \
CBT_GPU_LTTNG=$LTTNG CBT_GPU_BT2=$BABELTRACE2 CBT_GPU_PYTHON=$PYTHON3 CBT_GPU_SITE= \
CBT_GPU_TOOL=$top_builddir/tools/cubatchtrace \
CBT_GPU_CASES=gpa-vs-dlsym,newdoors-,drv-,py-ctypes-binding,table-,crash-,reads-,peer_,1d-,table1d-,capture-,steady- CBT_GPU_DEADLINE=420 \
    "$PYTHON3" "$top_srcdir/tests/gpu/suite.py" --out "$CBT_TMP/gpu-results.md" >"$CBT_TMP/suite.log" 2>&1
st=$?
while read -r status name rest; do
    case $status in
    ok) ok 0 "gpu suite dry run: $name" ;;
    FAIL) ok 1 "gpu suite dry run: $name"; diag "$rest" ;;
    skip) echo "ok $((_tap_n = _tap_n + 1)) - gpu suite dry run: $name # SKIP $rest" ;;
    esac
done <"$CBT_TMP/suite.log"
[ "$_tap_n" -ge 36 ]; ok $? "the dry run ran every case it can serve ($_tap_n)"
tail -1 "$CBT_TMP/suite.log" | grep -q '^[0-9]* passed, 0 failed'; ok $? "the suite's summary line: $(tail -1 "$CBT_TMP/suite.log")"
[ $st -eq 0 ]; ok $? "suite.py exits 0"
grep -q '^## How to rerun' "$CBT_TMP/gpu-results.md" && grep -q '^| `table-observe-v2` |' "$CBT_TMP/gpu-results.md" &&
    grep -q '^## Read-time findings against inline findings' "$CBT_TMP/gpu-results.md" &&
    grep -q '^| `partial-16M` |' "$CBT_TMP/gpu-results.md"
ok $? "the Markdown report has the cases, the inline-vs-read comparison, the probes and the rerun line"
done_testing
