// SPDX-License-Identifier: MIT
/*
 * welch.c - Student's t distribution and Welch's interval (welch.h). The t tail comes from the
 * regularized incomplete beta function, P(|T| > t) = I_x(df/2, 1/2) with x = df/(df + t^2),
 * evaluated by its continued fraction; the quantile is found by bisection on that tail, which
 * holds for any df > 0 (Welch's are fractional), where closed approximations (Hill,
 * Cornish-Fisher) lose digits at df near 1.
 */
#include "welch.h"

#include <math.h>

/*
 * The continued fraction of I_x(a, b) (Numerical Recipes' betacf, modified Lentz): it
 * converges fast for x < (a + 1) / (a + b + 2), which the caller ensures by symmetry; the
 * iterations needed grow as sqrt(max(a, b)), a few thousand at df = 1e7.
 */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;
	int m;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 100000; m++) {
		double aa = m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)), del;

		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m));
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return h;
}

/* I_x(a, b), with y = 1 - x given apart so that neither loses digits near 1. */
static double beta_regularized(double a, double b, double x, double y)
{
	double front;

	if (x <= 0)
		return 0;
	if (y <= 0)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(y));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, y) / b;
}

/* P(T > t) for t >= 0. */
static double upper_tail(double t, double df)
{
	double t2 = t * t;

	if (isinf(df))
		return 0.5 * erfc(t / sqrt(2.0));
	return 0.5 * beta_regularized(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

double welch_t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	return t >= 0 ? 1 - upper_tail(t, df) : upper_tail(-t, df);
}

double welch_t_quantile(double p, double df)
{
	double tail, lo = 0, hi = 1;
	int i;

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p < 0.5)
		return -welch_t_quantile(1 - p, df);
	if (p == 0.5)
		return 0;
	tail = 1 - p;
	/* Bracket: t(0.9999, 1) is about 3183; the tail falls at least as 1/t past that. */
	while (upper_tail(hi, df) > tail) {
		lo = hi;
		hi *= 2;
		if (isinf(hi))
			return INFINITY;
	}
	for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = lo + (hi - lo) / 2;

		if (upper_tail(mid, df) > tail)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

/* Mean and unbiased variance of @n values, in two passes (no cancellation). */
static void mean_var(const uint64_t *v, size_t n, double *mean, double *var)
{
	double sum = 0, ss = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += (double)v[i];
	*mean = sum / (double)n;
	for (i = 0; i < n; i++) {
		double d = (double)v[i] - *mean;

		ss += d * d;
	}
	*var = ss / (double)(n - 1);
}

int welch_interval(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, double level,
		   struct welch *w)
{
	double sa, sb, se, diff;

	if (na < 2 || nb < 2)
		return -1;
	w->na = na;
	w->nb = nb;
	mean_var(a, na, &w->mean_a, &w->var_a);
	mean_var(b, nb, &w->mean_b, &w->var_b);
	if (w->mean_a <= 0)
		return -1;
	sa = w->var_a / (double)na;
	sb = w->var_b / (double)nb;
	se = sqrt(sa + sb);
	/* Welch-Satterthwaite; with no spread on either side the difference is exact. */
	w->df = sa + sb > 0 ? (sa + sb) * (sa + sb) /
				      (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1)) :
			      INFINITY;
	w->t = welch_t_quantile(0.5 + level / 2, w->df);
	diff = w->mean_b - w->mean_a;
	w->pct = 100 * diff / w->mean_a;
	w->lo_pct = 100 * (diff - w->t * se) / w->mean_a;
	w->hi_pct = 100 * (diff + w->t * se) / w->mean_a;
	return 0;
}
