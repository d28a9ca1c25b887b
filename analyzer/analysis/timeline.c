// SPDX-License-Identifier: MIT
/*
 * timeline.c - see timeline.h: the operations' busy time and the findings' idle gaps sorted
 * into equal slices of the run, through the analysis driver's tap. Prints nothing.
 */
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

#include "model/first_look.h"
#include "util/util.h"

uint64_t timeline_slice_start(const struct timeline *t, size_t i)
{
	return t->start + (uint64_t)i * t->slice_ns;
}

size_t timeline_slice_of(const struct timeline *t, uint64_t x)
{
	uint64_t k = x > t->start ? (x - t->start) / t->slice_ns : 0;

	return k < t->nr_slices ? (size_t)k : t->nr_slices - 1;
}

/* Each slice's share of [a, b) into @v (a per-slice array @stride apart): overlaps in ns. */
static void spread(const struct timeline *t, uint64_t a, uint64_t b, uint64_t *v, size_t stride)
{
	size_t i, last;

	if (a < t->start)
		a = t->start;
	if (b > t->end)
		b = t->end;
	if (!t->nr_slices || b <= a)
		return;
	last = timeline_slice_of(t, b - 1);
	for (i = timeline_slice_of(t, a); i <= last; i++) {
		uint64_t s0 = timeline_slice_start(t, i);
		uint64_t s1 = i + 1 < t->nr_slices ? s0 + t->slice_ns : t->end;

		v[i * stride] += (b < s1 ? b : s1) - (a > s0 ? a : s0);
	}
}

static void tl_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	struct timeline *t = ctx;
	uint64_t span;
	size_t i;

	/* The driver starts over when a stream gives up: nothing of the first try stays. */
	free(t->dark);
	t->dark = NULL;
	t->nr_dark = 0;
	t->nr_devs = 0;
	memset(t->busy_ns, 0, sizeof(t->busy_ns));
	memset(t->idle_ns, 0, sizeof(t->idle_ns));
	memset(t->dark_ns, 0, sizeof(t->dark_ns));
	memset(t->idle_total_ns, 0, sizeof(t->idle_total_ns));

	t->m = m;
	/* The phases' extent (loop.c): from the process's start when the trace has it. */
	t->start = m->start_mono_ns && m->start_mono_ns < p->run_start ? m->start_mono_ns :
									  p->run_start;
	t->end = p->run_end > t->start ? p->run_end : t->start;
	span = t->end - t->start;
	t->slice_ns = span / TIMELINE_SLICES + (span % TIMELINE_SLICES != 0);
	t->nr_slices = t->slice_ns ? (size_t)(span / t->slice_ns + (span % t->slice_ns != 0)) : 0;
	t->nr_devices = p->nr_devices ? (unsigned)p->nr_devices : 1;
	t->dark = model_host_only(m, &t->nr_dark);
	for (i = 0; i < t->nr_dark; i++)
		spread(t, t->dark[i].from, t->dark[i].to, t->dark_ns, 1);
	for (i = 0; i < t->nr_slices; i++)	/* every device is dark alike */
		t->dark_ns[i] *= t->nr_devices;
}

static void tl_call(void *ctx, const struct m_call *c, uint32_t id)
{
	(void)ctx;
	(void)c;
	(void)id;
}

/*
 * Operations come in order of start: each device's union grows at its end only. A run has a
 * handful of devices; the last one found is tried first.
 */
static void tl_op(void *ctx, const struct m_gpu_op *g, const struct m_call *call, uint32_t id)
{
	struct timeline *t = ctx;
	struct timeline_device *d = NULL;
	uint32_t device;
	size_t i;

	(void)call;
	(void)id;
	if (!t->nr_slices || g->end <= g->start)
		return;
	device = model_gpu_shape(t->m, g)->device;
	for (i = 0; i < t->nr_devs; i++)
		if (t->devs[i].device == device) {
			d = &t->devs[i];
			break;
		}
	if (!d) {
		XGROW(t->devs, t->devs_cap, t->nr_devs + 1);
		d = &t->devs[t->nr_devs++];
		d->device = device;
		d->end = 0;
	}
	if (g->end <= d->end)
		return;
	spread(t, g->start > d->end ? g->start : d->end, g->end, t->busy_ns, 1);
	d->end = g->end;
}

static void tl_sample(void *ctx, const struct m_pm_sample *s)
{
	(void)ctx;
	(void)s;
}

static void tl_floor(void *ctx, uint64_t x)
{
	(void)ctx;
	(void)x;
}

/*
 * An idle gap as the findings split it: each part spread over the gap's slices in proportion
 * to the overlap, the running sum rounded so that the slices add up to the part exactly.
 */
static void tl_gap(void *ctx, const struct f_gap *g)
{
	struct timeline *t = ctx;
	uint64_t len = g->end - g->start, cum = 0, given[NR_GAP_PARTS] = { 0 };
	size_t i, first, last;
	int k;

	for (k = 0; k < NR_GAP_PARTS; k++)
		t->idle_total_ns[k] += g->part[k];
	if (!t->nr_slices || !len)
		return;
	first = timeline_slice_of(t, g->start);
	last = timeline_slice_of(t, g->end - 1);
	for (i = first; i <= last; i++) {
		uint64_t s0 = timeline_slice_start(t, i);
		uint64_t s1 = i + 1 < t->nr_slices ? s0 + t->slice_ns : t->end;

		/* a gap outside the run (none should be) falls in its first or last slice */
		cum = i == last ? len : cum + overlap_ns(g->start, g->end, s0, s1);
		for (k = 0; k < NR_GAP_PARTS; k++) {
			uint64_t upto = i == last ? g->part[k] :
						    (uint64_t)((double)g->part[k] * (double)cum /
							       (double)len);

			if (upto < given[k])	/* rounding: never give back */
				upto = given[k];
			t->idle_ns[i][k] += upto - given[k];
			given[k] = upto;
		}
	}
}

void timeline_tap(struct timeline *t, struct analyze_tap *tap)
{
	memset(t, 0, sizeof(*t));
	t->sink = (struct model_sink){ tl_begin, tl_call, tl_op, tl_sample, tl_floor, t };
	tap->sink = &t->sink;
	tap->gap = tl_gap;
}

void timeline_free(struct timeline *t)
{
	free(t->devs);
	free(t->dark);
	t->devs = NULL;
	t->dark = NULL;
}
