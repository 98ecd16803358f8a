#!/bin/sh
# SPDX-License-Identifier: MIT
# Process images under one pid: a program that execs itself (once, three
# times in a chain, after threads made batches) and one that forks a child
# that then execs.  Each image draws its own tag (src/process.c), so the
# reader counts every image's batches apart, exactly: summary (JSON, text),
# check, show, timeline and report agree, and no batch is malformed.  Before
# images, the new image's batch ids started again at 0 under the same vpid
# and collided with the old image's ("malformed", ops missing).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
CBT="$top_builddir/tools/cubatchtrace"


# the issue's case: 1,600 batches, exec, 50 more
traced "exec1-$$" "$CLIENTS/client_exec" 1600/1 exec 50/1
is "$st" 0 "exec once: exits 0 (bytes checked in both images)"
is "$(out "exec1-$$")" "image $pid: batches=1600 ops=1600 bytes=102400
image $pid: batches=50 ops=50 bytes=3200" "exec once: both images ran under pid $pid"
images "exec1-$$" "pid=$pid image=1/2 batches=1600 ops=1600
pid=$pid image=2/2 batches=50 ops=50"
"$CBT" summary --pid "$pid" "$CBT_TMP/exec1-$$" >"$CBT_TMP/exec1.txt" 2>&1
is "$(grep -c '^# process identity' "$CBT_TMP/exec1.txt")" 0 "exec once: no line about untagged batches"
is "$(sed -n 's/^\(# processes\|# batches\|# ops\): //p' "$CBT_TMP/exec1.txt" | tr '\n' ' ')" "2 1650 1650 " \
    "exec once: the text summary counts 2 processes, 1650 batches and ops"
grep -q '^# Batches by process (Rank' "$CBT_TMP/exec1.txt" && grep -q '^# Image: K/N' "$CBT_TMP/exec1.txt"
ok $? "exec once: the summary lists the images of the pid, with their number"
is "$(grep -c "^[^ ]* *| *$pid *| *[12]/2 *| *[0-9]* *| - *| client_exec" "$CBT_TMP/exec1.txt")" 2 \
    "exec once: one row per image: pid, image 1/2 and 2/2, the same pid namespace"
is "$(grep '^batch ' "$CBT_TMP/exec1-$$.show" | sed -n 's/.* id=\([0-9]*\) .* image=\(0x[0-9a-f]*\)$/\2 \1/p' | sort -k1,1 -k2n | awk '
    $1 != t {if (t) print n, lo, hi; t = $1; n = 0; lo = $2} {n++; hi = $2} END {print n, lo, hi}' | sort -n | tr '\n' ' ')" \
    "50 0 49 1600 0 1599 " "exec once: show: each image's batches numbered from 0, under two tags"

# three execs in a chain; each image makes one batch with a warning
traced "exec3-$$" "$CLIENTS/client_exec" 3/2 warn exec 5/1 exec 7/3 warn warn exec 11/1 warn
is "$st" 0 "exec chain: exits 0"
is "$(grep -c "^image $pid: " "$CBT_TMP/exec3-$$.out")" 4 "exec chain: four images under pid $pid"
images "exec3-$$" "pid=$pid image=1/4 batches=4 ops=7
pid=$pid image=2/4 batches=5 ops=5
pid=$pid image=3/4 batches=9 ops=23
pid=$pid image=4/4 batches=12 ops=12"
is "$(sed -n 's/^check //p' "$CBT_TMP/exec3-$$.images")" "pid=$pid image=1/4 batches=-1 ops=-1 findings=1
pid=$pid image=3/4 batches=-1 ops=-1 findings=2
pid=$pid image=4/4 batches=-1 ops=-1 findings=1" "exec chain: check lists each image's findings under its own image"

# threads made batches, then the main thread execs
traced "exect-$$" "$CLIENTS/client_exec" 10/2/4 exec 20/1
is "$st" 0 "exec after threads: exits 0"
images "exect-$$" "pid=$pid image=1/2 batches=40 ops=80
pid=$pid image=2/2 batches=20 ops=20"
"$CBT" summary --json --pid "$pid" "$CBT_TMP/exect-$$" >"$CBT_TMP/exect.json"
is "$(grep -o '"threads": [0-9]*' "$CBT_TMP/exect.json")" '"threads": 5' \
    "exec after threads: 5 threads: the first image's 4 and the second's main thread"

# fork, then the child execs: the parent, and the child's two images
[ -n "${CBT_LTTNG_UST_FORK_LIB:-}" ] || { diag "liblttng-ust-fork.so not found by configure: no fork case"; done_testing; }
traced "forkexec-$$" env LD_PRELOAD="$CBT_SHIM:$CBT_LTTNG_UST_FORK_LIB" "$CLIENTS/client_exec" 5/1 fork 6/2 exec 7/1
is "$st" 0 "fork then exec: exits 0"
child=$(sed -n 's/^image \([0-9]*\): batches=6 .*/\1/p' "$CBT_TMP/forkexec-$$.out")
is "$(sed -n "s/^image $child: //p" "$CBT_TMP/forkexec-$$.out" | tr '\n' ' ')" "batches=6 ops=12 bytes=768 batches=7 ops=7 bytes=448 " \
    "fork then exec: the child ($child) made 6 batches, exec'd and made 7"
first=$pid; last=$child; [ "$child" -lt "$pid" ] && { first=$child; last=$pid; }
if [ "$first" = "$pid" ]; then
    want="pid=$pid image=1/1 batches=5 ops=5
pid=$child image=1/2 batches=6 ops=12
pid=$child image=2/2 batches=7 ops=7"
else
    want="pid=$child image=1/2 batches=6 ops=12
pid=$child image=2/2 batches=7 ops=7
pid=$pid image=1/1 batches=5 ops=5"
fi
images "forkexec-$$" "$want" "$pid" "$child"
done_testing
