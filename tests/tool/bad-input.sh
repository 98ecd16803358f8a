#!/bin/sh
# SPDX-License-Identifier: MIT
# Bad input that needs no session daemon: each gets ONE line on stderr that
# says what and where, exit status 2, nothing on stdout -- for summary and check.
# Also input that libbabeltrace2 2.0.4 does not survive (it crashes, allocates
# without bound, or waits forever on a live peer): the same, within the
# memory limit and the time-out.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
. "$top_srcdir/tests/tool/guarded.sh"

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

# A sequence whose length runs far past the end of the stream: 0x80000000
# crashes libbabeltrace2 2.0.4 (SIGSEGV); 0x1000000 makes it allocate about
# 1.7 GB before it notices; 0x7fffffff makes it allocate without bound.
"$PYTHON3" "$top_srcdir/tests/tool/mkctf-seq.py" "$CBT_TMP/seq-crash" 0x80000000
"$PYTHON3" "$top_srcdir/tests/tool/mkctf-seq.py" "$CBT_TMP/seq-big" 0x1000000
"$PYTHON3" "$top_srcdir/tests/tool/mkctf-seq.py" "$CBT_TMP/seq-huge" 0x7fffffff
for cmd in summary check; do
    guarded $cmd "$CBT_TMP/seq-crash"
    one_line_error "$cmd: a sequence that crashes the decoder" "$st" "$CBT_TMP/out" "$CBT_TMP/err" \
        "cannot read trace $CBT_TMP/seq-crash: "
    grep -q ': the trace decoder crashed (SIG[A-Z]*) on damaged input$' "$CBT_TMP/err" ||
        diag "(this libbabeltrace2 did not crash: $(cat "$CBT_TMP/err"))"
    guarded $cmd "$CBT_TMP/other" "$CBT_TMP/seq-crash"
    one_line_error "$cmd: a good trace and one that crashes the decoder" "$st" "$CBT_TMP/out" "$CBT_TMP/err" \
        "cannot read trace $CBT_TMP/seq-crash: "
done
# timeline and report write their file only when the reading succeeds: a
# crash leaves neither it nor a scratch copy beside it.
mkdir -p "$CBT_TMP/files"
for cmd in timeline report; do
    guarded $cmd -o "$CBT_TMP/files/out.$cmd" "$CBT_TMP/seq-crash"
    one_line_error "$cmd -o: a sequence that crashes the decoder" "$st" "$CBT_TMP/out" "$CBT_TMP/err" \
        "cannot read trace $CBT_TMP/seq-crash: "
    is "$(ls -A "$CBT_TMP/files")" "" "$cmd -o: no file left behind by a crashed reading"
done
# With its standard output closed (a daemon's job), the reading is set up
# all the same: a crash still gives its line.
"$CBT" summary "$CBT_TMP/seq-crash" >&- 2>"$CBT_TMP/err"
is "$?" 2 "summary with stdout closed, a sequence that crashes the decoder: exit status 2"
grep -q "cannot read trace $CBT_TMP/seq-crash: " "$CBT_TMP/err" && [ "$(wc -l <"$CBT_TMP/err")" -eq 1 ]
ok $? "summary with stdout closed: the one line says which trace"
if no_memory_limit; then
    # (nor are these traces read: without it the decoder takes gigabytes)
    skip "a decoder that needs 1.7 GB or more, CUBATCHTRACE_MAX_MEMORY=256M: the memory limit is off in a $CBT_SANITIZER build"
else
    export CUBATCHTRACE_MAX_MEMORY=256M
    for cmd in summary check; do
        guarded $cmd "$CBT_TMP/seq-big"
        one_line_error "$cmd: a sequence that needs 1.7 GB, limit 256M" "$st" "$CBT_TMP/out" "$CBT_TMP/err" \
            "cannot read trace $CBT_TMP/seq-big: "
        within "$peak" 300; ok $? "$cmd: the decoder stays within 256M (peak $peak MiB)"
        guarded $cmd "$CBT_TMP/seq-huge"
        one_line_error "$cmd: a sequence that needs unbounded memory, limit 256M" "$st" "$CBT_TMP/out" "$CBT_TMP/err" \
            "cannot read trace $CBT_TMP/seq-huge: "
        within "$peak" 300; ok $? "$cmd: the decoder stays within 256M (peak $peak MiB)"
    done
    guarded summary "$CBT_TMP/seq-big"
    grep -q ': the trace decoder went over its memory limit of 256 MiB: damaged input? (CUBATCHTRACE_MAX_MEMORY sets the limit)$' \
        "$CBT_TMP/err"
    ok $? "the line says the decoder went over its memory limit, and how to set it"
    unset CUBATCHTRACE_MAX_MEMORY
fi

# A live peer that accepts the connection and never answers.
"$PYTHON3" - "$CBT_TMP/port" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(1)
held, end = [], time.monotonic() + 60
while time.monotonic() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
EOF
mute=$!
i=0
while [ ! -s "$CBT_TMP/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url="net://127.0.0.1:$(cat "$CBT_TMP/port")/host/none/s"
export CUBATCHTRACE_TIMEOUT=2
for cmd in summary check; do
    guarded $cmd "$url"
    one_line_error "$cmd: a live peer that never answers" "$st" "$CBT_TMP/out" "$CBT_TMP/err" \
        "cannot read live session $url: no answer in 2 s (CUBATCHTRACE_TIMEOUT sets the time-out)\$"
    within "$took" 12; ok $? "$cmd: gives up after the time-out ($took s)"
done
unset CUBATCHTRACE_TIMEOUT
kill "$mute" 2>/dev/null
wait "$mute" 2>/dev/null
done_testing
