// SPDX-License-Identifier: MIT
/*
 * savings.c - the report's what-if (savings.h): the window's calls and operations collected
 * into a model of their own (the run's dictionaries shared), replayed once as recorded and
 * once without each cause the replay can take away. Pure.
 */
#include "savings.h"

#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "util/util.h"

/* Each kind's share of the budget: calls and operations come each in order of start, but
 * interleaved as the stream releases them; a prefix of each is the same either way. */
#define SAVINGS_MAX_KIND (SAVINGS_MAX_ITEMS / 2)

struct savings_acc {
	const struct model *m;
	uint64_t lo, hi;
	uint64_t cut_calls, cut_ops;	/* where each kind's budget ran out (hi: it did not) */
	struct m_call *calls;
	size_t nr_calls, calls_cap;
	struct m_gpu_op *ops;
	size_t nr_ops, ops_cap;
	/* the calls taken, by their number: open addressing, (number + 1, index) */
	uint64_t *slot;
	size_t nr_slots;
	/* A sampled run: only what starts in a window with GPU timestamps is taken (the budget
	 * goes to what can be replayed) */
	struct m_stretch *wins;
	size_t nr_wins;
};

struct savings_acc *savings_begin(const struct model *m, uint64_t lo, uint64_t hi)
{
	struct savings_acc *a = xcalloc(1, sizeof(*a));

	a->m = m;
	a->lo = lo;
	a->hi = hi;
	a->cut_calls = a->cut_ops = hi;
	if (model_sampled(m, NULL, NULL)) {
		size_t nr_ho;
		struct m_stretch *ho = model_host_only(m, &nr_ho);

		a->wins = model_gpu_windows(ho, nr_ho, 0, UINT64_MAX, &a->nr_wins);
		free(ho);
	}
	return a;
}


static size_t slot_of(uint32_t id, size_t nr_slots)
{
	return (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 20) & (nr_slots - 1);
}

/* Whether an item starting at @t, @n of its kind taken, is taken; *@cut: where its kind's
 * budget ran out. */
static int take(const struct savings_acc *a, uint64_t t, size_t n, uint64_t *cut)
{
	if (t < a->lo || t >= *cut)
		return 0;
	if (a->wins && model_stretch_of(a->wins, a->nr_wins, t) == a->nr_wins)
		return 0;
	if (n >= SAVINGS_MAX_KIND) {
		*cut = t;
		return 0;
	}
	return 1;
}

void savings_call(struct savings_acc *a, const struct m_call *c, uint32_t id)
{
	size_t j;

	if (!take(a, c->t0, a->nr_calls, &a->cut_calls))
		return;
	if (!a->slot) {
		for (a->nr_slots = 1; a->nr_slots < 2 * (size_t)SAVINGS_MAX_KIND; a->nr_slots <<= 1)
			;
		a->slot = xcalloc(a->nr_slots, sizeof(*a->slot));
	}
	for (j = slot_of(id, a->nr_slots); a->slot[j]; j = (j + 1) & (a->nr_slots - 1))
		;
	a->slot[j] = ((uint64_t)id + 1) << 32 | (uint32_t)a->nr_calls;
	XGROW(a->calls, a->calls_cap, a->nr_calls + 1);
	a->calls[a->nr_calls++] = *c;
}

/* The index of the call numbered @id among those taken, or M_NO_CALL. */
static uint32_t call_index(const struct savings_acc *a, uint32_t id)
{
	size_t j;

	if (!a->slot || id == M_NO_CALL)
		return M_NO_CALL;
	for (j = slot_of(id, a->nr_slots); a->slot[j]; j = (j + 1) & (a->nr_slots - 1))
		if (a->slot[j] >> 32 == (uint64_t)id + 1)
			return (uint32_t)a->slot[j];
	return M_NO_CALL;
}

void savings_op(struct savings_acc *a, const struct m_gpu_op *g, uint32_t call_id)
{
	if (!take(a, g->start, a->nr_ops, &a->cut_ops))
		return;
	XGROW(a->ops, a->ops_cap, a->nr_ops + 1);
	a->ops[a->nr_ops] = *g;
	/* Its call's number for now: a call starting when it does may come after it (a loaded
	 * model hands such a call on later than the stream does); resolved at the end. */
	a->ops[a->nr_ops++].call = call_id;
}

/* The stretch to measure: whole steady steps that end by the cut, else the window's part. */
static void stretch(const struct savings_acc *a, const struct loop *l, const struct findings *f,
		    uint64_t *lo, uint64_t *hi, uint64_t *steps)
{
	size_t i, first = SIZE_MAX, last = SIZE_MAX, n = 0;

	*lo = a->lo > f->window_start ? a->lo : f->window_start;
	*hi = a->cut_calls < a->cut_ops ? a->cut_calls : a->cut_ops;
	*hi = *hi < f->window_end ? *hi : f->window_end;
	*steps = 0;
	if (l->found.source == STEPS_NONE)
		return;
	for (i = 0; i < l->nr_series; i++) {
		const struct loop_step *s = &l->series[i];

		if (!loop_is_steady(l, i) || s->start < a->lo || s->end > *hi)
			continue;
		if (first == SIZE_MAX)
			first = i;
		last = i;
		n++;
	}
	if (!n)
		return;
	if (n >= 3) {		/* the first step: the replay's lead-in */
		first++;
		n--;
	}
	*lo = l->series[first].start;
	*hi = l->series[last].end;
	*steps = n;
}

