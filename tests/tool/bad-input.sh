#!/bin/sh
# Bad input that needs no session daemon: each gets ONE line on stderr that
# says what and where, exit status 2, nothing on stdout -- for summary and check.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"

mkdir -p "$CBT_TMP/empty/sub/dir"
echo hello >"$CBT_TMP/afile"
"$PYTHON3" "$top_srcdir/tests/tool/mkctf.py" "$CBT_TMP/other" otherprov:hello
"$PYTHON3" "$top_srcdir/tests/tool/mkctf.py" "$CBT_TMP/wrongcat" cubatchtrace:batch
"$PYTHON3" "$top_srcdir/tests/tool/mkctf.py" "$CBT_TMP/cut" otherprov:hello
truncate -s 14 "$CBT_TMP/cut/stream_0"

bad() { # DESCRIPTION PATTERN ARGS...
    _d=$1 _pat=$2; shift 2
    for _cmd in summary check; do
        "$CBT" $_cmd "$@" >"$CBT_TMP/out" 2>"$CBT_TMP/err"
        one_line_error "$_cmd: $_d" $? "$CBT_TMP/out" "$CBT_TMP/err" "$_pat"
    done
}
bad "missing path" "$CBT_TMP/nothing-here: No such file" "$CBT_TMP/nothing-here"
bad "a directory with no trace" "$CBT_TMP/empty: no CTF trace" "$CBT_TMP/empty"
bad "a regular file" "$CBT_TMP/afile: not a directory" "$CBT_TMP/afile"
bad "a CTF trace of another tracer" "$CBT_TMP/other: no cubatchtrace events" "$CBT_TMP/other"
bad "cubatchtrace events of another layout" "has no field .batch_id." "$CBT_TMP/wrongcat"
bad "a truncated stream file" "cannot read trace $CBT_TMP/cut" "$CBT_TMP/cut"
bad "a good trace and a missing one" "$CBT_TMP/nothing-here" "$CBT_TMP/other" "$CBT_TMP/nothing-here"
bad "an unreachable live URL" "net://127.0.0.1:1/host/none/s" "net://127.0.0.1:1/host/none/s"
done_testing
