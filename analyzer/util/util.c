// SPDX-License-Identifier: MIT
/*
 * util.c - allocation wrappers, die()/warn(), strbuf, sorting. Analyzer only.
 */
#define _GNU_SOURCE
#include "util.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", nmemb, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

void xgrow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap;

	if (need <= c)
		return;
	if (!c)
		c = 16;
	while (c < need) {
		if (c > SIZE_MAX / 2 / size)
			die("out of memory: %zu elements of %zu bytes", need, size);
		c *= 2;
	}
	*p = xrealloc(*p, c * size);
	*cap = c;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("gpushim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("gpushim: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void sb_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	XGROW(sb->buf, sb->cap, sb->len + n + 1);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	XGROW(sb->buf, sb->cap, sb->len + (size_t)n + 1);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

void xqsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *p = base;
	size_t i;

	/* Traces arrive mostly in order (one thread's calls, a device's kernels): check first. */
	for (i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0)
			break;
	if (i < n)
		qsort(base, n, size, cmp);
}

/* ---- Radix sorting ---- */

struct sort_item {
	uint64_t key;
	uint64_t idx;			/* the element's index before sorting */
};

/*
 * Stable LSD radix sort of @n records of @stride bytes (8: bare keys, 16: sort_item) by the
 * uint64_t at their start, a byte a pass; passes where every key has the same byte are
 * skipped (timestamps of one run share their high bytes). Returns the buffer holding the
 * result: @v or @tmp.
 */
