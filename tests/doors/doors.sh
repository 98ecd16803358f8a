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
    "$top_builddir/tools/cubatchtrace" show --records --pid "$pid" "$CBT_TMP/$_t" >"$CBT_TMP/$_t.show" 2>"$CBT_TMP/$_t.show.err"
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

# show_of FILE: `cubatchtrace show` of the process whose events FILE holds:
# NAME.show for NAME.trace (written by traced); else show --pid over the
# session directory whose text (NAME.all) holds FILE's first event.
show_of() {
    _s=${1%.trace}.show
    if [ -f "$_s" ]; then cat "$_s"; return; fi
    _p=$(sed -n '1s/.* vpid = \([0-9]*\),.*/\1/p' "$1")
    [ -n "$_p" ] || return 0
    _l=$(head -n 1 "$1")
    for _a in "$CBT_TMP"/*.all; do
        if grep -qxF "$_l" "$_a"; then
            "$top_builddir/tools/cubatchtrace" show --records --pid "$_p" "${_a%.all}"
            return
        fi
    done
    echo "show_of: no session text holds the events of $1" >&2
}

# show_batches FILE [1d]: show's batch lines for FILE, 3D batches (cuMemcpy3DBatchAsync*),
# or with 1d the 1D ones (cuMemcpyBatchAsync*).
show_batches() {
    case ${2:-3d} in
    1d) show_of "$1" | grep '^batch .* api=cuMemcpyBatchAsync' || true ;;
    *) show_of "$1" | grep '^batch .* api=cuMemcpy3DBatchAsync' || true ;;
    esac
}

# show_field KEY...: stdin's show lines as the values of KEY..., space-separated.
show_field() {
    awk -v keys="$*" 'BEGIN { n = split(keys, k, " ") }
    {
        delete v
        for (i = 2; i <= NF; i++) { e = index($i, "="); v[substr($i, 1, e - 1)] = substr($i, e + 1) }
        line = ""
        for (j = 1; j <= n; j++) line = line (j > 1 ? " " : "") v[k[j]]
        print line
    }'
}

# nbatches FILE: how many cubatchtrace:b and bs events (3D batches; one per batch,
# pending or not: batch_end is an event of its own).
nbatches() { grep -cE ' cubatchtrace:bs?: ' "$1" || true; }

# nbatches1d FILE: how many cubatchtrace:c and cs events (1D batches).
nbatches1d() { grep -cE ' cubatchtrace:cs?: ' "$1" || true; }

# batch_events FILE: one line per batch event as the calling thread wrote it
# (cubatchtrace:b or bs, 3D, or cubatchtrace:c or cs, 1D), its id and packed
# word w (the first two words of its sequence t) decoded
# (include/cubatchtrace/events.h, CBT_W_*; outcomes named as in catalog.h):
#   EVENT VTID NUMBER TID OUTCOME   (EVENT b or c; VTID the vtid context;
#   NUMBER the batch's number within its image; TID the payload's calling thread)
batch_events() {
    "$PYTHON3" - "$1" "$top_srcdir/include/cubatchtrace/catalog.h" <<'PY'
import re, sys
names = {int(v): n for v, n in re.findall(r'X\(CBT_OUTCOME_\w+, (\d+), "(\w+)"\)', open(sys.argv[2]).read())}
ev = re.compile(r' cubatchtrace:([bc])s?: .* vtid = (\d+)[ ,].* t = \[ \[0\] = (\d+), \[1\] = (\d+),')
for line in open(sys.argv[1], errors="replace"):
    m = ev.search(line)
    if m:
        bid, w = int(m.group(3)), int(m.group(4))
        print(m.group(1), m.group(2), bid & 0xffffffff, (w >> 32) & 0xffffffff,
              names.get((w >> 8) & 0x7, (w >> 8) & 0x7))
PY
}

# batches FILE: one line per 3D batch (`cubatchtrace show`), in order:
#   api door outcome result num_ops fail_idx   (fail_idx SIZE_MAX as -)
# A pending batch whose batch_end came is shown with the outcome and result
# after the call (forwarded); one that never returned stays pending.
batches() { show_batches "$1" | show_field api door outcome result num_ops fail_idx; }

# findings FILE: one line per finding the tool computes when it reads the
# trace (`cubatchtrace show` of NAME for FILE NAME.trace): batch_id rule severity op
findings() {
    show_of "$1" | awk '$1 == "finding" {
        for (i = 2; i <= NF; i++) { k = substr($i, 1, index($i, "=") - 1); v[k] = substr($i, index($i, "=") + 1) }
        print v["id"], v["rule"], v["severity"], v["op"]
    }'
}
# inline_findings FILE: the same from the cubatchtrace:finding events the
# calling thread wrote (strict mode, the stderr report)
inline_findings() {
    sed -n 's/.* cubatchtrace:finding: .* batch_id = \([0-9]*\), rule = ( "\([^"]*\)".* severity = ( "\([^"]*\)".* op = \([0-9]*\),.*/\1 \2 \3 \4/p' "$1" |
        sed -e "s/ $SIZE_MAX\$/ -/" | id_numbers
}

