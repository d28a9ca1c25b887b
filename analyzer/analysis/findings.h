/* SPDX-License-Identifier: MIT */
/*
 * findings.h - attribution: why the GPU is under-used, in time lost per cause, with evidence
 * and advice, ranked. Pure: model and statistics in, struct findings out; no I/O, no printing.
 *
 * Definitions (README "How the time is attributed"):
 *   window      per device, from the first kernel's start (the first operation's without
 *               kernels) to the last operation's end; what comes before (initialization,
 *               weights uploaded, set-up before the first step) is reported as startup.
 *               An idle gap that meets a stretch without GPU timestamps (model_host_only:
 *               the application's profiler held CUPTI) is left out of it: the GPU ran work
 *               the trace cannot see, so the gap's length is unknown. Busy, idle and every
 *               share are of the window that is left.
 *   partition   window = GPU work (kernels, memsets, copies between device memories) +
 *               exposed copies (copies to, from or within the host while no work runs) + idle
 *               (nothing on the GPU).
 *   idle gaps   each gap is assigned by what the thread that issued the GPU's next operation
 *               was doing: blocked in a synchronization when the GPU ran dry -> host_sync;
 *               inside launch calls (and the launch latency after) -> launch_overhead; inside
 *               blocking copies -> memcpy; inside allocation/free -> allocation; outside CUDA ->
 *               cpu_bound. A gap whose next operation was queued before it began is GPU-side:
 *               noise under 5 us, dependency wait above. Time the thread spent loading
 *               modules (CUDA lazy loading at a kernel's first launch) is one-time warm-up,
 *               reported apart and not blamed on any cause; so is call time stalled by the
 *               shim's own hardware-counter set-up (once, between its notes).
 *   low_parallelism = kernel time x (1 - SM fill); memcpy also takes exposed copy time.
 *   memory_capacity is a signal (peak >= 90 % of the device), not time. memory_bandwidth,
 *   compute_bound and latency_bound are GPU busy time classified by hardware counters
 *   (counters.h): kernels inside bandwidth-, compute- or latency-bound samples. Copies
 *   between device memories and memsets are memory_bandwidth's by what they are (materialized
 *   copies), counters or not. Without counters the rest is "unknown"; so is latency_bound in a
 *   trace without the pipes' counters (before 1.7).
 *   compute_bound names its pipe (the one with the most of its time): the GPU is used well
 *   on the tensor or FP64 pipe; on the FMA, ALU or XU pipes it computes on the CUDA cores,
 *   and the advice says how to move that work to the tensor cores or do less of it.
 */
#ifndef GPUSHIM_FINDINGS_H
#define GPUSHIM_FINDINGS_H

#include <stdint.h>

#include "counters.h"
#include "model/model.h"
#include "stats.h"

enum cause_id {
	CAUSE_HOST_SYNC,
	CAUSE_LAUNCH_OVERHEAD,
	CAUSE_CPU_BOUND,
	CAUSE_MEMCPY,
	CAUSE_ALLOCATION,
	CAUSE_LOW_PARALLELISM,
	CAUSE_MEMORY_CAPACITY,
	CAUSE_MEMORY_BANDWIDTH,
	CAUSE_COMPUTE_BOUND,
	CAUSE_LATENCY_BOUND,
	NR_CAUSES
};

enum cause_status {
	CS_NOT_SEEN = 0,		/* nothing of this cause in the run */
	CS_MEASURED,			/* time_ns is time lost */
	CS_SIGNAL,			/* a condition, no time (memory_capacity) */
	CS_UNKNOWN,			/* needs evidence this trace does not have */
};

#define MAX_SITES 5

/*
 * Where a cause happens: an entry point, the kernel (or copy) the GPU ran before, and where in
 * the program the call was made (where.h: the key of its stack's own frame; 0 when the call
 * had no stack captured). A launch whose own stack was not captured (launches are sampled)
 * takes the stack of the first launch of the same kernel by the same thread, which always is
 * captured.
 */
