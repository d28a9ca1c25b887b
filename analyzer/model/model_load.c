// SPDX-License-Identifier: MIT
/*
 * model_load.c - model_load: the whole trace into struct model, in one read through model.c's
 * decoder with GPU operations joined to their calls as the records come (model_join.c); read
 * again only when that join cannot give the join after loading's answer or an older trace's
 * pushed ids need each call's seq (model_stream's first read decides both before, so that a
 * report reads a trace at most twice). Then the calls and operations sorted, the joins after
 * loading done. Never prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "trace/trace_reader.h"
#include "util/util.h"

/* ---- Sorting (the joins: model_join.c) ---- */

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

/*
 * Sort the calls; operations joined as they were read, the kept results and stacks follow their calls
 * to where they went. Returns where each call went when anything else needs it (the seqs of an
 * older trace's calls; the caller frees it), else NULL.
 */
static uint32_t *sort_calls(struct model *m, int is_early)
{
	uint32_t *moved;
	size_t i;

	if ((!is_early || !m->nr_gpu) && !m->nr_results && !m->nr_call_stacks && !m->call_seq) {
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
		m->nr_call_stacks = 0;
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
	xqsort(m->results, m->nr_results, sizeof(*m->results), model_cmp_result);
	for (i = 0; i < m->nr_call_stacks; i++)
		m->call_stacks[i].call = moved[m->call_stacks[i].call];
	xqsort(m->call_stacks, m->nr_call_stacks, sizeof(*m->call_stacks), model_cmp_call_stack);
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

static void model_finish(struct model *m, int is_early)
{
	uint32_t *moved;

	/* The shapes are all in: their hashes served the interning only (rebuilt if ever needed). */
	model_free_shape_slots(m);
	model_finish_dictionaries(m);
	model_name_undefined_apis(m);
	moved = sort_calls(m, is_early);
	sort_gpu(m);
	if (m->nr_gpu) {
		model_join_gpu(m, is_early, moved);
		model_join_by_order(m);
	}
	free(m->gpu_corr);		/* the joins are done */
	m->gpu_corr = NULL;
	m->gpu_corr_cap = 0;
	free(moved);
	free(m->call_seq);
	m->call_seq = NULL;
}

/* The whole load's consumer: every call and operation kept, joined as read through @ctx (an
 * early join), or after loading (no context: the API records are kept). */
static void whole_call(void *ctx, struct model *m, size_t local)
{
	model_early_join_call(m, ctx, local);
}

static void whole_op(void *ctx, struct model *m, size_t local)
{
	model_early_join_op(m, ctx, local);
}

static void whole_api(void *ctx, struct model *m, const struct m_api_join *a)
{
	model_early_join_api(m, ctx, a);
}

static int load_records(struct model *m, struct trace_reader *rd, struct early_join *ej,
			int keep_seq)
{
	struct model_consumer mc = {
		.what = MR_DICTS | MR_SHAPES | MR_RESULTS | (keep_seq ? MR_SEQ : 0),
		.call = ej ? whole_call : NULL,
		.op = ej ? whole_op : NULL,
		.api = ej ? whole_api : NULL,
		.ctx = ej,
	};

	model_init(m, rd);
	return model_read_records(m, rd, &mc);
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
	int batch = o && o->batch_join, keep_seq = o && o->keep_seq, nr_reads = 0, ret;

	for (;;) {
		memset(&ej, 0, sizeof(ej));
		ej.slots = EARLY_JOIN_SLOTS;
		if (o && o->join_window)	/* a power of two, at least 2 */
			for (ej.slots = 2;
			     ej.slots < o->join_window && ej.slots < EARLY_JOIN_SLOTS;)
				ej.slots *= 2;
		ret = load_records(m, cur, batch ? NULL : &ej, keep_seq);
		nr_reads++;
		if (!batch && ej.failed) {
			/* Records the join as they come cannot place: again, joined at the end. */
			why = ej.failed;
			batch = 1;
			keep_seq |= m->has_pushed_ids;
		} else if (m->has_pushed_ids && !keep_seq) {
			keep_seq = 1;	/* an older trace's pushed ids: again, with each call's seq */
		} else {
			break;
		}
		model_early_join_free(&ej);
		if (read_again(m, rd, &again, &cur) < 0)
			return -EIO;
	}
	if (ret < 0 && cur != rd)
		memcpy(rd->err, cur->err, sizeof(rd->err));
	if (cur != rd)
		trace_reader_close(cur);
	if (!batch)
		model_early_join_finish(m, &ej);
	model_early_join_free(&ej);
	m->join_redone = why ? why : o ? o->join_redone : NULL;
	m->nr_reads = nr_reads;
	model_finish(m, !batch);
	return ret;
}

int model_load(struct model *m, struct trace_reader *rd)
{
	return model_load_opts(m, rd, NULL);
}
