# SPDX-License-Identifier: MIT
# Shared by the tests of the cubatchtrace tool (sourced after tests/lib.sh).
CBT="$top_builddir/tools/cubatchtrace"
GEN="$top_builddir/tests/tool/cbt-gen"
EXPECT="$top_srcdir/tests/tool/expect.py"
CATALOG="$top_srcdir/include/cubatchtrace/catalog.h"

# gen_trace NAME GEN-ARGS...: record cbt-gen GEN-ARGS in a session of its own
# ($CBT_TMP/NAME); the generator's pid is appended to $CBT_TMP/NAME.pids.
# Sessions record every process of the user: always read with --pid.
gen_session() { cbt_session_start "$1-$$" 'cubatchtrace:*' 'lttng_ust_statedump:*'; }
gen_run() { # gen_run NAME GEN-ARGS...
    _n=$1; shift
    LTTNG_UST_ALLOW_BLOCKING=1 "$GEN" "$@" &
    _p=$!
    wait $_p
    _st=$?
    echo $_p >>"$CBT_TMP/$_n.pids"
    return $_st
}
gen_stop() { cbt_session_stop "$1-$$"; }
pids_of() { for _p in $(cat "$CBT_TMP/$1.pids"); do printf ' --pid %s' "$_p"; done; }
trace_of() { echo "$CBT_TMP/$1-$$"; }

# compare_expect SUMMARY_JSON SPEC...: one test per figure expect.py computes
compare_expect() {
    _json=$1 _l=$(basename "$1"); shift
    "$PYTHON3" "$EXPECT" "$CATALOG" "$_json" -- "$@" >"$CBT_TMP/expect.out" || { ok 1 "$_l: expect.py ran"; return; }
    while IFS="$(printf '\t')" read -r _k _want _got; do
        is "$_got" "$_want" "$_l: $_k"
    done <"$CBT_TMP/expect.out"
}

# compare_trace TRACE PIDS-NAME... -- SPEC...: one test per figure, computed by
# expect.py from the events of those processes as babeltrace2 prints them:
# the generator emitted exactly what the SPECs describe (no cubatchtrace tool involved).
compare_trace() {
    _t=$1 _l=trace; shift
    : >"$CBT_TMP/trace.txt"
    "$BABELTRACE2" "$_t" >"$CBT_TMP/trace.all" 2>&1 || { ok 1 "babeltrace2 reads $_t"; return; }
    while [ "$1" != -- ]; do
        for _p in $(cat "$CBT_TMP/$1.pids"); do grep -F "vpid = $_p," "$CBT_TMP/trace.all" >>"$CBT_TMP/trace.txt"; done
        _l="$_l $1"
        shift
    done
    shift
    "$PYTHON3" "$EXPECT" --trace "$CATALOG" "$CBT_TMP/trace.txt" -- "$@" >"$CBT_TMP/expect.out" ||
        { ok 1 "expect.py --trace ran"; return; }
    while IFS="$(printf '\t')" read -r _k _want _got; do
        is "$_got" "$_want" "$_l: $_k"
    done <"$CBT_TMP/expect.out"
}

# usage_error_lines DESCRIPTION STATUS STDOUT-FILE STDERR-FILE PATTERN [COMMAND]: a
# usage error is exit 2, nothing on stdout, and on stderr one line starting
# "cubatchtrace[ COMMAND]: " that matches PATTERN, then "Try 'cubatchtrace[ COMMAND] --help' ...".
usage_error_lines() {
    is "$2" 2 "$1: exit status 2"
    is "$(wc -c <"$3" | tr -d ' ')" 0 "$1: nothing on stdout"
    is "$(wc -l <"$4" | tr -d ' ')" 2 "$1: two lines on stderr: the error, then where to look"
    _p="cubatchtrace${6:+ $6}"
    head -1 "$4" | grep -q "^$_p: "; ok $? "$1: the error starts with '$_p:'"
    head -1 "$4" | grep -q -- "$5"; ok $? "$1: the error says '$5'"
    is "$(sed -n 2p "$4")" "Try '$_p --help' for more information." "$1: then Try '$_p --help'"
    [ $_tap_failed -eq 0 ] || sed 's/^/#   stderr: /' "$4"
}

