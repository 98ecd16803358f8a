# SPDX-License-Identifier: MIT
# The libFuzzer targets of tests/fuzz/, built by clang from the sources
# themselves (scripts/check-sanitizers fuzz; docs/sanitizers.md):
#   make -f tests/fuzz/fuzz.mk top=TOP out=DIR CPPEXTRA='CUDA and babeltrace2 -I flags'
# TOP is a configured top directory (its config.h); each target is DIR/fuzz_NAME.
CLANG ?= clang
FUZZ_CFLAGS ?= -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
CPPFLAGS_ALL = -I$(top) -I$(top)/include -I$(top)/tools -I$(top)/tracepoints $(CPPEXTRA)
CC_FUZZ = $(CLANG) $(FUZZ_CFLAGS) $(CPPFLAGS_ALL) -Wall -Wno-unused-parameter
R = $(top)/tools/read
V = $(top)/validate/validate.c
U = $(top)/tools/base/util.c

TARGETS = $(out)/fuzz_compact $(out)/fuzz_validate1d $(out)/fuzz_waivers $(out)/fuzz_util $(out)/fuzz_trace \
	$(out)/fuzz_expand
all: $(TARGETS)

$(out)/fuzz_compact: $(top)/tests/fuzz/fuzz_compact.c $(R)/compact.c $(R)/assemble.c $(R)/gpujoin.c $(U) $(V)
	$(CC_FUZZ) $^ -o $@
$(out)/fuzz_validate1d: $(top)/tests/fuzz/fuzz_validate1d.c $(V)
	$(CC_FUZZ) $^ -o $@
$(out)/fuzz_waivers: $(top)/tests/fuzz/fuzz_waivers.c $(top)/tools/analyse/waivers.c $(U)
	$(CC_FUZZ) $^ -o $@ -ljansson
$(out)/fuzz_util: $(top)/tests/fuzz/fuzz_util.c $(U)
	$(CC_FUZZ) $^ -o $@
$(out)/fuzz_trace: $(top)/tests/fuzz/fuzz_trace.c $(R)/precheck.c $(R)/reader.c $(R)/compact.c $(R)/assemble.c $(R)/gpujoin.c $(U) $(V)
	$(CC_FUZZ) $^ -o $@ $(BT2LIBS)
# (fuzz_expand.c includes tools/plugin/expand.c: the plugin's filter class is made in the target)
$(out)/fuzz_expand: $(top)/tests/fuzz/fuzz_expand.c $(R)/precheck.c $(R)/reader.c $(R)/compact.c $(R)/assemble.c $(R)/gpujoin.c $(U) $(V) \
		$(top)/tools/plugin/expand.c
	$(CC_FUZZ) -DEXPAND_DIR='"$(top)/tests/fuzz/expand"' $(filter %.c,$(filter-out $(top)/tools/plugin/expand.c,$^)) \
		-o $@ $(BT2LIBS) -ldl \
		-Wl,--export-dynamic-symbol=bt_field_array_dynamic_set_length
