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
# The advice-* cases: no GPU to measure a cost table on, so one made up for
# the double, which exercises --advice-costs (the timings are not compared).
printf '%s\n' 'gpu=the test double (tests/fakecuda), figures made up' 'driver=none' 'batch_h2d_gibps=20' \
    'batch_h2d_pageable_gibps=10' 'batch_d2d_gibps=100' 'batch_d2d_overlap_gibps=50' 'sm_d2d_gibps=1000' \
    >"$CBT_TMP/advice-costs.txt"
CBT_GPU_ADVICE_COSTS=$CBT_TMP/advice-costs.txt \
CBT_GPU_FAKECUDA=$CBT_FAKECUDA_DIR CBT_GPU_SHIM=$CBT_SHIM CBT_GPU_BIN=$bin \
CBT_GPU_LTTNG=$LTTNG CBT_GPU_BT2=$BABELTRACE2 CBT_GPU_PYTHON=$PYTHON3 CBT_GPU_SITE= \
CBT_GPU_TOOL=$top_builddir/tools/cubatchtrace \
CBT_GPU_CASES=gpa-vs-dlsym,newdoors-,drv-,py-ctypes-binding,table-,crash-,reads-,peer_,1d-,table1d-,capture-,steady-,advice- CBT_GPU_DEADLINE=420 \
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
# the table's figures reach the estimates: 64 MiB at 10 against 20 GiB/s, at 50 against 100, at 100 against 1000
grep -q '^| `advice-pageable` .*pageable_source: estimated 3125.0 us,.*cost table [^ ]*advice-costs.txt (the test double' \
    "$CBT_TMP/gpu-results.md" &&
    grep -q '^| `advice-engine` .*overlap_flag_large_copy: estimated 625.0 us,.*same_device_engine_copy: estimated 562.5 us' \
        "$CBT_TMP/gpu-results.md"
ok $? "the advice-* cases' estimates in the report come from the cost table they were given"
PYTHONDONTWRITEBYTECODE=1 "$PYTHON3" -c 'import sys; sys.path.insert(0, sys.argv[1]); import suiteadvice
sys.exit(0 if suiteadvice.selftest() else 1)' "$top_srcdir/tests/gpu" >"$CBT_TMP/selftest.log" 2>&1
ok $? "the advice-* cases' verdicts on made-up figures (the dry run cannot compare timings)"
[ -s "$CBT_TMP/selftest.log" ] && diag "$(cat "$CBT_TMP/selftest.log")"
done_testing
