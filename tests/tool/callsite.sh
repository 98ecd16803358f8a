#!/bin/sh
# SPDX-License-Identifier: MIT
# Call sites named from debug information: a C++ program built with -g
# (tests/tool/client_cxx.cc) makes one batch from a member function template
# in a namespace.  The summary (text and JSON) and check (text, JSON, SARIF)
# name the call as client_cxx.cc:LINE, LINE being the line marked CALL-SITE,
# with the function demangled.  A binary rebuilt after tracing (another build
# id at the same path) is not trusted for lines: the call site falls back to
# object+offset.  A binary gone from its path: object+offset.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
tracing_alone
SRC="$top_srcdir/tests/tool/client_cxx.cc"
line=$(grep -n '// CALL-SITE' "$SRC" | cut -d: -f1)
BIN="$CBT_TMP/bin/client_cxx"
build_client_cxx "$BIN" || skip_all "$CBT_CXX_FAIL"
unset CUBATCHTRACE_SHIM
export LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$CBT" run -o "$CBT_TMP/t" -- "$BIN" >"$CBT_TMP/run.out" 2>"$CBT_TMP/run.err"
is "$?" 0 "cubatchtrace run -- client_cxx exits 0"

want="client_cxx.cc:$line (app::Copier<int>::copy(CUDA_MEMCPY3D_BATCH_OP_st*, unsigned long, CUstream_st*), client_cxx+0x"
"$CBT" summary "$CBT_TMP/t" >"$CBT_TMP/sum.txt" 2>&1
grep -A4 '^# Top call sites' "$CBT_TMP/sum.txt" | grep -F "$want" >/dev/null
ok $? "summary text names the call site $want..."
"$CBT" summary --json "$CBT_TMP/t" >"$CBT_TMP/sum.json" 2>&1
is "$("$PYTHON3" -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
s = d["callers"][0]["site"]
print(os.path.basename(s["file"]), s["line"], s["function"], os.path.basename(s["object"]))' "$CBT_TMP/sum.json")" \
   "client_cxx.cc $line app::Copier<int>::copy(CUDA_MEMCPY3D_BATCH_OP_st*, unsigned long, CUstream_st*) client_cxx" \
   "summary JSON: the call site's file, line, demangled function and object"
"$CBT" check "$CBT_TMP/t" >"$CBT_TMP/check.txt" 2>&1
grep '^hazard overlap_dst_dst' "$CBT_TMP/check.txt" | grep -qF "caller=$want"; ok $? "check text names the call site $want..."
"$CBT" check --format json "$CBT_TMP/t" >"$CBT_TMP/check.json" 2>&1
is "$("$PYTHON3" -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
s = d["findings"][0]["site"]
print(os.path.basename(s["file"]), s["line"], s["function"])' "$CBT_TMP/check.json")" \
   "client_cxx.cc $line app::Copier<int>::copy(CUDA_MEMCPY3D_BATCH_OP_st*, unsigned long, CUstream_st*)" \
   "check JSON: the finding's call site, file, line and function"
"$CBT" check --format sarif "$CBT_TMP/t" >"$CBT_TMP/check.sarif" 2>&1
is "$("$PYTHON3" -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
loc = d["runs"][0]["results"][0]["locations"][0]
p = loc["physicalLocation"]
print(os.path.basename(p["artifactLocation"]["uri"]), p["region"]["startLine"], loc["logicalLocations"][0]["fullyQualifiedName"])' "$CBT_TMP/check.sarif")" \
   "client_cxx.cc $line app::Copier<int>::copy(CUDA_MEMCPY3D_BATCH_OP_st*, unsigned long, CUstream_st*)" \
   "check SARIF: the result's physical location (file, line) and logical location (function)"

# rebuilt since the trace was taken: another build id at the same path
build_client_cxx "$BIN" -DREBUILT=1 -O0; is "$?" 0 "the client rebuilt (-O0: another build id)"
"$CBT" summary "$CBT_TMP/t" >"$CBT_TMP/sum2.txt" 2>&1
name=$(grep -A4 '^# Top call sites' "$CBT_TMP/sum2.txt" | sed -n 5p | cut -d'|' -f1 | sed 's/ *$//')
case $name in client_cxx+0x*) ok 0 "a rebuilt binary's lines are not used: $name" ;;
              *) ok 1 "a rebuilt binary's lines are not used: $name" ;; esac
rm -f "$BIN"
"$CBT" summary "$CBT_TMP/t" >"$CBT_TMP/sum3.txt" 2>&1
name=$(grep -A4 '^# Top call sites' "$CBT_TMP/sum3.txt" | sed -n 5p | cut -d'|' -f1 | sed 's/ *$//')
case $name in client_cxx+0x*) ok 0 "a binary gone from its path: object+offset ($name)" ;;
              *) ok 1 "a binary gone from its path: object+offset ($name)" ;; esac
# looking for it by build id loads no debuginfod client (libcurl and the
# rest: milliseconds a run, and the reader asks no server anyway)
if command -v strace >/dev/null 2>&1; then
    strace -f -qq -e trace=openat -o "$CBT_TMP/open.strace" "$CBT" summary "$CBT_TMP/t" >/dev/null 2>&1
    ok "$(grep -q 'libdebuginfod' "$CBT_TMP/open.strace" && echo 1 || echo 0)" \
       "a binary gone from its path: the debuginfod client is not loaded"
else
    ok 0 "# SKIP strace not installed (scripts/install-deps installs it)"
fi
done_testing
