/* SPDX-License-Identifier: MIT */
/*
 * cubatchtrace (the tool): decoding behind a guard (guard.c): a memory limit,
 * handlers of the fatal signals and a watchdog, so that a damaged trace costs
 * one line and status 2.
 */
#ifndef CBT_GUARD_H
#define CBT_GUARD_H

/* Runs body(arg), the decoding step of a command (read, aggregate, print),
 * with a memory limit (CUBATCHTRACE_MAX_MEMORY), handlers of the fatal
 * signals and a watchdog that ends the process when the decoder makes no
 * progress (CUBATCHTRACE_TIMEOUT).  Its standard output reaches ours only
 * when body's status is not 2.  Returns body's status.  When the decoder
 * crashed, went over its limit or stalled, it does not return: one line on
 * stderr names the trace (inputs when nothing more precise is known) and
 * the process ends (cbt_guard_on_failure says with what).  Inside a guarded
 * step it just calls body.  During the step, cbt_progress() (util.h) counts
 * as progress too, and the threads that read call cbt_thread_enter/leave. */
int cbt_guard_run(const char *const *inputs, int ninputs, int (*body)(void *arg), void *arg);

/* For the next cbt_guard_run only: when its step fails, the process ends with
 * `status` (else 2) after removing the file `remove` (NULL: none), a
 * command's unfinished output.  Nothing else runs after such a failure. */
void cbt_guard_on_failure(int status, const char *remove);

#endif
