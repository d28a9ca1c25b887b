// SPDX-License-Identifier: MIT
/*
 * nvtx_ranges.c - the run's NVTX ranges (nvtx_ranges.h). A push takes an occurrence (its end
 * still open: UINT64_MAX) and its index goes on the stack of its thread and domain; the pop
 * closes the index on top. start/end ranges by id in a hash of the open ones; an end read
 * before its start (records come in blocks per thread, and a range can end on another thread)
 * waits for it in a hash of its own. Pure.
 */
#include "nvtx_ranges.h"

#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "util/util.h"

#define OPEN_END UINT64_MAX
#define NOT_KEPT UINT32_MAX

struct stack_key {
	uint32_t thread, domain;
};

struct stack {				/* a thread's push/pop stack of one domain */
	UT_hash_handle hh;
	struct stack_key k;
	uint64_t depth;			/* may pass NVTX_RANGES_MAX_DEPTH: pops still match */
	uint32_t idx[NVTX_RANGES_MAX_DEPTH];	/* occurrence, or NOT_KEPT */
};

struct name_slot {
	UT_hash_handle hh;
	uint64_t key;			/* domain << 32 | name */
	uint32_t idx;
};

struct started {			/* a start/end range not yet ended */
	UT_hash_handle hh;
	uint64_t id;
	uint32_t idx;			/* occurrence, or NOT_KEPT */
};

struct ended {				/* an end read before its start (another thread's) */
	UT_hash_handle hh;
	uint64_t id;
	uint64_t t;
};

#define NAME_CACHE 64

struct nvtx_ranges_state {
	struct stack *stacks, *hot;
	struct name_slot *names;
	struct name_slot *recent[NAME_CACHE];	/* the last found, by name id modulo */
	struct started *started;
	size_t nr_started;
	struct ended *ended;
	size_t nr_ended;
};

void nvtx_ranges_init(struct nvtx_ranges *r)
{
	memset(r, 0, sizeof(*r));
	r->st = xcalloc(1, sizeof(*r->st));
	XGROW(r->names, r->names_cap, 1);
	r->names[0] = (struct nvtx_range_name){ 0, 0, 0 };
	r->nr_names = 1;
}

static void free_state(struct nvtx_ranges *r)
{
	struct nvtx_ranges_state *st = r->st;
	struct stack *s, *stmp;
	struct name_slot *n, *ntmp;
	struct started *o, *otmp;
	struct ended *d, *dtmp;

	if (!st)
		return;
	HASH_ITER(hh, st->stacks, s, stmp) {
		HASH_DEL(st->stacks, s);
		free(s);
	}
	HASH_ITER(hh, st->names, n, ntmp) {
		HASH_DEL(st->names, n);
		free(n);
	}
	HASH_ITER(hh, st->started, o, otmp) {
		HASH_DEL(st->started, o);
		free(o);
	}
	HASH_ITER(hh, st->ended, d, dtmp) {
		HASH_DEL(st->ended, d);
		free(d);
	}
	free(st);
	r->st = NULL;
}

void nvtx_ranges_free(struct nvtx_ranges *r)
{
	free_state(r);
	free(r->names);
	free(r->occ);
	memset(r, 0, sizeof(*r));
}

static struct stack *stack_of(struct nvtx_ranges_state *st, uint32_t thread, uint32_t domain)
{
	struct stack_key k = { thread, domain };
	struct stack *s;

	if (st->hot && st->hot->k.thread == thread && st->hot->k.domain == domain)
		return st->hot;
	HASH_FIND(hh, st->stacks, &k, sizeof(k), s);
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->k = k;
		HASH_ADD(hh, st->stacks, k, sizeof(s->k), s);
	}
	st->hot = s;
	return s;
}

/* The name slot of (@domain, @name); NVTX_RANGES_OTHER past the limit. */
static uint32_t name_of(struct nvtx_ranges *r, uint32_t domain, uint32_t name, int is_start_end)
{
	uint64_t key = (uint64_t)domain << 32 | name;
	struct name_slot **hot = &r->st->recent[name % NAME_CACHE], *n = *hot;

	if (!n || n->key != key)
		HASH_FIND(hh, r->st->names, &key, sizeof(key), n);
	if (!n) {
		if (r->nr_names > NVTX_RANGES_MAX_NAMES) {
			r->nr_other_names++;
			return NVTX_RANGES_OTHER;
		}
		n = xcalloc(1, sizeof(*n));
		n->key = key;
		n->idx = (uint32_t)r->nr_names;
		HASH_ADD(hh, r->st->names, key, sizeof(n->key), n);
		XGROW(r->names, r->names_cap, r->nr_names + 1);
		r->names[r->nr_names++] = (struct nvtx_range_name){ domain, name, 0 };
	}
	*hot = n;
	r->names[n->idx].is_start_end |= is_start_end;
	return n->idx;
}

