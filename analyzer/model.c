// SPDX-License-Identifier: MIT
/*
 * model.c - builds struct model from a trace: one pass over the records through trace_reader
 * that also joins GPU operations to the calls that caused them as they come (a second pass,
 * joining after loading, where that cannot match the join from all records), then sorting.
 * For model_stream, the same record handling in two stages (m->stage): a first read that keeps
 * the dictionaries only, a second that hands calls, operations and samples to model_stream.c.
 * Ids read from the trace are bounds-checked before they index anything. Never prints.
 */
#define _GNU_SOURCE
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "prepass.h"
#include "trace_reader.h"
#include "util.h"

/* CUresult values the analyzer interprets (cuda.h is not needed to read a trace). */
#define CUDA_ERROR_NOT_READY_VALUE 600

/* model.needs_seq: GPU_CORR records came (an older shim's pushed ids); the calls' seq is kept. */
#define NEEDS_SEQ_SEEN 1
#define NEEDS_SEQ_KEEP 2


static void call_came(struct model *m, size_t local);
static void sample_came(struct model *m);
static void op_came(struct model *m, size_t local);
static void api_came(struct model *m, const struct m_api_join *a);

/* ---- Dictionaries ---- */

static void set_string(struct model *m, uint32_t id, const char *s, size_t len)
{
	if (!trace_id_plausible(id, m->nr_string_defs))
		return;
	m->nr_string_defs++;
	if (id >= m->nr_strings) {
		XGROW(m->strings, m->strings_cap, (size_t)id + 1);
		memset(m->strings + m->nr_strings, 0, (id + 1 - m->nr_strings) * sizeof(char *));
		m->nr_strings = (size_t)id + 1;
	}
	if (!m->strings[id])
		m->strings[id] = xstrndup(s, len);
}

const char *model_string(const struct model *m, uint32_t id, const char *fallback)
{
	if (id && id < m->nr_strings && m->strings[id])
		return m->strings[id];
	return fallback;
}

const char *model_end_reason(const struct model *m)
{
	if (!m->is_complete)
		return NULL;
	switch (m->end_reason) {
	case TRACE_END_EXIT:
		return "exit";
	case TRACE_END_DISABLED:
		return "disabled";
	case TRACE_END_SIGNAL:
		return "signal";
	case TRACE_END_EXEC:
		return "exec";
	default:
		return "unknown";
	}
}

const char *model_end_detail(const struct model *m)
{
	uint32_t kind;
	size_t i;

	if (!m->is_complete)
		return NULL;
	switch (m->end_reason) {
	case TRACE_END_DISABLED:
		kind = TRACE_NOTE_DISABLED;
		break;
	case TRACE_END_SIGNAL:
		kind = TRACE_NOTE_SIGNAL;
		break;
	case TRACE_END_EXEC:
		kind = TRACE_NOTE_EXEC;
		break;
	default:
		return NULL;
	}
	for (i = m->nr_notes; i-- > 0;)
		if (m->notes[i].kind == kind)
			return model_string(m, m->notes[i].text, NULL);
	return NULL;
}

const char *model_api_name(const struct model *m, uint16_t api)
{
	if (api < m->nr_apis && m->apis[api].name)
		return m->apis[api].name;
	return "api ?";
}

/* Give entry-point id @api a name, when the trace never defined it. */
void model_name_api(struct model *m, uint16_t api)
{
	char buf[32];

	if (api < m->nr_apis && m->apis[api].name)
		return;
	if (api >= m->nr_apis) {
		XGROW(m->apis, m->apis_cap, (size_t)api + 1);
		memset(m->apis + m->nr_apis, 0, (api + 1 - m->nr_apis) * sizeof(*m->apis));
		m->nr_apis = (size_t)api + 1;
	}
	snprintf(buf, sizeof(buf), "api %u", api);
	m->owned_names = xrealloc(m->owned_names, (m->nr_owned_names + 1) * sizeof(*m->owned_names));
	m->owned_names[m->nr_owned_names] = xstrdup(buf);
	m->apis[api].name = m->owned_names[m->nr_owned_names++];
}

/* Give every entry-point id a call uses a name, even if the trace never defined it. */
static void name_undefined_apis(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nr_calls; i++)
		model_name_api(m, m->calls[i].api);
}

const char *model_func_name(const struct model *m, uint32_t func)
{
	if (func && func < m->nr_funcs)
		return model_string(m, m->funcs[func].name, "<unknown kernel>");
	return "<unknown kernel>";
}

static int occ_cmp_key(const struct m_occupancy *o, uint32_t name, uint32_t block,
		       uint32_t smem)
{
	if (o->name != name)
		return o->name < name ? -1 : 1;
	if (o->block_threads != block)
		return o->block_threads < block ? -1 : 1;
	if (o->dyn_smem != smem)
		return o->dyn_smem < smem ? -1 : 1;
	return 0;
}

static int cmp_occ(const void *a, const void *b)
{
	const struct m_occupancy *y = b;
	int c = occ_cmp_key(a, y->name, y->block_threads, y->dyn_smem);

	if (c)
		return c;
	/* Answered entries first: a failed query never hides a good one. */
	return ((const struct m_occupancy *)a)->max_blocks_per_sm > y->max_blocks_per_sm ? -1 :
	       ((const struct m_occupancy *)a)->max_blocks_per_sm < y->max_blocks_per_sm;
}

uint32_t model_occupancy(const struct model *m, uint32_t name, uint32_t block_threads,
			 uint32_t dyn_smem)
{
	size_t lo = 0, hi = m->nr_occ;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (occ_cmp_key(&m->occ[mid], name, block_threads, dyn_smem) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->nr_occ && !occ_cmp_key(&m->occ[lo], name, block_threads, dyn_smem))
		return m->occ[lo].max_blocks_per_sm;
	return 0;
}

const struct trace_rec_device *model_device(const struct model *m, int dev)
{
	size_t i;

	for (i = 0; i < m->nr_devices; i++)
		if ((int)m->devices[i].ordinal == dev)
			return &m->devices[i];
	return NULL;
}

static void add_api(struct model *m, const struct trace_rec_api_def *d)
{
	if (d->api == 0)
		return;
	if (d->api >= m->nr_apis) {
		XGROW(m->apis, m->apis_cap, (size_t)d->api + 1);
		memset(m->apis + m->nr_apis, 0, (d->api + 1 - m->nr_apis) * sizeof(*m->apis));
		m->nr_apis = (size_t)d->api + 1;
	}
	m->apis[d->api].name = model_string(m, d->name, NULL);
	m->apis[d->api].family = d->family;
	m->apis[d->api].flags = d->flags;
}

