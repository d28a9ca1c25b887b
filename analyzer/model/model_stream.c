// SPDX-License-Identifier: MIT
/*
 * model_stream.c - model_stream (model.h): the run in order of time, little of it held. Two
 * consumers of model.c's record decoder (model_internal.h): the first read's, which feeds the
 * first look and the join check and keeps only the dictionaries, and the second read's, which
 * holds each call, operation and sample until it is due and hands it to the sink.
 * Never prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "first_look.h"
#include "util/util.h"

/*
 * The second read hands calls and operations on in the order model_load sorts them in. A call
 * or operation is released once the latest start read (the watermark) is more than the
 * trace's lateness past it: the first read measured, in the same order, how far behind the
 * watermark any call, operation or API record starts, so none still to come can start before
 * it. An operation also waits for its join: its API record's thread must have made every call
 * up to the record's end. What the join as read cannot settle without the whole trace (an
 * operation no API record joined, or whose API record falls in no call, which the join by
 * launch order might pair) the first read sees (model_join.c's join check): the caller then
 * loads the trace whole instead of the second read.
 */
#define STREAM_EVERY 8192		/* records between releases, at least */
#define STREAM_TRIM_MIN 4096	/* let go of released calls and operations so many at once */

/*
 * A call or operation not yet handed on, with what orders it: a call by start and thread slot
 * (cmp_call), an operation by start and end, then CUPTI's number (sort_gpu); then as they came.
 */
struct held_key {
	uint64_t t, t2;
	uint32_t tie, id;
};

struct held_list {
	struct held_key *v;
	size_t n, cap;
};

static uint64_t key_held(const void *a)
{
	return ((const struct held_key *)a)->t;
}

static int cmp_held(const void *a, const void *b)
{
	const struct held_key *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->t2 != y->t2)
		return x->t2 < y->t2 ? -1 : 1;
	if (x->tie != y->tie)
		return x->tie < y->tie ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void pending_add(struct held_list *p, const struct held_key *k)
{
	XGROW(p->v, p->cap, p->n + 1);
	p->v[p->n++] = *k;
}

/* Move those starting before @r (@all: all) to @out (grown to hold them), in order; how many. */
static size_t pending_take(struct held_list *p, uint64_t r, int all, struct held_key **out,
			   size_t *out_cap)
{
	size_t i, k = 0, n = 0;
	int sorted = 1;

	for (i = 0; i < p->n; i++)
		n += all || p->v[i].t < r;
	XGROW(*out, *out_cap, n);
	for (i = 0, n = 0; i < p->n; i++) {
		if (!all && p->v[i].t >= r) {
			p->v[k++] = p->v[i];
			continue;
		}
		(*out)[n] = p->v[i];
		sorted &= !n || cmp_held(&(*out)[n - 1], &(*out)[n]) < 0;
		n++;
	}
	p->n = k;
	if (!sorted)	/* records mostly come in order: often they are */
		xsort_by(*out, n, sizeof(**out), key_held, cmp_held);
	return n;
}

struct stream_state {
	struct model *m;
	const struct model_sink *sink;
	struct early_join ej;		/* the join as read, and which calls and operations are held */
	uint64_t margin;		/* the first read's lateness + 1 */
	uint64_t watermark;
	size_t since;			/* records since the last release */
	struct held_list calls;	/* the calls not yet handed on */
	struct held_list ops;		/* the operations not yet handed on */
	struct m_pm_sample *samples;	/* the counter samples not yet handed on ... */
	struct held_key *sample_keys;	/* ... and what orders them (id: index in samples) */
	size_t nr_samples, samples_cap, sample_keys_cap;
	int has_samples;		/* the trace has counter samples: an operation waits for
					 * every sample starting before it ends */
	struct held_key *batch;
	size_t batch_cap;
	size_t results_numbered;	/* model.results given their call's number */
	const char *failed;		/* why it gave up (model.stream_failed) */
	size_t held_max;		/* the most calls and operations held at once */
};

static void stream_fail(struct stream_state *st, const char *why)
{
	if (!st->failed)
		st->failed = why;
}

static void stream_arrival(struct stream_state *st, uint64_t t)
{
	if (t > st->watermark)
		st->watermark = t;
}

/* ---- The second read's consumer: each call, operation and sample held until due ---- */

