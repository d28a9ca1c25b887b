/* SPDX-License-Identifier: MIT */
/*
 * welch.h - Welch's t-test for diff's step times: the Student-t quantile (no libm beyond
 * lgamma, erfc) and the confidence interval of the change of a mean between two samples of
 * unequal size and spread. Pure: no I/O, no allocation.
 */
#ifndef GPUSHIM_WELCH_H
#define GPUSHIM_WELCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * welch_t_quantile - t such that P(T <= t) = @p for Student's t with @df degrees of freedom
 * (@df > 0, not necessarily whole; INFINITY: the normal quantile). @p in (0, 1).
 * Return: the quantile, within 1e-9 relative; NAN for @p or @df out of range.
 */
double welch_t_quantile(double p, double df);

/* welch_t_cdf - P(T <= @t) for Student's t with @df degrees of freedom (INFINITY: normal). */
double welch_t_cdf(double t, double df);

struct welch {
	size_t na, nb;			/* samples */
	double mean_a, mean_b;
	double var_a, var_b;		/* unbiased sample variances */
	double df;			/* Welch-Satterthwaite; INFINITY when both variances are 0 */
	double t;			/* the quantile the interval uses */
	double pct;			/* (mean_b - mean_a) / mean_a, in percent */
	double lo_pct, hi_pct;		/* its interval */
};

/*
 * welch_interval - the @level (e.g. 0.95) two-sided confidence interval of the change of the
 * mean from @a (the base) to @b, in percent of @a's mean: Welch's interval of the difference
 * of the means, (mean_b - mean_a) +- t * sqrt(var_a / na + var_b / nb) with t from the
 * Welch-Satterthwaite degrees of freedom, divided by mean_a (taken as exact). The interval
 * excludes 0 exactly when Welch's test rejects equal means at 1 - @level.
 * Return: 0 and *@w filled, or -1 when a side has fewer than 2 values or @a's mean is 0.
 */
int welch_interval(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, double level,
		   struct welch *w);

#endif /* GPUSHIM_WELCH_H */
