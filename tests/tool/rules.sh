#!/bin/sh
# SPDX-License-Identifier: MIT
# `cubatchtrace rules` lists every rule of the catalogue with its severity and text.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tool/common.sh"

"$CBT" rules >"$CBT_TMP/rules" 2>"$CBT_TMP/err"
is $? 0 "rules exits 0"
is "$(wc -c <"$CBT_TMP/err" | tr -d ' ')" 0 "rules prints nothing on stderr"
# the catalogue, read independently: X(name, value, CBT_SEV_x, "text" (possibly on the next line))
sed -n '/#define CBT_RULE_LIST/,/^$/p' "$CATALOG" | tr -d '\\\n' | sed 's/ \+/ /g' |
    grep -o 'X([a-z_]*, [0-9]*, CBT_SEV_[A-Z]*, "[^"]*"' >"$CBT_TMP/catalog"
n=$(wc -l <"$CBT_TMP/catalog" | tr -d ' ')
[ "$n" -gt 20 ]; ok $? "the catalogue has rules ($n)"
is "$(grep -c ' | ' "$CBT_TMP/rules")" "$((n + 1))" "one line per rule plus the header"
while IFS= read -r x; do
    name=$(echo "$x" | sed 's/X(\([a-z_]*\),.*/\1/')
    sev=$(echo "$x" | sed 's/.*CBT_SEV_\([A-Z]*\),.*/\1/' | tr 'A-Z' 'a-z')
    text=$(echo "$x" | sed 's/.*, "\(.*\)"$/\1/')
    line=$(grep "^$name " "$CBT_TMP/rules")
    echo "$line" | grep -q "| $sev *| "; ok $? "rule $name has severity $sev"
    echo "$line" | grep -qF "$text"; ok $? "rule $name has its one-line text"
done <"$CBT_TMP/catalog"
done_testing
