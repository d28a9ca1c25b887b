// SPDX-License-Identifier: MIT
/*
 * bench_clock.c - what one clock read costs on this machine: clock_gettime(CLOCK_MONOTONIC)
 * (the shim reads it twice per intercepted call), CLOCK_MONOTONIC_COARSE, and the TSC, each
 * averaged over 2,000,000 back-to-back reads, plus the kernel's clock source. A clock source
 * the vDSO cannot read (no TSC in a VM) turns every read into a system call.
 * Prints "clocksource=NAME invariant_tsc=0|1 monotonic_ns=X coarse_ns=Y rdtsc_ns=Z" (the shim
 * reads the TSC itself only where the clock source is the TSC and CPUID says it is invariant).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cpuid.h>
#include <x86intrin.h>

static uint64_t ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	const int n = 2000000;
	char src[64] = "?";
	volatile uint64_t sink = 0;
	uint64_t t0, t1, t2, t3;
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	unsigned int a, b, c, d = 0;
	int i, invariant = 0;

	if (f) {
		if (fgets(src, sizeof(src), f))
			src[strcspn(src, "\n")] = 0;
		fclose(f);
	}
	if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u &&
	    __get_cpuid(0x80000007u, &a, &b, &c, &d))
		invariant = (d >> 8) & 1;
	t0 = ns(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		sink += ns(CLOCK_MONOTONIC);
	t1 = ns(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		sink += ns(CLOCK_MONOTONIC_COARSE);
	t2 = ns(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++)
		sink += __rdtsc();
	t3 = ns(CLOCK_MONOTONIC);
	printf("clocksource=%s invariant_tsc=%d monotonic_ns=%.1f coarse_ns=%.1f rdtsc_ns=%.1f\n",
	       src, invariant, (double)(t1 - t0) / n, (double)(t2 - t1) / n, (double)(t3 - t2) / n);
	return sink == 42;
}
