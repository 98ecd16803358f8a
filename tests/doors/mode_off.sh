#!/bin/sh
# SPDX-License-Identifier: MIT
# CUBATCHTRACE_MODE=off: every door forwards straight to the driver and
# nothing is recorded (the mode check in cbt_batch, cuGetProcAddress and the
# dlsym hook).  If the check were removed the batches would be recorded.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/doors/doors.sh"
need_sessiond

bare off "$CLIENTS/client_direct"
traced "off-$$" env CUBATCHTRACE_MODE=off "$CLIENTS/client_direct"
is "$st $(out "off-$$")" "0 $(bare_out off)" "mode off, symbol door: batches forwarded, bytes and summary as without the shim"
is "$(grep -c ' cubatchtrace:' "$CBT_TMP/off-$$.trace")" 0 "mode off, symbol door: no cubatchtrace event at all"

bare offrt "$CLIENTS/client_runtime_seq"
traced "offrt-$$" env CUBATCHTRACE_MODE=off "$CLIENTS/client_runtime_seq"
is "$st $(out "offrt-$$")" "0 $(bare_out offrt)" "mode off, runtime sequence: batches forwarded, same output"
is "$(grep -c ' cubatchtrace:' "$CBT_TMP/offrt-$$.trace")" 0 "mode off, getprocaddress door: no cubatchtrace event at all"

# The same client in observe mode is recorded (so the zero above means "off").
traced "obs-$$" env CUBATCHTRACE_MODE=observe "$CLIENTS/client_direct"
is "$(nbatches "$CBT_TMP/obs-$$.trace")" 3 "mode observe (the contrast): the same client records 3 batches"
done_testing
