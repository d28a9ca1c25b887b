// SPDX-License-Identifier: MIT
/*
 * clock.c - the hooks' clock: CLOCK_MONOTONIC nanoseconds read from the CPU's time-stamp counter.
 *
 * Where the kernel keeps its own time by an invariant TSC (clocksource "tsc"), clock_gettime is
 * the TSC scaled by a line the kernel keeps; the vDSO's read costs twice the raw counter's on the
 * machines we measured (BENCHMARKS.md), and every hook reads the clock twice. Here the writer
 * keeps a line of its own: at each of its wakes (at least every 25 ms) clock_calibrate() pairs a
 * TSC read with clock_gettime, takes the rate over the last one to two seconds (so it follows
 * NTP's frequency corrections) and slews away any offset from CLOCK_MONOTONIC over CLOCK_SLEW_NS
 * rather than stepping it, so successive reads do not go back (but at a step, after a stale
 * spell, and by a few ns when a refit is held up past CLOCK_SWITCH_NS). Readers (clock_now_ns in
 * shim.h) take one of two lines under its sequence count, the writer rewriting the other; a line
 * older than CLOCK_STALE_NS (a writer blocked in write, parked for an exec, or not started) is
 * not used: those reads are clock_gettime's, as are all once the kernel leaves the TSC. CUPTI's
 * timestamp callback reads the same clock, so the hooks' calls and CUPTI's API records share one
 * timeline, within tens of ns of CLOCK_MONOTONIC (PM samples and the header use it directly).
 *
 * GPUSHIM_TSC=0, another clock source, a TSC that is not invariant, or a non-x86 CPU: the line is
 * never published and every read is clock_gettime's.
 * Context: clock_start and clock_calibrate on the writer thread only; clock_now_ns anywhere,
 * async-signal-safe.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define CLOCK_STALE_NS 250000000u	/* a line this old is not read */
#define CLOCK_SLEW_NS 100000000u	/* an offset is taken off over this long */
#define CLOCK_STEP_NS 1000000u		/* larger offsets are stepped (after a stale spell) */
#define CLOCK_SWITCH_NS 2000000u	/* a flatter line meets the old one this far ahead */
#define RATE_FIRST_NS 20000000u		/* the first rate: two pairs this far apart */
#define RATE_BASE_NS 1000000000u	/* then over one to two seconds */
#define PAIR_MAX_NS 20000u		/* a pair whose reads took longer was interrupted */
#define PAIR_WIDER 4			/* ... or one this many times the narrowest */
#define PAIR_TRIES 5

#define SOURCE_CHECK_NS 1000000000u	/* the kernel's clock source read again this often */

struct shim_clock shim_clock = { .active = 2 };
const char *clock_source_file = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

struct pair {
	uint64_t tsc, ns;
};

static struct {
	int usable;
	struct pair ref, mid;		/* the rate's older end; the next one */
	uint64_t rate;			/* ns a tick << 32 from ref to the latest pair; 0 none yet */
	uint64_t narrowest;		/* ticks between a pair's TSC reads, the fewest seen */
	uint64_t source_checked;	/* CLOCK_MONOTONIC of the last look at the clock source */
} cal;

#if defined(__x86_64__)
static int tsc_is_invariant(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1;
}

