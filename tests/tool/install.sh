#!/bin/sh
# SPDX-License-Identifier: MIT
# The installation, as a user meets it: `make install` into a temporary
# staging directory (DESTDIR), then
#  - headers in $(includedir)/cubatchtrace/, no libtool archive, the docs and
#    the man pages of the tool, the shim and the validator;
#  - a C and a C++ unit test of the user's, compiled against the installed
#    validator with `pkg-config --cflags --libs cubatchtrace-validate` alone
#    (pkg-config's --define-prefix places the staged prefix), and run;
#  - the installed `cubatchtrace run` tracing the demo from another
#    directory, with the installed shim.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
command -v pkg-config >/dev/null 2>&1 || skip_all "pkg-config not installed"
D=$CBT_TMP/stage
# a make of its own: not the jobserver of the `make check` that runs this test
(cd "$top_builddir" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make install DESTDIR="$D") >"$CBT_TMP/install.log" 2>&1
st=$?
is "$st" 0 "make install DESTDIR=... succeeds"
[ "$st" -eq 0 ] || { tail -n 20 "$CBT_TMP/install.log" | sed 's/^/# /'; done_testing; }

pc=$(find "$D" -name cubatchtrace-validate.pc)
[ -n "$pc" ]; ok $? "cubatchtrace-validate.pc is installed ($pc)"
export PKG_CONFIG_PATH="$(dirname "$pc")"
PC="pkg-config --define-prefix"
prefix=$($PC --variable=prefix cubatchtrace-validate)
libdir=$($PC --variable=libdir cubatchtrace-validate)
includedir=$($PC --variable=includedir cubatchtrace-validate)
case $prefix in "$D"/*) ok 0 "the prefix is the staged one ($prefix)" ;; *) ok 1 "the prefix is the staged one ($prefix)" ;; esac
is "$($PC --modversion cubatchtrace-validate)" "$("$CBT" --version | sed 's/^cubatchtrace //')" \
    "pkg-config's version is the tool's --version"
for h in validate.h catalog.h events.h; do
    [ -f "$includedir/cubatchtrace/$h" ]; ok $? "header installed as include/cubatchtrace/$h"
done
[ ! -e "$includedir/include" ]; ok $? "no include/include directory"
is "$(find "$D" -name '*.la' | tr '\n' ' ')" "" "no libtool archive (.la) installed"
for l in libcubatchtrace.so libcubatchtrace-tp.so libcubatchtrace-validate.so; do
    [ -e "$libdir/$l" ]; ok $? "$l installed in libdir"
done
# The babeltrace2 plugin: under DESTDIR, in the directory configure chose, and babeltrace2 lists it from there
plugdir=$(cd "$top_builddir" && printf 'include Makefile\nprint-plugindir:\n\t@echo $(bt2pluginexecdir)\n' |
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -f - print-plugindir)
[ -f "$D$plugdir/babeltrace-plugin-cubatchtrace.so" ]
ok $? "the babeltrace2 plugin is installed under DESTDIR in the plugin directory ($plugdir)"
is "$(find "$D" -name 'babeltrace-plugin-cubatchtrace*' | wc -l | tr -d ' ')" 1 "the plugin is the .so alone (no .la)"
if [ -n "${BABELTRACE2:-}" ]; then
    env -u BABELTRACE_PLUGIN_PATH "$BABELTRACE2" --plugin-path="$D$plugdir" list-plugins >"$CBT_TMP/plugins" 2>&1
    grep -q "'filter.cubatchtrace.expand'" "$CBT_TMP/plugins"
    ok $? "babeltrace2 --plugin-path=\$DESTDIR$plugdir list-plugins lists filter.cubatchtrace.expand"
    grep -A1 '^cubatchtrace:' "$CBT_TMP/plugins" | grep -qF "$D$plugdir/babeltrace-plugin-cubatchtrace.so"
    ok $? "... from the installed file"
fi
docdir=$(find "$D" -type d -path '*/doc/cubatchtrace' | head -1)
for d in README.md NEWS LICENSE events.md rules.md json-schema.md; do
    [ -f "$docdir/$d" ]; ok $? "doc $d installed under \$(docdir)"
done
version=$("$CBT" --version | sed 's/^cubatchtrace //')
for m in man1/cubatchtrace.1 man3/libcubatchtrace-validate.3 man7/libcubatchtrace.7; do
    f=$(find "$D" -path "*/man/$m" | head -1)
    [ -n "$f" ]; ok $? "man page $m installed"
    [ -n "$f" ] && { grep '^\.TH' "$f" | grep -qF "\"cubatchtrace $version\""; ok $? "$m names version $version"; }
