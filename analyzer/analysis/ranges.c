// SPDX-License-Identifier: MIT
/*
 * ranges.c - the NVTX range table (ranges.h). The window's occurrences, sorted by start, form
 * an implicit interval tree (each middle element holds the latest end of its half-open span):
 * a time or a gap finds the occurrences over it in O(log n + found). Each row is counted once
 * per call, operation and idle piece however its occurrences nest (a stamp per row). Memory: 24
 * bytes an occurrence in the window, ~200 a name. Pure.
 */
#include "ranges.h"

#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "util/util.h"

_Static_assert(RANGES_NR_PARTS == NR_GAP_PARTS, "a range's idle parts are a gap's");

struct ranges_acc {
	struct range_table *t;
	const struct nvtx_occ *occ;	/* the window's, by start (the first look's) */
	uint64_t *max_end;		/* the tree: the latest end of each middle's span */
	size_t n;
	uint32_t *row_of;		/* each name slot's row */
	uint64_t *stamp;		/* per row: the last event counted */
	uint64_t *best;			/* per row: the most overlap of the piece in hand */
	uint32_t *touched;		/* rows the piece in hand overlaps */
	size_t nr_touched, touched_cap;
	size_t *hits;			/* occurrences over the call or piece in hand */
	size_t nr_hits, hits_cap;
	uint64_t now;			/* the event in hand's stamp */
	uint64_t g0, g1;		/* what find looks over */
};

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

/* A copy of @n bytes of @s that the table owns. */
static const char *t_own(struct range_table *t, const char *s, size_t n)
{
	XGROW(t->owned, t->owned_cap, t->nr_owned + 1);
	t->owned[t->nr_owned] = xstrndup(s, n);
	return t->owned[t->nr_owned++];
}

/*
 * The name a row shows: PyTorch's emit_nvtx() names each operator's range "aten::addmm, seq = 45,
 * op_id = 569" (and sizes, input ids): one row per operator, cut before ", seq = " or
 * ", op_id = ". Others as they are. Returns the length kept.
 */
static size_t shown_len(const char *name)
{
	const char *cut = strstr(name, ", seq = "), *op = strstr(name, ", op_id = ");

	if (!cut || (op && op < cut))
		cut = op;
	return cut ? (size_t)(cut - name) : strlen(name);
}

struct name_key {
	uint32_t domain, slot;
	const char *name;
	size_t len;
};

static int cmp_key(const void *a, const void *b)
{
	const struct name_key *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* One row per shown name and domain (the names past the limit: a row of their own). */
static void group_names(struct ranges_acc *a, const struct model *m, const struct nvtx_ranges *r)
{
	struct range_table *t = a->t;
	struct name_key *k = xmalloc((r->nr_names + 1) * sizeof(*k));
	size_t i, n = 0;

	a->row_of = xcalloc(r->nr_names + 1, sizeof(*a->row_of));
	t->rows = xcalloc(r->nr_names + 1, sizeof(*t->rows));
	for (i = 0; i < r->nr_names; i++) {
		const char *name = i == NVTX_RANGES_OTHER ?
					   "(other names)" :
					   model_string(m, r->names[i].name, "(unnamed)");

		k[i] = (struct name_key){ i == NVTX_RANGES_OTHER ? UINT32_MAX : r->names[i].domain,
					  (uint32_t)i, name, shown_len(name) };
	}
	xqsort(k, r->nr_names, sizeof(*k), cmp_key);
	for (i = 0; i < r->nr_names; i++) {
		struct range_row *row;

		if (!n || k[i].domain != k[i - 1].domain || k[i].len != k[i - 1].len ||
		    memcmp(k[i].name, k[i - 1].name, k[i].len)) {
			row = &t->rows[n++];
			row->name = k[i].name[k[i].len] ? t_own(t, k[i].name, k[i].len) : k[i].name;
			row->domain = k[i].domain == UINT32_MAX ? NULL :
								  domain_name(m, k[i].domain);
		}
		row = &t->rows[n - 1];
		row->is_start_end |= r->names[k[i].slot].is_start_end;
		a->row_of[k[i].slot] = (uint32_t)(n - 1);
	}
	t->nr_rows = n;
	free(k);
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
	group_names(a, m, r);
	/* The window's: those beginning in [lo, hi) of the first look's, sorted by start. */
	for (i = 0; i < r->nr_occ && r->occ[i].start < lo; i++)
		;
	a->occ = r->nr_occ ? &r->occ[i < r->nr_occ ? i : 0] : NULL;
	for (; i < r->nr_occ && r->occ[i].start < hi; i++) {
		const struct nvtx_occ *o = &r->occ[i];

		t->rows[a->row_of[o->name]].count++;
		t->rows[a->row_of[o->name]].host_ns += o->end - o->start;
		a->n++;
	}
	t->nr_in_window = a->n;
	a->max_end = xmalloc((a->n + 1) * sizeof(*a->max_end));
	build(a, 0, a->n);
	a->stamp = xcalloc(t->nr_rows + 1, sizeof(*a->stamp));
	a->best = xcalloc(t->nr_rows + 1, sizeof(*a->best));
	return a;
}

/* Every occurrence overlapping [a->g0, a->g1) into a->hits. */
static void find(struct ranges_acc *a, size_t lo, size_t hi)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nvtx_occ *o = &a->occ[mid];

		if (a->max_end[mid] <= a->g0)
			return;
		find(a, lo, mid);
		if (o->start >= a->g1)
			return;
		if (o->end > a->g0) {
			XGROW(a->hits, a->hits_cap, a->nr_hits + 1);
			a->hits[a->nr_hits++] = mid;
		}
		lo = mid + 1;
	}
}

