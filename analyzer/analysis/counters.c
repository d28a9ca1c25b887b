// SPDX-License-Identifier: MIT
/*
 * counters.c - hardware counters over the run (see counters.h for the definitions). Samples
 * are sorted by start; a search for the samples overlapping an interval starts at the first
 * sample that may reach it (start >= a - the longest sample) and stops past its end.
 */
#include "counters.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static const char *const slot_names[TRACE_PM_NR_SLOTS] = {
	[TRACE_PM_SM_ACTIVE] = "sm_active",
	[TRACE_PM_DRAM] = "dram",
	[TRACE_PM_TENSOR] = "tensor",
	[TRACE_PM_GR_ACTIVE] = "gr_active",
	[TRACE_PM_SM_THROUGHPUT] = "sm_throughput",
	[TRACE_PM_L2] = "l2",
	[TRACE_PM_ISSUE] = "issue",
	[TRACE_PM_FMA] = "fma",
	[TRACE_PM_ALU] = "alu",
	[TRACE_PM_XU] = "xu",
	[TRACE_PM_FP64] = "fp64",
	[TRACE_PM_LSU] = "lsu",
	[TRACE_PM_WARPS] = "warps",
	[13] = "spare",
	[14] = "spare",
	[15] = "spare",
};

const char *counters_slot_name(int slot)
{
	return slot >= 0 && slot < TRACE_PM_NR_SLOTS ? slot_names[slot] : "?";
}

const char *pm_class_name(int cls)
{
	static const char *const n[NR_PM_CLASSES] = { "-", "bandwidth", "compute", "latency" };

	return cls >= 0 && cls < NR_PM_CLASSES ? n[cls] : "-";
}

const char *pm_unit_text(int unit)
{
	static const char *const n[TRACE_PM_NR_SLOTS] = {
		[TRACE_PM_SM_ACTIVE] = "SM active", [TRACE_PM_DRAM] = "DRAM",
		[TRACE_PM_TENSOR] = "tensor",	    [TRACE_PM_GR_ACTIVE] = "GR active",
		[TRACE_PM_SM_THROUGHPUT] = "SM",    [TRACE_PM_L2] = "L2",
		[TRACE_PM_ISSUE] = "issue",	    [TRACE_PM_FMA] = "FMA",
		[TRACE_PM_ALU] = "ALU",		    [TRACE_PM_XU] = "XU",
		[TRACE_PM_FP64] = "FP64",	    [TRACE_PM_LSU] = "L1",
		[TRACE_PM_WARPS] = "warps",
	};

	return unit >= 0 && unit < TRACE_PM_NR_SLOTS && n[unit] ? n[unit] : "?";
}

int pm_pipe_is_good(int unit)
{
	return unit == TRACE_PM_TENSOR || unit == TRACE_PM_FP64;
}

/* The slot of @slots (@n of them) with the highest value in @v; -1 when none is sampled. */
static int highest(const double *v, const int *slots, int n)
{
	int i, best = -1;

	for (i = 0; i < n; i++)
		if (!isnan(v[slots[i]]) && (best < 0 || v[slots[i]] > v[best]))
			best = slots[i];
	return best;
}

