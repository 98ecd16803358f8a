# SPDX-License-Identifier: MIT
# The demo program (scripts/demo traces it).  It links libcuda through the
# test double's directory, whose soname is libcuda.so.1: at run time the
# real driver or the double serves it, whichever the loader finds.
noinst_PROGRAMS += examples/demo
examples_demo_SOURCES = examples/demo.c
examples_demo_LDADD = -L$(top_builddir)/tests/fakecuda/lib -lcuda
EXTRA_examples_demo_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
# Batched copies that draw the advice, each followed by what it says to do
# (scripts/readme-examples traces it for the README's advice table).
noinst_PROGRAMS += examples/advice
examples_advice_SOURCES = examples/advice.c
examples_advice_LDADD = -L$(top_builddir)/tests/fakecuda/lib -lcuda
EXTRA_examples_advice_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1
