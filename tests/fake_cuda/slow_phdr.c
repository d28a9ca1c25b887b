// SPDX-License-Identifier: MIT
/*
 * slow_phdr.c - preloaded after the shim by tests/e2e/shim_fork.sh: dl_iterate_phdr as glibc's,
 * but 2 ms slower in each object's callback on the shim's threads (named gpushim-*), so the
 * shim sits inside it (holding glibc's dl_iterate_phdr lock) while it symbolizes addresses. A
 * program that forks meanwhile must still get a trace in every child: the shim makes fork wait
 * for its loader calls, since a child inherits that lock held by a thread it does not have.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

typedef int (*phdr_cb)(struct dl_phdr_info *, size_t, void *);

struct slow {
	phdr_cb cb;
	void *arg;
};

static int slow_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct slow *s = arg;
	struct timespec ts = { 0, 2000000 };

	nanosleep(&ts, NULL);
	return s->cb(info, size, s->arg);
}

__attribute__((visibility("default"))) int dl_iterate_phdr(phdr_cb cb, void *arg)
{
	static int (*real)(phdr_cb, void *);
	struct slow s = { cb, arg };
	char name[16] = "";

	if (!real)
		real = (int (*)(phdr_cb, void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
	pthread_getname_np(pthread_self(), name, sizeof(name));
	if (strncmp(name, "gpushim-", 8))
		return real(cb, arg);
	return real(slow_cb, &s);
}
