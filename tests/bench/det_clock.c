// SPDX-License-Identifier: MIT
/*
 * det_clock.c - preloaded before the shim by scripts/bench.sh: the main thread's clock_gettime
 * returns a made-up time that advances 900-1,099 ns a read (a fixed pseudo-random sequence),
 * so every run hands the shim the same timestamps and zstd the same data. The writer's
 * instruction count, which follows what zstd is given, then repeats from run to run and two
 * builds compare on equal input. Other threads read the real clock.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_gettime(clockid_t id, struct timespec *ts);

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static __thread uint64_t now = 1000000000u, lcg = 12345;

	if (syscall(SYS_gettid) != getpid())
		return (int)syscall(SYS_clock_gettime, id, ts);
	lcg = lcg * 6364136223846793005u + 1442695040888963407u;
	now += 900 + (lcg >> 33) % 200;
	ts->tv_sec = (time_t)(now / 1000000000u);
	ts->tv_nsec = (long)(now % 1000000000u);
	return 0;
}
