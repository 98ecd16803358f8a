# SPDX-License-Identifier: MIT
# tests/fakecuda: the test double of the NVIDIA driver.
#
# Built by plain `make` (the demo uses it too) as a libtool module, then
# placed in tests/fakecuda/lib/ under the names a program asks the dynamic
# loader for (libcuda.so.1; libcuda.so for -lcuda links), so that pointing
# LD_LIBRARY_PATH or a dlopen() path at that folder stands it in for the
# real driver.  Files, not symlinks: the folder must work once copied
# elsewhere (a device machine, an install tree of the tests).

noinst_LTLIBRARIES += tests/fakecuda/libfakecuda.la
tests_fakecuda_libfakecuda_la_SOURCES = tests/fakecuda/fakecuda.c tests/fakecuda/fakecuda.h
# Hidden by default: only the driver API and the two introspection calls are
# exported, each with visibility("default") in the source.
tests_fakecuda_libfakecuda_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
tests_fakecuda_libfakecuda_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

# lib/ holds the driver under its real names.  Not a plain copy of
# .libs/libfakecuda.so: libtool stamps that with the soname libfakecuda.so
# (and puts its own -soname last, so it cannot be overridden), and a program
# linked with -lcuda against lib/libcuda.so would then ask the loader for
# libfakecuda.so.  So the PIC object libtool compiled is linked once more with
# the real driver's soname, and libcuda.so is a copy of that file.
FAKECUDA_PIC_OBJ = tests/fakecuda/.libs/libfakecuda_la-fakecuda.o
tests/fakecuda/lib/libcuda.so.1: tests/fakecuda/libfakecuda.la
	$(AM_V_GEN)$(MKDIR_P) tests/fakecuda/lib && \
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -Wl,-soname,libcuda.so.1 \
		-o tests/fakecuda/lib/libcuda.so.1 $(FAKECUDA_PIC_OBJ) $(LIBS) && \
	cp -f tests/fakecuda/lib/libcuda.so.1 tests/fakecuda/lib/libcuda.so

# lib13.0/ holds the double built as the measured CUDA 13.0 driver
# (-DFAKECUDA_CUDA_VERSION=13000): without the 13.2 single-op calls and the
# 13.5 fabric batch, neither exported nor handed out by cuGetProcAddress.
tests/fakecuda/lib13.0/libcuda.so.1: tests/fakecuda/fakecuda.c tests/fakecuda/fakecuda.h include/cubatchtrace/cuda13x.h
	$(AM_V_GEN)$(MKDIR_P) tests/fakecuda/lib13.0 && \
	$(CC) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) $(AM_CFLAGS) $(CFLAGS) $(LDFLAGS) \
		-DFAKECUDA_CUDA_VERSION=13000 -fvisibility=hidden -shared -fPIC -Wl,-soname,libcuda.so.1 \
		-o tests/fakecuda/lib13.0/libcuda.so.1 $(srcdir)/tests/fakecuda/fakecuda.c $(LIBS) && \
	cp -f tests/fakecuda/lib13.0/libcuda.so.1 tests/fakecuda/lib13.0/libcuda.so

all-local: tests/fakecuda/lib/libcuda.so.1 tests/fakecuda/lib13.0/libcuda.so.1

clean-local: clean-local-fakecuda
.PHONY: clean-local-fakecuda
clean-local-fakecuda:
	-rm -rf tests/fakecuda/lib tests/fakecuda/lib13.0

CLEANFILES += tests/fakecuda/lib/libcuda.so.1 tests/fakecuda/lib/libcuda.so \
	tests/fakecuda/lib13.0/libcuda.so.1 tests/fakecuda/lib13.0/libcuda.so

# The double pinned to the H200 accept/reject table.
check_PROGRAMS += tests/fakecuda/test_fakecuda_table
TESTS += tests/fakecuda/test_fakecuda_table
tests_fakecuda_test_fakecuda_table_SOURCES = tests/fakecuda/test_fakecuda_table.c tests/tap.h
tests_fakecuda_test_fakecuda_table_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_fakecuda_test_fakecuda_table_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
# The test interposes cuMemcpy3DBatchAsync_v2 itself, as the shim would.
tests_fakecuda_test_fakecuda_table_LDFLAGS = -export-dynamic

# The double's 1D batch call pinned to the table measured on an H200: the
# client that measured it (tests/gpu/table1d, built by tests/gpu/local.mk)
# run over the double, row by row.
TESTS += tests/fakecuda/table1d.sh
EXTRA_DIST += tests/fakecuda/table1d.sh docs/fakecuda.md

# The double's graph capture pinned to what the H200 answered
# (tests/gpu/measured/capture-h200.txt), through the client that measured it.
TESTS += tests/fakecuda/capture.sh
EXTRA_DIST += tests/fakecuda/capture.sh