void pm_classify(const double v[TRACE_PM_NR_SLOTS], struct pm_judgement *j)
{
	static const int mem_slots[] = { TRACE_PM_DRAM, TRACE_PM_L2, TRACE_PM_LSU };
	static const int pipe_slots[] = { TRACE_PM_TENSOR, TRACE_PM_FP64, TRACE_PM_FMA,
					  TRACE_PM_ALU, TRACE_PM_XU };
	double gr = v[TRACE_PM_GR_ACTIVE], scale = 1, *b = j->busy;
	double sm, tensor, comp, mem;
	int k, mem_unit, pipe;

	j->cls = PM_CLASS_NONE;
	j->unit = -1;
	if (!isnan(gr)) {
		if (gr < PM_GR_MIN_PCT) {
			for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
				b[k] = NAN;
			return;	/* too little work in it to tell */
		}
		scale = gr < 100 ? 100 / gr : 1;
	}
	for (k = 0; k < TRACE_PM_NR_SLOTS; k++) {
		b[k] = v[k] * scale;
		if (b[k] > 100 && k != TRACE_PM_SM_THROUGHPUT)
			b[k] = 100;	/* work the engine's busy share does not cover (copies) */
	}
	sm = b[TRACE_PM_SM_THROUGHPUT];
	tensor = isnan(b[TRACE_PM_TENSOR]) ? 0 : b[TRACE_PM_TENSOR];
	if (isnan(sm) || isnan(b[TRACE_PM_DRAM]))
		return;
	comp = sm > tensor ? sm : tensor;
	mem_unit = highest(b, mem_slots, 3);
	mem = b[mem_unit];
	if (tensor >= PM_HIGH_PCT) {
		/* A GEMM's tensor cores at their peak: its shared-memory traffic (L1) as high
		 * feeds them, and is not what limits it. */
		j->cls = PM_CLASS_COMPUTE;
		j->unit = TRACE_PM_TENSOR;
	} else if (mem >= PM_HIGH_PCT && mem >= comp) {
		j->cls = PM_CLASS_BANDWIDTH;
		j->unit = mem_unit;
	} else if (b[TRACE_PM_DRAM] >= PM_DRAM_HIGH_PCT && sm < PM_SM_LOW_PCT &&
		   tensor < PM_SM_LOW_PCT) {
		j->cls = PM_CLASS_BANDWIDTH;
		j->unit = TRACE_PM_DRAM;
	} else if (comp >= PM_HIGH_PCT) {
		j->cls = PM_CLASS_COMPUTE;
		pipe = highest(b, pipe_slots, 5);
		/* A trace without the CUDA cores' pipes knows the tensor pipe only. */
		if (isnan(b[TRACE_PM_FMA]))
			pipe = -1;
		/* No pipe near its peak but instructions issued near it: a mix of them. */
		if (pipe >= 0 && b[pipe] < PM_HIGH_PCT && b[TRACE_PM_ISSUE] >= PM_HIGH_PCT)
			pipe = TRACE_PM_ISSUE;
		j->unit = pipe;
	} else if (!isnan(b[TRACE_PM_L2]) && b[TRACE_PM_SM_ACTIVE] >= PM_LATENCY_SM_PCT) {
		j->cls = PM_CLASS_LATENCY;
	}
}

int counters_top_unit(const struct counters *c, int cls)
{
	int k, best = -1;

	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		if (c->unit_ns[cls][k] && (best < 0 || c->unit_ns[cls][k] > c->unit_ns[cls][best]))
			best = k;
	return best;
}

void pm_window_add(struct pm_window *w, const struct m_pm_sample *s)
{
	if (w->head && w->n == w->cap) {	/* slide what is left to the front */
		memmove(w->v, w->v + w->head, (w->n - w->head) * sizeof(*w->v));
		w->n -= w->head;
		w->hint = w->hint > w->head ? w->hint - w->head : 0;
		w->head = 0;
	}
	XGROW(w->v, w->cap, w->n + 1);
	w->v[w->n++] = *s;
}

void pm_window_let_go(struct pm_window *w, uint64_t t)
{
	while (w->head < w->n && w->v[w->head].end <= t)
		w->head++;
}

struct pm_from {
	const struct pm_window *w;
	uint64_t from;
};

static int pm_starts_at_or_after(size_t i, const void *ctx)
{
	const struct pm_from *f = ctx;

	return f->w->v[f->w->head + i].start >= f->from;
}

/*
 * First sample that may overlap [a, ...): samples starting before a - longest cannot. Searched
 * from where the previous search ended (callers go in time order).
 */
static size_t first_candidate(struct pm_window *w, uint64_t a)
{
	struct pm_from f = { w, a > w->max_len ? a - w->max_len : 0 };
	size_t hint = w->hint > w->head ? w->hint - w->head : 0;

	w->hint = w->head + gallop_search(w->n - w->head, hint, pm_starts_at_or_after, &f);
	return w->hint;
}

/* One sample into per-slot sums, with weight @w (slots with a value only). */
static void add_sample(const struct m_pm_sample *s, double w, double sum[TRACE_PM_NR_SLOTS],
		       double weight[TRACE_PM_NR_SLOTS])
{
	int k;

	for (k = 0; k < TRACE_PM_NR_SLOTS; k++) {
		if (isnan(s->value[k]))
			continue;
		sum[k] += (double)s->value[k] * w;
		weight[k] += w;
	}
}

void counters_accumulate(struct pm_window *w, uint32_t device, uint64_t start, uint64_t end,
			 double sum[TRACE_PM_NR_SLOTS], double weight[TRACE_PM_NR_SLOTS],
			 struct ctr_share *share)
{
	size_t i;

