// SPDX-License-Identifier: MIT
/*
 * analyze.c - see analyze.h: the one driver. Its sink hands each call, operation, counter
 * sample and floor to the statistics, the findings and diff's sums, whichever are asked for,
 * from model_stream or from a loaded model (model_feed). Prints nothing.
 */
#include "analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "model/first_look.h"
#include "trace/trace_reader.h"

/* The analyses fed: each NULL when not asked for. */
struct analyses {
	struct stats *s;
	struct findings *f;
	const struct stats *f_stats;	/* what findings_end reads (@s when computed with it) */
	struct run_feed *feed;
	int want_gaps;
	struct stats_acc *sa;
	struct findings_acc *fa;
};

static void sink_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	struct analyses *a = ctx;

	if (a->s)
		a->sa = stats_begin(a->s, m, p);
	if (a->f)
		a->fa = findings_begin(a->f, m, p, a->want_gaps);
	if (a->feed)
		run_feed_begin(a->feed, m);
}

static void sink_call(void *ctx, const struct m_call *c, uint32_t id)
{
	struct analyses *a = ctx;

	if (a->sa)
		stats_call(a->sa, c);
	if (a->fa)
		findings_call(a->fa, c, id);
	if (a->feed)
		run_feed_call(a->feed, c);
}

static void sink_op(void *ctx, const struct m_gpu_op *g, const struct m_call *call, uint32_t id)
{
	struct analyses *a = ctx;

	if (a->sa)
		stats_op(a->sa, g);
	if (a->fa)
		findings_op(a->fa, g, call, id);
	if (a->feed)
		run_feed_op(a->feed, g);
}

static void sink_sample(void *ctx, const struct m_pm_sample *sm)
{
	struct analyses *a = ctx;

	if (a->sa)
		stats_sample(a->sa, sm);
	if (a->fa)
		findings_sample(a->fa, sm);
}

static void sink_floor(void *ctx, uint64_t t)
{
	struct analyses *a = ctx;

	if (a->sa)
		stats_floor(a->sa, t);
	if (a->fa)
		findings_floor(a->fa, t);
}

static const struct model_sink sink_ops = { sink_begin, sink_call, sink_op, sink_sample,
					    sink_floor, NULL };

/* The analyses begun are ended: the statistics first, which the findings' end reads. */
static void end(struct analyses *a)
{
	if (a->sa)
		stats_end(a->sa);
	if (a->fa)
		findings_end(a->fa, a->f_stats);
	a->sa = NULL;
	a->fa = NULL;
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

int analyze_stream(struct trace_reader *rd, struct model *m, struct stats *s, struct findings *f,
		   struct run_feed *feed, struct model_load_opts *whole)
{
	struct analyses a = { s, f, s, feed, 0, NULL, NULL };
	struct model_sink sink = sink_ops;
	struct first_look p;
	int ret, begun;

	sink.ctx = &a;
	ret = model_stream(m, rd, &p, &sink, whole);
	begun = a.sa != NULL;
	end(&a);
	first_look_free(&p);
	if (ret == 0)
		return 1;
	if (begun) {
		stats_free(s);
		findings_free(f);
	}
	model_free(m);
	return ret < 0 ? -1 : 0;
}

void analyze_model(const struct model *m, struct stats *s, struct findings *f,
		   struct run_feed *feed, int want_gaps)
{
	struct analyses a = { s, f, s, feed, want_gaps, NULL, NULL };

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

int analyze_trace(const char *path, struct model *m, struct stats *s, struct findings *f,
		  struct run_feed *feed, char *err, size_t err_len)
{
	const char *env = getenv("GPUSHIM_STREAM");
	struct model_load_opts whole = { 0 };
	struct trace_reader rd;
	int ret = 0;

	if (!env || strcmp(env, "0")) {
		if (open_trace(&rd, path, err, err_len) < 0)
			return -1;
		ret = analyze_stream(&rd, m, s, f, feed, &whole);
		if (ret < 0)
			snprintf(err, err_len, "%s", rd.err);
		trace_reader_close(&rd);
		if (ret < 0)
			return -1;
	}
	if (ret == 1)
		return 0;
	/* Loaded whole, in one read as the first look decided; @feed begun again. */
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
	analyze_model(m, s, f, feed, 0);
	return 0;
}
