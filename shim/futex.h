/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the futex operations the shim's own threads wait and wake with (writer.c, pm.c).
 * Include after shim.h (_GNU_SOURCE, clock_now_ns). Context: any thread; async-signal-safe.
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

/*
 * The body of a bounded wait, `while (!done && futex_wait_until(word, val, deadline));`: sleeps
 * while *@word == @val, never past @deadline (clock_now_ns). Returns 0 once the deadline has
 * passed, 1 after a sleep (the caller checks its condition again).
 */
static inline int futex_wait_until(_Atomic int *word, int val, uint64_t deadline)
{
	uint64_t now = clock_now_ns();

	if (now >= deadline)
		return 0;
	futex_wait_ms(word, val, (uint32_t)((deadline - now) / 1000000u) + 1);
	return 1;
}

static inline void futex_wake_all(_Atomic int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

#endif /* GPUSHIM_FUTEX_H */
