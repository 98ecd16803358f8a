# SPDX-License-Identifier: MIT
# The preload library (the shim).
lib_LTLIBRARIES += src/libcubatchtrace.la

src_libcubatchtrace_la_SOURCES = src/util.h src/driver.h src/settings.h src/batch.h src/operands.h src/memwrap.h \
	src/alert.h src/doors.c src/batch.c src/driver.c src/settings.c src/operands.c src/recents.c src/recents.h src/memwrap.c \
	src/alert.c src/stream.c src/stream.h src/oplist.c src/oplist.h src/record.c src/record.h src/thread.c src/thread.h src/tp.c src/tp.h src/process.c src/process.h src/gputime.c src/gputime.h src/graph.c src/graph.h src/nodes.c src/nodes.h src/dlsym_stub.S
src_libcubatchtrace_la_CPPFLAGS = $(AM_CPPFLAGS) $(LTTNG_UST_CFLAGS)
# Everything is hidden but the doors (CBT_EXPORT).
src_libcubatchtrace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -Wno-missing-field-initializers
# The version script exports dlsym under glibc's versions (src/dlsym_stub.S).
# -z nodelete: dlclose never unmaps the shim.  It hands out pointers to its
# own functions (doors, cuGetProcAddress and memory wrappers) that callers
# keep, registers per-thread destructors (pthread keys) that run when any
# thread that made a batch exits, and holds initial-exec TLS that a second
# load could not get back.
src_libcubatchtrace_la_LDFLAGS = -module -avoid-version -shared \
	-Wl,--version-script=$(top_srcdir)/src/libcubatchtrace.map -Wl,-z,nodelete
EXTRA_src_libcubatchtrace_la_DEPENDENCIES = src/libcubatchtrace.map
EXTRA_DIST += src/libcubatchtrace.map
src_libcubatchtrace_la_LIBADD = validate/libcbtvalidate.la -ldl -lpthread
