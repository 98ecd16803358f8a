# SPDX-License-Identifier: MIT
# Shell helpers for the TAP tests (sourced).  The harness exports top_srcdir,
# top_builddir, CBT_SHIM, CBT_FAKECUDA_DIR, LTTNG, BABELTRACE2, PYTHON3 and
# need_sessiond makes sure a session daemon runs.
set -u
_tap_n=0
_tap_failed=0

plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
ok() { # ok COND-EXIT-STATUS DESCRIPTION
    _tap_n=$((_tap_n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2"; else echo "not ok $_tap_n - $2"; _tap_failed=$((_tap_failed + 1)); fi
}
is() { # is GOT WANT DESCRIPTION
    if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; echo "#   got:  '$1'"; echo "#   want: '$2'"; fi
}
diag() { echo "# $*"; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; } # skip REASON: one test not run
# no_memory_limit: true in a sanitizer build (scripts/check-sanitizers sets
# CBT_SANITIZER), whose tool has no memory limit: its shadow memory counts
# as data (tools/guard.c).
no_memory_limit() { [ -n "${CBT_SANITIZER:-}" ]; }
done_testing() { echo "1..$_tap_n"; [ $_tap_failed -eq 0 ]; exit $?; }

# A scratch directory removed on exit.
CBT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbt-test.XXXXXX")
trap 'cbt_cleanup' EXIT
_cbt_sessions=""
cbt_cleanup() {
    for s in $_cbt_sessions; do cbt_destroy "$s" 10 >/dev/null 2>&1; done
    rm -rf "$CBT_TMP"
}

# need_sessiond: skip unless a session daemon can be had; start a private one
# when none runs (tests/sessiond.sh).  The shared lock held on fd 9 for the
# test's whole run tells the daemon's watchdog that a test still needs it.
need_sessiond() {
    want_sessiond || skip_all "$CBT_NO_SESSIOND"
}
# want_sessiond: the same, but returns 1 (reason in $CBT_NO_SESSIOND) instead of skipping.
want_sessiond() {
    [ -n "${CBT_SESSIOND:-}" ] && return 0
    if [ -z "${LTTNG:-}" ]; then CBT_NO_SESSIOND="lttng (lttng-tools) not installed"; return 1; fi
    if [ -z "${BABELTRACE2:-}" ]; then CBT_NO_SESSIOND="babeltrace2 not installed"; return 1; fi
    if ! command -v flock >/dev/null 2>&1; then CBT_NO_SESSIOND="flock (util-linux) not installed"; return 1; fi
    _cbt_state=$(sh "$top_srcdir/tests/sessiond.sh" state)
    exec 9>>"$_cbt_state/lock"
    flock -s 9
    if ! _cbt_env=$(sh "$top_srcdir/tests/sessiond.sh" use 9>&-); then
        CBT_NO_SESSIOND="no LTTng session daemon: $_cbt_env"
        return 1
    fi
    eval "$_cbt_env"
    CBT_SESSIOND=1
}

# tracing_alone: wait until no other test holds the daemon, and keep it so
# until this test ends.  For tests whose session must see no other test's
# processes (`cubatchtrace run` records every process of the user).
tracing_alone() { flock -x 9; }

# cbt_session_start NAME [EVENT-PATTERN...]: a session recording to $CBT_TMP/NAME
# through a blocking channel (nothing is discarded) with vpid/vtid/procname contexts.
cbt_session_start() {
    _name=$1; shift
    [ $# -gt 0 ] || set -- 'cubatchtrace:*'
    "$LTTNG" --no-sessiond create "$_name" --output="$CBT_TMP/$_name" >/dev/null || return 1
    _cbt_sessions="$_cbt_sessions $_name"
    "$LTTNG" enable-channel -u -s "$_name" --blocking-timeout=inf --subbuf-size=1M --num-subbuf=8 ch >/dev/null || return 1
    for ev in "$@"; do "$LTTNG" enable-event -u -s "$_name" -c ch "$ev" >/dev/null || return 1; done
    "$LTTNG" add-context -u -s "$_name" -c ch -t vpid -t vtid -t procname >/dev/null || return 1
    "$LTTNG" start "$_name" >/dev/null
}
cbt_session_stop() {
    "$LTTNG" stop "$1" >/dev/null && cbt_destroy "$1" 60
}
# cbt_destroy NAME SECONDS: destroys session NAME, waiting at most SECONDS:
# LTTng 2.13's client was seen to wait forever after a traced child had
# exited right after fork (tests/doors/gputime.sh); `lttng stop` has
# already flushed the trace by then.
cbt_destroy() {
    timeout "$2" "$LTTNG" destroy "$1" >/dev/null
    _rc=$?
    [ $_rc -eq 124 ] || return $_rc
    diag "lttng destroy $1 had not ended after $2 s: stopped waiting for it (the trace was flushed by lttng stop)"
    return 0
}
# cbt_trace_text NAME: the session's trace as babeltrace2 text, one event per line.
cbt_trace_text() { "$BABELTRACE2" "$CBT_TMP/$1" 2>&1; }

# cbt_run CMD...: run CMD with the shim preloaded over the test double
# (after the sanitizer runtime in a sanitizer build: scripts/check-sanitizers).
cbt_run() {
    env LD_PRELOAD="${CBT_SAN_PRELOAD:+$CBT_SAN_PRELOAD:}$CBT_SHIM${LD_PRELOAD:+:$LD_PRELOAD}" \
        LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        LTTNG_UST_ALLOW_BLOCKING=1 "$@"
}
# cbt_run_bare CMD...: the same program over the test double without the shim.
cbt_run_bare() {
    env LD_LIBRARY_PATH="$CBT_FAKECUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
}