static int kernel_clock_is_tsc(void)
{
	char buf[32];
	ssize_t n;
	int fd = open(clock_source_file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return !strcmp(buf, "tsc\n") || !strcmp(buf, "tsc");
}
#endif

const char *clock_start(void)
{
	if (cal.usable)
		return NULL;
	if (!shim.cfg.tsc)
		return "GPUSHIM_TSC=0";
#if defined(__x86_64__)
	if (!tsc_is_invariant())
		return "the CPU's TSC is not invariant";
	if (!kernel_clock_is_tsc())
		return "the kernel's clock source is not the TSC";
	cal.usable = 1;
	return NULL;
#else
	return "not an x86-64 CPU";
#endif
}

#if defined(__x86_64__)
/* A TSC read paired with CLOCK_MONOTONIC: the quickest of a few tries. -1 when all were slow. */
static int take_pair(struct pair *p)
{
	uint64_t best = UINT64_MAX, limit;
	int i;

	for (i = 0; i < PAIR_TRIES; i++) {
		uint64_t t1 = __builtin_ia32_rdtsc();
		uint64_t ns = clock_mono_ns();
		uint64_t t2 = __builtin_ia32_rdtsc();

		if (t2 >= t1 && t2 - t1 < best) {
			best = t2 - t1;
			*p = (struct pair){ t1 + (t2 - t1) / 2, ns };
		}
	}
	/*
	 * The midpoint is right within half the pair's width: a pair much wider than the narrowest
	 * yet was interrupted. Before a rate is known, ticks are taken for a generous 8 a ns.
	 */
	if (best < cal.narrowest || !cal.narrowest)
		cal.narrowest = best;
	limit = cal.rate ? ((uint64_t)PAIR_MAX_NS << 32) / cal.rate : (uint64_t)PAIR_MAX_NS * 8;
	if (limit > PAIR_WIDER * cal.narrowest)
		limit = PAIR_WIDER * cal.narrowest;
	return best <= limit ? 0 : -1;
}

/* Write the line not in use, then make it the one read. */
static void publish(uint64_t tsc0, uint64_t ns0, uint64_t mult)
{
	uint32_t i = atomic_load_explicit(&shim_clock.active, memory_order_relaxed) == 0;
	struct shim_clock_line *l = &shim_clock.line[i];
	uint32_t seq = atomic_load_explicit(&l->seq, memory_order_relaxed) | 1;
	uint64_t stale = ((unsigned __int128)CLOCK_STALE_NS << 32) / mult;
	uint64_t limit = UINT64_MAX / mult;	/* d * mult must not wrap */

	atomic_store_explicit(&l->seq, seq, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&l->tsc0, tsc0, memory_order_relaxed);
	atomic_store_explicit(&l->ns0, ns0, memory_order_relaxed);
	atomic_store_explicit(&l->mult, mult, memory_order_relaxed);
	atomic_store_explicit(&l->limit, stale < limit ? stale : limit, memory_order_relaxed);
	atomic_store_explicit(&l->seq, seq + 1, memory_order_release);
	atomic_store_explicit(&shim_clock.active, i, memory_order_release);
}

/* The line in use: its value at @tsc (*mult: its slope); 0 when there is none or it is stale. */
static uint64_t line_at(uint64_t tsc, uint64_t *mult)
{
	uint32_t i = atomic_load_explicit(&shim_clock.active, memory_order_relaxed);
	const struct shim_clock_line *l;
	uint64_t d;

	if (i >= 2)
		return 0;
	l = &shim_clock.line[i];
	*mult = atomic_load_explicit(&l->mult, memory_order_relaxed);
	d = tsc - atomic_load_explicit(&l->tsc0, memory_order_relaxed);
	if (d >= atomic_load_explicit(&l->limit, memory_order_relaxed))
		return 0;
	return atomic_load_explicit(&l->ns0, memory_order_relaxed) +
	       (uint64_t)(((unsigned __int128)d * *mult) >> 32);
}
#endif

/*
 * A read that found the line stale or rewritten under it (its reader was held up while the writer
 * refitted twice): the line in use again, then clock_gettime.
 */
uint64_t clock_now_slow_ns(void)
{
	uint64_t ns;
	int tries, r;

	for (tries = 0; tries < 2; tries++) {
		r = clock_line_read(&ns);
		if (r > 0)
			return ns;
		if (!r)
			break;
	}
	return clock_mono_ns();
}

const char *clock_calibrate(void)
{
#if defined(__x86_64__)
	struct pair p;
	uint64_t cur, slew_ticks, mult, old_mult, now, meet, margin;
	int64_t off;

	if (!cal.usable || take_pair(&p) < 0)
		return NULL;
	/* A kernel that found its TSC unstable moves to another clock: so do the hooks. */
	if (p.ns - cal.source_checked >= SOURCE_CHECK_NS) {
		cal.source_checked = p.ns;
		if (!kernel_clock_is_tsc()) {
			cal.usable = 0;
			atomic_store_explicit(&shim_clock.active, 2, memory_order_release);
			return "the kernel's clock source is no longer the TSC";
		}
	}
	if (!cal.ref.tsc || p.tsc <= cal.ref.tsc || p.ns <= cal.ref.ns) {
		cal.ref = p;		/* the first pair, or a TSC that went back: start again */
		cal.mid.tsc = 0;
		cal.rate = 0;
		return NULL;
	}
	if (p.ns - cal.ref.ns < RATE_FIRST_NS)
		return NULL;
	/* The rate's base: between one and two seconds once the run is that long. */
	if (!cal.mid.tsc && p.ns - cal.ref.ns >= RATE_BASE_NS) {
		cal.mid = p;
	} else if (cal.mid.tsc && p.ns - cal.mid.ns >= RATE_BASE_NS) {
		cal.ref = cal.mid;
		cal.mid = p;
	}
	cal.rate = (uint64_t)(((unsigned __int128)(p.ns - cal.ref.ns) << 32) /
			      (p.tsc - cal.ref.tsc));
	if (!cal.rate)
		return NULL;
	margin = ((uint64_t)CLOCK_SWITCH_NS << 32) / cal.rate;
	now = __builtin_ia32_rdtsc();
	cur = line_at(p.tsc, &old_mult);
	off = (int64_t)(cur - p.ns);
	if (!cur || !line_at(now + margin, &old_mult) || off > (int64_t)CLOCK_STEP_NS ||
	    off < -(int64_t)CLOCK_STEP_NS) {
		publish(p.tsc, p.ns, cal.rate);
		return NULL;
	}
	/* A slope that takes @off off over the slew. */
	slew_ticks = ((uint64_t)CLOCK_SLEW_NS << 32) / cal.rate;
	mult = cal.rate - (uint64_t)((__int128)off * ((__int128)1 << 32) / (__int128)slew_ticks);
	if (mult < cal.rate / 2 || mult > cal.rate + cal.rate / 2)
		mult = cal.rate;	/* cannot happen within CLOCK_STEP_NS; never let it */
	/*
	 * The new line meets the old one where no read of the old can follow a read of the new:
	 * now when it is steeper; when it is flatter, CLOCK_SWITCH_NS ahead (a reader may still be
	 * on the old line while this is published; it is at most that much ahead meanwhile).
	 */
	meet = mult >= old_mult ? now : now + margin;
	publish(now, line_at(meet, &old_mult) -
			     (uint64_t)(((unsigned __int128)(meet - now) * mult) >> 32),
		mult);
#endif
	return NULL;
}

double clock_tsc_ghz(void)
{
	if (atomic_load_explicit(&shim_clock.active, memory_order_relaxed) >= 2 || !cal.rate)
		return 0;
	return 4294967296.0 / (double)cal.rate;
}
