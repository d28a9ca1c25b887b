// SPDX-License-Identifier: MIT
/*
 * test_clock.c - the hooks' clock (shim/clock.c), compiled here with a stand-in for the global
 * state: with GPUSHIM_TSC=0 nothing is published; otherwise the TSC's line, refitted every few
 * ms, stays within 2 us of CLOCK_MONOTONIC and a thread's reads between refits never go back;
 * an offset is slewed away without a read going back, a large one stepped; a line left
 * unrefitted for longer than its limit is not read; readers on other threads during refits see
 * a clock that goes back at most MAX_BACK times, by under 1 us (a reader held up for two refits
 * inside one read falls back to clock_gettime; the shim clamps such a call's duration at 0; run
 * under ThreadSanitizer in CI); when the kernel's clock source leaves the TSC (a copy of the
 * sysfs file here), the line is withdrawn within the check's second and the refit says why once.
 * Where the kernel's clock is not the TSC the TSC cases say so and pass.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "shim.h"

struct shim_state shim;

#define TOLERANCE_NS 2000
#define MAX_BACK 3		/* reads going back (each by ns) a reader may see during refits */

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * The line's offset from CLOCK_MONOTONIC at one instant (a read between two clock_gettime
 * reads); 0 with *ok = 0 when the three reads were too far apart to judge.
 */
static int64_t offset_now(int *ok)
{
	uint64_t a = clock_mono_ns(), b = clock_now_ns(), c = clock_mono_ns();

	*ok = c - a < 20000;
	if (b < a)
		return (int64_t)(b - a);
	return b > c ? (int64_t)(b - c) : 0;
}

/* Refit every @every_ms for @ms, checking that reads between never go back. */
static int calibrate_for(unsigned ms, unsigned every_ms)
{
	uint64_t last = clock_now_ns(), end = clock_mono_ns() + (uint64_t)ms * 1000000u;
	int back = 0;

	while (clock_mono_ns() < end) {
		uint64_t t;
		int i;

		clock_calibrate();
		for (i = 0; i < 1000; i++) {
			t = clock_now_ns();
			back += t < last;
			last = t;
		}
		sleep_ms(every_ms);
	}
	return back;
}

static int line_published(void)
{
	return atomic_load(&shim_clock.active) < 2;
}

static void test_off(void)
{
	uint64_t a, b;

	shim.cfg.tsc = 0;
	CHECK_STR(clock_start(), "GPUSHIM_TSC=0");
	clock_calibrate();
	sleep_ms(30);
	clock_calibrate();
	CHECK(!line_published());
	a = clock_mono_ns();
	b = clock_now_ns();
	CHECK(b >= a && b - a < 1000000);
}

static char source_copy[] = "/tmp/gpushim-clocksource.XXXXXX";

/* The hooks read the kernel's clock source from a copy of the sysfs file, which tests change. */
static int copy_clock_source(void)
{
	char buf[64] = "";
	FILE *in = fopen(clock_source_file, "r"), *out;
	int fd = mkstemp(source_copy);

	if (fd < 0)
		return -1;
	out = fdopen(fd, "w");
	if (in) {
		if (!fgets(buf, sizeof(buf), in))
			buf[0] = 0;
		fclose(in);
	}
	fputs(buf, out);
	fclose(out);
	clock_source_file = source_copy;
	return 0;
}

static void set_clock_source(const char *name)
{
	FILE *f = fopen(source_copy, "w");

	fprintf(f, "%s\n", name);
	fclose(f);
}

static int tsc_usable(void)
{
	const char *why;

	shim.cfg.tsc = 1;
	why = clock_start();
	if (why)
		printf("test_clock: the TSC cases do not apply here: %s\n", why);
	return !why;
}

static void test_follows_monotonic(void)
{
	int i, ok, judged = 0, far = 0;

	CHECK_EQ(calibrate_for(300, 5), 0);
	CHECK(line_published());
	for (i = 0; i < 10000; i++) {
		int64_t off = offset_now(&ok);

		judged += ok;
		far += ok && (off > TOLERANCE_NS || off < -TOLERANCE_NS);
	}
	CHECK(judged > 1000);
	CHECK_EQ(far, 0);
}

