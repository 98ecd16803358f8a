#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace run` when `lttng destroy` never returns (LTTng 2.13's client
# was seen to, after a traced child had exited right after fork):
# run stops waiting after CUBATCHTRACE_LTTNG_DESTROY_TIMEOUT seconds, says so
# in one line, and still writes the trace, prints the summary and exits with
# the program's status.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"
need_sessiond
CUBATCHTRACE_SHIM="$top_builddir/src/.libs/libcubatchtrace-tp.so"; export CUBATCHTRACE_SHIM
[ -f "$CUBATCHTRACE_SHIM" ] || skip_all "libcubatchtrace-tp.so not built"

# an lttng whose destroy does its work, then hangs
fake=$CBT_TMP/lttng
cat >"$fake" <<EOT
#!/bin/sh
for a; do
    if [ "\$a" = destroy ]; then "$LTTNG" "\$@"; exec sleep 3600; fi
done
exec "$LTTNG" "\$@"
EOT
chmod +x "$fake"

t0=$(date +%s)
# (timeout: a run that waits for the destroy fails here instead of hanging the suite)
timeout -k 5 60 env LTTNG="$fake" CUBATCHTRACE_LTTNG_DESTROY_TIMEOUT=2 \
    "$CBT" run -o "$CBT_TMP/t" --json -- "$GEN" --pidfile "$CBT_TMP/t.pid" n=3,ops=2 --exit 4 \
    >"$CBT_TMP/run.out" 2>"$CBT_TMP/run.err"
st=$?
t1=$(date +%s)
is "$st" 4 "the program's exit status is kept"
ok "$([ $((t1 - t0)) -lt 30 ] && echo 0 || echo 1)" "run does not wait for the hung destroy ($((t1 - t0)) s)"
grep -q '^cubatchtrace run: `lttng destroy` had not ended after 2 s and was stopped' "$CBT_TMP/run.err"
ok $? "one line says the destroy was stopped"
grep -q "^cubatchtrace: trace written to $CBT_TMP/t\$" "$CBT_TMP/run.err"; ok $? "the trace is written"
"$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not d["batches"] >= 3)' "$CBT_TMP/run.out"
ok $? "the summary is printed, with the program's batches"
"$CBT" summary --json --pid "$(cat "$CBT_TMP/t.pid")" "$CBT_TMP/t" >"$CBT_TMP/t.json"
is "$("$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["batches"], d["ops"])' "$CBT_TMP/t.json")" \
    "3 6" "the trace holds the program's batches"
ps -eo args | grep -q '^sleep 3600$'; is $? 1 "the hung client is not left behind"
done_testing