	if (w->head == w->n || end <= start)
		return;
	for (i = first_candidate(w, start); i < w->n && w->v[i].start < end; i++) {
		const struct m_pm_sample *s = &w->v[i];
		uint64_t o;

		if (s->device != device)
			continue;
		o = overlap_ns(s->start, s->end, start, end);
		if (!o)
			continue;
		add_sample(s, (double)o, sum, weight);
		if (share) {
			double gr = s->value[TRACE_PM_GR_ACTIVE];

			share->own += (double)o;
			if (share->last != s->start + 1) {
				share->busy += (double)(s->end - s->start) *
					       (isnan(gr) ? 1 : gr > 100 ? 1 : gr / 100);
				share->last = s->start + 1;
			}
		}
	}
}

static void means(double out[TRACE_PM_NR_SLOTS], const double sum[TRACE_PM_NR_SLOTS],
		  const double weight[TRACE_PM_NR_SLOTS])
{
	int k;

	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		out[k] = weight[k] > 0 ? sum[k] / weight[k] : NAN;
}

/* ---- Over the window, as the samples and operations come ---- */

struct ctr_acc {
	const struct model *m;
	struct counters *c;
	uint64_t win_start, win_end;
	int is_on;			/* counters configured and a window: samples count */
	uint32_t device;		/* the first device sampled */
	struct pm_window w;		/* samples that may still gain busy time */
	uint64_t *busy;			/* beside w.v: the device's busy time inside each */
	size_t busy_cap;
	uint64_t covered_to;		/* the samples summed so far cover up to here */
	struct m_stretch *host_only;	/* model_host_only */
	size_t nr_host_only;
	struct m_stretch *excl;		/* the device's gaps left out (counters_exclude), in order */
	size_t nr_excl, excl_cap;
	uint64_t start, end;		/* the busy stretch being merged */
	int has;
	double sum[TRACE_PM_NR_SLOTS], weight[TRACE_PM_NR_SLOTS];
	double bw_sum[TRACE_PM_NR_SLOTS], bw_w[TRACE_PM_NR_SLOTS];
	double cb_sum[TRACE_PM_NR_SLOTS], cb_w[TRACE_PM_NR_SLOTS];
	/* Per class, the values while busy, weighted by busy time */
	double cl_sum[NR_PM_CLASSES][TRACE_PM_NR_SLOTS], cl_w[NR_PM_CLASSES][TRACE_PM_NR_SLOTS];
	double bk_sum[PM_MAX_BUCKETS][TRACE_PM_NR_SLOTS], bk_w[PM_MAX_BUCKETS][TRACE_PM_NR_SLOTS];
};

struct ctr_acc *counters_begin(struct counters *c, const struct model *m, uint64_t win_start,
			       uint64_t win_end)
{
	struct ctr_acc *a = xcalloc(1, sizeof(*a));
	int k, j;

	memset(c, 0, sizeof(*c));
	c->device = -1;
	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		c->mean[k] = NAN;
	c->bw_dram = c->bw_sm = c->compute_sm = c->compute_tensor = NAN;
	for (k = 0; k < NR_PM_CLASSES; k++)
		for (j = 0; j < TRACE_PM_NR_SLOTS; j++)
			c->class_busy[k][j] = NAN;
	if (m->nr_pm_configs) {
		c->has_pipes = m->pm_configs[0].metric[TRACE_PM_L2] &&
			       m->pm_configs[0].metric[TRACE_PM_FMA];
		c->device = (int)m->pm_configs[0].device;
		c->chip = model_string(m, m->pm_configs[0].chip, "?");
		c->interval_ns = m->pm_configs[0].interval_ns;
	}
	a->m = m;
	a->c = c;
	a->win_start = win_start;
	a->win_end = win_end;
	a->host_only = model_host_only(m, &a->nr_host_only);
	a->is_on = m->nr_pm_configs && win_end > win_start &&
		   model_host_only_overlap(a->host_only, a->nr_host_only, win_start, win_end) <
			   win_end - win_start;
	a->device = (uint32_t)c->device;
	a->w.max_len = m->pm_max_len;
	/* The window in equal stretches. */
	c->nr_buckets = PM_MAX_BUCKETS;
	for (k = 0; k < PM_MAX_BUCKETS; k++) {
		struct ctr_bucket *bk = &c->buckets[k];
		uint64_t len = win_end - win_start;

		bk->start = k ? c->buckets[k - 1].end : win_start;
		bk->end = k + 1 == PM_MAX_BUCKETS ? win_end :
						    win_start + len / PM_MAX_BUCKETS * (uint64_t)(k + 1);
	}
	return a;
}

/* How much of [x, y) lies inside [lo, hi) and outside the gaps left out. */
static uint64_t kept(const struct ctr_acc *a, uint64_t x, uint64_t y, uint64_t lo, uint64_t hi)
{
	x = x > lo ? x : lo;
	y = y < hi ? y : hi;
	if (y <= x)
		return 0;
	return y - x - model_host_only_overlap(a->excl, a->nr_excl, x, y);
}

