/* SPDX-License-Identifier: MIT */
/*
 * counters.h - hardware counters (PM sampling) over the run: time-weighted means, means over
 * any interval (a kernel's execution, a stretch of the timeline), and the classification of
 * GPU busy time into bandwidth-bound and compute-bound. Pure: model in, numbers out.
 *
 * Definitions (README "Hardware counters"):
 *   mean over [a,b)   sum of value x overlap(sample, [a,b)) / sum of overlap, per slot, over the
 *                     samples of the device; NaN when no sample of that slot overlaps.
 *   bandwidth-bound   a sample with DRAM >= PM_DRAM_HIGH_PCT while SM throughput and the tensor
 *                     pipe are < PM_SM_LOW_PCT: the SMs wait on memory.
 *   compute-bound     a sample with SM throughput or tensor pipe >= PM_COMPUTE_HIGH_PCT.
 *   time              the GPU's busy time (kernels, memsets: their union) inside such samples.
 *   left out          samples that meet a stretch without GPU timestamps (model_host_only):
 *                     while another client holds CUPTI, CUPTI times them in that client's
 *                     clock (torch.profiler's), which puts them anywhere on the trace's
 *                     timeline; and sample time inside the gaps the findings leave out.
 *   coverage          the union of the samples kept over the window less what is left out,
 *                     so never above 100 %.
 * Thresholds from kernels measured on an H200 when the metrics were chosen: a streaming copy
 * reads DRAM 82 %, SM throughput 11 %; FMA chains SM throughput 102 %; mma.sync tensor 87.5 %.
 */
#ifndef GPUSHIM_COUNTERS_H
#define GPUSHIM_COUNTERS_H

#include <stdint.h>

#include "model/model.h"

#define PM_DRAM_HIGH_PCT 50.0
#define PM_SM_LOW_PCT 40.0
#define PM_COMPUTE_HIGH_PCT 60.0
/* Stretches of the per-interval timeline in the report. */
#define PM_MAX_BUCKETS 20

struct ctr_bucket {
	uint64_t start, end;
	double mean[TRACE_PM_NR_SLOTS];
};

struct counters {
	int has;			/* samples overlap the window */
	const char *absent;		/* why there are none (a note's text or a fixed reason) */
	const char *chip;		/* of the first device sampled */
	uint64_t interval_ns;
	int device;			/* the first device sampled */
	uint64_t nr_samples;		/* overlapping the window */
	uint64_t nr_overflow;		/* samples flagged: lost samples before them */
	uint64_t nr_left_out;		/* samples left out (see above) */
	uint64_t covered_ns;		/* window time covered by samples (their union) */
	double coverage_pct;		/* covered_ns of the window less what is left out */
	double mean[TRACE_PM_NR_SLOTS];	/* over the window; NaN: slot not sampled */
	uint64_t bw_ns, bw_samples;	/* busy time in bandwidth-bound samples */
	double bw_dram, bw_sm;		/* DRAM, SM throughput means over those samples */
	uint64_t compute_ns, compute_samples;
	double compute_sm, compute_tensor;
	struct ctr_bucket buckets[PM_MAX_BUCKETS];
	int nr_buckets;
	size_t samples_held_max;	/* the most samples held at once to be summed */
};

/*
 * The counter samples a computation may still need, in order of start: added as they come
 * (pm_window_add), searched from where the last search ended, let go from the front once
 * none that ends by a time can matter (pm_window_let_go). @max_len: the longest sample
 * (model.pm_max_len).
 */
struct pm_window {
	struct m_pm_sample *v;		/* [head, n) */
	size_t head, n, cap;
	size_t hint;
	uint64_t max_len;
};

void pm_window_add(struct pm_window *w, const struct m_pm_sample *s);
void pm_window_let_go(struct pm_window *w, uint64_t t);

/*
 * counters_accumulate - add the samples of @device in @w overlapping [start, end) to per-slot
 * sums: sum[k] += value x overlap, weight[k] += overlap (slots with a value only). O(1) a
 * call when calls go in time order.
 */
void counters_accumulate(struct pm_window *w, uint32_t device, uint64_t start, uint64_t end,
			 double sum[TRACE_PM_NR_SLOTS], double weight[TRACE_PM_NR_SLOTS]);

/*
 * Everything above over [win_start, win_end) (the analysis window, known before the first
 * sample: first_look_window), as the samples and the operations come: counters_begin, then every
 * sample in order of start (counters_sample) and every operation in order of start
 * (counters_op; the samples starting before it ends first), then counters_end, which fills
 * @c and frees what counters_begin returned. A sample is summed once no busy stretch still to
 * come reaches it, and let go.
 */
struct ctr_acc;
struct ctr_acc *counters_begin(struct counters *c, const struct model *m, uint64_t win_start,
			       uint64_t win_end);
void counters_sample(struct ctr_acc *a, const struct m_pm_sample *s);
void counters_op(struct ctr_acc *a, const struct m_gpu_op *g);
/*
 * The idle gap [from, to) of @device, which the operation about to be given to counters_op
 * ends, is left out of the window (findings.h): no sample time inside it counts.
 */
void counters_exclude(struct ctr_acc *a, uint32_t device, uint64_t from, uint64_t to);
/* No operation still to come starts before @t: the samples no stretch can reach are summed. */
void counters_floor(struct ctr_acc *a, uint64_t t);
void counters_end(struct ctr_acc *a);

/* Slot names as in JSON: "sm_active", "dram", "tensor", "gr_active", "sm_throughput". */
const char *counters_slot_name(int slot);

#endif /* GPUSHIM_COUNTERS_H */
