# SPDX-License-Identifier: MIT
# tests/clients: programs that reach cuMemcpy3DBatchAsync through every door
# of the shim; tests/doors: the TAP scripts that run them under the shim and
# read the trace.  Paths are relative to the top directory (non-recursive).

# Clients that call the driver directly link the test double under the
# driver's own name; at run time LD_LIBRARY_PATH=$CBT_FAKECUDA_DIR finds it
# (tests/lib.sh: cbt_run, cbt_run_bare).  It must exist before they link.
CBT_CLIENT_CUDA_LIBS = -L$(top_builddir)/tests/fakecuda/lib -lcuda
CBT_CLIENT_COMMON = tests/clients/common.c tests/clients/common.h
# The op builders every test shares (tests/opbuild.h), for programs built from
# common.c or including it themselves; the other test local.mk files use it too.
CBT_TESTS_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
CBT_CLIENT_DIRECT = $(CBT_CLIENT_COMMON) tests/clients/common_direct.c

check_PROGRAMS += tests/clients/client_direct tests/clients/client_direct_ptsz

tests_clients_client_direct_SOURCES = tests/clients/client_direct.c $(CBT_CLIENT_DIRECT)
tests_clients_client_direct_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_direct_LDADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_client_direct_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# The same source with cuda.h's per-thread default stream mapping (_v2_ptsz).
tests_clients_client_direct_ptsz_SOURCES = tests/clients/client_direct.c $(CBT_CLIENT_DIRECT)
tests_clients_client_direct_ptsz_CPPFLAGS = $(CBT_TESTS_CPPFLAGS) -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1
tests_clients_client_direct_ptsz_LDADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_client_direct_ptsz_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# Clients linked to libcuda (the double at run time).
check_PROGRAMS += tests/clients/client_abi128 tests/clients/client_threads tests/clients/client_fork \
	tests/clients/client_ctor tests/clients/client_rtld tests/clients/client_strict tests/clients/client_kinds \
	tests/clients/client_kindcache tests/clients/client_streams
tests_clients_client_streams_SOURCES = tests/clients/client_streams.c $(CBT_CLIENT_DIRECT)
tests_clients_client_streams_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_streams_LDADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_client_streams_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
tests_clients_client_kindcache_SOURCES = tests/clients/client_kindcache.c
tests_clients_client_kindcache_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_kindcache_LDADD = $(CBT_CLIENT_CUDA_LIBS) -ldl
EXTRA_tests_clients_client_kindcache_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
tests_clients_client_kinds_SOURCES = tests/clients/client_kinds.c
tests_clients_client_kinds_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_kinds_LDADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_client_kinds_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

tests_clients_client_abi128_SOURCES = tests/clients/client_abi128.c $(CBT_CLIENT_DIRECT)
tests_clients_client_abi128_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_abi128_LDADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_client_abi128_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

tests_clients_client_threads_SOURCES = tests/clients/client_threads.c $(CBT_CLIENT_DIRECT)
tests_clients_client_threads_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_threads_LDADD = $(CBT_CLIENT_CUDA_LIBS) -lpthread
EXTRA_tests_clients_client_threads_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

tests_clients_client_fork_SOURCES = tests/clients/client_fork.c $(CBT_CLIENT_DIRECT)
tests_clients_client_fork_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_fork_LDADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_client_fork_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

tests_clients_client_strict_SOURCES = tests/clients/client_strict.c $(CBT_CLIENT_DIRECT)
tests_clients_client_strict_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_strict_LDADD = $(CBT_CLIENT_CUDA_LIBS) -ldl
EXTRA_tests_clients_client_strict_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# A wrapper library that makes its users' batches through two helpers, and
# its user (the short stack, --stack N; --skip-frames).
check_LTLIBRARIES += tests/clients/libstackwrap.la
tests_clients_libstackwrap_la_SOURCES = tests/clients/stack_wrap.c
tests_clients_libstackwrap_la_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_libstackwrap_la_CFLAGS = $(AM_CFLAGS) -g -O1 -fno-inline -fno-omit-frame-pointer -fno-optimize-sibling-calls
tests_clients_libstackwrap_la_LDFLAGS = -rpath /nowhere -avoid-version -shared
tests_clients_libstackwrap_la_LIBADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_libstackwrap_la_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
check_PROGRAMS += tests/clients/client_stack
tests_clients_client_stack_SOURCES = tests/clients/client_stack.c
tests_clients_client_stack_CFLAGS = $(AM_CFLAGS) -g -O1 -fno-inline -fno-omit-frame-pointer -fno-optimize-sibling-calls
tests_clients_client_stack_LDADD = tests/clients/libstackwrap.la $(CBT_CLIENT_CUDA_LIBS)
tests_clients_client_stack_LDFLAGS = -no-install

