/* SPDX-License-Identifier: MIT */
/*
 * counters.h - hardware counters (PM sampling) over the run: time-weighted means, means over
 * any interval (a kernel's execution, a stretch of the timeline), and the classification of
 * GPU busy time into bandwidth-bound and compute-bound. Pure: model in, numbers out.
 *
 * Definitions (README "Hardware counters"):
 *   mean over [a,b)   sum of value x overlap(sample, [a,b)) / sum of overlap, per slot, over the
 *                     samples of the device; NaN when no sample of that slot overlaps.
 *   while busy        a sample's values are means over its whole interval, idle time included:
 *                     they are read over the time the engine was busy, divided by its GR
 *                     active share (at most 100 %); a sample busy less than PM_GR_MIN_PCT of
 *                     its time is not classified (too little work to tell).
 *   memory level      the highest of DRAM, L2 and L1 (load/store wavefronts) throughput.
 *   compute level     the higher of SM throughput and the tensor pipe.
 *   bandwidth-bound   otherwise, the memory level >= PM_HIGH_PCT and at least the compute level (the
 *                     level named: DRAM, L2 or L1); or DRAM >= PM_DRAM_HIGH_PCT while SM
 *                     throughput and the tensor pipe are < PM_SM_LOW_PCT: the SMs wait on
 *                     memory.
 *   compute-bound     the tensor pipe >= PM_HIGH_PCT (a GEMM: its shared-memory traffic feeds
 *                     it, whatever L1 reads), or otherwise the compute level >=
 *                     PM_HIGH_PCT; the pipe named is the busiest of tensor, FP64, FMA, ALU
 *                     and XU, or "issue" when none of them is >= PM_HIGH_PCT but the
 *                     instructions issued are (a mix of pipes). The GPU is used well when
 *                     it is the tensor or the FP64 pipe; FMA, ALU, XU and a mix are the CUDA
 *                     cores' arithmetic (elementwise maths, exp, index computations).
 *   latency-bound     otherwise, SMs active >= PM_LATENCY_SM_PCT while busy (the SMs have
 *                     warps: not low parallelism), with the memory levels and pipes all
 *                     sampled (format 1.7): neither memory nor any pipe is near its peak,
 *                     the warps wait on dependencies (too few of them, or chains of loads).
 *   time              the GPU's busy time in kernels (their union) inside such samples;
 *                     copies and memsets are bandwidth work by what they are (findings.h).
 *   left out          samples that meet a stretch without GPU timestamps (model_host_only):
 *                     while another client holds CUPTI, CUPTI times them in that client's
 *                     clock (torch.profiler's), which puts them anywhere on the trace's
 *                     timeline; and sample time inside the gaps the findings leave out.
 *   coverage          the union of the samples kept over the window less what is left out,
 *                     so never above 100 %.
 * Thresholds: PM_HIGH_PCT is Nsight Compute's (throughput below 60 % of peak for both memory
 * and compute "typically indicates latency issues"); the others from kernels measured on an
 * H200 when the metrics were chosen: a streaming copy reads DRAM 82 %, SM throughput 11 %;
 * FMA chains SM throughput 102 %; mma.sync tensor 87.5 %.
 */
#ifndef GPUSHIM_COUNTERS_H
#define GPUSHIM_COUNTERS_H

#include <stdint.h>

#include "model/model.h"

#define PM_HIGH_PCT 60.0
#define PM_DRAM_HIGH_PCT 50.0
#define PM_SM_LOW_PCT 40.0
#define PM_LATENCY_SM_PCT 50.0
#define PM_GR_MIN_PCT 10.0

enum pm_class {
	PM_CLASS_NONE = 0,		/* not classified (see above) */
	PM_CLASS_BANDWIDTH,
	PM_CLASS_COMPUTE,
	PM_CLASS_LATENCY,
	NR_PM_CLASSES
};

/* What a sample's (or a kernel's mean) values say. */
struct pm_judgement {
	int cls;			/* enum pm_class */
	int unit;			/* the slot that names it: bandwidth DRAM/L2/LSU; compute a
					 * pipe, ISSUE, or -1 (no pipe sampled); else -1 */
	double busy[TRACE_PM_NR_SLOTS];	/* the values while busy (NaN: not sampled) */
};

/* pm_classify - judge @v (% per slot, NaN absent), as defined above. Pure. */
void pm_classify(const double v[TRACE_PM_NR_SLOTS], struct pm_judgement *j);
/* Is @unit, the compute-bound pipe, one that uses the GPU well (tensor, FP64)? */
int pm_pipe_is_good(int unit);
/* "bandwidth", "compute", "latency", "-" */
const char *pm_class_name(int cls);
/* What a unit is called in text: "DRAM", "L2", "L1", "tensor", "FMA", "ALU", "XU", "FP64",
 * "issue", ... ("?" for -1). */
const char *pm_unit_text(int unit);
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
	uint64_t latency_ns, latency_samples;
	/* Per class, the busy time by the unit that named it (slot; index TRACE_PM_NR_SLOTS:
	 * none), and the means while busy over the class's samples. */
	uint64_t unit_ns[NR_PM_CLASSES][TRACE_PM_NR_SLOTS + 1];
	double class_busy[NR_PM_CLASSES][TRACE_PM_NR_SLOTS];
	int has_pipes;			/* the pipes and memory levels were sampled (1.7) */
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

/* The unit of class @cls with the most busy time in @c (-1: none). */
int counters_top_unit(const struct counters *c, int cls);

/*
 * How much of its samples' busy time a computation (a kernel's executions) makes: its overlap
 * with them over their busy time (length x GR active), each sample counted once. Below half,
 * the samples' values are mostly other work's.
 */
struct ctr_share {
	uint64_t last;			/* the last sample counted: its start + 1; 0 none */
	double own, busy;
};

/*
 * counters_accumulate - add the samples of @device in @w overlapping [start, end) to per-slot
 * sums: sum[k] += value x overlap, weight[k] += overlap (slots with a value only); and to
 * @share (unless NULL), for intervals in order of start. O(1) a call when calls go in time
 * order.
 */
void counters_accumulate(struct pm_window *w, uint32_t device, uint64_t start, uint64_t end,
			 double sum[TRACE_PM_NR_SLOTS], double weight[TRACE_PM_NR_SLOTS],
			 struct ctr_share *share);

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

/* Slot names as in JSON: "sm_active", "dram", "tensor", "gr_active", "sm_throughput", "l2",
 * "issue", "fma", "alu", "xu", "fp64", "lsu", "warps" ("spare" for the rest). */
const char *counters_slot_name(int slot);

#endif /* GPUSHIM_COUNTERS_H */
