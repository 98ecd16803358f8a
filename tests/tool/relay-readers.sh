#!/bin/sh
# SPDX-License-Identifier: MIT
# relay-readers.sh URL SESSION: how many live readers the relay daemon at
# URL (net://HOST:LIVE_PORT) counts attached to session SESSION, from
# babeltrace2's query of its sessions; prints nothing while the relay daemon
# does not list the session.  For tests that attach a live reader before the
# programs it is checked on run (a live reader reads what the relay daemon
# receives after it attaches).  Uses $BABELTRACE2 (default babeltrace2).
"${BABELTRACE2:-babeltrace2}" query src.ctf.lttng-live sessions --params "url=\"$1\"" 2>/dev/null |
    awk -v s="$2" '
        function done() { if (n == s && c != "") print c }
        /^ *- / { done(); n = ""; c = "" }
        { sub(/^ *- */, ""); sub(/^ */, "") }
        /^session-name:/ { n = $2 } /^client-count:/ { c = $2 }
        END { done() }'