static void add_func(struct model *m, const struct trace_rec_func *f)
{
	struct m_func *e;

	if (!trace_id_plausible(f->id, m->nr_func_defs))
		return;
	m->nr_func_defs++;
	if (f->id >= m->nr_funcs) {
		XGROW(m->funcs, m->funcs_cap, (size_t)f->id + 1);
		memset(m->funcs + m->nr_funcs, 0, (f->id + 1 - m->nr_funcs) * sizeof(*m->funcs));
		m->nr_funcs = (size_t)f->id + 1;
	}
	e = &m->funcs[f->id];
	e->handle = f->handle;
	e->name = f->name;
	e->kind = f->kind;
	e->regs = f->regs_per_thread;
	e->static_smem = f->static_smem_bytes;
	e->max_threads = f->max_threads_per_block;
	e->have = f->have;
}

static uint32_t thread_slot(struct model *m, uint32_t tid, uint32_t index)
{
	size_t i;

	/* Few threads record CUDA calls; the last one used is the likely one. */
	for (i = m->nr_threads; i-- > 0;)
		if (m->threads[i].index == index && m->threads[i].tid == tid)
			return (uint32_t)i;
	XGROW(m->threads, m->threads_cap, m->nr_threads + 1);
	m->threads[m->nr_threads].tid = tid;
	m->threads[m->nr_threads].index = index;
	return (uint32_t)m->nr_threads++;
}

/* ---- Calls ---- */

struct early_join;
static void ej_call(struct model *m, struct early_join *ej, size_t idx);
static void ej_op(struct model *m, struct early_join *ej, size_t op);
static void ej_api(struct model *m, struct early_join *ej, const struct m_api_join *a);

struct m_call_args *model_call_args_new(struct model *m, struct m_call *c)
{
	XGROW(m->call_args, m->call_args_cap, m->nr_call_args + 1);
	c->args = (uint32_t)(m->call_args_base + m->nr_call_args);
	return memset(&m->call_args[m->nr_call_args++], 0, sizeof(*m->call_args));
}

static int cmp_result(const void *a, const void *b)
{
	const struct m_call_result *x = a, *y = b;

	return x->call < y->call ? -1 : x->call > y->call;
}

uint32_t model_call_result(const struct model *m, size_t idx)
{
	const struct m_call_result key = { .call = (uint32_t)idx };
	const struct m_call_result *r;

	if (idx >= M_NO_CALL || !m->nr_results)
		return 0;
	r = bsearch(&key, m->results, m->nr_results, sizeof(*m->results), cmp_result);
	return r ? r->result : 0;
}

static struct m_call *new_call(struct model *m, const struct trace_record *r,
			       const struct trace_call *c, uint8_t kind)
{
	struct m_call *e;
	uint64_t dur = c->dur;
	const struct m_api *api = c->api < m->nr_apis ? &m->apis[c->api] : NULL;

	XGROW(m->calls, m->calls_cap, m->nr_calls + 1);
	e = &m->calls[m->nr_calls++];
	memset(e, 0, sizeof(*e));
	if (c->flags & TRACE_CALL_DUR_US)
		dur *= 1000;
	e->t0 = r->ts_ns;
	e->t1 = r->ts_ns + dur;
	e->api = c->api;
	e->kind = kind;
	e->thread = thread_slot(m, r->tid, r->thread_index);
	e->args = UINT32_MAX;
	e->device = -1;
	if (c->result != 0 && m->nr_calls <= M_NO_CALL && m->stage == MODEL_WHOLE) {
		XGROW(m->results, m->results_cap, m->nr_results + 1);
		m->results[m->nr_results++] =
			(struct m_call_result){ (uint32_t)(m->nr_calls - 1), c->result };
	}
	if (m->needs_seq == NEEDS_SEQ_KEEP) {
		XGROW(m->call_seq, m->call_seq_cap, m->nr_calls);
		m->call_seq[m->nr_calls - 1] = c->seq;
	}
	if (c->flags & TRACE_CALL_CAPTURING)
		e->flags |= MCF_CAPTURING;
	if (api && (api->flags & TRACE_API_ASYNC))
		e->flags |= MCF_ASYNC;
	if (api && (api->flags & TRACE_API_PER_THREAD))
		e->flags |= MCF_PER_THREAD;
	if (c->result != 0)
		e->flags |= MCF_ERROR;
	return e;
}

static void add_thread_record(struct model *m, const struct trace_record *r)
{
	const void *p = r->rec;
	const size_t before = m->nr_calls;
	struct m_call *e;

	if (m->stage == MODEL_STREAMING && r->type == TRACE_REC_LOST)
		return;		/* counted by the first read */
	switch (r->type) {
	case TRACE_REC_LAUNCH: {
		const struct trace_rec_launch *l = p;
		struct m_launch_shape sh = { .dyn_smem = l->dyn_smem_bytes, .func = l->func };

		memcpy(sh.grid, l->grid, sizeof(sh.grid));
		memcpy(sh.block, l->block, sizeof(sh.block));
		e = new_call(m, r, &l->call, MC_LAUNCH);
		/* The first read of model_stream interns no shape: it needs the kernel only. */
		e->launch = m->stage == MODEL_FIRST_LOOK ? l->func : model_launch_shape_add(m, &sh);
		break;
	}
	case TRACE_REC_GRAPH_LAUNCH: {
		const struct trace_rec_graph_launch *g = p;

		new_call(m, r, &g->call, MC_GRAPH_LAUNCH);
		break;
	}
	case TRACE_REC_HOST_FUNC: {
		const struct trace_rec_host_func *h = p;

		new_call(m, r, &h->call, MC_HOST_FUNC);
		break;
	}
	case TRACE_REC_MEM: {
		const struct trace_rec_mem *mem = p;

		e = new_call(m, r, &mem->call, MC_MEM);
		*model_call_args_new(m, e) = (struct m_call_args){ mem->bytes, mem->addr };
		e->sub = (uint8_t)mem->kind;
		e->op = (uint8_t)mem->op;
		e->device = (int16_t)(mem->device < -1 || mem->device > 1023 ? -1 : mem->device);
		break;
	}
	case TRACE_REC_COPY: {
		const struct trace_rec_copy *c = p;

		e = new_call(m, r, &c->call, MC_COPY);
		*model_call_args_new(m, e) = (struct m_call_args){ c->bytes, c->dst };
		e->sub = (uint8_t)c->dir;
		break;
	}
	case TRACE_REC_SET: {
		const struct trace_rec_set *s = p;

		e = new_call(m, r, &s->call, MC_SET);
		*model_call_args_new(m, e) = (struct m_call_args){ s->bytes, s->dst };
		break;
	}
	case TRACE_REC_SYNC: {
		const struct trace_rec_sync *s = p;

		e = new_call(m, r, &s->call, MC_SYNC);
		e->sub = (uint8_t)s->kind;
		/* A query that finds work pending reports CUDA_ERROR_NOT_READY: not a failure. */
		if ((s->kind == TRACE_SYNC_STREAM_QUERY || s->kind == TRACE_SYNC_EVENT_QUERY) &&
		    s->call.result == CUDA_ERROR_NOT_READY_VALUE)
			e->flags &= ~MCF_ERROR;
		break;
	}
	case TRACE_REC_CAPTURE: {
		const struct trace_rec_capture *c = p;

		e = new_call(m, r, &c->call, MC_CAPTURE);
		e->sub = (uint8_t)c->op;
		break;
	}
	case TRACE_REC_GRAPH: {
		const struct trace_rec_graph *g = p;

		e = new_call(m, r, &g->call, MC_GRAPH);
		e->sub = (uint8_t)g->op;
		break;
	}
	case TRACE_REC_MODULE: {
		const struct trace_rec_module *mod = p;

		e = new_call(m, r, &mod->call, MC_MODULE);
		e->sub = (uint8_t)mod->op;
		break;
	}
	case TRACE_REC_CALL: {
		new_call(m, r, &((const struct trace_rec_call *)p)->call, MC_OTHER);
		break;
	}
	case TRACE_REC_LOST:
		m->lost_records += ((const struct trace_rec_lost *)p)->nr_records;
		break;
	default:
		break;
	}
	if (m->nr_calls > before)
		call_came(m, before);
}

