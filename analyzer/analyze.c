// SPDX-License-Identifier: MIT
/*
 * analyze.c - see analyze.h: the statistics and findings as model_stream's sink.
 */
#include "analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "prepass.h"
#include "trace_reader.h"

struct both {
	struct stats *s;
	struct findings *f;
	int want_gaps;
	const struct analyze_extra *x;
	struct stats_acc *sa;
	struct findings_acc *fa;
};

static void both_begin(void *ctx, const struct model *m, const struct prepass *p)
{
	struct both *b = ctx;

	b->sa = stats_begin(b->s, m, p);
	b->fa = findings_begin(b->f, m, p, b->want_gaps);
	if (b->x)
		b->x->begin(b->x->ctx, m);
}

static void both_call(void *ctx, const struct m_call *c, uint32_t id)
{
	struct both *b = ctx;

	stats_call(b->sa, c);
	findings_call(b->fa, c, id);
	if (b->x)
		b->x->call(b->x->ctx, c);
}

static void both_op(void *ctx, const struct m_gpu_op *g, const struct m_call *call, uint32_t id)
{
	struct both *b = ctx;

	stats_op(b->sa, g);
	findings_op(b->fa, g, call, id);
	if (b->x)
		b->x->op(b->x->ctx, g);
}

static void both_sample(void *ctx, const struct m_pm_sample *sm)
{
	struct both *b = ctx;

	stats_sample(b->sa, sm);
	findings_sample(b->fa, sm);
}

static void both_floor(void *ctx, uint64_t t)
{
	struct both *b = ctx;

	stats_floor(b->sa, t);
	findings_floor(b->fa, t);
}

int analyze_stream(struct trace_reader *rd, struct model *m, struct stats *s, struct findings *f,
		   const struct analyze_extra *x, struct model_load_opts *whole)
{
	struct both b = { s, f, 0, x, NULL, NULL };
	const struct model_sink sink = { both_begin, both_call, both_op, both_sample, both_floor,
					 &b };
	struct prepass p;
	int ret = model_stream(m, rd, &p, &sink, whole);

	if (b.sa) {
		stats_end(b.sa);
		findings_end(b.fa, s);
	}
	prepass_free(&p);
	if (ret == 0)
		return 1;
	if (b.sa) {
		stats_free(s);
		findings_free(f);
	}
	model_free(m);
	return ret < 0 ? -1 : 0;
}

void analyze_model(const struct model *m, struct stats *s, struct findings *f,
		   const struct analyze_extra *x, int want_gaps)
{
	struct both b = { s, f, want_gaps, x, NULL, NULL };
	const struct model_sink sink = { both_begin, both_call, both_op, both_sample, both_floor,
					 &b };
	struct prepass p;

	model_feed(m, &p, &sink);
	stats_end(b.sa);
	findings_end(b.fa, s);
	prepass_free(&p);
}

/* 1: streamed; 0: load it whole with @whole; -1: the trace cannot be read (printed). */
static int try_stream(const char *path, struct model *m, struct stats *s, struct findings *f,
		      const struct analyze_extra *x, struct model_load_opts *whole)
{
	struct trace_reader rd;
	int ret;

	if (trace_reader_open(&rd, path) < 0) {
		cmd_error(rd.err);
		return -1;
	}
	ret = analyze_stream(&rd, m, s, f, x, whole);
	if (ret < 0)
		cmd_error(rd.err);
	trace_reader_close(&rd);
	return ret;
}

/* The whole trace into @m, read once as the first look said (@o). 0, or -1 (printed). */
static int load_whole(const char *path, struct model *m, const struct model_load_opts *o)
{
	struct trace_reader rd;
	int ret;

	if (trace_reader_open(&rd, path) < 0) {
		cmd_error(rd.err);
		return -1;
	}
	ret = model_load_opts(m, &rd, o);
	if (ret < 0) {
		cmd_error(rd.err);
		model_free(m);
	}
	trace_reader_close(&rd);
	return ret < 0 ? -1 : 0;
}

int analyze_trace(const char *path, struct model *m, struct stats *s, struct findings *f,
		  const struct analyze_extra *x, int is_quiet)
{
	const char *env = getenv("GPUSHIM_STREAM");
	struct model_load_opts whole = { 0 };
	int ret = 0;

	if (!env || strcmp(env, "0"))
		ret = try_stream(path, m, s, f, x, &whole);
	if (ret < 0)
		return -1;
	if (ret == 0) {
		if (load_whole(path, m, &whole) < 0)
			return -1;
		/* @x begun again: what a stream that gave up fed it is dropped. */
		analyze_model(m, s, f, x, 0);
	}
	if (m->is_truncated && !is_quiet)
		cmd_warn_truncated(path, m->nr_chunks);
	return 0;
}
