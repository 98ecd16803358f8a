#!/bin/sh
# SPDX-License-Identifier: MIT
# Every command has --help; a usage error is one line on stderr that starts
# with the program and the command (what is wrong, the closest known option
# or command), then "Try 'cubatchtrace COMMAND --help' for more
# information.", exit 2 and nothing on stdout.  An environment variable the
# tool cannot use is one line.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"

for c in "" "run" "summary" "check" "show" "timeline" "report" "rules"; do
    "$CBT" $c --help >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    is $? 0 "cubatchtrace $c --help exits 0"
    grep -q '^Usage: cubatchtrace' "$CBT_TMP/out"; ok $? "cubatchtrace $c --help prints a usage on stdout"
    if [ -n "$c" ]; then
        "$CBT" help $c >"$CBT_TMP/help" 2>&1
        cmp -s "$CBT_TMP/out" "$CBT_TMP/help"; ok $? "cubatchtrace help $c is cubatchtrace $c --help"
    fi
done
"$CBT" run --help | grep -q -- '--blocking-timeout=inf'; ok $? "run --help says the channel is blocking"
"$CBT" run --help | grep -q 'LTTNG_UST_ALLOW_BLOCKING=1'; ok $? "run --help names LTTNG_UST_ALLOW_BLOCKING"
"$CBT" summary --help | grep -q -- '--pid'; ok $? "summary --help documents --pid"
"$CBT" check --help | grep -q -- '--fail-on'; ok $? "check --help documents --fail-on"
"$CBT" check --help | grep -q -- '--allow-discarded'; ok $? "check --help documents --allow-discarded"
"$CBT" check --help | grep -q -- '--format FMT'; ok $? "check --help documents --format"
"$CBT" check --help | grep -q -- '--waivers FILE'; ok $? "check --help documents --waivers"
for c in summary check show timeline report; do
    "$CBT" $c --help | grep -q -- '--begin TIME'; ok $? "$c --help documents --begin"
    "$CBT" $c --help | grep -q -- '--end TIME'; ok $? "$c --help documents --end"
done
for st in 0 1 2 3 4; do
    "$CBT" check --help | grep -q "^  $st  "; ok $? "check --help documents exit status $st"
done
for c in summary check; do
    "$CBT" $c --help | grep -q 'CUBATCHTRACE_MAX_MEMORY'; ok $? "$c --help names CUBATCHTRACE_MAX_MEMORY"
    "$CBT" $c --help | grep -q 'CUBATCHTRACE_TIMEOUT'; ok $? "$c --help names CUBATCHTRACE_TIMEOUT"
done

CBT_ENV=""
usage_error() { # DESCRIPTION PATTERN ARGS...
    _d=$1 _pat=$2; shift 2
    _c=""
    case ${1:-} in run|summary|check|show|timeline|report|rules) _c=$1 ;; esac
    "$CBT" "$@" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    usage_error_lines "$_d" $? "$CBT_TMP/out" "$CBT_TMP/err" "$_pat" "$_c"
}
env_error() { # DESCRIPTION PATTERN ARGS...  (with the environment $CBT_ENV)
    _d=$1 _pat=$2; shift 2
    env $CBT_ENV "$CBT" "$@" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
    one_line_error "$_d" $? "$CBT_TMP/out" "$CBT_TMP/err" "$_pat"
}
usage_error "no command" "no command given"
usage_error "unknown command" "unknown command 'frobnicate'\$" frobnicate
usage_error "a mistyped command" "unknown command 'sumary'; did you mean 'summary'?\$" sumary
usage_error "a transposition" "did you mean 'check'?" chekc
usage_error "help for an unknown command" "unknown command 'nothing'" help nothing
usage_error "an option before the command" "unknown option '--json': the command comes first" --json
usage_error "summary without a trace" "^cubatchtrace summary: no trace given\$" summary
usage_error "check without a trace" "^cubatchtrace check: no trace given\$" check
usage_error "report without a trace" "^cubatchtrace report: no trace given\$" report -o x.html
usage_error "report --no-plotz" "unknown option '--no-plotz'; did you mean '--no-plots'?" report --no-plotz -o x.html t
usage_error "report --from-json with a trace" "no trace, --pid, --begin or --end with it" report -o x.html --from-json s.json t
usage_error "summary --jsn" \
    "unknown option '--jsn'; did you mean '--json'?\$" summary --jsn "$CBT_TMP"
