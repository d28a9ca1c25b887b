/* SPDX-License-Identifier: MIT */
/*
 * stats.h - pure statistics over a model: span, counts, per-entry-point totals, kernels (host
 * launches and GPU time), memory peak, the allocations live at it and how it formed, and the
 * GPU timeline (busy, idle, SM fill). Model in, struct stats out; no I/O, no printing.
 *
 * Definitions (README "Report"): span = first intercepted call to the last call or GPU
 * operation end; launches = every launch call (kernels, graph launches, host functions), failed
 * ones included; syncs = context/stream/event synchronize calls; allocs/frees = device-memory
 * allocation/release calls of every kind (device, pitch, managed, async, pool, VMM physical);
 * peak = most device bytes live at once from successful allocations. The memory's phases and
 * steps are the loop's (s->loop: loop_begin sets the phases' bounds before the first call
 * comes, and the steps' starts are known once the last call came, before stats_end).
 */
#ifndef GPUSHIM_STATS_H
#define GPUSHIM_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "ranges.h"
#include "model/model.h"

struct s_counts {
	uint64_t launches;		/* all launch calls */
	uint64_t kernel_launches;
	uint64_t graph_launches;
	uint64_t host_funcs;
	uint64_t launch_errors;
	uint64_t captured_launches;	/* issued during stream capture (run later by graphs) */
	uint64_t syncs;
	uint64_t ctx_syncs, stream_syncs, event_syncs;
	uint64_t queries;
	uint64_t stream_waits;
	uint64_t event_records;
	uint64_t allocs;
	uint64_t frees;
	uint64_t alloc_errors;
	uint64_t host_allocs;		/* pinned / registered host memory */
	uint64_t host_frees;
	uint64_t memcpys;
	uint64_t memcpy_bytes;
	uint64_t memsets;
	uint64_t memset_bytes;
	uint64_t calls;			/* every recorded call */
	uint64_t errors;		/* calls that failed */
};

struct s_api {
	uint16_t api;
	const char *name;
	uint8_t family;
	uint64_t calls;
	uint64_t errors;
	uint64_t total_ns;
	uint64_t max_ns;
};

struct s_kernel {
	const char *name;
	uint32_t name_id;		/* STRING id; 0 for unresolved kernels */
	uint64_t launches;		/* host launch calls naming this kernel */
	uint64_t launch_errors;
	uint64_t captured;		/* launches made during stream capture */
	uint32_t grid_first[3];
	uint32_t block_first[3];
	uint32_t nr_shapes;		/* distinct (grid, block) seen, capped at 255 */
	uint64_t blocks_total;		/* over launches */
	uint64_t launch_host_ns;	/* time spent in the launch calls */
	/* GPU side (CUPTI) */
	uint64_t gpu_count;
	uint64_t gpu_total_ns;
	uint64_t gpu_min_ns, gpu_max_ns, gpu_p50_ns, gpu_p99_ns;
	double fill;			/* duration-weighted SM fill, -1 unknown */
	int fill_is_estimate;		/* occupancy calculator not available for some launches */
	uint64_t from_graphs;		/* executions replayed from CUDA graphs */
	/* Hardware counters over the time it ran (counters.h), by enum trace_pm_slot; NaN none */
	double pm[TRACE_PM_NR_SLOTS];
	/* Its share of those samples' busy time (counters.h, struct ctr_share); -1 unknown. Under
	 * KERNEL_PM_OWN_MIN the values are mostly other kernels': it gets no class of its own. */
	double pm_share;
};
#define KERNEL_PM_OWN_MIN 0.5
/*
 * stats_kernel_bound - @k's class by its own counters (counters.h, pm_classify), the unit that
 * names it in *@unit (-1: none). Return: enum pm_class, or -1 when its samples are mostly
 * other kernels' (pm_share under KERNEL_PM_OWN_MIN, or unknown): no class of its own.
 */
int stats_kernel_bound(const struct s_kernel *k, int *unit);

