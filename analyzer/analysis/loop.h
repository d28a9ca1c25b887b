/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the loop the user tunes: its steps (model/steps.h finds them in the first look) and
 * the run's phases, measured as the calls and operations come.
 *
 * Definitions (README "Steps and phases"):
 *   step          NVTX: the chosen range, start to end. Launch stream: from one launch of the
 *                 anchor kernel to the next (the last: a median step long, within the run)
 *   steady step   a step after the warm-up that lies in the steady state
 *   steps/s       steady steps / the steady state's length
 *   GPU busy      time some GPU operation ran (the union over streams and devices), of a
 *                 step or phase, operations counted where they start, cut at its end
 *   phases        start-up: the run's start (the trace's start: the shim loaded with the
 *                 process; else the first call, operation or NVTX event) to the first step;
 *                 warm-up: to the steady state's start; steady; tail: to the run's end
 *   slowest       the steady steps longest of all, each with what it had more of than the
 *                 median steady step: synchronizations, allocations, module loads, or less GPU
 *                 time (the host kept it waiting), or more (more GPU work); and the cause
 *                 whose idle time in it grew the most over the median step's
 *   idle by cause the findings' idle gaps (findings.h) in a steady step, each piece of a
 *                 gap (what the issuing thread was doing then) in the step it falls in
 * Pure: no I/O.
 */
#ifndef GPUSHIM_LOOP_H
#define GPUSHIM_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "model/first_look.h"
#include "model/model.h"
#include "model/steps.h"

#define LOOP_MAX_SERIES (1u << 20)	/* steps kept for the series and percentiles */
#define LOOP_SLOWEST 3

/*
 * The parts of idle time a step records: the gap causes, cause ids 0 (host_sync) to
 * CAUSE_ALLOCATION, then scheduling noise, dependency waits, module loading (findings.h's
 * enum gap_part; findings.h includes this header through stats.h). loop_part_id: the cause id
 * or enum gap_part of part @k.
 */
#define LOOP_NR_GAP_CAUSES 5
#define LOOP_NR_PARTS (LOOP_NR_GAP_CAUSES + 3)
int loop_part_id(int k);


struct loop_step {
	uint64_t start, end;
	uint64_t gpu_ns;		/* GPU busy in it */
	uint32_t launches, syncs, allocs, modules;
};

/* A steady step's idle time (the findings' gaps in it), and by part. */
struct loop_idle {
	uint64_t ns;
	uint64_t part[LOOP_NR_PARTS];
};

enum loop_phase { PHASE_STARTUP, PHASE_WARMUP, PHASE_STEADY, PHASE_TAIL, NR_PHASES };

struct loop_phase_sum {
	uint64_t start, end;
	uint64_t gpu_ns;
	uint64_t launches, syncs, allocs, modules, copies;
};

struct loop_slow {
	size_t step;			/* index into series */
	const char *why;		/* static text */
	int cause;			/* the idle part that grew the most over the median
					 * step's (a cause id or enum gap_part); -1 none */
	uint64_t cause_ns;		/* ... its idle time in the step */
};

struct loop {
	struct steps_found found;	/* found.source STEPS_NONE: no steps (found.why) */
	const char *name;		/* the range's or the anchor kernel's name; NULL none */
	const char *source;		/* "nvtx", "launches", "window", "none" */
	uint64_t count;			/* steps */
	uint64_t warmup;
	uint64_t steady;		/* steady steps */
	uint64_t mean_ns, p50_ns, p99_ns, min_ns, max_ns;	/* of the steady steps */
	double per_s;
	struct loop_phase_sum phase[NR_PHASES];
	struct loop_step *series;	/* every step, in order (at most LOOP_MAX_SERIES) */
	size_t nr_series;
	/* series' idle time, from the first gap on (none without GPU timestamps): loop_step_idle */
	struct loop_idle *idle;
	size_t idle_cap;
	struct loop_slow slowest[LOOP_SLOWEST];
	size_t nr_slowest;
};

struct loop_acc;

/*
 * loop_begin - @l for the run @m whose first look is @p, with the user's choices @o (NULL:
 * the defaults). Then every call and operation in order of start; loop_end finishes @l.
 */
struct loop_acc *loop_begin(struct loop *l, const struct model *m, const struct first_look *p,
			    const struct steps_options *o);
void loop_call(struct loop_acc *a, const struct m_call *c);
void loop_op(struct loop_acc *a, const struct m_gpu_op *g);
/* A piece [@start, @end) of an idle gap (the steady state's) that went to @part (a cause id or
 * enum gap_part, findings_pieces_to): its steps' idle time by cause. */
void loop_idle(struct loop_acc *a, uint64_t start, uint64_t end, int part);
void loop_end(struct loop_acc *a);
void loop_free(struct loop *l);

/*
 * loop_is_steady - whether series[@i] of a finished @l is a steady step: after the warm-up and
 * inside the steady state. The steady figures (steady, mean_ns, ...) are of these steps.
 */
int loop_is_steady(const struct loop *l, size_t i);

/* Step @i's idle time (zeros when it had none). */
const struct loop_idle *loop_step_idle(const struct loop *l, size_t i);

/* The phase (enum loop_phase) time @t falls in; the phases' bounds are set by loop_begin. */
int loop_phase_at(const struct loop *l, uint64_t t);

/* The phase name: "startup", "warmup", "steady", "tail". */
const char *loop_phase_name(int phase);

#endif /* GPUSHIM_LOOP_H */