# one_line_error DESCRIPTION STATUS STDOUT-FILE STDERR-FILE [PATTERN]: exit 2,
# nothing on stdout, one line on stderr ("cubatchtrace[ COMMAND]: ...") that matches PATTERN
one_line_error() {
    is "$2" 2 "$1: exit status 2"
    is "$(wc -c <"$3" | tr -d ' ')" 0 "$1: nothing on stdout"
    is "$(wc -l <"$4" | tr -d ' ')" 1 "$1: exactly one line on stderr"
    if [ -n "${5:-}" ]; then
        grep -q -- "$5" "$4"; ok $? "$1: the line says '$5'"
    fi
    grep -Eq '^cubatchtrace( (run|summary|check|show|timeline|report|rules))?: ' "$4"
    ok $? "$1: the line starts with 'cubatchtrace:' or 'cubatchtrace COMMAND:'"
    [ $_tap_failed -eq 0 ] || sed 's/^/#   stderr: /' "$4"
}

# build_client_cxx BIN [FLAGS...]: tests/tool/client_cxx.cc with debug
# information and a build id, against the test double; 1 (reason in
# $CBT_CXX_FAIL) when no C++ compiler or the build fails.
build_client_cxx() {
    _bin=$1; shift
    _cxx=${CXX:-$(command -v c++ || command -v g++ || command -v clang++)}
    if [ -z "$_cxx" ]; then CBT_CXX_FAIL="no C++ compiler"; return 1; fi
    mkdir -p "$(dirname "$_bin")"
    # shellcheck disable=SC2086
    if ! $_cxx -g -O1 -Wl,--build-id $CUDA_CPPFLAGS "$@" -o "$_bin" "$top_srcdir/tests/tool/client_cxx.cc" \
            -L"$CBT_FAKECUDA_DIR" -lcuda >"$CBT_TMP/cxx.log" 2>&1; then
        CBT_CXX_FAIL="client_cxx.cc does not build: $(head -c 300 "$CBT_TMP/cxx.log")"
        return 1
    fi
}

# LTTng sessions record every process of the user, and a process of another
# build of the shim may define the same events otherwise: a test whose
# trace must hold its own program's events alone tracks that one process.
# session_alone NAME [--live URL]: session NAME, recording to $CBT_TMP/NAME
# (or streaming live to URL), as cbt_session_start makes it, but tracking no
# process yet; start it with traced_alone.
session_alone() {
    _name=$1; shift
    if [ "${1:-}" = --live ]; then
        "$LTTNG" --no-sessiond create "$_name" --live=100000 --set-url="$2" >/dev/null || return 1
    else
        "$LTTNG" --no-sessiond create "$_name" --output="$CBT_TMP/$_name" >/dev/null || return 1
    fi
    _cbt_sessions="$_cbt_sessions $_name"
    "$LTTNG" enable-channel -u -s "$_name" --blocking-timeout=inf --subbuf-size=1M --num-subbuf=8 ch >/dev/null &&
        "$LTTNG" enable-event -u -s "$_name" -c ch 'cubatchtrace:*' >/dev/null &&
        "$LTTNG" enable-event -u -s "$_name" -c ch 'lttng_ust_statedump:*' >/dev/null &&
        "$LTTNG" add-context -u -s "$_name" -c ch -t vpid -t vtid -t procname >/dev/null &&
        "$LTTNG" untrack -u -s "$_name" --vpid --all >/dev/null &&
        "$LTTNG" start "$_name" >/dev/null
}
# traced_alone NAME CMD...: CMD under the shim over the double (cbt_run),
# stopped before it runs until session NAME tracks its pid; sets $pid and $st.
traced_alone() {
    _name=$1; shift
    ( env() { exec env "$@"; }; cbt_run sh -c 'kill -STOP $$; exec "$@"' sh "$@" ) &
    pid=$!
    _i=0
    until [ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null)" = T ]; do
        _i=$((_i + 1))
        [ $_i -gt 200 ] && break
        sleep 0.05
    done
    "$LTTNG" track -u -s "$_name" --vpid "$pid" >/dev/null
    kill -CONT "$pid"
    wait "$pid"
    st=$?
}

# unpack_formats: the committed traces of formats 2 and 3
# (tests/tool/format{2,3}.tar.xz) into $CBT_TMP/format2 and format3.
unpack_formats() {
    for _f in 2 3; do
        ( cd "$CBT_TMP" && xz -dc "$top_srcdir/tests/tool/format$_f.tar.xz" | tar xf - ) ||
            { echo "Bail out! cannot unpack tests/tool/format$_f.tar.xz"; exit 1; }
    done
}
