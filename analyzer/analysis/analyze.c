// SPDX-License-Identifier: MIT
/*
 * analyze.c - see analyze.h: the one driver. Its sink hands each call, operation, counter
 * sample and floor to the statistics, the findings and diff's sums, whichever are asked for,
 * then to the caller's tap, from model_stream or from a loaded model (model_feed). Prints
 * nothing.
 */
#include "analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "savings.h"
#include "model/first_look.h"
#include "trace/trace_reader.h"

/* The analyses fed: each NULL when not asked for. */
struct analyses {
	struct stats *s;
	struct findings *f;
	const struct stats *f_stats;	/* what findings_end reads (@s when computed with it) */
	struct run_feed *feed;
	int want_gaps;
	const struct analyze_tap *tap;
	struct stats_acc *sa;
	struct findings_acc *fa;
	int is_begun;
	struct loop_acc *la;
	struct ranges_acc *ra;
	struct savings_acc *va;
};

/* The tap's sink, NULL when there is none. */
static const struct model_sink *tap_of(const struct analyses *a)
{
	return a->tap ? a->tap->sink : NULL;
}

/* What analyze_set_steps asked for (NULL: the defaults). */
static const struct steps_options *steps_opts;

void analyze_set_steps(const struct steps_options *o)
{
	steps_opts = o;
}

/* Each piece of an idle gap as the findings split it: to the steps and the ranges. */
static void sink_idle(void *ctx, uint32_t device, uint64_t start, uint64_t end, int part)
{
	struct analyses *a = ctx;

	(void)device;
	if (a->la)
		loop_idle(a->la, start, end, part);
	if (a->ra)
		ranges_idle(a->ra, start, end, part);
}

static void sink_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	struct analyses *a = ctx;
	const struct model_sink *t = tap_of(a);
	uint64_t lo = 0, hi = UINT64_MAX;
	const struct loop *l;

	if (a->s) {
		a->sa = stats_begin(a->s, m, p);
		a->la = loop_begin(&a->s->loop, m, p, steps_opts);
	}
	/* With steps, the verdict is the steady state's (the statistics found them). */
	l = a->s ? &a->s->loop : a->f_stats ? &a->f_stats->loop : NULL;
	if (l && l->found.source != STEPS_NONE) {
		lo = l->phase[PHASE_STEADY].start;
		hi = l->phase[PHASE_STEADY].end;
	}
	if (a->s)
		a->ra = ranges_begin(&a->s->ranges, m, p, lo, hi);
	if (a->f)
		a->fa = findings_begin_window(a->f, m, p, a->want_gaps, lo, hi);
	if (a->f && a->s) {	/* what fixing each cause would save: a replay of the window */
		uint64_t ws, we;

		/* Without steps the window is the GPU's, from its first operation: not the
		 * start-up's calls, which would spend the replay's budget. */
		if (lo == 0 && first_look_window(p, &ws, &we))
			a->va = savings_begin(m, ws, hi);
		else
			a->va = savings_begin(m, lo, hi);
	}
	if (a->fa && t && a->tap->gap)
		findings_gaps_to(a->fa, a->tap->gap, t->ctx);
	if (a->fa && (a->la || a->ra))
		findings_pieces_to(a->fa, sink_idle, a);
	if (a->feed)
		run_feed_begin(a->feed, m);
	if (t)
		t->begin(t->ctx, m, p);
	a->is_begun = 1;
}

static void sink_call(void *ctx, const struct m_call *c, uint32_t id)
{
	struct analyses *a = ctx;

	if (a->sa)
		stats_call(a->sa, c, id);
	if (a->la)
		loop_call(a->la, c);
	if (a->ra)
		ranges_call(a->ra, c);
	if (a->fa)
		findings_call(a->fa, c, id);
	if (a->va)
		savings_call(a->va, c, id);
	if (a->feed)
		run_feed_call(a->feed, c);
	if (tap_of(a))
		a->tap->sink->call(a->tap->sink->ctx, c, id);
}

static void sink_op(void *ctx, const struct m_gpu_op *g, const struct m_call *call, uint32_t id)
{
	struct analyses *a = ctx;

	if (a->sa)
		stats_op(a->sa, g);
	if (a->la)
		loop_op(a->la, g);
	if (a->ra)
		ranges_op(a->ra, g, call);
	if (a->fa)
		findings_op(a->fa, g, call, id);
	if (a->va)
		savings_op(a->va, g, id);
	if (a->feed)
		run_feed_op(a->feed, g);
	if (tap_of(a))
		a->tap->sink->op(a->tap->sink->ctx, g, call, id);
}

static void sink_sample(void *ctx, const struct m_pm_sample *sm)
{
	struct analyses *a = ctx;

	if (a->sa)
		stats_sample(a->sa, sm);
	if (a->fa)
		findings_sample(a->fa, sm);
	if (tap_of(a))
		a->tap->sink->sample(a->tap->sink->ctx, sm);
}

