# SPDX-License-Identifier: MIT
# Running cubatchtrace on input that may crash, swell or hang its decoder
# (sourced after tests/tool/common.sh).

# guarded CMD ARGS...: cubatchtrace CMD ARGS..., as a safety net under a 2 GiB
# data limit and killed after 120 s; $st its status ("hung" when killed),
# $took its seconds, $peak the largest resident size (MiB) of it and its
# children; $CBT_TMP/out and err.
guarded() {
    set -- $("$PYTHON3" - "$CBT" "$CBT_TMP" "$@" <<'EOF'
import os, resource, subprocess, sys, time
tool, tmp, args = sys.argv[1], sys.argv[2], sys.argv[3:]
def cap():  # not under a sanitizer (scripts/check-sanitizers): its shadow memory counts as data
    if not os.environ.get("CBT_SAN_PRELOAD"):
        resource.setrlimit(resource.RLIMIT_DATA, (2 << 30, 2 << 30))
t0 = time.monotonic()
with open(tmp + "/out", "wb") as out, open(tmp + "/err", "wb") as err:
    try:
        st = subprocess.run([tool] + args, stdout=out, stderr=err, preexec_fn=cap, timeout=120).returncode
    except subprocess.TimeoutExpired:
        st = "hung"
took = time.monotonic() - t0
print(st, "%.1f" % took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10)
EOF
)
    st=$1 took=$2 peak=$3
}
within() { "$PYTHON3" -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$1" "$2"; }
