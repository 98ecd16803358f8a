#!/bin/sh
# SPDX-License-Identifier: MIT
# Every source file the repository tracks names its licence (an SPDX line in
# its first three lines), and that licence is the one LICENSE holds.
# build-aux/tap-driver.sh is Automake's, under its own licence.
. "$top_srcdir/tests/lib.sh"

command -v git >/dev/null 2>&1 &&
    [ "$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$top_srcdir" && pwd -P)" ] ||
    skip_all "the source tree is not a git checkout's top (the file list comes from git ls-files)"
[ -f "$top_srcdir/LICENSE" ]; ok $? "LICENSE exists"
head -1 "$top_srcdir/LICENSE" | grep -qx 'MIT License'; ok $? "LICENSE is the MIT licence"
git -C "$top_srcdir" ls-files >"$CBT_TMP/files"
grep -E '\.(c|cc|h|S|cu|map|mk|am|ac|[137]|sh|py)$|^(bench/(overhead-run|profile|report)|scripts/[a-z-]+|tests/gpu/(build|run)|\.ci/run)$|\.pc\.in$' \
    "$CBT_TMP/files" | grep -v '^build-aux/' >"$CBT_TMP/sources"
n=$(wc -l <"$CBT_TMP/sources" | tr -d ' ')
[ "$n" -gt 100 ]; ok $? "source files listed ($n)"
: >"$CBT_TMP/missing"
while IFS= read -r f; do
    [ -f "$top_srcdir/$f" ] || continue
    head -3 "$top_srcdir/$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "$f" >>"$CBT_TMP/missing"
done <"$CBT_TMP/sources"
is "$(cat "$CBT_TMP/missing")" "" "every source file has 'SPDX-License-Identifier: MIT' in its first three lines"
done_testing
