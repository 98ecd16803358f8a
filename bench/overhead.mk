# bench/overhead: host time the shim adds to cuMemcpy3DBatchAsync_v2 (not run
# by make check; see bench/README.md).  It dlopens libcuda.so.1 and the shim
# at run time: never link libcuda or the shim here.
noinst_PROGRAMS += bench/overhead
bench_overhead_SOURCES = bench/overhead.c
bench_overhead_LDADD = -ldl
EXTRA_DIST += bench/profile bench/README.md bench/overhead-run bench/report bench/checkpoints
# bench/costs: the building blocks of the shim's path, one by one (driver
# queries, clock, mincore, mutex); dlopens libcuda.so.1 like bench/overhead.
noinst_PROGRAMS += bench/costs
bench_costs_SOURCES = bench/costs.c
bench_costs_LDADD = -ldl -lpthread
