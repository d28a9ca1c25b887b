// SPDX-License-Identifier: MIT
/*
 * loop.c - the loop's steps and the run's phases (loop.h) as the calls and operations come in
 * order of start: NVTX steps are known from the first look; the launch stream's begin at each
 * launch of the anchor kernel. Memory: 40 bytes a step. Pure.
 */
#include "loop.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "stats.h"
#include "util/util.h"

_Static_assert(LOOP_NR_GAP_CAUSES == CAUSE_ALLOCATION + 1, "a step's causes are the gap causes");

int loop_part_id(int k)
{
	static const int ids[LOOP_NR_PARTS] = { CAUSE_HOST_SYNC, CAUSE_LAUNCH_OVERHEAD,
						CAUSE_CPU_BOUND, CAUSE_MEMCPY, CAUSE_ALLOCATION,
						GAP_NOISE, GAP_DEPENDENCY, GAP_MODULE };

	return k >= 0 && k < LOOP_NR_PARTS ? ids[k] : -1;
}

struct loop_acc {
	struct loop *l;
	const struct model *m;
	int is_auto;
	size_t call_at, op_at;		/* NVTX: where the last call's, operation's step was */
	int open;			/* the launch stream: a step is open (the last of series) */
	uint64_t step_busy_end;		/* the open or current step's union so far */
	size_t busy_step;		/* ... of which step */
	/*
	 * The launch stream: what came in the open step a median step or more after its start.
	 * It is that step's if another begins after it, the tail's if none does.
	 */
	struct loop_step beyond;
	uint64_t phase_busy_end[NR_PHASES];
};

const char *loop_phase_name(int phase)
{
	static const char *const names[NR_PHASES] = { "startup", "warmup", "steady", "tail" };

	return phase >= 0 && phase < NR_PHASES ? names[phase] : "?";
}

int loop_phase_at(const struct loop *l, uint64_t t)
{
	int k;

	for (k = PHASE_TAIL; k > PHASE_STARTUP; k--)
		if (t >= l->phase[k].start)
			return k;
	return PHASE_STARTUP;
}

struct loop_acc *loop_begin(struct loop *l, const struct model *m, const struct first_look *p,
			    const struct steps_options *o)
{
	struct loop_acc *a = xcalloc(1, sizeof(*a));
	struct steps_found *f = &l->found;
	size_t i;

	memset(l, 0, sizeof(*l));
	a->l = l;
	a->m = m;
	steps_finish(p->steps, m, o, p->run_start, p->run_end, f);
	l->source = f->source == STEPS_NVTX ? "nvtx" :
		    f->source == STEPS_AUTO ? "launches" :
		    f->source == STEPS_WINDOW ? "window" :
						"none";
	l->name = f->source == STEPS_NVTX || f->source == STEPS_AUTO ? model_string(m, f->name, NULL) :
								       NULL;
	if (f->source == STEPS_AUTO && f->anchor_func == STEPS_GRAPH_FUNC)
		l->name = "a CUDA graph";
	l->count = f->count;
	l->warmup = f->warmup;
	if (f->source != STEPS_NONE) {
		/* The run starts with the process (the trace's start), when that is earlier. */
		uint64_t start = m->start_mono_ns && m->start_mono_ns < p->run_start ?
					 m->start_mono_ns :
					 p->run_start;
		uint64_t b[NR_PHASES + 1] = { start, f->first_start, f->steady_start, f->steady_end,
					      p->run_end };
		int k;

		for (k = 1; k <= NR_PHASES; k++)	/* in order, whatever the clocks say */
			if (b[k] < b[k - 1])
				b[k] = b[k - 1];
		for (k = 0; k < NR_PHASES; k++) {
			l->phase[k].start = b[k];
			l->phase[k].end = b[k + 1];
		}
	}
	a->is_auto = f->source == STEPS_AUTO;
	if (f->source == STEPS_NVTX) {
		l->nr_series = f->nr < LOOP_MAX_SERIES ? f->nr : LOOP_MAX_SERIES;
		l->series = xcalloc(l->nr_series + 1, sizeof(*l->series));
		for (i = 0; i < l->nr_series; i++) {
			l->series[i].start = f->v[i].start;
			l->series[i].end = f->v[i].end;
		}
	}
	a->busy_step = SIZE_MAX;
	return a;
}

