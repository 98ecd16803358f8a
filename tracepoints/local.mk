# SPDX-License-Identifier: MIT
# The event catalogue: the provider library the shim loads at its first batch.
# It is built next to the shim (src/.libs) so the shim finds it beside itself.
lib_LTLIBRARIES += src/libcubatchtrace-tp.la
src_libcubatchtrace_tp_la_SOURCES = tracepoints/cubatchtrace_tp.c tracepoints/cubatchtrace_tp.h
src_libcubatchtrace_tp_la_CFLAGS = $(AM_CFLAGS) $(LTTNG_UST_CFLAGS) -Wno-missing-field-initializers -Wno-shadow
src_libcubatchtrace_tp_la_LIBADD = $(LTTNG_UST_LIBS)
src_libcubatchtrace_tp_la_LDFLAGS = -module -avoid-version -shared
