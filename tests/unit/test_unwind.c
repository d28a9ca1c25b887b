// SPDX-License-Identifier: MIT
/*
 * test_unwind.c - the shim's cached stack walk (shim/unwind.c) against glibc's backtrace(),
 * frame for frame, from the same place: nested calls, a deep recursion, a frame with alloca
 * (its CFA from rbp), a function built without optimization, a callback
 * from inside libc (qsort), another thread, and a signal handler (where the walk may also
 * answer "cannot", never a different stack). Each shape twice: cold, then from the cache.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "unwind.h"

#define MAX 64

static struct unwind_cache_entry cache[UNWIND_CACHE_SIZE];
static __thread struct unwind_cache_entry thread_cache[UNWIND_CACHE_SIZE];
static volatile int sink;
static int nr_compared, nr_cannot;

/*
 * Both walks from one frame. backtrace()'s first address and unwind_stack()'s are return
 * addresses into this function from two different calls; every later one must be equal, to
 * the same outermost frame. Under AddressSanitizer backtrace() is its interceptor, whose own
 * frame comes first: the comparison starts where backtrace() has the walk's second address.
 * @may_fail: the walk may answer -1 (a signal frame).
 */
static __attribute__((noinline)) void compare(struct unwind_cache_entry *c, int may_fail,
					      const char *where)
{
	void *bt[MAX], *fast[MAX];
	int nb = backtrace(bt, MAX), nf = unwind_stack(c, fast, MAX), i, j;

	if (nf < 0 && may_fail) {
		nr_cannot++;
		return;
	}
	nr_compared++;
	for (j = 1; j < nb && j < 3 && (nf < 2 || bt[j] != fast[1]); j++)
		;
	if (nf < 2 || j == nb || nb - j != nf - 1) {
		fprintf(stderr, "%s: %d frames, backtrace() %d\n", where, nf, nb);
		check_failures++;
		return;
	}
	for (i = 1; i < nf; i++, j++) {
		if (fast[i] != bt[j]) {
			fprintf(stderr, "%s: frame %d: %p, backtrace() %p\n", where, i, fast[i],
				bt[j]);
			check_failures++;
			break;
		}
	}
	sink++;
}

static __attribute__((noinline)) void inner(const char *where)
{
	compare(cache, 0, where);
	sink++;
}

static __attribute__((noinline)) void outer(const char *where)
{
	inner(where);
	sink++;
}

static __attribute__((noinline)) int deep(int n)
{
	int r;

	if (!n) {
		compare(cache, 0, "deep");
		return 0;
	}
	r = deep(n - 1);
	__asm__ volatile("" ::: "memory");	/* a frame per level */
	return r + 1;
}

/* alloca moves rsp by a size known at run time: the CFA comes from rbp. */
static __attribute__((noinline)) void vla(int n)
{
	volatile char *buf = __builtin_alloca((size_t)n);

	buf[0] = 1;
	buf[n - 1] = 2;
	compare(cache, 0, "vla");
	sink += buf[0];
}

static __attribute__((noinline, optimize("O0"))) void unoptimized(void)
{
	compare(cache, 0, "O0");
}

static int cmp_int(const void *a, const void *b)
{
	static int done;

	if (!done++)
		compare(cache, 0, "qsort");
	return *(const int *)a - *(const int *)b;
}

static void *thread_main(void *arg)
{
	(void)arg;
	compare(thread_cache, 0, "thread");
	compare(thread_cache, 0, "thread, cached");
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	compare(cache, 1, "signal handler");
}

static void test_against_backtrace(void)
{
	int v[64], i, round;
	pthread_t t;

	for (round = 0; round < 2; round++) {	/* cold, then every rule from the cache */
		outer("nested");
		CHECK_EQ(deep(50), 50);
		vla(100 + round);
		unoptimized();
		for (i = 0; i < 64; i++)
			v[i] = (i * 37) % 64;
		qsort(v, 64, sizeof(v[0]), cmp_int);
		signal(SIGUSR1, on_signal);
		raise(SIGUSR1);
	}
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_join(t, NULL);
	CHECK_EQ(nr_compared, 11);	/* 2 x 4, qsort's callback once, the thread's 2 */
	fprintf(stderr, "compared %d walks, %d left to backtrace()\n", nr_compared, nr_cannot);
}

/* A bounded walk stops at @max; without a lookup function every walk is "cannot". */
static void test_bounds(void)
{
	void *fast[4];

	CHECK_EQ(unwind_stack(cache, fast, 2), 2);
	unwind_init(NULL);
	CHECK_EQ(unwind_stack(cache, fast, 4), -1);
}

int main(void)
{
	void *prime[2], *gcc;

	backtrace(prime, 2);	/* glibc loads libgcc_s */
	gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
	CHECK(gcc != NULL);
	unwind_init(gcc ? (unwind_find_fde_fn)dlsym(gcc, "_Unwind_Find_FDE") : NULL);
	RUN(test_against_backtrace);
	RUN(test_bounds);
	return TEST_RESULT();
}
