// SPDX-License-Identifier: MIT
/*
 * hooks_exec.c - the exec family. exec replaces the process image without running a destructor,
 * so the records since the last chunk would vanish with it: before the real exec the writer
 * writes everything and an END (writer_exec_begin); when exec fails the END is taken back and
 * recording goes on. The new program, if it uses CUDA, gets its own trace (NAME-1.trace).
 * Every variant is wrapped because libc's own variants reach execve internally, past any
 * interposer. In a process that records nothing, and in a vfork child, these are pass-throughs.
 * Runs on: any thread, and in vfork children (which share our memory: nothing is written here).
 */
#define _GNU_SOURCE
#include "shim.h"

#include <alloca.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <unistd.h>

/* How long exec waits for the writer to finish the trace. */
#define EXEC_WAIT_MS 2000

#define SHIM_EXPORT __attribute__((visibility("default")))

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static struct {
	execve_fn execve;
	execvp_fn execv, execvp;
	execvpe_fn execvpe;
	fexecve_fn fexecve;
	execveat_fn execveat;
} real;

void exec_hooks_init(void)
{
	real.execve = (execve_fn)resolve_dlsym(RTLD_NEXT, "execve");
	real.execv = (execvp_fn)resolve_dlsym(RTLD_NEXT, "execv");
	real.execvp = (execvp_fn)resolve_dlsym(RTLD_NEXT, "execvp");
	real.execvpe = (execvpe_fn)resolve_dlsym(RTLD_NEXT, "execvpe");
	real.fexecve = (fexecve_fn)resolve_dlsym(RTLD_NEXT, "fexecve");
	real.execveat = (execveat_fn)resolve_dlsym(RTLD_NEXT, "execveat");
}

static int missing(void)
{
	errno = ENOSYS;
	return -1;
}

/* An exec before the constructor ran (from another library's constructor): resolve now. */
#define ENSURE(fn)                                                                                 \
	do {                                                                                       \
		if (!real.fn)                                                                      \
			exec_hooks_init();                                                         \
		if (!real.fn)                                                                      \
			return missing();                                                          \
	} while (0)

/* Around every real exec: the trace is finished before, resumed after a failure. */
#define AROUND_EXEC(path, call)                                                                \
	do {                                                                                       \
		int saved = errno, is_parked, ret;                                                 \
		is_parked = writer_exec_begin(path, EXEC_WAIT_MS);                                 \
		errno = saved;                                                                     \
		ret = (call);                                                                      \
		if (is_parked) {                                                                   \
			saved = errno;                                                             \
			writer_exec_end();                                                         \
			errno = saved;                                                             \
		}                                                                                  \
		return ret;                                                                        \
	} while (0)

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	ENSURE(execve);
	AROUND_EXEC(path, real.execve(path, argv, envp));
}

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
	ENSURE(execv);
	AROUND_EXEC(path, real.execv(path, argv));
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
	ENSURE(execvp);
	AROUND_EXEC(file, real.execvp(file, argv));
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	ENSURE(execvpe);
	AROUND_EXEC(file, real.execvpe(file, argv, envp));
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	ENSURE(fexecve);
	AROUND_EXEC("(fexecve)", real.fexecve(fd, argv, envp));
}

SHIM_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			 int flags)
{
	ENSURE(execveat);
	AROUND_EXEC(path, real.execveat(dirfd, path, argv, envp, flags));
}

/*
 * The list forms: count the arguments, copy them to the stack (alloca, as libc does with an
 * array; no heap in a vfork child), go through the vector forms.
 */
#define COLLECT_ARGS(first, ap, argv)                                                          \
	do {                                                                                       \
		size_t n_ = 1, i_;                                                                 \
		va_start(ap, first);                                                               \
		while (va_arg(ap, char *))                                                         \
			n_++;                                                                      \
		va_end(ap);                                                                        \
		argv = alloca((n_ + 1) * sizeof(char *));                                          \
		va_start(ap, first);                                                               \
		argv[0] = (char *)(first);                                                         \
		for (i_ = 1; i_ <= n_; i_++)                                                       \
			argv[i_] = va_arg(ap, char *);                                             \
	} while (0)

SHIM_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv;

	COLLECT_ARGS(arg, ap, argv);
	va_end(ap);
	return execv(path, argv);
}

SHIM_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	char **argv;

	COLLECT_ARGS(arg, ap, argv);
	va_end(ap);
	return execvp(file, argv);
}

SHIM_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv;
	char *const *envp;

	COLLECT_ARGS(arg, ap, argv);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