struct f_site {
	const char *what;
	const char *after;
	uint64_t where;
	uint64_t count;
	uint64_t time_ns;
	double value;			/* kernels: SM fill; copies: bytes */
	uint32_t stack;			/* the stack of its largest part (0: none) */
	uint32_t from_stack;		/* cpu_bound: the stack of the thread's call before the
					 * CPU work, with @stack's (0: none) */
	uint64_t stack_ns;		/* that part's time */
};

/*
 * A cause's time by place in the program alone (every site's, whatever its entry point and
 * the kernel before): what `diff` matches runs by. The MAX_PLACES places of most time.
 */
#define MAX_PLACES 16
struct f_place {
	uint64_t where;			/* where.h key, nonzero */
	uint32_t stack;			/* the stack of its largest site */
	uint64_t count;
	uint64_t time_ns;
};

struct f_cause {
	int status;			/* enum cause_status */
	uint64_t time_ns;
	double share_pct;		/* of the window (all devices together) */
	uint64_t count;			/* gaps, kernels or allocations behind the time */
	uint64_t bytes;			/* memcpy: bytes copied; memory_capacity: peak */
	double value;			/* memory_capacity: peak %; low_parallelism: fill % */
	uint64_t aux;			/* launch_overhead: kernels shorter than their launch */
	uint64_t pageable_bytes;	/* memcpy: bytes from/to pageable memory */
	struct f_site sites[MAX_SITES];
	int nr_sites;
	struct f_place places[MAX_PLACES];
	int nr_places;
	uint64_t placed_ns;		/* the time of its sites with a place (all, not only
					 * the MAX_PLACES) */
	/* What fixing it alone would save, by the replay (savings.h); has_saving 0: not replayed */
	int has_saving;
	double saving_pct;		/* of the replayed span */
	uint64_t saving_ns;		/* the share applied to the window */
	uint64_t saving_step_ns;	/* ... to the median steady step (0: no steps) */
	/* A sampled run (f->sampling): the share measured in the windows, taken as the whole
	 * window's; share_ci_pct its 95 % half-width across the windows (points; -1: not
	 * estimated: fewer than 3 windows, or a cause not made of idle gaps); saving_ci_pct
	 * the same for saving_pct across the windows replayed. */
	uint64_t est_ns;
	double share_ci_pct;
	double saving_ci_pct;
};

/*
 * A sampled run (GPUSHIM_MODE=sampled): GPU timestamps only in windows. Shares and savings
 * are measured in the windows that meet the analysis window and stand for all of it; the
 * spread of each cause's share from window to window gives its error (a ratio estimator:
 * the cause's time over the windows' time, its standard error across the windows, the finite
 * population corrected, Student's t at 95 %).
 */
struct f_sampling {
	int is_sampled;
	uint32_t window_ms, every_ms;	/* as the shim was set (0: unknown) */
	uint64_t nr_windows;		/* windows meeting the analysis window */
	uint64_t covered_ns;		/* their time in it */
	uint64_t span_ns;		/* the analysis window's, first to last operation */
	double covered_pct;
};

/* What the report's replay replayed (savings.h). */
struct f_replay {
	int done;			/* the causes have savings */
	const char *why;		/* not done: why (static text); NULL when not asked */
	uint64_t start, end;		/* the stretch measured (recorded times) */
	uint64_t steps;			/* whole steps in it (0: measured without steps) */
	uint64_t items;			/* calls and operations replayed */
	int is_part;			/* a part of the window: the replay's budget ran out */
	uint64_t recorded_ns, replayed_ns;	/* its span, and replayed as recorded */
	double error_pct;
	uint64_t windows;		/* a sampled run: the windows replayed, each on its own
					 * (recorded_ns, replayed_ns: their sums) */
};

/* Parts of an idle gap beyond the causes: not lost time. */
enum gap_part {
	GAP_NOISE = NR_CAUSES,		/* GPU-side, under 5 us */
	GAP_DEPENDENCY,			/* GPU-side, the next operation was already queued */
	GAP_MODULE,			/* the host was loading modules (one-time) */
	NR_GAP_PARTS
};