static void stream_call(void *ctx, struct model *m, size_t local)
{
	struct stream_state *st = ctx;
	const struct m_call *c = &m->calls[local];
	const size_t id = st->ej.calls_base + local;

	stream_arrival(st, c->t0);
	if (id >= M_NO_CALL) {
		stream_fail(st, "2^32 calls");
		return;
	}
	pending_add(&st->calls, &(struct held_key){ c->t0, 0, c->thread, (uint32_t)id });
	/* Its result, when not 0, by its number: model_call_result answers while it is held. */
	for (; st->results_numbered < m->nr_results; st->results_numbered++)
		m->results[st->results_numbered].call = (uint32_t)id;
	model_early_join_call(m, &st->ej, id);
}

static void stream_op(void *ctx, struct model *m, size_t local)
{
	struct stream_state *st = ctx;
	const struct m_gpu_op *g = &m->gpu[local];
	const size_t op = st->ej.gpu_base + local;

	stream_arrival(st, g->start);
	if (op >= M_NO_CALL) {
		stream_fail(st, "2^32 operations");
		return;
	}
	XGROW(st->ej.state, st->ej.state_cap, m->nr_gpu);
	st->ej.state[local] = GS_DONE;
	pending_add(&st->ops,
		    &(struct held_key){ g->start, g->end, m->gpu_corr[local], (uint32_t)op });
	model_early_join_op(m, &st->ej, op);
}

static void stream_sample(void *ctx, struct model *m, const struct m_pm_sample *d)
{
	struct stream_state *st = ctx;

	(void)m;
	stream_arrival(st, d->start);
	XGROW(st->samples, st->samples_cap, st->nr_samples + 1);
	st->samples[st->nr_samples++] = *d;
}

static void stream_api(void *ctx, struct model *m, const struct m_api_join *a)
{
	struct stream_state *st = ctx;

	stream_arrival(st, a->start);
	model_early_join_api(m, &st->ej, a);
}

/* NVTX events: the first read gave the first look what it needs. */
static void stream_nvtx(void *ctx, struct model *m, const struct m_nvtx *e)
{
	(void)ctx, (void)m, (void)e;
}

/* Hand operation @op on, counted as join_gpu counts it. */
static void stream_hand_op(struct stream_state *st, uint32_t op)
{
	struct model *m = st->m;
	const struct m_gpu_op *g = mgpu(m, &st->ej, op);
	const struct m_call *c = g->call != M_NO_CALL ? mcall(m, &st->ej, g->call) : NULL;
	int is_graph = model_gpu_shape(m, g)->graph_id != 0;

	if (!c && !is_graph) {
		stream_fail(st, "an operation no API record joined (the join by launch order needs "
				"the whole trace)");
		return;
	}
	if (c) {
		m->gpu_joined++;
		m->gpu_joined_by_api++;
	} else {
		m->gpu_unjoined++;
	}
	if (is_graph) {
		m->gpu_graph_ops++;
		m->gpu_graph_ops_to_launch += c && c->kind == MC_GRAPH_LAUNCH;
	}
	set_state(&st->ej, op, GS_GONE);
	st->sink->op(st->sink->ctx, g, c, g->call);
}

/*
 * Let go of the calls that ended before any API record still to come (or waiting for its
 * thread) starts, and of the operations handed on, from the front, many at a time. @bound is
 * at most the release's: a call that ended before it started before it, so it was handed on.
 * What the calls that stay carry moves to the front of model.call_args with them.
 */
