/* SPDX-License-Identifier: MIT */
/*
 * diff.h - comparing two runs (each one or more traces of one job). Pure: models are reduced
 * to run summaries keyed by symbolic names only (kernel names, entry-point names, cause ids,
 * copy directions), never by addresses, handles or string ids, and two summaries give a list
 * of changes, biggest first, each labelled as a real change or as within run-to-run noise.
 * No I/O, no printing (diff_output.c prints).
 *
 * Noise: a kernel's mean GPU time changed when the difference exceeds both 3 standard errors
 * of the two means (from each run's per-execution spread) and the noise share of the base
 * mean; run-level times (span, GPU busy, time lost) changed when the difference exceeds the
 * noise share (default 5 %) of the base span. Counts are exact: any difference is a change.
 * The mean steady step (both runs with 2 steady steps or more) changed when the 95 %
 * confidence interval of its change, from Welch's t-test over the steps of each side
 * (analysis/welch.h), excludes 0: its noise is the runs' own spread, not the fixed share, and
 * runs of different lengths compare step for step. What fixing a cause alone saves (the
 * report's replay, savings.h), as a share of the window, changed when it moved by more than
 * the noise share in points: a saving that grew is worse (the cause costs more), when both
 * runs were replayed. A cause's time at one place in the program (the report's places:
 * "host_sync at train.py:57 in train_step", from the call stacks of format 1.9) is judged as
 * the cause's; a place listed on one side only is left out while the other side listed its
 * cause's 16 places and all of them took longer (it may be just below them there).
 */
#ifndef GPUSHIM_DIFF_H
#define GPUSHIM_DIFF_H

#include <stdint.h>

#include "findings.h"
#include "model/model.h"
#include "stats.h"

struct run_kernel;
struct run_api;
struct run_place;

enum run_count {
	RC_LAUNCHES,
	RC_KERNEL_LAUNCHES,
	RC_GRAPH_LAUNCHES,
	RC_SYNCS,
	RC_MEMCPYS,
	RC_MEMCPY_BYTES,
	RC_MEMSETS,
	RC_ALLOCS,
	RC_FREES,
	RC_ERRORS,
	NR_RUN_COUNTS
};

/* Copy directions, as the reader names them. */
#define NR_COPY_DIRS 6

struct run_summary {
	int nr_traces;
	int has_gpu;			/* every trace has GPU timestamps */
	uint64_t span_ns;		/* the longest window among the traces (they run side by side) */
	uint64_t window_ns;		/* summed: the denominator of the shares */
	uint64_t busy_ns;
	uint64_t filled_ns;		/* busy time weighted by SM fill */
	uint64_t lost_ns[NR_CAUSES];
	uint64_t lost_total_ns;		/* the causes that cost time */
	uint64_t saving_ns[NR_CAUSES];	/* what fixing each alone saves (replay), summed */
	int has_saving;			/* every trace was replayed */
	uint64_t counts[NR_RUN_COUNTS];
	uint64_t peak_bytes;		/* the largest per-process peak */
	double peak_pct;		/* -1 unknown */
	uint64_t copy_count[NR_COPY_DIRS], copy_bytes[NR_COPY_DIRS], copy_gpu_ns[NR_COPY_DIRS];
	struct run_kernel *kernels;	/* uthash by name */
	struct run_api *apis;		/* uthash by name */
	struct run_place *places;	/* uthash by "cause at place" (where_place) */
	double place_floor_ns[NR_CAUSES];	/* a full list's last place: those not listed
						 * took at most this long */
	/*
	 * The steady steps' lengths (loop_is_steady) of every trace, pooled in the order added:
	 * 8 bytes a step, at most LOOP_MAX_SERIES a trace.
	 */
	uint64_t *step_ns;
	size_t nr_steps, steps_cap;
	const char *steps_source;	/* "nvtx", "launches", "window"; "mixed" when the traces'
					   differ; NULL: no steady steps */
};

#define DIFF_STEPS_MIN 2		/* steady steps a side needs for a spread, hence an interval */
#define DIFF_STEP_LEVEL 0.95		/* the step time interval's confidence */

void run_summary_init(struct run_summary *r);

/*
 * What a run summary takes from one trace's GPU operations (kernel times by name, copies by
 * direction) and, for traces without GPU records, its copy calls: fed as they come, in order
 * of start (the order sums are made in), from run_feed_begin (zero @o first; a second begin
 * starts over) to run_summary_add, or run_feed_free.
 */
struct run_feed_kernel;
struct run_feed {
	const struct model *m;		/* the trace's dictionaries */
	struct run_feed_kernel *kernels;	/* uthash by name */
	struct run_feed_kernel **by_shape;	/* each GPU shape's kernel, once looked up */
	size_t nr_shapes;			/* by_shape's capacity */
	uint64_t nr_ops;
	uint64_t copy_count[NR_COPY_DIRS], copy_bytes[NR_COPY_DIRS], copy_gpu_ns[NR_COPY_DIRS];
	uint64_t call_copy_count[NR_COPY_DIRS], call_copy_bytes[NR_COPY_DIRS];
};

