#!/bin/sh
# Every command has --help; usage errors exit 2 with one line on stderr.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"

for c in "" "run" "summary" "check" "rules"; do
    "$CBT" $c --help >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    is $? 0 "cubatchtrace $c --help exits 0"
    grep -q '^Usage: cubatchtrace' "$CBT_TMP/out"; ok $? "cubatchtrace $c --help prints a usage on stdout"
done
"$CBT" run --help | grep -q -- '--blocking-timeout=inf'; ok $? "run --help says the channel is blocking"
"$CBT" run --help | grep -q 'LTTNG_UST_ALLOW_BLOCKING=1'; ok $? "run --help names LTTNG_UST_ALLOW_BLOCKING"
"$CBT" summary --help | grep -q -- '--pid'; ok $? "summary --help documents --pid"
"$CBT" check --help | grep -q -- '--fail-on'; ok $? "check --help documents --fail-on"

usage_error() { # DESCRIPTION ARGS...
    _d=$1; shift
    "$CBT" "$@" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    _st=$?
    is "$_st" 2 "$_d: exit 2"
    is "$(wc -c <"$CBT_TMP/out" | tr -d ' ')" 0 "$_d: nothing on stdout"
}
usage_error "no command"
usage_error "unknown command" frobnicate
usage_error "summary without a trace" summary
usage_error "check without a trace" check
usage_error "check --fail-on nonsense" check --fail-on fatal "$CBT_TMP"
usage_error "summary --by nonsense" summary --by color "$CBT_TMP"
usage_error "summary --pid nonsense" summary --pid abc "$CBT_TMP"
usage_error "run without a program" run
usage_error "run --report elsewhere" run --report syslog -- true
[ -f "$top_srcdir/docs/cubatchtrace.1" ]; ok $? "the man page exists"
grep -q '^\.TH CUBATCHTRACE 1' "$top_srcdir/docs/cubatchtrace.1"; ok $? "the man page is cubatchtrace(1)"
done_testing