static void stream_trim(struct stream_state *st, uint64_t bound)
{
	struct model *m = st->m;
	struct early_join *ej = &st->ej;
	size_t i, k, front = ej->calls_base, end = ej->calls_base + m->nr_calls, ka;

	for (i = 0; i < ej->nr_pend; i++)
		if (ej->pend[i].a.start < bound)
			bound = ej->pend[i].a.start;
	while (front < end && mcall(m, ej, front)->t1 < bound)
		front++;
	k = front - ej->calls_base;
	if (k >= STREAM_TRIM_MIN && 4 * k >= m->nr_calls) {
		/* Not the calls of operations still held. */
		for (i = 0; i < st->ops.n; i++) {
			const size_t op = st->ops.v[i].id - ej->gpu_base;

			if (ej->state[op] == GS_DONE && m->gpu[op].call < front)
				front = m->gpu[op].call;
		}
		k = front - ej->calls_base;
		for (ka = 0, i = 0; i < k; i++) {
			const struct m_call *c = &m->calls[i];

			if (c->kind == MC_MEM || c->kind == MC_COPY || c->kind == MC_SET)
				ka = (size_t)c->args + 1;
		}
		memmove(m->calls, m->calls + k, (m->nr_calls - k) * sizeof(*m->calls));
		m->nr_calls -= k;
		ej->calls_base = front;
		m->call_id_base = front;	/* what CALL_STACK records are numbered from */
		for (i = 0; i < m->nr_results && m->results[i].call < front; i++)
			;
		if (i) {
			memmove(m->results, m->results + i,
				(m->nr_results - i) * sizeof(*m->results));
			m->nr_results -= i;
			st->results_numbered -= i;
		}
		if (ka) {
			memmove(m->call_args, m->call_args + ka,
				(m->nr_call_args - ka) * sizeof(*m->call_args));
			m->nr_call_args -= ka;
			for (i = 0; i < m->nr_calls; i++) {
				struct m_call *c = &m->calls[i];

				if (c->kind == MC_MEM || c->kind == MC_COPY || c->kind == MC_SET)
					c->args -= (uint32_t)ka;
			}
		}
		for (i = 0; i < ej->nr_tids; i++) {
			struct thread_calls_by_tid *t = &ej->tids[i];
			size_t d = 0;

			while (d < t->n && t->idx[d] < front)
				d++;
			memmove(t->idx, t->idx + d, (t->n - d) * sizeof(*t->idx));
			t->n -= d;
			t->hint = t->hint > d ? t->hint - d : 0;
		}
	}
	for (k = 0; k < m->nr_gpu && ej->state[k] == GS_GONE; k++)
		;
	if (k >= STREAM_TRIM_MIN && 4 * k >= m->nr_gpu) {
		memmove(m->gpu, m->gpu + k, (m->nr_gpu - k) * sizeof(*m->gpu));
		memmove(m->gpu_corr, m->gpu_corr + k, (m->nr_gpu - k) * sizeof(*m->gpu_corr));
		memmove(ej->state, ej->state + k, (m->nr_gpu - k) * sizeof(*ej->state));
		m->nr_gpu -= k;
		ej->gpu_base += k;
	}
}

/* Hand on every call, operation and sample that starts before @r (@all: every one). */
static void stream_release(struct stream_state *st, uint64_t r, int all)
{
	struct model *m = st->m;
	struct early_join *ej = &st->ej;
	const struct model_sink *sink = st->sink;
	uint64_t floor;
	size_t i, k, n;

	if (m->nr_calls + m->nr_gpu > st->held_max)
		st->held_max = m->nr_calls + m->nr_gpu;
	if (ej->failed) {
		stream_fail(st, ej->failed);
		return;
	}
	/* Pairs whose thread has made every call up to the API record's end: joined now. */
	for (i = 0, k = 0; i < ej->nr_pend; i++) {
		const struct early_join_pending *pe = &ej->pend[i];

		if (pe->a.end < r) {
			int64_t call = model_call_in_thread(m, ej->calls_base,
							    model_early_join_tid(ej, pe->a.tid, 0),
							    &pe->a);

			mgpu(m, ej, pe->op)->call = call >= 0 ? (uint32_t)call : M_NO_CALL;
			set_state(ej, pe->op, GS_DONE);
		} else {
			ej->pend[k++] = *pe;
		}
	}
	ej->nr_pend = k;

	/* Counter samples first: an operation's analyses read those starting before it ends. */
	for (i = 0, n = 0; i < st->nr_samples; i++)
		n += all || st->samples[i].start < r;
	XGROW(st->sample_keys, st->sample_keys_cap, n);
	for (i = 0, n = 0; i < st->nr_samples; i++)
		if (all || st->samples[i].start < r)
			st->sample_keys[n++] = (struct held_key){ st->samples[i].start,
								 st->samples[i].device, 0,
								 (uint32_t)i };
	xsort_by(st->sample_keys, n, sizeof(*st->sample_keys), key_held, cmp_held);
	for (i = 0; i < n; i++)
		sink->sample(sink->ctx, &st->samples[st->sample_keys[i].id]);
	for (i = 0, k = 0; i < st->nr_samples; i++)
		if (!all && st->samples[i].start >= r)
			st->samples[k++] = st->samples[i];
	st->nr_samples = k;

	n = pending_take(&st->calls, r, all, &st->batch, &st->batch_cap);
	for (i = 0; i < n; i++)
		sink->call(sink->ctx, mcall(m, ej, st->batch[i].id), st->batch[i].id);

	n = pending_take(&st->ops, r, all, &st->batch, &st->batch_cap);
	for (i = 0; i < n && !st->failed; i++) {
		uint8_t state = ej->state[st->batch[i].id - ej->gpu_base];

		if (state == GS_PEND || (st->has_samples && !all && st->batch[i].t2 >= r))
			break;		/* its join or a sample waits: it and those after it */
		if (state == GS_WAIT)
			stream_fail(st, "an operation whose API record had not come");
		else
			stream_hand_op(st, st->batch[i].id);
	}
	floor = i < n ? st->batch[i].t : r;	/* the first operation held back */
	for (; i < n; i++)
		pending_add(&st->ops, &st->batch[i]);
	if (st->failed)
		return;
	if (!all)
		sink->floor(sink->ctx, floor);
	stream_trim(st, r);
}

