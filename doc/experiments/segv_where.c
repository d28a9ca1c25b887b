// SPDX-License-Identifier: MIT
/*
 * segv_where.c - where a process dies: preloaded (before the shim), it prints the faulting
 * thread's backtrace, the faulting address and PC, and the mappings the frames fall in, to
 * stderr on SIGSEGV, SIGBUS or SIGABRT, then lets the signal kill the process as it would have.
 * For the machines with no debugger (BENCHMARKS.md "Recording modes side by side": which
 * library a detaching sampled run dies in). An experiment, not part of the shim.
 *
 *   gcc -O1 -g -shared -fPIC -o segv_where.so doc/experiments/segv_where.c
 *   LD_PRELOAD="$PWD/segv_where.so:$PWD/build/shim/libgpushim.so" python3 ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <ucontext.h>
#include <unistd.h>

static char altstack[1 << 16];

static void say(const char *s)
{
	ssize_t r = write(2, s, strlen(s));
	(void)r;
}

static void where(const char *what, void *addr)
{
	char line[512];
	Dl_info di;

	if (dladdr(addr, &di) && di.dli_fname) {
		snprintf(line, sizeof(line), "  %s %p = %s+0x%lx (%s+0x%lx)\n", what, addr,
			 di.dli_fname, (unsigned long)((uintptr_t)addr - (uintptr_t)di.dli_fbase),
			 di.dli_sname ? di.dli_sname : "?",
			 di.dli_saddr ? (unsigned long)((uintptr_t)addr - (uintptr_t)di.dli_saddr) : 0ul);
	} else {
		snprintf(line, sizeof(line), "  %s %p (no object)\n", what, addr);
	}
	say(line);
}

static void on_fault(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	void *frames[64];
	char comm[32] = "?", line[256];
	int n, i, fd;

	fd = open("/proc/thread-self/comm", 0);
	if (fd >= 0) {
		ssize_t r = read(fd, comm, sizeof(comm) - 1);
		comm[r > 0 ? r - 1 : 0] = 0;
		close(fd);
	}
	snprintf(line, sizeof(line), "\nsegv_where: signal %d in thread %ld (%s), fault address %p\n",
		 sig, (long)syscall(SYS_gettid), comm, si->si_addr);
	say(line);
#if defined(__x86_64__)
	where("pc", (void *)uc->uc_mcontext.gregs[REG_RIP]);
	{	/* the word at the stack's top: the caller's return address only if the fault
		 * came at a function's entry (else whatever the function pushed last) */
		void **sp = (void **)uc->uc_mcontext.gregs[REG_RSP];
		where("[rsp]", sp[0]);
	}
#endif
	n = backtrace(frames, 64);
	for (i = 0; i < n; i++)
		where("frame", frames[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void segv_where_init(void)
{
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	struct sigaction sa;
	void *warm[1];

	backtrace(warm, 1);	/* loads libgcc_s now, not inside the handler (dlopen, malloc) */
	sigaltstack(&ss, NULL);	/* only this thread's; others use their own stacks */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
}