# A library whose constructor makes a batch while the program loads.
check_LTLIBRARIES += tests/clients/libctorbatch.la
tests_clients_libctorbatch_la_SOURCES = tests/clients/ctor_batch.c
tests_clients_libctorbatch_la_LDFLAGS = -rpath /nowhere -avoid-version -shared
tests_clients_libctorbatch_la_LIBADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_libctorbatch_la_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
tests_clients_client_ctor_SOURCES = tests/clients/client_ctor.c $(CBT_CLIENT_DIRECT)
tests_clients_client_ctor_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_ctor_LDADD = tests/clients/libctorbatch.la $(CBT_CLIENT_CUDA_LIBS)
tests_clients_client_ctor_LDFLAGS = -no-install

# dlsym from the caller's point of view: RTLD_NEXT wrappers (libcbtnext over
# libcbtbase and libc's puts) and RTLD_DEFAULT from a plugin opened with
# RTLD_LOCAL whose dependency (libcbtdep) only it can see.
check_LTLIBRARIES += tests/clients/libcbtbase.la tests/clients/libcbtnext.la tests/clients/libcbtdep.la \
	tests/clients/libcbtplugin.la
tests_clients_libcbtbase_la_SOURCES = tests/clients/rtld_base.c
tests_clients_libcbtbase_la_LDFLAGS = -rpath /nowhere -avoid-version -shared
tests_clients_libcbtnext_la_SOURCES = tests/clients/rtld_next.c
tests_clients_libcbtnext_la_LDFLAGS = -rpath /nowhere -avoid-version -shared
tests_clients_libcbtnext_la_LIBADD = tests/clients/libcbtbase.la -ldl
tests_clients_libcbtdep_la_SOURCES = tests/clients/rtld_dep.c
tests_clients_libcbtdep_la_LDFLAGS = -rpath /nowhere -avoid-version -shared
tests_clients_libcbtplugin_la_SOURCES = tests/clients/rtld_plugin.c
tests_clients_libcbtplugin_la_LDFLAGS = -module -rpath /nowhere -avoid-version -shared
tests_clients_libcbtplugin_la_LIBADD = tests/clients/libcbtdep.la -ldl
tests_clients_client_rtld_SOURCES = tests/clients/client_rtld.c $(CBT_CLIENT_DIRECT)
tests_clients_client_rtld_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
# libcbtnext before libcbtbase: its cbt_who is the one the program binds.
tests_clients_client_rtld_LDADD = tests/clients/libcbtnext.la tests/clients/libcbtbase.la $(CBT_CLIENT_CUDA_LIBS) -ldl
tests_clients_client_rtld_LDFLAGS = -no-install
EXTRA_tests_clients_client_rtld_DEPENDENCIES = tests/clients/libcbtplugin.la tests/fakecuda/lib/libcuda.so.1

