# SPDX-License-Identifier: MIT
# The cubatchtrace tool (tools/), its tests (tests/tool/), its man page and
# schema, and the summary benchmark (bench/summary.sh).
# The reading library: traces decoded (format 2 and the compact record),
# batches put back together and validated.  One decoder, two front ends: the
# tool and the babeltrace2 plugin (tools/plugin/) both link it.
noinst_LTLIBRARIES += tools/libcbtread.la
tools_libcbtread_la_SOURCES = \
	tools/read/reader.c tools/read/reader.h \
	tools/read/compact.c tools/read/compact.h tools/read/assemble.c tools/read/assemble.h \
	tools/read/gpujoin.c tools/read/gpujoin.h \
	tools/read/precheck.c tools/read/precheck.h \
	tools/base/records.h tools/base/util.c tools/base/util.h
tools_libcbtread_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
tools_libcbtread_la_CFLAGS = $(AM_CFLAGS) $(BABELTRACE2_CFLAGS)
tools_libcbtread_la_LIBADD = validate/libcbtvalidate.la $(BABELTRACE2_LIBS)

# The babeltrace2 plugin: filter.cubatchtrace.expand, a module babeltrace2
# loads from its plugin directory (configure --with-babeltrace2-plugin-dir).
# "exec" in the name: installed by install-exec, whose hook removes its .la.
bt2pluginexecdir = $(BABELTRACE2_PLUGIN_DIR)
bt2pluginexec_LTLIBRARIES = tools/plugin/babeltrace-plugin-cubatchtrace.la
tools_plugin_babeltrace_plugin_cubatchtrace_la_SOURCES = tools/plugin/expand.c
tools_plugin_babeltrace_plugin_cubatchtrace_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
tools_plugin_babeltrace_plugin_cubatchtrace_la_CFLAGS = $(AM_CFLAGS) $(BABELTRACE2_CFLAGS)
tools_plugin_babeltrace_plugin_cubatchtrace_la_LDFLAGS = -module -avoid-version -no-undefined
tools_plugin_babeltrace_plugin_cubatchtrace_la_LIBADD = tools/libcbtread.la $(BABELTRACE2_LIBS)

bin_PROGRAMS += tools/cubatchtrace
tools_cubatchtrace_SOURCES = \
	tools/main.c tools/commands.h tools/run.c tools/show.c tools/summary.c tools/timeline.c tools/report.c \
	tools/export.c tools/render/sqlite.c tools/render/sqlite.h tools/render/csv.c tools/render/csv.h \
	tools/guard.c tools/guard.h tools/parallel.c tools/parallel.h tools/relay.c tools/relay.h tools/session.c tools/session.h \
	tools/analyse/agg.c tools/analyse/agg.h tools/analyse/agg_internal.h tools/analyse/agg_out.c \
	tools/analyse/advice.c tools/analyse/advice.h \
	tools/analyse/ktab.c tools/analyse/ktab.h tools/analyse/classes.h tools/analyse/agg_gpu.h tools/analyse/agg_gpu.c \
	tools/analyse/callsite.c tools/analyse/callsite.h tools/analyse/tables.c tools/analyse/tables.h \
	tools/analyse/hosts.c tools/analyse/hosts.h tools/analyse/waivers.c tools/analyse/waivers.h \
	tools/analyse/timeline.c tools/analyse/timeline.h tools/analyse/series.c tools/analyse/series.h \
	tools/render/findings.c tools/render/findings.h tools/render/text.c tools/render/text.h \
	tools/render/json.c tools/render/json.h \
	tools/render/trace_event.c tools/render/trace_event.h \
	tools/render/page.c tools/render/page.h tools/render/plots.c tools/render/plots.h \
	tools/render/gnuplot.c tools/render/gnuplot.h tools/render/html.c tools/render/html.h \
	tools/render/hosts.c tools/render/hosts.h
tools_cubatchtrace_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools \
	-DCBT_LIBDIR='"$(libdir)"' -DCBT_BINDIR='"$(bindir)"' -DCBT_BUILDDIR='"$(abs_top_builddir)"' \
	-DCBT_LTTNG='"$(LTTNG)"' -DCBT_LTTNG_SESSIOND='"$(LTTNG_SESSIOND)"'
tools_cubatchtrace_CFLAGS = $(AM_CFLAGS) $(BABELTRACE2_CFLAGS) $(JANSSON_CFLAGS) $(LIBDW_CFLAGS) $(SQLITE3_CFLAGS)
tools_cubatchtrace_LDADD = tools/libcbtread.la $(BABELTRACE2_LIBS) $(JANSSON_LIBS) $(LIBDW_LIBS) $(SQLITE3_LIBS) -ldl
dist_man1_MANS += docs/cubatchtrace.1
# the tables of `export`
dist_doc_DATA += docs/export.md

