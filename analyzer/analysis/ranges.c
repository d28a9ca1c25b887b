// SPDX-License-Identifier: MIT
/*
 * ranges.c - the NVTX range table (ranges.h). The window's occurrences, sorted by start, form
 * an implicit interval tree (each middle element holds the latest end of its half-open span):
 * a time or a gap finds the occurrences over it in O(log n + found). Each name is counted once
 * per call, operation and idle piece however its occurrences nest (a stamp per name). Memory: 32
 * bytes an occurrence in the window, ~150 a name. Pure.
 */
#include "ranges.h"

#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "util/util.h"

_Static_assert(RANGES_NR_PARTS == NR_GAP_PARTS, "a range's idle parts are a gap's");

struct ranges_acc {
	struct range_table *t;
	struct nvtx_occ *occ;		/* the window's, by start */
	uint64_t *max_end;		/* the tree: the latest end of each middle's span */
	size_t n;
	uint64_t *stamp;		/* per name: the last event counted */
	uint64_t *best;			/* per name: the most overlap of the piece in hand */
	uint32_t *touched;		/* names the piece in hand overlaps */
	size_t nr_touched, touched_cap;
	uint64_t now;			/* the event in hand's stamp */
	uint32_t thread;		/* the call's thread (for launches, operations) */
	uint64_t g0, g1;		/* the idle piece in hand */
};

static int cmp_start(const void *a, const void *b)
{
	const struct nvtx_occ *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;	/* outer first */
}

static uint64_t build(struct ranges_acc *a, size_t lo, size_t hi)
{
	size_t mid;
	uint64_t m, r;

	if (lo >= hi)
		return 0;
	mid = lo + (hi - lo) / 2;
	m = build(a, lo, mid);
	r = build(a, mid + 1, hi);
	if (r > m)
		m = r;
	if (a->occ[mid].end > m)
		m = a->occ[mid].end;
	a->max_end[mid] = m;
	return m;
}

static const char *domain_name(const struct model *m, uint32_t domain)
{
	size_t i;

	if (!domain)
		return NULL;
	for (i = 0; i < m->nr_nvtx_domains; i++)
		if (m->nvtx_domains[i].id == domain)
			return model_string(m, m->nvtx_domains[i].name, "(unnamed domain)");
	return "(unnamed domain)";
}

struct ranges_acc *ranges_begin(struct range_table *t, const struct model *m,
				const struct first_look *p, uint64_t lo, uint64_t hi)
{
	const struct nvtx_ranges *r = &p->ranges;
	struct ranges_acc *a = xcalloc(1, sizeof(*a));
	size_t i;

	memset(t, 0, sizeof(*t));
	a->t = t;
	t->has_nvtx = r->nr_ranges || r->nr_marks || r->nr_unbalanced || r->nr_unmatched_ends;
	t->window_start = lo;
	t->window_end = hi;
	t->nr_ranges = r->nr_ranges;
	t->nr_dropped = r->nr_dropped;
	t->nr_too_deep = r->nr_too_deep;
	t->nr_unbalanced = r->nr_unbalanced;
	t->nr_unmatched_ends = r->nr_unmatched_ends;
	t->nr_open_at_end = r->nr_open_at_end;
	t->nr_marks = r->nr_marks;
	t->nr_other_names = r->nr_other_names;
	t->nr_rows = r->nr_names;
	t->rows = xcalloc(t->nr_rows + 1, sizeof(*t->rows));
	for (i = 0; i < r->nr_names; i++) {
		struct range_row *row = &t->rows[i];

		row->name = i == NVTX_RANGES_OTHER ? "(other names)" :
						      model_string(m, r->names[i].name, "(unnamed)");
		row->domain = i == NVTX_RANGES_OTHER ? NULL : domain_name(m, r->names[i].domain);
		row->is_start_end = r->names[i].is_start_end;
	}
	a->occ = xmalloc((r->nr_occ + 1) * sizeof(*a->occ));
	for (i = 0; i < r->nr_occ; i++) {
		const struct nvtx_occ *o = &r->occ[i];

		if (o->start < lo || o->start >= hi)
			continue;
		a->occ[a->n++] = *o;
		t->rows[o->name].count++;
		t->rows[o->name].host_ns += o->end - o->start;
	}
	t->nr_in_window = a->n;
	xqsort(a->occ, a->n, sizeof(*a->occ), cmp_start);
	a->max_end = xmalloc((a->n + 1) * sizeof(*a->max_end));
	build(a, 0, a->n);
	a->stamp = xcalloc(t->nr_rows + 1, sizeof(*a->stamp));
	a->best = xcalloc(t->nr_rows + 1, sizeof(*a->best));
	return a;
}