/* Windows with fewer calls and operations than this are not replayed (nothing to measure). */
#define SAVINGS_WINDOW_MIN_ITEMS 8

/*
 * A sampled run (findings.h f_sampling): each window with GPU timestamps in [@lo, @hi) replayed
 * on its own, its calls and operations only (an operation whose call fell outside is joined to
 * none); the savings are the windows' summed, their errors the spread across windows.
 */
static void savings_windows(struct savings_acc *a, const struct stats *s, struct findings *f,
			    uint64_t lo, uint64_t hi)
{
	struct f_replay *rp = &f->replay;
	struct m_stretch *ho, *w;
	size_t nr_ho, nw, i, nr_done = 0;
	size_t *call_at, *op_at, *call_pos;	/* per window: first index (prefix sums) */
	uint32_t *call_new;
	struct m_call *calls;
	struct m_gpu_op *ops;
	double *as_is, *saved[NR_CAUSES];
	uint64_t sum_rec = 0, sum_as_is = 0, sum_saved[NR_CAUSES] = { 0 };
	int k;

	ho = model_host_only(a->m, &nr_ho);
	w = model_gpu_windows(ho, nr_ho, lo, hi, &nw);
	free(ho);
	if (!w) {
		rp->why = "no window with GPU timestamps in the stretch";
		return;
	}
	/* Calls and operations grouped by window (a counting sort), calls renumbered. */
	call_at = xcalloc(nw + 2, sizeof(*call_at));
	op_at = xcalloc(nw + 2, sizeof(*op_at));
	call_pos = xcalloc(nw + 1, sizeof(*call_pos));
	for (i = 0; i < a->nr_calls; i++)
		call_at[model_stretch_of(w, nw, a->calls[i].t0) + 1]++;
	for (i = 0; i < a->nr_ops; i++)
		op_at[model_stretch_of(w, nw, a->ops[i].start) + 1]++;
	for (i = 1; i <= nw + 1; i++) {
		call_at[i] += call_at[i - 1];
		op_at[i] += op_at[i - 1];
	}
	calls = xmalloc((a->nr_calls + 1) * sizeof(*calls));
	ops = xmalloc((a->nr_ops + 1) * sizeof(*ops));
	call_new = xmalloc((a->nr_calls + 1) * sizeof(*call_new));
	memcpy(call_pos, call_at, (nw + 1) * sizeof(*call_pos));
	for (i = 0; i < a->nr_calls; i++) {
		size_t wi = model_stretch_of(w, nw, a->calls[i].t0);

		call_new[i] = (uint32_t)(call_pos[wi] - call_at[wi]);
		calls[call_pos[wi]++] = a->calls[i];
	}
	memcpy(call_pos, op_at, (nw + 1) * sizeof(*call_pos));
	for (i = 0; i < a->nr_ops; i++) {
		size_t wi = model_stretch_of(w, nw, a->ops[i].start);
		struct m_gpu_op g = a->ops[i];

		if (g.call != M_NO_CALL && model_stretch_of(w, nw, a->calls[g.call].t0) == wi)
			g.call = call_new[g.call];
		else
			g.call = M_NO_CALL;
		ops[call_pos[wi]++] = g;
	}
	as_is = xcalloc(nw, sizeof(*as_is));
	for (k = 0; k < NR_CAUSES; k++)
		saved[k] = xcalloc(nw, sizeof(*saved[k]));
	for (i = 0; i < nw; i++) {
		struct model sm = *a->m;
		struct replay *r;
		uint64_t rec, base;
		const char *why;

		sm.calls = calls + call_at[i];
		sm.nr_calls = call_at[i + 1] - call_at[i];
		sm.gpu = ops + op_at[i];
		sm.nr_gpu = op_at[i + 1] - op_at[i];
		if (sm.nr_calls + sm.nr_gpu < SAVINGS_WINDOW_MIN_ITEMS || !sm.nr_gpu)
			continue;
		r = replay_build(&sm, w[i].from, w[i].to, &why);
		if (!r)
			continue;
		replay_set_stats(r, s);
		rec = replay_recorded_span(r);
		base = replay_run(r, NULL);
		if (!rec || !base) {
			replay_free(r);
			continue;
		}
		for (k = 0; k < NR_CAUSES; k++) {
			struct replay_change one;
			uint64_t span;

			if (replay_change_of_cause(k, &one) < 0)
				continue;
			span = replay_run(r, &one);
			saved[k][nr_done] = span < base ? (double)(base - span) : 0;
			sum_saved[k] += span < base ? base - span : 0;
		}
		as_is[nr_done++] = (double)base;
		sum_rec += rec;
		sum_as_is += base;
		if (!rp->start)
			rp->start = w[i].from;
		rp->end = w[i].to;
		replay_free(r);
	}
	if (nr_done && sum_as_is) {
		rp->windows = nr_done;
		rp->items = a->nr_calls + a->nr_ops;
		rp->recorded_ns = sum_rec;
		rp->replayed_ns = sum_as_is;
		rp->error_pct = 100.0 * ((double)sum_as_is - (double)sum_rec) / (double)sum_rec;
		rp->is_part = hi < f->window_end && (a->cut_calls < a->hi || a->cut_ops < a->hi);
		for (k = 0; k < NR_CAUSES; k++) {
			struct f_cause *c = &f->causes[k];
			struct replay_change one;

			if (replay_change_of_cause(k, &one) < 0)
				continue;
			c->has_saving = 1;
			c->saving_pct = 100.0 * (double)sum_saved[k] / (double)sum_as_is;
			c->saving_ci_pct = findings_ratio_ci(saved[k], as_is, nr_done,
							     f->sampling.covered_pct / 100.0);
		}
		rp->done = 1;
	} else {
		rp->why = "no window with enough to replay";
	}
	for (k = 0; k < NR_CAUSES; k++)
		free(saved[k]);
	free(as_is);
	free(call_new);
	free(calls);
	free(ops);
	free(call_pos);
	free(call_at);
	free(op_at);
	free(w);
}