/* One idle gap of a device and how it was split (kept for the timeline export). */
struct f_gap {
	uint64_t start, end;
	int device;
	uint64_t part[NR_GAP_PARTS];	/* ns per cause id or enum gap_part */
};

struct findings {
	int has_gpu;			/* GPU timestamps exist: gaps can be attributed */
	uint64_t window_start, window_end;
	uint64_t window_ns;		/* summed over devices, less excluded_ns */
	uint64_t excluded_ns;		/* gaps that meet a stretch without GPU timestamps */
	uint64_t nr_excluded_gaps;
	uint64_t startup_ns;		/* first intercepted call to the first GPU operation */
	uint64_t work_ns;		/* kernels and memsets (union) */
	uint64_t exposed_copy_ns;
	uint64_t idle_ns;
	uint64_t noise_ns;		/* GPU-side gaps under 5 us */
	uint64_t dependency_ns;		/* GPU-side gaps of 5 us and more */
	uint64_t module_load_ns;	/* gaps spent loading modules (lazy loading: one-time) */
	uint64_t profiler_setup_ns;	/* gaps spent in calls stalled by the counters' set-up */
	uint64_t device_copy_ns;	/* copies within device memory and memsets in the window:
					 * memory_bandwidth's time besides the counters' */
	uint64_t nr_device_copies;
	uint64_t nr_gaps;
	struct f_cause causes[NR_CAUSES];
	int ranked[NR_CAUSES];		/* cause ids, most time first (by saving once replayed:
					 * findings_rank_by_saving); nr_ranked of them */
	int nr_ranked;
	int primary;			/* cause id, or -1: no cause worth a verdict */
	/* The seed's four signals */
	int is_memory_full;		/* -1 unknown */
	double memory_pct;		/* -1 unknown */
	double busy_pct;		/* -1 unknown */
	double fill_pct;		/* -1 unknown */
	double kernels_per_s;
	double copy_bytes_per_s;
	struct counters ctr;		/* hardware counters over the window */
	struct f_replay replay;		/* the savings' replay (savings.h) */
	struct f_sampling sampling;
	int framework;			/* enum framework: the advice's terms */
	char summary[512];
	size_t calls_held_max;		/* the most calls the gap walks held at once */
	/* Every idle gap in time order per device, with findings_compute_gaps() only (or
	 * handed on as split instead: findings_gaps_to). */
	int want_gaps;
	struct f_gap *gaps;
	size_t nr_gaps_kept, gaps_cap;
};

/* Gaps shorter than this with work already queued are scheduling noise (TraceLens: 5 us). */
#define NOISE_GAP_NS 5000u
/* Peak device memory from this share up is reported as memory_capacity (tb_plugin: 90 %). */
#define MEMORY_FULL_PCT 90.0
/* A cause below this share of the window is not named as the verdict's primary cause. */
#define PRIMARY_MIN_PCT 5.0
/* ... nor one whose fix saves less than this share of the replayed span. */
#define PRIMARY_MIN_SAVING_PCT 5.0
/* A cause whose fix saves this much is ranked even without idle time of its own (a wait that
 * is no idle gap: the host blocked while the GPU ran, instead of preparing the next work). */
#define RANK_MIN_SAVING_PCT 1.0

void findings_compute(struct findings *f, const struct model *m, const struct stats *s);
/* findings_ratio_ci - a sampled run's error (struct f_sampling): the 95 % half-width in points
 * of sum(@t) / sum(@w) over @n windows, @covered the whole's share they are; -1 below 3. */
double findings_ratio_ci(const double *t, const double *w, size_t n, double covered);
/* The same, also keeping every gap (f->gaps); release with findings_free(). */
void findings_compute_gaps(struct findings *f, const struct model *m, const struct stats *s);
void findings_free(struct findings *f);
/*
 * findings_rank_by_saving - once the causes have savings (f->replay.done): rank the causes the
 * replay can take away by saving, most first, then the others (bandwidth-, compute-bound) by
 * time; the verdict's primary cause is the first with a saving of PRIMARY_MIN_SAVING_PCT or
 * more, else the first other cause of PRIMARY_MIN_PCT of the time or more; the summary says
 * what fixing it saves. Without savings: nothing changes.
 */