/* A range begins at @t: its occurrence, or NOT_KEPT past the limit. */
static uint32_t begin(struct nvtx_ranges *r, uint64_t t, uint32_t domain, uint32_t name,
		      uint32_t thread)
{
	int is_start_end = thread == NVTX_RANGES_ANY_THREAD;
	uint32_t slot = name_of(r, domain, name, is_start_end);

	r->nr_ranges++;
	if (r->nr_occ >= NVTX_RANGES_MAX_KEPT) {
		r->nr_dropped++;
		return NOT_KEPT;
	}
	XGROW(r->occ, r->occ_cap, r->nr_occ + 1);
	r->occ[r->nr_occ] = (struct nvtx_occ){ t, OPEN_END, slot, thread };
	return (uint32_t)r->nr_occ++;
}

/* Occurrence @idx ends at @t (never before it began: clocks of two threads can disagree). */
static void end(struct nvtx_ranges *r, uint32_t idx, uint64_t t)
{
	if (idx == NOT_KEPT)
		return;
	r->occ[idx].end = t > r->occ[idx].start ? t : r->occ[idx].start;
}

void nvtx_ranges_event(struct nvtx_ranges *r, const struct m_nvtx *e)
{
	struct nvtx_ranges_state *st = r->st;
	struct started *o;
	struct stack *s;

	if (!st)
		return;		/* finished */
	switch (e->kind) {
	case MN_PUSH:
		s = stack_of(st, e->thread, e->domain);
		if (s->depth < NVTX_RANGES_MAX_DEPTH) {
			s->idx[s->depth] = begin(r, e->t, e->domain, e->name, e->thread);
		} else {
			r->nr_ranges++;
			r->nr_too_deep++;
			r->nr_dropped++;
		}
		s->depth++;
		break;
	case MN_POP:
		s = stack_of(st, e->thread, e->domain);
		if (!s->depth) {
			r->nr_unbalanced++;
			break;
		}
		s->depth--;
		if (s->depth < NVTX_RANGES_MAX_DEPTH)
			end(r, s->idx[s->depth], e->t);
		break;
	case MN_START: {
		struct ended *d;

		HASH_FIND(hh, st->ended, &e->id, sizeof(e->id), d);
		if (d) {		/* ended on a thread whose records came first */
			end(r, begin(r, e->t, e->domain, e->name, NVTX_RANGES_ANY_THREAD), d->t);
			HASH_DEL(st->ended, d);
			free(d);
			st->nr_ended--;
			break;
		}
		HASH_FIND(hh, st->started, &e->id, sizeof(e->id), o);
		if (o || st->nr_started >= NVTX_RANGES_MAX_OPEN) {
			r->nr_unmatched_ends++;	/* an id again, or too many open: not followed */
			break;
		}
		o = xcalloc(1, sizeof(*o));
		o->id = e->id;
		o->idx = begin(r, e->t, e->domain, e->name, NVTX_RANGES_ANY_THREAD);
		HASH_ADD(hh, st->started, id, sizeof(o->id), o);
		st->nr_started++;
		break;
	}
	case MN_END:
		HASH_FIND(hh, st->started, &e->id, sizeof(e->id), o);
		if (!o) {
			struct ended *d;

			/* Its start may be in a block of another thread still to come. */
			HASH_FIND(hh, st->ended, &e->id, sizeof(e->id), d);
			if (d || st->nr_ended >= NVTX_RANGES_MAX_OPEN) {
				r->nr_unmatched_ends++;
				break;
			}
			d = xcalloc(1, sizeof(*d));
			d->id = e->id;
			d->t = e->t;
			HASH_ADD(hh, st->ended, id, sizeof(d->id), d);
			st->nr_ended++;
			break;
		}
		end(r, o->idx, e->t);
		HASH_DEL(st->started, o);
		free(o);
		st->nr_started--;
		break;
	case MN_MARK:
		r->nr_marks++;
		break;
	default:
		break;
	}
}

static uint64_t key_start(const void *p)
{
	return ((const struct nvtx_occ *)p)->start;
}

static int cmp_start(const void *a, const void *b)
{
	const struct nvtx_occ *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;	/* outer first */
}

void nvtx_ranges_finish(struct nvtx_ranges *r, uint64_t run_end)
{
	size_t i;

	if (!r->st)
		return;
	for (i = 0; i < r->nr_occ; i++) {
		if (r->occ[i].end != OPEN_END)
			continue;
		r->occ[i].end = run_end > r->occ[i].start ? run_end : r->occ[i].start;
		r->nr_open_at_end++;
	}
	r->nr_unmatched_ends += r->st->nr_ended;	/* ends whose start never came */
	free_state(r);
	/* each thread's are in order already: the merge of ascending runs */
	xsort_by(r->occ, r->nr_occ, sizeof(*r->occ), key_start, cmp_start);
}
