// SPDX-License-Identifier: MIT
/*
 * stats.c - see stats.h. Pure: reads the model, fills struct stats. No I/O.
 */
#define _GNU_SOURCE
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "uthash.h"
#include "util.h"

int stats_is_host_sync(const struct m_call *c)
{
	return c->kind == MC_SYNC && (c->sub == TRACE_SYNC_CTX || c->sub == TRACE_SYNC_STREAM ||
				      c->sub == TRACE_SYNC_EVENT);
}

int stats_is_device_mem(uint8_t kind)
{
	return kind == TRACE_MEM_DEVICE || kind == TRACE_MEM_PITCH || kind == TRACE_MEM_MANAGED ||
	       kind == TRACE_MEM_ASYNC || kind == TRACE_MEM_POOL || kind == TRACE_MEM_VMM_PHYS;
}

double stats_fill(const struct model *m, uint32_t name, uint64_t blocks, uint32_t block_threads,
		  uint32_t dyn_smem, int device, int *is_estimate)
{
	const struct trace_rec_device *d = model_device(m, device);
	uint32_t per_sm = model_occupancy(m, name, block_threads, dyn_smem);
	double fill;

	*is_estimate = 0;
	if (!d || !d->sm_count || !block_threads)
		return -1;
	if (!per_sm) {
		/* No calculator answer: the thread limit bounds the blocks per SM from above. */
		uint32_t by_threads = d->max_threads_per_sm / block_threads;

		per_sm = d->max_blocks_per_sm && d->max_blocks_per_sm < by_threads ?
				 d->max_blocks_per_sm :
				 by_threads;
		if (!per_sm)
			per_sm = 1;
		*is_estimate = 1;
	}
	fill = (double)blocks / ((double)d->sm_count * per_sm);
	return fill > 1 ? 1 : fill;
}

double stats_fill_op(const struct model *m, const struct m_gpu_op *g, int *is_estimate)
{
	const struct m_gpu_shape *sh = model_gpu_shape(m, g);
	struct m_fill_memo *e;

	if (!m->fill_memo)
		return stats_fill(m, sh->name, sh->blocks, sh->block_threads, sh->dyn_smem,
				  (int)sh->device, is_estimate);
	e = &m->fill_memo[g->shape];
	if (!e->known) {
		e->fill = stats_fill(m, sh->name, sh->blocks, sh->block_threads, sh->dyn_smem,
				     (int)sh->device, &e->is_estimate);
		e->known = 1;
	}
	*is_estimate = e->is_estimate;
	return e->fill;
}

/* ---- Span and counts ---- */

/* The span: from the first call or GPU operation to the end of the last; the calls' [lo, hi)
 * come from stats_compute's pass over them. */
static void compute_span(struct stats *s, const struct model *m, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < m->nr_gpu; i++) {
		if (m->gpu[i].start < lo)
			lo = m->gpu[i].start;
		if (m->gpu[i].end > hi)
			hi = m->gpu[i].end;
	}
	if (lo > hi)
		lo = hi = 0;
	s->span_start = lo;
	s->span_end = hi;
	s->span_ns = hi - lo;
}

