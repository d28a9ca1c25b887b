// SPDX-License-Identifier: MIT
/*
 * init.c - the only constructor and destructor of libgpushim.so, the global state, the start of
 * recording, fork handling and shim_disable(). The constructor does nothing CUDA-related and
 * creates nothing: LD_PRELOAD is inherited by compilers and shells, which must not notice us.
 * Runs on: the loading thread (constructor), the exiting thread (destructor), any app thread
 * (shim_start, shim_disable), the fork child (atfork handler).
 */
#define _GNU_SOURCE
#include "shim.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct shim_state shim;
__thread struct shim_tls shim_tls __attribute__((tls_model("initial-exec")));

void shim_disable(const char *fmt, ...)
{
	int saved = errno;
	int old = atomic_exchange(&shim.mode, SHIM_OFF);
	va_list ap;

	if (old == SHIM_OFF) {
		errno = saved;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(shim.disable_text, sizeof(shim.disable_text), fmt, ap);
	va_end(ap);
	shim.disable_reason = shim.disable_text;
	shim_log(LOG_WARN, "recording stopped, the program continues unchanged: %s",
		 shim.disable_text);
	tbuf_kick_writer();
	errno = saved;
}

int shim_start(void)
{
	int expected = SHIM_IDLE;
	int saved, ret;

	if (!atomic_compare_exchange_strong(&shim.mode, &expected, SHIM_STARTING)) {
		if (expected == SHIM_ENDED) {
			writer_late_call();	/* after the exit's END: counted, not recorded */
			return 0;
		}
		return expected != SHIM_OFF;	/* ON, or another thread is starting it */
	}

	saved = errno;
	ret = writer_start();
	if (ret < 0) {
		shim_disable("cannot start the writer thread: %s", strerror(-ret));
		errno = saved;
		return 0;
	}
	stacks_start();		/* call stacks: their thread readies them; waited for, bounded */
	stacks_wait_ready();
	expected = SHIM_STARTING;
	atomic_compare_exchange_strong(&shim.mode, &expected, SHIM_ON);
	signals_install();
	errno = saved;
	return atomic_load(&shim.mode) != SHIM_OFF;
}

/*
 * The child of a fork() has one thread, a copy of the parent's buffers and no writer. It starts
 * over: a new epoch makes every per-thread state stale, and its first recorded call opens its
 * own trace (the pid in the default name differs).
 */
static void shim_atfork_child(void)
{
	int saved = errno;
	int mode = atomic_load(&shim.mode);

	if (mode == SHIM_OFF && !shim.disable_reason) {
		errno = saved;
		return;			/* GPUSHIM_DISABLE: stay a pass-through */
	}
	log_reset_after_fork();
	writer_reset_after_fork();
	cupti_reset_after_fork();
	pm_reset_after_fork();
	tbuf_reset_after_fork();
	record_reset_after_fork();
	nvtx_reset_after_fork();
	stacks_reset_after_fork();
	atomic_fetch_add(&shim.epoch, 1);
	atomic_store(&shim.nr_captures, 0);
	atomic_store(&shim.writer_kick, 0);
	atomic_store(&shim.nr_threads, 0);
	atomic_store(&shim.nr_lost_unringed, 0);
	atomic_store(&shim.exit_deadline_ns, 0);
	shim_tls.buf = NULL;
	shim_tls.depth = 0;
	shim.is_forked = 1;
	shim.disable_reason = NULL;
	atomic_store(&shim.mode, SHIM_IDLE);
	errno = saved;
}

uint64_t shim_exit_begin(void)
{
	uint64_t zero = 0, d = clock_now_ns() + (uint64_t)WRITER_EXIT_WAIT_MS * 1000000u;

	if (!atomic_compare_exchange_strong(&shim.exit_deadline_ns, &zero, d))
		return zero;
	meta_exit_deadline(clock_mono_ns() + (uint64_t)WRITER_EXIT_WAIT_MS * 1000000u / 2);
	return d;
}

/*
 * The endings that run no destructor: quick_exit() runs only its own handlers, _exit() and
 * _Exit() nothing (hooks_exit.c). CUPTI's buffers and the writer's are flushed there too.
 */
void shim_exit_now(void)
{
	int saved = errno;

	if (!writer_is_running_here())
		return;		/* nothing recorded, or a vfork child (the parent's memory) */
	shim_exit_begin();
	/* Called from a signal handler that interrupted a hook, this thread may hold CUPTI's
	 * lock inside the driver: no CUPTI call then. */
	if (!shim_tls.depth)
		cupti_final_flush();
	writer_stop(WRITER_EXIT_WAIT_MS);
	errno = saved;
}

static void shim_quick_exit(void)
{
	shim_exit_now();
}

__attribute__((constructor)) static void shim_ctor(void)
{
	int saved = errno;

	config_load(&shim.cfg);
	stacks_init();
	resolve_init(shim.cfg.is_disabled);
	nvtx_init();
	exec_hooks_init();
	exit_hooks_init();
	if (shim.cfg.is_disabled) {
		atomic_store(&shim.mode, SHIM_OFF);
		errno = saved;
		return;
	}
	tbuf_init();
	pthread_atfork(NULL, NULL, shim_atfork_child);
	at_quick_exit(shim_quick_exit);
	atomic_store(&shim.mode, SHIM_IDLE);
	errno = saved;
}

__attribute__((destructor)) static void shim_dtor(void)
{
	int saved = errno;

	writer_stop(WRITER_EXIT_WAIT_MS);
	errno = saved;
}
