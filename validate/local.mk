# SPDX-License-Identifier: MIT
# The validator: pure (ops in, findings out), shared by the shim (strict mode,
# the stderr report), the tool (read-time checks) and users' own tests.
lib_LTLIBRARIES += libcubatchtrace-validate.la
libcubatchtrace_validate_la_SOURCES = validate/validate.c validate/words.c
libcubatchtrace_validate_la_LDFLAGS = -version-info 0:0:0
# pkg-config --cflags --libs cubatchtrace-validate: the headers, the library
# and the CUDA toolkit's include directory (validate.h includes cuda.h).
pkgconfig_DATA += validate/cubatchtrace-validate.pc
dist_man3_MANS += docs/libcubatchtrace-validate.3

# The same code, built into the shim (which must not depend on an installed
# copy) and into the tool.
noinst_LTLIBRARIES += validate/libcbtvalidate.la
validate_libcbtvalidate_la_SOURCES = validate/validate.c validate/words.c
validate_libcbtvalidate_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