void savings_end(struct savings_acc *a, const struct stats *s, struct findings *f)
{
	const struct loop *l = &s->loop;
	struct f_replay *rp = &f->replay;
	struct model sm;
	struct replay *r;
	uint64_t lo, hi, as_is, window;
	size_t i;
	int k;

	memset(rp, 0, sizeof(*rp));
	if (!f->has_gpu) {
		rp->why = "no GPU timestamps";
		goto out;
	}
	stretch(a, l, f, &lo, &hi, &rp->steps);
	for (i = 0; i < a->nr_ops; i++)
		a->ops[i].call = call_index(a, a->ops[i].call);
	/* The run's dictionaries with the stretch's calls and operations. */
	sm = *a->m;
	sm.calls = a->calls;
	sm.nr_calls = a->nr_calls;
	sm.gpu = a->ops;
	sm.nr_gpu = a->nr_ops;
	if (hi <= lo) {
		rp->why = "the replay's budget ran out before the window";
		goto out;
	}
	if (f->sampling.is_sampled) {
		/* Windows are cut by time, not by steps: the whole stretch collected. */
		lo = a->lo > f->window_start ? a->lo : f->window_start;
		rp->steps = 0;
		savings_windows(a, s, f, lo, hi);
		if (rp->done)
			goto saved;
		goto out;
	}
	r = replay_build(&sm, lo, hi, &rp->why);
	if (!r)
		goto out;
	rp->start = lo;
	rp->end = hi;
	rp->items = a->nr_calls + a->nr_ops;
	rp->is_part = hi < f->window_end && (a->cut_calls < a->hi || a->cut_ops < a->hi);
	replay_set_stats(r, s);
	rp->recorded_ns = replay_recorded_span(r);
	rp->replayed_ns = as_is = replay_run(r, NULL);
	rp->error_pct = rp->recorded_ns ? 100.0 * ((double)as_is - (double)rp->recorded_ns) /
						  (double)rp->recorded_ns :
					  0;
	if (!as_is || !rp->recorded_ns) {
		rp->why = "nothing to replay in the window";
		replay_free(r);
		goto out;
	}
	for (k = 0; k < NR_CAUSES; k++) {
		struct f_cause *c = &f->causes[k];
		struct replay_change one;
		uint64_t span;

		if (replay_change_of_cause(k, &one) < 0)
			continue;
		span = replay_run(r, &one);
		c->has_saving = 1;
		c->saving_pct = span < as_is ? 100.0 * (double)(as_is - span) / (double)as_is : 0;
	}
	rp->done = 1;
	replay_free(r);
saved:
	window = l->found.source != STEPS_NONE && l->phase[PHASE_STEADY].end >
							   l->phase[PHASE_STEADY].start ?
			 l->phase[PHASE_STEADY].end - l->phase[PHASE_STEADY].start :
		 f->sampling.span_ns ? f->sampling.span_ns :
			 f->window_end - f->window_start;
	for (k = 0; k < NR_CAUSES; k++) {
		struct f_cause *c = &f->causes[k];

		if (!c->has_saving)
			continue;
		c->saving_ns = (uint64_t)((double)window * c->saving_pct / 100.0);
		c->saving_step_ns = l->steady ? (uint64_t)((double)l->p50_ns * c->saving_pct / 100.0) :
						0;
	}
	findings_rank_by_saving(f, s);
out:
	free(a->calls);
	free(a->ops);
	free(a->slot);
	free(a->wins);
	free(a);
}
