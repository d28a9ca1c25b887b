// SPDX-License-Identifier: MIT
/*
 * steps.c - the step finder (steps.h). NVTX: each thread's push/pop stack per domain, followed
 * STEPS_MAX_DEPTH deep; a range opening on an empty stack (or any start/end range) is a
 * top-level range, counted by name, domain and thread id, its occurrences kept up to
 * STEPS_MAX_KEPT in all. The launch stream: each kernel's launches counted with the number of
 * launches its thread made between one and the next (its period in launches), whether that
 * equals the one before, and its first STEPS_EARLY occurrences (for the warm-up). Memory: a
 * few hundred bytes a kernel and 16 bytes an NVTX occurrence. Pure.
 */
#include "steps.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "util/util.h"

#define STEPS_RECENT 64

struct occurrence {
	uint64_t t;			/* start */
	uint64_t idx;			/* launches: the thread's launch number; NVTX: the end */
};

struct candidate_key {
	uint64_t key;			/* NVTX: domain << 32 | name; kernels: the FUNC id */
	uint32_t thread;		/* NVTX: the thread slot; kernels: 0 */
	uint32_t pad_;
};

/* A top-level NVTX range name on a thread, or a kernel of the launch stream. */
struct candidate {
	UT_hash_handle hh;
	struct candidate_key k;
	uint32_t thread;		/* kernels: the thread slot of the first launch (NVTX:
					 * k.thread) */
	int many_threads;		/* kernels: launched by more than one thread */
	uint64_t count;
	uint64_t sum_ns;		/* NVTX: time inside */
	uint64_t first, last, last_end;
	uint64_t last_idx, last_gap;	/* kernels: the period in launches, the last one */
	uint64_t equal_gaps;		/* ... periods equal to the one before */
	uint64_t run_len;		/* ... the last one's run of equal periods */
	uint64_t best_gap, best_len;	/* the period of the longest run: the steady one */
	uint64_t best_end;		/* ... the start of that run's last step */
	struct occurrence early[STEPS_EARLY];
	struct occurrence *all;		/* NVTX: every occurrence (until STEPS_MAX_KEPT) */
	size_t nr_all, all_cap;
	int all_dropped;
};

struct nvtx_open {			/* a range pushed on an empty stack */
	uint64_t t;
	uint32_t name;
};

struct nvtx_stack {			/* a thread's push/pop stack of one domain */
	uint32_t thread, domain;
	uint64_t depth;
	struct nvtx_open top;
};

struct nvtx_started {			/* a start/end range not yet ended */
	UT_hash_handle hh;
	uint64_t id;
	uint64_t t;
	uint32_t name, domain, thread;
};

struct steps_finder {
	struct candidate *ranges;	/* top-level NVTX ranges (uthash) */
	struct candidate *kernels;	/* launches by FUNC (uthash) */
	struct nvtx_stack *stacks;
	size_t nr_stacks, stacks_cap, hot_stack;
	struct nvtx_started *started;
	size_t nr_started;
	uint64_t *launches;		/* launches so far by thread slot */
	size_t launches_cap;
	size_t nr_kept;			/* NVTX occurrences kept in all */
	/* the kernels found last, by FUNC id modulo: a loop launches the same ones again */
	struct candidate *recent[STEPS_RECENT];
	uint64_t nr_ranges, nr_unbalanced, nr_too_deep, nr_unmatched_ends, nr_marks;
};

struct steps_finder *steps_finder_new(void)
{
	return xcalloc(1, sizeof(struct steps_finder));
}

static void candidates_free(struct candidate **h)
{
	struct candidate *c, *tmp;

	HASH_ITER(hh, *h, c, tmp) {
		HASH_DEL(*h, c);
		free(c->all);
		free(c);
	}
}

void steps_finder_free(struct steps_finder *f)
{
	struct nvtx_started *s, *tmp;

	if (!f)
		return;
	candidates_free(&f->ranges);
	candidates_free(&f->kernels);
	HASH_ITER(hh, f->started, s, tmp) {
		HASH_DEL(f->started, s);
		free(s);
	}
	free(f->stacks);
	free(f->launches);
	free(f);
}

