#!/bin/sh
# SPDX-License-Identifier: MIT
# What the help and the README promise, as written:
#  - the tool's and run's --help say "batch copies (3D and 1D)", not only the 3D call;
#  - summary's usage line lists --by (host among its values), --jobs and --refresh;
#  - every LD_PRELOAD=PATH of the README names a path that exists, in the build
#    tree (relative) or once installed (absolute, under the configured libdir);
#  - the README says how to read the man pages uninstalled (man -l), and those exist.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"

"$CBT" --help >"$CBT_TMP/main.txt"
grep -q 'batch copies (3D and 1D' "$CBT_TMP/main.txt"; ok $? "cubatchtrace --help: batch copies (3D and 1D)"
"$CBT" run --help >"$CBT_TMP/run.txt"
grep -q 'batch copy (3D and 1D' "$CBT_TMP/run.txt"; ok $? "run --help: every batch copy (3D and 1D)"
cat "$CBT_TMP/main.txt" "$CBT_TMP/run.txt" | grep -q 'every cuMemcpy3DBatchAsync batch'
is $? 1 "neither says only 'every cuMemcpy3DBatchAsync batch'"

"$CBT" summary --help | sed -n '/^Usage:/,/^[^ U]/p' >"$CBT_TMP/usage.txt"
for opt in --by --jobs --refresh --output-json; do
    grep -q -- "$opt" "$CBT_TMP/usage.txt"; ok $? "summary's usage line lists $opt"
done
"$CBT" summary --help | grep -A1 -- '--by WHAT' | grep -q host; ok $? "summary --help: --by names host"

n=0
for p in $(grep -o 'LD_PRELOAD=[^ `"]*' "$top_srcdir/README.md" | sed 's/^LD_PRELOAD=//' | sort -u); do
    n=$((n + 1))
    case $p in
    /usr/local/lib/*) [ "$(basename "$p")" = libcubatchtrace.so ]; ok $? "README: LD_PRELOAD=$p is the installed shim" ;;
    /*) ok 1 "README: LD_PRELOAD=$p: an absolute path outside the default libdir" ;;
    *) [ -f "$top_builddir/$p" ]; ok $? "README: LD_PRELOAD=$p exists in the build tree" ;;
    esac
done
[ $n -gt 0 ]; ok $? "README: LD_PRELOAD examples found ($n)"
for m in $(grep -o 'man -l [^ `]*' "$top_srcdir/README.md" | sed 's/^man -l //' | sort -u); do
    [ -f "$top_srcdir/$m" ]; ok $? "README: man -l $m exists"
done
grep -q 'man -l docs/cubatchtrace.1' "$top_srcdir/README.md"; ok $? "README: man -l docs/cubatchtrace.1 for the uninstalled page"
done_testing
