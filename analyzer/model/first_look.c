// SPDX-License-Identifier: MIT
/*
 * first_look.c - the analyses' first look at every call and operation (first_look.h). A kernel's
 * buckets are kept in blocks of 32, made when first used: a kernel's durations span a few
 * octaves, so a few hundred bytes a kernel.
 */
#include "first_look.h"

#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "util/util.h"

#define NR_BLOCKS (FIRST_LOOK_NR_BUCKETS / 32)

struct first_look_kernel {
	UT_hash_handle hh;
	uint32_t name;
	uint64_t n;
	uint64_t *block[NR_BLOCKS];	/* 32 counts each; NULL: none there */
};

void first_look_init(struct first_look *p)
{
	memset(p, 0, sizeof(*p));
	p->launch_hist = xcalloc(FIRST_LOOK_LAUNCH_HIST_N, sizeof(*p->launch_hist));
	p->steps = steps_finder_new();
	nvtx_ranges_init(&p->ranges);
	p->run_start = UINT64_MAX;
}

static void kernel_free(struct first_look_kernel *k)
{
	size_t i;

	for (i = 0; i < NR_BLOCKS; i++)
		free(k->block[i]);
	free(k);
}

void first_look_free(struct first_look *p)
{
	struct first_look_kernel *k, *tmp;
	size_t i;

	HASH_ITER(hh, p->kernels, k, tmp) {
		HASH_DEL(p->kernels, k);
		kernel_free(k);
	}
	for (i = 0; i < p->nr_devices; i++)
		free(p->devices[i].before);
	free(p->launch_hist);
	free(p->devices);
	steps_finder_free(p->steps);
	nvtx_ranges_free(&p->ranges);
	memset(p, 0, sizeof(*p));
}

void first_look_arrival(struct first_look *p, uint64_t t)
{
	if (t > p->watermark)
		p->watermark = t;
	else if (p->watermark - t > p->max_late_ns)
		p->max_late_ns = p->watermark - t;
}

void first_look_call(struct first_look *p, const struct m_call *c, uint32_t func)
{
	uint64_t dur = c->t1 - c->t0;

	if (dur > p->max_call_ns)
		p->max_call_ns = dur;
	if (c->t0 < p->run_start)
		p->run_start = c->t0;
	if (c->t1 > p->run_end)
		p->run_end = c->t1;
	p->apis_used[c->api / 64] |= 1ull << (c->api % 64);
	if (c->kind == MC_LAUNCH && func) {
		uint64_t b = dur / FIRST_LOOK_LAUNCH_HIST_NS;

		p->launch_hist[b < FIRST_LOOK_LAUNCH_HIST_N ? b : FIRST_LOOK_LAUNCH_HIST_N - 1]++;
		p->nr_launches++;
		steps_launch(p->steps, c->thread, func, c->t0);
	} else if (c->kind == MC_GRAPH_LAUNCH) {
		steps_launch(p->steps, c->thread, STEPS_GRAPH_FUNC, c->t0);
	}
}

void first_look_nvtx(struct first_look *p, const struct m_nvtx *e)
{
	if (e->t < p->run_start)
		p->run_start = e->t;	/* ranges made before CUDA started (the start-up's) */
	if (e->t > p->run_end)
		p->run_end = e->t;
	steps_nvtx(p->steps, e);
	nvtx_ranges_event(&p->ranges, e);
}

static struct first_look_device *device_of(struct first_look *p, uint32_t device)
{
	size_t i;

	for (i = 0; i < p->nr_devices; i++)
		if (p->devices[i].device == device)
			return &p->devices[i];
	XGROW(p->devices, p->devices_cap, p->nr_devices + 1);
	p->devices[i] = (struct first_look_device){ .device = device, .first_op = UINT64_MAX,
					    .first_kernel = UINT64_MAX };
	p->nr_devices++;
	return &p->devices[i];
}

/* A step's kernels come back step after step: most are found among the last few found. */
static struct first_look_kernel *kernel_of(struct first_look *p, uint32_t name)
{
	struct first_look_kernel **recent = &p->recent[name % FIRST_LOOK_RECENT], *k = *recent;

	if (k && k->name == name)
		return k;
	HASH_FIND(hh, p->kernels, &name, sizeof(name), k);
	if (!k) {
		k = xcalloc(1, sizeof(*k));
		k->name = name;
		HASH_ADD(hh, p->kernels, name, sizeof(k->name), k);
	}
	*recent = k;
	return k;
}

static void kernel_count(struct first_look_kernel *k, uint32_t bucket, uint64_t n)
{
	uint64_t **blk = &k->block[bucket / 32];

	if (!*blk)
		*blk = xcalloc(32, sizeof(**blk));
	(*blk)[bucket % 32] += n;
	k->n += n;
}

/*
 * The window's end needs the latest end of the operations starting at the first kernel or
 * later, and which kernel is first is known only at the end: the operations starting before
 * the first kernel so far are kept, but only those no other outdoes (one starting later that
 * also ends later serves every first kernel the other would): in time order that is one.
 */
static void before_add(struct first_look_device *d, uint64_t start, uint64_t end)
{
	size_t i, k = 0;

	for (i = 0; i < d->nr_before; i++)
		if (d->before[i].start >= start && d->before[i].end >= end)
			return;		/* outdone */
	for (i = 0; i < d->nr_before; i++)
		if (!(start >= d->before[i].start && end >= d->before[i].end))
			d->before[k++] = d->before[i];
	d->nr_before = k;
	XGROW(d->before, d->before_cap, d->nr_before + 1);
	d->before[d->nr_before++] = (struct first_look_span){ start, end };
}

