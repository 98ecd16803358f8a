# SPDX-License-Identifier: MIT
# Helpers of the door tests (sourced after tests/lib.sh).
#
# Sessions record every process of the user and tests run in parallel, so
# every check reads only the events of the client's own vpid.

CLIENTS="$top_builddir/tests/clients"
CLIENTS_SRC="$top_srcdir/tests/clients"
# The wrapper libraries of the dlsym clients live beside them.
LD_LIBRARY_PATH="$CLIENTS/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; export LD_LIBRARY_PATH
SIZE_MAX=18446744073709551615

# traced NAME CMD...: CMD through cbt_run (the shim over the double) while
# session NAME records.  Sets $pid to the program's own pid (the background
# subshell execs env, which execs CMD: inside it `env` is made to exec) and
# $st to its exit status; leaves $CBT_TMP/NAME.out, .err, .all (the whole
# trace as text) and .trace (this pid's events).
traced() {
    _t=$1; shift
    cbt_session_start "$_t" || { echo "Bail out! cannot create the LTTng session $_t"; exit 1; }
    ( env() { exec env "$@"; }; cbt_run "$@" ) >"$CBT_TMP/$_t.out" 2>"$CBT_TMP/$_t.err" &
    pid=$!
    wait $pid
    st=$?
    cbt_session_stop "$_t"
    cbt_trace_text "$_t" >"$CBT_TMP/$_t.all"
    pid_events "$CBT_TMP/$_t.all" "$pid" >"$CBT_TMP/$_t.trace"
    "$top_builddir/tools/cubatchtrace" show --pid "$pid" "$CBT_TMP/$_t" >"$CBT_TMP/$_t.show" 2>"$CBT_TMP/$_t.show.err"
    # Every trace: where the calling thread validated (strict mode, the
    # stderr report), the findings computed when it is read are the same.
    _inl=$(grep -c '^inline_finding \|^finding .* inline=0' "$CBT_TMP/$_t.show")
    is "$_inl" 0 "$_t: every finding the calling thread wrote equals one computed when the trace is read"
}

# mode_env MODE: the environment that puts the shim in MODE (observe, strict,
# or report: observe with CUBATCHTRACE_REPORT=stderr), for `env $(mode_env M)`.
mode_env() {
    case $1 in
    report) echo "CUBATCHTRACE_REPORT=stderr" ;;
    *) echo "CUBATCHTRACE_MODE=$1" ;;
    esac
}

# bare NAME CMD...: CMD over the double without the shim; $bst, NAME.bare.out/.err.
bare() {
    _t=$1; shift
    cbt_run_bare "$@" >"$CBT_TMP/$_t.bare.out" 2>"$CBT_TMP/$_t.bare.err"
    bst=$?
}

out() { cat "$CBT_TMP/$1.out"; }
err() { cat "$CBT_TMP/$1.err"; }
bare_out() { cat "$CBT_TMP/$1.bare.out"; }

# id_numbers: stdin with every number as its low 32 bits: batch ids as their
# number within the process image (the high 32 bits are the image's tag, docs/events.md).
id_numbers() {
    "$PYTHON3" -c 'import re, sys; sys.stdout.write(re.sub(r"\d+", lambda m: str(int(m.group(0)) & 0xffffffff), sys.stdin.read()))'
}

# pid_events FILE PID: the events of that process.
pid_events() { grep -F "vpid = $2," "$1" || true; }

# nbatches FILE: how many cubatchtrace:batch events.
nbatches() { grep -c ' cubatchtrace:batch: ' "$1" || true; }

# batches FILE: one line per cubatchtrace:batch event, in order:
#   api door outcome result num_ops fail_idx   (fail_idx SIZE_MAX as -)
batches() {
    grep ' cubatchtrace:batch: ' "$1" | sed \
        -e 's/.* api = ( "\([^"]*\)".* door = ( "\([^"]*\)".* outcome = ( "\([^"]*\)".* result = ( "\([^"]*\)".* num_ops = \([0-9]*\),.* fail_idx = \([0-9]*\),.*/\1 \2 \3 \4 \5 \6/' \
        -e "s/ $SIZE_MAX\$/ -/"
}

# findings FILE: one line per finding the tool computes when it reads the
# trace (`cubatchtrace show` of NAME for FILE NAME.trace): batch_id rule severity op
findings() {
    awk '$1 == "finding" {
        for (i = 2; i <= NF; i++) { k = substr($i, 1, index($i, "=") - 1); v[k] = substr($i, index($i, "=") + 1) }
        print v["id"], v["rule"], v["severity"], v["op"]
    }' "${1%.trace}.show"
}
# inline_findings FILE: the same from the cubatchtrace:finding events the
# calling thread wrote (strict mode, the stderr report)
inline_findings() {
    sed -n 's/.* cubatchtrace:finding: .* batch_id = \([0-9]*\), rule = ( "\([^"]*\)".* severity = ( "\([^"]*\)".* op = \([0-9]*\),.*/\1 \2 \3 \4/p' "$1" |
        sed -e "s/ $SIZE_MAX\$/ -/" | id_numbers
}

# batch_results FILE: batch_id (its number within the image) result, one line per batch event.
batch_results() {
    sed -n 's/.* cubatchtrace:batch: .* batch_id = \([0-9]*\),.* result = ( "\([^"]*\)".*/\1 \2/p' "$1" | id_numbers
}

# lines N TEXT...: TEXT repeated N times, one per line (expected tables).
lines() { _n=$1; shift; _i=0; while [ $_i -lt "$_n" ]; do echo "$*"; _i=$((_i + 1)); done; }
