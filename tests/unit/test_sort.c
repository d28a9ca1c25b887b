// SPDX-License-Identifier: MIT
/*
 * test_sort.c - xsort_by, xsort_by_moved and xsort_u64 (util.c) against a stable reference sort,
 * for every path they take: already sorted, long interleaved runs (merged), shuffled and
 * reversed (radix), equal keys ordered by the comparator's further criteria, elements small
 * (gathered) and large (moved along the permutation's cycles), keys using all eight bytes;
 * xmove_u32 on random permutations, some with fixed points, and on single long cycles; and
 * gallop_search from every kind of hint against a linear scan.
 */
#include <stdlib.h>

#include "check.h"
#include "util/util.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct big {				/* 40 bytes: moved along cycles */
	uint64_t key;
	uint32_t sub;			/* the comparator's second criterion */
	uint32_t orig;			/* position before sorting: stability */
	uint64_t pad[3];
};

struct small {				/* 16 bytes: gathered */
	uint64_t key;
	uint32_t sub;
	uint32_t orig;
};

#define CMP_BODY(T)                                                                                \
	const T *a = x, *b = y;                                                                    \
	if (a->key != b->key)                                                                      \
		return a->key < b->key ? -1 : 1;                                                   \
	return a->sub < b->sub ? -1 : a->sub > b->sub;

static int cmp_big(const void *x, const void *y) { CMP_BODY(struct big) }
static int cmp_small(const void *x, const void *y) { CMP_BODY(struct small) }

/* The reference: the same order, ties by the original position (what stable means). */
static int ref_big(const void *x, const void *y)
{
	int r = cmp_big(x, y);

	return r ? r : (int)((const struct big *)x)->orig - (int)((const struct big *)y)->orig;
}