struct s_alloc {			/* one device allocation's life */
	uint64_t addr;
	uint64_t bytes;
	uint64_t t_alloc;
	uint64_t t_free;		/* UINT64_MAX: never freed */
	uint16_t api;
	uint8_t kind;			/* enum trace_mem_kind */
	int16_t device;
};

struct s_device_mem {
	int device;
	uint64_t peak_bytes;
	uint64_t peak_ts;
	uint64_t total_bytes;		/* 0 when the device record is absent */
	double peak_pct;		/* -1 unknown */
};

/* A device allocation that failed for want of memory (CUDA_ERROR_OUT_OF_MEMORY). */
struct s_failed_alloc {
	uint64_t t;			/* its call's start */
	uint64_t bytes;			/* asked */
	uint64_t live_bytes;		/* the run's device allocations live then */
	uint16_t api;
	int16_t device;
};

#define MEM_FAILED_KEPT 8		/* failed allocations kept (the first ones) */
#define MEM_RECLAIM_NS 1000000000ull	/* a retry this soon after a failure is its reclaim's */
#define MEM_CHURN_NS 100000000ull	/* an allocation this soon after a free of its size */
#define MEM_CHURN_FREES 64		/* the last frees churn compares with */

/*
 * Memory pressure: failed allocations; reclaims (a failed allocation, frees, then a successful
 * one within MEM_RECLAIM_NS: a caching allocator emptying its cache to retry); churn
 * (allocations of a size freed within MEM_CHURN_NS before: memory given back and taken again,
 * empty_cache() or cudaMalloc/cudaFree in the loop).
 */
struct s_pressure {
	uint64_t failed;
	struct s_failed_alloc first[MEM_FAILED_KEPT];
	uint64_t reclaims, reclaim_frees, reclaim_freed_bytes;
	uint64_t reclaim_ns;		/* failure's start to the successful retry's end, summed */
	uint64_t churn_allocs, churn_bytes;
	uint64_t churn_ns;		/* those allocations' and their frees' call time */
};

#define MEM_SERIES_POINTS 32		/* the live bytes over the run: this many equal slices */
#define MEM_GROWTH_MIN_STEPS 8		/* steady steps to fit a growth to (fewer: noise) */
#define MEM_LEAK_RISES 4		/* new high low points for "a leak?", in both halves */
#define MEM_LEAK_MIN_BYTES (1ull << 20)	/* ... and a fitted growth of this (and 1% of the peak) */

/* Size classes of the allocations live at the peak: below 1 MiB, 16 MiB, 256 MiB, 4 GiB, more. */
#define MEM_NR_SIZES 5
uint64_t stats_mem_size_floor(int k);	/* class @k's least size */

/* One slice of the run (1/MEM_SERIES_POINTS of the span): the device bytes live in it. */
struct s_mem_point {
	uint64_t end;			/* the slice's end */
	uint64_t min_bytes, max_bytes;	/* live in it, least and most */
	uint64_t end_bytes;		/* live at its end */
	uint64_t peak_made_bytes;	/* the bytes of the allocations live at the peak made in it */
};

struct s_mem_group {
	uint64_t nr, bytes;
};

/*
 * The steady state's low point: the least bytes live in each steady step (from its start to the
 * next step's; the last to the steady state's end), fitted by least squares. Per-step buffers
 * come and go inside a step; what stays raises its low point: a leak, or a cache still growing.
 */
struct s_mem_growth {
	uint64_t nr_steps;		/* 0: not measured (no steps, or under MEM_GROWTH_MIN_STEPS) */
	uint64_t first_bytes, last_bytes;	/* the first and the last step's low point */
	double per_step_bytes;		/* the fit's slope */
	uint64_t nr_rises;		/* steps whose low point passed every one before */
	int is_growing;			/* the fit grew MEM_LEAK_MIN_BYTES and 1% of the peak over the
					 * steps, with MEM_LEAK_RISES rises, in both halves */
};

/*
 * The largest rise of the live bytes within window_ns (a median step from the first step on;
 * without steps a slice of the series, over the whole run): from the least bytes live in the
 * window before its end to the bytes live at it.
 */
