/* SPDX-License-Identifier: MIT */
/*
 * analyze.h - a trace's statistics and findings, computed as its calls and operations come
 * (model_stream: memory bounded by how late records arrive, not by the run's length), or
 * from the whole loaded model when the trace cannot be streamed with the same answer
 * (model.h says when). GPUSHIM_STREAM=0 in the environment always loads it whole.
 */
#ifndef GPUSHIM_ANALYZE_H
#define GPUSHIM_ANALYZE_H

#include "findings.h"
#include "model.h"
#include "stats.h"

/*
 * Another analysis fed with the same calls and operations in the same order (diff's per-trace
 * sums): begin (again when a stream gave up and the trace is loaded whole: start over), then
 * every call and operation as the statistics get them.
 */
struct analyze_extra {
	void (*begin)(void *ctx, const struct model *m);
	void (*call)(void *ctx, const struct m_call *c);
	void (*op)(void *ctx, const struct m_gpu_op *g);
	void *ctx;
};

/*
 * analyze_trace - @m (its dictionaries; every call and operation too when loaded whole), @s
 * and @f for the trace at @path, and @x fed (NULL: none). Prints why it cannot (and, unless
 * @is_quiet, that the trace is truncated) to stderr. Returns 0, or -1 (nothing to free).
 * Free with stats_free, findings_free, model_free.
 */
int analyze_trace(const char *path, struct model *m, struct stats *s, struct findings *f,
		  const struct analyze_extra *x, int is_quiet);

/*
 * analyze_model - the same for a loaded model, in one pass (model_feed), @f's gaps kept when
 * @want_gaps (findings_compute_gaps).
 */
void analyze_model(const struct model *m, struct stats *s, struct findings *f,
		   const struct analyze_extra *x, int want_gaps);

/*
 * analyze_stream - the streamed analysis alone, of the trace behind @rd (not yet read):
 * 1 done (@m, @s, @f as above); 0 the trace must be loaded whole, by model_load_opts with
 * @whole (nothing to free); -1 it is corrupt (rd->err; nothing to free). Prints nothing.
 */
struct trace_reader;
int analyze_stream(struct trace_reader *rd, struct model *m, struct stats *s, struct findings *f,
		   const struct analyze_extra *x, struct model_load_opts *whole);

#endif /* GPUSHIM_ANALYZE_H */