/* Sample @s has all its busy time @in_busy: into the window's sums. */
static void sample_done(struct ctr_acc *a, const struct m_pm_sample *s, uint64_t in_busy)
{
	struct counters *c = a->c;
	uint64_t o = kept(a, s->start, s->end, a->win_start, a->win_end);
	int k;

	if (!a->is_on || s->device != a->device)
		return;
	if (!o) {
		/* Wholly in a gap the findings left out (the window's own edges aside). */
		c->nr_left_out += overlap_ns(s->start, s->end, a->win_start, a->win_end) > 0;
		return;
	}
	c->nr_samples++;
	/* Samples come in order of start: the union grows by what lies past the last end. */
	c->covered_ns += kept(a, s->start > a->covered_to ? s->start : a->covered_to, s->end,
			      a->win_start, a->win_end);
	if (s->end > a->covered_to)
		a->covered_to = s->end;
	if (s->flags & TRACE_PM_OVERFLOW)
		c->nr_overflow++;
	add_sample(s, (double)o, a->sum, a->weight);
	for (k = 0; k < PM_MAX_BUCKETS; k++) {
		uint64_t ob = kept(a, s->start, s->end, c->buckets[k].start, c->buckets[k].end);

		if (ob)
			add_sample(s, (double)ob, a->bk_sum[k], a->bk_w[k]);
	}
	{
		double v[TRACE_PM_NR_SLOTS];
		struct pm_judgement j;

		for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
			v[k] = s->value[k];
		pm_classify(v, &j);
		if (j.cls == PM_CLASS_NONE)
			return;
		c->unit_ns[j.cls][j.unit >= 0 ? j.unit : TRACE_PM_NR_SLOTS] += in_busy;
		for (k = 0; k < TRACE_PM_NR_SLOTS; k++) {
			if (isnan(j.busy[k]) || !in_busy)
				continue;
			a->cl_sum[j.cls][k] += j.busy[k] * (double)in_busy;
			a->cl_w[j.cls][k] += (double)in_busy;
		}
		if (j.cls == PM_CLASS_BANDWIDTH) {
			c->bw_ns += in_busy;
			c->bw_samples++;
			add_sample(s, 1, a->bw_sum, a->bw_w);	/* per-sample means */
		} else if (j.cls == PM_CLASS_COMPUTE) {
			c->compute_ns += in_busy;
			c->compute_samples++;
			add_sample(s, 1, a->cb_sum, a->cb_w);
		} else {
			c->latency_ns += in_busy;
			c->latency_samples++;
		}
	}
}

/* The samples ending by @t gain no more busy time: done, in order of start. */
static void samples_done(struct ctr_acc *a, uint64_t t)
{
	struct pm_window *w = &a->w;

	while (w->head < w->n && w->v[w->head].end <= t) {
		sample_done(a, &w->v[w->head], a->busy[w->head]);
		w->head++;
	}
}

void counters_sample(struct ctr_acc *a, const struct m_pm_sample *s)
{
	struct pm_window *w = &a->w;
	size_t old = w->head;

	if (a->nr_host_only &&
	    model_host_only_overlap(a->host_only, a->nr_host_only, s->start, s->end)) {
		a->c->nr_left_out++;
		return;
	}
	pm_window_add(w, s);
	if (w->head != old)	/* slid to the front: the busy times too */
		memmove(a->busy, a->busy + old, (w->n - 1) * sizeof(*a->busy));
	XGROW(a->busy, a->busy_cap, w->n);
	a->busy[w->n - 1] = 0;
	if (w->n - w->head > a->c->samples_held_max)
		a->c->samples_held_max = w->n - w->head;
}

/* The busy stretch being merged is closed: into the samples it overlaps. */
static void busy_flush(struct ctr_acc *a)
{
	struct pm_window *w = &a->w;
	size_t i;

	if (!a->has)
		return;
	for (i = first_candidate(w, a->start); i < w->n && w->v[i].start < a->end; i++)
		if (w->v[i].device == a->device)
			a->busy[i] += overlap_ns(w->v[i].start, w->v[i].end, a->start, a->end);
	a->has = 0;
}

/*
 * The busy time of the sampled device inside each sample: the union of its kernels in order
 * of start, one stretch at a time, each stretch added to the samples it overlaps (the
 * union itself is not kept: a launch-bound trace has a gap between most kernels).
 */