struct s_mem_spike {
	uint64_t bytes;			/* the rise; 0: none */
	uint64_t from_bytes, to_bytes;
	uint64_t start, end;		/* the low point's end and the high's time */
	uint64_t window_ns;
	int phase;			/* enum loop_phase of its end; -1 without phases */
	uint64_t nr_allocs, largest_bytes;	/* the allocations made in [start, end] */
};

/* How the peak formed: the live bytes over time, and what made the bytes live at the peak. */
struct s_mem_formation {
	uint64_t slice_ns;
	struct s_mem_point series[MEM_SERIES_POINTS];
	size_t nr_series;
	int has_phases;			/* steps were found: by_phase, peak_phase, growth */
	int peak_phase;			/* enum loop_phase; -1 without phases */
	uint64_t peak_first_alloc, peak_last_alloc;	/* the allocations live at the peak: made
							 * from, to (0: none) */
	struct s_mem_group by_phase[NR_PHASES];	/* the allocations live at the peak, by the
						 * phase they were made in */
	struct s_mem_group by_size[MEM_NR_SIZES];
	struct s_mem_growth growth;
	struct s_mem_spike spike;
};

struct s_memory {
	uint64_t peak_bytes;		/* all devices together */
	uint64_t peak_ts;
	uint64_t final_bytes;		/* live at the end of the trace */
	uint64_t device_total_bytes;	/* of peak_device */
	double peak_pct;		/* of the fullest device; -1 unknown */
	int peak_device;
	struct s_device_mem *devices;
	size_t nr_devices;
	struct s_alloc *allocs;		/* every successful device allocation, by time */
	size_t nr_allocs;
	size_t *live_at_peak;		/* indices into allocs, largest first */
	size_t nr_live_at_peak;
	uint64_t alloc_bytes_total;	/* churn: bytes allocated over the run */
	uint64_t alloc_ns;		/* host time inside allocation/free calls */
	uint64_t unmatched_frees;	/* frees of addresses never seen allocated */
	struct s_pressure pressure;
	struct s_mem_formation formation;
};

struct s_gpu_device {
	int device;
	uint64_t first_ns, last_ns;
	uint64_t busy_ns;		/* union of kernel/copy/set intervals */
	uint64_t kernel_ns, memcpy_ns, memset_ns;	/* unions per kind */
	double fill_ns;			/* sum of kernel duration x fill */
	/*
	 * Communication kernels (stats_is_comm_kernel): the union of their intervals, how much of
	 * it other kernels overlap, and how many ran.
	 */
	uint64_t comm_ns, comm_overlap_ns, nr_comm;
};

/*
 * A communication kernel as it ran, for the job view across ranks (job.h): in order of start,
 * at most STATS_MAX_COMM_OPS a trace (the rest counted).
 */
struct s_comm_op {
	uint64_t start, end;
	uint32_t name;			/* STRING id of the trace's model */
	int32_t device;
};
#define STATS_MAX_COMM_OPS (1u << 20)

struct s_gpu {
	int has_cupti;			/* GPU timestamps exist for (part of) the run */
	uint64_t busy_ns, idle_ns;
	uint64_t kernel_ns, memcpy_ns, memset_ns;
	double busy_pct;		/* busy / (span x devices used) */
	double fill_pct;		/* sum(kernel time x fill) / (span x devices used) */
	uint64_t nr_kernels, nr_memcpys, nr_memsets;
	uint64_t joined, unjoined;
	/* Communication kernels over the devices (s_gpu_device's, summed), and each one */
	uint64_t comm_ns, comm_overlap_ns, nr_comm;
	struct s_comm_op *comm_ops;
	size_t nr_comm_ops, comm_ops_cap;
	uint64_t comm_ops_dropped;
	struct s_gpu_device *devices;
	size_t nr_devices;
	/*
	 * The run's stretches without GPU timestamps (model_host_only: CUPTI held by the
	 * application's profiler): their time inside the span, the launches made in them (no
	 * GPU record of theirs can be in the trace), and the counter samples they meet (their
	 * times are in the other client's clock), which no statistic takes.
	 */
	uint64_t host_only_ns;
	uint64_t host_only_launches;
	uint64_t host_only_samples;
	size_t nr_host_only;		/* stretches */
};