# The event generator: synthetic batches through the real tracepoint provider,
# for the tests (known totals) and the benchmark (large traces).
noinst_PROGRAMS += tests/tool/cbt-gen
# The compact record is written by the shim's own writer, src/record.c, built in.
tests_tool_cbt_gen_SOURCES = tests/tool/cbt-gen.c src/record.c
tests_tool_cbt_gen_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tracepoints -I$(top_srcdir)/src
tests_tool_cbt_gen_CFLAGS = $(AM_CFLAGS) $(LTTNG_UST_CFLAGS) -Wno-missing-field-initializers -Wno-shadow
tests_tool_cbt_gen_LDADD = src/libcubatchtrace-tp.la $(LTTNG_UST_LIBS)

# Batches across two GPUs: a client of the double (FAKECUDA_DEVICE_COUNT=2)
# copying between device 0 and device 1, for tests/tool/peer.sh.
check_PROGRAMS += tests/tool/client_peer
tests_tool_client_peer_SOURCES = tests/tool/client_peer.c
tests_tool_client_peer_LDADD = -L$(top_builddir)/tests/fakecuda/lib -lcuda
EXTRA_tests_tool_client_peer_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

# One rank of a job (N batches of K ops), for tests/tool/hosts.sh and job-kill.sh.
check_PROGRAMS += tests/tool/client_rank
tests_tool_client_rank_SOURCES = tests/tool/client_rank.c
tests_tool_client_rank_LDADD = -L$(top_builddir)/tests/fakecuda/lib -lcuda
EXTRA_tests_tool_client_rank_DEPENDENCIES = tests/fakecuda/lib/libcuda.so.1

TOOL_TESTS = \
	tests/tool/licence.sh \
	tests/tool/rules.sh \
	tests/tool/usage.sh \
	tests/tool/bad-input.sh \
	tests/tool/bad-trace.sh \
	tests/tool/fuzz-read.sh \
	tests/tool/summary-totals.sh \
	tests/tool/check.sh \
	tests/tool/check-notes.sh \
	tests/tool/run.sh \
	tests/tool/demo.sh \
	tests/tool/peer.sh \
	tests/tool/show.sh \
	tests/tool/show-window.sh \
	tests/tool/hosts.sh \
	tests/tool/job-kill.sh \
	tests/tool/install.sh \
	tests/tool/callsite.sh \
	tests/tool/stack.sh \
	tests/tool/check-formats.sh \
	tests/tool/advice.sh \
	tests/tool/findings-words.sh \
	tests/tool/run-window.sh \
	tests/tool/run-json.sh \
	tests/tool/inputs-twice.sh \
	tests/tool/no-batch.sh \
	tests/tool/filter-nothing.sh \
	tests/tool/window-offset.sh \
	tests/tool/run-cannot-start.sh \
	tests/tool/help-words.sh \
	tests/tool/run-destroy.sh \
	tests/tool/progress.sh \
	tests/tool/timeline.sh \
	tests/tool/gpu-summary.sh \
	tests/tool/report.sh \
	tests/tool/identity.sh \
	tests/tool/format-equal.sh \
	tests/tool/compact-totals.sh \
	tests/tool/pipeline.sh \
	tests/tool/plugin.sh \
	tests/tool/plugin-live.sh \
	tests/tool/plugin-fuzz.sh \
	tests/tool/export.sh \
	tests/tool/export-example.sh \
	tests/tool/export-live.sh
TESTS += $(TOOL_TESTS)
EXTRA_DIST += $(TOOL_TESTS) tests/tool/client_cxx.cc tests/tool/common.sh tests/tool/job.sh tests/tool/guarded.sh tests/tool/damage.py tests/tool/mkctf-seq.py tests/tool/expect.py tests/tool/gpuexpect.py tests/tool/mkctf.py tests/tool/mkbatches.py \
	tests/tool/check_trace_events.py tests/tool/report-dom.py bench/summary.sh bench/parallel.sh \
	tests/tool/format_norm.py tests/tool/format2.tar.xz tests/tool/format3.tar.xz tests/tool/gpu1.tar.xz bench/trace-size.sh tests/tool/expand_show.py \
	tests/tool/relay-readers.sh \
	tests/tool/export_compare.py tests/tool/export_example.py bench/export.sh bench/measure.py
