# SPDX-License-Identifier: MIT
# bench/overhead: host time and CPU the shim adds to cuMemcpy3DBatchAsync_v2,
# next to LTTng's floor (not run by make check; see bench/README.md).  It
# dlopens libcuda.so.1, the shim and the floor at run time: never link
# libcuda, the shim or the floor here.
noinst_PROGRAMS += bench/overhead
bench_overhead_SOURCES = bench/overhead.c bench/pairstats.c bench/pairstats.h
bench_overhead_LDADD = -ldl -lm

# bench/floor: the floor, a minimal recorder of one event per batch with its
# own provider (cbtfloor) compiled in.  -rpath makes libtool build a shared
# module although it is not installed.
noinst_LTLIBRARIES += bench/floor/libcbtfloor.la
bench_floor_libcbtfloor_la_SOURCES = bench/floor/floor.c bench/floor/cbtfloor_tp.h
bench_floor_libcbtfloor_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/bench/floor $(LTTNG_UST_CFLAGS)
bench_floor_libcbtfloor_la_CFLAGS = $(AM_CFLAGS) -Wno-missing-field-initializers -Wno-shadow
bench_floor_libcbtfloor_la_LIBADD = $(LTTNG_UST_LIBS) -lpthread
bench_floor_libcbtfloor_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

EXTRA_DIST += bench/graph-launch.sh bench/launch-ir.sh bench/profile bench/codelines.awk bench/README.md bench/overhead-run bench/ab.sh bench/abn.sh bench/process-verdicts bench/gputime-split.sh bench/gputime-costs.sh bench/report bench/summary.sh bench/timeline-size.sh bench/peak.c bench/gpu-time-cupti.c \
	bench/advice-costs.c bench/advice-costs.sh
# bench/costs: the building blocks of the shim's path, one by one (driver
# queries, clock, mincore, mutex); dlopens libcuda.so.1 like bench/overhead.
noinst_PROGRAMS += bench/costs
bench_costs_SOURCES = bench/costs.c
bench_costs_LDADD = -ldl -lpthread
# bench/drvclock: a stand-in for libcuda.so.1 that times the driver's part of
# each batch call (bench/overhead --libcuda; bench/README.md).  It depends on
# libcuda.so.1 (linked against the test double's soname here; at run time the
# loader's libcuda.so.1, the real driver on a GPU machine).
noinst_LTLIBRARIES += bench/drvclock/libcbtdrvclock.la
bench_drvclock_libcbtdrvclock_la_SOURCES = bench/drvclock.c
bench_drvclock_libcbtdrvclock_la_LIBADD = -L$(top_builddir)/tests/fakecuda/lib -lcuda -ldl
bench_drvclock_libcbtdrvclock_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
EXTRA_bench_drvclock_libcbtdrvclock_la_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# bench/overhead's bounds and its outside table, over the test double.
TESTS += tests/tool/bench-overhead.sh
EXTRA_DIST += tests/tool/bench-overhead.sh

# bench/report's counts of the verdicts and the goals' other measures.
TESTS += tests/tool/bench-report.sh
EXTRA_DIST += tests/tool/bench-report.sh
# bench/results/: current/ and history/, the index of the experiments, the
# documents bench/report makes from them.
TESTS += tests/tool/bench-results.sh
EXTRA_DIST += tests/tool/bench-results.sh
# bench/process-verdicts: a row judged over processes.
TESTS += tests/tool/bench-process-verdicts.sh
EXTRA_DIST += tests/tool/bench-process-verdicts.sh
