/* SPDX-License-Identifier: MIT */
/*
 * steps.h - the training or serving loop's steps, found by the first look so that the analyses
 * know before the first call which part of the run is the loop the user tunes. A step source,
 * in order:
 *
 *   a range the user names  --step-range NAME: that NVTX range, wherever it is
 *   NVTX                    a range that repeats at the top level of a thread (its push/pop
 *                           or start/end stack empty when it opens), names like step, iter,
 *                           batch preferred; else the repeating one covering most of the time
 *                           between its first and last, if at least half of it
 *   the launch stream       an anchor kernel: launched by one thread at least
 *                           STEPS_AUTO_MIN times, always the same number of launches apart
 *                           (the same sequence between them) in at least STEPS_AUTO_REGULAR of
 *                           its repetitions, at least STEPS_AUTO_MIN_LAUNCHES apart and at
 *                           most one in STEPS_AUTO_MIN_LAUNCHES of its thread's launches (a
 *                           CUDA graph's launches, one key for all graphs, need neither: a
 *                           graph can be a step); of
 *                           those, the one explaining the most launches (count x period),
 *                           then the longest period, then the earliest
 *   none                    and why
 *
 * Phases: start-up before the first step (imports, model build, weights upload, compilation
 * before the loop), warm-up (the first steps unlike the steady ones: another launch sequence,
 * or more than STEPS_WARMUP_SLOWER times the median step; at most half of the steps), the
 * steady state, the tail after the last step. Fed launches and NVTX events in each thread's
 * order of time (any order across threads). Pure: no I/O.
 */
#ifndef GPUSHIM_STEPS_H
#define GPUSHIM_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define STEPS_AUTO_MIN 5		/* an anchor's launches, at least */
#define STEPS_AUTO_MIN_LAUNCHES 4	/* launches a step, at least (periods of 1-3 are loops) */
#define STEPS_AUTO_REGULAR 0.8		/* share of its periods equal to the one before */
#define STEPS_WARMUP_SLOWER 1.5		/* a leading step this much slower than the median */
#define STEPS_EARLY 64			/* the first occurrences kept of each candidate */
#define STEPS_MAX_KEPT (1u << 20)	/* NVTX occurrences kept in all (16 bytes each) */
#define STEPS_MAX_DEPTH 64		/* NVTX nesting followed per thread; deeper only counted */
#define STEPS_MAX_OPEN (1u << 16)	/* start/end ranges open at once */
#define STEPS_GRAPH_FUNC UINT32_MAX	/* steps_launch's kernel for every graph launch */

enum steps_source {
	STEPS_NONE = 0,
	STEPS_NVTX,			/* an NVTX range */
	STEPS_AUTO,			/* the launch stream's period */
	STEPS_WINDOW,			/* the user's --window */
};

/* What the user asked (report options); zeroed: the defaults. */
struct steps_options {
	const char *range_name;		/* --step-range NAME */
	int whole;			/* --whole: no phases; the run is one window */
	int has_window;			/* --window START:END, seconds from the trace's start */
	double window_from_s, window_to_s;
	int has_steps;			/* --steps A:B, 1-based, inclusive */
	uint64_t steps_from, steps_to;
};

struct steps_span {
	uint64_t start, end;
};

/* The answer (steps_finish). Times in CLOCK_MONOTONIC ns; 0 where unknown. */
struct steps_found {
	int source;			/* enum steps_source */
	const char *why;		/* STEPS_NONE: why none; else NULL (static text) */
	uint32_t name;			/* STRING id: the range's; the anchor kernel's */
	uint32_t domain;		/* NVTX domain (0: default) */
	uint32_t thread;		/* the thread slot whose steps they are */
	uint32_t anchor_func;		/* STEPS_AUTO: the anchor's FUNC id */
	uint64_t anchor_gap;		/* STEPS_AUTO: launches a step */
	uint64_t count;			/* steps */
	uint64_t warmup;		/* of them, warm-up steps */
	uint64_t first_start;		/* the first step's start: start-up ends */
	uint64_t steady_start, steady_end;
	uint64_t median_ns;		/* a steady step's length as the first look sees it */
	/* STEPS_NVTX: each step (all of them, or none when more than STEPS_MAX_KEPT) */
	struct steps_span *v;
	size_t nr;
	/* what the NVTX records held that could not be followed */
	uint64_t nr_ranges, nr_unbalanced, nr_too_deep, nr_unmatched_ends, nr_marks;
};

struct steps_finder;

struct steps_finder *steps_finder_new(void);
void steps_finder_free(struct steps_finder *f);

/* A launch of kernel @func (FUNC id; 0 unknown; STEPS_GRAPH_FUNC: a graph) by thread slot
 * @thread at @t. */
void steps_launch(struct steps_finder *f, uint32_t thread, uint32_t func, uint64_t t);
/* An NVTX event (struct m_nvtx). */
void steps_nvtx(struct steps_finder *f, const struct m_nvtx *e);

/*
 * steps_finish - the steps of the run @m (its strings name the ranges, its funcs the kernels)
 * into @out as @o asks; @run_start and @run_end bound the run (start-up from @run_start, the
 * tail to @run_end). Free with steps_found_free.
 */
void steps_finish(struct steps_finder *f, const struct model *m, const struct steps_options *o,
		  uint64_t run_start, uint64_t run_end, struct steps_found *out);
void steps_found_free(struct steps_found *s);

/* "step", "iteration" ...: does @name read as a step's name? */
int steps_name_is_steplike(const char *name);

#endif /* GPUSHIM_STEPS_H */
