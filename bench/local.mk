# SPDX-License-Identifier: MIT
# bench: CPU cost of the validator alone (not run by make check).
noinst_PROGRAMS += bench/overlap
bench_overlap_SOURCES = bench/overlap.c
bench_overlap_LDADD = libcubatchtrace-validate.la -lm
