#!/bin/sh
# SPDX-License-Identifier: MIT
# The Spack recipe (packaging/spack, a Spack package repository): Python
# parses it; it is an AutotoolsPackage of the version configure.ac names,
# with the tarball `make dist` makes, and depends on lttng-ust, lttng-tools,
# babeltrace2, elfutils, jansson and cuda; the repository names its
# namespace and where its packages lie.  Where `spack` is on PATH, Spack
# itself reads it (spack info) in a configuration of its own, and
# concretizes it (spack spec) where the recipes of lttng-ust, lttng-tools and
# babeltrace2 are known to it (THAPI's repository, or upstream's).
. "$top_srcdir/tests/lib.sh"
repo=$top_srcdir/packaging/spack
recipe=$repo/cubatchtrace/package.py
py=${PYTHON3:-python3}
command -v "$py" >/dev/null 2>&1 || skip_all "python3 not installed"
[ -f "$recipe" ] || skip_all "no packaging/spack in this tree"

# Parsed (compiled, nothing written beside it), and read with ast: the class,
# its base, its version and dependencies.
"$py" - "$recipe" >"$CBT_TMP/recipe.txt" 2>"$CBT_TMP/recipe.err" <<'PY'
import ast, sys
src = open(sys.argv[1]).read()
compile(src, sys.argv[1], "exec")
tree = ast.parse(src)
for node in tree.body:
    if isinstance(node, ast.ClassDef):
        print("class", node.name, " ".join(b.id for b in node.bases if isinstance(b, ast.Name)))
        for st in node.body:
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant):
                print("attr", st.targets[0].id, st.value.value)
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name):
                args = [a.value for a in st.value.args if isinstance(a, ast.Constant)]
                kw = {k.arg: k.value.value for k in st.value.keywords if isinstance(k.value, ast.Constant)}
                if st.value.func.id == "version":
                    print("version", args[0], kw.get("sha256", ""))
                elif st.value.func.id == "depends_on":
                    print("depends_on", args[0].split("@")[0])
PY
is "$?" 0 "Python parses packaging/spack/cubatchtrace/package.py"
sed 's/^/# /' "$CBT_TMP/recipe.err"
is "$(sed -n 's/^class //p' "$CBT_TMP/recipe.txt")" "Cubatchtrace AutotoolsPackage" "class Cubatchtrace(AutotoolsPackage)"
ac_version=$(sed -n 's/^AC_INIT(\[cubatchtrace\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
is "$(sed -n 's/^version \([^ ]*\) .*/\1/p' "$CBT_TMP/recipe.txt" | head -1)" "$ac_version" "its newest version is configure.ac's ($ac_version)"
sha=$(sed -n 's/^version [^ ]* //p' "$CBT_TMP/recipe.txt" | head -1)
echo "$sha" | grep -qE '^[0-9a-f]{64}$'; ok $? "the version has a sha256 (of the make dist tarball)"
grep -q "^attr url .*/cubatchtrace-$ac_version\.tar\.gz$" "$CBT_TMP/recipe.txt"
ok $? "its url names the tarball make dist makes (cubatchtrace-$ac_version.tar.gz)"
for d in lttng-ust lttng-tools babeltrace2 elfutils jansson cuda; do
    grep -qx "depends_on $d" "$CBT_TMP/recipe.txt"; ok $? "depends on $d"
done
grep -q "^  namespace: cubatchtrace$" "$repo/repo.yaml"; ok $? "repo.yaml: namespace cubatchtrace"
grep -q "^  subdirectory: ''$" "$repo/repo.yaml"; ok $? "repo.yaml: packages beside it (subdirectory '')"
[ ! -e "$repo/cubatchtrace/__pycache__" ]; ok $? "nothing written beside the recipe"

if ! command -v spack >/dev/null 2>&1; then
    ok 0 "# SKIP spack not on PATH: Spack itself did not read the recipe"
else
    export SPACK_DISABLE_LOCAL_CONFIG=1 SPACK_USER_CONFIG_PATH="$CBT_TMP/spack-user" SPACK_USER_CACHE_PATH="$CBT_TMP/spack-cache"
    mkdir -p "$CBT_TMP/cfg"
    printf 'repos:\n- %s\n%s' "$repo" "$(for r in ${CBT_SPACK_REPOS:-}; do printf -- '- %s\n' "$r"; done)" >"$CBT_TMP/cfg/repos.yaml"
    spack -C "$CBT_TMP/cfg" info cubatchtrace >"$CBT_TMP/info" 2>&1
    is "$?" 0 "spack info cubatchtrace"
    grep -q "^AutotoolsPackage: *cubatchtrace" "$CBT_TMP/info"; ok $? "spack reads an AutotoolsPackage"
    grep -q "^ *$ac_version " "$CBT_TMP/info"; ok $? "spack lists version $ac_version"
    sv=$(spack --version 2>/dev/null | sed 's/ .*//')
    if ! printf '0.23.0\n%s\n' "$sv" | sort -C -V || [ "${sv#0.23.0.dev}" != "$sv" ]; then
        ok 0 "# SKIP spack spec: Spack $sv predates the compilers as dependencies (c, cxx: Spack 0.23) the recipe names"
    elif spack -C "$CBT_TMP/cfg" list lttng-ust 2>/dev/null | grep -qx lttng-ust; then
        spack -C "$CBT_TMP/cfg" spec cubatchtrace >"$CBT_TMP/spec" 2>&1
        st=$?
        is "$st" 0 "spack spec cubatchtrace concretizes"
        [ "$st" -eq 0 ] || tail -n 20 "$CBT_TMP/spec" | sed 's/^/# /'
    else
        ok 0 "# SKIP spack spec: no lttng-ust recipe known to this Spack (CBT_SPACK_REPOS names THAPI's repository)"
    fi
fi
done_testing