/* Shift the published line by @by ns, as a refit that went wrong would. */
static void shift_line(int64_t by)
{
	struct shim_clock_line *l = &shim_clock.line[atomic_load(&shim_clock.active)];
	uint32_t seq = atomic_load(&l->seq);

	atomic_store(&l->seq, seq + 1);
	atomic_store(&l->ns0, atomic_load(&l->ns0) + (uint64_t)by);
	atomic_store(&l->seq, seq + 2);
}

static void test_slew_and_step(void)
{
	int ok;
	int64_t off;

	/* 50 us ahead: taken off over about the slew's length, reads never going back. */
	shift_line(50000);
	off = offset_now(&ok);
	CHECK(!ok || off > 40000);
	CHECK_EQ(calibrate_for(150, 5), 0);
	off = offset_now(&ok);
	CHECK(!ok || (off < 40000 && off > -TOLERANCE_NS));	/* on its way down */
	CHECK_EQ(calibrate_for(600, 5), 0);
	off = offset_now(&ok);
	CHECK(!ok || (off < TOLERANCE_NS && off > -TOLERANCE_NS));

	/* 5 ms behind: stepped at the next refit. */
	shift_line(-5000000);
	off = offset_now(&ok);
	CHECK(!ok || off < -4000000);
	clock_calibrate();
	off = offset_now(&ok);
	CHECK(!ok || (off < TOLERANCE_NS && off > -TOLERANCE_NS));
}

static void test_stale(void)
{
	int ok;
	int64_t off;

	/* A line one second off shows while it is fresh, and is not read once it is stale. */
	calibrate_for(50, 5);
	shift_line(1000000000);
	off = offset_now(&ok);
	CHECK(!ok || off > 999000000);
	sleep_ms(400);
	off = offset_now(&ok);
	CHECK(!ok || (off < TOLERANCE_NS && off > -TOLERANCE_NS));
	clock_calibrate();		/* stepped back to the truth */
	off = offset_now(&ok);
	CHECK(!ok || (off < TOLERANCE_NS && off > -TOLERANCE_NS));
}

static _Atomic int stop_readers;

static void *reader(void *arg)
{
	uint64_t last = clock_now_ns(), worst = 0;
	long back = 0;

	(void)arg;
	while (!atomic_load(&stop_readers)) {
		uint64_t t = clock_now_ns();

		if (t < last) {
			back++;
			worst = last - t > worst ? last - t : worst;
		}
		last = t;
	}
	if (back)
		fprintf(stderr, "reader: %ld reads went back, by up to %llu ns\n", back,
			(unsigned long long)worst);
	/* A reader held up twice inside one read falls back to clock_gettime: a few ns, rarely. */
	return (void *)(long)(back > MAX_BACK || worst > 1000);
}

static void test_concurrent(void)
{
	pthread_t th[2];
	void *back;
	int i;

	atomic_store(&stop_readers, 0);
	for (i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, reader, NULL), 0);
	calibrate_for(200, 1);
	atomic_store(&stop_readers, 1);
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], &back);
		CHECK_EQ((long)back, 0);
	}
}

static void test_source_leaves_tsc(void)
{
	uint64_t end;
	int said = 0, ok;
	int64_t off;

	calibrate_for(30, 5);
	CHECK(line_published());
	set_clock_source("hpet");
	end = clock_mono_ns() + 1200000000u;
	while (clock_mono_ns() < end && line_published()) {
		const char *why = clock_calibrate();

		if (why) {
			CHECK_STR(why, "the kernel's clock source is no longer the TSC");
			said++;
		}
		sleep_ms(20);
	}
	CHECK(!line_published());
	CHECK_EQ(said, 1);
	off = offset_now(&ok);
	CHECK(!ok || (off < TOLERANCE_NS && off > -TOLERANCE_NS));
	CHECK(clock_calibrate() == NULL);	/* and stays off */
	CHECK(!line_published());
}

int main(void)
{
	CHECK_EQ(copy_clock_source(), 0);
	RUN(test_off);
	if (tsc_usable()) {
		RUN(test_follows_monotonic);
		RUN(test_slew_and_step);
		RUN(test_stale);
		RUN(test_concurrent);
		RUN(test_source_leaves_tsc);
	}
	unlink(source_copy);
	return TEST_RESULT();
}