# batches1d FILE: the same for the 1D batches (cuMemcpyBatchAsync*), num_ops being count.
batches1d() { show_batches "$1" 1d | show_field api door outcome result num_ops fail_idx; }

# batch_results FILE: batch_id (its number within the image) result, one line per 3D batch.
batch_results() { show_batches "$1" | show_field id result; }

# lines N TEXT...: TEXT repeated N times, one per line (expected tables).
lines() { _n=$1; shift; _i=0; while [ $_i -lt "$_n" ]; do echo "$*"; _i=$((_i + 1)); done; }

# images NAME WANT [PID...]: the images of session NAME (its program's pid, or
# those PIDs) as every output tells them (tests/doors/images.py) equal WANT,
# one "pid=P image=K/N batches=B ops=O" line per image.
images() {
    _n=$1 _want=$2; shift 2
    _sel=""
    for _p in "${@:-$pid}"; do _sel="$_sel --pid $_p"; done
    "$PYTHON3" "$top_srcdir/tests/doors/images.py" "$top_builddir/tools/cubatchtrace" "$CBT_TMP/$_n" "$CBT_TMP" $_sel >"$CBT_TMP/$_n.images" 2>&1
    is "$(sed -n 's/^status //p' "$CBT_TMP/$_n.images" | tr '\n' ' ')" \
        "summary 0 summary_text 0 check 0 show 0 timeline 0 report 0 " "$_n: every command reads the trace (exit 0)"
    _nimg=$(echo "$_want" | grep -c .)
    _b=0 _o=0
    for _w in $(echo "$_want" | sed -n 's/.* batches=\([0-9]*\) ops=\([0-9]*\).*/\1:\2/p'); do
        _b=$((_b + ${_w%:*})); _o=$((_o + ${_w#*:}))
    done
    is "$(grep '^reader ' "$CBT_TMP/$_n.images")" \
        "reader malformed=0 incomplete=0 pending=0 orphan_ops=0 untagged=0 fields=host,pid,image processes=$_nimg batches=$_b" \
        "$_n: $_nimg processes, $_b batches, none malformed, incomplete or untagged"
    for _src in summary summary_text show timeline report; do
        is "$(sed -n "s/^$_src //p" "$CBT_TMP/$_n.images" | sed 's/ findings=[0-9]*//')" "$_want" \
            "$_n: $_src counts each image's batches and ops"
    done
    is "$(sed -n 's/^show_states //p' "$CBT_TMP/$_n.images")" "complete=$_b" "$_n: show: every batch complete"
    is "$(sed -n 's/^report_rows //p' "$CBT_TMP/$_n.images")" "$_nimg" "$_n: report: one row per image"
    is "$(sed -n 's/^check_not_validated //p' "$CBT_TMP/$_n.images")" "malformed=0 incomplete=0" \
        "$_n: check: every batch validated"
}
