// SPDX-License-Identifier: MIT
/*
 * test_welch.c - the Student-t quantile against printed table values and the closed forms at
 * df 1 and 2, and Welch's interval on synthetic samples: equal distributions give an interval
 * holding 0, a 10 % shift with a small spread one that excludes it, and the degrees of
 * freedom and bounds match a hand computation.
 */
#include <math.h>
#include <stdlib.h>

#include "analysis/welch.h"
#include "check.h"

/* |got - want| <= tol * |want| (tol absolute when want is 0), printing both on failure. */
#define CHECK_NEAR(got, want, tol)                                                                 \
	do {                                                                                       \
		double g_ = (got), w_ = (want), e_ = (tol) * (w_ != 0 ? fabs(w_) : 1);             \
		if (!(fabs(g_ - w_) <= e_)) {                                                      \
			fprintf(stderr, "%s:%d: %s: %s = %.12g, want %.12g (+- %.3g)\n", __FILE__, \
				__LINE__, check_test, #got, g_, w_, e_);                           \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

/* Printed tables: 3 decimals, then more digits. */
static void test_t_table(void)
{
	static const struct {
		double p, df, table, digits;
	} v[] = {
		{ 0.975, 1, 12.706, 12.7062047362 },	{ 0.975, 2, 4.303, 4.30265272975 },
		{ 0.975, 5, 2.571, 2.57058183661 },	{ 0.975, 10, 2.228, 2.22813885196 },
		{ 0.975, 30, 2.042, 2.04227245630 },	{ 0.975, 100, 1.984, 1.98397151852 },
		{ 0.975, INFINITY, 1.960, 1.95996398454 }, { 0.95, 1, 6.314, 6.31375151468 },
		{ 0.95, 20, 1.725, 1.72471824292 },	{ 0.995, 10, 3.169, 3.16927267261 },
		{ 0.9995, 3, 12.924, 12.9239786 },
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		double q = welch_t_quantile(v[i].p, v[i].df);

		CHECK_NEAR(q, v[i].table, 0.0005 / v[i].table);
		CHECK_NEAR(q, v[i].digits, 1e-8);
	}
	/* A very large df is the normal's. */
	CHECK_NEAR(welch_t_quantile(0.975, 1e7), 1.95996398454, 1e-6);
}

/* df 1 (Cauchy): tan(pi (p - 1/2)); df 2: (2p - 1) / sqrt(2 p (1 - p)). */
static void test_t_closed_forms(void)
{
	static const double ps[] = { 0.55, 0.6, 0.75, 0.9, 0.975, 0.99, 0.999 };
	size_t i;

	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double p = ps[i];

		CHECK_NEAR(welch_t_quantile(p, 1), tan(M_PI * (p - 0.5)), 1e-9);
		CHECK_NEAR(welch_t_quantile(p, 2), (2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-9);
		CHECK_NEAR(welch_t_quantile(1 - p, 2), -(2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-9);
	}
	CHECK_NEAR(welch_t_quantile(0.5, 3), 0, 1e-12);
}

/* Fractional df (Welch's): between its whole neighbours, and the cdf inverts the quantile. */
static void test_t_fractional(void)
{
	double q = welch_t_quantile(0.975, 7.4);

	CHECK(q < welch_t_quantile(0.975, 7) && q > welch_t_quantile(0.975, 8));
	CHECK_NEAR(welch_t_cdf(q, 7.4), 0.975, 1e-10);
	CHECK_NEAR(welch_t_cdf(welch_t_quantile(0.9, 1.3), 1.3), 0.9, 1e-10);
	CHECK_NEAR(welch_t_cdf(-1, 4), 1 - welch_t_cdf(1, 4), 1e-12);
	CHECK(isnan(welch_t_quantile(1, 3)));
	CHECK(isnan(welch_t_quantile(0.975, 0)));
}

/*
 * A small hand example: a = {10, 12, 14} (mean 12, var 4), b = {15, 18, 21, 18} (mean 18,
 * var 6). sa = 4/3, sb = 1.5, se^2 = 17/6; df = (17/6)^2 / ((4/3)^2 / 2 + 1.5^2 / 3) =
 * 8.02778 / 1.63889 = 4.89831; the change +50 %.
 */
static void test_interval_hand(void)
{
	static const uint64_t a[] = { 10, 12, 14 }, b[] = { 15, 18, 21, 18 };
	struct welch w;
	double half;

	CHECK_EQ(welch_interval(a, 3, b, 4, 0.95, &w), 0);
	CHECK_NEAR(w.mean_a, 12, 1e-12);
	CHECK_NEAR(w.var_b, 6, 1e-12);
	CHECK_NEAR(w.df, (17.0 / 6) * (17.0 / 6) / (16.0 / 18 + 2.25 / 3), 1e-12);
	CHECK_NEAR(w.df, 4.89831, 1e-5);
	CHECK_NEAR(w.pct, 50, 1e-12);
	half = welch_t_quantile(0.975, w.df) * sqrt(17.0 / 6) / 12 * 100;
	CHECK_NEAR(w.lo_pct, 50 - half, 1e-9);
	CHECK_NEAR(w.hi_pct, 50 + half, 1e-9);
	CHECK(w.lo_pct > 0);
	/* Too few values. */
	CHECK_EQ(welch_interval(a, 1, b, 4, 0.95, &w), -1);
	CHECK_EQ(welch_interval(a, 3, b, 1, 0.95, &w), -1);
}

/*
 * Step-like samples: @n values uniform in mean_ns +- spread_ns, from a xorshift generator
 * seeded with @seed (the same on every libc).
 */
static uint64_t *steps(size_t n, uint64_t mean_ns, uint64_t spread_ns, uint64_t seed)
{
	uint64_t *v = malloc(n * sizeof(*v)), x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = mean_ns - spread_ns + x % (2 * spread_ns + 1);
	}
	return v;
}

static void test_interval_equal(void)
{
	uint64_t *a = steps(200, 1000000, 50000, 1), *b = steps(300, 1000000, 50000, 2);
	struct welch w;

	CHECK_EQ(welch_interval(a, 200, b, 300, 0.95, &w), 0);
	CHECK(w.lo_pct < 0 && w.hi_pct > 0);
	CHECK(fabs(w.pct) < 1);
	/* The same sample on both sides: no change, an interval around 0 of its own spread. */
	CHECK_EQ(welch_interval(a, 200, a, 200, 0.95, &w), 0);
	CHECK_NEAR(w.pct, 0, 1e-12);
	CHECK_NEAR(w.lo_pct, -w.hi_pct, 1e-12);
	CHECK(w.hi_pct > 0 && w.hi_pct < 2);
	free(a);
	free(b);
}

static void test_interval_shift(void)
{
	uint64_t *a = steps(20, 1000000, 20000, 3), *b = steps(30, 1100000, 22000, 4);
	struct welch w;

	CHECK_EQ(welch_interval(a, 20, b, 30, 0.95, &w), 0);
	CHECK(w.lo_pct > 5 && w.hi_pct < 15);
	CHECK(w.pct > 8 && w.pct < 12);
	/* The other way: faster, the interval below 0. */
	CHECK_EQ(welch_interval(b, 30, a, 20, 0.95, &w), 0);
	CHECK(w.hi_pct < 0);
	free(a);
	free(b);
}

/* No spread on either side: the difference is exact, the interval a point. */
static void test_interval_no_spread(void)
{
	static const uint64_t a[] = { 100, 100, 100 }, b[] = { 110, 110 };
	struct welch w;

	CHECK_EQ(welch_interval(a, 3, b, 2, 0.95, &w), 0);
	CHECK(isinf(w.df));
	CHECK_NEAR(w.lo_pct, 10, 1e-12);
	CHECK_NEAR(w.hi_pct, 10, 1e-12);
}

int main(void)
{
	RUN(test_t_table);
	RUN(test_t_closed_forms);
	RUN(test_t_fractional);
	RUN(test_interval_hand);
	RUN(test_interval_equal);
	RUN(test_interval_shift);
	RUN(test_interval_no_spread);
	return TEST_RESULT();
}