/* Each occurrence over time @t of the call's thread (or of none) once per name: @add. */
static void stab(struct ranges_acc *a, size_t lo, size_t hi, uint64_t t,
		 void (*add)(struct ranges_acc *, uint32_t, uint64_t), uint64_t v)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nvtx_occ *o = &a->occ[mid];

		if (a->max_end[mid] <= t)
			return;
		stab(a, lo, mid, t, add, v);
		if (o->start > t)
			return;
		if (o->end > t && a->stamp[o->name] != a->now &&
		    (o->thread == NVTX_RANGES_ANY_THREAD || o->thread == a->thread)) {
			a->stamp[o->name] = a->now;
			add(a, o->name, v);
		}
		lo = mid + 1;
	}
}

static void add_launch(struct ranges_acc *a, uint32_t name, uint64_t v)
{
	a->t->rows[name].launches += v;
}

static void add_gpu(struct ranges_acc *a, uint32_t name, uint64_t v)
{
	a->t->rows[name].gpu_ns += v;
}

void ranges_call(struct ranges_acc *a, const struct m_call *c)
{
	if (!a->n || (c->kind != MC_LAUNCH && c->kind != MC_GRAPH_LAUNCH))
		return;
	a->now++;
	a->thread = c->thread;
	stab(a, 0, a->n, c->t0, add_launch, 1);
}

void ranges_op(struct ranges_acc *a, const struct m_gpu_op *g, const struct m_call *call)
{
	if (!a->n || !call || g->end <= g->start)
		return;
	a->now++;
	a->thread = call->thread;
	stab(a, 0, a->n, call->t0, add_gpu, g->end - g->start);
}

/* Each occurrence overlapping the piece in hand: the most overlap per name. */
static void overlap(struct ranges_acc *a, size_t lo, size_t hi)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nvtx_occ *o = &a->occ[mid];
		uint64_t from, to;

		if (a->max_end[mid] <= a->g0)
			return;
		overlap(a, lo, mid);
		if (o->start >= a->g1)
			return;
		from = o->start > a->g0 ? o->start : a->g0;
		to = o->end < a->g1 ? o->end : a->g1;
		if (to > from) {
			if (a->stamp[o->name] != a->now) {
				a->stamp[o->name] = a->now;
				a->best[o->name] = 0;
				XGROW(a->touched, a->touched_cap, a->nr_touched + 1);
				a->touched[a->nr_touched++] = o->name;
			}
			if (to - from > a->best[o->name])
				a->best[o->name] = to - from;
		}
		lo = mid + 1;
	}
}

void ranges_idle(struct ranges_acc *a, uint64_t start, uint64_t end, int part)
{
	size_t i;

	if (!a->n || end <= start)
		return;
	a->now++;
	a->g0 = start;
	a->g1 = end;
	a->nr_touched = 0;
	overlap(a, 0, a->n);
	for (i = 0; i < a->nr_touched; i++) {
		struct range_row *row = &a->t->rows[a->touched[i]];

		row->idle_ns += a->best[a->touched[i]];
		if (part >= 0 && part < RANGES_NR_PARTS)
			row->idle[part] += a->best[a->touched[i]];
	}
}

static int cmp_host(const void *a, const void *b)
{
	const struct range_row *x = a, *y = b;

	if (x->host_ns != y->host_ns)
		return x->host_ns > y->host_ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

void ranges_end(struct ranges_acc *a)
{
	struct range_table *t = a->t;
	size_t i, n = 0;

	/* Rows of names with no occurrence in the window go. */
	for (i = 0; i < t->nr_rows; i++)
		if (t->rows[i].count)
			t->rows[n++] = t->rows[i];
	t->nr_rows = n;
	xqsort(t->rows, t->nr_rows, sizeof(*t->rows), cmp_host);
	free(a->occ);
	free(a->max_end);
	free(a->stamp);
	free(a->best);
	free(a->touched);
	free(a);
}

void ranges_free(struct range_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

int range_top_cause(const struct range_row *r)
{
	int k, best = -1;

	for (k = 0; k < NR_CAUSES; k++)
		if (r->idle[k] && (best < 0 || r->idle[k] > r->idle[best]))
			best = k;
	return best;
}
