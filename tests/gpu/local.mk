# SPDX-License-Identifier: MIT
# tests/gpu: the GPU test suite.  It needs an NVIDIA GPU and runs by hand on
# the GPU machine (tests/gpu/README.md):
#
#   bash tests/gpu/build && bash tests/gpu/run docs/gpu-results.md
#
# or, from a build tree, `make check-gpu`.  `make check` only dry-runs the
# suite's own logic over the CPU test double (tests/gpu/dryrun.sh): the
# driver-API clients linked against tests/fakecuda, the same trace parsing
# and verdicts, the CUDA-runtime and cuda-bindings cases left out.

EXTRA_DIST += tests/gpu/README.md tests/gpu/run tests/gpu/build tests/gpu/suite.py tests/gpu/btparse.py \
	tests/gpu/dryrun.sh tests/gpu/clients/cbt_gpu.h tests/gpu/clients/drv.c tests/gpu/clients/gpa_table.c tests/gpu/clients/newdoors.c \
	tests/gpu/clients/rt.cu tests/gpu/clients/pyclient.py tests/gpu/clients/peer.c tests/gpu/clients/reads.c \
	tests/gpu/clients/table1d.c tests/gpu/measured/table1d-h200.txt tests/gpu/clients/py1d.py tests/gpu/clients/rt1d.cu \
	tests/gpu/suite1d.py tests/gpu/suitegpu.py tests/gpu/clients/gputime.cu tests/gpu/clients/capture.c \
	tests/gpu/measured/capture-h200.txt tests/gpu/suitecapture.py tests/gpu/suitesteady.py \
	tests/gpu/suiteadvice.py tests/gpu/clients/advice.c

check_PROGRAMS += tests/gpu/drv tests/gpu/gpa_table tests/gpu/peer tests/gpu/reads
tests_gpu_drv_SOURCES = tests/gpu/clients/drv.c tests/gpu/clients/cbt_gpu.h
tests_gpu_drv_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_gpu_drv_CFLAGS = $(AM_CFLAGS) -Wno-unused-function -Wno-missing-field-initializers
# Linked against the test double under the driver's soname (libcuda.so.1),
# so the same binary runs over the real driver.
tests_gpu_drv_LDADD = -Ltests/fakecuda/lib -lcuda -ldl
tests_gpu_drv_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
tests_gpu_peer_SOURCES = tests/gpu/clients/peer.c tests/gpu/clients/cbt_gpu.h
tests_gpu_peer_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_gpu_peer_CFLAGS = $(AM_CFLAGS) -Wno-unused-function -Wno-missing-field-initializers
tests_gpu_peer_LDADD = -Ltests/fakecuda/lib -lcuda -ldl
tests_gpu_peer_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
tests_gpu_reads_SOURCES = tests/gpu/clients/reads.c tests/gpu/clients/cbt_gpu.h
tests_gpu_reads_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_gpu_reads_CFLAGS = $(AM_CFLAGS) -Wno-unused-function -Wno-missing-field-initializers
tests_gpu_reads_LDADD = -Ltests/fakecuda/lib -lcuda -ldl
tests_gpu_reads_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
tests_gpu_gpa_table_SOURCES = tests/gpu/clients/gpa_table.c
tests_gpu_gpa_table_LDADD = -ldl
# newdoors: what a program asking for the 13.2 and 13.5 entry points is
# answered (tests/doors/newdoors.sh over the double, newdoors-* on a GPU).
check_PROGRAMS += tests/gpu/newdoors
tests_gpu_newdoors_SOURCES = tests/gpu/clients/newdoors.c
tests_gpu_newdoors_LDADD = -ldl
# table1d: the 1D batch call's table, the client that measured the H200
# (tests/gpu/measured/table1d-h200.txt); tests/fakecuda/table1d.sh runs it
# over the double and compares.  Built like the GPU suite builds it.
check_PROGRAMS += tests/gpu/table1d
tests_gpu_table1d_SOURCES = tests/gpu/clients/table1d.c
tests_gpu_table1d_CFLAGS = $(AM_CFLAGS) -Wno-cast-function-type
tests_gpu_table1d_LDADD = -Ltests/fakecuda/lib -lcuda
tests_gpu_table1d_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# capture: batch copies on streams being captured into a graph; the H200's
# answers are tests/gpu/measured/capture-h200.txt, which
# tests/fakecuda/capture.sh holds the double to.
check_PROGRAMS += tests/gpu/capture
tests_gpu_capture_SOURCES = tests/gpu/clients/capture.c
tests_gpu_capture_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_gpu_capture_CFLAGS = $(AM_CFLAGS) -Wno-unused-function -Wno-unused-parameter
tests_gpu_capture_LDADD = -Ltests/fakecuda/lib -lcuda -lpthread -ldl
tests_gpu_capture_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# advice: the patterns the advice rules name, and what doing as they say buys
# (the advice-* cases, tests/gpu/suiteadvice.py).
check_PROGRAMS += tests/gpu/advice
tests_gpu_advice_SOURCES = tests/gpu/clients/advice.c
tests_gpu_advice_LDADD = -Ltests/fakecuda/lib -lcuda
tests_gpu_advice_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

TESTS += tests/gpu/dryrun.sh

.PHONY: check-gpu
check-gpu: all
	CBT_GPU_SHIM='$(abs_top_builddir)/src/.libs/libcubatchtrace.so' \
	CBT_GPU_BIN='$(abs_top_builddir)/tests/gpu/bin' \
	$(SHELL) '$(abs_top_srcdir)/tests/gpu/run' '$(abs_top_builddir)/gpu-results.md'
