# SPDX-License-Identifier: MIT
# tests/unit: the pure validator's tests (TAP), its libFuzzer target, the rules-doc check and units of the reader.

unit_validate_tests = \
	tests/unit/test_validate_rules \
	tests/unit/test_validate_table \
	tests/unit/test_validate_overlap \
	tests/unit/test_validate_1d \
	tests/unit/test_rules_doc \
	tests/unit/test_finding_words \
	tests/unit/test_units \
	tests/unit/test_gpujoin \
	tests/unit/test_recents \
	tests/unit/test_advice

check_PROGRAMS += $(unit_validate_tests)
TESTS += $(unit_validate_tests) tests/unit/fuzz_validate.sh

tests_unit_test_validate_rules_SOURCES = tests/unit/test_validate_rules.c tests/unit/vtest.h
tests_unit_test_validate_rules_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_unit_test_validate_rules_LDADD = libcubatchtrace-validate.la
tests_unit_test_validate_table_SOURCES = tests/unit/test_validate_table.c tests/unit/vtest.h
tests_unit_test_validate_table_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_unit_test_validate_table_LDADD = libcubatchtrace-validate.la
tests_unit_test_validate_overlap_SOURCES = tests/unit/test_validate_overlap.c tests/unit/vtest.h tests/unit/ref_overlap.h
tests_unit_test_validate_overlap_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_unit_test_validate_overlap_LDADD = libcubatchtrace-validate.la
tests_unit_test_finding_words_SOURCES = tests/unit/test_finding_words.c
tests_unit_test_finding_words_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_unit_test_finding_words_LDADD = libcubatchtrace-validate.la
tests_unit_test_validate_1d_SOURCES = tests/unit/test_validate_1d.c tests/unit/vtest.h
tests_unit_test_validate_1d_CPPFLAGS = $(CBT_TESTS_CPPFLAGS)
tests_unit_test_validate_1d_LDADD = libcubatchtrace-validate.la
# The text tables' human units: the tool's helpers, built from their source.
tests_unit_test_units_SOURCES = tests/unit/test_units.c tools/base/util.c tools/base/util.h
tests_unit_test_units_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
# The reader's join of a short gpu_time event with its batch, built from its source.
tests_unit_test_gpujoin_SOURCES = tests/unit/test_gpujoin.c tools/read/gpujoin.c tools/read/gpujoin.h
tests_unit_test_gpujoin_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
# The advisor's runs and cost table on chosen times, built from its source.
tests_unit_test_advice_SOURCES = tests/unit/test_advice.c tools/analyse/advice.c tools/analyse/advice.h \
	tools/analyse/ktab.c tools/analyse/ktab.h tools/base/util.c tools/base/util.h
tests_unit_test_advice_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
# The steady state's lookups of the shim and the keeping of its recents (src/recents.c), built from their source.
tests_unit_test_recents_SOURCES = tests/unit/test_recents.c src/recents.c src/recents.h
tests_unit_test_recents_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
# Reads $(top_srcdir)/docs/rules.md at run time; needs only the catalogue header.
tests_unit_test_rules_doc_SOURCES = tests/unit/test_rules_doc.c

EXTRA_DIST += tests/unit/fuzz_validate.sh tests/unit/fuzz_validate.c
CLEANFILES += tests/unit/fuzz_validate-bin tests/unit/fuzz_validate.skip tests/unit/fuzz_validate.stamp

# The libFuzzer target is built by clang, outside libtool, from the sources
# themselves.  The rule never fails the build: when clang cannot link a
# trivial fuzzer (no libclang_rt.fuzzer, e.g. Debian's libclang-rt-N-dev
# missing) it writes the reason to fuzz_validate.skip and the test skips.
if HAVE_CLANG
check_SCRIPTS += tests/unit/fuzz_validate.stamp
tests/unit/fuzz_validate.stamp: $(srcdir)/tests/unit/fuzz_validate.c $(srcdir)/tests/unit/ref_overlap.h \
		$(srcdir)/validate/validate.c $(srcdir)/include/cubatchtrace/validate.h $(srcdir)/include/cubatchtrace/catalog.h
	@$(MKDIR_P) tests/unit
	$(AM_V_GEN)rm -f tests/unit/fuzz_validate-bin tests/unit/fuzz_validate.skip; \
	probe=tests/unit/fuzz_probe.$$$$; \
	printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > $$probe.c; \
	if ! $(CLANG) -fsanitize=fuzzer,address,undefined $$probe.c -o $$probe >$$probe.log 2>&1; then \
	  echo "$(CLANG) cannot link a libFuzzer program: $$(grep -m1 -i error $$probe.log)" > tests/unit/fuzz_validate.skip; \
	elif ! $(CLANG) $(AM_CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -Wall -Wextra -Wno-unused-parameter \
	    $(srcdir)/tests/unit/fuzz_validate.c $(srcdir)/validate/validate.c -o tests/unit/fuzz_validate-bin; then \
	  rm -f $$probe*; exit 1; \
	fi; \
	rm -f $$probe*; touch $@
else
check_SCRIPTS += tests/unit/fuzz_validate.stamp
tests/unit/fuzz_validate.stamp:
	@$(MKDIR_P) tests/unit
	$(AM_V_GEN)echo "configure found no clang" > tests/unit/fuzz_validate.skip; touch $@
endif
