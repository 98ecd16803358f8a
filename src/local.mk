# The preload library (the shim).
lib_LTLIBRARIES += src/libcubatchtrace.la

src_libcubatchtrace_la_SOURCES = src/shim.h src/doors.c src/batch.c src/driver.c src/operands.c src/memwrap.c \
	src/report.c src/capture.c src/capture.h src/tp.c src/tp.h src/dlsym_stub.S
src_libcubatchtrace_la_CPPFLAGS = $(AM_CPPFLAGS) $(LTTNG_UST_CFLAGS)
# Everything is hidden but the doors (CBT_EXPORT).
src_libcubatchtrace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -Wno-missing-field-initializers
src_libcubatchtrace_la_LDFLAGS = -module -avoid-version -shared
src_libcubatchtrace_la_LIBADD = validate/libcbtvalidate.la -ldl -lpthread