/* The step that @t falls in (NVTX: from *@at on, as times come in order), or SIZE_MAX. */
static size_t step_of(struct loop_acc *a, size_t *at, uint64_t t)
{
	const struct loop *l = a->l;

	if (a->is_auto) {
		/*
		 * The last step begun at or before @t: its anchor launch came before (calls come
		 * before the operations starting after them, though an operation can come after
		 * later calls); @at moves forward, as the times of each kind come in order.
		 */
		if (!l->nr_series || t < l->series[0].start)
			return SIZE_MAX;
		while (*at + 1 < l->nr_series && l->series[*at + 1].start <= t)
			(*at)++;
		if (*at + 1 == l->nr_series && !a->open)
			return SIZE_MAX;	/* past LOOP_MAX_SERIES */
		return *at;
	}
	while (*at < l->nr_series && l->series[*at].end <= t)
		(*at)++;
	return *at < l->nr_series && l->series[*at].start <= t ? *at : SIZE_MAX;
}

/* Where what came at @t in step @s counts: the step, or what may still be the tail. */
static struct loop_step *step_sums(struct loop_acc *a, size_t s, uint64_t t)
{
	struct loop *l = a->l;

	if (a->is_auto && s + 1 == l->nr_series && t - l->series[s].start >= l->found.median_ns)
		return &a->beyond;
	return &l->series[s];
}

/* A launch of the anchor kernel: a step begins (the one before ends). */
static void auto_step(struct loop_acc *a, uint64_t t)
{
	struct loop *l = a->l;

	if (l->nr_series) {
		struct loop_step *last = &l->series[l->nr_series - 1];

		last->end = t;
		last->gpu_ns += a->beyond.gpu_ns;
		last->launches += a->beyond.launches;
		last->syncs += a->beyond.syncs;
		last->allocs += a->beyond.allocs;
		last->modules += a->beyond.modules;
	}
	memset(&a->beyond, 0, sizeof(a->beyond));
	if (l->nr_series >= LOOP_MAX_SERIES) {
		a->open = 0;
		return;
	}
	l->series = xrealloc(l->series, (l->nr_series + 1) * sizeof(*l->series));
	memset(&l->series[l->nr_series], 0, sizeof(*l->series));
	l->series[l->nr_series].start = t;
	l->series[l->nr_series].end = t;
	l->nr_series++;
	a->open = 1;
}

void loop_call(struct loop_acc *a, const struct m_call *c)
{
	struct loop *l = a->l;
	const struct steps_found *f = &l->found;
	int is_launch = c->kind == MC_LAUNCH || c->kind == MC_GRAPH_LAUNCH;
	int is_sync = c->kind == MC_SYNC && c->sub >= TRACE_SYNC_CTX && c->sub <= TRACE_SYNC_EVENT;
	int is_alloc = c->kind == MC_MEM && c->op == TRACE_MEM_ALLOC && stats_is_device_mem(c->sub);
	int is_module = c->kind == MC_MODULE && c->sub == TRACE_MODULE_LOAD;
	struct loop_phase_sum *ph;
	struct loop_step *st;
	size_t s;

	if (f->source == STEPS_NONE)
		return;
	if (a->is_auto && c->thread == f->thread &&
	    ((c->kind == MC_LAUNCH && model_launch(a->m, c)->func == f->anchor_func) ||
	     (c->kind == MC_GRAPH_LAUNCH && f->anchor_func == STEPS_GRAPH_FUNC)))
		auto_step(a, c->t0);
	ph = &l->phase[loop_phase_at(l, c->t0)];
	ph->launches += is_launch;
	ph->syncs += is_sync;
	ph->allocs += is_alloc;
	ph->modules += is_module;
	ph->copies += c->kind == MC_COPY;
	s = step_of(a, &a->call_at, c->t0);
	if (s == SIZE_MAX)
		return;
	st = step_sums(a, s, c->t0);
	st->launches += is_launch;
	st->syncs += is_sync;
	st->allocs += is_alloc;
	st->modules += is_module;
}

/* What of [start, end) is not yet under *@busy_end (operations come in order of start). */
static uint64_t union_add(uint64_t *busy_end, uint64_t start, uint64_t end)
{
	uint64_t from = start > *busy_end ? start : *busy_end;

	if (end <= from)
		return 0;
	*busy_end = end;
	return end - from;
}

