#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages (debian/), as a user of apt meets them:
#  - dpkg-buildpackage -us -uc -b builds them in a copy of the tree (it
#    writes ../*.deb: nothing lands in the tree or beside it), and lintian
#    reports neither error nor warning that debian/ does not override;
#  - dpkg -i installs them; the tool, the shim, the plugin and the man pages
#    are where the packages put them, and found there: `man -w`, babeltrace2
#    without --plugin-path, pkg-config for the -dev package;
#  - the installed cubatchtrace traces the demo over the test double of
#    libcuda with the installed shim, and babeltrace2's own pipeline expands
#    the trace with the installed plugin;
#  - dpkg --purge removes them and leaves nothing behind.
# Skipped, and said so, where packages cannot be installed (not root, no
# dpkg-buildpackage or debhelper) or cubatchtrace is installed already.
# Run by scripts/check-packaging (not by make check: it installs into the
# machine, which the other tests must not see).
. "$top_srcdir/tests/lib.sh"
[ -f "$top_srcdir/debian/control" ] || skip_all "no debian/ in this tree (release tarballs leave it out)"
[ "$(id -u)" = 0 ] || skip_all "installing packages needs root"
for t in dpkg dpkg-buildpackage dpkg-query dh; do
    command -v "$t" >/dev/null 2>&1 || skip_all "$t not installed (dpkg-dev, debhelper)"
done
pkgs="cubatchtrace libcubatchtrace-validate0 libcubatchtrace-validate-dev babeltrace2-plugin-cubatchtrace"
for p in $pkgs; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
        skip_all "$p is installed already on this machine (the test would remove it)"
    fi
done
dpkg-checkbuilddeps -d 'debhelper-compat (= 13)' /dev/null >/dev/null 2>&1 ||
    skip_all "debhelper 13 not installed"
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
version=$(dpkg-parsechangelog -l"$top_srcdir/debian/changelog" -SVersion)
upstream=${version%-*}

# The tree as git knows it (tracked files and new ones not ignored), copied:
# no build output of the tree rides along.
src=$CBT_TMP/build/cubatchtrace-$upstream
mkdir -p "$src"
if git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$top_srcdir" && git ls-files -z -co --exclude-standard | tar -c --null -T - -f -) | tar -x -C "$src"
else
    (cd "$top_srcdir" && tar -c --exclude-vcs -f - .) | tar -x -C "$src"
