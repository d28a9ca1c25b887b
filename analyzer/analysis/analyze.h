/* SPDX-License-Identifier: MIT */
/*
 * analyze.h - the one driver of the analyses: a trace's statistics, findings and diff's sums,
 * computed as its calls and operations come (model_stream: memory bounded by how late records
 * arrive, not by the run's length), or from the whole loaded model when the trace cannot be
 * streamed with the same answer (model.h says when). GPUSHIM_STREAM=0 in the environment
 * always loads it whole. stats_compute and findings_compute (stats.h, findings.h) are this
 * driver with one analysis. Never prints.
 */
#ifndef GPUSHIM_ANALYZE_H
#define GPUSHIM_ANALYZE_H

#include "findings.h"
#include "model/model.h"
#include "stats.h"

struct run_feed;
struct model_load_opts;
struct steps_options;

/*
 * analyze_set_steps - the user's step choices (report --step-range, --steps, --window,
 * --whole) for the analyses that follow in this process; NULL: the defaults. Kept by pointer.
 */
void analyze_set_steps(const struct steps_options *o);

/*
 * analyze_trace - @m (its dictionaries; every call and operation too when loaded whole), @s
 * and @f for the trace at @path, and diff's sums @feed (NULL: none; begun again when the
 * stream gave up and the trace is loaded whole). Streams when it can (model_stream), reading
 * the trace twice: the first look, then the stream or the whole load it chose (a third time
 * only when the stream meets an operation whose API record falls in no call of its thread,
 * which the first look cannot see). Return: 0 (m->is_truncated says whether the trace ends
 * early), or -1 with the reader's message (it names the file) in @err; nothing to free then.
 * Prints nothing. Free with stats_free, findings_free, model_free.
 */
int analyze_trace(const char *path, struct model *m, struct stats *s, struct findings *f,
		  struct run_feed *feed, char *err, size_t err_len);

/*
 * What the driver feeds beside the analyses (a timeline exporter, a count): @sink gets every
 * call, operation, counter sample and floor after the analyses took it (its begin after
 * theirs, again when the stream gives up and the trace is loaded whole: it starts over), and
 * @gap each idle gap as the findings split it (findings_gaps_to; @f then keeps none), both with
 * @sink->ctx. @gap may be NULL.
 */
struct analyze_tap {
	const struct model_sink *sink;
	findings_gap_fn gap;
};

/*
 * analyze_trace_tap - analyze_trace with @tap fed too (NULL: none), @s and @f NULL when not
 * wanted, the trace loaded whole when @is_whole (as with GPUSHIM_STREAM=0). Return: 1
 * streamed, 0 loaded whole, -1 as analyze_trace.
 */
int analyze_trace_tap(const char *path, struct model *m, struct stats *s, struct findings *f,
		      struct run_feed *feed, const struct analyze_tap *tap, int is_whole, char *err,
		      size_t err_len);

/*
 * analyze_model - the same for a loaded model, in one pass (model_feed), @f's gaps kept when
 * @want_gaps (findings_compute_gaps).
 */
void analyze_model(const struct model *m, struct stats *s, struct findings *f,
		   struct run_feed *feed, int want_gaps);

/*
 * analyze_stream - the streamed analysis alone, of the trace behind @rd (not yet read):
 * 1 done (@m, @s, @f as above); 0 the trace must be loaded whole, by model_load_opts with
 * @whole (nothing to free); -1 it is corrupt (rd->err; nothing to free). Prints nothing.
 */
struct trace_reader;
int analyze_stream(struct trace_reader *rd, struct model *m, struct stats *s, struct findings *f,
		   struct run_feed *feed, struct model_load_opts *whole);

#endif /* GPUSHIM_ANALYZE_H */
