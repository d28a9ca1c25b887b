/* SPDX-License-Identifier: MIT */
/*
 * util.h - analyzer-only helpers: allocation that dies on exhaustion (OOM is fatal in the
 * analyzer, never in the shim), a growable string buffer, the die()/warn() reporters used by
 * main.c and cmd_*.c, and interval overlap. Never linked into the shim.
 */
#ifndef GPUSHIM_UTIL_H
#define GPUSHIM_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* qsort that accepts an empty (possibly NULL) array, which qsort itself does not. */
void xqsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
char *xstrndup(const char *s, size_t n);

/*
 * Grow *p (an array of *cap elements of @size bytes) to hold at least @need elements. XGROW
 * calls it only when the array is full: appends cost a comparison.
 */
void xgrow(void **p, size_t *cap, size_t need, size_t size);
#define XGROW(arr, cap, need)                                                                      \
	do {                                                                                       \
		if ((size_t)(need) > (cap))                                                        \
			xgrow((void **)&(arr), &(cap), (need), sizeof(*(arr)));                    \
	} while (0)

/*
 * xsort_by - sort the large arrays of a trace (calls, GPU operations, join tables) into the
 * order of @cmp in O(n): by @key, which must be @cmp's first criterion (ascending), merging
 * the ascending runs of a nearly sorted array or else by radix; by @cmp within runs of equal
 * keys; then each element moved once, in place. Stable: elements @cmp finds equal keep
 * their order. Uses 4 bytes an element beside the array when merging (plus the elements'
 * size for elements of 16 bytes or less), 36 for radix.
 */
void xsort_by(void *base, size_t n, size_t size, uint64_t (*key)(const void *),
	      int (*cmp)(const void *, const void *));

/*
 * xsort_by_moved - xsort_by, and where each element went: @moved_to[i] (n entries) is the new
 * position of the element that was at position i. Returns 0, or -1 for more than UINT32_MAX
 * elements (the array sorted, @moved_to untouched).
 */
int xsort_by_moved(void *base, size_t n, size_t size, uint64_t (*key)(const void *),
		   int (*cmp)(const void *, const void *), uint32_t *moved_to);

/*
 * xmove_u32 - put value i of @v (@n of them) at position @to[i], as xsort_by_moved moved
 * another array: in place along the cycles for fewer than 2^31 values (@to left as it was),
 * through a copy beyond.
 */
void xmove_u32(uint32_t *v, size_t n, uint32_t *to);

/* xsort_u64 - sort values ascending (radix; 8 bytes a value beside the array). */
void xsort_u64(uint64_t *v, size_t n);

/* xmedian_u64 - the lower median of the @n values (sorted in place); 0 for none. */
uint64_t xmedian_u64(uint64_t *v, size_t n);

/* nearest_rank - the nearest rank (from 1) of percentile @frac (0.5, 0.99) among @n values. */
uint64_t nearest_rank(uint64_t n, double frac);

/*
 * gallop_search - the first index in [0, n) where @after(i, ctx) holds, or n; @after must be
 * false up to some index and true from there on (a sorted array). Starts at @hint, gallops
 * forwards or back, then bisects: O(1) when successive searches move little (records in time
 * order), O(log n) always.
 */
static inline size_t gallop_search(size_t n, size_t hint, int (*after)(size_t, const void *),
				   const void *ctx)
{
	size_t lo, hi, step;

	if (!n)
		return 0;
	lo = hint < n ? hint : n - 1;
	if (!after(lo, ctx)) {
		for (step = 1, hi = lo + 1; hi < n && !after(hi, ctx); step *= 2) {
			lo = hi + 1;
			hi = step < n - hi ? hi + step : n;
		}
	} else {
		for (step = 1, hi = lo; lo > 0 && after(lo - 1, ctx); step *= 2) {
			hi = lo - 1;
			lo = step < hi ? hi - step : 0;
		}
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (after(mid, ctx))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* A non-negative double as uint64_t, saturating (untrusted traces make any figure possible). */
static inline uint64_t sat_u64(double x)
{
	if (!(x > 0))
		return 0;	/* also NaN */
	return x >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)x;
}

/* Length of the overlap of [a0, a1) and [b0, b1); 0 when they do not meet. */
static inline uint64_t overlap_ns(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* die - "gpushim: " + message on stderr, exit(1). warn - the same without exiting. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct strbuf {
	char *buf;
	size_t len, cap;
};

void sb_init(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap);

#endif /* GPUSHIM_UTIL_H */