static struct candidate *candidate_of(struct candidate **h, uint64_t key, uint32_t thread,
				      int *is_new)
{
	const struct candidate_key k = { key, thread, 0 };
	struct candidate *c;

	HASH_FIND(hh, *h, &k, sizeof(k), c);
	*is_new = !c;
	if (c)
		return c;
	c = xcalloc(1, sizeof(*c));
	c->k = k;
	c->first = UINT64_MAX;
	HASH_ADD(hh, *h, k, sizeof(c->k), c);
	return c;
}

/* An occurrence of @c at @t (@idx: launches' number, or the range's end). */
static void occurrence_add(struct candidate *c, uint64_t t, uint64_t idx)
{
	if (c->count < STEPS_EARLY)
		c->early[c->count] = (struct occurrence){ t, idx };
	c->count++;
	if (t < c->first)
		c->first = t;
	c->last = t;
}

void steps_launch(struct steps_finder *f, uint32_t thread, uint32_t func, uint64_t t)
{
	struct candidate *c;
	uint64_t idx;
	int is_new;

	if (!func)
		return;
	if (thread >= f->launches_cap) {
		size_t old = f->launches_cap;

		XGROW(f->launches, f->launches_cap, (size_t)thread + 1);
		memset(f->launches + old, 0, (f->launches_cap - old) * sizeof(*f->launches));
	}
	idx = f->launches[thread]++;
	c = f->recent[func % STEPS_RECENT];
	if (!c || c->k.key != func) {
		c = candidate_of(&f->kernels, func, 0, &is_new);
		if (is_new)
			c->thread = thread;
		f->recent[func % STEPS_RECENT] = c;
	}
	if (c->thread != thread)
		c->many_threads = 1;
	if (c->count && !c->many_threads) {
		uint64_t gap = idx - c->last_idx;

		if (c->count >= 2 && gap == c->last_gap) {
			c->equal_gaps++;
			c->run_len++;
		} else {
			c->run_len = 1;
		}
		if (c->run_len >= c->best_len) {
			c->best_len = c->run_len;
			c->best_gap = gap;
			c->best_end = t;
		}
		c->last_gap = gap;
	}
	c->last_idx = idx;
	occurrence_add(c, t, idx);
}

/* A top-level range [t0, t1) of @name in @domain on thread slot @thread ended. */
static void range_done(struct steps_finder *f, uint32_t domain, uint32_t name, uint32_t thread,
		       uint64_t t0, uint64_t t1)
{
	int is_new;
	struct candidate *c = candidate_of(&f->ranges, (uint64_t)domain << 32 | name, thread,
					   &is_new);

	if (t1 < t0)
		t1 = t0;
	f->nr_ranges++;
	occurrence_add(c, t0, t1);
	c->sum_ns += t1 - t0;
	if (t1 > c->last_end)
		c->last_end = t1;
	if (c->all_dropped)
		return;
	if (f->nr_kept >= STEPS_MAX_KEPT) {
		c->all_dropped = 1;	/* too many to keep: this name cannot give every step */
		f->nr_kept -= c->nr_all;
		free(c->all);
		c->all = NULL;
		c->nr_all = c->all_cap = 0;
		return;
	}
	XGROW(c->all, c->all_cap, c->nr_all + 1);
	c->all[c->nr_all++] = (struct occurrence){ t0, t1 };
	f->nr_kept++;
}

static struct nvtx_stack *stack_of(struct steps_finder *f, uint32_t thread, uint32_t domain)
{
	size_t i;

	if (f->nr_stacks && f->stacks[f->hot_stack].thread == thread &&
	    f->stacks[f->hot_stack].domain == domain)
		return &f->stacks[f->hot_stack];
	for (i = 0; i < f->nr_stacks; i++)
		if (f->stacks[i].thread == thread && f->stacks[i].domain == domain)
			break;
	if (i == f->nr_stacks) {
		XGROW(f->stacks, f->stacks_cap, f->nr_stacks + 1);
		f->stacks[f->nr_stacks++] = (struct nvtx_stack){ .thread = thread, .domain = domain };
	}
	f->hot_stack = i;
	return &f->stacks[i];
}