struct stats {
	uint64_t span_start, span_end, span_ns;
	struct s_counts counts;
	struct s_api *apis;		/* by total time, descending */
	size_t nr_apis;
	struct s_kernel *kernels;	/* by GPU time, then launches, descending */
	size_t nr_kernels;
	struct s_memory mem;
	struct s_gpu gpu;
	struct loop loop;		/* steps and phases (analyze.c fills it beside the rest) */
	struct range_table ranges;	/* NVTX ranges in the analysis window (analyze.c) */
};

/*
 * stats_compute - fill @s from @m. Free with stats_free. The steps' and ranges' idle time by
 * cause comes from the findings' gaps: analyze_model computes both in one pass.
 */
void stats_compute(struct stats *s, const struct model *m);

/*
 * The same as the calls and operations come: stats_begin with what a first look at them all
 * found (@p, kept until stats_end), then every call in order of start (stats_call) and every
 * operation in order of start (stats_op; the two orders may interleave), then stats_end, which
 * fills @s and frees what stats_begin returned; the counter samples in order of start
 * (stats_sample), each before the operations that end after it starts. @m holds the
 * dictionaries (strings, entry points, kernels, devices, shapes, notes); its calls,
 * operations and samples are not read.
 */
struct first_look;
struct stats_acc;
struct stats_acc *stats_begin(struct stats *s, const struct model *m, const struct first_look *p);
/* @id: the call's number (findings_call's), for its result when it failed. */
void stats_call(struct stats_acc *a, const struct m_call *c, uint32_t id);
void stats_op(struct stats_acc *a, const struct m_gpu_op *g);
void stats_sample(struct stats_acc *a, const struct m_pm_sample *s);
/* No operation still to come starts before @t (streaming: what may be let go). */
void stats_floor(struct stats_acc *a, uint64_t t);
void stats_end(struct stats_acc *a);
void stats_free(struct stats *s);

/* Is a call with this sync kind an explicit host synchronization? */
int stats_is_host_sync(const struct m_call *c);

/*
 * Is the kernel named @name (mangled, as CUPTI gives it) a collective's or a transfer's between
 * GPUs: NCCL's (ncclKernel_*, ncclDevKernel_*), NVSHMEM's, PyTorch's symmetric-memory ones?
 */
int stats_is_comm_kernel(const char *name);

/* stats_is_comm_kernel of @m's STRING @name, answered once a string (@memo starts zeroed;
 * stats_comm_memo_free gives it back). A name not defined (yet) is asked each time. */
struct stats_comm_memo {
	uint8_t *v;			/* by STRING id: 0 not yet asked, 1 communication, 2 not */
	size_t n;
};
int stats_is_comm_name(struct stats_comm_memo *memo, const struct model *m, uint32_t name);
void stats_comm_memo_free(struct stats_comm_memo *memo);

/* Does this mem kind count as device memory (allocs/frees/peak)? */
int stats_is_device_mem(uint8_t kind);

/* The total length of a union of intervals added in order of start. */
struct stats_union {
	uint64_t end;			/* end of the current merged interval */
	uint64_t total;
	int has;
};

static inline void stats_union_add(struct stats_union *u, uint64_t start, uint64_t end)
{
	if (!u->has || start >= u->end) {
		u->total += end - start;
		u->end = end;
		u->has = 1;
	} else if (end > u->end) {
		u->total += end - u->end;
		u->end = end;
	}
}

/* SM fill of one kernel execution in [0,1]; -1 when the device is unknown. Sets *is_estimate
 * when the occupancy calculator had no answer and the thread limit stood in. stats_fill_op -
 * the same for kernel @g, the answer kept for its shape (m->fill_memo). */
double stats_fill(const struct model *m, uint32_t func_name, uint64_t blocks,
		  uint32_t block_threads, uint32_t dyn_smem, int device, int *is_estimate);
double stats_fill_op(const struct model *m, const struct m_gpu_op *g, int *is_estimate);

#endif /* GPUSHIM_STATS_H */