static void *radix_sort(void *v, void *tmp, size_t n, size_t stride)
{
	static size_t count[8][256];	/* the analyzer is single-threaded */
	const uint64_t first = *(const uint64_t *)v;
	char *src = v, *dst = tmp;
	size_t i, d;

	memset(count, 0, sizeof(count));
	for (i = 0; i < n; i++) {
		uint64_t k = *(const uint64_t *)(src + i * stride);

		for (d = 0; d < 8; d++)
			count[d][(k >> (8 * d)) & 255]++;
	}
	for (d = 0; d < 8; d++) {
		size_t sum = 0, b;
		char *t;

		if (count[d][(first >> (8 * d)) & 255] == n)
			continue;
		for (b = 0; b < 256; b++) {
			size_t c = count[d][b];

			count[d][b] = sum;
			sum += c;
		}
		if (stride == sizeof(uint64_t)) {
			const uint64_t *s = (const uint64_t *)src;
			uint64_t *o = (uint64_t *)dst;

			for (i = 0; i < n; i++)
				o[count[d][(s[i] >> (8 * d)) & 255]++] = s[i];
		} else {
			const struct sort_item *s = (const struct sort_item *)src;
			struct sort_item *o = (struct sort_item *)dst;

			for (i = 0; i < n; i++)
				o[count[d][(s[i].key >> (8 * d)) & 255]++] = s[i];
		}
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

uint64_t xmedian_u64(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	xsort_u64(v, n);
	return v[(n - 1) / 2];
}

uint64_t nearest_rank(uint64_t n, double frac)
{
	uint64_t idx = (uint64_t)ceil(frac * (double)n);

	return idx < 1 ? 1 : idx > n ? n : idx;
}

void xsort_u64(uint64_t *v, size_t n)
{
	uint64_t *tmp, *r;
	size_t i;

	for (i = 1; i < n; i++)
		if (v[i - 1] > v[i])
			break;
	if (i >= n)
		return;
	tmp = xmalloc(n * sizeof(*tmp));
	r = radix_sort(v, tmp, n, sizeof(*v));
	if (r != v)
		memcpy(v, r, n * sizeof(*v));
	free(tmp);
}

/* ---- Merging the ascending runs of a nearly sorted array ---- */

struct run {
	uint64_t key;			/* the key of the run's next item */
	size_t pos, end;		/* the run's next item and its end */
};

/* Does run @a's next item come before run @b's? Equal keys: the earlier position first. */
static inline int run_before(const struct run *a, const struct run *b)
{
	return a->key < b->key || (a->key == b->key && a->pos < b->pos);
}

static void run_sift(struct run *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct run t;

		if (c >= n)
			return;
		if (c + 1 < n && run_before(&h[c + 1], &h[c]))
			c++;
		if (!run_before(&h[c], &h[i]))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

/* Where a merge reads the keys: the elements themselves, through key(). */
struct key_src {
	const char *base;
	size_t size;
	uint64_t (*key)(const void *);
};

static inline uint64_t src_key(const struct key_src *s, size_t i)
{
	return s->key(s->base + i * s->size);
}

/*
 * Elements whose keys ascend in @nr_runs runs: merge the runs through a heap of runs into @out
 * as positions, equal keys in the order of their positions (stable). The first run hands out
 * elements while they come before the best other run's next one, one comparison each, so
 * arrays made of long interleaved stretches (a trace's threads, CUPTI's buffers) sort in about
 * one pass.
 */
static void merge_runs(const struct key_src *s, size_t n, size_t nr_runs, uint32_t *out)
{
	struct run *h = xmalloc(nr_runs * sizeof(*h));
	size_t i, nr = 0, start = 0;
	uint64_t k, last = 0;

	for (i = 0; i <= n; i++) {
		k = i < n ? src_key(s, i) : 0;
		if (i == n || (i > 0 && k < last)) {
			h[nr] = (struct run){ src_key(s, start), start, i };
			nr++;
			start = i;
		}
		last = k;
	}
	for (i = nr / 2; i-- > 0;)
		run_sift(h, nr, i);
	for (i = 0; i < n;) {
		struct run *top = &h[0], *next;

		/* The first run gives items until the best of the others (a child) comes first. */
		next = nr > 2 && run_before(&h[2], &h[1]) ? &h[2] : nr > 1 ? &h[1] : NULL;
		do {
			out[i++] = (uint32_t)top->pos;
			if (++top->pos < top->end)
				top->key = src_key(s, top->pos);
		} while (top->pos < top->end && (!next || run_before(top, next)));
		if (top->pos == top->end)
			h[0] = h[--nr];
		run_sift(h, nr, 0);
	}
	free(h);
}

/* memcpy for the model's records (multiples of 4 or 8 bytes): inline words, not a libc call. */
static inline void copy_elem(void *dst, const void *src, size_t size)
{
	size_t k;

	if (size % 8 == 0) {
		uint64_t *d = dst;
		const uint64_t *s = src;

		for (k = 0; k < size / 8; k++)
			d[k] = s[k];
	} else if (size % 4 == 0) {
		uint32_t *d = dst;
		const uint32_t *s = src;

		for (k = 0; k < size / 4; k++)
			d[k] = s[k];
	} else {
		memcpy(dst, src, size);
	}
}

/* Nearly sorted (long runs) is merged; else radix, O(n) whatever the input. */
static int is_for_merge(size_t n, size_t runs)
{
	return runs <= n / 16;
}

struct run_ctx {
	const char *base;
	size_t size;
	int (*cmp)(const void *, const void *);
};

static int cmp_in_run(const void *x, const void *y, void *ctx)
{
	const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	const struct run_ctx *c = ctx;
	int r = c->cmp(c->base + (size_t)a * c->size, c->base + (size_t)b * c->size);

	if (r)
		return r;
	return a < b ? -1 : a > b;
}

/* A mark in the top bit of a permutation's entries: only for fewer than 2^31 of them. */
#define PERM_MARK 0x80000000u

/* @p (position i takes element p[i]) becomes its inverse (element i goes to p[i]), in place. */
static void invert_perm(uint32_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t prev = (uint32_t)i, cur, next;

		if (p[i] & PERM_MARK)
			continue;
		for (cur = p[i]; cur != i; prev = cur, cur = next) {
			next = p[cur];
			p[cur] = prev | PERM_MARK;
		}
		p[i] = prev | PERM_MARK;
	}
	for (i = 0; i < n; i++)
		p[i] &= ~PERM_MARK;
}

/* Position i of @p takes element @from[i], following the cycles: one copy an element (@from is
 * left as it was). */
static void take_from(char *p, size_t n, size_t size, uint32_t *from)
{
	char *hold = xmalloc(size);
	size_t i, j, k;

	for (i = 0; i < n; i++) {
		if (from[i] & PERM_MARK)
			continue;
		copy_elem(hold, p + i * size, size);
		for (j = i; (k = from[j] & ~PERM_MARK) != i; j = k) {
			copy_elem(p + j * size, p + k * size, size);
			from[j] |= PERM_MARK;
		}
		copy_elem(p + j * size, hold, size);
		from[j] |= PERM_MARK;
	}
	for (i = 0; i < n; i++)
		from[i] &= ~PERM_MARK;
	free(hold);
}

void xmove_u32(uint32_t *v, size_t n, uint32_t *to)
{
	uint32_t *copy;
	size_t i, j;

	if (n >= PERM_MARK) {
		copy = xmalloc(n * sizeof(*copy));
		for (i = 0; i < n; i++)
			copy[to[i]] = v[i];
		memcpy(v, copy, n * sizeof(*v));
		free(copy);
		return;
	}
	for (i = 0; i < n; i++) {	/* along the cycles: what is held goes where it belongs */
		uint32_t hold, t;

		if (to[i] & PERM_MARK)
			continue;
		hold = v[i];
		for (j = to[i]; j != i; j = to[j] & ~PERM_MARK) {
			t = v[j];
			v[j] = hold;
			hold = t;
			to[j] |= PERM_MARK;
		}
		v[i] = hold;
		to[i] |= PERM_MARK;
	}
	for (i = 0; i < n; i++)
		to[i] &= ~PERM_MARK;
}

static int sort_by(void *base, size_t n, size_t size, uint64_t (*key)(const void *),
		   int (*cmp)(const void *, const void *), uint32_t *moved_to)
{
	char *p = base, *hold, *spare;
	struct run_ctx ctx = { p, size, cmp };
	uint32_t *perm;			/* position i takes element perm[i] */
	size_t i, j, runs = 1;
	uint64_t k, last = 0, ki;
	int in_place;

	for (i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0)
			break;
	if (i >= n && n <= UINT32_MAX) {
		for (i = 0; moved_to && i < n; i++)
			moved_to[i] = (uint32_t)i;
		return 0;
	}
	if (n > UINT32_MAX) {		/* 2^32 elements: more than an analysis holds */
		qsort(base, n, size, cmp);
		return -1;
	}
	for (i = 0; i < n; i++, last = k) {
		k = key(p + i * size);
		runs += i > 0 && k < last;
	}
	/* Where the caller wants to know where each went, the permutation is made in its array,
	 * then inverted there: 4 bytes an element of scratch, not 8. */
	in_place = moved_to && size > 16 && n < PERM_MARK;
	perm = in_place ? moved_to : xmalloc(n * sizeof(*perm));
	if (is_for_merge(n, runs)) {
		/* Keys read from the elements as the runs merge: 4 bytes an element beside them. */
		const struct key_src src = { .base = p, .size = size, .key = key };

		merge_runs(&src, n, runs, perm);
	} else {
		struct sort_item *items = xmalloc(n * sizeof(*items));
		struct sort_item *tmp = xmalloc(n * sizeof(*tmp)), *r;

		for (i = 0; i < n; i++)
			items[i] = (struct sort_item){ key(p + i * size), i };
		r = radix_sort(items, tmp, n, sizeof(*items));
		for (i = 0; i < n; i++)
			perm[i] = (uint32_t)r[i].idx;
		free(items);
		free(tmp);
	}
	/* Equal keys: the comparator's further criteria, then the order they came in. */
	for (i = 0; i < n; i = j) {
		ki = key(p + (size_t)perm[i] * size);
		for (j = i + 1; j < n && key(p + (size_t)perm[j] * size) == ki; j++)
			;
		if (j - i > 1)
			qsort_r(perm + i, j - i, sizeof(*perm), cmp_in_run, &ctx);
	}
	if (in_place) {
		take_from(p, n, size, perm);
		invert_perm(perm, n);
		return 0;
	}
	for (i = 0; moved_to && i < n; i++)
		moved_to[perm[i]] = (uint32_t)i;
	/* Small elements: gathered into a spare buffer (independent loads), copied back. */
	if (size <= 16) {
		spare = xmalloc(n * size);
		for (i = 0; i < n; i++)
			memcpy(spare + i * size, p + (size_t)perm[i] * size, size);
		memcpy(p, spare, n * size);
		free(spare);
		free(perm);
		return 0;
	}
	/* Large ones: position i takes element perm[i], following the permutation's cycles. */
	hold = xmalloc(size);
	for (i = 0; i < n; i++) {
		size_t from;

		if (perm[i] == i)
			continue;
		copy_elem(hold, p + i * size, size);
		j = i;
		while ((from = perm[j]) != i) {
			copy_elem(p + j * size, p + from * size, size);
			perm[j] = (uint32_t)j;
			j = from;
		}
		copy_elem(p + j * size, hold, size);
		perm[j] = (uint32_t)j;
	}
	free(hold);
	free(perm);
	return 0;
}

void xsort_by(void *base, size_t n, size_t size, uint64_t (*key)(const void *),
	      int (*cmp)(const void *, const void *))
{
	sort_by(base, n, size, key, cmp, NULL);
}

int xsort_by_moved(void *base, size_t n, size_t size, uint64_t (*key)(const void *),
		   int (*cmp)(const void *, const void *), uint32_t *moved_to)
{
	return sort_by(base, n, size, key, cmp, moved_to);
}