/* ---- GPU operations ---- */

static uint16_t sat_u16(uint64_t v)
{
	return v < UINT16_MAX ? (uint16_t)v : UINT16_MAX;
}

/*
 * Inlined into each caller: a constant @size unrolls it. The words are multiplied apart and
 * summed (no chain of dependent multiplications: this runs for every launch and operation),
 * then mixed once.
 */
static inline __attribute__((always_inline)) size_t shape_hash(const void *item, size_t size)
{
	static const uint64_t k[4] = { 0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full,
				       0x165667b19e3779f9ull, 0xff51afd7ed558ccdull };
	uint64_t w[4] = { 0 }, h = 0;
	size_t i;

	memcpy(w, item, size);
	for (i = 0; i < 4; i++)
		h += w[i] * k[i];
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 32));
}

/*
 * The index of @item (@size bytes, a multiple of 4 up to 32) in the array *@v of distinct
 * items, appended when new; *@slots is a hash of them (index + 1), at most half full, made
 * anew when missing.
 */
static inline __attribute__((always_inline)) uint32_t
intern(void **v, size_t *n, size_t *cap, uint32_t **slots, size_t *nr_slots, const void *item,
       size_t size)
{
	size_t i, mask;

	if (2 * (*n + 1) > *nr_slots) {
		size_t ns = *nr_slots ? 2 * *nr_slots : 256, j;

		while (2 * (*n + 1) > ns)	/* no hash yet for shapes already there */
			ns *= 2;
		free(*slots);
		*slots = xcalloc(ns, sizeof(**slots));
		*nr_slots = ns;
		for (j = 0; j < *n; j++) {
			for (i = shape_hash((char *)*v + j * size, size) & (ns - 1); (*slots)[i];
			     i = (i + 1) & (ns - 1))
				;
			(*slots)[i] = (uint32_t)j + 1;
		}
	}
	mask = *nr_slots - 1;
	for (i = shape_hash(item, size) & mask; (*slots)[i]; i = (i + 1) & mask)
		if (!memcmp((char *)*v + ((*slots)[i] - 1) * size, item, size))
			return (*slots)[i] - 1;
	xgrow(v, cap, *n + 1, size);
	memcpy((char *)*v + *n * size, item, size);
	(*slots)[i] = (uint32_t)++*n;
	return (*slots)[i] - 1;
}

uint32_t model_gpu_shape_add(struct model *m, const struct m_gpu_shape *s)
{
	uint32_t i = intern((void **)&m->gpu_shapes, &m->nr_gpu_shapes, &m->gpu_shapes_cap,
			    &m->gpu_shape_slots, &m->nr_gpu_shape_slots, s, sizeof(*s));

	if (m->fill_memo && i >= m->fill_memo_cap) {	/* model_stream: shapes come as read */
		size_t old = m->fill_memo_cap;

		XGROW(m->fill_memo, m->fill_memo_cap, (size_t)i + 1);
		memset(m->fill_memo + old, 0, (m->fill_memo_cap - old) * sizeof(*m->fill_memo));
	}
	return i;
}

uint32_t model_launch_shape_add(struct model *m, const struct m_launch_shape *s)
{
	return intern((void **)&m->launch_shapes, &m->nr_launch_shapes, &m->launch_shapes_cap,
		      &m->launch_shape_slots, &m->nr_launch_shape_slots, s, sizeof(*s));
}

/* A GPU operation of @shape on @device, CUPTI's number @corr kept beside it for the join. */
static struct m_gpu_op *new_gpu(struct model *m, struct m_gpu_shape *shape, uint64_t start,
				uint64_t end, uint32_t corr, uint64_t device)
{
	struct m_gpu_op *g;

	m->has_cupti = 1;
	if (m->stage == MODEL_FIRST_LOOK) {	/* the first read of model_stream interns none */
		shape->device = sat_u16(device);
		prepass_op(m->pre, shape, start, end >= start ? end : start);
		prepass_arrival(m->pre, start);
		return NULL;
	}
	XGROW(m->gpu, m->gpu_cap, m->nr_gpu + 1);
	XGROW(m->gpu_corr, m->gpu_corr_cap, m->nr_gpu + 1);
	m->gpu_corr[m->nr_gpu] = corr;
	g = &m->gpu[m->nr_gpu++];
	g->start = start;
	g->end = end >= start ? end : start;
	g->call = M_NO_CALL;
	shape->device = sat_u16(device);
	g->shape = model_gpu_shape_add(m, shape);
	return g;
}