done
for v in $(sed -n 's/^\.TP$//;s/^\.B \(CUBATCHTRACE_[A-Z_]*\)$/\1/p' "$top_srcdir/docs/libcubatchtrace.7"); do echo "$v"; done | sort -u >"$CBT_TMP/man-vars"
grep -oh 'secure_getenv("CUBATCHTRACE_[A-Z_]*")' "$top_srcdir"/src/*.c | sed 's/.*("\(.*\)")/\1/' | sort -u >"$CBT_TMP/src-vars"
[ -s "$CBT_TMP/src-vars" ]; ok $? "the shim reads CUBATCHTRACE_* variables ($(tr '\n' ' ' <"$CBT_TMP/src-vars"))"
is "$(comm -23 "$CBT_TMP/src-vars" "$CBT_TMP/man-vars" | tr '\n' ' ')" "" "libcubatchtrace(7) describes every variable the shim reads"

# A user's unit tests, C and C++: a zero extent is an error the validator names.
cat >"$CBT_TMP/user.c" <<'C'
#include <cubatchtrace/validate.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    op.src.op.ptr.ptr = (CUdeviceptr)0x10000;
    op.dst.op.ptr.ptr = (CUdeviceptr)0x20000;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    op.extent.width = 0; /* the mistake */
    op.extent.height = op.extent.depth = 1;
    struct cbt_batch_view b;
    memset(&b, 0, sizeof b);
    b.num_ops = 1;
    b.ops = &op;
    b.stream = (CUstream)0x1000;
    struct cbt_finding f[8];
    struct cbt_validator *v = cbt_validator_new();
    size_t n = cbt_validate(v, &b, f, 8);
    printf("version %s\n", cbt_version());
    for (size_t i = 0; i < n && i < 8; i++)
        printf("%s %s\n", cbt_rules[f[i].rule].name, cbt_severity_name(f[i].severity));
    cbt_validator_free(v);
    return 0;
}
C
cp "$CBT_TMP/user.c" "$CBT_TMP/user.cpp"
flags=$($PC --cflags --libs cubatchtrace-validate)
diag "pkg-config --cflags --libs cubatchtrace-validate: $flags"
CXX_=${CXX:-$(command -v c++ || command -v g++ || command -v clang++)}
for lang in c cpp; do
    if [ "$lang" = c ]; then comp=${CC:-cc}; else comp=$CXX_; fi
    if [ -z "$comp" ]; then ok 0 "# SKIP no C++ compiler"; continue; fi
    # shellcheck disable=SC2086
    (cd "$CBT_TMP" && $comp -o "user-$lang" "user.$lang" $flags) >"$CBT_TMP/cc-$lang.log" 2>&1
    st=$?
    is "$st" 0 "a $lang program builds against the installed validator with pkg-config alone"
    [ "$st" -eq 0 ] || sed 's/^/# /' "$CBT_TMP/cc-$lang.log"
    out=$(LD_LIBRARY_PATH="$libdir" "$CBT_TMP/user-$lang" 2>&1)
    is "$out" "version $version
extent_zero error" "the $lang program runs on the installed library: version and the zero extent's finding"
done

# The installed tool, run from another directory, traces the demo with the installed shim.
if want_sessiond; then
    tracing_alone
    bin=$(find "$D" -path '*/bin/cubatchtrace' -type f | head -1)
    mkdir -p "$CBT_TMP/elsewhere"
    (cd "$CBT_TMP/elsewhere" && unset CUBATCHTRACE_SHIM &&
        LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR" "$bin" run -o demo-trace -- "$top_builddir/examples/demo") \
        >"$CBT_TMP/run.out" 2>"$CBT_TMP/run.err"
    is "$?" 0 "the installed cubatchtrace run -- examples/demo exits 0, from another directory"
    grep -q '^# batches: [1-9]' "$CBT_TMP/run.out"; ok $? "its summary counts the demo's batches"
    "$BABELTRACE2" "$CBT_TMP/elsewhere/demo-trace" 2>/dev/null | grep 'lttng_ust_statedump:bin_info' |
        grep -o 'path = "[^"]*libcubatchtrace.so"' | sort -u >"$CBT_TMP/shim-path"
    is "$(cat "$CBT_TMP/shim-path")" "path = \"$libdir/libcubatchtrace.so\"" "the shim it preloaded is the installed one"
else
    ok 0 "# SKIP the installed run: $CBT_NO_SESSIOND"
fi
done_testing