/* The occurrences over [@g0, @g1) into a->hits, a new stamp for what they count. */
static void find_over(struct ranges_acc *a, uint64_t g0, uint64_t g1)
{
	a->now++;
	a->g0 = g0;
	a->g1 = g1;
	a->nr_hits = 0;
	find(a, 0, a->n);
}

/*
 * The rows a call of thread @thread at @t counts for, once each: its thread's push/pop ranges
 * open then — or, when its thread has none open, every thread's (work handed to a helper
 * thread, as PyTorch's autograd runs backward on its own, is the range's that handed it) —
 * and the start/end ranges open then, which belong to no thread.
 */
static void count_call(struct ranges_acc *a, uint32_t thread, uint64_t t,
		       void (*add)(struct ranges_acc *, uint32_t, uint64_t), uint64_t v)
{
	int is_own = 0;
	size_t i;

	find_over(a, t, t + 1);		/* open at @t */
	for (i = 0; i < a->nr_hits; i++)
		is_own |= a->occ[a->hits[i]].thread == thread;
	for (i = 0; i < a->nr_hits; i++) {
		const struct nvtx_occ *o = &a->occ[a->hits[i]];

		if (is_own && o->thread != thread && o->thread != NVTX_RANGES_ANY_THREAD)
			continue;
		uint32_t row = a->row_of[o->name];

		if (a->stamp[row] == a->now)
			continue;
		a->stamp[row] = a->now;
		add(a, row, v);
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
	count_call(a, c->thread, c->t0, add_launch, 1);
}

void ranges_op(struct ranges_acc *a, const struct m_gpu_op *g, const struct m_call *call)
{
	if (!a->n || !call || g->end <= g->start)
		return;
	count_call(a, call->thread, call->t0, add_gpu, g->end - g->start);
}

void ranges_idle(struct ranges_acc *a, uint64_t start, uint64_t end, int part)
{
	size_t i;

	if (!a->n || end <= start)
		return;
	find_over(a, start, end);
	a->nr_touched = 0;
	for (i = 0; i < a->nr_hits; i++) {	/* the most overlap per row */
		const struct nvtx_occ *o = &a->occ[a->hits[i]];
		uint32_t row = a->row_of[o->name];
		uint64_t from = o->start > start ? o->start : start;
		uint64_t to = o->end < end ? o->end : end;

		if (a->stamp[row] != a->now) {
			a->stamp[row] = a->now;
			a->best[row] = 0;
			XGROW(a->touched, a->touched_cap, a->nr_touched + 1);
			a->touched[a->nr_touched++] = row;
		}
		if (to - from > a->best[row])
			a->best[row] = to - from;
	}
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
	free(a->max_end);
	free(a->stamp);
	free(a->best);
	free(a->touched);
	free(a->hits);
	free(a->row_of);
	free(a);
}

void ranges_free(struct range_table *t)
{
	size_t i;

	for (i = 0; i < t->nr_owned; i++)
		free(t->owned[i]);
	free(t->owned);
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
