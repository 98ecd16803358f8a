#!/bin/sh
# SPDX-License-Identifier: MIT
# fork: the parent makes a batch, forks, the child makes one (traced through
# liblttng-ust-fork preloaded after the shim), the parent waits.  Covers the
# symbol door in a forked child: each process's events under its own vpid.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond
[ -n "${CBT_LTTNG_UST_FORK_LIB:-}" ] || skip_all "liblttng-ust-fork.so not found by configure"

bare fork "$CLIENTS/client_fork"
traced "fork-$$" env LD_PRELOAD="$CBT_SHIM:$CBT_LTTNG_UST_FORK_LIB" "$CLIENTS/client_fork" "$CBT_TMP/child.pid"
child=$(cat "$CBT_TMP/child.pid" 2>/dev/null || echo none)
is "$st" 0 "fork: parent and child exit 0 (bytes checked in both)"
is "$(out "fork-$$")" "$(bare_out fork)" "fork: same output as without the shim"
is "$(batches "$CBT_TMP/fork-$$.trace")" "cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 2 -" \
    "fork: the parent's one batch recorded under the parent's vpid"
pid_events "$CBT_TMP/fork-$$.all" "$child" >"$CBT_TMP/child.trace"
is "$(batches "$CBT_TMP/child.trace")" "cuMemcpy3DBatchAsync_v2 symbol forwarded CUDA_SUCCESS 3 -" \
    "fork: the child's one batch recorded under the child's vpid ($child)"
done_testing
