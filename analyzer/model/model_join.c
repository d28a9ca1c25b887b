// SPDX-License-Identifier: MIT
/*
 * model_join.c - each GPU operation joined to the call that caused it: as the records are
 * read (the early join: an operation meets its API record in a table of correlation numbers,
 * then the call on that record's thread), or after loading (by an older shim's pushed ids,
 * by API record, and as a last resort by launch order). Used by model.c's loading and by
 * model_stream.c (model_internal.h). Never prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "util/util.h"

/* ---- After loading: the tables sorted by correlation number ---- */

static uint64_t key_corr(const void *a)
{
	return ((const struct m_corr *)a)->cupti_corr;
}

static int cmp_corr(const void *a, const void *b)
{
	const struct m_corr *x = a, *y = b;

	return x->cupti_corr < y->cupti_corr ? -1 : x->cupti_corr > y->cupti_corr;
}

static uint64_t key_api_join(const void *a)
{
	return ((const struct m_api_join *)a)->cupti_corr;
}

static int cmp_api_join(const void *a, const void *b)
{
	const struct m_api_join *x = a, *y = b;

	return x->cupti_corr < y->cupti_corr ? -1 : x->cupti_corr > y->cupti_corr;
}

/*
 * The calls that carry a correlation number, to find the call of an external id
 * (TRACE_CORR_ID: the shim's thread index and the call's seq). Per thread slot, (seq << 32 |
 * call index) ascending: a slot's calls come in time order, so by seq, and sorting them is a
 * check. 8 bytes a call.
 */
struct seq_list {
	uint64_t *v;
	size_t n, cap;
	size_t hint;			/* where the last search ended (lookups come in order) */
};

struct ext_calls {
	struct seq_list *slot;		/* by thread slot */
	uint64_t *order;		/* thread index << 32 | slot, ascending */
	size_t nr_slots;
};

/*
 * Without GPU_CORR records (the shim writes none since it stopped pushing ids) no list is made:
 * the lookup finds no thread slot. The seqs are in the order the calls were read; @moved says
 * where the sort put each call (NULL: nowhere else).
 */
static void ext_calls_make(struct ext_calls *x, const struct model *m, const uint32_t *moved)
{
	size_t i, j;

	if (!m->nr_corrs || !m->call_seq) {
		*x = (struct ext_calls){ NULL, NULL, 0 };
		return;
	}
	x->nr_slots = m->nr_threads;
	x->slot = xcalloc(m->nr_threads + 1, sizeof(*x->slot));
	x->order = xcalloc(m->nr_threads + 1, sizeof(*x->order));
	for (i = 0; i < m->nr_threads; i++)
		x->order[i] = (uint64_t)m->threads[i].index << 32 | i;
	xsort_u64(x->order, m->nr_threads);
	for (j = 0; j < m->nr_calls && j < M_NO_CALL; j++) {
		const struct m_call *c;
		struct seq_list *l;

		i = moved ? moved[j] : j;
		c = &m->calls[i];
		if (!m->call_seq[j] || c->thread >= m->nr_threads)
			continue;
		l = &x->slot[c->thread];
		XGROW(l->v, l->cap, l->n + 1);
		l->v[l->n++] = (uint64_t)m->call_seq[j] << 32 | i;
	}
	for (i = 0; i < m->nr_threads; i++)
		xsort_u64(x->slot[i].v, x->slot[i].n);
}

static void ext_calls_free(struct ext_calls *x)
{
	size_t i;

	for (i = 0; i < x->nr_slots; i++)
		free(x->slot[i].v);
	free(x->slot);
	free(x->order);
}

struct u64_query {
	const uint64_t *v;
	uint64_t at_least;
};

static int u64_reached(size_t i, const void *ctx)
{
	const struct u64_query *q = ctx;

	return q->v[i] >= q->at_least;
}

/* The call of external id @ext, or -1: the first of the calls that carry it (a hostile trace
 * can repeat one). */
static int64_t ext_call(struct ext_calls *x, uint64_t ext)
{
	const uint64_t index = ext >> 32, seq = (uint32_t)ext;
	struct u64_query q = { x->order, index << 32 };
	size_t o = gallop_search(x->nr_slots, 0, u64_reached, &q);
	int64_t best = -1;

	for (; o < x->nr_slots && x->order[o] >> 32 == index; o++) {
		struct seq_list *l = &x->slot[(uint32_t)x->order[o]];
		size_t p;

		q = (struct u64_query){ l->v, seq << 32 };
		p = l->hint = gallop_search(l->n, l->hint, u64_reached, &q);
		if (p < l->n && l->v[p] >> 32 == seq && (best < 0 || (uint32_t)l->v[p] < best))
			best = (uint32_t)l->v[p];
	}
	return best;
}