static void count_call(struct s_counts *n, const struct model *m, const struct m_call *c)
{
	int is_err = (c->flags & MCF_ERROR) != 0;

	n->calls++;
	n->errors += is_err;
	switch (c->kind) {
	case MC_LAUNCH:
	case MC_GRAPH_LAUNCH:
	case MC_HOST_FUNC:
		n->launches++;
		n->launch_errors += is_err;
		n->kernel_launches += c->kind == MC_LAUNCH;
		n->graph_launches += c->kind == MC_GRAPH_LAUNCH;
		n->host_funcs += c->kind == MC_HOST_FUNC;
		n->captured_launches += c->kind == MC_LAUNCH && (c->flags & MCF_CAPTURING);
		break;
	case MC_SYNC:
		n->syncs += stats_is_host_sync(c);
		n->ctx_syncs += c->sub == TRACE_SYNC_CTX;
		n->stream_syncs += c->sub == TRACE_SYNC_STREAM;
		n->event_syncs += c->sub == TRACE_SYNC_EVENT;
		n->queries += c->sub == TRACE_SYNC_STREAM_QUERY ||
			      c->sub == TRACE_SYNC_EVENT_QUERY;
		n->stream_waits += c->sub == TRACE_SYNC_STREAM_WAIT_EVENT;
		n->event_records += c->sub == TRACE_SYNC_EVENT_RECORD;
		break;
	case MC_MEM:
		if (stats_is_device_mem(c->sub)) {
			n->allocs += c->op == TRACE_MEM_ALLOC;
			n->frees += c->op == TRACE_MEM_FREE;
			n->alloc_errors += is_err;
		} else if (c->sub == TRACE_MEM_HOST || c->sub == TRACE_MEM_HOST_REGISTER) {
			n->host_allocs += c->op == TRACE_MEM_ALLOC;
			n->host_frees += c->op == TRACE_MEM_FREE;
		}
		break;
	case MC_COPY:
		n->memcpys++;
		if (!is_err)
			n->memcpy_bytes += model_call_args(m, c)->bytes;
		break;
	case MC_SET:
		n->memsets++;
		if (!is_err)
			n->memset_bytes += model_call_args(m, c)->bytes;
		break;
	default:
		break;
	}
}

/* ---- Entry points ---- */

static int cmp_api(const void *a, const void *b)
{
	const struct s_api *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void api_add(struct s_api *by_id, const struct model *m, const struct m_call *c)
{
	uint64_t dur = c->t1 - c->t0;
	struct s_api *a;

	if (c->api >= m->nr_apis + 1)
		return;
	a = &by_id[c->api];
	a->calls++;
	a->errors += (c->flags & MCF_ERROR) != 0;
	a->total_ns += dur;
	if (dur > a->max_ns)
		a->max_ns = dur;
}

/* The entry points called, by host time, from per-id sums (@by_id: nr_apis + 1 of them). */
static void compute_apis(struct stats *s, const struct model *m, const struct s_api *by_id)
{
	size_t i, n = 0;

	s->apis = xcalloc(m->nr_apis + 1, sizeof(*s->apis));
	for (i = 0; i <= m->nr_apis; i++) {
		if (!by_id[i].calls)
			continue;
		s->apis[n] = by_id[i];
		s->apis[n].api = (uint16_t)i;
		s->apis[n].name = model_api_name(m, (uint16_t)i);
		s->apis[n].family = i < m->nr_apis ? m->apis[i].family : 0;
		n++;
	}
	s->nr_apis = n;
	xqsort(s->apis, n, sizeof(*s->apis), cmp_api);
}

/* ---- Kernels ---- */

struct durs {
	uint64_t *v;
	size_t n, cap;
};

struct shape_key {
	uint32_t grid[3];
	uint32_t block[3];
};

/* A kernel's launch shape: which kernel (index into s->kernels) and its geometry. */
struct shape_id {
	uint32_t kernel;
	struct shape_key shape;
};

/* The distinct shape_ids seen: open addressing, at most half full. */
struct shape_set {
	struct shape_id *v;
	uint8_t *used;
	size_t n, nr_slots;
};

static size_t shape_hash(const struct shape_id *k)
{
	uint32_t w[sizeof(*k) / 4];
	uint64_t h = 0x9e3779b97f4a7c15ull;
	size_t i;

	memcpy(w, k, sizeof(w));
	for (i = 0; i < sizeof(w) / 4; i++)
		h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 29));
}

/* Add @k to @set; 1 when it was not there. */
static int shape_set_add(struct shape_set *set, const struct shape_id *k)
{
	size_t j;

	if (2 * (set->n + 1) > set->nr_slots) {
		struct shape_set bigger = { NULL, NULL, 0, set->nr_slots ? 2 * set->nr_slots : 256 };

		bigger.v = xmalloc(bigger.nr_slots * sizeof(*bigger.v));
		bigger.used = xcalloc(bigger.nr_slots, 1);
		for (j = 0; j < set->nr_slots; j++)
			if (set->used[j])
				shape_set_add(&bigger, &set->v[j]);
		free(set->v);
		free(set->used);
		*set = bigger;
	}
	for (j = shape_hash(k) & (set->nr_slots - 1); set->used[j];
	     j = (j + 1) & (set->nr_slots - 1))
		if (!memcmp(&set->v[j], k, sizeof(*k)))
			return 0;
	set->used[j] = 1;
	set->v[j] = *k;
	set->n++;
	return 1;
}

