// SPDX-License-Identifier: MIT
/*
 * stack_client.c - a driver-API client whose calls come from known functions, for the shim's
 * call stacks (tests/e2e/shim_stacks.sh). Built with -rdynamic and frame pointers, so dladdr
 * names every function here; each is noinline and exported.
 *
 *   stack_client sync     stack_outer() -> stack_inner() -> cuStreamSynchronize, three times
 *                         from one place (one stack), then stack_alloc() -> cuMemAlloc_v2 and
 *                         cuMemFree_v2
 *   stack_client launch N stack_launcher() launches the same kernel N times, then one sync
 *   stack_client threads  stack_thread() -> stack_outer() on four threads at once, 50 each
 *   stack_client ctorexit LIB  a sync, then dlopen(LIB), whose constructor syncs from a new
 *                         stack and calls exit(3) with the loader's lock held (stack_ctor.c)
 *   stack_client forks N  N times: a sync from one of 16 call sites (a new stack, new addresses
 *                         for the writer to symbolize), then a fork whose child syncs and
 *                         leaves by _exit; the parent waits for every child
 *   stack_client bench N D  N syncs from D nested frames (stack_deep): prints the calling
 *                         thread's CPU ns and the wall ns a call, "bench: CPU_NS WALL_NS";
 *                         run with GPUSHIM_STACKS=1 and 0, the difference is a capture's cost
 *   stack_client launchbench N D  the same for N launches of one kernel (sampled: one in
 *                         GPUSHIM_STACK_SAMPLE has its stack captured)
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXPORTED __attribute__((noinline, visibility("default")))

void stack_inner(void) EXPORTED;
void stack_outer(void) EXPORTED;
void stack_alloc(void) EXPORTED;
void stack_launcher(int n) EXPORTED;
int stack_deep(int depth, int n) EXPORTED;
int stack_deep_launch(int depth, int n) EXPORTED;
void *stack_thread(void *arg) EXPORTED;

static CUfunction vec_add;
static _Atomic int sink;	/* threads meet here: atomic, for ThreadSanitizer */

void stack_inner(void)
{
	CUresult r = cuStreamSynchronize(NULL);

	sink += (int)r;			/* no tail call: this frame stays on the stack */
}

void stack_outer(void)
{
	stack_inner();
	sink++;
}

void stack_alloc(void)
{
	CUdeviceptr p = 0;

	if (cuMemAlloc_v2(&p, 4096) == CUDA_SUCCESS)
		cuMemFree_v2(p);
	sink++;
}

void stack_launcher(int n)
{
	static float a[256], b[256], c[256];
	float *pa = a, *pb = b, *pc = c;
	int count = 256, i;
	void *args[] = { &pc, &pa, &pb, &count };

	for (i = 0; i < n; i++)
		sink += (int)cuLaunchKernel(vec_add, 1, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
}

int stack_deep(int depth, int n)
{
	int i, r = 0;

	if (depth > 1) {
		r = stack_deep(depth - 1, n);
		__asm__ volatile("" ::: "memory");	/* a real frame per level: no loop made of it */
		return r;
	}
	for (i = 0; i < n; i++)
		r += (int)cuStreamSynchronize(NULL);
	return r;
}

int stack_deep_launch(int depth, int n)
{
	int r;

	if (depth > 1) {
		r = stack_deep_launch(depth - 1, n);
		__asm__ volatile("" ::: "memory");
		return r;
	}
	stack_launcher(n);
	return 0;
}

/* Sixteen call sites of cuStreamSynchronize, each a stack of its own. */
#define SITE(n)                                                                                    \
	void stack_site##n(void) EXPORTED;                                                         \
	void stack_site##n(void)                                                                   \
	{                                                                                          \
		sink += (int)cuStreamSynchronize(NULL) + n;                                        \
	}
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
SITE(8) SITE(9) SITE(10) SITE(11) SITE(12) SITE(13) SITE(14) SITE(15)

static void (*const sites[16])(void) = {
	stack_site0, stack_site1, stack_site2, stack_site3, stack_site4, stack_site5,
	stack_site6, stack_site7, stack_site8, stack_site9, stack_site10, stack_site11,
	stack_site12, stack_site13, stack_site14, stack_site15,
};

static int run_forks(int n)
{
	struct timespec gap = { 0, 3000000 };
	int i, failed = 0;

	for (i = 0; i < n; i++) {
		sites[i % 16]();
		nanosleep(&gap, NULL);	/* the writer meanwhile describes the new addresses */
		if (fork() == 0) {
			stack_outer();
			_exit(0);
		}
	}
	for (i = 0; i < n; i++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	printf("forks: %d children, %d failed\n", n, failed);
	return failed != 0;
}

void *stack_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 50; i++)
		stack_outer();
	return NULL;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* @n calls of @fn from @depth frames, timed after 1000 to warm up: CPU and wall ns a call. */
static void bench(int (*fn)(int, int), int n, int depth)
{
	uint64_t c0, w0;

	fn(depth, 1000);	/* the stack interned, its rules and names cached */
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	w0 = now_ns(CLOCK_MONOTONIC);
	fn(depth, n);
	printf("bench: %.1f %.1f\n", (double)(now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / n,
	       (double)(now_ns(CLOCK_MONOTONIC) - w0) / n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sync";
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	int i;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, "image") ||
	    cuModuleGetFunction(&vec_add, mod, "vec_add")) {
		fprintf(stderr, "stack_client: the driver did not start\n");
		return 1;
	}
	if (!strcmp(mode, "sync")) {
		for (i = 0; i < argc + 1; i++)	/* twice, from one place: one stack */
			stack_outer();
		stack_alloc();
	} else if (!strcmp(mode, "launch") && argc > 2) {
		stack_launcher(atoi(argv[2]));
		stack_outer();
	} else if (!strcmp(mode, "sites") && argc > 2) {
		int n = atoi(argv[2]);

		for (i = 0; i < n; i++) {	/* a launch, then a sync from one of 16 sites */
			stack_launcher(1);
			sites[i % 16]();
		}
	} else if (!strcmp(mode, "threads")) {
		pthread_t t[4];

		for (i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, stack_thread, NULL);
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "ctorexit") && argc > 2) {
		stack_outer();
		fflush(stdout);
		dlopen(argv[2], RTLD_NOW);	/* its constructor ends the process */
		fprintf(stderr, "stack_client: %s did not end the process\n", argv[2]);
		return 1;
	} else if (!strcmp(mode, "forks") && argc > 2) {
		if (run_forks(atoi(argv[2])))
			return 1;
	} else if (!strcmp(mode, "bench") && argc > 3) {
		bench(stack_deep, atoi(argv[2]), atoi(argv[3]));
	} else if (!strcmp(mode, "launchbench") && argc > 3) {
		bench(stack_deep_launch, atoi(argv[2]), atoi(argv[3]));
	} else {
		fprintf(stderr, "usage: stack_client sync | launch N | sites N | threads | "
				"bench N DEPTH | launchbench N DEPTH\n");
		return 2;
	}
	printf("%s: done\n", mode);
	return 0;
}