/* After each record: release what is due now and then. Nonzero: the stream gave up. */
static int stream_after(void *ctx, struct model *m)
{
	struct stream_state *st = ctx;

	(void)m;
	/* Each release reads what is pending once: at most as often as half of it comes. */
	if (!st->failed && ++st->since >= STREAM_EVERY &&
	    2 * st->since >= st->calls.n + st->ops.n) {
		st->since = 0;
		if (st->watermark > st->margin)
			stream_release(st, st->watermark - st->margin, 0);
	}
	return st->failed != NULL;
}

/* ---- The first read's consumer: the first look and the join check, no call kept ---- */

struct first_read {
	struct first_look *p;
	struct join_check jc;
};

static void first_call(void *ctx, struct model *m, size_t local)
{
	struct first_read *fr = ctx;
	const struct m_call *c = &m->calls[local];

	/* A launch's FUNC id (the first read interns no shape). */
	first_look_call(fr->p, c, c->kind == MC_LAUNCH ? c->launch : 0);
	first_look_arrival(fr->p, c->t0);
	if (c->thread < m->nr_threads)
		model_join_check_call(&fr->jc, m->threads[c->thread].tid, c);
	m->nr_calls = 0;	/* only the dictionaries are kept */
	m->nr_call_args = 0;
}

static void first_op(void *ctx, struct model *m, const struct m_gpu_shape *sh, uint64_t start,
		     uint64_t end, uint32_t corr)
{
	struct first_read *fr = ctx;

	(void)m;
	first_look_op(fr->p, sh, start, end);
	first_look_arrival(fr->p, start);
	model_join_check_op(&fr->jc, corr, sh->graph_id != 0, start);
}

static void first_sample(void *ctx, struct model *m, const struct m_pm_sample *d)
{
	struct first_read *fr = ctx;

	(void)m;
	first_look_arrival(fr->p, d->start);
	fr->p->nr_samples++;
}

static void first_nvtx(void *ctx, struct model *m, const struct m_nvtx *e)
{
	struct first_read *fr = ctx;

	(void)m;
	first_look_nvtx(fr->p, e);
}

static void first_api(void *ctx, struct model *m, const struct m_api_join *a)
{
	struct first_read *fr = ctx;

	(void)m;
	first_look_arrival(fr->p, a->start);
	model_join_check_api(&fr->jc, a);
}

void model_feed(const struct model *m, struct first_look *p, const struct model_sink *sink)
{
	size_t i, c = 0, k = 0;

	first_look_of_model(p, m);
	sink->begin(sink->ctx, m, p);
	for (i = 0; i < m->nr_gpu; i++) {
		const struct m_gpu_op *g = &m->gpu[i];

		for (; k < m->nr_pm && m->pm[k].start < g->end; k++)
			sink->sample(sink->ctx, &m->pm[k]);
		for (; c < m->nr_calls && m->calls[c].t0 < g->start; c++)
			sink->call(sink->ctx, &m->calls[c], (uint32_t)(c < M_NO_CALL ? c : M_NO_CALL));
		sink->op(sink->ctx, g, g->call != M_NO_CALL ? &m->calls[g->call] : NULL, g->call);
	}
	for (; k < m->nr_pm; k++)
		sink->sample(sink->ctx, &m->pm[k]);
	for (; c < m->nr_calls; c++)
		sink->call(sink->ctx, &m->calls[c], (uint32_t)(c < M_NO_CALL ? c : M_NO_CALL));
}