void steps_nvtx(struct steps_finder *f, const struct m_nvtx *e)
{
	struct nvtx_stack *st;

	switch (e->kind) {
	case MN_PUSH:
		st = stack_of(f, e->thread, e->domain);
		if (!st->depth)
			st->top = (struct nvtx_open){ e->t, e->name };
		else if (st->depth >= STEPS_MAX_DEPTH)
			f->nr_too_deep++;
		st->depth++;
		break;
	case MN_POP:
		st = stack_of(f, e->thread, e->domain);
		if (!st->depth) {
			f->nr_unbalanced++;
			break;
		}
		if (!--st->depth)
			range_done(f, e->domain, st->top.name, e->thread, st->top.t, e->t);
		break;
	case MN_START: {
		struct nvtx_started *s;

		HASH_FIND(hh, f->started, &e->id, sizeof(e->id), s);
		if (s || f->nr_started >= STEPS_MAX_OPEN) {
			f->nr_unmatched_ends++;	/* an id again, or too many open: not followed */
			break;
		}
		s = xcalloc(1, sizeof(*s));
		*s = (struct nvtx_started){ .id = e->id, .t = e->t, .name = e->name,
					    .domain = e->domain, .thread = e->thread };
		HASH_ADD(hh, f->started, id, sizeof(s->id), s);
		f->nr_started++;
		break;
	}
	case MN_END: {
		struct nvtx_started *s;

		HASH_FIND(hh, f->started, &e->id, sizeof(e->id), s);
		if (!s) {
			f->nr_unmatched_ends++;
			break;
		}
		range_done(f, s->domain, s->name, s->thread, s->t, e->t);
		HASH_DEL(f->started, s);
		free(s);
		f->nr_started--;
		break;
	}
	case MN_MARK:
		f->nr_marks++;
		break;
	default:
		break;
	}
}

int steps_name_is_steplike(const char *name)
{
	static const char *const words[] = { "step", "iter", "batch", "epoch_step" };
	char low[64];
	size_t i, n;

	if (!name)
		return 0;
	for (n = 0; name[n] && n < sizeof(low) - 1; n++)
		low[n] = (char)tolower((unsigned char)name[n]);
	low[n] = 0;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return 1;
	return 0;
}