usage_error "check --fail-one" "did you mean '--fail-on'?" check --fail-one error "$CBT_TMP"
usage_error "check --allow-discard (a prefix: taken)" "^cubatchtrace check: no trace given\$" check --allow-discard
usage_error "check --nonsense" "unknown option '--nonsense'\$" check --nonsense "$CBT_TMP"
usage_error "an unknown short option" "unknown option '-x'" summary -x "$CBT_TMP"
usage_error "summary --by without its value" "option '--by' needs a value" summary --by
usage_error "summary --json=yes" "option '--json' takes no value" summary --json=yes "$CBT_TMP"
usage_error "check --fail-on nonsense" "--fail-on fatal: expected error, hazard, warning or advice" check --fail-on fatal "$CBT_TMP"
usage_error "summary --by nonsense" "--by color: expected process, thread, stream, caller or host" summary --by color "$CBT_TMP"
usage_error "summary --pid nonsense" "--pid abc: not a process id" summary --pid abc "$CBT_TMP"
usage_error "rules with an argument" "^cubatchtrace rules: unexpected argument 'extra'" rules extra
usage_error "rules with an option" "unknown option '--all'" rules --all
usage_error "run without a program" "^cubatchtrace run: no program given" run
usage_error "run --report elsewhere" "only .stderr. is supported" run --report syslog -- true
usage_error "run --strickt" "unknown option '--strickt'; did you mean '--strict'?\$" \
    run --strickt -- true
usage_error "run --output without its value" "option '--output' needs a value\$" run --output
usage_error "run -o without its value" "option '-o' needs a value\$" run -o
usage_error "run --json=yes" "option '--json' takes no value\$" run --json=yes -- true
usage_error "run --subbuf-size below 16K" \
    "^cubatchtrace run: --subbuf-size 8K: below 16K, the smallest sub-buffer that holds a chunk of 64 ops\$" run --subbuf-size 8K -- true
usage_error "run --subbuf-size 16383" "below 16K" run --subbuf-size 16383 -- true
usage_error "run --subbuf-size nonsense" "^cubatchtrace run: --subbuf-size big: expected a size such as 64K or 1M\$" \
    run --subbuf-size big -- true
usage_error "show without a trace" "^cubatchtrace show: no trace given\$" show
usage_error "show --pids" "unknown option '--pids'; did you mean '--pid'?\$" show --pids 1 "$CBT_TMP"
usage_error "show --pid without its value" "option '--pid' needs a value\$" show --pid
usage_error "show -x" "unknown option '-x'\$" show -x "$CBT_TMP"
usage_error "show --pid nonsense" "--pid abc: not a process id" show --pid abc "$CBT_TMP"
usage_error "check --format xml" "--format xml: expected text, json or sarif\$" check --format xml "$CBT_TMP"
usage_error "check --formt" "unknown option '--formt'; did you mean '--format'?\$" check --formt json "$CBT_TMP"
usage_error "check --waviers" "unknown option '--waviers'; did you mean '--waivers'?\$" check --waviers w.json "$CBT_TMP"
CBT_ENV=CUBATCHTRACE_TIMEOUT=soon
env_error "a bad CUBATCHTRACE_TIMEOUT" "CUBATCHTRACE_TIMEOUT=soon: expected seconds" summary "$CBT_TMP"
CBT_ENV=CUBATCHTRACE_MAX_MEMORY=lots
env_error "a bad CUBATCHTRACE_MAX_MEMORY" "CUBATCHTRACE_MAX_MEMORY=lots: expected a size" check "$CBT_TMP"
CBT_ENV=""
[ -f "$top_srcdir/docs/cubatchtrace.1" ]; ok $? "the man page exists"
grep -q '^\.TH CUBATCHTRACE 1' "$top_srcdir/docs/cubatchtrace.1"; ok $? "the man page is cubatchtrace(1)"
for w in CUBATCHTRACE_MAX_MEMORY CUBATCHTRACE_TIMEOUT 'allow\\-discarded' 'DAMAGED TRACES'; do
    grep -q -- "$w" "$top_srcdir/docs/cubatchtrace.1"; ok $? "the man page documents $w"
done
done_testing
