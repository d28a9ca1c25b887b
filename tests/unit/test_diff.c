// SPDX-License-Identifier: MIT
/*
 * test_diff.c - diff's step time on in-memory run summaries: run_summary_add pools the steady
 * steps of each trace by the loop's rule (no warm-up step, none outside the steady state);
 * the step_time and steps_per_s rows are same for equal steps, noise for a shift inside the
 * runs' spread, worse or better for a 10 % shift with a small spread, and absent below two
 * steady steps a side, where --metric step is unavailable.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/findings.h"
#include "analysis/stats.h"
#include "check.h"
#include "util/util.h"

/* A side of @n steps of mean_ns +- spread_ns (xorshift from @seed: the same on every libc). */
static void side(struct run_summary *r, size_t n, uint64_t mean_ns, uint64_t spread_ns,
		 uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	run_summary_init(r);
	r->span_ns = 1000000000;
	r->has_gpu = 0;
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		XGROW(r->step_ns, r->steps_cap, r->nr_steps + 1);
		r->step_ns[r->nr_steps++] = mean_ns - spread_ns + x % (2 * spread_ns + 1);
	}
	r->steps_source = n ? "launches" : NULL;
}

static const struct diff_row *row(const struct diff_result *d, const char *key)
{
	size_t i;

	for (i = 0; i < d->nr_rows; i++)
		if (d->rows[i].kind == DK_RUN && !strcmp(d->rows[i].key, key))
			return &d->rows[i];
	return NULL;
}

/* One trace's stats with a loop of steps [start, end): 2 warm-up, steady state [300, 900]. */
static void add_trace(struct run_summary *r, const uint64_t (*steps)[2], size_t n)
{
	struct run_feed feed;
	struct findings fd;
	struct stats s;
	size_t i;

	memset(&s, 0, sizeof(s));
	memset(&fd, 0, sizeof(fd));
	memset(&feed, 0, sizeof(feed));
	s.loop.source = "nvtx";
	s.loop.warmup = 2;
	s.loop.found.steady_start = 300;
	s.loop.found.steady_end = 900;
	s.loop.series = xcalloc(n, sizeof(*s.loop.series));
	s.loop.nr_series = n;
	for (i = 0; i < n; i++) {
		s.loop.series[i].start = steps[i][0];
		s.loop.series[i].end = steps[i][1];
	}
	run_summary_add(r, &s, &fd, &feed);
	free(s.loop.series);
}

static void test_pooled_steady_steps(void)
{
	/* Steps 0, 1 warm-up; 2 starts before the steady state, 6 ends after it. */
	static const uint64_t a[][2] = { { 0, 100 },   { 100, 300 }, { 250, 320 }, { 320, 420 },
					 { 420, 530 }, { 530, 900 }, { 900, 950 } };
	static const uint64_t b[][2] = { { 0, 100 }, { 100, 200 }, { 300, 340 }, { 340, 900 } };
	struct run_summary r;

	run_summary_init(&r);
	add_trace(&r, a, 7);
	CHECK_EQ(r.nr_steps, 3);
	CHECK_EQ(r.step_ns[0], 100);
	CHECK_EQ(r.step_ns[1], 110);
	CHECK_EQ(r.step_ns[2], 370);
	CHECK_STR(r.steps_source, "nvtx");
	add_trace(&r, b, 4);
	CHECK_EQ(r.nr_steps, 5);
	CHECK_EQ(r.step_ns[3], 40);
	CHECK_EQ(r.step_ns[4], 560);
	CHECK(fabs(run_step_mean_ns(&r) - 1180.0 / 5) < 1e-9);
	CHECK_EQ(r.nr_traces, 2);
	run_summary_free(&r);
}

static void test_same_steps(void)
{
	struct run_summary a, b;
	struct diff_result d;
	const struct diff_row *w;
	double v;

	side(&a, 50, 1000000, 100000, 1);
	side(&b, 50, 1000000, 100000, 1);
	diff_compute(&d, &a, &b, 5);
	w = row(&d, "step_time");
	CHECK(w != NULL);
	if (w) {
		CHECK_EQ(w->status, DS_SAME);
		CHECK(w->has_ci && w->ci_lo_pct < 0 && w->ci_hi_pct > 0);
		CHECK_EQ(w->base_count, 50);
	}
	CHECK_EQ(diff_worse_by(&a, &b, DM_STEP, &v), 0);
	CHECK(v == 0);
	diff_free(&d);
	run_summary_free(&a);
	run_summary_free(&b);
}

