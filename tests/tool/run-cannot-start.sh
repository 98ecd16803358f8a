#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that cannot start: the loader does not find a library it needs
# (exit status 127, the loader's own message), or it cannot be executed at
# all.  run exits with its status, names it as such in one line after the
# loader's, prints no summary, and leaves no trace directory behind.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
unset CUBATCHTRACE_SHIM
[ -f "$top_builddir/src/.libs/libcubatchtrace.so" ] || skip_all "libcubatchtrace.so not built"
[ -n "${CC:-}" ] || skip_all "no C compiler (CC)"

# a program linked against a library that is gone by the time it runs
echo 'int gone(void) { return 0; }' >"$CBT_TMP/gone.c"
echo 'int gone(void); int main(void) { return gone(); }' >"$CBT_TMP/needs.c"
$CC -shared -fPIC -o "$CBT_TMP/libgone.so" "$CBT_TMP/gone.c" &&
    $CC -o "$CBT_TMP/needs" "$CBT_TMP/needs.c" -L"$CBT_TMP" -lgone || skip_all "cannot build the test program"
rm -f "$CBT_TMP/libgone.so"

"$CBT" run -o "$CBT_TMP/t" -- "$CBT_TMP/needs" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is "$?" 127 "a program the loader cannot start: its exit status 127"
is "$(wc -c <"$CBT_TMP/out" | tr -d ' ')" 0 "nothing on stdout (no summary)"
grep -q 'libgone.so' "$CBT_TMP/err"; ok $? "the loader's message is there"
is "$(tail -1 "$CBT_TMP/err")" \
   "cubatchtrace run: $CBT_TMP/needs could not start (exit status 127: the loader did not find libgone.so): nothing was recorded" \
   "then one line names it as a program that could not start, its status and the library the loader did not find"
grep -q 'trace written' "$CBT_TMP/err"; is $? 1 "no 'trace written'"
[ ! -e "$CBT_TMP/t" ]; ok $? "no trace directory is left behind"

"$CBT" run -o "$CBT_TMP/t2" -- "$CBT_TMP/no-such-program" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
is "$?" 127 "a program that does not exist: exit status 127"
grep -q "cannot execute $CBT_TMP/no-such-program: No such file or directory" "$CBT_TMP/err"; ok $? "named as such"
[ ! -e "$CBT_TMP/t2" ]; ok $? "no trace directory is left behind"
[ $_tap_failed -eq 0 ] || sed 's/^/#   stderr: /' "$CBT_TMP/err"
done_testing