/* A new first kernel at @start: the operations kept from it on count for the window's end. */
static void first_kernel_at(struct first_look_device *d, uint64_t start)
{
	size_t i, k = 0;

	d->first_kernel = start;
	for (i = 0; i < d->nr_before; i++)
		if (d->before[i].start >= start) {
			if (d->before[i].end > d->kernel_end)
				d->kernel_end = d->before[i].end;
		} else {
			d->before[k++] = d->before[i];
		}
	d->nr_before = k;
}

void first_look_op(struct first_look *p, const struct m_gpu_shape *sh, uint64_t start, uint64_t end)
{
	struct first_look_device *d = device_of(p, sh->device);

	if (start < p->run_start)
		p->run_start = start;
	if (end > p->run_end)
		p->run_end = end;
	d->nr_ops++;
	if (start < d->first_op)
		d->first_op = start;
	if (end > d->last_end)
		d->last_end = end;
	if (sh->kind == MG_KERNEL && start < d->first_kernel)
		first_kernel_at(d, start);
	if (start >= d->first_kernel) {
		if (end > d->kernel_end)
			d->kernel_end = end;
	} else {
		before_add(d, start, end);
	}
	if (sh->kind != MG_KERNEL)
		return;
	d->has_kernel = 1;
	kernel_count(kernel_of(p, sh->name), first_look_bucket(end - start), 1);
}

int first_look_window(const struct first_look *p, uint64_t *start, uint64_t *end)
{
	size_t i;

	*start = UINT64_MAX;
	*end = 0;
	for (i = 0; i < p->nr_devices; i++) {
		const struct first_look_device *d = &p->devices[i];
		uint64_t b = d->has_kernel ? d->first_kernel : d->first_op;
		uint64_t e = d->has_kernel ? d->kernel_end : d->last_end;

		if (b < *start)
			*start = b;
		if (e > *end)
			*end = e;
	}
	return p->nr_devices > 0;
}

void first_look_finish(struct first_look *p, const struct model *m)
{
	struct first_look_kernel *k, *tmp, *zero;
	uint64_t seen = 0;
	size_t i, b;

	if (p->run_start == UINT64_MAX)
		p->run_start = 0;	/* nothing ran */
	nvtx_ranges_finish(&p->ranges, p->run_end);

	p->median_launch_ns = 0;
	for (i = 0; i < FIRST_LOOK_LAUNCH_HIST_N && p->nr_launches; i++) {
		seen += p->launch_hist[i];
		if (2 * seen >= p->nr_launches) {
			p->median_launch_ns = (uint64_t)i * FIRST_LOOK_LAUNCH_HIST_NS +
					      FIRST_LOOK_LAUNCH_HIST_NS / 2;
			break;
		}
	}
	/* Names the trace never defined are one kernel, as the statistics key them. */
	zero = kernel_of(p, 0);
	HASH_ITER(hh, p->kernels, k, tmp) {
		if (k == zero || k->name <= m->nr_strings)
			continue;
		for (b = 0; b < FIRST_LOOK_NR_BUCKETS; b++)
			if (k->block[b / 32] && k->block[b / 32][b % 32])
				kernel_count(zero, (uint32_t)b, k->block[b / 32][b % 32]);
		HASH_DEL(p->kernels, k);
		kernel_free(k);
	}
	p->finished = 1;
}

void first_look_of_model(struct first_look *p, const struct model *m)
{
	size_t i;

	first_look_init(p);
	for (i = 0; i < m->nr_calls; i++)
		first_look_call(p, &m->calls[i],
			     m->calls[i].kind == MC_LAUNCH ? model_launch(m, &m->calls[i])->func : 0);
	for (i = 0; i < m->nr_gpu; i++)
		first_look_op(p, model_gpu_shape(m, &m->gpu[i]), m->gpu[i].start, m->gpu[i].end);
	for (i = 0; i < m->nr_nvtx; i++)
		first_look_nvtx(p, &m->nvtx[i]);
	first_look_finish(p, m);
}

const struct first_look_device *first_look_find_device(const struct first_look *p, uint32_t device)
{
	size_t i;

	for (i = 0; i < p->nr_devices; i++)
		if (p->devices[i].device == device)
			return &p->devices[i];
	return NULL;
}

int first_look_ranks(const struct first_look *p, uint32_t name, struct first_look_rank out[2])
{
	static const double pct[2] = { 0.50, 0.99 };
	const struct first_look_kernel *k;
	int t;

	HASH_FIND(hh, p->kernels, &name, sizeof(name), k);
	if (!k || !k->n)
		return 0;
	for (t = 0; t < 2; t++) {
		uint64_t rank = nearest_rank(k->n, pct[t]), below = 0;
		uint32_t b;

		for (b = 0; b < FIRST_LOOK_NR_BUCKETS; b++) {
			uint64_t c = k->block[b / 32] ? k->block[b / 32][b % 32] : 0;

			if (below + c >= rank)
				break;
			below += c;
		}
		out[t] = (struct first_look_rank){ b, rank - below };
	}
	return 1;
}