# The 1D batch through every door (tests/doors/batch1d.sh).
check_PROGRAMS += tests/clients/client_1d tests/clients/client_abimix
tests_clients_client_abimix_SOURCES = tests/clients/client_abimix.c $(CBT_CLIENT_DIRECT)
tests_clients_client_abimix_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_abimix_LDADD = $(CBT_CLIENT_CUDA_LIBS) -ldl
EXTRA_tests_clients_client_abimix_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
tests_clients_client_1d_SOURCES = tests/clients/client_1d.c $(CBT_CLIENT_DIRECT)
tests_clients_client_1d_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_1d_LDADD = $(CBT_CLIENT_CUDA_LIBS) -ldl
EXTRA_tests_clients_client_1d_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# The CUDA 13.2 single-op calls through every door (tests/doors/singleop.sh):
# linked weakly against the double, so it also starts over lib13.0.
check_PROGRAMS += tests/clients/client_single
tests_clients_client_single_SOURCES = tests/clients/client_single.c $(CBT_CLIENT_DIRECT)
tests_clients_client_single_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_single_LDADD = $(CBT_CLIENT_CUDA_LIBS) -ldl
EXTRA_tests_clients_client_single_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# Batch copies inside CUDA graphs (tests/doors/graphs.sh, bench/graph-launch.sh).
check_PROGRAMS += tests/clients/client_graph
tests_clients_client_graph_SOURCES = tests/clients/client_graph.c
tests_clients_client_graph_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_graph_LDADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_client_graph_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# Clients that do not link libcuda (-ldl only).
check_PROGRAMS += tests/clients/client_runtime_seq tests/clients/client_pyseq tests/clients/client_nolib
tests_clients_client_runtime_seq_SOURCES = tests/clients/client_runtime_seq.c $(CBT_CLIENT_COMMON)
tests_clients_client_runtime_seq_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_runtime_seq_LDADD = -ldl
tests_clients_client_pyseq_SOURCES = tests/clients/client_pyseq.c $(CBT_CLIENT_COMMON)
tests_clients_client_pyseq_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_pyseq_LDADD = -ldl
tests_clients_client_nolib_SOURCES = tests/clients/client_nolib.c
tests_clients_client_nolib_LDADD = -ldl

# The tests.  tests/doors/doors.sh holds their shared helpers.
CBT_DOOR_TESTS = tests/doors/symbol_direct.sh tests/doors/abi128.sh tests/doors/runtime_seq.sh \
	tests/doors/pyseq.sh tests/doors/threads.sh tests/doors/streams.sh tests/doors/fork.sh tests/doors/ctor.sh tests/doors/dlsym.sh \
	tests/doors/noncuda.sh tests/doors/nodriver.sh tests/doors/mode_off.sh tests/doors/strict.sh tests/doors/kinds.sh \
	tests/doors/kindcache.sh \
	tests/doors/table.sh tests/doors/report.sh tests/doors/py_binding.sh tests/doors/cuda_python.sh \
	tests/doors/batch1d.sh tests/doors/abimix.sh tests/doors/cuda_python_1d.sh tests/doors/capture.sh \
	tests/doors/newdoors.sh tests/doors/singleop.sh tests/doors/fabric.sh tests/doors/graphs.sh
TESTS += $(CBT_DOOR_TESTS)
EXTRA_DIST += tests/opbuild.h $(CBT_DOOR_TESTS) tests/doors/doors.sh tests/clients/cbt_ctypes.py \
	tests/clients/binding_ctypes.py tests/clients/cuda_python_client.py
# a trace of tests/clients/client_graph update whose launches are graph events
# of kind 1 (the event the shim wrote before cubatchtrace:launch): graphs.sh reads it
EXTRA_DIST += tests/doors/graphs-launch-as-graph-event

# Ways a process ends right after its batches (tests/doors/loss.sh).
check_PROGRAMS += tests/clients/client_loss
tests_clients_client_loss_SOURCES = tests/clients/client_loss.c $(CBT_CLIENT_DIRECT)
tests_clients_client_loss_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_loss_LDADD = $(CBT_CLIENT_CUDA_LIBS) -lpthread
EXTRA_tests_clients_client_loss_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
TESTS += tests/doors/loss.sh
EXTRA_DIST += tests/doors/loss.sh
# A large batch in as few events as the sub-buffers hold (tests/doors/chunks.sh).
check_PROGRAMS += tests/clients/client_big3d
tests_clients_client_big3d_SOURCES = tests/clients/client_big3d.c $(CBT_CLIENT_DIRECT)
tests_clients_client_big3d_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_big3d_LDADD = $(CBT_CLIENT_CUDA_LIBS) -lpthread
EXTRA_tests_clients_client_big3d_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
TESTS += tests/doors/chunks.sh
EXTRA_DIST += tests/doors/chunks.sh
# A session that starts late, while another records (tests/doors/late.sh, client_loss paced).
TESTS += tests/doors/late.sh
EXTRA_DIST += tests/doors/late.sh

