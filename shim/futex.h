/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the two futex operations the shim's own threads wait and wake with (writer.c,
 * pm.c). Include after _GNU_SOURCE. Context: any thread; async-signal-safe.
 */
#ifndef GPUSHIM_FUTEX_H
#define GPUSHIM_FUTEX_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleep while *@word == @val, at most @ms (a wake, a change or a signal ends it sooner). */
static inline void futex_wait_ms(_Atomic int *word, int val, uint32_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static inline void futex_wake_all(_Atomic int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

#endif /* GPUSHIM_FUTEX_H */
