// SPDX-License-Identifier: MIT
/*
 * model.c - the run model's dictionaries (strings, entry points, kernels, devices, threads,
 * shapes) and what answers from them, and the record decoder: each record of a read turned
 * into a call, GPU operation, counter sample or API record for the read's consumer
 * (model_internal.h). The whole load is model_load.c's, the stream model_stream.c's, the joins
 * model_join.c's.
 * The decoder hands each call, operation, counter sample and API record to a consumer table
 * (model_internal.h): the whole load's here, model_stream's first read's and second read's in
 * model_stream.c.
 * Ids read from the trace are bounds-checked before they index anything. Never prints.
 */
#define _GNU_SOURCE
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "trace/trace_reader.h"
#include "util/util.h"

/* CUresult values the analyzer interprets (cuda.h is not needed to read a trace). */
#define CUDA_ERROR_NOT_READY_VALUE 600


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

const char *model_gpu_op_name(const struct model *m, const struct m_gpu_shape *sh)
{
	switch (sh->kind) {
	case MG_KERNEL:
		return model_string(m, sh->name, "<kernel>");
	case MG_MEMCPY:
		return sh->copy_kind == TRACE_GPU_COPY_HTOD ? "memcpy HtoD" :
		       sh->copy_kind == TRACE_GPU_COPY_DTOH ? "memcpy DtoH" :
		       sh->copy_kind == TRACE_GPU_COPY_DTOD ? "memcpy DtoD" :
		       sh->copy_kind == TRACE_GPU_COPY_PTOP ? "memcpy PtoP" :
							      "memcpy";
	default:
		return "memset";
	}
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

void model_name_undefined_apis(struct model *m)
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

/* ---- Stretches without GPU timestamps ---- */

struct cupti_note {
	uint64_t ts;
	size_t idx;			/* the order notes came in: ties keep it */
	int is_on;
};

static int cmp_cupti_note(const void *a, const void *b)
{
	const struct cupti_note *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The shim notes a yield at the time the other client's call came, after handing over
 * (which can take long); notes written meanwhile come first, so the notes are put in order
 * of time before they are walked.
 */
static struct m_stretch *host_only(const struct model *m, size_t *n_out, int at_kinds)
{
	struct cupti_note *v;
	struct m_stretch *out;
	size_t i, n = 0, k = 0;
	uint64_t from = 0;
	int has_on = 0, is_off = 0;

	*n_out = 0;
	v = xmalloc((m->nr_notes + 1) * sizeof(*v));
	for (i = 0; i < m->nr_notes; i++) {
		if (m->notes[i].kind != TRACE_NOTE_CUPTI_ON &&
		    m->notes[i].kind != TRACE_NOTE_CUPTI_OFF)
			continue;
		if (at_kinds && m->notes[i].kind == TRACE_NOTE_CUPTI_OFF &&
		    !strncmp(model_string(m, m->notes[i].text, ""),
			     "records dropped at sampled window ", 34))
			continue;
		v[n].ts = m->notes[i].ts;
		v[n].idx = i;
		v[n].is_on = m->notes[i].kind == TRACE_NOTE_CUPTI_ON;
		has_on |= v[n].is_on;
		n++;
	}
	if (!has_on) {
		free(v);
		return NULL;
	}
	xqsort(v, n, sizeof(*v), cmp_cupti_note);
	out = xmalloc((n + 1) * sizeof(*out));
	for (i = 0; i < n; i++) {
		if (!v[i].is_on && !is_off) {
			is_off = 1;
			from = v[i].ts;
		} else if (v[i].is_on && is_off) {
			is_off = 0;
			if (v[i].ts > from)
				out[k++] = (struct m_stretch){ from, v[i].ts };
		}
	}
	if (is_off)
		out[k++] = (struct m_stretch){ from, UINT64_MAX };
	free(v);
	if (!k) {
		free(out);
		return NULL;
	}
	*n_out = k;
	return out;
}

struct m_stretch *model_host_only(const struct model *m, size_t *n_out)
{
	return host_only(m, n_out, 0);
}

struct m_stretch *model_kinds_off(const struct model *m, size_t *n_out)
{
	return host_only(m, n_out, 1);
}

int model_cupti_detached(const struct model *m)
{
	size_t i;

	for (i = 0; i < m->nr_notes; i++)
		if (m->notes[i].kind == TRACE_NOTE_MODE)
			return strstr(model_string(m, m->notes[i].text, ""),
				      "; CUPTI detached between windows") != NULL;
	return 0;
}

int model_sampled(const struct model *m, uint32_t *len_ms, uint32_t *every_ms)
{
	unsigned a = 0, b = 0;
	size_t i;

	for (i = 0; i < m->nr_notes; i++) {
		const char *t;

		if (m->notes[i].kind != TRACE_NOTE_MODE)
			continue;
		t = model_string(m, m->notes[i].text, "");
		if (strncmp(t, "sampled", 7))
			return 0;
		if (sscanf(t, "sampled: GPU timestamps for %u ms every %u ms", &a, &b) != 2)
			a = b = 0;
		if (len_ms)
			*len_ms = a;
		if (every_ms)
			*every_ms = b;
		return 1;
	}
	return 0;
}

struct m_stretch *model_gpu_windows(const struct m_stretch *v, size_t n, uint64_t lo,
				    uint64_t hi, size_t *n_out)
{
	struct m_stretch *out;
	uint64_t at = lo;
	size_t i, k = 0;

	*n_out = 0;
	if (hi <= lo)
		return NULL;
	out = xmalloc((n + 1) * sizeof(*out));
	for (i = 0; i < n && at < hi; i++) {
		if (v[i].to <= at)
			continue;
		if (v[i].from > at)
			out[k++] = (struct m_stretch){ at, v[i].from < hi ? v[i].from : hi };
		at = v[i].to;
	}
	if (at < hi)
		out[k++] = (struct m_stretch){ at, hi };
	if (!k) {
		free(out);
		return NULL;
	}
	*n_out = k;
	return out;
}

/* The first of the @n stretches @v ending after @t, or @n (model.h). */
size_t model_stretches_before(const struct m_stretch *v, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].to <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t model_stretch_of(const struct m_stretch *v, size_t n, uint64_t t)
{
	size_t i = model_stretches_before(v, n, t);

	return i < n && v[i].from <= t ? i : n;
}

uint64_t model_host_only_overlap(const struct m_stretch *v, size_t n, uint64_t a, uint64_t b)
{
	size_t lo = model_stretches_before(v, n, a);
	uint64_t sum = 0;

	for (; lo < n && v[lo].from < b; lo++)
		sum += overlap_ns(a, b, v[lo].from, v[lo].to);
	return sum;
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

static inline __attribute__((always_inline)) uint32_t thread_slot(struct model *m, uint32_t tid,
								   uint32_t index)
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

/* ---- Shapes: what launches and GPU operations have in common, held once ---- */

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

/*
 * A chunk repeats a few shapes many times (struct trace_record's shape_ref): each is interned
 * once a chunk, then found by its ref. The memo of @r's ref in *@v, or NULL for a record
 * without one; *@hit when it holds this chunk's shape (of graph @graph_id: a kernel's graph is
 * in its shape, not in its ref), else it is made this chunk's, its id for the caller to set.
 */
static struct m_shape_memo *shape_memo(struct m_shape_memo **v, size_t *cap,
				       const struct trace_record *r, uint32_t graph_id, int *hit)
{
	struct m_shape_memo *e;

	*hit = 0;
	if (!r || !r->shape_ref)
		return NULL;
	if (r->shape_ref >= *cap) {
		size_t old = *cap;

		XGROW(*v, *cap, (size_t)r->shape_ref + 1);
		memset(*v + old, 0, (*cap - old) * sizeof(**v));
	}
	e = &(*v)[r->shape_ref];
	*hit = e->chunk == r->chunk_off + 1 && e->graph_id == graph_id;
	e->chunk = r->chunk_off + 1;
	e->graph_id = graph_id;
	return e;
}

/* ---- Calls ---- */

struct early_join;

struct m_call_args *model_call_args_new(struct model *m, struct m_call *c)
{
	XGROW(m->call_args, m->call_args_cap, m->nr_call_args + 1);
	c->args = (uint32_t)m->nr_call_args;
	return memset(&m->call_args[m->nr_call_args++], 0, sizeof(*m->call_args));
}

int model_cmp_result(const void *a, const void *b)
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
	r = bsearch(&key, m->results, m->nr_results, sizeof(*m->results), model_cmp_result);
	return r ? r->result : 0;
}

/* ---- Call stacks (1.9) ---- */

int model_cmp_call_stack(const void *a, const void *b)
{
	const struct m_call_stack *x = a, *y = b;

	return x->call < y->call ? -1 : x->call > y->call;
}

uint32_t model_call_stack(const struct model *m, uint64_t id)
{
	const struct m_call_stack key = { .call = (uint32_t)id };
	const struct m_call_stack *r;

	if (id >= M_NO_CALL || !m->nr_call_stacks)
		return 0;
	r = bsearch(&key, m->call_stacks, m->nr_call_stacks, sizeof(*m->call_stacks),
		    model_cmp_call_stack);
	return r ? r->stack : 0;
}

uint32_t model_call_stack_next(const struct model *m, uint64_t id, size_t *cursor)
{
	size_t i = *cursor;

	if (id >= M_NO_CALL || !m->nr_call_stacks)
		return 0;
	/* calls come in order of number, almost always: walk on from the last one asked */
	if (i > m->nr_call_stacks || (i > 0 && m->call_stacks[i - 1].call >= id))
		return model_call_stack(m, id);
	while (i < m->nr_call_stacks && m->call_stacks[i].call < id)
		i++;
	*cursor = i;
	return i < m->nr_call_stacks && m->call_stacks[i].call == id ? m->call_stacks[i].stack : 0;
}

const struct m_stack *model_stack(const struct model *m, uint32_t id)
{
	return id && id <= m->nr_stacks ? &m->stacks[id - 1] : NULL;
}

static int cmp_pc(const void *a, const void *b)
{
	const struct m_pc *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

const struct m_pc *model_pc(const struct model *m, uint64_t pc)
{
	const struct m_pc key = { .pc = pc };

	return m->nr_pcs ? bsearch(&key, m->pcs, m->nr_pcs, sizeof(*m->pcs), cmp_pc) : NULL;
}

/* A STACK record: its frames into the pools. Ids come 1, 2, ... in order; another is not taken. */
static void add_stack(struct model *m, const struct trace_rec_stack *s)
{
	const uint64_t *pcs = (const void *)(s + 1);
	const struct trace_stack_py *py = (const void *)(pcs + s->nr_native);
	struct m_stack *e;

	/* The reader checked the frames fit in the record (trace_reader.c: stack_fits). */
	if (s->id != m->nr_stacks + 1 || m->nr_stack_pcs + s->nr_native >= UINT32_MAX ||
	    m->nr_stack_py + s->nr_python >= UINT32_MAX) {
		m->stacks_bad++;
		return;
	}
	XGROW(m->stacks, m->stacks_cap, m->nr_stacks + 1);
	XGROW(m->stack_pcs, m->stack_pcs_cap, m->nr_stack_pcs + s->nr_native + 1);
	XGROW(m->stack_py, m->stack_py_cap, m->nr_stack_py + s->nr_python + 1);
	e = &m->stacks[m->nr_stacks++];
	e->pcs = (uint32_t)m->nr_stack_pcs;
	e->py = (uint32_t)m->nr_stack_py;
	e->nr_native = s->nr_native;
	e->nr_py = s->nr_python;
	e->flags = s->flags;
	memcpy(&m->stack_pcs[m->nr_stack_pcs], pcs, s->nr_native * sizeof(*pcs));
	memcpy(&m->stack_py[m->nr_stack_py], py, s->nr_python * sizeof(*py));
	m->nr_stack_pcs += s->nr_native;
	m->nr_stack_py += s->nr_python;
}

static void add_pc(struct model *m, const struct trace_rec_pc *p)
{
	XGROW(m->pcs, m->pcs_cap, m->nr_pcs + 1);
	m->pcs[m->nr_pcs++] = (struct m_pc){ p->pc, p->offset, p->module, p->build_id, p->symbol,
					     p->sym_offset };
}

/* Calls of the thread looked back through for a CALL_STACK's: a run's, and a few more (and 16
 * times as many calls of all threads at most). */
#define CALL_STACK_LOOKBACK 4096

/*
 * A CALL_STACK record: it follows its call in the thread's records, so the call is among the
 * thread's last ones read (the same start and entry point). Not found: not taken.
 */
static void add_call_stack(struct model *m, const struct trace_record *r)
{
	const struct trace_rec_call_stack *cs = r->rec;
	size_t i, own;
	uint64_t id;

	/* The thread by its id, not thread_slot: a CALL_STACK of a thread that made no call must
	 * not add one (the first read, which made every slot, does not read CALL_STACKs). */
	/* The thread's own last calls (others' between them do not count), bounded in all. */
	for (i = 1, own = 0; i <= m->nr_calls && own < CALL_STACK_LOOKBACK &&
			     i <= 16 * CALL_STACK_LOOKBACK;
	     i++) {
		const struct m_call *c = &m->calls[m->nr_calls - i];
		const struct m_thread *t = &m->threads[c->thread];

		if (t->tid != r->tid || t->index != r->thread_index)
			continue;
		if (c->t0 == r->ts_ns && c->api == cs->api)
			break;
		own++;
	}
	id = m->call_id_base + m->nr_calls - i;
	if (i > m->nr_calls || own >= CALL_STACK_LOOKBACK || i > 16 * CALL_STACK_LOOKBACK ||
	    id >= M_NO_CALL || !cs->stack) {
		m->stacks_bad++;
		return;
	}
	/*
	 * In order as read, almost always (a run's calls are read together): a call a little
	 * earlier is placed back among the last ones. A second stack for one call, or one far
	 * out of order (only a hostile trace has them), is not taken: the insertion stays short.
	 */
	for (i = m->nr_call_stacks; i > 0 && m->call_stacks[i - 1].call >= id; i--)
		if (m->call_stacks[i - 1].call == id || m->nr_call_stacks - i >= 64) {
			m->stacks_bad++;
			return;
		}
	XGROW(m->call_stacks, m->call_stacks_cap, m->nr_call_stacks + 1);
	memmove(&m->call_stacks[i + 1], &m->call_stacks[i],
		(m->nr_call_stacks - i) * sizeof(*m->call_stacks));
	m->call_stacks[i] = (struct m_call_stack){ (uint32_t)id, cs->stack };
	m->nr_call_stacks++;
}

static struct m_call *new_call(struct model *m, unsigned what, const struct trace_record *r,
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
	if (c->result != 0 && m->nr_calls <= M_NO_CALL && (what & MR_RESULTS)) {
		XGROW(m->results, m->results_cap, m->nr_results + 1);
		m->results[m->nr_results++] =
			(struct m_call_result){ (uint32_t)(m->nr_calls - 1), c->result };
	}
	if (what & MR_SEQ) {
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

/* An NVTX record of the program's (1.6): to the consumer, or kept. */
static void add_nvtx(struct model *m, const struct model_consumer *mc, const struct trace_record *r)
{
	struct m_nvtx e = { .t = r->ts_ns, .thread = thread_slot(m, r->tid, r->thread_index) };

	switch (r->type) {
	case TRACE_REC_NVTX_PUSH:
	case TRACE_REC_NVTX_START:
	case TRACE_REC_NVTX_MARK: {
		const struct trace_rec_nvtx_range *n = r->rec;

		e.kind = r->type == TRACE_REC_NVTX_PUSH	 ? MN_PUSH :
			 r->type == TRACE_REC_NVTX_START ? MN_START :
							   MN_MARK;
		e.domain = n->domain;
		e.name = n->name;
		e.id = n->id;
		e.flags = (uint8_t)n->flags;
		break;
	}
	default: {
		const struct trace_rec_nvtx_end *n = r->rec;

		e.kind = r->type == TRACE_REC_NVTX_POP ? MN_POP : MN_END;
		e.id = n->id;
		if (e.kind == MN_POP)
			e.domain = n->id <= UINT32_MAX ? (uint32_t)n->id : UINT32_MAX;
		break;
	}
	}
	if (mc->nvtx) {
		mc->nvtx(mc->ctx, m, &e);
		return;
	}
	XGROW(m->nvtx, m->nvtx_cap, m->nr_nvtx + 1);
	m->nvtx[m->nr_nvtx++] = e;
}

/* The call kind of each thread record type that is a call (they all begin with trace_call). */
static uint8_t call_kind(uint16_t type)
{
	switch (type) {
	case TRACE_REC_LAUNCH: return MC_LAUNCH;
	case TRACE_REC_GRAPH_LAUNCH: return MC_GRAPH_LAUNCH;
	case TRACE_REC_HOST_FUNC: return MC_HOST_FUNC;
	case TRACE_REC_MEM: return MC_MEM;
	case TRACE_REC_COPY: return MC_COPY;
	case TRACE_REC_SET: return MC_SET;
	case TRACE_REC_SYNC: return MC_SYNC;
	case TRACE_REC_CAPTURE: return MC_CAPTURE;
	case TRACE_REC_GRAPH: return MC_GRAPH;
	case TRACE_REC_MODULE: return MC_MODULE;
	case TRACE_REC_CALL: return MC_OTHER;
	default: return 0;
	}
}

static void add_thread_record(struct model *m, const struct model_consumer *mc,
			      const struct trace_record *r)
{
	const void *p = r->rec;
	const unsigned what = mc->what;
	const uint8_t kind = call_kind(r->type);
	struct m_shape_memo *memo;
	struct m_call *e;
	int hit;

	if (!kind) {
		if (r->type == TRACE_REC_LOST && (what & MR_DICTS))	/* else counted already */
			m->lost_records += ((const struct trace_rec_lost *)p)->nr_records;
		else if (r->type >= TRACE_REC_NVTX_PUSH && r->type <= TRACE_REC_NVTX_MARK)
			add_nvtx(m, mc, r);
		else if (r->type == TRACE_REC_CALL_STACK && (what & MR_RESULTS))
			add_call_stack(m, r);
		return;
	}
	/* One call site: inlined. */
	e = new_call(m, what, r, p, kind);
	switch (kind) {
	case MC_LAUNCH: {
		const struct trace_rec_launch *l = p;
		struct m_launch_shape sh = { .dyn_smem = l->dyn_smem_bytes, .func = l->func };

		/* The first read of model_stream interns no shape: it needs the kernel only. */
		if (!(what & MR_SHAPES)) {
			e->launch = l->func;
			break;
		}
		memcpy(sh.grid, l->grid, sizeof(sh.grid));
		memcpy(sh.block, l->block, sizeof(sh.block));
		memo = shape_memo(&m->launch_memo, &m->launch_memo_cap, r, 0, &hit);
		e->launch = hit ? memo->id : model_launch_shape_add(m, &sh);
		if (memo)
			memo->id = e->launch;
		break;
	}
	case MC_MEM: {
		const struct trace_rec_mem *mem = p;

		*model_call_args_new(m, e) = (struct m_call_args){ mem->bytes, mem->addr };
		e->sub = (uint8_t)mem->kind;
		e->op = (uint8_t)mem->op;
		e->device = (int16_t)(mem->device < -1 || mem->device > 1023 ? -1 : mem->device);
		break;
	}
	case MC_COPY: {
		const struct trace_rec_copy *c = p;

		*model_call_args_new(m, e) = (struct m_call_args){ c->bytes, c->dst };
		e->sub = (uint8_t)c->dir;
		break;
	}
	case MC_SET: {
		const struct trace_rec_set *s = p;

		*model_call_args_new(m, e) = (struct m_call_args){ s->bytes, s->dst };
		break;
	}
	case MC_SYNC: {
		const struct trace_rec_sync *s = p;

		e->sub = (uint8_t)s->kind;
		/* A query that finds work pending reports CUDA_ERROR_NOT_READY: not a failure. */
		if ((s->kind == TRACE_SYNC_STREAM_QUERY || s->kind == TRACE_SYNC_EVENT_QUERY) &&
		    s->call.result == CUDA_ERROR_NOT_READY_VALUE)
			e->flags &= ~MCF_ERROR;
		break;
	}
	case MC_CAPTURE:
		e->sub = (uint8_t)((const struct trace_rec_capture *)p)->op;
		break;
	case MC_GRAPH:
		e->sub = (uint8_t)((const struct trace_rec_graph *)p)->op;
		break;
	case MC_MODULE:
		e->sub = (uint8_t)((const struct trace_rec_module *)p)->op;
		break;
	default:
		break;
	}
	if (mc->call)
		mc->call(mc->ctx, m, m->nr_calls - 1);
}

/* ---- GPU operations ---- */

static uint16_t sat_u16(uint64_t v)
{
	return v < UINT16_MAX ? (uint16_t)v : UINT16_MAX;
}

/*
 * A GPU operation of @shape on @device, CUPTI's number @corr kept beside it for the join; to
 * @mc->op_read instead when shapes are not interned.
 */
static void new_gpu(struct model *m, const struct model_consumer *mc, const struct trace_record *r,
		    struct m_gpu_shape *shape, uint64_t start, uint64_t end, uint32_t corr,
		    uint64_t device)
{
	struct m_shape_memo *memo;
	struct m_gpu_op *g;
	int hit;

	m->has_cupti = 1;
	if (!(mc->what & MR_SHAPES)) {
		shape->device = sat_u16(device);
		mc->op_read(mc->ctx, m, shape, start, end >= start ? end : start, corr);
		return;
	}
	XGROW(m->gpu, m->gpu_cap, m->nr_gpu + 1);
	XGROW(m->gpu_corr, m->gpu_corr_cap, m->nr_gpu + 1);
	m->gpu_corr[m->nr_gpu] = corr;
	g = &m->gpu[m->nr_gpu++];
	g->start = start;
	g->end = end >= start ? end : start;
	g->call = M_NO_CALL;
	shape->device = sat_u16(device);
	memo = shape_memo(&m->gpu_memo, &m->gpu_memo_cap, r, shape->graph_id, &hit);
	g->shape = hit ? memo->id : model_gpu_shape_add(m, shape);
	if (memo)
		memo->id = g->shape;
	if (mc->op)
		mc->op(mc->ctx, m, m->nr_gpu - 1);
}

static void add_meta_record(struct model *m, const struct model_consumer *mc,
			    const struct trace_record *r)
{
	const void *p = r->rec;

	/* The second read of model_stream: the dictionaries are made, only the bulk is new. */
	if (!(mc->what & MR_DICTS) && r->type != TRACE_REC_GPU_KERNEL &&
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
	case TRACE_REC_STACK:
		add_stack(m, p);
		break;
	case TRACE_REC_PC:
		add_pc(m, p);
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

		new_gpu(m, mc, r, &sh, k->start_ns, k->end_ns, k->cupti_corr, k->device);
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

		new_gpu(m, mc, r, &sh, c->start_ns, c->end_ns, c->cupti_corr, c->device);
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

		new_gpu(m, mc, r, &sh, ms->start_ns, ms->end_ns, ms->cupti_corr, ms->device);
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

		m->has_pushed_ids = 1;	/* each call's seq is needed (MR_SEQ) */
		XGROW(m->corrs, m->corrs_cap, m->nr_corrs + 1);
		m->corrs[m->nr_corrs].ext_id = c->ext_id;
		m->corrs[m->nr_corrs].cupti_corr = c->cupti_corr;
		m->nr_corrs++;
		break;
	}
	case TRACE_REC_NVTX_DOMAIN: {
		const struct trace_rec_nvtx_domain *d = p;

		XGROW(m->nvtx_domains, m->nvtx_domains_cap, m->nr_nvtx_domains + 1);
		m->nvtx_domains[m->nr_nvtx_domains++] = (struct m_nvtx_domain){ d->id, d->name };
		break;
	}
	case TRACE_REC_PM_CONFIG: {
		const struct trace_rec_pm_config *c = p;
		struct trace_rec_pm_config *d;

		XGROW(m->pm_configs, m->pm_configs_cap, m->nr_pm_configs + 1);
		d = &m->pm_configs[m->nr_pm_configs++];
		/* A record before 1.7 is shorter: its later slots were not sampled (id 0). */
		memset(d, 0, sizeof(*d));
		memcpy(d, c, r->size < sizeof(*d) ? r->size : sizeof(*d));
		break;
	}
	case TRACE_REC_PM_SAMPLE: {
		const struct trace_rec_pm_sample *ps = p;
		struct m_pm_sample d;
		int k;

		if (ps->end_ns <= ps->start_ns)
			break;		/* no interval: nothing to weigh */
		d.start = ps->start_ns;
		d.end = ps->end_ns;
		d.device = ps->device;
		d.flags = ps->flags;
		/* Slots past a shorter (pre-1.7) record's end were not sampled. */
		for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
			d.value[k] = offsetof(struct trace_rec_pm_sample, value[k + 1]) <= r->size &&
						     isfinite(ps->value[k]) ?
					     ps->value[k] :
					     NAN;
		if (d.end - d.start > m->pm_max_len)
			m->pm_max_len = d.end - d.start;
		if (mc->sample) {
			mc->sample(mc->ctx, m, &d);
			break;
		}
		XGROW(m->pm, m->pm_cap, m->nr_pm + 1);
		m->pm[m->nr_pm++] = d;
		break;
	}
	case TRACE_REC_GPU_API: {
		const struct trace_rec_gpu_api *a = p;
		const struct m_api_join j = { a->start_ns, a->end_ns, a->cupti_corr, a->tid };

		if (mc->api) {
			mc->api(mc->ctx, m, &j);
			break;
		}
		XGROW(m->api_joins, m->api_joins_cap, m->nr_api_joins + 1);
		m->api_joins[m->nr_api_joins++] = j;
		break;
	}
	default:
		break;
	}
}

static int cmp_pm(const void *a, const void *b)
{
	const struct m_pm_sample *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->device < y->device ? -1 : x->device > y->device;
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
	xqsort(m->pcs, m->nr_pcs, sizeof(*m->pcs), cmp_pc);
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
	free(m->gpu_memo);
	free(m->launch_memo);
	m->gpu_memo = m->launch_memo = NULL;
	m->gpu_memo_cap = m->launch_memo_cap = 0;
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

/* Passes over a trace's records since the process started (model_nr_reads). */
static unsigned long nr_reads_total;

unsigned long model_nr_reads(void)
{
	return nr_reads_total;
}

int model_read_records(struct model *m, struct trace_reader *rd, const struct model_consumer *mc)
{
	const int dicts = (mc->what & MR_DICTS) != 0;
	struct trace_record r;
	int ret;

	nr_reads_total++;
	while ((ret = trace_reader_next(rd, &r)) > 0) {
		/* A trace still being written has grown since the read that took the counts. */
		if (!dicts && rd->nr_records > m->nr_records)
			return 0;
		if (dicts)
			m->nr_by_type[r.type < 64 ? r.type : 0]++;
		if (r.is_thread)
			add_thread_record(m, mc, &r);
		else
			add_meta_record(m, mc, &r);
		if (mc->after && mc->after(mc->ctx, m))
			return 0;	/* the consumer says why */
	}
	if (!dicts)
		return ret < 0 ? ret : 0;
	m->is_truncated = rd->is_truncated;
	m->nr_records = rd->nr_records;
	m->nr_chunks = rd->nr_chunks;
	if (!m->is_complete && !rd->is_truncated && ret == 0)
		m->is_truncated = 1;	/* ended on a chunk boundary, but without END */
	return ret < 0 ? ret : 0;
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
	free(m->launch_shapes);
	model_free_shape_slots(m);	/* and the memos by shape_ref */
	free(m->notes);
	free(m->nvtx);
	free(m->nvtx_domains);
	free(m->api_joins);
	free(m->corrs);
	free(m->pm_configs);
	free(m->pm);
	free(m->stacks);
	free(m->stack_pcs);
	free(m->stack_py);
	free(m->pcs);
	free(m->call_stacks);
	free(m->path);
	free(m->host);
	free(m->cmdline);
	free(m->shim_version);
	for (i = 0; i < m->nr_owned_names; i++)
		free(m->owned_names[i]);
	free(m->owned_names);
	memset(m, 0, sizeof(*m));
}