/*
 * The first read: the dictionaries into @m, @p fed. Nonzero when the stream could not settle
 * alone (m->stream_failed says why; @whole set for the load instead), -errno when corrupt.
 */
static int first_read(struct model *m, struct trace_reader *rd, struct first_look *p,
		      struct model_load_opts *whole)
{
	struct first_read fr = { .p = p };
	const struct model_consumer mc = {
		.what = MR_DICTS,
		.call = first_call,
		.op_read = first_op,
		.sample = first_sample,
		.api = first_api,
		.nvtx = first_nvtx,
		.ctx = &fr,
	};
	int ret;

	first_look_init(p);
	model_init(m, rd);
	ret = model_read_records(m, rd, &mc);
	model_join_check_finish(&fr.jc);
	/* Decided now: model_load_opts reads it once, as it would end up reading it. */
	whole->keep_seq = m->has_pushed_ids;
	whole->batch_join = fr.jc.join_failed != NULL;
	whole->join_redone = fr.jc.join_failed;
	if (m->has_pushed_ids)
		m->stream_failed = "an older trace's pushed correlation ids";
	else
		m->stream_failed = fr.jc.stream_failed;
	model_join_check_free(&fr.jc);
	if (ret < 0)
		return ret;
	return m->stream_failed != NULL;
}

/* The second read, through @again (open): to the sink. 0, 1 (gave up) or -errno. */
static int second_read(struct model *m, struct trace_reader *again, const struct first_look *p,
		       const struct model_sink *sink)
{
	struct stream_state st = { .m = m, .sink = sink };
	const struct model_consumer mc = {
		.what = MR_SHAPES | MR_RESULTS,
		.call = stream_call,
		.op = stream_op,
		.sample = stream_sample,
		.api = stream_api,
		.nvtx = stream_nvtx,
		.after = stream_after,
		.ctx = &st,
	};
	int ret;

	st.ej.slots = EARLY_JOIN_SLOTS;
	st.margin = p->max_late_ns < UINT64_MAX ? p->max_late_ns + 1 : UINT64_MAX;
	st.has_samples = p->nr_samples > 0;
	ret = model_read_records(m, again, &mc);
	if (ret == 0 && !st.failed) {
		/* The end: what waited for its thread's next call is joined, the rest is not. */
		model_early_join_finish(m, &st.ej);
		stream_release(&st, UINT64_MAX, 1);
	}
	free(st.ej.state);
	st.ej.state = NULL;
	model_early_join_free(&st.ej);
	free(st.calls.v);
	free(st.ops.v);
	free(st.batch);
	free(st.samples);
	free(st.sample_keys);
	m->stream_failed = st.failed;
	m->stream_held_max = st.held_max;
	if (ret < 0)
		return ret;
	return st.failed != NULL;
}

int model_stream(struct model *m, struct trace_reader *rd, struct first_look *p,
		 const struct model_sink *sink, struct model_load_opts *whole)
{
	struct trace_reader again;
	int ret;
	size_t i;

	memset(whole, 0, sizeof(*whole));
	ret = first_read(m, rd, p, whole);
	if (ret)
		return ret;
	first_look_finish(p, m);
	model_finish_dictionaries(m);
	for (i = 0; i < 65536; i++)
		if (p->apis_used[i / 64] >> (i % 64) & 1)
			model_name_api(m, (uint16_t)i);
	sink->begin(sink->ctx, m, p);

	if (trace_reader_open(&again, rd->path) < 0) {
		memcpy(rd->err, again.err, sizeof(rd->err));
		return -EIO;
	}
	ret = second_read(m, &again, p, sink);
	if (ret < 0)
		memcpy(rd->err, again.err, sizeof(rd->err));
	trace_reader_close(&again);
	model_free_shape_slots(m);
	free(m->calls);
	free(m->call_args);
	free(m->gpu);
	free(m->gpu_corr);
	free(m->results);
	m->results = NULL;
	m->nr_results = m->results_cap = 0;
	m->calls = NULL;
	m->call_args = NULL;
	m->gpu = NULL;
	m->gpu_corr = NULL;
	m->nr_calls = m->nr_call_args = m->nr_gpu = 0;
	m->calls_cap = m->call_args_cap = m->gpu_cap = m->gpu_corr_cap = 0;
	m->nr_reads = 2;
	return ret;
}