static void add_meta_record(struct model *m, const struct trace_record *r)
{
	const void *p = r->rec;
	const size_t gpu_before = m->nr_gpu;

	/* The second read of model_stream: the dictionaries are made, only the bulk is new. */
	if (m->stage == MODEL_STREAMING && r->type != TRACE_REC_GPU_KERNEL &&
	    r->type != TRACE_REC_GPU_MEMCPY && r->type != TRACE_REC_GPU_MEMSET &&
	    r->type != TRACE_REC_GPU_API && r->type != TRACE_REC_PM_SAMPLE)
		return;
	switch (r->type) {
	case TRACE_REC_STRING: {
		const struct trace_rec_string *s = p;

		set_string(m, s->id, (const char *)(s + 1), s->len);
		break;
	}
	case TRACE_REC_API_DEF:
		add_api(m, p);
		break;
	case TRACE_REC_DEVICE:
		XGROW(m->devices, m->devices_cap, m->nr_devices + 1);
		memcpy(&m->devices[m->nr_devices++], p, sizeof(*m->devices));
		break;
	case TRACE_REC_FUNC:
		add_func(m, p);
		break;
	case TRACE_REC_OCCUPANCY: {
		const struct trace_rec_occupancy *o = p;

		XGROW(m->occ, m->occ_cap, m->nr_occ + 1);
		m->occ[m->nr_occ].func = o->func;
		m->occ[m->nr_occ].block_threads = o->block_threads;
		m->occ[m->nr_occ].dyn_smem = o->dyn_smem_bytes;
		m->occ[m->nr_occ].device = o->device;
		m->occ[m->nr_occ].max_blocks_per_sm = o->result == 0 ? o->max_blocks_per_sm : 0;
		m->nr_occ++;
		break;
	}
	case TRACE_REC_NOTE: {
		const struct trace_rec_note *n = p;

		XGROW(m->notes, m->notes_cap, m->nr_notes + 1);
		m->notes[m->nr_notes].ts = n->ts_ns;
		m->notes[m->nr_notes].kind = n->kind;
		m->notes[m->nr_notes].text = n->text;
		m->nr_notes++;
		if (n->kind == TRACE_NOTE_CUPTI_ON)
			m->has_cupti = 1;
		break;
	}
	case TRACE_REC_END: {
		const struct trace_rec_end *e = p;

		m->is_complete = 1;
		m->lost_in_end = e->nr_lost;
		m->end_reason = e->reason;
		m->end_ns = e->end_ns;
		break;
	}
	case TRACE_REC_GPU_KERNEL: {
		const struct trace_rec_gpu_kernel *k = p;
		struct m_gpu_shape sh = {
			.blocks = (uint64_t)k->grid[0] * k->grid[1] * k->grid[2],
			.name = k->name,
			.dyn_smem = k->dyn_smem_bytes,
			.stream = k->stream,
			.graph_id = k->graph_id,
			.block_threads = sat_u16((uint64_t)k->block[0] * k->block[1] * k->block[2]),
			.kind = MG_KERNEL,
		};

		new_gpu(m, &sh, k->start_ns, k->end_ns, k->cupti_corr, k->device);
		break;
	}
	case TRACE_REC_GPU_MEMCPY: {
		const struct trace_rec_gpu_memcpy *c = p;
		struct m_gpu_shape sh = {
			.bytes = c->bytes,
			.stream = c->stream,
			.graph_id = c->graph_id,
			.kind = MG_MEMCPY,
			.copy_kind = c->copy_kind,
			.src_kind = c->src_kind,
			.dst_kind = c->dst_kind,
		};

		new_gpu(m, &sh, c->start_ns, c->end_ns, c->cupti_corr, c->device);
		break;
	}
	case TRACE_REC_GPU_MEMSET: {
		const struct trace_rec_gpu_memset *ms = p;
		struct m_gpu_shape sh = {
			.bytes = ms->bytes,
			.stream = ms->stream,
			.graph_id = ms->graph_id,
			.kind = MG_MEMSET,
			.dst_kind = ms->mem_kind,
		};

		new_gpu(m, &sh, ms->start_ns, ms->end_ns, ms->cupti_corr, ms->device);
		break;
	}
	case TRACE_REC_GPU_INFO: {
		const struct trace_rec_gpu_info *i = p;

		if (i->state == TRACE_NOTE_CUPTI_ON)
			m->has_cupti = 1;
		m->cupti_version = i->cupti_version;
		m->gpu_records = i->nr_records;	/* cumulative: the last one counts */
		m->gpu_dropped = i->nr_dropped;
		m->gpu_zero_ts = i->nr_zero_ts;
		break;
	}
	case TRACE_REC_GPU_CORR: {
		const struct trace_rec_gpu_corr *c = p;

		if (!m->needs_seq)
			m->needs_seq = NEEDS_SEQ_SEEN;	/* read again, keeping each call's seq */
		XGROW(m->corrs, m->corrs_cap, m->nr_corrs + 1);
		m->corrs[m->nr_corrs].ext_id = c->ext_id;
		m->corrs[m->nr_corrs].cupti_corr = c->cupti_corr;
		m->nr_corrs++;
		break;
	}
	case TRACE_REC_PM_CONFIG: {
		const struct trace_rec_pm_config *c = p;

		XGROW(m->pm_configs, m->pm_configs_cap, m->nr_pm_configs + 1);
		m->pm_configs[m->nr_pm_configs++] = *c;
		break;
	}
	case TRACE_REC_PM_SAMPLE: {
		const struct trace_rec_pm_sample *ps = p;
		struct m_pm_sample *d;
		int k;

		if (ps->end_ns <= ps->start_ns)
			break;		/* no interval: nothing to weigh */
		XGROW(m->pm, m->pm_cap, m->nr_pm + 1);
		d = &m->pm[m->nr_pm++];	/* model_stream: handed on (sample_came) */
		d->start = ps->start_ns;
		d->end = ps->end_ns;
		d->device = ps->device;
		d->flags = ps->flags;
		for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
			d->value[k] = isfinite(ps->value[k]) ? ps->value[k] : NAN;
		if (d->end - d->start > m->pm_max_len)
			m->pm_max_len = d->end - d->start;
		if (m->stage != MODEL_WHOLE)
			sample_came(m);
		break;
	}
	case TRACE_REC_GPU_API: {
		const struct trace_rec_gpu_api *a = p;
		const struct m_api_join j = { a->start_ns, a->end_ns, a->cupti_corr, a->tid };

		if (m->stage != MODEL_WHOLE || m->ej) {
			api_came(m, &j);
			break;
		}
		XGROW(m->api_joins, m->api_joins_cap, m->nr_api_joins + 1);
		m->api_joins[m->nr_api_joins++] = j;
		break;
	}
	default:
		break;
	}
	if (m->nr_gpu > gpu_before)
		op_came(m, gpu_before);
}

/* ---- Sorting and joining ---- */

static int cmp_call(const void *a, const void *b)
{
	const struct m_call *x = a, *y = b;

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return 0;
}

static uint64_t key_call(const void *a)
{
	return ((const struct m_call *)a)->t0;
}

static int cmp_pm(const void *a, const void *b)
{
	const struct m_pm_sample *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->device < y->device ? -1 : x->device > y->device;
}

/* By start, then end; operations that start and end together by CUPTI's number after the sort
 * (sort_gpu). */
