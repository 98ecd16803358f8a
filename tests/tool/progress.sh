#!/bin/sh
# SPDX-License-Identifier: MIT
# Progress: reading a trace for more than a second with stderr on a terminal
# (script(1) gives it one) shows one line, rewritten in place, saying what is
# read and for how long, and erases it at the end; without a terminal nothing
# is printed.  The input: a trace of 2 million ops from the generator, in
# five directories (hard links: a trace named twice is read once), reading
# which takes several seconds on 2 cores, well past the second after which
# the line shows.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
tracing_alone
command -v script >/dev/null 2>&1 || skip_all "script (util-linux) not installed"
CUBATCHTRACE_SHIM="$top_builddir/src/.libs/libcubatchtrace-tp.so"; export CUBATCHTRACE_SHIM
"$CBT" run -o "$CBT_TMP/big" -- "$GEN" --mix 2000000 >/dev/null 2>&1
is "$?" 0 "a trace of 2 million ops"
start=$(date +%s%N)
B="$CBT_TMP/big"
for k in 2 3 4 5; do cp -rl "$B" "$B$k"; done
"$CBT" summary "$B" "${B}2" "${B}3" "${B}4" "${B}5" >/dev/null 2>"$CBT_TMP/plain.err"
took=$((($(date +%s%N) - start) / 1000000))
diag "summary took $took ms"
[ "$took" -gt 2000 ]; ok $? "reading it takes more than 2 s ($took ms): long enough to show progress"
is "$(wc -c <"$CBT_TMP/plain.err" | tr -d ' ')" 0 "stderr not a terminal: no progress line"
script -qc "\"$CBT\" summary \"$B\" \"${B}2\" \"${B}3\" \"${B}4\" \"${B}5\" >/dev/null" /dev/null >"$CBT_TMP/tty.err" 2>&1
is "$?" 0 "summary under a terminal exits 0"
tr '\r' '\n' <"$CBT_TMP/tty.err" | sed 's/\x1b\[K//g' | grep -v '^$' >"$CBT_TMP/lines"
grep -q "^cubatchtrace summary: reading trace $CBT_TMP/big[2-5]*/.*: 1 s\$" "$CBT_TMP/lines"
st=$?
[ $st -eq 0 ] || diag "the lines: $(head -n 5 "$CBT_TMP/lines")"
ok $st "a progress line names the command, the trace and the seconds"
[ "$(tail -c 4 "$CBT_TMP/tty.err" | od -An -c | tr -d ' ')" = '\r033[K' ]
ok $? "the line is erased at the end"
done_testing