void loop_op(struct loop_acc *a, const struct m_gpu_op *g)
{
	struct loop *l = a->l;
	int k;
	size_t s;

	if (l->found.source == STEPS_NONE)
		return;
	k = loop_phase_at(l, g->start);
	l->phase[k].gpu_ns += union_add(&a->phase_busy_end[k], g->start,
					g->end < l->phase[k].end ? g->end : l->phase[k].end);
	s = step_of(a, &a->op_at, g->start);
	if (s == SIZE_MAX)
		return;
	if (s != a->busy_step) {
		a->busy_step = s;
		a->step_busy_end = 0;
	}
	step_sums(a, s, g->start)->gpu_ns += union_add(&a->step_busy_end, g->start, g->end);
}

/* The index into loop_step.part of a cause id or enum gap_part; -1 for none there. */
static int part_slot(int part)
{
	int k;

	for (k = 0; k < LOOP_NR_PARTS; k++)
		if (loop_part_id(k) == part)
			return k;
	return -1;
}

void loop_idle(struct loop_acc *a, uint64_t start, uint64_t end, int part)
{
	struct loop *l = a->l;
	size_t lo = 0, hi = l->nr_series, i;
	int slot = part_slot(part);

	if (end <= start || !l->nr_series)
		return;
	while (lo < hi) {		/* the first step beginning after @start */
		size_t mid = lo + (hi - lo) / 2;

		if (l->series[mid].start <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo ? lo - 1 : 0; i < l->nr_series && l->series[i].start < end; i++) {
		const struct loop_step *s = &l->series[i];
		/* the launch stream's open step ends when the next begins */
		uint64_t s_end = a->is_auto && a->open && i + 1 == l->nr_series ? UINT64_MAX : s->end;
		uint64_t from = s->start > start ? s->start : start;
		uint64_t to = s_end < end ? s_end : end;

		if (to <= from)
			continue;
		if (i >= l->idle_cap) {		/* up to the steps begun so far */
			size_t cap = l->idle_cap;

			xgrow((void **)&l->idle, &l->idle_cap, l->nr_series, sizeof(*l->idle));
			memset(l->idle + cap, 0, (l->idle_cap - cap) * sizeof(*l->idle));
		}
		l->idle[i].ns += to - from;
		if (slot >= 0)
			l->idle[i].part[slot] += to - from;
	}
}

const struct loop_idle *loop_step_idle(const struct loop *l, size_t i)
{
	static const struct loop_idle none;

	return i < l->idle_cap ? &l->idle[i] : &none;
}

/* The part whose idle time in @s is the most beyond the median step's (@med): its cause id or
 * enum gap_part; -1 none. */
static int slow_cause(const struct loop_idle *s, const uint64_t *med, uint64_t *ns)
{
	int k, best = -1;
	uint64_t most = 0;

	for (k = 0; k < LOOP_NR_PARTS; k++)
		if (s->part[k] > med[k] && s->part[k] - med[k] > most) {
			most = s->part[k] - med[k];
			best = k;
		}
	*ns = best >= 0 ? s->part[best] : 0;
	return best >= 0 ? loop_part_id(best) : -1;
}

static const char why_host_gap[] = "a longer host gap: the GPU waited";

/* What made step @s longer than the median steady step. */
static const char *why_slow(const struct loop_step *s, uint64_t syncs, uint64_t allocs,
			    uint64_t modules, uint64_t gpu_ns)
{
	if (s->modules > modules)
		return "a module load";
	if (s->allocs > allocs)
		return "an allocation burst";
	if (s->syncs > syncs)
		return "more synchronizations";
	if (s->gpu_ns > gpu_ns + gpu_ns / 10)
		return "more GPU work";
	return why_host_gap;
}

/* A sampled run's step between windows (@ho, @nh: model_host_only's) has no GPU timestamps. */
static int step_has_gpu(const struct loop_step *s, const struct m_stretch *ho, size_t nh)
{
	return !nh || !model_host_only_overlap(ho, nh, s->start, s->end);
}

static void slowest(struct loop *l, const size_t *idx, size_t n, const struct m_stretch *ho,
		    size_t nh)
{
	/* The median steady step's synchronizations, allocations, module loads, GPU time. */
	uint64_t *x = xmalloc(4 * (n + 1) * sizeof(*x)), syncs, allocs, mods, gpu_med;
	uint64_t part_med[LOOP_NR_PARTS];
	unsigned any = 0;
	size_t i, k;
	int c;

	for (i = 0; i < n; i++)		/* the parts any step has: only theirs are sorted */
		for (c = 0; c < LOOP_NR_PARTS; c++)
			any |= (unsigned)(loop_step_idle(l, idx[i])->part[c] != 0) << c;
	for (c = 0; c < LOOP_NR_PARTS; c++) {
		part_med[c] = 0;
		if (!(any & 1u << c))
			continue;
		for (i = 0; i < n; i++)
			x[i] = loop_step_idle(l, idx[i])->part[c];
		part_med[c] = xmedian_u64(x, n);
	}

	for (i = 0, k = 0; i < n; i++) {
		const struct loop_step *s = &l->series[idx[i]];

		x[i] = s->syncs;
		x[n + i] = s->allocs;
		x[2 * n + i] = s->modules;
		if (step_has_gpu(s, ho, nh))	/* GPU time: of the steps that show it */
			x[3 * n + k++] = s->gpu_ns;
	}
	syncs = xmedian_u64(x, n);
	allocs = xmedian_u64(x + n, n);
	mods = xmedian_u64(x + 2 * n, n);
	gpu_med = k ? xmedian_u64(x + 3 * n, k) : 0;
	free(x);
	for (k = 0; k < LOOP_SLOWEST && k < n; k++) {
		size_t best = SIZE_MAX;

		for (i = 0; i < n; i++) {
			const struct loop_step *s = &l->series[idx[i]];
			size_t j;
			int taken = 0;

			for (j = 0; j < k; j++)
				taken |= l->slowest[j].step == idx[i];
			if (!taken && (best == SIZE_MAX ||
				       s->end - s->start > l->series[best].end - l->series[best].start))
				best = idx[i];
		}
		l->slowest[k].step = best;
		l->slowest[k].why = why_slow(&l->series[best], syncs, allocs, mods, gpu_med);
		if (!step_has_gpu(&l->series[best], ho, nh) &&
		    (l->slowest[k].why == why_host_gap ||
		     !strcmp(l->slowest[k].why, "more GPU work")))
			l->slowest[k].why = "between a sampled run's windows: no GPU timestamps";
		l->slowest[k].cause = slow_cause(loop_step_idle(l, best), part_med,
						 &l->slowest[k].cause_ns);
		/* lazy loading at a kernel's first launch is a module load no call shows */
		if (l->slowest[k].cause == GAP_MODULE && !l->series[best].modules &&
		    l->slowest[k].why == why_host_gap)
			l->slowest[k].why = "a module load (lazy loading)";
	}
	l->nr_slowest = k;
}

int loop_is_steady(const struct loop *l, size_t i)
{
	const struct loop_step *s = &l->series[i];

	return i >= l->warmup && s->start >= l->found.steady_start && s->end <= l->found.steady_end;
}

void loop_end(struct loop_acc *a)
{
	struct loop *l = a->l;
	const struct steps_found *f = &l->found;
	uint64_t *len, sum = 0, span;
	size_t *idx, i, n = 0;

	if (a->is_auto && a->open && l->nr_series) {
		struct loop_step *last = &l->series[l->nr_series - 1];

		last->end = last->start + f->median_ns;
		if (last->end > l->phase[PHASE_TAIL].end && l->phase[PHASE_TAIL].end > last->start)
			last->end = l->phase[PHASE_TAIL].end;
	}
	idx = xmalloc((l->nr_series + 1) * sizeof(*idx));
	len = xmalloc((l->nr_series + 1) * sizeof(*len));
	for (i = 0; i < l->nr_series; i++) {
		if (!loop_is_steady(l, i))
			continue;
		idx[n] = i;
		len[n++] = l->series[i].end - l->series[i].start;
	}
	l->steady = n;
	for (i = 0; i < n; i++)
		sum += len[i];
	xsort_u64(len, n);
	if (n) {
		l->mean_ns = sum / n;
		l->p50_ns = len[nearest_rank(n, 0.50) - 1];
		l->p99_ns = len[nearest_rank(n, 0.99) - 1];
		l->min_ns = len[0];
		l->max_ns = len[n - 1];
		if (model_sampled(a->m, NULL, NULL)) {
			size_t nh;
			struct m_stretch *ho = model_host_only(a->m, &nh);

			slowest(l, idx, n, ho, nh);
			free(ho);
		} else {
			slowest(l, idx, n, NULL, 0);
		}
	}
	span = f->steady_end > f->steady_start ? f->steady_end - f->steady_start : 0;
	l->per_s = n && span ? (double)n * 1e9 / (double)span : 0;
	free(idx);
	free(len);
	free(a);
}

void loop_free(struct loop *l)
{
	steps_found_free(&l->found);
	free(l->series);
	free(l->idle);
	memset(l, 0, sizeof(*l));
}
