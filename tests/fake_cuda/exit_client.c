// SPDX-License-Identifier: MIT
/*
 * exit_client.c - programs that end, or treat their descriptors, in the ways that once hung
 * the shim, lost its trace or changed the program's own files (tests/e2e/shim_ends.sh). Each
 * runs on the fake driver, prints what it did, and must behave the same with and without the
 * shim.
 *
 *   exit_client mainexit           a thread launching 200 times (pausing), the main thread 100
 *                                  times, then pthread_exit() on the main thread
 *   exit_client alarmexit SEED     launches of ever new shapes (the shim registers each under
 *                                  its lock) until SIGALRM, 1-20 ms in, whose handler exit(7)s
 *   exit_client closefrom FILE     100 launches, a pause; every descriptor >= 3 closed; FILE opened and
 *                                  written twice around 100 launches and a pause of 600 ms
 *   exit_client dup2 FILE          100 launches; FILE dup2()ed over the trace's descriptor and
 *                                  written through it after 100 launches and a pause
 *   exit_client forkclose FILE     10 launches; every descriptor >= 3 closed; FILE opened; a
 *                                  fork child writes "child" through it, then the parent
 *   exit_client _exit N CODE       N launches, then _exit(CODE); _Exit N CODE likewise
 *   exit_client pool W N           W fork children of N launches each ending in _exit(0), as a
 *                                  fork-based worker pool; 5 launches in the parent before
 *   exit_client latedtor           5 launches; liblate.so's destructor, which runs after the
 *                                  shim's, launches 40 more
 *   exit_client syncloop N         N context synchronizations in a row (a polling loop: the
 *                                  most alike records a trace holds)
 *   exit_client mainexitlate       the main thread leaves by pthread_exit before any CUDA call;
 *                                  a thread it started launches 200 times
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "late_dtor.h"

static CUfunction spin;

static CUfunction spin_kernel(void)
{
	CUmodule mod;
	CUfunction f = NULL;

	cuInit(0);
	cuModuleLoadData(&mod, "image");
	cuModuleGetFunction(&f, mod, "_Z4spinv");
	return f;
}

static int launches(int n)
{
	int i, fails = 0;

	for (i = 0; i < n; i++)
		fails += cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS;
	return fails;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0)
		;
}

static void *launcher(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 10; i++) {
		launches(20);
		pause_ms(5);
	}
	return NULL;
}

static int run_mainexit(void)
{
	pthread_t t;

	pthread_create(&t, NULL, launcher, NULL);
	pthread_detach(t);
	launches(100);
	printf("mainexit: 300 launches, main thread leaves by pthread_exit\n");
	fflush(stdout);
	pthread_exit(NULL);
}

static void on_alarm(int sig)
{
	(void)sig;
	exit(7);
}

static __attribute__((noreturn)) void run_alarmexit(unsigned seed)
{
	struct itimerval it = { { 0, 0 }, { 0, 1000 + (long)(seed * 7919u % 19000u) } };
	unsigned i;

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	/* Each launch a new block size and shared memory size: an occupancy query and a record
	 * registered under the shim's lock, so the signal often lands while it is held. */
	for (i = 0;; i++)
		cuLaunchKernel(spin, 1, 1, 1, 1 + i % 1024, 1, 1, (i / 1024) * 16, NULL, NULL, NULL);
}

static void close_from_3(void)
{
	int fd;

	for (fd = 3; fd < 65536; fd++)
		close(fd);
}

static int write_str(int fd, const char *s)
{
	return write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
}

static int run_closefrom(const char *file)
{
	int fd, r[2];

	launches(100);
	pause_ms(300);		/* the trace is open and written to by now */
	close_from_3();
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	r[0] = write_str(fd, "app line 1\n");
	launches(100);
	pause_ms(600);
	r[1] = write_str(fd, "app line 2\n");
	close(fd);
	printf("closefrom: 200 launches, writes %d %d\n", r[0], r[1]);
	return 0;
}

