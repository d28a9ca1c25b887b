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

#include "util.h"

static const char *const slot_names[TRACE_PM_NR_SLOTS] = {
	[TRACE_PM_SM_ACTIVE] = "sm_active", [TRACE_PM_DRAM] = "dram",
	[TRACE_PM_TENSOR] = "tensor",	    [TRACE_PM_GR_ACTIVE] = "gr_active",
	[TRACE_PM_SM_THROUGHPUT] = "sm_throughput", [5] = "spare",
};

const char *counters_slot_name(int slot)
{
	return slot >= 0 && slot < TRACE_PM_NR_SLOTS ? slot_names[slot] : "?";
}

struct pm_from {
	const struct model *m;
	uint64_t from;
};

static int pm_starts_at_or_after(size_t i, const void *ctx)
{
	const struct pm_from *f = ctx;

	return f->m->pm[i].start >= f->from;
}

/*
 * First sample that may overlap [a, ...): samples starting before a - longest cannot. Searched
 * from *@hint (where the previous search ended: callers go in time order), which it updates.
 */
static size_t first_candidate(const struct model *m, uint64_t a, size_t *hint)
{
	struct pm_from f = { m, a > m->pm_max_len ? a - m->pm_max_len : 0 };

	*hint = gallop_search(m->nr_pm, *hint, pm_starts_at_or_after, &f);
	return *hint;
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

void counters_accumulate(const struct model *m, uint32_t device, uint64_t start, uint64_t end,
			 double sum[TRACE_PM_NR_SLOTS], double weight[TRACE_PM_NR_SLOTS],
			 size_t *hint)
{
	size_t i;

	if (!m->nr_pm || end <= start)
		return;
	for (i = first_candidate(m, start, hint); i < m->nr_pm && m->pm[i].start < end; i++) {
		const struct m_pm_sample *s = &m->pm[i];
		uint64_t o;

		if (s->device != device)
			continue;
		o = overlap_ns(s->start, s->end, start, end);
		if (o)
			add_sample(s, (double)o, sum, weight);
	}
}

static void means(double out[TRACE_PM_NR_SLOTS], const double sum[TRACE_PM_NR_SLOTS],
		  const double weight[TRACE_PM_NR_SLOTS])
{
	int k;

	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		out[k] = weight[k] > 0 ? sum[k] / weight[k] : NAN;
}

/*
 * The busy time of the sampled device inside each sample: the union of its kernels and memsets
 * in order of start, one stretch at a time, each stretch added to the samples it overlaps (the
 * union itself is not kept: a launch-bound trace has a gap between most kernels).
 */
void counters_busy_init(struct ctr_busy *b, const struct model *m)
{
	memset(b, 0, sizeof(*b));
	b->m = m;
	b->device = m->nr_pm_configs ? (int)m->pm_configs[0].device : -1;
	if (b->device >= 0 && m->nr_pm)
		b->busy = xcalloc(m->nr_pm, sizeof(*b->busy));
}

/* The current stretch is closed: into the samples it overlaps. */
static void busy_flush(struct ctr_busy *b)
{
	const struct model *m = b->m;
	size_t i;

	if (!b->has)
		return;
	for (i = first_candidate(m, b->start, &b->hint); i < m->nr_pm && m->pm[i].start < b->end;
	     i++)
		if (m->pm[i].device == (uint32_t)b->device)
			b->busy[i] += overlap_ns(m->pm[i].start, m->pm[i].end, b->start, b->end);
	b->has = 0;
}

void counters_busy_op(struct ctr_busy *b, const struct m_gpu_op *g)
{
	const struct m_gpu_shape *sh;

	if (!b->busy)
		return;
	sh = model_gpu_shape(b->m, g);
	if (sh->device != (uint32_t)b->device || sh->kind == MG_MEMCPY || g->end <= g->start)
		return;
	if (b->has && g->start > b->end)
		busy_flush(b);
	if (!b->has) {
		b->start = g->start;
		b->end = g->end;
		b->has = 1;
	} else if (g->end > b->end) {
		b->end = g->end;
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

void counters_compute(struct counters *c, const struct model *m, uint64_t win_start,
		      uint64_t win_end, struct ctr_busy *busy)
{
	double sum[TRACE_PM_NR_SLOTS] = { 0 }, weight[TRACE_PM_NR_SLOTS] = { 0 };
	double bw_sum[TRACE_PM_NR_SLOTS] = { 0 }, bw_w[TRACE_PM_NR_SLOTS] = { 0 };
	double cb_sum[TRACE_PM_NR_SLOTS] = { 0 }, cb_w[TRACE_PM_NR_SLOTS] = { 0 };
	size_t i, hint;
	uint32_t dev;
	int k;

	busy_flush(busy);
	memset(c, 0, sizeof(*c));
	c->device = -1;
	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		c->mean[k] = NAN;
	c->bw_dram = c->bw_sm = c->compute_sm = c->compute_tensor = NAN;
	if (m->nr_pm_configs) {
		c->device = (int)m->pm_configs[0].device;
		c->chip = model_string(m, m->pm_configs[0].chip, "?");
		c->interval_ns = m->pm_configs[0].interval_ns;
	}
	if (!m->nr_pm_configs || win_end <= win_start) {
		c->absent = absent_reason(m);
		goto out;
	}
	/* The first device sampled (the shim samples one per process). */
	dev = (uint32_t)c->device;
	hint = 0;
	for (i = first_candidate(m, win_start, &hint); i < m->nr_pm && m->pm[i].start < win_end;
	     i++) {
		const struct m_pm_sample *s = &m->pm[i];
		uint64_t o = overlap_ns(s->start, s->end, win_start, win_end), in_busy;
		double dram = s->value[TRACE_PM_DRAM], sm = s->value[TRACE_PM_SM_THROUGHPUT];
		double tensor = isnan(s->value[TRACE_PM_TENSOR]) ? 0 : s->value[TRACE_PM_TENSOR];

		if (s->device != dev || !o)
			continue;
		c->nr_samples++;
		c->covered_ns += o;
		if (s->flags & TRACE_PM_OVERFLOW)
			c->nr_overflow++;
		add_sample(s, (double)o, sum, weight);
		in_busy = busy->busy[i];
		if (isnan(dram) || isnan(sm))
			continue;
		if (dram >= PM_DRAM_HIGH_PCT && sm < PM_SM_LOW_PCT && tensor < PM_SM_LOW_PCT) {
			c->bw_ns += in_busy;
			c->bw_samples++;
			add_sample(s, 1, bw_sum, bw_w);	/* per-sample means */
		} else if (sm >= PM_COMPUTE_HIGH_PCT || tensor >= PM_COMPUTE_HIGH_PCT) {
			c->compute_ns += in_busy;
			c->compute_samples++;
			add_sample(s, 1, cb_sum, cb_w);
		}
	}
	if (!c->nr_samples) {
		c->absent = absent_reason(m);
		goto out;
	}
	c->has = 1;
	c->coverage_pct = 100.0 * (double)c->covered_ns / (double)(win_end - win_start);
	means(c->mean, sum, weight);
	{
		double bw[TRACE_PM_NR_SLOTS], cb[TRACE_PM_NR_SLOTS];

		means(bw, bw_sum, bw_w);
		means(cb, cb_sum, cb_w);
		c->bw_dram = bw[TRACE_PM_DRAM];
		c->bw_sm = bw[TRACE_PM_SM_THROUGHPUT];
		c->compute_sm = cb[TRACE_PM_SM_THROUGHPUT];
		c->compute_tensor = cb[TRACE_PM_TENSOR];
	}

	/* The window in equal stretches. */
	hint = 0;
	c->nr_buckets = PM_MAX_BUCKETS;
	for (i = 0; i < (size_t)c->nr_buckets; i++) {
		struct ctr_bucket *bk = &c->buckets[i];
		double bs[TRACE_PM_NR_SLOTS] = { 0 }, bwt[TRACE_PM_NR_SLOTS] = { 0 };
		uint64_t len = win_end - win_start;

		bk->start = i ? c->buckets[i - 1].end : win_start;
		bk->end = i + 1 == (size_t)c->nr_buckets ?
				  win_end :
				  win_start + len / (uint64_t)c->nr_buckets * (i + 1);
		counters_accumulate(m, dev, bk->start, bk->end, bs, bwt, &hint);
		means(bk->mean, bs, bwt);
	}
out:
	free(busy->busy);
	busy->busy = NULL;
}
