// SPDX-License-Identifier: MIT
/*
 * hooks_exit.c - the ways a process or its main thread ends that the destructor never sees.
 * _exit() and _Exit() (Python's os._exit, every fork-based multiprocessing worker) run no
 * handler at all: the trace is finished first, as for quick_exit (bounded). pthread_exit() on
 * the main thread leaves the process alive while any thread is, the writer included: the
 * writer is told, and ends the process as glibc's last thread would once only ours are left.
 * In a process that records nothing, and in a vfork child, these are pass-throughs.
 * Runs on: any thread, and in vfork children (which share our memory: nothing is written here).
 */
#define _GNU_SOURCE
#include "shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SHIM_EXPORT __attribute__((visibility("default")))

typedef void (*exit_fn)(int);
typedef void (*pthread_exit_fn)(void *);

static struct {
	exit_fn exit_, Exit_;
	pthread_exit_fn pthread_exit;
} real;

void exit_hooks_init(void)
{
	real.exit_ = (exit_fn)resolve_dlsym(RTLD_NEXT, "_exit");
	real.Exit_ = (exit_fn)resolve_dlsym(RTLD_NEXT, "_Exit");
	real.pthread_exit = (pthread_exit_fn)resolve_dlsym(RTLD_NEXT, "pthread_exit");
}

static __attribute__((noreturn)) void end_process(exit_fn fn, int status)
{
	if (fn)
		fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

SHIM_EXPORT __attribute__((noreturn)) void _exit(int status)
{
	shim_exit_now();
	if (!real.exit_)
		exit_hooks_init();
	end_process(real.exit_, status);
}

SHIM_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
	shim_exit_now();
	if (!real.Exit_)
		exit_hooks_init();
	end_process(real.Exit_ ? real.Exit_ : real.exit_, status);
}

SHIM_EXPORT __attribute__((noreturn)) void pthread_exit(void *retval)
{
	if (!real.pthread_exit)
		exit_hooks_init();
	if (syscall(SYS_gettid) == getpid())
		writer_main_gone();
	if (real.pthread_exit)
		real.pthread_exit(retval);
	for (;;)
		syscall(SYS_exit, 0);	/* no libc pthread_exit: cannot happen */
}