static int cmp_tct(const void *a, const void *b)
{
	const struct thread_calls_by_tid *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct thread_calls_by_tid *calls_by_thread(const struct model *m, size_t *n_out)
{
	struct thread_calls_by_tid *v = xcalloc(m->nr_threads + 1, sizeof(*v));
	size_t i, n = 0;

	/* One entry per distinct tid. */
	for (i = 0; i < m->nr_threads; i++)
		v[n++].tid = m->threads[i].tid;
	xqsort(v, n, sizeof(*v), cmp_tct);
	{
		size_t j = 0;

		for (i = 0; i < n; i++)
			if (!j || v[j - 1].tid != v[i].tid)
				v[j++] = v[i];
		n = j;
	}
	for (i = 0; i < m->nr_calls && i < M_NO_CALL; i++) {
		const struct m_call *c = &m->calls[i];
		struct thread_calls_by_tid key, *t;

		if (c->thread >= m->nr_threads)
			continue;
		key.tid = m->threads[c->thread].tid;
		t = bsearch(&key, v, n, sizeof(*v), cmp_tct);
		if (!t)
			continue;
		XGROW(t->idx, t->cap, t->n + 1);
		t->idx[t->n++] = (uint32_t)i;
	}
	*n_out = n;
	return v;
}

struct first_after_query {
	const struct model *m;
	size_t calls_base;
	const uint32_t *idx;
	uint64_t t;
};

static int is_after(size_t i, const void *ctx)
{
	const struct first_after_query *q = ctx;

	return q->m->calls[q->idx[i] - q->calls_base].t0 > q->t;
}

/*
 * Of the calls idx[0..n) (call numbers, in time order), the first that starts after @t, or n.
 * Gallops from @hint (where the last search ended): O(1) for searches that move forward with
 * time, O(log n) always.
 */
static size_t first_after(const struct model *m, size_t calls_base, const uint32_t *idx,
			  size_t n, size_t hint, uint64_t t)
{
	struct first_after_query q = { m, calls_base, idx, t };

	return gallop_search(n, hint, is_after, &q);
}

/*
 * The GPU-work call of the API record's thread whose interval overlaps the record most: calls
 * of one thread never overlap, so it is the last one starting before the record ends, or (for
 * clock skew at the edges) the one before. The search steps, then gallops, from where the
 * thread's last one ended: O(1) for records in time order, O(log n) whatever the input.
 */
int64_t model_call_in_thread(const struct model *m, size_t calls_base,
			     struct thread_calls_by_tid *t, const struct m_api_join *a)
{
	uint64_t best = 0;
	int64_t call = -1;
	size_t lo, k;

	if (!t || !t->n)
		return -1;
	lo = t->hint < t->n ? t->hint : t->n;
	for (k = 0; k < 4 && lo < t->n && m->calls[t->idx[lo] - calls_base].t0 <= a->end; k++)
		lo++;
	if ((lo < t->n && m->calls[t->idx[lo] - calls_base].t0 <= a->end) ||
	    (lo > 0 && m->calls[t->idx[lo - 1] - calls_base].t0 > a->end))
		lo = first_after(m, calls_base, t->idx, t->n, t->hint, a->end);
	t->hint = lo;
	for (k = 0; k < 2 && lo > k; k++) {
		const struct m_call *c = &m->calls[t->idx[lo - 1 - k] - calls_base];
		uint64_t s0 = c->t0 > a->start ? c->t0 : a->start;
		uint64_t e0 = c->t1 < a->end ? c->t1 : a->end;

		if (model_call_is_gpu_work(c) && e0 >= s0 && e0 - s0 + 1 > best) {
			best = e0 - s0 + 1;
			call = (int64_t)t->idx[lo - 1 - k];
		}
	}
	return call;
}

static int64_t call_at(const struct model *m, struct thread_calls_by_tid *bt, size_t nbt,
		       const struct m_api_join *a)
{
	struct thread_calls_by_tid key = { .tid = a->tid };

	return model_call_in_thread(m, 0, bsearch(&key, bt, nbt, sizeof(*bt), cmp_tct), a);
}

/* ---- The join as the records come (the default) ---- */

/*
 * GPU operations are joined while the trace is read, so that its API records (24 bytes an
 * operation) need not all be held to the end. An operation and its API record (the same CUPTI
 * correlation number, in either order, a few thousand records apart in real traces) meet in a
 * table indexed by the number's low bits: CUPTI numbers its records in turn, so the records
 * still to meet take distinct slots, and one that would take a slot still held by an older
 * number lets the older go. The call an API record names is then found among its thread's
 * calls as call_at() finds it after loading, once that thread has a call starting after the
 * API record ended (until then, or the end of the trace, the pair waits). It gives the join
 * after loading's answer, or the load starts over with that join: when a thread's calls come
 * out of time order, or a record names a number at or below one the table let go of (an API
 * record or an operation that far behind the others; it cannot tell whether its partner came).
 * The table and the waits: model_internal.h (model_stream's second read uses the join too).
 */
static void early_fail(struct early_join *ej, const char *why)
{
	if (!ej->failed)
		ej->failed = why;
}

/* Has the table let go of @corr, or can it not tell? */
static int early_behind(const struct early_join *ej, uint32_t corr)
{
	return ej->let_go && corr <= ej->let_go_hi;
}

static void early_let_go(struct early_join *ej, uint32_t corr)
{
	if (!ej->let_go || corr > ej->let_go_hi)
		ej->let_go_hi = corr;
	ej->let_go = 1;
}

/* @corr's slot of the API records' table and the waits' (each allocated on first use). */
static struct early_join_api *early_api_slot(struct early_join *ej, uint32_t corr)
{
	if (!ej->api)
		ej->api = xcalloc(ej->slots, sizeof(*ej->api));
	return &ej->api[corr & (ej->slots - 1)];
}

static struct early_join_wait *early_wait_slot(struct early_join *ej, uint32_t corr)
{
	if (!ej->wait)
		ej->wait = xcalloc(ej->slots, sizeof(*ej->wait));
	return &ej->wait[corr & (ej->slots - 1)];
}

/* The calls of thread id @tid so far; NULL when it has none and @create is 0. */
struct thread_calls_by_tid *model_early_join_tid(struct early_join *ej, uint32_t tid, int create)
{
	size_t i;

	if (ej->nr_tids && ej->tids[ej->last_tid].tid == tid)
		return &ej->tids[ej->last_tid];
	for (i = 0; i < ej->nr_tids; i++)
		if (ej->tids[i].tid == tid) {
			ej->last_tid = i;
			return &ej->tids[i];
		}
	if (!create)
		return NULL;
	XGROW(ej->tids, ej->tids_cap, ej->nr_tids + 1);
	memset(&ej->tids[ej->nr_tids], 0, sizeof(*ej->tids));
	ej->tids[ej->nr_tids].tid = tid;
	ej->last_tid = ej->nr_tids;
	return &ej->tids[ej->nr_tids++];
}

/* Call @idx was read: it joins its thread id's calls, which must come in time order. */
void model_early_join_call(struct model *m, struct early_join *ej, size_t idx)
{
	const struct m_call *c = mcall(m, ej, idx);
	struct thread_calls_by_tid *t;

	if (idx >= M_NO_CALL || c->thread >= m->nr_threads)
		return;		/* no join target (the join after loading skips it too) */
	t = model_early_join_tid(ej, m->threads[c->thread].tid, 1);
	if (t->n) {
		const struct m_call *last = mcall(m, ej, t->idx[t->n - 1]);

		/* Sorted calls order equal starts by thread slot: two slots of one tid, redo. */
		if (c->t0 < last->t0 || (c->t0 == last->t0 && c->thread != last->thread))
			early_fail(ej, "a thread's calls out of time order");
	}
	XGROW(t->idx, t->cap, t->n + 1);
	t->idx[t->n++] = (uint32_t)idx;
}

/* Operation @op and its API record @a met: its call, or a wait for the thread's next call. */
static void early_resolve(struct model *m, struct early_join *ej, uint32_t op,
		       const struct m_api_join *a)
{
	struct thread_calls_by_tid *t = model_early_join_tid(ej, a->tid, 0);
	int64_t call;

	if (!t || mcall(m, ej, t->idx[t->n - 1])->t0 <= a->end) {
		XGROW(ej->pend, ej->pend_cap, ej->nr_pend + 1);
		ej->pend[ej->nr_pend++] = (struct early_join_pending){ *a, op };
		mgpu(m, ej, op)->call = M_NO_CALL;
		set_state(ej, op, GS_PEND);
		return;
	}
	call = model_call_in_thread(m, ej->calls_base, t, a);
	mgpu(m, ej, op)->call = call >= 0 ? (uint32_t)call : M_NO_CALL;
	set_state(ej, op, GS_DONE);
}

/* The operations of wait slot @w give up: they stay unjoined. */
static void early_drop_waits(struct model *m, struct early_join *ej, struct early_join_wait *w)
{
	uint32_t op, next;

	for (op = w->op; op != M_NO_CALL; op = next) {
		next = mgpu(m, ej, op)->call;
		mgpu(m, ej, op)->call = M_NO_CALL;
		set_state(ej, op, GS_DONE);
	}
	w->key = 0;
}

void model_early_join_api(struct model *m, struct early_join *ej, const struct m_api_join *a)
{
	const uint32_t key = a->cupti_corr + 1;
	struct early_join_api *e;
	struct early_join_wait *w;
	uint32_t op, next;

	if (!key) {
		early_fail(ej, "correlation number 2^32 - 1");
		return;
	}
	e = early_api_slot(ej, a->cupti_corr);
	if (e->key == key)
		return;		/* the first record of a number is the one that joins */
	if (early_behind(ej, a->cupti_corr)) {
		early_fail(ej, "an API record behind the window");
		return;
	}
	if (e->key)
		early_let_go(ej, e->key - 1);
	*e = (struct early_join_api){ a->start, a->end, key, a->tid };
	w = early_wait_slot(ej, a->cupti_corr);
	if (w->key != key)
		return;
	for (op = w->op; op != M_NO_CALL; op = next) {
		next = mgpu(m, ej, op)->call;
		early_resolve(m, ej, op, a);
	}
	w->key = 0;
}

void model_early_join_op(struct model *m, struct early_join *ej, size_t op)
{
	const uint32_t corr = m->gpu_corr[op - ej->gpu_base], key = corr + 1;
	const struct early_join_api *e;
	struct early_join_wait *w;

	if (op >= M_NO_CALL)
		return;		/* more operations than calls can have: never joined */
	if (!key) {
		early_fail(ej, "correlation number 2^32 - 1");
		return;
	}
	e = early_api_slot(ej, corr);
	if (e->key == key) {
		const struct m_api_join a = { e->start, e->end, corr, e->tid };

		early_resolve(m, ej, (uint32_t)op, &a);
		return;
	}
	if (early_behind(ej, corr)) {
		early_fail(ej, "an operation behind the window");
		return;
	}
	w = early_wait_slot(ej, corr);
	if (w->key && w->key != key) {
		early_let_go(ej, w->key - 1);	/* their API record never came in the window */
		early_drop_waits(m, ej, w);
	}
	if (!w->key)
		*w = (struct early_join_wait){ key, M_NO_CALL };
	mgpu(m, ej, op)->call = w->op;
	w->op = (uint32_t)op;
	set_state(ej, op, GS_WAIT);
}

/* The end of the trace: the pairs that waited for their thread's next call are joined now,
 * the operations whose API record never came stay unjoined. */
void model_early_join_finish(struct model *m, struct early_join *ej)
{
	size_t i;

	for (i = 0; i < ej->nr_pend; i++) {
		int64_t call = model_call_in_thread(m, ej->calls_base,
						     model_early_join_tid(ej, ej->pend[i].a.tid, 0),
						     &ej->pend[i].a);

		mgpu(m, ej, ej->pend[i].op)->call = call >= 0 ? (uint32_t)call : M_NO_CALL;
		set_state(ej, ej->pend[i].op, GS_DONE);
	}
	ej->nr_pend = 0;
	for (i = 0; ej->wait && i < ej->slots; i++)
		if (ej->wait[i].key)
			early_drop_waits(m, ej, &ej->wait[i]);
}

void model_early_join_free(struct early_join *ej)
{
	size_t i;

	for (i = 0; i < ej->nr_tids; i++)
		free(ej->tids[i].idx);
	free(ej->tids);
	free(ej->api);
	free(ej->wait);
	free(ej->pend);
	memset(ej, 0, sizeof(*ej));
}

struct corr_query {
	const struct model *m;
	uint32_t corr;
};

static int corr_reached(size_t i, const void *ctx)
{
	const struct corr_query *q = ctx;

	return q->m->corrs[i].cupti_corr >= q->corr;
}

static int api_reached(size_t i, const void *ctx)
{
	const struct corr_query *q = ctx;

	return q->m->api_joins[i].cupti_corr >= q->corr;
}

/*
 * Join each GPU operation to its call: first by the external id an earlier shim pushed around
 * the call (GPU_CORR, older traces), then by the API record's thread and interval (GPU_API:
 * the call on that thread whose interval overlaps it). See trace_format.h.
 */
void model_join_gpu(struct model *m, int is_early, const uint32_t *moved)
{
	struct ext_calls by_ext;
	struct thread_calls_by_tid *by_thread = NULL;
	size_t i, nr_by_thread = 0, ci = 0, ai = 0;

	/* The tables first: their sorts' scratch memory is gone before by_ext is made. */
	xsort_by(m->corrs, m->nr_corrs, sizeof(*m->corrs), key_corr, cmp_corr);
	xsort_by(m->api_joins, m->nr_api_joins, sizeof(*m->api_joins), key_api_join,
		 cmp_api_join);
	ext_calls_make(&by_ext, m, moved);
	free(m->call_seq);		/* read only for the lists */
	m->call_seq = NULL;
	if (!is_early)
		by_thread = calls_by_thread(m, &nr_by_thread);

	/*
	 * Operations in start order have nearly ascending correlation numbers: each lookup in the
	 * two tables (sorted by them) gallops from where the last one ended.
	 */
	for (i = 0; i < m->nr_gpu; i++) {
		struct m_gpu_op *g = &m->gpu[i];
		const uint32_t corr = m->gpu_corr[i];
		struct corr_query q = { m, corr };
		/* Joined as it was read: through its API record, unless its pushed id says else. */
		const int64_t early = is_early && g->call != M_NO_CALL ? (int64_t)g->call : -1;
		int64_t call = -1;
		int is_by_api = 0;

		ci = gallop_search(m->nr_corrs, ci, corr_reached, &q);
		ai = gallop_search(m->nr_api_joins, ai, api_reached, &q);
		if (ci < m->nr_corrs && m->corrs[ci].cupti_corr == corr) {
			call = ext_call(&by_ext, m->corrs[ci].ext_id);
			m->gpu_joined_by_corr += call >= 0;
		}
		if (call < 0 && is_early) {
			call = early;
			is_by_api = call >= 0;
		} else if (call < 0 && ai < m->nr_api_joins &&
			   m->api_joins[ai].cupti_corr == corr) {
			call = call_at(m, by_thread, nr_by_thread, &m->api_joins[ai]);
			is_by_api = call >= 0;
		}
		if (call >= (int64_t)M_NO_CALL)
			call = -1;	/* 2^32 calls: more than any memory holds */
		m->gpu_joined_by_api += is_by_api;
		g->call = call >= 0 ? (uint32_t)call : M_NO_CALL;
		if (call >= 0) {
			m->calls[call].flags |= MCF_HAS_GPU;
			m->gpu_joined++;
		} else {
			m->gpu_unjoined++;
		}
		if (model_gpu_shape(m, g)->graph_id) {
			m->gpu_graph_ops++;
			m->gpu_graph_ops_to_launch +=
				call >= 0 && m->calls[call].kind == MC_GRAPH_LAUNCH;
		}
	}
	for (i = 0; i < nr_by_thread; i++)
		free(by_thread[i].idx);
	free(by_thread);
	ext_calls_free(&by_ext);
	/* The analysis needs them no more: memory for what comes next. */
	free(m->corrs);
	free(m->api_joins);
	m->corrs = NULL;
	m->api_joins = NULL;
	m->nr_corrs = m->corrs_cap = m->nr_api_joins = m->api_joins_cap = 0;
}

struct order_item {
	uint64_t key;			/* order_key() */
	uint64_t win;			/* the host-only stretches before @t: its window */
	uint64_t t;			/* call t0, or kernel start */
	size_t idx;
};

/* By window, then time (calls made after a window's end: model_join_by_order). */
static int cmp_after(const void *a, const void *b)
{
	const struct order_item *x = a, *y = b;

	if (x->win != y->win)
		return x->win < y->win ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* By kernel (or size), then window and time. */
static int cmp_order(const void *a, const void *b)
{
	const struct order_item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return cmp_after(a, b);
}

/* What an operation and its call have in common: the kernel's name, a copy's or set's size. */
#define ORDER_KEY(kind, v) ((uint64_t)(kind) << 56 | ((uint64_t)(v) & ((1ull << 56) - 1)))

static int order_key_op(const struct model *m, const struct m_gpu_op *g, uint64_t *key)
{
	const struct m_gpu_shape *sh = model_gpu_shape(m, g);

	if (g->call != M_NO_CALL || sh->graph_id)
		return 0;
	*key = ORDER_KEY(sh->kind, sh->kind == MG_KERNEL ? sh->name : sh->bytes);
	return 1;
}

/*
 * A call is a candidate when it began with the kinds on (@c->t0 in no stretch with them off),
 * and belongs to the window it began in: CUPTI makes an operation's record early in the call.
 * One that began before a window's start note and returned after it is left out (its kernel
 * stays unjoined at worst: it started before the window's first candidate, and an operation
 * never pairs with a later launch; taken in, one without a record would shift every pair of
 * its window by one); one still running at a window's end note is taken in (the kinds go off
 * just after the note: left out, one with a record would shift the window's late operations,
 * order_pair_window).
 */
static int order_key_call(const struct model *m, const struct m_stretch *spans, size_t nr_spans,
			  const struct m_call *c, uint64_t *key, uint64_t *win)
{
	size_t j = model_stretches_before(spans, nr_spans, c->t0);
	int off = j < nr_spans && spans[j].from <= c->t0;

	if (c->flags & (MCF_HAS_GPU | MCF_ERROR | MCF_CAPTURING))
		return 0;
	*win = j;
	switch (c->kind) {
	case MC_LAUNCH: {
		uint32_t func = model_launch(m, c)->func;

		if (func >= m->nr_funcs)
			return 0;
		*key = ORDER_KEY(MG_KERNEL, m->funcs[func].name);
		break;
	}
	case MC_COPY:
		*key = ORDER_KEY(MG_MEMCPY, model_call_args(m, c)->bytes);
		break;
	case MC_SET:
		*key = ORDER_KEY(MG_MEMSET, model_call_args(m, c)->bytes);
		break;
	default:
		return 0;
	}
	/* 2: made after window @j's end note, with the kinds off or about to go off. */
	return off ? 2 : 1;
}

/*
 * The window of an operation that started at @t: the host-only stretches before it. One that
 * started between two windows ran late work of the window before (launched there, started
 * after its end) or work launched as the next one's kinds went on (started before its note,
 * its call left out: it stays unjoined): the nearer window's.
 */
static uint64_t order_window(const struct m_stretch *spans, size_t nr_spans, uint64_t t)
{
	size_t j = model_stretches_before(spans, nr_spans, t);

	if (j < nr_spans && spans[j].from <= t && spans[j].to != UINT64_MAX &&
	    t - spans[j].from > spans[j].to - t)
		return j + 1;
	return j;
}

static void order_pair(struct model *m, const struct order_item *op, const struct order_item *c)
{
	if (c->idx >= M_NO_CALL)
		return;
	m->gpu[op->idx].call = (uint32_t)c->idx;
	m->calls[c->idx].flags |= MCF_HAS_GPU;
	m->gpu_joined++;
	m->gpu_unjoined--;
	m->gpu_joined_by_order++;
}

/*
 * One window's operations @ops[0..@no) and calls @c[0..@nc) of one kernel (or size), in time
 * order; the window's GPU timestamps end at @end. Every call in a window made its operation's
 * record; the shim drops the records of the operations still running at the close (their
 * times are not reliable), and keeps those that started after it. So the operations that
 * started before @end are the first calls' (each pairs with the first call left that came
 * before it; one with none before it stays unjoined), and those that started after @end are
 * the last calls': paired from the end, they skip the launches whose operations were dropped
 * in between instead of each taking the launch before its own.
 */
/*
 * The operations of @ops[0..@no) that started before @end each take the first call of
 * @c[0..@nc) left that came before them (paired into @m unless it is NULL: counted only).
 * Returns the calls they took; *@late_out, how many operations started before @end.
 */
static size_t order_early(struct model *m, const struct order_item *ops, size_t no,
			  const struct order_item *c, size_t nc, uint64_t end, size_t *late_out)
{
	size_t a, b = 0;

	for (a = 0; a < no && ops[a].t < end; a++)
		if (b < nc && c[b].t <= ops[a].t) {
			if (m)
				order_pair(m, &ops[a], &c[b]);
			b++;
		}
	*late_out = a;
	return b;
}

static void order_pair_window(struct model *m, const struct order_item *ops, size_t no,
			      const struct order_item *c, size_t nc, uint64_t end)
{
	size_t a, b, late, k, skip;

	b = order_early(m, ops, no, c, nc, end, &late);
	k = no - late;
	skip = k > nc - b ? k - (nc - b) : 0;	/* more late operations than calls left */
	for (a = skip; a < k; a++)
		order_pair(m, &ops[late + a], &c[nc - k + a]);
}

/* (@x) against (@key, @win): the order the tables are sorted in. */
static int order_group_cmp(const struct order_item *x, uint64_t key, uint64_t win)
{
	if (x->key != key)
		return x->key < key ? -1 : 1;
	return x->win < win ? -1 : x->win > win;
}

/*
 * For each window, how many more operations started after its end than it has calls left for
 * them (order_pair_window's pairing simulated, group by group: the operations that started
 * after the end, less the calls the earlier ones did not take), into @excess[win].
 */
static void order_excess(const struct order_item *ops, size_t no, const struct order_item *c,
			 size_t nc, const struct m_stretch *spans, size_t nr_spans, int64_t *excess)
{
	size_t a = 0, b = 0;

	while (a < no || b < nc) {
		const struct order_item *g = a < no && (b >= nc || order_group_cmp(&ops[a], c[b].key,
									      c[b].win) <= 0)
						     ? &ops[a] : &c[b];
		uint64_t key = g->key, win = g->win;
		uint64_t end = win < nr_spans ? spans[win].from : UINT64_MAX;
		size_t a1 = a, b1 = b, late, taken;

		while (a1 < no && !order_group_cmp(&ops[a1], key, win))
			a1++;
		while (b1 < nc && !order_group_cmp(&c[b1], key, win))
			b1++;
		taken = order_early(NULL, ops + a, a1 - a, c + b, b1 - b, end, &late);
		if (win <= nr_spans)
			excess[win] += (int64_t)(a1 - a - late) - (int64_t)(b1 - b - taken);
		a = a1;
		b = b1;
	}
}

/*
 * The records each window dropped at its close ("records dropped at sampled window N's close:
 * D in all", noted at the earliest dropped start, inside the window), into @dropped[win].
 */
static void order_dropped(const struct model *m, const struct m_stretch *spans, size_t nr_spans,
			  int64_t *dropped)
{
	size_t i;

	for (i = 0; i < m->nr_notes; i++) {
		const char *t;
		unsigned long long d;
		unsigned w;

		if (m->notes[i].kind != TRACE_NOTE_CUPTI_OFF)
			continue;
		t = model_string(m, m->notes[i].text, "");
		if (sscanf(t, "records dropped at sampled window %u's close: %llu in all", &w, &d) == 2)
			dropped[model_stretches_before(spans, nr_spans, m->notes[i].ts)] += (int64_t)d;
	}
}

/*
 * Last resort for operations CUPTI gave no usable correlation for (its API records can stay
 * off after another client used CUPTI, and a context created while they were off never
 * gives any): the n-th unjoined execution of a kernel is the n-th unjoined launch of that
 * name, which must come before it; copies and sets pair the same way by size. Calls made
 * while another client held CUPTI, or between two windows, have no record of ours to pair
 * with and are left out. The pairs are counted afresh in each stretch with the kinds on (a
 * window up to its end note, with the stretch after it, where work it launched may start):
 * order_pair_window. The kinds go off just after a window's end note, so the first calls
 * after it may have records too (on another thread, or while the kinds are being turned off):
 * how many is known per window - its operations that started after the end, less the calls
 * left for them and the records dropped at its close - and those first calls after the end,
 * in order, are taken into the window. Without them each of its late operations of their
 * kernel would pair with the launch before its own.
 */
void model_join_by_order(struct model *m)
{
	struct order_item *ops, *calls = NULL, *after = NULL;
	struct m_stretch *spans = NULL;
	size_t i, no = 0, nc = 0, na = 0, a = 0, b = 0, nr_spans = 0;
	uint64_t key, win;

	/* Counted first: most traces have no operation left to join, so no table. */
	for (i = 0; i < m->nr_gpu; i++)
		no += order_key_op(m, &m->gpu[i], &key);
	if (!no)
		return;
	spans = model_kinds_off(m, &nr_spans);
	ops = xmalloc(no * sizeof(*ops));
	for (i = 0, no = 0; i < m->nr_gpu; i++)
		if (order_key_op(m, &m->gpu[i], &key))
			ops[no++] = (struct order_item){ key, order_window(spans, nr_spans,
									    m->gpu[i].start),
							 m->gpu[i].start, i };
	for (i = 0; i < m->nr_calls; i++)
		nc += order_key_call(m, spans, nr_spans, &m->calls[i], &key, &win) != 0;
	calls = xmalloc((nc + 1) * sizeof(*calls));
	after = xmalloc((nc + 1) * sizeof(*after));
	for (i = 0, nc = 0; i < m->nr_calls; i++)
		switch (order_key_call(m, spans, nr_spans, &m->calls[i], &key, &win)) {
		case 1:
			calls[nc++] = (struct order_item){ key, win, m->calls[i].t0, i };
			break;
		case 2:
			after[na++] = (struct order_item){ key, win, m->calls[i].t0, i };
			break;
		}
	xqsort(ops, no, sizeof(*ops), cmp_order);
	xqsort(calls, nc, sizeof(*calls), cmp_order);
	if (na && nr_spans) {
		int64_t *excess = xcalloc(nr_spans + 1, sizeof(*excess));
		size_t taken = 0;

		order_excess(ops, no, calls, nc, spans, nr_spans, excess);
		order_dropped(m, spans, nr_spans, excess);
		/* Each window's first calls after its end, in order: as many as it has late work. */
		xqsort(after, na, sizeof(*after), cmp_after);
		for (i = 0; i < na; i++)
			if (after[i].win < nr_spans && excess[after[i].win] > 0) {
				excess[after[i].win]--;
				calls[nc + taken++] = after[i];
			}
		free(excess);
		if (taken) {
			nc += taken;
			xqsort(calls, nc, sizeof(*calls), cmp_order);
		}
	}
	while (a < no && b < nc) {
		size_t a1 = a, b1 = b;

		if (calls[b].key < ops[a].key ||
		    (calls[b].key == ops[a].key && calls[b].win < ops[a].win)) {
			b++;
			continue;
		}
		if (ops[a].key < calls[b].key || ops[a].win < calls[b].win) {
			a++;
			continue;
		}
		/* One kernel (or size) in one window: its operations and its calls. */
		while (a1 < no && ops[a1].key == ops[a].key && ops[a1].win == ops[a].win)
			a1++;
		while (b1 < nc && calls[b1].key == calls[b].key && calls[b1].win == calls[b].win)
			b1++;
		order_pair_window(m, ops + a, a1 - a, calls + b, b1 - b,
				  ops[a].win < nr_spans ? spans[ops[a].win].from : UINT64_MAX);
		a = a1;
		b = b1;
	}
	free(spans);
	free(ops);
	free(calls);
	free(after);
}


/* ---- The first read's view of the join ---- */

/*
 * The early join's table and each thread's order of calls, without the calls and operations
 * (each thread id's last JOIN_CHECK_RECENT calls as intervals only): what makes the early join
 * fail (model_load then joins after loading) and what the stream could not settle without the
 * whole trace (model_stream then loads it whole in its second read instead): an operation no
 * API record reaches, or one not of a graph whose API record falls in no GPU-work call of its
 * thread (the join by launch order might pair either, and needs every call). An API record is
 * placed among its thread's calls as model_call_in_thread places it, once the thread has a
 * call starting after the record ended; one whose calls were let go already cannot be placed:
 * the stream is not tried.
 */
static void check_join_fail(struct join_check *jc, const char *why)
{
	if (!jc->join_failed)
		jc->join_failed = why;
	if (!jc->stream_failed)
		jc->stream_failed = why;
}

static void check_stream_fail(struct join_check *jc, const char *why)
{
	if (!jc->stream_failed)
		jc->stream_failed = why;
}

static void check_let_go(struct join_check *jc, uint32_t corr)
{
	if (!jc->let_go || corr > jc->let_go_hi)
		jc->let_go_hi = corr;
	jc->let_go = 1;
}

static void check_unjoined(struct join_check *jc)
{
	check_stream_fail(jc, "an operation no API record joined (the join by launch order "
			      "needs the whole trace)");
}

static struct join_check_thread *check_thread(struct join_check *jc, uint32_t tid)
{
	size_t i;

	if (jc->nr_threads && jc->threads[jc->hot].tid == tid)
		return &jc->threads[jc->hot];
	for (i = 0; i < jc->nr_threads; i++)
		if (jc->threads[i].tid == tid)
			return &jc->threads[i];
	return NULL;
}

struct recent_query {
	const struct join_check_thread *t;
	uint64_t t0;
};

static int recent_is_after(size_t i, const void *ctx)
{
	const struct recent_query *q = ctx;
	const uint64_t n = q->t->nr_calls > q->t->recent_cap ? q->t->nr_calls - q->t->recent_cap : 0;

	return q->t->recent[(n + i) & (q->t->recent_cap - 1)].t0 > q->t0;
}

/* API record @a, whose thread has a call starting after it ended: in a GPU-work call? */
static void check_place(struct join_check *jc, const struct join_check_thread *t,
			const struct join_check_api *a)
{
	const uint64_t kept = t->nr_calls < t->recent_cap ? t->nr_calls : t->recent_cap;
	const uint64_t first = t->nr_calls - kept;	/* the oldest call kept */
	struct recent_query q = { t, a->end };
	uint64_t lo;
	size_t k;

	if (!kept) {
		check_stream_fail(jc, "an API record too far behind its thread's calls for the "
				      "first read to place");
		return;
	}
	lo = first + gallop_search(kept, kept - 1, recent_is_after, &q);
	for (k = 0; k < 2 && lo > k; k++) {
		const struct join_check_call *c;
		uint64_t s0, e0;

		if (lo - 1 - k < first) {
			check_stream_fail(jc, "an API record too far behind its thread's calls for "
					      "the first read to place");
			return;
		}
		c = &t->recent[(lo - 1 - k) & (t->recent_cap - 1)];
		s0 = c->t0 > a->start ? c->t0 : a->start;
		e0 = c->t1 < a->end ? c->t1 : a->end;
		if (c->t1 && e0 >= s0)
			return;		/* model_call_in_thread finds a call */
	}
	check_stream_fail(jc, "an operation whose API record falls in no call of its thread (the "
			      "join by launch order needs the whole trace)");
}

/*
 * How many calls thread @t can take on the fast path (model_join_check_call), @n calls read:
 * none while an API record waits for its next call, else until its calls must be moved or
 * 2^32 calls are read.
 */
static void check_room(struct join_check_thread *t, uint64_t n)
{
	if (t->nr_pend || n >= M_NO_CALL)
		t->room = 0;
	else if (t->recent_cap == JOIN_CHECK_RECENT)
		t->room = M_NO_CALL - n;
	else
		t->room = t->recent_cap - t->nr_calls < M_NO_CALL - n ?
			  t->recent_cap - t->nr_calls : M_NO_CALL - n;
}

/* An operation not of a graph met API record @a: placed now, or when its thread is past it. */
static void check_resolve(struct join_check *jc, const struct join_check_api *a)
{
	struct join_check_thread *t = check_thread(jc, a->tid);

	if (jc->stream_failed)
		return;		/* decided already */
	if (!t || t->t0 <= a->end) {
		XGROW(jc->pend, jc->pend_cap, jc->nr_pend + 1);
		jc->pend[jc->nr_pend++] = *a;
		if (t) {
			t->nr_pend++;
			t->room = 0;
		}
		return;
	}
	check_place(jc, t, a);
}

/* The waiting API records of thread @t it is past now (@all: at the end, every one). */
static void check_pending(struct join_check *jc, struct join_check_thread *t, int all)
{
	size_t i, k;

	for (i = 0, k = 0; i < jc->nr_pend; i++) {
		const struct join_check_api *a = &jc->pend[i];

		if (all || (a->tid == t->tid && t->t0 > a->end)) {
			const struct join_check_thread *at = all ? check_thread(jc, a->tid) : t;

			if (!all)
				t->nr_pend--;

			if (!at) {
				check_stream_fail(jc, "an operation whose API record's thread made "
						      "no call (the join by launch order needs the "
						      "whole trace)");
				continue;
			}
			if (!jc->stream_failed)
				check_place(jc, at, a);
		} else {
			jc->pend[k++] = *a;
		}
	}
	jc->nr_pend = k;
}

void model_join_check_call_slow(struct join_check *jc, uint32_t tid, const struct m_call *c)
{
	struct join_check_thread *t;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < jc->nr_threads; i++)
		n += jc->threads[i].nr_calls;
	if (n >= M_NO_CALL) {
		check_stream_fail(jc, "2^32 calls");
		return;
	}
	for (i = 0; i < jc->nr_threads && jc->threads[i].tid != tid; i++)
		;
	if (i == jc->nr_threads) {
		size_t k;

		XGROW(jc->threads, jc->threads_cap, jc->nr_threads + 1);
		memset(&jc->threads[i], 0, sizeof(jc->threads[i]));
		jc->threads[jc->nr_threads++].tid = tid;
		for (k = 0; k < jc->nr_pend; k++)	/* its API records came first */
			jc->threads[i].nr_pend += jc->pend[k].tid == tid;
	} else if (c->t0 < jc->threads[i].t0 ||
		   (c->t0 == jc->threads[i].t0 && c->thread != jc->threads[i].thread)) {
		check_join_fail(jc, "a thread's calls out of time order");
	}
	t = &jc->threads[i];
	jc->hot = i;
	t->thread = c->thread;
	t->t0 = c->t0;
	if (t->nr_calls >= t->recent_cap && t->recent_cap < JOIN_CHECK_RECENT) {
		/* Not yet wrapped around: call n is at n, as in an array. */
		t->recent_cap = t->recent_cap ? 2 * t->recent_cap : 64;
		t->recent = xrealloc(t->recent, t->recent_cap * sizeof(*t->recent));
	}
	t->recent[t->nr_calls++ & (t->recent_cap - 1)] = (struct join_check_call){
		c->t0, model_call_is_gpu_work(c) ? c->t1 : 0 };
	if (t->nr_pend)
		check_pending(jc, t, 0);
	check_room(t, n + 1);	/* this call too */
}

static void check_tables(struct join_check *jc)
{
	if (!jc->api) {
		jc->api = xcalloc(EARLY_JOIN_SLOTS, sizeof(*jc->api));
		jc->wait = xcalloc(EARLY_JOIN_SLOTS, sizeof(*jc->wait));
		jc->wait_key = xcalloc(EARLY_JOIN_SLOTS, sizeof(*jc->wait_key));
		jc->wait_start = xcalloc(EARLY_JOIN_SLOTS, sizeof(*jc->wait_start));
	}
}

void model_join_check_api(struct join_check *jc, const struct m_api_join *a)
{
	const uint32_t corr = a->cupti_corr, key = corr + 1, slot = corr & (EARLY_JOIN_SLOTS - 1);
	struct early_join_api *e;

	if (!key) {
		check_join_fail(jc, "correlation number 2^32 - 1");
		return;
	}
	check_tables(jc);
	e = &jc->api[slot];
	if (e->key == key)
		return;		/* the first record of a number is the one that joins */
	if (jc->let_go && corr <= jc->let_go_hi) {
		check_join_fail(jc, "an API record behind the window");
		return;
	}
	if (e->key)
		check_let_go(jc, e->key - 1);
	*e = (struct early_join_api){ a->start, a->end, key, a->tid };
	if (jc->wait_key[slot] == key) {	/* its operations met it */
		/*
		 * Came after an operation that started before it: the stream may have let that
		 * operation go unjoined by then (the lateness measured bounds only how far behind
		 * the latest start a record comes).
		 */
		if (a->start > jc->wait_start[slot] && a->start - jc->wait_start[slot] > 1)
			check_stream_fail(jc, "an API record starting after an operation it joins");
		if (jc->wait[slot] & 2)
			check_resolve(jc, &(struct join_check_api){ a->start, a->end, corr, a->tid });
		jc->wait_key[slot] = 0;
		jc->wait[slot] = 0;
	}
}

void model_join_check_op(struct join_check *jc, uint32_t corr, int is_graph, uint64_t start)
{
	const uint32_t key = corr + 1, slot = corr & (EARLY_JOIN_SLOTS - 1);
	const struct early_join_api *e;

	if (jc->nr_ops++ >= M_NO_CALL) {
		check_stream_fail(jc, "2^32 operations");
		return;
	}
	if (!key) {
		check_join_fail(jc, "correlation number 2^32 - 1");
		return;
	}
	check_tables(jc);
	e = &jc->api[slot];
	if (e->key == key) {
		if (!is_graph)
			check_resolve(jc, &(struct join_check_api){ e->start, e->end, corr, e->tid });
		return;
	}
	if (jc->let_go && corr <= jc->let_go_hi) {
		check_join_fail(jc, "an operation behind the window");
		return;
	}
	if (jc->wait_key[slot] && jc->wait_key[slot] != key) {
		check_let_go(jc, jc->wait_key[slot] - 1);	/* their API record never came */
		check_unjoined(jc);
		jc->wait[slot] = 0;
	}
	if (!jc->wait[slot] || start < jc->wait_start[slot])
		jc->wait_start[slot] = start;
	jc->wait_key[slot] = key;
	jc->wait[slot] |= is_graph ? 1 : 2;
}

void model_join_check_finish(struct join_check *jc)
{
	size_t i;

	for (i = 0; jc->wait_key && i < EARLY_JOIN_SLOTS; i++)
		if (jc->wait_key[i])
			check_unjoined(jc);
	check_pending(jc, NULL, 1);
}

void model_join_check_free(struct join_check *jc)
{
	size_t i;

	for (i = 0; i < jc->nr_threads; i++)
		free(jc->threads[i].recent);
	free(jc->threads);
	free(jc->api);
	free(jc->wait);
	free(jc->wait_key);
	free(jc->wait_start);
	free(jc->pend);
	memset(jc, 0, sizeof(*jc));
}