void counters_op(struct ctr_acc *a, const struct m_gpu_op *g)
{
	const struct m_gpu_shape *sh = model_gpu_shape(a->m, g);

	/* Kernels only: copies and memsets are bandwidth work by what they are (findings.h). */
	if (sh->device != a->device || sh->kind != MG_KERNEL || g->end <= g->start)
		return;
	if (a->has && g->start > a->end) {
		busy_flush(a);
		samples_done(a, g->start);	/* no stretch to come reaches them */
	}
	if (!a->has) {
		a->start = g->start;
		a->end = g->end;
		a->has = 1;
	} else if (g->end > a->end) {
		a->end = g->end;
	}
}

static const char *absent_reason(const struct model *m)
{
	size_t i;

	for (i = m->nr_notes; i-- > 0;)
		if (m->notes[i].kind == TRACE_NOTE_PM_OFF && !m->nr_pm_configs)
			return model_string(m, m->notes[i].text, "no hardware counters");
	if (m->nr_pm_configs)
		return "no counter sample inside the analysis window";
	if (m->version_major == 1 && m->version_minor < 1)
		return "recorded by a shim without hardware counters (format 1.0)";
	if (!m->has_cupti)
		return "no CUPTI in this run (see its cupti_off note), and counters need it";
	return "sampling was not set up when the program ended (it starts 1 s after the first "
	       "kernel launch and takes up to about a second to set up)";
}

void counters_exclude(struct ctr_acc *a, uint32_t device, uint64_t from, uint64_t to)
{
	if (device != a->device || to <= from)
		return;
	XGROW(a->excl, a->excl_cap, a->nr_excl + 1);
	a->excl[a->nr_excl++] = (struct m_stretch){ from, to };
}

void counters_floor(struct ctr_acc *a, uint64_t t)
{
	uint64_t bound;

	if (a->has && t > a->end)
		busy_flush(a);	/* no operation to come extends it */
	bound = a->has && a->start < t ? a->start : t;
	/*
	 * Past the last busy stretch the gap is open: whether it is left out (counters_exclude)
	 * is known when the operation that ends it comes; its samples wait until then.
	 */
	if (a->nr_host_only && !a->has && a->end && a->end < bound)
		bound = a->end;
	samples_done(a, bound);
}

/* The window's time left out: its stretches without GPU timestamps and the gaps left out. */
static uint64_t window_left_out(const struct ctr_acc *a)
{
	uint64_t sum = 0, end = a->win_start;
	size_t i = 0, j = 0;

	while (i < a->nr_host_only || j < a->nr_excl) {
		const struct m_stretch *x =
			j == a->nr_excl || (i < a->nr_host_only &&
					    a->host_only[i].from < a->excl[j].from) ?
				&a->host_only[i++] :
				&a->excl[j++];
		uint64_t from = x->from > end ? x->from : end;
		uint64_t to = x->to < a->win_end ? x->to : a->win_end;

		if (to > from) {
			sum += to - from;
			end = to;
		}
	}
	return sum;
}

void counters_end(struct ctr_acc *a)
{
	struct counters *c = a->c;
	const struct model *m = a->m;
	uint64_t win;
	int k;

	busy_flush(a);
	samples_done(a, UINT64_MAX);
	free(a->w.v);
	free(a->busy);
	win = a->win_end - a->win_start - window_left_out(a);
	free(a->host_only);
	free(a->excl);
	if (!a->is_on || !c->nr_samples) {
		c->absent = absent_reason(m);
		c->nr_buckets = 0;
		memset(c->buckets, 0, sizeof(c->buckets));
		free(a);
		return;
	}
	c->has = 1;
	c->coverage_pct = 100.0 * (double)c->covered_ns / (double)win;
	means(c->mean, a->sum, a->weight);
	{
		double bw[TRACE_PM_NR_SLOTS], cb[TRACE_PM_NR_SLOTS];

		means(bw, a->bw_sum, a->bw_w);
		means(cb, a->cb_sum, a->cb_w);
		c->bw_dram = bw[TRACE_PM_DRAM];
		c->bw_sm = bw[TRACE_PM_SM_THROUGHPUT];
		c->compute_sm = cb[TRACE_PM_SM_THROUGHPUT];
		c->compute_tensor = cb[TRACE_PM_TENSOR];
	}
	for (k = 0; k < PM_MAX_BUCKETS; k++)
		means(c->buckets[k].mean, a->bk_sum[k], a->bk_w[k]);
	for (k = 0; k < NR_PM_CLASSES; k++)
		means(c->class_busy[k], a->cl_sum[k], a->cl_w[k]);
	free(a);
}