void run_feed_begin(struct run_feed *o, const struct model *m);
void run_feed_call(struct run_feed *o, const struct m_call *c);
void run_feed_op(struct run_feed *o, const struct m_gpu_op *g);
void run_feed_free(struct run_feed *o);

/* Add one trace of the run: its statistics, findings and what @o was fed (ended here). */
void run_summary_add(struct run_summary *r, const struct stats *s, const struct findings *fd,
		     struct run_feed *o);
/* The same for a loaded model: @m's calls and operations fed first. */
void run_summary_add_model(struct run_summary *r, const struct model *m, const struct stats *s,
			   const struct findings *fd);
void run_summary_free(struct run_summary *r);

/* Whether @r has the steady steps (DIFF_STEPS_MIN) that step time needs. */
int run_has_steps(const struct run_summary *r);
/* The mean steady step (ns); 0 without steady steps. */
double run_step_mean_ns(const struct run_summary *r);
double run_busy_pct(const struct run_summary *r);	/* -1 without GPU timestamps */
double run_fill_pct(const struct run_summary *r);
double run_lost_pct(const struct run_summary *r);

const char *run_count_name(int id);
const char *copy_dir_name(int dir);

enum diff_kind {
	DK_RUN,				/* span, busy, fill, lost, memory peak */
	DK_CAUSE,
	DK_SAVING,			/* what fixing a cause alone saves (replay) */
	DK_COUNT,
	DK_KERNEL,
	DK_API,
	DK_COPY,
	DK_PLACE,			/* a cause's time at one place in the program */
};

enum diff_status {
	DS_SAME,			/* no difference at all */
	DS_NOISE,			/* a difference within run-to-run noise */
	DS_BETTER,
	DS_WORSE,
	DS_CHANGED,			/* a real difference that is neither (e.g. a count) */
	DS_ADDED,
	DS_REMOVED,
};

enum diff_unit { DU_NS, DU_PCT, DU_COUNT, DU_BYTES, DU_PER_S };

struct diff_row {
	int kind;			/* enum diff_kind */
	int status;			/* enum diff_status */
	int unit;			/* enum diff_unit, of base/new */
	const char *key;		/* symbolic: metric, cause id, count name, kernel or API name */
	double base, new;
	double delta;			/* new - base */
	double delta_pct;		/* of base; 0 when base is 0 */
	/* Kernels: counts and means behind the totals; APIs: calls. */
	uint64_t base_count, new_count;
	double base_mean, new_mean;	/* ns */
	double impact_ns;		/* |time it moves|: how rows are ranked */
	const char *what;		/* kernels: "slower", "faster", "more", "fewer", ... */
	/* step_time, steps_per_s: the DIFF_STEP_LEVEL interval of delta_pct (counts: steps) */
	int has_ci;
	double ci_lo_pct, ci_hi_pct;
};

struct diff_result {
	struct diff_row *rows;		/* run rows first (fixed order), then by impact */
	size_t nr_rows, cap;
	double noise_pct;
};

/* Compare @base with @new; @noise_pct: the run-level noise share (e.g. 2.0). */
void diff_compute(struct diff_result *d, const struct run_summary *base,
		  const struct run_summary *new, double noise_pct);
void diff_free(struct diff_result *d);

enum diff_metric { DM_SPAN, DM_BUSY, DM_LOST, DM_STEP };

/*
 * How much worse @new is than @base on @metric, in percent: span - relative growth of the
 * span; busy - drop of GPU busy in percentage points; lost - growth of the time lost, in
 * percentage points of the window; step - relative growth of the mean steady step (the point
 * estimate; diff_step_ci gives its interval). Returns 0 and sets *value, or -1 when the
 * metric needs what a side lacks: GPU timestamps (busy, lost), steady steps (step).
 */
int diff_worse_by(const struct run_summary *base, const struct run_summary *new, int metric,
		  double *value);

/*
 * diff_step_ci - the DIFF_STEP_LEVEL confidence interval of the mean steady step's relative
 * change from @base to @new, in percent (Welch, analysis/welch.h). Returns 0 and sets *@lo_pct,
 * *@hi_pct, or -1 when a side has fewer than DIFF_STEPS_MIN steady steps (or the base's mean
 * step is 0).
 */
int diff_step_ci(const struct run_summary *base, const struct run_summary *new, double *lo_pct,
		 double *hi_pct);
const char *diff_metric_name(int metric);
const char *diff_status_name(int status);

#endif /* GPUSHIM_DIFF_H */
