/* SPDX-License-Identifier: MIT */
/*
 * first_look.h - what the analyses must know before they take the first call or GPU operation in
 * time order, and how late records arrive. Fed every call and operation once, in any order:
 * by a first read of the trace (model_stream), or from a loaded model (first_look_of_model).
 *
 *   median launch call   lazy loading: a kernel's first launch loaded its module for what it
 *                        took beyond the median (findings.c)
 *   longest call         how far back a wait that owns a gap can have begun
 *   each device's begin  its first kernel's start (its first operation's without kernels):
 *                        where its analysis window opens
 *   each kernel's        durations counted in buckets of 1/32 of an octave: the p50 and p99
 *   durations            are then found exactly among the executions of two buckets
 *   lateness             in the order records arrive, how far behind the latest time read so
 *                        far a call, operation or API record starts: what a reader that
 *                        releases them in time order must wait
 *   steps                what the step finder needs (steps.h): each launch, each NVTX event
 *   NVTX ranges          every range, kept with its name, thread, start and end
 *                        (nvtx_ranges.h), for the range table
 *   the run's extent     the first call or operation's start, the last one's end
 * Pure: no I/O.
 */
#ifndef GPUSHIM_FIRST_LOOK_H
#define GPUSHIM_FIRST_LOOK_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "nvtx_ranges.h"
#include "steps.h"

#define FIRST_LOOK_LAUNCH_HIST_NS 256	/* median launch call: buckets of 256 ns ... */
#define FIRST_LOOK_LAUNCH_HIST_N 4096	/* ... up to ~1 ms; longer ones count in the last */

struct first_look_kernel;			/* a kernel's duration buckets (first_look.c) */

/* An operation's [start, end), for the window's end (first_look.c). */
struct first_look_span {
	uint64_t start, end;
};

struct first_look_device {
	uint32_t device;		/* CUPTI device id */
	int has_kernel;
	uint64_t first_kernel;		/* start of its first kernel */
	uint64_t first_op;		/* start of its first operation */
	uint64_t nr_ops;
	uint64_t last_end;		/* the latest end of all its operations */
	uint64_t kernel_end;		/* ... of those starting at first_kernel or later */
	/* those starting before first_kernel that may matter */
	struct first_look_span *before;
	size_t nr_before, before_cap;
};

/* Where a kernel's percentile is: in bucket @bucket, the @rank-th smallest (from 1) there. */
struct first_look_rank {
	uint32_t bucket;
	uint64_t rank;
};

#define FIRST_LOOK_RECENT 64

struct first_look {
	uint64_t *launch_hist;		/* FIRST_LOOK_LAUNCH_HIST_N buckets */
	uint64_t nr_launches;		/* launch calls of a known kernel */
	uint64_t median_launch_ns;	/* after first_look_finish */
	uint64_t max_call_ns;
	uint64_t apis_used[65536 / 64];	/* entry-point ids the calls use */
	struct first_look_device *devices;
	size_t nr_devices, devices_cap;
	struct first_look_kernel *kernels;	/* by STRING id (uthash) */
	/* the last found, by STRING id modulo */
	struct first_look_kernel *recent[FIRST_LOOK_RECENT];
	uint64_t nr_samples;		/* counter samples */
	uint64_t watermark;		/* the latest start read so far */
	uint64_t max_late_ns;		/* the most a start came behind the watermark */
	struct steps_finder *steps;	/* steps_finish() asks it */
	struct nvtx_ranges ranges;	/* finished by first_look_finish */
	uint64_t run_start, run_end;	/* the first start, the last end; 0 when nothing ran */
	int finished;
};

void first_look_init(struct first_look *p);
void first_look_free(struct first_look *p);

/*
 * A call (@func: a launch's FUNC id, else 0), an operation of shape @sh, an API record's start
 * as they arrive.
 */
void first_look_call(struct first_look *p, const struct m_call *c, uint32_t func);
void first_look_op(struct first_look *p, const struct m_gpu_shape *sh, uint64_t start,
		   uint64_t end);
void first_look_arrival(struct first_look *p, uint64_t t);
void first_look_nvtx(struct first_look *p, const struct m_nvtx *e);

/* All fed: the median. Kernels whose STRING id @m does not define count as id 0. */
void first_look_finish(struct first_look *p, const struct model *m);

/* first_look_of_model - @p from the calls and operations of loaded model @m. */
void first_look_of_model(struct first_look *p, const struct model *m);

/* The device's entry, NULL when it ran nothing. */
const struct first_look_device *first_look_find_device(const struct first_look *p, uint32_t device);

/*
 * first_look_window - the analysis window (findings.h) over all devices: from the first device's
 * begin (its first kernel's start, its first operation's without kernels) to the latest end
 * of an operation starting at its device's begin or later. 0 when no operation ran.
 */
int first_look_window(const struct first_look *p, uint64_t *start, uint64_t *end);

/*
 * first_look_ranks - where the nearest-rank 50th and 99th percentiles of kernel @name's durations
 * lie (out[0], out[1]); 0 when it has none.
 */
int first_look_ranks(const struct first_look *p, uint32_t name, struct first_look_rank out[2]);

/* The duration bucket of @ns: exact below 64 ns, then 32 a power of two. */
static inline uint32_t first_look_bucket(uint64_t ns)
{
	int e;

	if (ns < 64)
		return (uint32_t)ns;
	e = 63 - __builtin_clzll(ns);
	return 64 + (uint32_t)(e - 6) * 32 + (uint32_t)((ns >> (e - 5)) & 31);
}

#define FIRST_LOOK_NR_BUCKETS (64 + 58 * 32)

#endif /* GPUSHIM_FIRST_LOOK_H */