# GPU time (tests/doors/gputime.sh).
check_PROGRAMS += tests/clients/client_gputime
tests_clients_client_gputime_SOURCES = tests/clients/client_gputime.c $(CBT_CLIENT_DIRECT)
tests_clients_client_gputime_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_gputime_LDADD = $(CBT_CLIENT_CUDA_LIBS) -lpthread -ldl
EXTRA_tests_clients_client_gputime_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
TESTS += tests/doors/gputime.sh
EXTRA_DIST += tests/doors/gputime.sh tests/doors/gpu_events.py tests/gputimes.py

# The host never notices: beside other interposers (libcbtother defines driver
# functions, libcbtdlsymwrap wraps dlsym with a versioned forward), the shim
# dlopened and dlclosed by a program linked to libcuda, a wrong
# CUBATCHTRACE_LIBCUDA, and unknown settings.
check_LTLIBRARIES += tests/clients/libcbtother.la tests/clients/libcbtdlsymwrap.la
tests_clients_libcbtother_la_SOURCES = tests/clients/other_interposer.c
tests_clients_libcbtother_la_CPPFLAGS = $(AM_CPPFLAGS)
tests_clients_libcbtother_la_LDFLAGS = -module -rpath /nowhere -avoid-version -shared
tests_clients_libcbtother_la_LIBADD = -ldl
tests_clients_libcbtdlsymwrap_la_SOURCES = tests/clients/dlsym_wrapper.c
tests_clients_libcbtdlsymwrap_la_LDFLAGS = -module -rpath /nowhere -avoid-version -shared
tests_clients_libcbtdlsymwrap_la_LIBADD = -ldl
check_PROGRAMS += tests/clients/client_dlopen tests/clients/client_badlib
tests_clients_client_dlopen_SOURCES = tests/clients/client_dlopen.c $(CBT_CLIENT_DIRECT)
tests_clients_client_dlopen_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_dlopen_LDADD = $(CBT_CLIENT_CUDA_LIBS) -ldl -lpthread
EXTRA_tests_clients_client_dlopen_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
tests_clients_client_badlib_SOURCES = tests/clients/client_badlib.c
tests_clients_client_badlib_LDADD = $(CBT_CLIENT_CUDA_LIBS) -ldl
EXTRA_tests_clients_client_badlib_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
CBT_HOST_TESTS = tests/doors/interpose.sh tests/doors/dlsymwrap.sh tests/doors/dlopen.sh \
	tests/doors/badlibcuda.sh tests/doors/envwarn.sh
TESTS += $(CBT_HOST_TESTS)
EXTRA_DIST += $(CBT_HOST_TESTS)
EXTRA_DIST += tests/doors/btops.py

# Op lists and operands the driver reads only in part (tests/doors/reads.sh).
check_PROGRAMS += tests/clients/client_reads
tests_clients_client_reads_SOURCES = tests/clients/client_reads.c $(CBT_CLIENT_DIRECT)
tests_clients_client_reads_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_reads_LDADD = $(CBT_CLIENT_CUDA_LIBS)
EXTRA_tests_clients_client_reads_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
TESTS += tests/doors/reads.sh
EXTRA_DIST += tests/doors/reads.sh

# Process images (tests/doors/exec.sh, tests/doors/pidns.sh): exec, fork then
# exec, pid namespaces and a shared pid, each image's counts exact.
check_PROGRAMS += tests/clients/client_exec
tests_clients_client_exec_SOURCES = tests/clients/client_exec.c $(CBT_CLIENT_DIRECT)
tests_clients_client_exec_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_clients_client_exec_LDADD = $(CBT_CLIENT_CUDA_LIBS) -lpthread
EXTRA_tests_clients_client_exec_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
CBT_IMAGE_TESTS = tests/doors/exec.sh tests/doors/pidns.sh
TESTS += $(CBT_IMAGE_TESTS)
EXTRA_DIST += $(CBT_IMAGE_TESTS) tests/doors/images.py

# include/cubatchtrace/cuda13x.h against the CUDA 13.5 release header (PyPI's
# nvidia-cuda-runtime wheel): every size and offset.
TESTS += tests/layout/cuda13x.sh
EXTRA_DIST += tests/layout/cuda13x.sh