/* The nearest-rank @p percentile of @v (reordered). */
static uint64_t percentile(uint64_t *v, size_t n, double p)
{
	size_t idx;

	if (!n)
		return 0;
	idx = (size_t)ceil(p * (double)n);
	if (idx < 1)
		idx = 1;
	if (idx > n)
		idx = n;
	return xselect_u64(v, n, idx - 1);
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct s_kernel *x = a, *y = b;

	if (x->gpu_total_ns != y->gpu_total_ns)
		return x->gpu_total_ns > y->gpu_total_ns ? -1 : 1;
	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void compute_kernels(struct stats *s, const struct model *m)
{
	/* Kernels are keyed by name (STRING id): one entry per distinct kernel name. */
	size_t nr_ids = m->nr_strings + 1;
	int64_t *slot = xmalloc(nr_ids * sizeof(*slot));
	struct durs *durs = NULL;
	double *fill_sum = NULL, *fill_w = NULL, *pm_sum = NULL, *pm_w = NULL;
	size_t pm_hint = 0;		/* counters_accumulate's search, kernels in start order */
	struct shape_id key;
	struct shape_set shapes = { NULL, NULL, 0, 0 };
	size_t i, n = 0, cap = 0, aux_cap = 0;
	int j;

	for (i = 0; i < nr_ids; i++)
		slot[i] = -1;
	s->kernels = NULL;
	memset(&key, 0, sizeof(key));	/* no padding, but memcmp reads all of it */

#define KERNEL_SLOT(key_id)                                                                        \
	({                                                                                         \
		uint32_t id_ = (key_id) < nr_ids ? (key_id) : 0;                                   \
		if (slot[id_] < 0) {                                                               \
			XGROW(s->kernels, cap, n + 1);                                             \
			memset(&s->kernels[n], 0, sizeof(s->kernels[n]));                          \
			s->kernels[n].name_id = id_;                                               \
			s->kernels[n].name = model_string(m, id_, "<unknown kernel>");             \
			s->kernels[n].fill = -1;                                                   \
			for (j = 0; j < TRACE_PM_NR_SLOTS; j++)                                    \
				s->kernels[n].pm[j] = NAN;                                         \
			slot[id_] = (int64_t)n++;                                                  \
		}                                                                                  \
		&s->kernels[slot[id_]];                                                            \
	})

	for (i = 0; i < m->nr_calls; i++) {
		const struct m_call *c = &m->calls[i];
		const struct m_launch_shape *l;
		uint32_t name;
		struct s_kernel *k;

		if (c->kind != MC_LAUNCH)
			continue;
		l = model_launch(m, c);
		name = l->func < m->nr_funcs ? m->funcs[l->func].name : 0;
		k = KERNEL_SLOT(name);
		if (!k->launches) {
			memcpy(k->grid_first, l->grid, sizeof(k->grid_first));
			k->block_first[0] = l->block[0];
			k->block_first[1] = l->block[1];
			k->block_first[2] = l->block[2];
		}
		k->launches++;
		k->launch_errors += (c->flags & MCF_ERROR) != 0;
		k->captured += (c->flags & MCF_CAPTURING) != 0;
		k->blocks_total += model_launch_blocks(l);
		k->launch_host_ns += c->t1 - c->t0;
	}
	/* Each kernel's launch shapes: the model's distinct launches, by grid and block. */
	for (i = 0; i < m->nr_launch_shapes; i++) {
		const struct m_launch_shape *l = &m->launch_shapes[i];
		uint32_t name = l->func < m->nr_funcs ? m->funcs[l->func].name : 0;
		struct s_kernel *k;

		if (slot[name < nr_ids ? name : 0] < 0)
			continue;	/* no launch call has it */
		k = KERNEL_SLOT(name);
		key.kernel = (uint32_t)(k - s->kernels);
		memcpy(key.shape.grid, l->grid, sizeof(l->grid));
		key.shape.block[0] = l->block[0];
		key.shape.block[1] = l->block[1];
		key.shape.block[2] = l->block[2];
		if (shape_set_add(&shapes, &key) && k->nr_shapes < 255)
			k->nr_shapes++;
	}

	for (i = 0; i < m->nr_gpu; i++) {
		const struct m_gpu_op *g = &m->gpu[i];
		const struct m_gpu_shape *sh = model_gpu_shape(m, g);
		struct s_kernel *k;
		size_t ki;
		int is_est;
		double f;

		if (sh->kind != MG_KERNEL)
			continue;
		k = KERNEL_SLOT(sh->name);
		ki = (size_t)(k - s->kernels);
		if (aux_cap < cap) {
			size_t old = aux_cap;

			durs = xrealloc(durs, cap * sizeof(*durs));
			fill_sum = xrealloc(fill_sum, cap * sizeof(*fill_sum));
			fill_w = xrealloc(fill_w, cap * sizeof(*fill_w));
			memset(durs + old, 0, (cap - old) * sizeof(*durs));
			memset(fill_sum + old, 0, (cap - old) * sizeof(*fill_sum));
			memset(fill_w + old, 0, (cap - old) * sizeof(*fill_w));
			pm_sum = xrealloc(pm_sum, cap * TRACE_PM_NR_SLOTS * sizeof(*pm_sum));
			pm_w = xrealloc(pm_w, cap * TRACE_PM_NR_SLOTS * sizeof(*pm_w));
			memset(pm_sum + old * TRACE_PM_NR_SLOTS, 0,
			       (cap - old) * TRACE_PM_NR_SLOTS * sizeof(*pm_sum));
			memset(pm_w + old * TRACE_PM_NR_SLOTS, 0,
			       (cap - old) * TRACE_PM_NR_SLOTS * sizeof(*pm_w));
			aux_cap = cap;
		}
		k->gpu_count++;
		k->gpu_total_ns += g->end - g->start;
		k->from_graphs += sh->graph_id != 0;
		XGROW(durs[ki].v, durs[ki].cap, durs[ki].n + 1);
		durs[ki].v[durs[ki].n++] = g->end - g->start;
		f = stats_fill_op(m, g, &is_est);
		if (f >= 0) {
			fill_sum[ki] += f * (double)(g->end - g->start);
			fill_w[ki] += (double)(g->end - g->start);
			k->fill_is_estimate |= is_est;
		}
		counters_accumulate(m, sh->device, g->start, g->end, pm_sum + ki * TRACE_PM_NR_SLOTS,
				    pm_w + ki * TRACE_PM_NR_SLOTS, &pm_hint);
	}
#undef KERNEL_SLOT

	for (i = 0; i < n; i++) {
		struct s_kernel *k = &s->kernels[i];

		if (i < aux_cap && durs[i].n) {
			size_t d;

			k->gpu_min_ns = k->gpu_max_ns = durs[i].v[0];
			for (d = 1; d < durs[i].n; d++) {
				if (durs[i].v[d] < k->gpu_min_ns)
					k->gpu_min_ns = durs[i].v[d];
				if (durs[i].v[d] > k->gpu_max_ns)
					k->gpu_max_ns = durs[i].v[d];
			}
			k->gpu_p50_ns = percentile(durs[i].v, durs[i].n, 0.50);
			k->gpu_p99_ns = percentile(durs[i].v, durs[i].n, 0.99);
			if (fill_w[i] > 0)
				k->fill = fill_sum[i] / fill_w[i];
			for (j = 0; j < TRACE_PM_NR_SLOTS; j++)
				if (pm_w[i * TRACE_PM_NR_SLOTS + j] > 0)
					k->pm[j] = pm_sum[i * TRACE_PM_NR_SLOTS + j] /
						   pm_w[i * TRACE_PM_NR_SLOTS + j];
			free(durs[i].v);
		}
	}

	free(shapes.v);
	free(shapes.used);
	free(durs);
	free(fill_sum);
	free(fill_w);
	free(pm_sum);
	free(pm_w);
	free(slot);
	s->nr_kernels = n;
	xqsort(s->kernels, n, sizeof(*s->kernels), cmp_kernel);
}

/* ---- Memory ---- */

struct live_entry {
	UT_hash_handle hh;
	struct {
		uint64_t addr;
		uint32_t is_vmm;	/* VMM handles and device pointers are different spaces */
	} key;
	size_t alloc;
	uint64_t seq;
};

struct alloc_seq {
	uint64_t a, f;			/* allocation and free order numbers; f = UINT64_MAX live */
};

static int cmp_live(const void *a, const void *b, void *ctx)
{
	const struct s_alloc *v = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (v[x].bytes != v[y].bytes)
		return v[x].bytes > v[y].bytes ? -1 : 1;
	return x < y ? -1 : x > y;
}

static size_t dev_slot(struct s_memory *mem, const struct model *m, int device)
{
	size_t i;
	const struct trace_rec_device *d;

	for (i = 0; i < mem->nr_devices; i++)
		if (mem->devices[i].device == device)
			return i;
	mem->devices = xrealloc(mem->devices, (mem->nr_devices + 1) * sizeof(*mem->devices));
	memset(&mem->devices[i], 0, sizeof(mem->devices[i]));
	mem->devices[i].device = device;
	d = model_device(m, device);
	mem->devices[i].total_bytes = d ? d->total_bytes : 0;
	mem->devices[i].peak_pct = -1;
	mem->nr_devices++;
	return i;
}

static void compute_memory(struct s_memory *mem, const struct model *m, const size_t *idx,
			   size_t nr_idx)
{
	struct live_entry *live = NULL, *e, *tmp;
	struct alloc_seq *seq = NULL;
	uint64_t cur = 0, order = 0, peak_order = 0, *dev_cur = NULL;
	size_t i, cap = 0, seq_cap = 0, nr_dev_cur = 0;

	memset(mem, 0, sizeof(*mem));
	mem->peak_device = -1;
	mem->peak_pct = -1;
	for (i = 0; i < nr_idx; i++) {
		const struct m_call *c = &m->calls[idx[i]];
		const struct m_call_args *arg = model_call_args(m, c);
		struct live_entry key;

		if (stats_is_device_mem(c->sub) || c->sub == TRACE_MEM_HOST)
			mem->alloc_ns += c->t1 - c->t0;
		if (!stats_is_device_mem(c->sub) || (c->flags & MCF_ERROR))
			continue;
		memset(&key, 0, sizeof(key));
		key.key.addr = arg->addr;
		key.key.is_vmm = c->sub == TRACE_MEM_VMM_PHYS;
		order++;
		if (c->op == TRACE_MEM_ALLOC) {
			struct s_alloc *a;
			size_t d;

			if (!arg->addr)
				continue;
			XGROW(mem->allocs, cap, mem->nr_allocs + 1);
			XGROW(seq, seq_cap, mem->nr_allocs + 1);
			a = &mem->allocs[mem->nr_allocs];
			a->addr = arg->addr;
			a->bytes = arg->bytes;
			a->t_alloc = c->t1;
			a->t_free = UINT64_MAX;
			a->api = c->api;
			a->kind = c->sub;
			a->device = c->device;
			seq[mem->nr_allocs].a = order;
			seq[mem->nr_allocs].f = UINT64_MAX;
			HASH_FIND(hh, live, &key.key, sizeof(key.key), e);
			if (e) {
				/* Re-allocated without a free we saw: the old one is gone. */
				seq[e->alloc].f = order;
				mem->allocs[e->alloc].t_free = c->t1;
				cur -= mem->allocs[e->alloc].bytes;
				dev_cur[dev_slot(mem, m, mem->allocs[e->alloc].device)] -=
					mem->allocs[e->alloc].bytes;
				HASH_DEL(live, e);
				free(e);
			}
			e = xmalloc(sizeof(*e));
			*e = key;
			e->alloc = mem->nr_allocs++;
			HASH_ADD(hh, live, key, sizeof(e->key), e);
			cur += a->bytes;
			mem->alloc_bytes_total += a->bytes;
			d = dev_slot(mem, m, a->device);
			if (mem->nr_devices > nr_dev_cur) {
				dev_cur = xrealloc(dev_cur, mem->nr_devices * sizeof(*dev_cur));
				dev_cur[nr_dev_cur++] = 0;
			}
			dev_cur[d] += a->bytes;
			if (dev_cur[d] > mem->devices[d].peak_bytes) {
				mem->devices[d].peak_bytes = dev_cur[d];
				mem->devices[d].peak_ts = c->t1;
			}
			if (cur > mem->peak_bytes) {
				mem->peak_bytes = cur;
				mem->peak_ts = c->t1;
				peak_order = order;
			}
		} else if (c->op == TRACE_MEM_FREE) {
			HASH_FIND(hh, live, &key.key, sizeof(key.key), e);
			if (!e) {
				if (arg->addr)
					mem->unmatched_frees++;
				continue;
			}
			seq[e->alloc].f = order;
			mem->allocs[e->alloc].t_free = c->t0;
			cur -= mem->allocs[e->alloc].bytes;
			/* The device was given a slot when this allocation was made. */
			dev_cur[dev_slot(mem, m, mem->allocs[e->alloc].device)] -=
				mem->allocs[e->alloc].bytes;
			HASH_DEL(live, e);
			free(e);
		}
	}
	mem->final_bytes = cur;
	HASH_ITER(hh, live, e, tmp) {
		HASH_DEL(live, e);
		free(e);
	}

	/* The headline device is the fullest one (by share of its memory, else by bytes). */
	for (i = 0; i < mem->nr_devices; i++) {
		struct s_device_mem *d = &mem->devices[i];
		const struct s_device_mem *best = NULL;
		size_t j;

		if (d->total_bytes)
			d->peak_pct = 100.0 * (double)d->peak_bytes / (double)d->total_bytes;
		for (j = 0; j < mem->nr_devices; j++)
			if (mem->devices[j].device == mem->peak_device)
				best = &mem->devices[j];
		if (!best || d->peak_pct > best->peak_pct ||
		    (d->peak_pct == best->peak_pct && d->peak_bytes > best->peak_bytes)) {
			mem->peak_pct = d->peak_pct;
			mem->peak_device = d->device;
			mem->device_total_bytes = d->total_bytes;
		}
	}
	if (mem->peak_device < 0 && m->nr_devices) {
		mem->peak_device = (int)m->devices[0].ordinal;
		mem->device_total_bytes = m->devices[0].total_bytes;
	}

	mem->live_at_peak = xcalloc(mem->nr_allocs + 1, sizeof(size_t));
	for (i = 0; i < mem->nr_allocs; i++)
		if (seq[i].a <= peak_order && seq[i].f > peak_order && peak_order)
			mem->live_at_peak[mem->nr_live_at_peak++] = i;
	if (mem->nr_live_at_peak > 1)
		qsort_r(mem->live_at_peak, mem->nr_live_at_peak, sizeof(size_t), cmp_live,
			mem->allocs);
	free(seq);
	free(dev_cur);
}

/* ---- GPU timeline ---- */

static void compute_gpu(struct stats *s, const struct model *m)
{
	struct s_gpu *g = &s->gpu;
	struct stats_union *acc = NULL;	/* 4 per device: all, kernel, memcpy, memset */
	size_t i, nd = 0;
	double span_dev;
	uint64_t off_since = 0;
	int is_off = 0;

	memset(g, 0, sizeof(*g));
	g->has_cupti = m->has_cupti;
	g->joined = m->gpu_joined;
	g->unjoined = m->gpu_unjoined;
	for (i = 0; i < m->nr_gpu; i++) {
		const struct m_gpu_op *op = &m->gpu[i];
		const struct m_gpu_shape *sh = model_gpu_shape(m, op);
		struct s_gpu_device *d = NULL;
		size_t j;
		int is_est;
		double f;

		for (j = 0; j < nd; j++)
			if (g->devices[j].device == (int)sh->device)
				d = &g->devices[j];
		if (!d) {
			g->devices = xrealloc(g->devices, (nd + 1) * sizeof(*g->devices));
			acc = xrealloc(acc, (nd + 1) * 4 * sizeof(*acc));
			memset(&g->devices[nd], 0, sizeof(*d));
			memset(&acc[nd * 4], 0, 4 * sizeof(*acc));
			g->devices[nd].device = (int)sh->device;
			g->devices[nd].first_ns = op->start;
			d = &g->devices[nd++];
		}
		j = (size_t)(d - g->devices);
		if (op->end > d->last_ns)
			d->last_ns = op->end;
		stats_union_add(&acc[j * 4], op->start, op->end);
		stats_union_add(&acc[j * 4 + sh->kind], op->start, op->end);
		switch (sh->kind) {
		case MG_KERNEL:
			g->nr_kernels++;
			f = stats_fill_op(m, op, &is_est);
			if (f >= 0)
				d->fill_ns += f * (double)(op->end - op->start);
			break;
		case MG_MEMCPY:
			g->nr_memcpys++;
			break;
		default:
			g->nr_memsets++;
			break;
		}
	}
	g->nr_devices = nd;
	for (i = 0; i < nd; i++) {
		struct s_gpu_device *d = &g->devices[i];

		d->busy_ns = acc[i * 4].total;
		d->kernel_ns = acc[i * 4 + MG_KERNEL].total;
		d->memcpy_ns = acc[i * 4 + MG_MEMCPY].total;
		d->memset_ns = acc[i * 4 + MG_MEMSET].total;
		g->busy_ns += d->busy_ns;
		g->kernel_ns += d->kernel_ns;
		g->memcpy_ns += d->memcpy_ns;
		g->memset_ns += d->memset_ns;
	}
	span_dev = (double)s->span_ns * (double)(nd ? nd : 1);
	/* span x devices can pass 2^64 on a hostile trace: clamp before converting. */
	g->idle_ns = span_dev <= (double)g->busy_ns		    ? 0 :
		     span_dev - (double)g->busy_ns >= 18446744073709549568.0 ? UINT64_MAX :
									     (uint64_t)(span_dev - (double)g->busy_ns);
	if (span_dev > 0) {
		double fill = 0;

		for (i = 0; i < nd; i++)
			fill += g->devices[i].fill_ns;
		g->busy_pct = 100.0 * (double)g->busy_ns / span_dev;
		g->fill_pct = 100.0 * fill / span_dev;
		if (g->fill_pct > g->busy_pct)
			g->fill_pct = g->busy_pct;
	}

	/* Host-only windows: CUPTI handed to another client (or failing) between notes. */
	for (i = 0; i < m->nr_notes; i++) {
		const struct m_note *n = &m->notes[i];

		if (n->kind == TRACE_NOTE_CUPTI_OFF && g->has_cupti && !is_off) {
			is_off = 1;
			off_since = n->ts;
		} else if (n->kind == TRACE_NOTE_CUPTI_ON && is_off) {
			is_off = 0;
			g->host_only_ns += n->ts > off_since ? n->ts - off_since : 0;
		}
	}
	if (is_off && s->span_end > off_since && m->nr_gpu)
		g->host_only_ns += s->span_end - off_since;
	free(acc);
}

void stats_compute(struct stats *s, const struct model *m)
{
	struct s_api *by_api = xcalloc(m->nr_apis + 1, sizeof(*by_api));
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t *mem_idx = NULL, nr_mem = 0, mem_cap = 0, i;

	memset(s, 0, sizeof(*s));
	/* One pass over the calls (the bulk of a trace) for everything that sums over them. */
	for (i = 0; i < m->nr_calls; i++) {
		const struct m_call *c = &m->calls[i];

		if (c->t0 < lo)
			lo = c->t0;
		if (c->t1 > hi)
			hi = c->t1;
		count_call(&s->counts, m, c);
		api_add(by_api, m, c);
		if (c->kind == MC_MEM) {
			XGROW(mem_idx, mem_cap, nr_mem + 1);
			mem_idx[nr_mem++] = i;
		}
	}
	compute_span(s, m, lo, hi);
	compute_apis(s, m, by_api);
	compute_kernels(s, m);
	compute_memory(&s->mem, m, mem_idx, nr_mem);
	compute_gpu(s, m);
	free(by_api);
	free(mem_idx);
}

void stats_free(struct stats *s)
{
	free(s->apis);
	free(s->kernels);
	free(s->mem.devices);
	free(s->mem.allocs);
	free(s->mem.live_at_peak);
	free(s->gpu.devices);
	memset(s, 0, sizeof(*s));
}