static int cmp_gpu(const void *a, const void *b)
{
	const struct m_gpu_op *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static uint64_t key_gpu(const void *a)
{
	return ((const struct m_gpu_op *)a)->start;
}

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

/* Does call @c create GPU work that CUPTI reports (a join target)? */
static int is_gpu_call(const struct m_call *c)
{
	return c->kind == MC_LAUNCH || c->kind == MC_GRAPH_LAUNCH || c->kind == MC_COPY ||
	       c->kind == MC_SET;
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
	const uint32_t *idx;
	uint64_t t;
	int by_end;
};

static int is_after(size_t i, const void *ctx)
{
	const struct first_after_query *q = ctx;
	const struct m_call *c = mcall(q->m, q->idx[i]);

	return (q->by_end ? c->t1 : c->t0) > q->t;
}

size_t model_first_after(const struct model *m, const uint32_t *idx, size_t n, size_t hint,
			 uint64_t t, int by_end)
{
	struct first_after_query q = { m, idx, t, by_end };

	return gallop_search(n, hint, is_after, &q);
}

/*
 * The GPU-work call of the API record's thread whose interval overlaps the record most: calls
 * of one thread never overlap, so it is the last one starting before the record ends, or (for
 * clock skew at the edges) the one before. The search steps, then gallops, from where the
 * thread's last one ended: O(1) for records in time order, O(log n) whatever the input.
 */
int64_t model_call_in_thread(const struct model *m, struct thread_calls_by_tid *t,
			      const struct m_api_join *a)
{
	uint64_t best = 0;
	int64_t call = -1;
	size_t lo, k;

	if (!t || !t->n)
		return -1;
	lo = t->hint < t->n ? t->hint : t->n;
	for (k = 0; k < 4 && lo < t->n && mcall(m, t->idx[lo])->t0 <= a->end; k++)
		lo++;
	if ((lo < t->n && mcall(m, t->idx[lo])->t0 <= a->end) ||
	    (lo > 0 && mcall(m, t->idx[lo - 1])->t0 > a->end))
		lo = model_first_after(m, t->idx, t->n, t->hint, a->end, 0);
	t->hint = lo;
	for (k = 0; k < 2 && lo > k; k++) {
		const struct m_call *c = mcall(m, t->idx[lo - 1 - k]);
		uint64_t s0 = c->t0 > a->start ? c->t0 : a->start;
		uint64_t e0 = c->t1 < a->end ? c->t1 : a->end;

		if (is_gpu_call(c) && e0 >= s0 && e0 - s0 + 1 > best) {
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

	return model_call_in_thread(m, bsearch(&key, bt, nbt, sizeof(*bt), cmp_tct), a);
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
static void ej_fail(struct early_join *ej, const char *why)
{
	if (!ej->failed)
		ej->failed = why;
}

/* Has the table let go of @corr, or can it not tell? */
static int ej_behind(const struct early_join *ej, uint32_t corr)
{
	return ej->let_go && corr <= ej->let_go_hi;
}

static void ej_let_go(struct early_join *ej, uint32_t corr)
{
	if (!ej->let_go || corr > ej->let_go_hi)
		ej->let_go_hi = corr;
	ej->let_go = 1;
}

/* @corr's slot of the API records' table and the waits' (each allocated on first use). */
static struct ej_api *ej_api_slot(struct early_join *ej, uint32_t corr)
{
	if (!ej->api)
		ej->api = xcalloc(ej->slots, sizeof(*ej->api));
	return &ej->api[corr & (ej->slots - 1)];
}

static struct ej_wait *ej_wait_slot(struct early_join *ej, uint32_t corr)
{
	if (!ej->wait)
		ej->wait = xcalloc(ej->slots, sizeof(*ej->wait));
	return &ej->wait[corr & (ej->slots - 1)];
}

/* The calls of thread id @tid so far; NULL when it has none and @create is 0. */
struct thread_calls_by_tid *model_ej_tid(struct early_join *ej, uint32_t tid, int create)
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
static void ej_call(struct model *m, struct early_join *ej, size_t idx)
{
	const struct m_call *c = mcall(m, idx);
	struct thread_calls_by_tid *t;

	if (idx >= M_NO_CALL || c->thread >= m->nr_threads)
		return;		/* no join target (the join after loading skips it too) */
	t = model_ej_tid(ej, m->threads[c->thread].tid, 1);
	if (t->n) {
		const struct m_call *last = mcall(m, t->idx[t->n - 1]);

		/* Sorted calls order equal starts by thread slot: two slots of one tid, redo. */
		if (c->t0 < last->t0 || (c->t0 == last->t0 && c->thread != last->thread))
			ej_fail(ej, "a thread's calls out of time order");
	}
	XGROW(t->idx, t->cap, t->n + 1);
	t->idx[t->n++] = (uint32_t)idx;
}

/* Operation @op and its API record @a met: its call, or a wait for the thread's next call. */
static void ej_resolve(struct model *m, struct early_join *ej, uint32_t op,
		       const struct m_api_join *a)
{
	struct thread_calls_by_tid *t = model_ej_tid(ej, a->tid, 0);
	int64_t call;

	if (!t || mcall(m, t->idx[t->n - 1])->t0 <= a->end) {
		XGROW(ej->pend, ej->pend_cap, ej->nr_pend + 1);
		ej->pend[ej->nr_pend++] = (struct ej_pending){ *a, op };
		mgpu(m, op)->call = M_NO_CALL;
		set_state(m, op, GS_PEND);
		return;
	}
	call = model_call_in_thread(m, t, a);
	mgpu(m, op)->call = call >= 0 ? (uint32_t)call : M_NO_CALL;
	set_state(m, op, GS_DONE);
}

/* The operations of wait slot @w give up: they stay unjoined. */
static void ej_drop_waits(struct model *m, struct ej_wait *w)
{
	uint32_t op, next;

	for (op = w->op; op != M_NO_CALL; op = next) {
		next = mgpu(m, op)->call;
		mgpu(m, op)->call = M_NO_CALL;
		set_state(m, op, GS_DONE);
	}
	w->key = 0;
}

static void ej_api(struct model *m, struct early_join *ej, const struct m_api_join *a)
{
	const uint32_t key = a->cupti_corr + 1;
	struct ej_api *e;
	struct ej_wait *w;
	uint32_t op, next;

	if (!key) {
		ej_fail(ej, "correlation number 2^32 - 1");
		return;
	}
	e = ej_api_slot(ej, a->cupti_corr);
	if (e->key == key)
		return;		/* the first record of a number is the one that joins */
	if (ej_behind(ej, a->cupti_corr)) {
		ej_fail(ej, "an API record behind the window");
		return;
	}
	if (e->key)
		ej_let_go(ej, e->key - 1);
	*e = (struct ej_api){ a->start, a->end, key, a->tid };
	w = ej_wait_slot(ej, a->cupti_corr);
	if (w->key != key)
		return;
	for (op = w->op; op != M_NO_CALL; op = next) {
		next = mgpu(m, op)->call;
		ej_resolve(m, ej, op, a);
	}
	w->key = 0;
}

static void ej_op(struct model *m, struct early_join *ej, size_t op)
{
	const uint32_t corr = m->gpu_corr[op - m->gpu_base], key = corr + 1;
	const struct ej_api *e;
	struct ej_wait *w;

	if (op >= M_NO_CALL)
		return;		/* more operations than calls can have: never joined */
	if (!key) {
		ej_fail(ej, "correlation number 2^32 - 1");
		return;
	}
	e = ej_api_slot(ej, corr);
	if (e->key == key) {
		const struct m_api_join a = { e->start, e->end, corr, e->tid };

		ej_resolve(m, ej, (uint32_t)op, &a);
		return;
	}
	if (ej_behind(ej, corr)) {
		ej_fail(ej, "an operation behind the window");
		return;
	}
	w = ej_wait_slot(ej, corr);
	if (w->key && w->key != key) {
		ej_let_go(ej, w->key - 1);	/* their API record never came in the window */
		ej_drop_waits(m, w);
	}
	if (!w->key)
		*w = (struct ej_wait){ key, M_NO_CALL };
	mgpu(m, op)->call = w->op;
	w->op = (uint32_t)op;
	set_state(m, op, GS_WAIT);
}

/* The end of the trace: the pairs that waited for their thread's next call are joined now,
 * the operations whose API record never came stay unjoined. */
void model_ej_finish(struct model *m, struct early_join *ej)
{
	size_t i;

	for (i = 0; i < ej->nr_pend; i++) {
		int64_t call = model_call_in_thread(m, model_ej_tid(ej, ej->pend[i].a.tid, 0), &ej->pend[i].a);

		mgpu(m, ej->pend[i].op)->call = call >= 0 ? (uint32_t)call : M_NO_CALL;
		set_state(m, ej->pend[i].op, GS_DONE);
	}
	ej->nr_pend = 0;
	for (i = 0; ej->wait && i < ej->slots; i++)
		if (ej->wait[i].key)
			ej_drop_waits(m, &ej->wait[i]);
}

void model_ej_free(struct early_join *ej)
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
static void join_gpu(struct model *m, int is_early, const uint32_t *moved)
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

/* The spans where CUPTI was handed to another client (no GPU records for us), by start. */
struct host_span {
	uint64_t from, to;
};

static int cmp_span(const void *a, const void *b)
{
	const struct host_span *x = a, *y = b;

	return x->from < y->from ? -1 : x->from > y->from;
}

static struct host_span *host_only_spans(const struct model *m, size_t *n_out)
{
	struct host_span *v = xcalloc(m->nr_notes + 1, sizeof(*v));
	uint64_t off = 0;
	int is_off = 0;
	size_t i, n = 0;

	for (i = 0; i < m->nr_notes; i++) {
		const struct m_note *nt = &m->notes[i];

		/* A first note saying CUPTI is off is the session never starting, not a span. */
		if (nt->kind == TRACE_NOTE_CUPTI_OFF && !is_off && i > 0) {
			is_off = 1;
			off = nt->ts;
		} else if (nt->kind == TRACE_NOTE_CUPTI_ON && is_off) {
			v[n++] = (struct host_span){ off, nt->ts };
			is_off = 0;
		}
	}
	xqsort(v, n, sizeof(*v), cmp_span);
	*n_out = n;
	return v;
}

/* Is @t inside one of the spans? O(log n). */
static int in_host_only_span(const struct host_span *v, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {		/* first span starting after t */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].from <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The spans come from one on/off sequence: disjoint, so only the last one can hold t. */
	return lo > 0 && t <= v[lo - 1].to;
}

struct order_item {
	uint64_t key;			/* order_key() */
	uint64_t t;			/* call t0, or kernel start */
	size_t idx;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order_item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
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

static int order_key_call(const struct model *m, const struct host_span *spans, size_t nr_spans,
			  const struct m_call *c, uint64_t *key)
{
	if ((c->flags & (MCF_HAS_GPU | MCF_ERROR | MCF_CAPTURING)) ||
	    in_host_only_span(spans, nr_spans, c->t0))
		return 0;
	switch (c->kind) {
	case MC_LAUNCH: {
		uint32_t func = model_launch(m, c)->func;

		if (func >= m->nr_funcs)
			return 0;
		*key = ORDER_KEY(MG_KERNEL, m->funcs[func].name);
		return 1;
	}
	case MC_COPY:
		*key = ORDER_KEY(MG_MEMCPY, model_call_args(m, c)->bytes);
		return 1;
	case MC_SET:
		*key = ORDER_KEY(MG_MEMSET, model_call_args(m, c)->bytes);
		return 1;
	default:
		return 0;
	}
}

/*
 * Last resort for operations CUPTI gave no usable correlation for (its API records can stay
 * off after another client used CUPTI): the n-th unjoined execution of a kernel is the n-th
 * unjoined launch of that name, which must come before it; copies and sets pair the same
 * way by size. Calls made while another client held CUPTI have no record of ours to pair
 * with and are left out.
 */
static void join_by_order(struct model *m)
{
	struct order_item *ops, *calls = NULL;
	struct host_span *spans = NULL;
	size_t i, no = 0, nc = 0, a = 0, b = 0, nr_spans = 0;
	uint64_t key;

	/* Counted first: most traces have no operation left to join, so no table. */
	for (i = 0; i < m->nr_gpu; i++)
		no += order_key_op(m, &m->gpu[i], &key);
	if (!no)
		return;
	ops = xmalloc(no * sizeof(*ops));
	for (i = 0, no = 0; i < m->nr_gpu; i++)
		if (order_key_op(m, &m->gpu[i], &key))
			ops[no++] = (struct order_item){ key, m->gpu[i].start, i };
	spans = host_only_spans(m, &nr_spans);
	for (i = 0; i < m->nr_calls; i++)
		nc += order_key_call(m, spans, nr_spans, &m->calls[i], &key);
	calls = xmalloc((nc + 1) * sizeof(*calls));
	for (i = 0, nc = 0; i < m->nr_calls; i++)
		if (order_key_call(m, spans, nr_spans, &m->calls[i], &key))
			calls[nc++] = (struct order_item){ key, m->calls[i].t0, i };
	xqsort(ops, no, sizeof(*ops), cmp_order);
	xqsort(calls, nc, sizeof(*calls), cmp_order);
	while (a < no && b < nc) {
		if (calls[b].key < ops[a].key) {
			b++;
		} else if (ops[a].key < calls[b].key) {
			a++;
		} else if (calls[b].t <= ops[a].t && calls[b].idx < M_NO_CALL) {
			m->gpu[ops[a].idx].call = (uint32_t)calls[b].idx;
			m->calls[calls[b].idx].flags |= MCF_HAS_GPU;
			m->gpu_joined++;
			m->gpu_unjoined--;
			m->gpu_joined_by_order++;
			a++;
			b++;
		} else {
			a++;	/* an execution with no launch before it: left unjoined */
		}
	}
	free(spans);
	free(ops);
	free(calls);
}

/*
 * Sort the calls; operations joined as they were read and the kept results follow their calls
 * to where they went. Returns where each call went when anything else needs it (the seqs of an
 * older trace's calls; the caller frees it), else NULL.
 */
static uint32_t *sort_calls(struct model *m, int is_early)
{
	uint32_t *moved;
	size_t i;

	if ((!is_early || !m->nr_gpu) && !m->nr_results && !m->call_seq) {
		xsort_by(m->calls, m->nr_calls, sizeof(*m->calls), key_call, cmp_call);
		return NULL;
	}
	moved = xmalloc((m->nr_calls + 1) * sizeof(*moved));
	if (xsort_by_moved(m->calls, m->nr_calls, sizeof(*m->calls), key_call, cmp_call,
			   moved) < 0) {
		/* 2^32 calls: none is a join target; the results and seqs cannot follow */
		for (i = 0; i < m->nr_gpu; i++)
			m->gpu[i].call = M_NO_CALL;
		m->nr_results = 0;
		free(m->call_seq);
		m->call_seq = NULL;
		free(moved);
		return NULL;
	}
	if (is_early)
		for (i = 0; i < m->nr_gpu; i++)
			if (m->gpu[i].call != M_NO_CALL)
				m->gpu[i].call = moved[m->gpu[i].call];
	for (i = 0; i < m->nr_results; i++)
		m->results[i].call = moved[m->results[i].call];
	xqsort(m->results, m->nr_results, sizeof(*m->results), cmp_result);
	if (m->call_seq)
		return moved;
	free(moved);
	return NULL;
}

/*
 * Sort the operations by start and end, those that start and end together by CUPTI's number,
 * then as they came (what cmp_gpu cannot see); the numbers follow their operations.
 */
static void sort_gpu(struct model *m)
{
	const size_t n = m->nr_gpu;
	uint32_t *moved, *corr = m->gpu_corr;
	size_t i, j, k;

	if (!n)
		return;
	moved = xmalloc(n * sizeof(*moved));
	if (xsort_by_moved(m->gpu, n, sizeof(*m->gpu), key_gpu, cmp_gpu, moved) < 0) {
		memset(m->gpu_corr, 0, n * sizeof(*m->gpu_corr));	/* 2^32: lost */
		free(moved);
		return;
	}
	xmove_u32(corr, n, moved);
	free(moved);
	for (i = 0; i < n; i = j) {
		uint64_t *by;
		struct m_gpu_op *ops;

		for (j = i + 1; j < n && m->gpu[j].start == m->gpu[i].start &&
				m->gpu[j].end == m->gpu[i].end;
		     j++)
			;
		if (j - i < 2)
			continue;
		by = xmalloc((j - i) * sizeof(*by));
		ops = xmalloc((j - i) * sizeof(*ops));
		for (k = i; k < j; k++)
			by[k - i] = (uint64_t)corr[k] << 32 | (k - i);
		xsort_u64(by, j - i);
		memcpy(ops, m->gpu + i, (j - i) * sizeof(*ops));
		for (k = i; k < j; k++) {
			m->gpu[k] = ops[(uint32_t)by[k - i]];
			corr[k] = (uint32_t)(by[k - i] >> 32);
		}
		free(by);
		free(ops);
	}
}

/* What the dictionaries need once every record is read (model_load and model_stream). */
void model_finish_dictionaries(struct model *m)
{
	size_t i;

	m->fill_memo_cap = m->nr_gpu_shapes + 1;
	m->fill_memo = xcalloc(m->fill_memo_cap, sizeof(*m->fill_memo));
	for (i = 0; i < m->nr_occ; i++)
		m->occ[i].name = m->occ[i].func < m->nr_funcs ? m->funcs[m->occ[i].func].name : 0;
	xqsort(m->occ, m->nr_occ, sizeof(*m->occ), cmp_occ);
	xqsort(m->pm, m->nr_pm, sizeof(*m->pm), cmp_pm);
	if (m->is_complete && m->lost_in_end > m->lost_records)
		m->lost_records = m->lost_in_end;
	/* Counter set-up stalls the driver once: from its PM_SETUP note to PM_ON or PM_OFF. */
	for (i = 0; i < m->nr_notes && !m->pm_setup_start; i++) {
		size_t j;

		if (m->notes[i].kind != TRACE_NOTE_PM_SETUP)
			continue;
		m->pm_setup_start = m->notes[i].ts;
		m->pm_setup_end = m->end_ns > m->pm_setup_start ? m->end_ns : UINT64_MAX;
		for (j = i + 1; j < m->nr_notes; j++)
			if ((m->notes[j].kind == TRACE_NOTE_PM_ON ||
			     m->notes[j].kind == TRACE_NOTE_PM_OFF) &&
			    m->notes[j].ts >= m->pm_setup_start) {
				m->pm_setup_end = m->notes[j].ts;
				break;
			}
	}
}

void model_free_shape_slots(struct model *m)
{
	free(m->gpu_shape_slots);
	free(m->launch_shape_slots);
	m->gpu_shape_slots = m->launch_shape_slots = NULL;
	m->nr_gpu_shape_slots = m->nr_launch_shape_slots = 0;
}

static void model_finish(struct model *m, int is_early)
{
	uint32_t *moved;

	/* The shapes are all in: their hashes served the interning only (rebuilt if ever needed). */
	model_free_shape_slots(m);
	model_finish_dictionaries(m);
	name_undefined_apis(m);
	moved = sort_calls(m, is_early);
	sort_gpu(m);
	if (m->nr_gpu) {
		join_gpu(m, is_early, moved);
		join_by_order(m);
	}
	free(m->gpu_corr);		/* the joins are done */
	m->gpu_corr = NULL;
	m->gpu_corr_cap = 0;
	free(moved);
	free(m->call_seq);
	m->call_seq = NULL;
}

/*
 * A call, operation, counter sample or API record was read: by stage, to the first read's
 * prepass or to the stream (model_stream.c), then to the join as read.
 */
static void call_came(struct model *m, size_t local)
{
	const struct m_call *c = &m->calls[local];
	const size_t id = m->calls_base + local;

	switch (m->stage) {
	case MODEL_FIRST_LOOK:
		prepass_call(m->pre, c, c->kind == MC_LAUNCH ? c->launch : 0);	/* FUNC id */
		prepass_arrival(m->pre, c->t0);
		m->nr_calls = 0;	/* only the dictionaries are kept */
		m->nr_call_args = 0;
		return;
	case MODEL_STREAMING:
		if (model_stream_call(m, id, c) < 0)
			return;
		break;
	default:
		break;
	}
	if (m->ej)
		ej_call(m, m->ej, id);
}

static void op_came(struct model *m, size_t local)
{
	if (m->stage == MODEL_STREAMING && model_stream_op(m, local) < 0)
		return;
	if (m->ej)
		ej_op(m, m->ej, m->gpu_base + local);
}

/* A counter sample, the last of model.pm: the first read keeps none, the second hands it on. */
static void sample_came(struct model *m)
{
	const struct m_pm_sample *d = &m->pm[--m->nr_pm];

	if (m->stage == MODEL_FIRST_LOOK) {
		prepass_arrival(m->pre, d->start);
		m->pre->nr_samples++;
		return;
	}
	model_stream_sample(m, d);
}

static void api_came(struct model *m, const struct m_api_join *a)
{
	switch (m->stage) {
	case MODEL_FIRST_LOOK:
		prepass_arrival(m->pre, a->start);
		return;
	case MODEL_STREAMING:
		model_stream_arrival(m, a->start);
		break;
	default:
		break;
	}
	if (m->ej)
		ej_api(m, m->ej, a);
}

void model_init(struct model *m, const struct trace_reader *rd)
{
	memset(m, 0, sizeof(*m));
	m->path = xstrdup(rd->path);
	m->host = xstrdup(rd->host);
	m->cmdline = xstrdup(rd->cmdline);
	m->shim_version = xstrdup(rd->shim_version);
	m->pid = rd->hdr.pid;
	m->ppid = rd->hdr.ppid;
	m->rank = rd->hdr.rank;
	m->version_major = rd->hdr.version_major;
	m->version_minor = rd->hdr.version_minor;
	m->start_mono_ns = rd->hdr.start_mono_ns;
	m->start_real_ns = rd->hdr.start_real_ns;
	m->file_flags = rd->hdr.flags;
}

int model_read_records(struct model *m, struct trace_reader *rd)
{
	struct trace_record r;
	int ret;

	while ((ret = trace_reader_next(rd, &r)) > 0) {
		/* A trace still being written has grown since the first read: not past it. */
		if (m->stage == MODEL_STREAMING && rd->nr_records > m->nr_records)
			return 0;
		if (m->stage != MODEL_STREAMING)
			m->nr_by_type[r.type < 64 ? r.type : 0]++;
		if (r.is_thread)
			add_thread_record(m, &r);
		else
			add_meta_record(m, &r);
		if (m->st && model_stream_tick(m))
			return 0;	/* m->stream_failed says why */
	}
	if (m->stage == MODEL_STREAMING)
		return ret < 0 ? ret : 0;
	m->is_truncated = rd->is_truncated;
	m->nr_records = rd->nr_records;
	m->nr_chunks = rd->nr_chunks;
	if (!m->is_complete && !rd->is_truncated && ret == 0)
		m->is_truncated = 1;	/* ended on a chunk boundary, but without END */
	return ret < 0 ? ret : 0;
}

static int load_records(struct model *m, struct trace_reader *rd, struct early_join *ej,
			int keep_seq)
{
	int ret;

	model_init(m, rd);
	m->ej = ej;
	m->needs_seq = keep_seq ? NEEDS_SEQ_KEEP : 0;
	ret = model_read_records(m, rd);
	m->ej = NULL;
	return ret;
}

/*
 * Read the trace (again) from the start into @m, freed first: *@cur becomes a reader of its own
 * (closed by the caller) when @rd has been read already.
 */
static int read_again(struct model *m, struct trace_reader *rd, struct trace_reader *again,
		      struct trace_reader **cur)
{
	model_free(m);
	if (*cur == again)
		trace_reader_close(again);
	*cur = again;
	if (trace_reader_open(again, rd->path) < 0) {
		memcpy(rd->err, again->err, sizeof(rd->err));
		*cur = NULL;
		return -EIO;
	}
	return 0;
}

int model_load_opts(struct model *m, struct trace_reader *rd, const struct model_load_opts *o)
{
	struct early_join ej;
	struct trace_reader again, *cur = rd;
	const char *why = NULL;
	int batch = o && o->batch_join, keep_seq = 0, nr_reads = 0, ret;

	for (;;) {
		memset(&ej, 0, sizeof(ej));
		ej.slots = EJ_SLOTS;
		if (o && o->join_window)	/* a power of two, at least 2 */
			for (ej.slots = 2; ej.slots < o->join_window && ej.slots < EJ_SLOTS;)
				ej.slots *= 2;
		ret = load_records(m, cur, batch ? NULL : &ej, keep_seq);
		nr_reads++;
		if (!batch && ej.failed) {
			/* Records the join as they come cannot place: again, joined at the end. */
			why = ej.failed;
			batch = 1;
			keep_seq |= m->needs_seq != 0;
		} else if (m->needs_seq && !keep_seq) {
			keep_seq = 1;	/* an older trace's pushed ids: again, with each call's seq */
		} else {
			break;
		}
		model_ej_free(&ej);
		if (read_again(m, rd, &again, &cur) < 0)
			return -EIO;
	}
	if (ret < 0 && cur != rd)
		memcpy(rd->err, cur->err, sizeof(rd->err));
	if (cur != rd)
		trace_reader_close(cur);
	if (!batch)
		model_ej_finish(m, &ej);
	model_ej_free(&ej);
	m->join_redone = why;
	m->nr_reads = nr_reads;
	model_finish(m, !batch);
	return ret;
}

int model_load(struct model *m, struct trace_reader *rd)
{
	return model_load_opts(m, rd, NULL);
}

void model_free(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nr_strings; i++)
		free(m->strings[i]);
	free(m->strings);
	free(m->apis);
	free(m->funcs);
	free(m->devices);
	free(m->occ);
	free(m->fill_memo);
	free(m->threads);
	free(m->calls);
	free(m->call_args);
	free(m->results);
	free(m->call_seq);
	free(m->gpu);
	free(m->gpu_corr);
	free(m->gpu_shapes);
	free(m->gpu_shape_slots);
	free(m->launch_shapes);
	free(m->launch_shape_slots);
	free(m->notes);
	free(m->api_joins);
	free(m->corrs);
	free(m->pm_configs);
	free(m->pm);
	free(m->path);
	free(m->host);
	free(m->cmdline);
	free(m->shim_version);
	for (i = 0; i < m->nr_owned_names; i++)
		free(m->owned_names[i]);
	free(m->owned_names);
	memset(m, 0, sizeof(*m));
}