fi
ok $? "a copy of the tree in $src"
# what dpkg-buildpackage would leave beside the tree, or in it, were it built there
beside() { (cd "$top_srcdir/.." && ls -d ./*.deb ./*.changes ./*.buildinfo 2>/dev/null; cd "$top_srcdir" && git status --porcelain --ignored -- debian 2>/dev/null) | md5sum; }
before=$(beside)
(cd "$src" && env DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) >"$CBT_TMP/build.log" 2>&1
st=$?
is "$st" 0 "dpkg-buildpackage -us -uc -b builds from a clean tree"
[ "$st" -eq 0 ] || { tail -n 30 "$CBT_TMP/build.log" | sed 's/^/# /'; done_testing; }
is "$(beside)" "$before" "nothing written beside the tree or into its debian/"
debs=""
for p in $pkgs; do
    f=$CBT_TMP/build/${p}_${version}_$arch.deb
    [ -f "$f" ]; ok $? "package $p built"
    debs="$debs $f"
done

if command -v lintian >/dev/null 2>&1; then
    lintian "$CBT_TMP/build/cubatchtrace_${version}_$arch.changes" >"$CBT_TMP/lintian.out" 2>&1
    sed 's/^/# lintian: /' "$CBT_TMP/lintian.out"
    is "$(grep -c '^E: ' "$CBT_TMP/lintian.out")" 0 "lintian: no error"
    is "$(grep -c '^W: ' "$CBT_TMP/lintian.out")" 0 "lintian: no warning that debian/ does not override with its reason"
else
    ok 0 "# SKIP lintian not installed"
fi

# What the packages own, and what of it was there before (shared directories).
: >"$CBT_TMP/files"
for f in $debs; do dpkg-deb -c "$f" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' >>"$CBT_TMP/files"; done
sort -u -o "$CBT_TMP/files" "$CBT_TMP/files"
while read -r f; do [ -z "$f" ] || [ -e "$f" ] || [ -L "$f" ] || echo "$f"; done <"$CBT_TMP/files" >"$CBT_TMP/new-files"
[ -s "$CBT_TMP/new-files" ]; ok $? "the packages bring $(wc -l <"$CBT_TMP/new-files") paths this machine lacks"
ls_cbt() { find /usr /etc /var/lib/dpkg/info -xdev \( -name '*cubatchtrace*' -o -name 'cubatchtrace*' \) 2>/dev/null | sort; }
ls_cbt >"$CBT_TMP/cbt-before"

# shellcheck disable=SC2086
dpkg -i $debs >"$CBT_TMP/install.log" 2>&1
st=$?
is "$st" 0 "dpkg -i installs the four packages"
[ "$st" -eq 0 ] || sed 's/^/# /' "$CBT_TMP/install.log"
purge() { dpkg --purge $pkgs >"$CBT_TMP/purge.log" 2>&1; }
trap 'purge; cbt_cleanup' EXIT

libdir=/usr/lib/$triplet
plugdir=$libdir/babeltrace2/plugins
is "$(dpkg -S /usr/bin/cubatchtrace 2>/dev/null | cut -d: -f1)" cubatchtrace "/usr/bin/cubatchtrace comes from package cubatchtrace"
is "$(dpkg -S "$libdir/libcubatchtrace.so" 2>/dev/null | cut -d: -f1)" cubatchtrace "the shim is $libdir/libcubatchtrace.so, from cubatchtrace"
is "$(dpkg -S "$libdir/libcubatchtrace-validate.so.0" 2>/dev/null | cut -d: -f1)" libcubatchtrace-validate0 \
    "libcubatchtrace-validate.so.0 comes from libcubatchtrace-validate0"
is "$(dpkg -S "$plugdir/babeltrace-plugin-cubatchtrace.so" 2>/dev/null | cut -d: -f1)" babeltrace2-plugin-cubatchtrace \
    "the plugin is in babeltrace2's plugin directory ($plugdir)"
[ -f "$libdir/libcubatchtrace-tp.so" ]; ok $? "the tracepoint provider lies beside the shim"
is "$(command -v cubatchtrace)" /usr/bin/cubatchtrace "cubatchtrace on PATH is the installed one"
is "$(/usr/bin/cubatchtrace --version)" "cubatchtrace $upstream" "the installed tool's --version is the package's upstream version"

# The man pages, where man looks for them.
for m in "1 cubatchtrace man1/cubatchtrace.1" "7 libcubatchtrace man7/libcubatchtrace.7" \
    "3 libcubatchtrace-validate man3/libcubatchtrace-validate.3"; do
    set -- $m
    if command -v man >/dev/null 2>&1; then
        is "$(man -w "$1" "$2" 2>&1)" "/usr/share/man/$3.gz" "man -w $1 $2 finds the installed page"
    else
        [ -f "/usr/share/man/$3.gz" ]; ok $? "man page /usr/share/man/$3.gz installed (man not installed: not asked)"
    fi
done

# babeltrace2 finds the plugin in its own directory.
if command -v babeltrace2 >/dev/null 2>&1; then
    env -u BABELTRACE_PLUGIN_PATH babeltrace2 list-plugins >"$CBT_TMP/plugins" 2>&1
    grep -A1 '^cubatchtrace:' "$CBT_TMP/plugins" | grep -qF "$plugdir/babeltrace-plugin-cubatchtrace.so"
    ok $? "babeltrace2 list-plugins, without --plugin-path, lists the plugin cubatchtrace from $plugdir"
else
    ok 1 "babeltrace2 (a dependency of the plugin) is installed"
fi

# The -dev package: pkg-config and the headers, for a user's test.
if command -v pkg-config >/dev/null 2>&1; then
    is "$(pkg-config --modversion cubatchtrace-validate 2>&1)" "$upstream" "pkg-config finds cubatchtrace-validate.pc ($upstream)"
    printf '#include <cubatchtrace/validate.h>\n#include <stdio.h>\nint main(void) { puts(cbt_version()); return 0; }\n' >"$CBT_TMP/user.c"
    # shellcheck disable=SC2046
    (cd "$CBT_TMP" && ${CC:-cc} -o user user.c $(pkg-config --cflags --libs cubatchtrace-validate)) >"$CBT_TMP/cc.log" 2>&1
    ok $? "a program builds against the installed validator with pkg-config alone"
    is "$("$CBT_TMP/user" 2>&1)" "$upstream" "... and runs on libcubatchtrace-validate.so.0"
fi

# The demo, traced by the installed tool with the installed shim, over the
# test double of libcuda (both built in the copy).
demo=$src/examples/demo
fake=$src/tests/fakecuda/lib
if [ ! -x "$demo" ] || [ ! -f "$fake/libcuda.so.1" ]; then
    ok 1 "the package build made examples/demo and the test double ($demo, $fake)"
elif want_sessiond; then
    tracing_alone
    mkdir -p "$CBT_TMP/elsewhere"
    (cd "$CBT_TMP/elsewhere" && unset CUBATCHTRACE_SHIM &&
        LD_LIBRARY_PATH="$fake" /usr/bin/cubatchtrace run -o demo-trace -- "$demo") \
        >"$CBT_TMP/run.out" 2>"$CBT_TMP/run.err"
    st=$?
    is "$st" 0 "the installed cubatchtrace run -- examples/demo exits 0"
    [ "$st" -eq 0 ] || sed 's/^/# /' "$CBT_TMP/run.err"
    grep -q '^demo: [1-9][0-9]* batches' "$CBT_TMP/run.out"; ok $? "the demo ran over the test double"
    grep -q '^# batches: [1-9]' "$CBT_TMP/run.out"; ok $? "the summary counts the demo's batches"
    babeltrace2 "$CBT_TMP/elsewhere/demo-trace" 2>/dev/null | grep 'lttng_ust_statedump:bin_info' |
        grep -o 'path = "[^"]*libcubatchtrace\.so"' | sort -u >"$CBT_TMP/shim-path"
    is "$(cat "$CBT_TMP/shim-path")" "path = \"$libdir/libcubatchtrace.so\"" "the shim preloaded is the installed one"
    env -u BABELTRACE_PLUGIN_PATH babeltrace2 "$CBT_TMP/elsewhere/demo-trace" -c filter.cubatchtrace.expand \
        >"$CBT_TMP/expand.txt" 2>"$CBT_TMP/expand.err"
    is "$?" 0 "babeltrace2 TRACE -c filter.cubatchtrace.expand runs the installed plugin"
    is "$(grep -c ' cubatchtrace\.expand:batch: ' "$CBT_TMP/expand.txt")" \
        "$(sed -n 's/^# batches: \([0-9]*\).*/\1/p' "$CBT_TMP/run.out")" "it expands as many batches as the summary counts"
else
    ok 0 "# SKIP the installed run: $CBT_NO_SESSIOND"
fi

# Removed, nothing left behind.
purge
st=$?
trap 'cbt_cleanup' EXIT
is "$st" 0 "dpkg --purge removes the four packages"
[ "$st" -eq 0 ] || sed 's/^/# /' "$CBT_TMP/purge.log"
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'
    is "$?" 1 "$p no longer installed"
done
while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done <"$CBT_TMP/new-files" >"$CBT_TMP/left"
is "$(tr '\n' ' ' <"$CBT_TMP/left")" "" "no path the packages brought is left"
ls_cbt >"$CBT_TMP/cbt-after"
is "$(diff "$CBT_TMP/cbt-before" "$CBT_TMP/cbt-after" | tr '\n' ' ')" "" "no file named after cubatchtrace under /usr, /etc or dpkg's database differs from before"
done_testing
