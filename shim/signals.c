// SPDX-License-Identifier: MIT
/*
 * signals.c - finishing the trace when a fatal signal the program does not handle ends it.
 * When recording starts, each terminating signal whose disposition is still SIG_DFL gets the
 * shim's handler; a handler or SIG_IGN the program set is never touched, and one it sets later
 * simply replaces ours. The handler asks the writer to write everything and END (waiting at most
 * SIGNAL_WAIT_MS), restores SIG_DFL and lets the signal do what it would have done: the same
 * exit status, the same core dump. GPUSHIM_SIGNALS=0 installs nothing.
 * Runs on: the thread that starts recording (install); any thread (the handler:
 * async-signal-safe code only).
 */
#define _GNU_SOURCE
#include "shim.h"

#include <signal.h>
#include <string.h>

/* Longest a dying thread waits for the trace to be finished. */
#define SIGNAL_WAIT_MS 2000

/* Signals whose default action ends the process (SIGKILL and SIGSTOP cannot be caught). */
static const int fatal_signals[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGABRT,
				     SIGBUS,  SIGFPE,  SIGSEGV, SIGPIPE, SIGTERM };

/* A fault the kernel raised re-raises itself when the faulting instruction runs again. */
static int is_fault(int sig, const siginfo_t *si)
{
	return si && si->si_code > 0 &&
	       (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction dfl;

	(void)uc;
	writer_finish_on_signal(sig, SIGNAL_WAIT_MS);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* The signal is blocked while we run: raised now, it strikes as we return. */
	if (!is_fault(sig, si))
		raise(sig);
	errno = saved;
}

void signals_install(void)
{
	size_t i;

	if (!shim.cfg.signals)
		return;
	for (i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old, sa;

		if (sigaction(fatal_signals[i], NULL, &old) < 0 || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = fatal_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		sigaction(fatal_signals[i], &sa, NULL);
	}
}