/* The descriptor that is open on a file named *.trace, or -1. */
static int trace_fd(void)
{
	char link[300], target[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int found = -1;

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 6)
			continue;
		target[n] = 0;
		if (!strcmp(target + n - 6, ".trace"))
			found = atoi(d->d_name);
	}
	closedir(dir);
	return found;
}

static int run_dup2(const char *file)
{
	int fd, tfd, r;

	launches(100);
	pause_ms(300);		/* the trace is open by now */
	tfd = trace_fd();
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (tfd >= 0) {
		dup2(fd, tfd);	/* the program's file now, under that number */
		close(fd);
		fd = tfd;
	}
	launches(100);
	pause_ms(600);
	r = write_str(fd, "app via dup2\n");
	close(fd);
	printf("dup2: 200 launches, over the trace's descriptor: %s, write %d\n",
	       tfd >= 0 ? "yes" : "none open", r);
	return 0;
}

static int run_forkclose(const char *file)
{
	int fd, status = 0;
	pid_t pid;

	launches(10);
	pause_ms(300);
	close_from_3();
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	launches(10);
	pause_ms(300);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(write_str(fd, "child\n") ? 3 : 0);
	waitpid(pid, &status, 0);
	write_str(fd, "parent\n");
	close(fd);
	printf("forkclose: 20 launches, child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

static int run_pool(int workers, int n)
{
	int i, failed = 0;

	launches(5);
	fflush(stdout);
	for (i = 0; i < workers; i++) {
		if (fork() == 0) {
			launches(n);
			_exit(0);
		}
	}
	for (i = 0; i < workers; i++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	printf("pool: %d workers of %d launches, %d failed\n", workers, n, failed);
	return 0;
}

static void *late_launcher(void *arg)
{
	(void)arg;
	spin = spin_kernel();
	launches(200);
	printf("mainexitlate: 200 launches on the second thread\n");
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "mainexitlate")) {
		pthread_t t;

		pthread_create(&t, NULL, late_launcher, NULL);
		pthread_detach(t);
		pthread_exit(NULL);
	}
	spin = spin_kernel();
	if (!strcmp(mode, "syncloop") && argc > 2) {
		long i, n = atol(argv[2]);

		for (i = 0; i < n; i++)
			cuCtxSynchronize();
		printf("syncloop: %ld synchronizations\n", n);
		return 0;
	}
	if (!strcmp(mode, "mainexit"))
		return run_mainexit();
	if (!strcmp(mode, "alarmexit") && argc > 2)
		run_alarmexit((unsigned)atoi(argv[2]));
	if (!strcmp(mode, "closefrom") && argc > 2)
		return run_closefrom(argv[2]);
	if (!strcmp(mode, "dup2") && argc > 2)
		return run_dup2(argv[2]);
	if (!strcmp(mode, "forkclose") && argc > 2)
		return run_forkclose(argv[2]);
	if ((!strcmp(mode, "_exit") || !strcmp(mode, "_Exit")) && argc > 3) {
		launches(atoi(argv[2]));
		printf("%s: %d launches\n", mode, atoi(argv[2]));
		fflush(stdout);
		if (mode[1] == 'e')
			_exit(atoi(argv[3]));
		_Exit(atoi(argv[3]));
	}
	if (!strcmp(mode, "pool") && argc > 3)
		return run_pool(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(mode, "latedtor")) {
		launches(5);
		late_dtor_arm(spin, 40);
		printf("latedtor: 5 launches, 40 more in a later destructor\n");
		return 0;
	}
	fprintf(stderr, "usage: exit_client mainexit|mainexitlate|alarmexit SEED|closefrom FILE|"
			"dup2 FILE|forkclose FILE|_exit N CODE|_Exit N CODE|pool W N|latedtor|"
			"syncloop N\n");
	return 2;
}
