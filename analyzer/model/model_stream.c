// SPDX-License-Identifier: MIT
/*
 * model_stream.c - model_stream (model.h): the run in order of time, little of it held. The
 * records are read by model.c, which hands each call, operation and sample of the second read
 * here (model_internal.h); this file holds them until they are due and hands them to the sink.
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
 * operation no API record joined, which the join by launch order might pair) ends the stream;
 * the caller loads the trace whole instead.
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
	const struct model_sink *sink;
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
	size_t state_cap;
	struct held_key *batch;
	size_t batch_cap;
};

static void stream_fail(struct model *m, const char *why)
{
	if (!m->stream_failed)
		m->stream_failed = why;
}


void model_stream_arrival(struct model *m, uint64_t t)
{
	if (t > m->st->watermark)
		m->st->watermark = t;
}

int model_stream_call(struct model *m, size_t id, const struct m_call *c)
{
	model_stream_arrival(m, c->t0);
	if (id >= M_NO_CALL) {
		stream_fail(m, "2^32 calls");
		return -1;
	}
	pending_add(&m->st->calls, &(struct held_key){ c->t0, 0, c->thread, (uint32_t)id });
	return 0;
}

int model_stream_op(struct model *m, size_t local)
{
	const struct m_gpu_op *g = &m->gpu[local];
	struct stream_state *st = m->st;
	const size_t op = m->gpu_base + local;

	model_stream_arrival(m, g->start);
	if (op >= M_NO_CALL) {
		stream_fail(m, "2^32 operations");
		return -1;
	}
	XGROW(m->gpu_state, st->state_cap, m->nr_gpu);
	m->gpu_state[local] = GS_DONE;
	pending_add(&st->ops,
		    &(struct held_key){ g->start, g->end, m->gpu_corr[local], (uint32_t)op });
	return 0;
}

void model_stream_sample(struct model *m, const struct m_pm_sample *d)
{
	struct stream_state *st = m->st;

	model_stream_arrival(m, d->start);
	XGROW(st->samples, st->samples_cap, st->nr_samples + 1);
	st->samples[st->nr_samples++] = *d;
}

/* Hand operation @op on, counted as join_gpu counts it. */
static void stream_hand_op(struct model *m, uint32_t op)
{
	const size_t i = op - m->gpu_base;
	const struct m_gpu_op *g = &m->gpu[i];
	const struct m_call *c = g->call != M_NO_CALL ? mcall(m, g->call) : NULL;
	int is_graph = model_gpu_shape(m, g)->graph_id != 0;

	if (!c && !is_graph) {
		stream_fail(m, "an operation no API record joined (the join by launch order needs "
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
	m->gpu_state[i] = GS_GONE;
	m->st->sink->op(m->st->sink->ctx, g, c, g->call);
}

/*
 * Let go of the calls that ended before any API record still to come (or waiting for its
 * thread) starts, and of the operations handed on, from the front, many at a time. @bound is
 * at most the release's: a call that ended before it started before it, so it was handed on.
 */
static void stream_trim(struct model *m, uint64_t bound)
{
	struct stream_state *st = m->st;
	struct early_join *ej = m->ej;
	size_t i, k, front = m->calls_base, end = m->calls_base + m->nr_calls, args;

	for (i = 0; i < ej->nr_pend; i++)
		if (ej->pend[i].a.start < bound)
			bound = ej->pend[i].a.start;
	while (front < end && mcall(m, front)->t1 < bound)
		front++;
	k = front - m->calls_base;
	if (k >= STREAM_TRIM_MIN && 4 * k >= m->nr_calls) {
		size_t ka;

		/* Not the calls of operations still held. */
		for (i = 0; i < st->ops.n; i++) {
			const size_t op = st->ops.v[i].id - m->gpu_base;

			if (m->gpu_state[op] == GS_DONE && m->gpu[op].call < front)
				front = m->gpu[op].call;
		}
		for (args = m->call_args_base, i = m->calls_base; i < front; i++) {
			const struct m_call *c = mcall(m, i);

			if (c->kind == MC_MEM || c->kind == MC_COPY || c->kind == MC_SET)
				args = (size_t)c->args + 1;
		}
		k = front - m->calls_base;
		ka = args - m->call_args_base;

		memmove(m->calls, m->calls + k, (m->nr_calls - k) * sizeof(*m->calls));
		m->nr_calls -= k;
		m->calls_base = front;
		if (m->nr_call_args > ka)
			memmove(m->call_args, m->call_args + ka,
				(m->nr_call_args - ka) * sizeof(*m->call_args));
		m->nr_call_args -= ka;
		m->call_args_base = args;
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
	for (k = 0; k < m->nr_gpu && m->gpu_state[k] == GS_GONE; k++)
		;
	if (k >= STREAM_TRIM_MIN && 4 * k >= m->nr_gpu) {
		memmove(m->gpu, m->gpu + k, (m->nr_gpu - k) * sizeof(*m->gpu));
		memmove(m->gpu_corr, m->gpu_corr + k, (m->nr_gpu - k) * sizeof(*m->gpu_corr));
		memmove(m->gpu_state, m->gpu_state + k, (m->nr_gpu - k) * sizeof(*m->gpu_state));
		m->nr_gpu -= k;
		m->gpu_base += k;
	}
}

/* Hand on every call, operation and sample that starts before @r (@all: every one). */
static void stream_release(struct model *m, uint64_t r, int all)
{
	struct stream_state *st = m->st;
	struct early_join *ej = m->ej;
	const struct model_sink *sink = st->sink;
	uint64_t floor;
	size_t i, k, n;

	if (m->nr_calls + m->nr_gpu > m->stream_held_max)
		m->stream_held_max = m->nr_calls + m->nr_gpu;
	if (ej->failed) {
		stream_fail(m, ej->failed);
		return;
	}
	/* Pairs whose thread has made every call up to the API record's end: joined now. */
	for (i = 0, k = 0; i < ej->nr_pend; i++) {
		const struct early_join_pending *pe = &ej->pend[i];

		if (pe->a.end < r) {
			int64_t call = model_call_in_thread(m, model_early_join_tid(ej, pe->a.tid, 0), &pe->a);

			mgpu(m, pe->op)->call = call >= 0 ? (uint32_t)call : M_NO_CALL;
			set_state(m, pe->op, GS_DONE);
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
		sink->call(sink->ctx, mcall(m, st->batch[i].id), st->batch[i].id);

	n = pending_take(&st->ops, r, all, &st->batch, &st->batch_cap);
	for (i = 0; i < n && !m->stream_failed; i++) {
		uint8_t state = m->gpu_state[st->batch[i].id - m->gpu_base];

		if (state == GS_PEND || (st->has_samples && !all && st->batch[i].t2 >= r))
			break;		/* its join or a sample waits: it and those after it */
		if (state == GS_WAIT)
			stream_fail(m, "an operation whose API record had not come");
		else
			stream_hand_op(m, st->batch[i].id);
	}
	floor = i < n ? st->batch[i].t : r;	/* the first operation held back */
	for (; i < n; i++)
		pending_add(&st->ops, &st->batch[i]);
	if (m->stream_failed)
		return;
	if (!all)
		sink->floor(sink->ctx, floor);
	stream_trim(m, r);
}

int model_stream_tick(struct model *m)
{
	struct stream_state *st = m->st;

	/* Each release reads what is pending once: at most as often as half of it comes. */
	if (!m->stream_failed && ++st->since >= STREAM_EVERY &&
	    2 * st->since >= st->calls.n + st->ops.n) {
		st->since = 0;
		if (st->watermark > st->margin)
			stream_release(m, st->watermark - st->margin, 0);
	}
	return m->stream_failed != NULL;
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

int model_stream(struct model *m, struct trace_reader *rd, struct first_look *p,
		 const struct model_sink *sink, struct model_load_opts *whole)
{
	struct trace_reader again;
	struct stream_state st;
	struct early_join ej;
	struct join_check jc;
	int ret;
	size_t i;

	first_look_init(p);
	model_init(m, rd);
	memset(&jc, 0, sizeof(jc));
	memset(whole, 0, sizeof(*whole));
	m->stage = MODEL_FIRST_LOOK;
	m->pre = p;
	m->jc = &jc;
	ret = model_read_records(m, rd);
	m->pre = NULL;
	m->jc = NULL;
	model_join_check_finish(&jc);
	/* Decided now: model_load_opts reads it once, as it would end up reading it. */
	whole->keep_seq = m->needs_seq != 0;
	whole->batch_join = jc.join_failed != NULL;
	whole->join_redone = jc.join_failed;
	if (m->needs_seq)
		stream_fail(m, "an older trace's pushed correlation ids");
	else if (jc.stream_failed)
		stream_fail(m, jc.stream_failed);
	model_join_check_free(&jc);
	if (ret < 0)
		return ret;
	if (m->stream_failed)
		return 1;
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
	memset(&st, 0, sizeof(st));
	memset(&ej, 0, sizeof(ej));
	ej.slots = EARLY_JOIN_SLOTS;
	st.sink = sink;
	st.margin = p->max_late_ns < UINT64_MAX ? p->max_late_ns + 1 : UINT64_MAX;
	st.has_samples = p->nr_samples > 0;
	m->st = &st;
	m->ej = &ej;
	m->stage = MODEL_STREAMING;
	ret = model_read_records(m, &again);
	if (ret < 0)
		memcpy(rd->err, again.err, sizeof(rd->err));
	if (ret == 0 && !m->stream_failed) {
		/* The end: what waited for its thread's next call is joined, the rest is not. */
		model_early_join_finish(m, &ej);
		stream_release(m, UINT64_MAX, 1);
	}
	trace_reader_close(&again);
	model_early_join_free(&ej);
	free(st.calls.v);
	free(st.ops.v);
	free(st.batch);
	free(st.samples);
	free(st.sample_keys);
	m->st = NULL;
	m->ej = NULL;
	model_free_shape_slots(m);
	free(m->calls);
	free(m->call_args);
	free(m->gpu);
	free(m->gpu_corr);
	free(m->gpu_state);
	m->calls = NULL;
	m->call_args = NULL;
	m->gpu = NULL;
	m->gpu_corr = NULL;
	m->gpu_state = NULL;
	m->nr_calls = m->nr_call_args = m->nr_gpu = 0;
	m->calls_cap = m->call_args_cap = m->gpu_cap = m->gpu_corr_cap = 0;
	m->calls_base = m->call_args_base = m->gpu_base = 0;
	m->stage = MODEL_WHOLE;
	m->nr_reads = 2;
	if (ret < 0)
		return ret;
	return m->stream_failed ? 1 : 0;
}

