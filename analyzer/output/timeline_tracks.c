// SPDX-License-Identifier: MIT
/*
 * timeline_tracks.c - the lanes of timeline_tracks.h: a hash from each key to its first lane,
 * the lanes of a key chained in order of making. Pure: no I/O.
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "timeline_tracks.h"
#include "util/util.h"

struct tl_head {
	struct tl_key key;
	uint32_t first, last;		/* the key's first and last lanes (indexes into v) */
	UT_hash_handle hh;
};

static int same_key(const struct tl_key *a, const struct tl_key *b)
{
	return a->kind == b->kind && a->a == b->a && a->b == b->b;
}

static uint32_t new_lane(struct tl_tracks *t, const struct tl_key *k, uint32_t lane)
{
	struct tl_track *tr;

	XGROW(t->v, t->cap, t->n + 1);
	tr = &t->v[t->n];
	memset(tr, 0, sizeof(*tr));
	tr->key = *k;
	tr->lane = lane;
	tr->next = UINT32_MAX;
	return (uint32_t)t->n++;
}

size_t tl_place(struct tl_tracks *t, const struct tl_key *k, uint64_t start, uint64_t end,
		int *is_new)
{
	struct tl_head *h = t->last;
	uint32_t i, lane = 0;

	if (end < start)
		end = start;
	*is_new = 0;
	if (!h || !same_key(&h->key, k)) {
		HASH_FIND(hh, t->heads, k, sizeof(*k), h);
		if (!h) {
			h = xcalloc(1, sizeof(*h));
			h->key = *k;
			h->first = h->last = new_lane(t, k, 0);
			HASH_ADD(hh, t->heads, key, sizeof(h->key), h);
			t->last = h;
			t->v[h->first].end = end;
			*is_new = 1;
			return h->first;
		}
		t->last = h;
	}
	for (i = h->first; i != UINT32_MAX; i = t->v[i].next, lane++) {
		if (t->v[i].end <= start) {
			t->v[i].end = end;
			return i;
		}
	}
	i = new_lane(t, k, lane);
	t->v[h->last].next = i;
	h->last = i;
	t->v[i].end = end;
	*is_new = 1;
	return i;
}

void tl_reset(struct tl_tracks *t)
{
	struct tl_head *h, *tmp;

	HASH_ITER(hh, t->heads, h, tmp) {
		HASH_DEL(t->heads, h);
		free(h);
	}
	t->n = 0;
	t->last = NULL;
}

void tl_free(struct tl_tracks *t)
{
	tl_reset(t);
	free(t->v);
	memset(t, 0, sizeof(*t));
}
