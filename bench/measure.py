#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time a reader: bench/measure.py RUNS [--remove FILE] CMD...

Runs CMD RUNS times (its standard output to /dev/null) and prints one line,
"WALL RSS CPU": the best wall time (s), the largest resident set (KiB) and
the least CPU time (user + system s, what a busy machine changes least),
from wait4's rusage.  --remove FILE: FILE (the command's output) removed
before each run and after the last.  A run that fails prints
"FAILED STATUS" instead and exits 1.  Used by bench/summary.sh and
bench/export.sh.
"""
import os
import sys
import time

n = int(sys.argv[1])
cmd = sys.argv[2:]
out = None
if cmd[:1] == ["--remove"]:
    out, cmd = cmd[1], cmd[2:]


def remove():
    if out and os.path.exists(out):
        os.unlink(out)


best, rss, cpu = None, 0, None
for _ in range(n):
    remove()
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execvp(cmd[0], cmd)
    _, st, ru = os.wait4(pid, 0)
    dt = time.monotonic() - t
    if os.waitstatus_to_exitcode(st) != 0:
        print("FAILED %s" % os.waitstatus_to_exitcode(st))
        sys.exit(1)
    best = dt if best is None or dt < best else best
    rss = max(rss, ru.ru_maxrss)
    c = ru.ru_utime + ru.ru_stime
    cpu = c if cpu is None or c < cpu else cpu
remove()
print("%.3f %d %.3f" % (best, rss, cpu))