void findings_rank_by_saving(struct findings *f, const struct stats *s);

/*
 * The same as the calls and operations come: findings_begin with what a first look at them all
 * found (@p, kept until findings_end), then every call in order of start (findings_call, @id:
 * its number, which operations name it by) and every operation in order of start
 * (findings_op, with the call it was joined to or NULL) — a call before any operation that
 * starts after it — then findings_end with the run's statistics, which fills @f and frees
 * what findings_begin returned; the counter samples in order of start (findings_sample), each
 * before the operations that end after it starts. Only the calls a gap still to come can
 * reach, and the samples a busy stretch still to come can, are kept.
 */
struct first_look;
struct findings_acc;
struct findings_acc *findings_begin(struct findings *f, const struct model *m,
				    const struct first_look *p, int want_gaps);
/* The same over the window [@win_lo, @win_hi) only (the steady state): its operations. */
struct findings_acc *findings_begin_window(struct findings *f, const struct model *m,
					   const struct first_look *p, int want_gaps,
					   uint64_t win_lo, uint64_t win_hi);
void findings_call(struct findings_acc *a, const struct m_call *c, uint32_t id);
void findings_op(struct findings_acc *a, const struct m_gpu_op *g, const struct m_call *call,
		 uint32_t call_id);
void findings_sample(struct findings_acc *a, const struct m_pm_sample *s);
/* No operation still to come starts before @t (streaming: what may be let go). */
void findings_floor(struct findings_acc *a, uint64_t t);
/*
 * findings_gaps_to - hand each idle gap to @gap as it is split, right after findings_begin
 * (kept as well only when want_gaps asked for them): each device's gaps in time order, the
 * devices' interleaved, every one with @ctx. A timeline written as the stream goes holds none
 * of them.
 */
typedef void (*findings_gap_fn)(void *ctx, const struct f_gap *g);
void findings_gaps_to(struct findings_acc *a, findings_gap_fn gap, void *ctx);
/*
 * findings_pieces_to - hand each gap on in pieces, in time order, each [@start, @end) of one
 * part (a cause id or enum gap_part) as the walk through the issuing thread's calls found it:
 * what the thread was doing then. A gap's pieces cover it, and sum to its parts.
 */
typedef void (*findings_piece_fn)(void *ctx, uint32_t device, uint64_t start, uint64_t end,
				  int part);
void findings_pieces_to(struct findings_acc *a, findings_piece_fn piece, void *ctx);
void findings_end(struct findings_acc *a, const struct stats *s);
/* The largest part of a gap: a cause id or enum gap_part. */
int gap_label(const struct f_gap *g);
const char *gap_part_name(int part);	/* cause ids, then "noise", "dependency", "module_load" */

/* A call the host blocks in until the GPU's work before it is done (the host_sync kind): a
 * synchronization, a query, a blocking copy out of the device. */
int findings_is_blocking_wait(const struct m_call *c);

const char *cause_name(int id);		/* "host_sync", ... (the JSON cause ids) */
/* The framework whose terms the advice is in (findings_framework). */
enum framework { FW_CUDA, FW_PYTORCH, FW_JAX };
int findings_framework(const struct model *m);
const char *framework_name(int framework);	/* "cuda", "pytorch", "jax" */
/* What to do about cause @id, in @framework's terms. */
const char *cause_advice(int id, int framework);
/* The advice for cause @id of @f: cause_advice in @f's framework, or for compute_bound on the
 * CUDA cores (findings_compute_pipe not tensor or FP64) how to move off them. */
const char *findings_advice(const struct findings *f, int id);
/* compute_bound's pipe: the slot with the most compute-bound time, -1 unknown (counters.h). */
int findings_compute_pipe(const struct findings *f);

#endif /* GPUSHIM_FINDINGS_H */
