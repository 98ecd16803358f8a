/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): decoding in a child process with a memory limit and
 * a watchdog (guard.c), so that a damaged trace costs one line and status 2.
 */
#ifndef CBT_GUARD_H
#define CBT_GUARD_H

/* Runs body(arg), the decoding step of a command (read, aggregate, print), in
 * a child process with a memory limit (CUBATCHTRACE_MAX_MEMORY) and a watchdog
 * that stops it when the decoder makes no progress (CUBATCHTRACE_TIMEOUT).
 * Its standard output reaches ours only when body's status is not 2.  Returns
 * body's status, or 2 after one line on stderr naming the trace (inputs when
 * nothing more precise is known) when the child crashed, went over its limit
 * or stalled.  Inside a guarded child it just calls body.  In the child,
 * cbt_progress() (util.h) counts as progress too. */
int cbt_guard_run(const char *const *inputs, int ninputs, int (*body)(void *arg), void *arg);

#endif