static int cmp_occ(const void *a, const void *b)
{
	const struct occurrence *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The NVTX range to take as steps, or NULL (and why). */
static struct candidate *pick_range(struct steps_finder *f, const struct model *m,
				    const struct steps_options *o, const char **why)
{
	struct candidate *c, *tmp, *best = NULL, *best_like = NULL;

	HASH_ITER(hh, f->ranges, c, tmp) {
		const char *name = model_string(m, (uint32_t)c->k.key, NULL);

		if (o->range_name) {
			if (name && !strcmp(name, o->range_name) && (!best || c->count > best->count))
				best = c;
			continue;
		}
		if (c->count < 2)
			continue;	/* a step repeats */
		if (steps_name_is_steplike(name)) {
			if (!best_like || c->count > best_like->count ||
			    (c->count == best_like->count && c->first < best_like->first))
				best_like = c;
			continue;
		}
		/* Not named like a step: it must fill at least half of its stretch. */
		if (c->count >= 3 && c->last_end > c->first &&
		    2 * c->sum_ns >= c->last_end - c->first &&
		    (!best || c->sum_ns > best->sum_ns))
			best = c;
	}
	if (o->range_name && !best)
		*why = "no NVTX range has the name --step-range gave";
	else if (!o->range_name && !best_like && !best)
		*why = f->nr_ranges ? "no NVTX range repeats at the top level of a thread" :
				      "no NVTX ranges";
	return best_like ? best_like : best;
}

/* The anchor kernel of the launch stream, or NULL (and why). */
static struct candidate *pick_anchor(struct steps_finder *f, const char **why)
{
	struct candidate *c, *tmp, *best = NULL;

	HASH_ITER(hh, f->kernels, c, tmp) {
		/* A CUDA graph can be a whole step: one launch a period is a step then. */
		int is_graph = c->k.key == STEPS_GRAPH_FUNC;
		uint64_t launches, covers, best_covers;

		if (c->many_threads || c->count < STEPS_AUTO_MIN ||
		    (!is_graph && c->best_gap < STEPS_AUTO_MIN_LAUNCHES))
			continue;
		launches = c->thread < f->launches_cap ? f->launches[c->thread] : 0;
		if (!is_graph && c->count * STEPS_AUTO_MIN_LAUNCHES > launches)
			continue;	/* more than one launch in STEPS_AUTO_MIN_LAUNCHES */
		if ((double)c->equal_gaps < STEPS_AUTO_REGULAR * (double)(c->count - 2))
			continue;	/* not the same sequence step after step */
		/* The loop that explains the most launches; then the longest period, the earliest. */
		covers = c->count * c->best_gap;
		best_covers = best ? best->count * best->best_gap : 0;
		if (!best || covers > best_covers ||
		    (covers == best_covers &&
		     (c->best_gap > best->best_gap ||
		      (c->best_gap == best->best_gap &&
		       (c->first < best->first ||
			(c->first == best->first && c->k.key < best->k.key))))))
			best = c;
	}
	if (!best)
		*why = "no kernel repeats at a regular period in the launch stream";
	return best;
}

/*
 * Leading warm-up steps among the first @n steps of lengths @len (and, for the launch stream,
 * their periods in launches @gap against the steady @steady_gap): another sequence, or slower
 * than STEPS_WARMUP_SLOWER times @median. At most half of @total.
 */
static uint64_t warmup_of(const uint64_t *len, const uint64_t *gap, uint64_t steady_gap,
			  size_t n, uint64_t median, uint64_t total)
{
	uint64_t w = 0;

	while (w < n && 2 * (w + 1) <= total &&
	       ((gap && gap[w] != steady_gap) ||
		(double)len[w] > STEPS_WARMUP_SLOWER * (double)median))
		w++;
	return w;
}

static void found_nvtx(struct candidate *c, struct steps_found *out)
{
	/* Every occurrence when all were kept (they are the steps), else the first ones. */
	const int has_all = !c->all_dropped;
	struct occurrence *occ = has_all ? c->all : c->early;
	const size_t n = has_all ? c->nr_all : c->count < STEPS_EARLY ? (size_t)c->count :
									  STEPS_EARLY;
	uint64_t *lens = xmalloc(2 * (n + 1) * sizeof(*lens)), *sorted = lens + n + 1;
	size_t i;

	out->source = STEPS_NVTX;
	out->name = (uint32_t)c->k.key;
	out->domain = (uint32_t)(c->k.key >> 32);
	out->thread = c->k.thread;
	out->count = c->count;
	qsort(occ, n, sizeof(*occ), cmp_occ);
	if (has_all) {
		out->v = xmalloc((n + 1) * sizeof(*out->v));
		for (i = 0; i < n; i++)
			out->v[i] = (struct steps_span){ occ[i].t, occ[i].idx };
		out->nr = n;
	}
	for (i = 0; i < n; i++)
		lens[i] = sorted[i] = occ[i].idx - occ[i].t;
	out->median_ns = xmedian_u64(sorted, n);
	out->warmup = warmup_of(lens, NULL, 0, n < STEPS_EARLY ? n : STEPS_EARLY, out->median_ns,
				out->count);
	out->first_start = c->first;
	out->steady_start = out->warmup < n ? occ[out->warmup].t : c->first;
	out->steady_end = c->last_end;
	free(lens);
}

static void found_auto(struct candidate *c, uint64_t run_end, struct steps_found *out)
{
	size_t n = c->count < STEPS_EARLY ? (size_t)c->count : STEPS_EARLY, i, k = 0;
	uint64_t lens[STEPS_EARLY], gaps[STEPS_EARLY], steady[STEPS_EARLY];

	out->source = STEPS_AUTO;
	out->anchor_func = (uint32_t)c->k.key;
	out->anchor_gap = c->best_gap;
	out->thread = c->thread;
	out->count = c->count;
	/* Step i runs from occurrence i to i + 1; the median of those with the steady sequence. */
	for (i = 0; i + 1 < n; i++) {
		lens[i] = c->early[i + 1].t - c->early[i].t;
		gaps[i] = c->early[i + 1].idx - c->early[i].idx;
		if (gaps[i] == c->best_gap)
			steady[k++] = lens[i];
	}
	out->median_ns = xmedian_u64(steady, k);
	out->warmup = warmup_of(lens, gaps, c->best_gap, n ? n - 1 : 0, out->median_ns, out->count);
	out->first_start = c->first;
	out->steady_start = c->early[out->warmup < n ? out->warmup : 0].t;
	/*
	 * The steady state ends with the last step of the steady sequence: where the launch of
	 * another sequence after it began (the tail), or, when the anchor's last launch began a
	 * last step, where the next would have begun (or with the run).
	 */
	out->steady_end = c->best_end;
	if (c->best_end == c->last) {
		out->steady_end += out->median_ns;
		if (run_end > c->best_end && out->steady_end > run_end)
			out->steady_end = run_end;
	}
}

static void nvtx_counts(const struct steps_finder *f, struct steps_found *out)
{
	out->nr_ranges = f->nr_ranges;
	out->nr_unbalanced = f->nr_unbalanced;
	out->nr_too_deep = f->nr_too_deep;
	out->nr_unmatched_ends = f->nr_unmatched_ends + f->nr_started;
	out->nr_marks = f->nr_marks;
}

void steps_finish(struct steps_finder *f, const struct model *m, const struct steps_options *o,
		  uint64_t run_start, uint64_t run_end, struct steps_found *out)
{
	static const struct steps_options none;
	const char *why_nvtx = NULL, *why_auto = NULL;
	struct candidate *c;

	if (!o)
		o = &none;
	memset(out, 0, sizeof(*out));
	nvtx_counts(f, out);
	if (o->whole) {
		out->why = "--whole: the run as one window";
		return;
	}
	if (o->has_window) {
		double from = o->window_from_s, to = o->window_to_s;

		out->source = STEPS_WINDOW;
		out->steady_start = run_start + (uint64_t)(from > 0 ? from * 1e9 : 0);
		out->steady_end = to > from ? run_start + (uint64_t)(to * 1e9) : run_end;
		out->first_start = out->steady_start;
		return;
	}
	c = pick_range(f, m, o, &why_nvtx);
	if (c) {
		found_nvtx(c, out);
	} else if (!o->range_name && (c = pick_anchor(f, &why_auto))) {
		found_auto(c, run_end, out);
		out->name = c->k.key < m->nr_funcs ? m->funcs[c->k.key].name : 0;
	} else {
		out->why = o->range_name ? why_nvtx : why_auto;
		return;
	}
	if (o->has_steps && (out->source != STEPS_NVTX || !out->nr)) {
		/* The launch stream's steps are found as the run is read: too late for a window. */
		steps_found_free(out);
		nvtx_counts(f, out);
		out->why = "--steps needs NVTX steps (a range each step); try --window";
		return;
	}
	if (o->has_steps) {
		/* --steps A:B: those steps are the steady state (1-based, inclusive). */
		uint64_t a = o->steps_from ? o->steps_from : 1, b = o->steps_to;

		if (!b || b > out->nr)
			b = out->nr;
		if (a > b)
			a = b;
		out->warmup = a - 1;
		out->steady_start = out->v[a - 1].start;
		out->steady_end = out->v[b - 1].end;
	}
}

void steps_found_free(struct steps_found *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