static void sink_floor(void *ctx, uint64_t t)
{
	struct analyses *a = ctx;

	if (a->sa)
		stats_floor(a->sa, t);
	if (a->fa)
		findings_floor(a->fa, t);
	if (tap_of(a))
		a->tap->sink->floor(a->tap->sink->ctx, t);
}

static const struct model_sink sink_ops = { sink_begin, sink_call, sink_op, sink_sample,
					    sink_floor, NULL };

/*
 * The analyses begun are ended: the statistics first, which the findings' end reads; the steps
 * and ranges after, as the findings' end hands on the last gaps; the savings last (they rank
 * the findings' causes, measured over the steps).
 */
static void end(struct analyses *a)
{
	if (a->sa)
		stats_end(a->sa);
	if (a->fa)
		findings_end(a->fa, a->f_stats);
	if (a->la)
		loop_end(a->la);
	if (a->ra)
		ranges_end(a->ra);
	if (a->va)
		savings_end(a->va, a->s, a->f);
	a->sa = NULL;
	a->va = NULL;
	a->fa = NULL;
	a->la = NULL;
	a->ra = NULL;
}

/* A loaded model through the sink, as model_stream would hand it on. */
static void feed_model(const struct model *m, struct analyses *a)
{
	struct model_sink sink = sink_ops;
	struct first_look p;

	sink.ctx = a;
	model_feed(m, &p, &sink);
	end(a);
	first_look_free(&p);
}

/* @a through model_stream: 1 streamed, 0 load it whole (@whole), -1 corrupt (rd->err). */
static int stream(struct trace_reader *rd, struct model *m, struct analyses *a,
		  struct model_load_opts *whole)
{
	struct model_sink sink = sink_ops;
	struct first_look p;
	int ret;

	sink.ctx = a;
	ret = model_stream(m, rd, &p, &sink, whole);
	end(a);
	first_look_free(&p);
	if (ret == 0)
		return 1;
	if (a->is_begun) {
		if (a->s)
			stats_free(a->s);
		if (a->f)
			findings_free(a->f);
	}
	model_free(m);
	return ret < 0 ? -1 : 0;
}

int analyze_stream(struct trace_reader *rd, struct model *m, struct stats *s, struct findings *f,
		   struct run_feed *feed, struct model_load_opts *whole)
{
	struct analyses a = { .s = s, .f = f, .f_stats = s, .feed = feed };

	return stream(rd, m, &a, whole);
}

void analyze_model(const struct model *m, struct stats *s, struct findings *f,
		   struct run_feed *feed, int want_gaps)
{
	struct analyses a = { .s = s, .f = f, .f_stats = s, .feed = feed, .want_gaps = want_gaps };

	feed_model(m, &a);
}

void stats_compute(struct stats *s, const struct model *m)
{
	struct analyses a = { .s = s };

	feed_model(m, &a);
}

void findings_compute(struct findings *f, const struct model *m, const struct stats *s)
{
	struct analyses a = { .f = f, .f_stats = s };

	feed_model(m, &a);
}

void findings_compute_gaps(struct findings *f, const struct model *m, const struct stats *s)
{
	struct analyses a = { .f = f, .f_stats = s, .want_gaps = 1 };

	feed_model(m, &a);
}

/* Open @path into @rd, or say why in @err. */
static int open_trace(struct trace_reader *rd, const char *path, char *err, size_t err_len)
{
	if (trace_reader_open(rd, path) == 0)
		return 0;
	snprintf(err, err_len, "%s", rd->err);
	return -1;
}

int analyze_trace_tap(const char *path, struct model *m, struct stats *s, struct findings *f,
		      struct run_feed *feed, const struct analyze_tap *tap, int is_whole, char *err,
		      size_t err_len)
{
	const char *env = getenv("GPUSHIM_STREAM");
	struct analyses a = { .s = s, .f = f, .f_stats = s, .feed = feed, .tap = tap };
	struct model_load_opts whole = { 0 };
	struct trace_reader rd;
	int ret = 0;

	if (!is_whole && (!env || strcmp(env, "0"))) {
		if (open_trace(&rd, path, err, err_len) < 0)
			return -1;
		ret = stream(&rd, m, &a, &whole);
		if (ret < 0)
			snprintf(err, err_len, "%s", rd.err);
		trace_reader_close(&rd);
		if (ret != 0)
			return ret;
	}
	/* Loaded whole, in one read as the first look decided; @feed and @tap begun again. */
	if (open_trace(&rd, path, err, err_len) < 0)
		return -1;
	ret = model_load_opts(m, &rd, &whole);
	if (ret < 0) {
		snprintf(err, err_len, "%s", rd.err);
		model_free(m);
	}
	trace_reader_close(&rd);
	if (ret < 0)
		return -1;
	a = (struct analyses){ .s = s, .f = f, .f_stats = s, .feed = feed, .tap = tap };
	feed_model(m, &a);
	return 0;
}

int analyze_trace(const char *path, struct model *m, struct stats *s, struct findings *f,
		  struct run_feed *feed, char *err, size_t err_len)
{
	return analyze_trace_tap(path, m, s, f, feed, NULL, 0, err, err_len) < 0 ? -1 : 0;
}