/* Same distribution, other draws and lengths (a short run against a long one): noise. */
static void test_equal_distributions(void)
{
	struct run_summary a, b;
	struct diff_result d;
	const struct diff_row *w, *r;

	side(&a, 40, 1000000, 100000, 2);
	side(&b, 400, 1000000, 100000, 3);
	diff_compute(&d, &a, &b, 5);
	w = row(&d, "step_time");
	r = row(&d, "steps_per_s");
	CHECK(w && r);
	if (w && r) {
		CHECK_EQ(w->status, DS_NOISE);
		CHECK(w->ci_lo_pct < 0 && w->ci_hi_pct > 0);
		CHECK_EQ(r->status, DS_NOISE);
		CHECK(r->has_ci && r->ci_lo_pct < 0 && r->ci_hi_pct > 0);
		CHECK_EQ(w->new_count, 400);
	}
	diff_free(&d);
	run_summary_free(&a);
	run_summary_free(&b);
}

/* 10 % slower steps with a 2 % spread: worse, the interval around +10 %; the rate better. */
static void test_shift(void)
{
	struct run_summary a, b;
	struct diff_result d;
	const struct diff_row *w, *r;
	double v, lo, hi;

	side(&a, 30, 1000000, 20000, 4);
	side(&b, 60, 1100000, 22000, 5);
	diff_compute(&d, &a, &b, 5);
	w = row(&d, "step_time");
	r = row(&d, "steps_per_s");
	CHECK(w && r);
	if (w && r) {
		CHECK_EQ(w->status, DS_WORSE);
		CHECK(w->ci_lo_pct > 8 && w->ci_hi_pct < 12);
		CHECK_EQ(r->status, DS_WORSE);
		CHECK(r->delta < 0 && r->ci_hi_pct < 0);
		CHECK(fabs(r->new - 1e9 / w->new) < 1e-6);
	}
	CHECK_EQ(diff_worse_by(&a, &b, DM_STEP, &v), 0);
	CHECK(v > 9 && v < 11);
	CHECK_EQ(diff_step_ci(&a, &b, &lo, &hi), 0);
	CHECK(lo > 0 && lo < v && hi > v);
	diff_free(&d);
	/* The other way round: better. */
	diff_compute(&d, &b, &a, 5);
	w = row(&d, "step_time");
	CHECK(w && w->status == DS_BETTER && w->ci_hi_pct < 0);
	diff_free(&d);
	run_summary_free(&a);
	run_summary_free(&b);
}

/*
 * A 10 % shift within a wide spread and few steps: noise, though far past the fixed 5 % band
 * that span is judged by.
 */
static void test_shift_in_spread(void)
{
	struct run_summary a, b;
	struct diff_result d;
	const struct diff_row *w;

	side(&a, 5, 1000000, 500000, 6);
	side(&b, 5, 1100000, 500000, 7);
	diff_compute(&d, &a, &b, 5);
	w = row(&d, "step_time");
	CHECK(w && w->status == DS_NOISE && fabs(w->delta_pct) > 5);
	diff_free(&d);
	run_summary_free(&a);
	run_summary_free(&b);
}

/* One steady step on a side: no step rows, --metric step unavailable. */
static void test_too_few_steps(void)
{
	struct run_summary a, b;
	struct diff_result d;
	double v, lo, hi;

	side(&a, 1, 1000000, 1000, 8);
	side(&b, 50, 1000000, 1000, 9);
	CHECK(!run_has_steps(&a) && run_has_steps(&b));
	diff_compute(&d, &a, &b, 5);
	CHECK(row(&d, "step_time") == NULL);
	CHECK(row(&d, "steps_per_s") == NULL);
	CHECK(row(&d, "span") != NULL);
	CHECK_EQ(diff_worse_by(&a, &b, DM_STEP, &v), -1);
	CHECK_EQ(diff_step_ci(&a, &b, &lo, &hi), -1);
	CHECK_EQ(diff_worse_by(&a, &b, DM_SPAN, &v), 0);
	diff_free(&d);
	run_summary_free(&a);
	run_summary_free(&b);
}

int main(void)
{
	RUN(test_pooled_steady_steps);
	RUN(test_same_steps);
	RUN(test_equal_distributions);
	RUN(test_shift);
	RUN(test_shift_in_spread);
	RUN(test_too_few_steps);
	return TEST_RESULT();
}
