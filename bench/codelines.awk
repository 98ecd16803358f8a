# SPDX-License-Identifier: MIT
# bench/codelines.awk: how many 64-byte lines of a shared object's code a
# callgrind dump (--dump-instr=yes) ran on every call: the instructions that
# ran at least 0.9 x CALLS times, counted by the line they lie in.  The
# driver's work between two batches evicts them, so each is fetched again.
#
#   awk -v obj=libcubatchtrace.so -v calls=N -f bench/codelines.awk DUMP
# prints: LINES INSTRUCTIONS
function num(s,    v, i, c) {
    if (s ~ /^0x/) {
        v = 0
        s = tolower(substr(s, 3))
        for (i = 1; i <= length(s); i++) {
            c = index("0123456789abcdef", substr(s, i, 1)) - 1
            v = v * 16 + c
        }
        return v
    }
    return s + 0
}
/^(ob|cob)=/ {
    k = substr($0, 1, index($0, "=") - 1)
    rest = substr($0, index($0, "=") + 1)
    name = rest
    if (rest ~ /^\([0-9]+\)/) {
        id = substr(rest, 2, index(rest, ")") - 2)
        name = substr(rest, index(rest, ")") + 1)
        sub(/^ +/, "", name)
        if (name != "") names[id] = name
        else name = names[id]
    }
    if (k == "ob") cur = name
    next
}
/^calls=/ { skip = 1; next }
/^[-+*0-9]/ {
    a = $1
    if (a == "*") addr = last
    else if (a ~ /^\+/) addr = last + num(substr(a, 2))
    else if (a ~ /^-/) addr = last - num(substr(a, 2))
    else addr = num(a)
    last = addr
    if (skip) { skip = 0; next }
    if (index(cur, obj)) cost[addr] += $3
}
END {
    n = 0; m = 0
    for (a in cost) if (cost[a] >= 0.9 * calls) { n++; line[int(a / 64)] = 1 }
    for (l in line) m++
    print m, n
}
