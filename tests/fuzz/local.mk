# SPDX-License-Identifier: MIT
# tests/fuzz: the libFuzzer targets (built and run by scripts/check-sanitizers
# fuzz through tests/fuzz/fuzz.mk; docs/sanitizers.md), their seed corpora,
# dictionaries and regression inputs, and babeltrace2's hang on a cut
# metadata packet (tests/fuzz/bt2-hang.sh).
TESTS += tests/fuzz/bt2-hang.sh
EXTRA_DIST += tests/fuzz/bt2-hang.sh tests/fuzz/bt2-hang/metadata tests/fuzz/fuzz.mk \
	tests/fuzz/fuzzread.h tests/fuzz/fuzz_compact.c tests/fuzz/fuzz_validate1d.c tests/fuzz/fuzz_waivers.c tests/fuzz/fuzz_util.c \
	tests/fuzz/fuzz_trace.c tests/fuzz/fuzz_expand.c tests/fuzz/waivers.dict tests/fuzz/util.dict tests/fuzz/trace.dict \
	tests/fuzz/corpus tests/fuzz/expand tests/sanitizers-lsan.supp tests/sanitizers-tsan.supp tests/sanitizers-ubsan.supp