static int ref_small(const void *x, const void *y)
{
	int r = cmp_small(x, y);

	return r ? r : (int)((const struct small *)x)->orig - (int)((const struct small *)y)->orig;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static uint64_t key_big(const void *x) { return ((const struct big *)x)->key; }
static uint64_t key_small(const void *x) { return ((const struct small *)x)->key; }

enum pattern {
	SORTED, INTERLEAVED, INTERLEAVED_EQUAL, SHUFFLED, REVERSED, FEW_KEYS, ALL_EQUAL, WIDE,
	NR_PATTERNS
};

static uint64_t make_key(enum pattern p, size_t i, size_t n)
{
	switch (p) {
	case SORTED:
		return 1000 + i * 3;
	case INTERLEAVED:		/* 7 sorted streams taking turns of 50, like threads */
		return (i / 50 % 7) * 7 + ((i / 350) * 50 + i % 50) * 100;
	case INTERLEAVED_EQUAL:		/* the same, every key in every stream, four times */
		return ((i / 350) * 50 + i % 50) / 4;
	case SHUFFLED:
		return next() % (4 * n + 1);
	case REVERSED:
		return n - i;
	case FEW_KEYS:
		return next() % 5;
	case ALL_EQUAL:
		return 42;
	case WIDE:
	case NR_PATTERNS:
		break;
	}
	return next();			/* all eight bytes */
}

static void one(enum pattern p, size_t n)
{
	struct big *b = calloc(n + 1, sizeof(*b)), *rb = calloc(n + 1, sizeof(*rb));
	struct small *s = calloc(n + 1, sizeof(*s)), *rs = calloc(n + 1, sizeof(*rs));
	uint64_t *u = calloc(n + 1, sizeof(*u)), *ru = calloc(n + 1, sizeof(*ru));
	uint32_t *moved = calloc(n + 1, sizeof(*moved));
	size_t i, bad = 0;

	for (i = 0; i < n; i++) {
		uint64_t k = make_key(p, i, n);
		uint32_t sub = (uint32_t)(next() % 3);

		b[i] = (struct big){ k, sub, (uint32_t)i, { k, ~k, i } };
		s[i] = (struct small){ k, sub, (uint32_t)i };
		u[i] = k;
	}
	memcpy(rb, b, n * sizeof(*b));
	memcpy(rs, s, n * sizeof(*s));
	memcpy(ru, u, n * sizeof(*u));
	qsort(rb, n, sizeof(*rb), ref_big);
	qsort(rs, n, sizeof(*rs), ref_small);
	qsort(ru, n, sizeof(*ru), cmp_u64);
	/* Large elements through xsort_by_moved: where each went must be where it is. */
	CHECK_EQ(xsort_by_moved(b, n, sizeof(*b), key_big, cmp_big, moved), 0);
	xsort_by(s, n, sizeof(*s), key_small, cmp_small);
	xsort_u64(u, n);
	for (i = 0; i < n; i++)
		bad += memcmp(&b[i], &rb[i], sizeof(*b)) != 0 ||
		       memcmp(&s[i], &rs[i], sizeof(*s)) != 0 || u[i] != ru[i] ||
		       moved[i] >= n || b[moved[i]].orig != i;
	if (bad)
		fprintf(stderr, "pattern %d, %zu elements: %zu out of place\n", (int)p, n, bad);
	CHECK_EQ(bad, 0);
	free(b);
	free(rb);
	free(s);
	free(rs);
	free(u);
	free(ru);
	free(moved);
}

static void test_patterns(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 17, 1000, 70001 };
	size_t i;
	int p;

	for (p = 0; p < NR_PATTERNS; p++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			one((enum pattern)p, sizes[i]);
}

struct gallop_q {
	const uint64_t *v;
	uint64_t t;
};

static int above(size_t i, const void *ctx)
{
	const struct gallop_q *q = ctx;

	return q->v[i] > q->t;
}

static void test_gallop(void)
{
	static const size_t sizes[] = { 0, 1, 2, 5, 64, 1000 };
	uint64_t v[1000];
	size_t s, i, bad = 0, tries = 0;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		int round;

		for (i = 0; i < n; i++)	/* ascending, with runs of equal values */
			v[i] = i ? v[i - 1] + next() % 3 : 5;
		for (round = 0; round < 2000; round++) {
			struct gallop_q q = { v, n ? next() % (v[n - 1] + 8) : 3 };
			size_t hint = next() % (n + 3), want = 0, got;

			while (want < n && v[want] <= q.t)
				want++;
			got = gallop_search(n, hint, above, &q);
			bad += got != want;
			tries++;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK(tries > 10000);
}

/* xmove_u32: value i ends at to[i]; @to is left intact. */
static void test_move_u32(void)
{
	static const size_t sizes[] = { 0, 1, 2, 7, 1000, 4096 };
	size_t si, i;

	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si], bad = 0;
		uint32_t *to = malloc((n + 1) * sizeof(*to)), *keep = malloc((n + 1) * sizeof(*to));
		uint32_t *v = malloc((n + 1) * sizeof(*v));

		for (i = 0; i < n; i++)		/* one cycle through all, for every third size */
			to[i] = si % 3 == 2 ? (uint32_t)((i + 1) % n) : (uint32_t)i;
		for (i = n; i > 1 && si % 3 != 2; i--) {	/* Fisher-Yates */
			size_t j = next() % i;
			uint32_t t;

			if (si % 2 && i % 3 == 0)
				continue;	/* fixed points and shorter cycles */
			t = to[i - 1];
			to[i - 1] = to[j];
			to[j] = t;
		}
		for (i = 0; i < n; i++) {
			keep[i] = to[i];
			v[i] = (uint32_t)i * 7 + 1;
		}
		xmove_u32(v, n, to);
		for (i = 0; i < n; i++)
			bad += to[i] != keep[i] || v[to[i]] != (uint32_t)i * 7 + 1;
		CHECK_EQ(bad, 0);
		free(to);
		free(keep);
		free(v);
	}
}

int main(void)
{
	RUN(test_patterns);
	RUN(test_gallop);
	RUN(test_move_u32);
	return TEST_RESULT();
}
