# SPDX-License-Identifier: MIT
"""Spack recipe of cubatchtrace (packaging/spack, a Spack repository:
`spack repo add packaging/spack`; README.md, "Installing")."""

from spack.package import *  # noqa: F401,F403

try:  # Spack 1.0 and later keep the build systems in the builtin repository
    from spack_repo.builtin.build_systems.autotools import AutotoolsPackage  # noqa: F811
except ImportError:  # Spack 0.x: spack.package exports AutotoolsPackage
    pass


class Cubatchtrace(AutotoolsPackage):
    """Traces and checks the batched copies of CUDA programs
    (cuMemcpy3DBatchAsync, cuMemcpyBatchAsync): an LD_PRELOAD library that
    records them as LTTng-UST events, validates them and forwards them to
    libcuda; a tool that runs programs under tracing and summarises, checks
    and shows the traces; the validator as a library; a babeltrace2
    plugin."""

    # The release tarball is the one `make dist` makes.  The project has no
    # download server yet: a site puts the tarball into a Spack mirror of its
    # own (spack mirror add), where Spack looks before this URL, under
    # cubatchtrace/cubatchtrace-VERSION.tar.gz.
    url = "https://cubatchtrace.invalid/releases/cubatchtrace-0.1.0.tar.gz"

    license("MIT")

    version("0.1.0", sha256="ed7ae912b9829f37d11ed429accc5e1daa620e2b0d72c44af07fadca7b4d2874")

    depends_on("c", type="build")
    # configure checks libstdc++ for __cxa_demangle (C++ call sites demangled)
    depends_on("cxx", type="build")
    depends_on("pkgconfig", type="build")

    # The shim's tracepoint provider links liblttng-ust; `cubatchtrace run`
    # preloads liblttng-ust-fork and drives lttng and lttng-sessiond.
    depends_on("lttng-ust@2.13:", type=("build", "link", "run"))
    depends_on("lttng-tools@2.13:", type=("build", "run"))
    # The tool and the plugin read traces with libbabeltrace2.
    depends_on("babeltrace2@2.0:", type=("build", "link", "run"))
    depends_on("elfutils@0.158:", type=("build", "link"))  # libdw: call sites
    depends_on("jansson@2.10:", type=("build", "link"))
    # cuda.h only (12.8 added the batched copies); libcuda is found when the
    # traced program runs, never linked.
    depends_on("cuda@12.8:", type="build")

    def configure_args(self):
        # The plugin goes to LIBDIR/babeltrace2/plugins of this prefix (not
        # babeltrace2's, which is another prefix): setup_run_environment
        # names it in BABELTRACE_PLUGIN_PATH.
        return [
            "--with-cuda={0}".format(self.spec["cuda"].prefix),
            "--with-babeltrace2-plugin-dir={0}".format(self.prefix.lib.babeltrace2.plugins),
        ]

    def setup_run_environment(self, env):
        env.prepend_path("BABELTRACE_PLUGIN_PATH", self.prefix.lib.babeltrace2.plugins)
