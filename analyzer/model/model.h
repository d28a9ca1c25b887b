/* SPDX-License-Identifier: MIT */
/*
 * model.h - the in-memory run model built from one trace: the intercepted calls, the GPU
 * operations CUPTI reported (joined to the calls that caused them), the kernels, devices,
 * threads, entry points and notes. Loading goes through trace_reader only; everything after
 * loading is plain data for the pure modules (stats, findings, diff). Never prints.
 */
#ifndef GPUSHIM_MODEL_H
#define GPUSHIM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gpushim/trace_format.h"

struct trace_reader;
struct first_look;

enum m_call_kind {
	MC_LAUNCH = 1,			/* kernel launch of any flavour */
	MC_GRAPH_LAUNCH,
	MC_HOST_FUNC,
	MC_MEM,
	MC_COPY,
	MC_SET,
	MC_SYNC,
	MC_CAPTURE,
	MC_GRAPH,
	MC_MODULE,
	MC_OTHER,
};

enum m_call_flags {
	MCF_CAPTURING = 1u << 0,	/* issued during a stream capture: does not run now */
	MCF_ASYNC = 1u << 1,		/* the entry point is stream-ordered */
	MCF_PER_THREAD = 1u << 2,
	MCF_ERROR = 1u << 3,		/* failed (CUDA_ERROR_NOT_READY of a query is no failure) */
	MCF_HAS_GPU = 1u << 4,		/* GPU operations are joined to this call */
};

/* What launches have in common, held once (model.launch_shapes): the kernel and its shape. */
struct m_launch_shape {
	uint32_t grid[3];
	uint16_t block[3];
	uint16_t pad_;			/* zero: shapes compare as bytes */
	uint32_t dyn_smem;
	uint32_t func;			/* FUNC id */
};
_Static_assert(sizeof(struct m_launch_shape) == 28, "no padding the compare would read");

/* What a copy, set or allocation call carries beyond its kind (model.call_args). */
struct m_call_args {
	uint64_t bytes;			/* copies, sets, allocations */
	uint64_t addr;			/* allocations: the address (copies, sets: the destination) */
};

/*
 * One intercepted call: 32 bytes (a run holds millions). A launch's shape index shares its
 * bytes with the index of what copies, sets and allocations carry: read either only after
 * checking kind. What no analysis reads (the stream handle, a sync's target, a graph's handle)
 * stays in the trace (`gpushim dump`); the result of a failed call is kept apart
 * (model_call_result), the correlation number only while an older trace's pushed ids are
 * joined.
 */
struct m_call {
	uint64_t t0, t1;		/* CLOCK_MONOTONIC ns: hook entry, real call returned */
	union {
		uint32_t launch;	/* kind MC_LAUNCH: index into model.launch_shapes */
		uint32_t args;		/* MC_MEM, MC_COPY, MC_SET: index into model.call_args */
	};
	uint32_t thread;		/* index into model.threads */
	int16_t device;			/* mem: device ordinal; -1 unknown (every other kind) */
	uint8_t sub;			/* sync/mem kind, copy direction, graph op... */
	uint8_t op;			/* mem: enum trace_mem_op */
	uint16_t api;
	uint8_t kind;			/* enum m_call_kind */
	uint8_t flags;			/* enum m_call_flags */
};
_Static_assert(sizeof(struct m_call) == 32, "the model's bulk: keep it small");

/*
 * Call stacks (1.9; trace_format.h "Call stacks"). A STACK's frames are held once, in the
 * model's pools: its native return addresses in stack_pcs, its Python frames in stack_py,
 * each innermost first. A PC record says where a native address lies.
 */
struct m_stack {
	uint32_t pcs;			/* index into model.stack_pcs */
	uint32_t py;			/* index into model.stack_py */
	uint16_t nr_native, nr_py;
	uint32_t flags;			/* enum trace_stack_flags */
};

struct m_pc {
	uint64_t pc;
	uint64_t offset;		/* in the module's ELF address space */
	uint32_t module, build_id;	/* STRING ids; 0 none */
	uint32_t symbol;		/* STRING id of the nearest dynamic symbol below; 0 none */
	uint32_t sym_offset;
};

/* The stack a call was captured with (model.call_stacks, by call number). */
struct m_call_stack {
	uint32_t call;
	uint32_t stack;			/* STACK id: model_stack's argument */
};

/* A call's result where it is not 0 (model.results, by call index). */
struct m_call_result {
	uint32_t call;
	uint32_t result;
};

enum m_gpu_kind { MG_KERNEL = 1, MG_MEMCPY, MG_MEMSET };

/* m_gpu_op.call of an operation joined to no call. */
#define M_NO_CALL UINT32_MAX

/*
 * What GPU operations have in common, held once (model.gpu_shapes): the kind and device, a
 * kernel's name and launch shape, a copy's or set's size and memory kinds, the stream and graph.
 * A training step repeats a few hundred of them. A kernel's block count shares its bytes with a
 * copy's or set's size: read each after checking kind.
 */
struct m_gpu_shape {
	union {
		uint64_t blocks;	/* kernels: grid x*y*z */
		uint64_t bytes;		/* copies, sets */
	};
	uint32_t name;			/* kernels: STRING id */
	uint32_t dyn_smem;		/* kernels */
	uint32_t stream;		/* CUPTI stream id */
	uint32_t graph_id;
	uint16_t block_threads;		/* kernels; more than 65535 (no GPU runs them) as 65535 */
	uint8_t kind;			/* enum m_gpu_kind */
	uint8_t copy_kind;		/* CUpti_ActivityMemcpyKind */
	uint8_t src_kind, dst_kind;	/* CUpti_ActivityMemoryKind (a set's memory: dst_kind) */
	uint16_t device;		/* CUPTI device id; larger ones (no GPU has them) as 65535 */
};
_Static_assert(sizeof(struct m_gpu_shape) == 32, "no padding the compare would read");

/*
 * One GPU operation from CUPTI: 24 bytes (a run holds millions). Its kind and device are its
 * shape's (model_gpu_shape); CUPTI's correlation number is kept only while joining.
 */
struct m_gpu_op {
	uint64_t start, end;
	uint32_t call;			/* index into model.calls, M_NO_CALL when not joined */
	uint32_t shape;			/* index into model.gpu_shapes */
};
_Static_assert(sizeof(struct m_gpu_op) == 24, "the model's bulk: keep it small");

struct m_api {
	const char *name;		/* NULL: never defined */
	uint8_t family;			/* enum trace_api_family */
	uint8_t flags;			/* enum trace_api_flags */
};

struct m_func {
	uint64_t handle;
	uint32_t name;			/* STRING id */
	uint16_t kind;
	uint16_t regs;
	uint32_t static_smem;
	uint32_t max_threads;
	uint32_t have;
};

/* stats_fill_op's answer for a GPU shape, device included (asked up to three times an
 * operation: statistics, findings, export). */
struct m_fill_memo {
	double fill;
	int is_estimate;
	int known;			/* 0: not asked yet */
};

struct m_occupancy {
	uint32_t name;			/* STRING id of the kernel (filled after loading) */
	uint32_t func;
	uint32_t block_threads;
	uint32_t dyn_smem;
	int32_t device;
	uint32_t max_blocks_per_sm;	/* 0 when the calculator did not answer */
};

struct m_thread {
	uint32_t tid;
	uint32_t index;
};

struct m_note {
	uint64_t ts;
	uint32_t kind;			/* enum trace_note_kind */
	uint32_t text;			/* STRING id */
};

struct m_api_join {			/* GPU_API: which thread and when owned a CUPTI correlation */
	uint64_t start, end;
	uint32_t cupti_corr;
	uint32_t tid;
};

/* One hardware-counter sample (PM_SAMPLE), values in % by enum trace_pm_slot, NaN absent. */
struct m_pm_sample {
	uint64_t start, end;
	uint32_t device;
	uint32_t flags;			/* enum trace_pm_sample_flags */
	float value[TRACE_PM_NR_SLOTS];
};

enum m_nvtx_kind { MN_PUSH = 1, MN_POP, MN_START, MN_END, MN_MARK };

/* One NVTX event (1.6 traces), as the program made it on its thread. */
struct m_nvtx {
	uint64_t t;
	uint64_t id;			/* START, END: the range id; POP: the domain */
	uint32_t thread;		/* index into model.threads */
	uint32_t domain;		/* PUSH, START, MARK: 0 the default domain */
	uint32_t name;			/* STRING id; 0 none */
	uint8_t kind;			/* enum m_nvtx_kind */
	uint8_t flags;			/* enum trace_nvtx_flags */
	uint16_t pad_;
};

struct m_nvtx_domain {
	uint32_t id;
	uint32_t name;			/* STRING id */
};

struct m_corr {				/* GPU_CORR */
	uint64_t ext_id;
	uint32_t cupti_corr;
};

/* What a chunk's shape_ref-th LAUNCH or GPU_KERNEL was interned as (struct trace_record). */
struct m_shape_memo {
	uint64_t chunk;			/* the chunk's offset + 1; 0: none yet */
	uint32_t id;			/* the interned shape */
	uint32_t graph_id;		/* a kernel's graph, which the shape holds and a ref does not */
};

struct model {
	/* From the header */
	char *path;
	char *host;
	char *cmdline;
	char *shim_version;
	uint32_t pid, ppid;
	int32_t rank;
	uint16_t version_major, version_minor;
	uint64_t start_mono_ns, start_real_ns;
	uint32_t file_flags;

	/* State of the file */
	int is_complete;		/* END read */
	int is_truncated;
	uint64_t nr_records;
	uint64_t nr_chunks;
	uint64_t nr_by_type[64];	/* records per type (types >= 64 under [0]) */
	uint64_t lost_records;		/* sum of LOST records (END's total when complete) */
	uint64_t lost_in_end;
	uint32_t end_reason;
	uint64_t end_ns;

	/* Dictionaries: ids are dense from 1 */
	char **strings;
	size_t nr_strings;
	struct m_api *apis;
	size_t nr_apis;
	struct m_func *funcs;
	size_t nr_funcs;
	struct trace_rec_device *devices;
	size_t nr_devices;
	struct m_occupancy *occ;
	size_t nr_occ, occ_cap;
	struct m_fill_memo *fill_memo;	/* by GPU shape, after loading (NULL: none kept) */
	size_t fill_memo_cap;
	struct m_thread *threads;
	size_t nr_threads, threads_cap;

	/* Events */
	struct m_call *calls;		/* sorted by t0 after model_finish */
	size_t nr_calls, calls_cap;
	struct m_call_args *call_args;	/* calls[].args indexes them */
	size_t nr_call_args, call_args_cap;
	struct m_call_result *results;	/* the calls whose result is not 0, by call */
	size_t nr_results, results_cap;
	uint32_t *call_seq;		/* while loading an older trace: each call's seq */
	size_t call_seq_cap;
	struct m_gpu_op *gpu;		/* sorted by start after model_finish */
	size_t nr_gpu, gpu_cap;
	uint32_t *gpu_corr;		/* while loading and joining: each operation's CUPTI number */
	size_t gpu_corr_cap;
	struct m_gpu_shape *gpu_shapes;	/* distinct; gpu[].shape indexes them */
	size_t nr_gpu_shapes, gpu_shapes_cap;
	uint32_t *gpu_shape_slots;	/* while loading: a hash of gpu_shapes (index + 1) */
	size_t nr_gpu_shape_slots;
	struct m_launch_shape *launch_shapes;	/* distinct; calls[].launch indexes them */
	size_t nr_launch_shapes, launch_shapes_cap;
	uint32_t *launch_shape_slots;	/* while loading: the same for launch_shapes */
	size_t nr_launch_shape_slots;
	struct m_shape_memo *gpu_memo;	/* while loading: the shape of the current chunk's */
	size_t gpu_memo_cap;		/* GPU_KERNEL and LAUNCH records, by their shape_ref */
	struct m_shape_memo *launch_memo;
	size_t launch_memo_cap;
	struct m_note *notes;
	size_t nr_notes, notes_cap;
	struct m_nvtx *nvtx;		/* model_load: every NVTX event, each thread's in order */
	size_t nr_nvtx, nvtx_cap;
	struct m_nvtx_domain *nvtx_domains;
	size_t nr_nvtx_domains, nvtx_domains_cap;
	struct m_api_join *api_joins;	/* the join's inputs: freed once it is done */
	size_t nr_api_joins, api_joins_cap;
	struct m_corr *corrs;
	size_t nr_corrs, corrs_cap;

	/* Call stacks (1.9) */
	struct m_stack *stacks;		/* STACK id i at [i - 1] */
	size_t nr_stacks, stacks_cap;
	uint64_t *stack_pcs;
	size_t nr_stack_pcs, stack_pcs_cap;
	struct trace_stack_py *stack_py;
	size_t nr_stack_py, stack_py_cap;
	struct m_pc *pcs;		/* sorted by pc after loading */
	size_t nr_pcs, pcs_cap;
	struct m_call_stack *call_stacks;	/* sorted by call */
	size_t nr_call_stacks, call_stacks_cap;
	uint64_t call_id_base;		/* model_stream: the number of m->calls[0] */
	uint64_t stacks_bad;		/* STACK and CALL_STACK records not taken (out of order,
					 * their call not found) */

	/* Hardware counters (PM sampling) */
	struct trace_rec_pm_config *pm_configs;	/* one per device sampled */
	size_t nr_pm_configs, pm_configs_cap;
	struct m_pm_sample *pm;		/* sorted by start after loading */
	size_t nr_pm, pm_cap;
	uint64_t pm_max_len;		/* longest sample (for overlap searches) */
	uint64_t pm_setup_start, pm_setup_end;	/* the shim setting counters up (notes); 0 none */

	/* CUPTI session */
	int has_cupti;			/* a GPU_INFO with state CUPTI_ON, or any GPU record */
	uint32_t cupti_version;
	uint64_t gpu_records, gpu_dropped, gpu_zero_ts;
	uint64_t gpu_joined, gpu_unjoined;
	uint64_t gpu_joined_by_corr;	/* through GPU_CORR (an older shim's pushed id) */
	uint64_t gpu_joined_by_api;	/* through GPU_API (thread and interval) */
	uint64_t gpu_joined_by_order;	/* kernels by name and launch order (no CUPTI ids) */
	uint64_t gpu_graph_ops;		/* operations replayed from CUDA graphs */
	uint64_t gpu_graph_ops_to_launch;	/* ... joined to a cuGraphLaunch */

	size_t strings_cap, apis_cap, funcs_cap, devices_cap;
	size_t nr_string_defs, nr_func_defs;	/* STRING and FUNC records taken */
	char **owned_names;		/* "api N" names made for undefined entry points */
	size_t nr_owned_names;
	int has_pushed_ids;		/* GPU_CORR records came (an older shim's) */

	/* How it was read */
	const char *join_redone;	/* why the trace was read twice to join after loading */
	int nr_reads;			/* 1 to 3 (model_load_opts), 2 (model_stream) */
	const char *stream_failed;	/* why model_stream did not stream: load the trace whole */
	size_t stream_held_max;		/* the most calls and operations it held at once */
};

/*
 * model_load - read the whole trace behind @rd into @m. Return: 0 (also for a truncated trace:
 * m->is_truncated says so), or -errno with rd->err describing the corrupt record.
 * Call model_free() in both cases.
 */
int model_load(struct model *m, struct trace_reader *rd);
void model_free(struct model *m);

/*
 * model_load_opts - model_load with choices for tests and benchmarks. GPU operations are joined
 * to their calls as the records come (through a table of @join_window correlation numbers,
 * rounded up to a power of two; 0: 2^17) or, with @batch_join, after loading from all of the
 * API records (24 bytes an operation more); both give the same join (m->join_redone says why
 * a load read the trace twice to get it). A trace with GPU_CORR records (an older shim's pushed
 * ids) is read once more to keep each call's seq for them (m->nr_reads counts the reads).
 */
struct model_load_opts {
	int batch_join;
	uint32_t join_window;
	int keep_seq;			/* keep each call's seq from the start (GPU_CORR seen) */
	const char *join_redone;	/* why @batch_join was chosen before reading (m->join_redone) */
};
int model_load_opts(struct model *m, struct trace_reader *rd, const struct model_load_opts *o);

/*
 * model_nr_reads - how many times a trace's records were read from the start (by model_load,
 * model_stream and model_load_opts together) since the process started: a report reads its
 * trace at most twice (tests/unit/test_reads.c).
 */
unsigned long model_nr_reads(void);

/*
 * model_stream - analyze the trace behind @rd without holding its calls and operations: a
 * first read builds the dictionaries into @m and feeds @p (first_look.h); @begin is then called
 * (the sink's analyses start, @m and @p complete), and a second read hands every call to
 * @sink->call in order of start (the order model_load sorts them in) and every operation, with
 * the call it was joined to, to @sink->op in order of start, each call before the operations
 * that start after it, and every counter sample to @sink->sample in order of start, each
 * before the operations that end after it starts; @sink->floor now and then with a time no call,
 * operation or sample still to come starts before. They are released once no record still to
 * come can start before them (how late records come is measured by the first read), so
 * memory is bounded by that lateness, not by the trace's length. After it @m holds no calls,
 * operations or samples; its counts and join figures are model_load's.
 * Return: 0; -errno for a corrupt trace (rd->err, as model_load would say); 1 when the trace
 * cannot be streamed with model_load's answer (m->stream_failed says why: an older trace's
 * pushed ids, a join that must wait for the whole trace, ...): model_free, then
 * model_load_opts with @whole, which then reads it once. The first read tells that, before
 * @begin and without a second read, from the correlation numbers, each thread's order of
 * calls and its last calls' intervals (model_join.c's join check), and the pushed ids. The
 * second read gives up (after feeding the sink part of the run) only on what the first did
 * not read: a file that changed between the reads.
 */
struct model_sink {
	void (*begin)(void *ctx, const struct model *m, const struct first_look *p);
	void (*call)(void *ctx, const struct m_call *c, uint32_t id);
	void (*op)(void *ctx, const struct m_gpu_op *g, const struct m_call *call, uint32_t id);
	void (*sample)(void *ctx, const struct m_pm_sample *s);
	void (*floor)(void *ctx, uint64_t t);	/* nothing still to come starts before @t */
	void *ctx;
};
int model_stream(struct model *m, struct trace_reader *rd, struct first_look *p,
		 const struct model_sink *sink, struct model_load_opts *whole);

/*
 * model_feed - a loaded model to @sink as model_stream hands a trace on (its calls, operations
 * and samples in the same order; no floor), after @p is made from it (free it after).
 */
void model_feed(const struct model *m, struct first_look *p, const struct model_sink *sink);

/* The string with id @id, or @fallback when the trace never defined it. */
const char *model_string(const struct model *m, uint32_t id, const char *fallback);

/*
 * model_gpu_op_name - an operation's name as the analyses and their outputs print it: a
 * kernel's name, "memcpy HtoD" (DtoH, DtoD, PtoP, or plain "memcpy"), "memset". The model's
 * strings or constants: the same operation kind gives the same pointer (sites compare names by
 * address).
 */
const char *model_gpu_op_name(const struct model *m, const struct m_gpu_shape *sh);

/* Name of a call's entry point ("cuLaunchKernel"); every id used by a call has one after
 * loading ("api N" when the trace never defined it). */
const char *model_api_name(const struct model *m, uint16_t api);

/*
 * model_end_reason - how the trace ended: "exit", "disabled", "signal", "exec", "unknown" (a
 * newer shim's reason), or NULL when it has no END (truncated). model_end_detail - the note
 * that says more (the signal, the exec'd path, why the shim turned off), or NULL.
 */
const char *model_end_reason(const struct model *m);
const char *model_end_detail(const struct model *m);

/* Kernel name of a FUNC id, "<unknown kernel>" when unresolved. */
const char *model_func_name(const struct model *m, uint32_t func);

/*
 * Max active blocks per SM for a kernel (by name, so graph replays of a captured kernel find
 * the answer recorded at capture) and launch shape; 0 when the calculator was not asked or
 * did not answer. Binary search: the table is sorted after loading.
 */
uint32_t model_occupancy(const struct model *m, uint32_t name, uint32_t block_threads,
			 uint32_t dyn_smem);

/*
 * model_gpu_shape_add, model_launch_shape_add - the index of @s in m->gpu_shapes or
 * m->launch_shapes, added when new (its padding must be zero). model_gpu_shape - an
 * operation's shape; model_launch - a launch call's (kind MC_LAUNCH).
 */
uint32_t model_gpu_shape_add(struct model *m, const struct m_gpu_shape *s);
uint32_t model_launch_shape_add(struct model *m, const struct m_launch_shape *s);

static inline const struct m_gpu_shape *model_gpu_shape(const struct model *m,
							const struct m_gpu_op *g)
{
	return &m->gpu_shapes[g->shape];
}

static inline const struct m_launch_shape *model_launch(const struct model *m,
							const struct m_call *c)
{
	return &m->launch_shapes[c->launch];
}

/*
 * model_call_args - what copy, set or allocation call @c carries. model_call_args_new - give
 * @c (such a call) a new, zeroed one (the loader's; tests build models with it).
 */
static inline const struct m_call_args *model_call_args(const struct model *m,
							const struct m_call *c)
{
	return &m->call_args[c->args];
}

struct m_call_args *model_call_args_new(struct model *m, struct m_call *c);

/* The result call m->calls[@idx] returned (CUresult; 0 for most). */
uint32_t model_call_result(const struct model *m, size_t idx);

/*
 * model_call_stack - the STACK id call number @id was captured with; 0 none. model_stack - the
 * stack of that id, NULL when none is defined. model_pc - the PC record of native address @pc,
 * NULL when the trace has none.
 */
uint32_t model_call_stack(const struct model *m, uint64_t id);
/* The same for callers asking in order of call number: O(1) each, from *@cursor (start at 0). */
uint32_t model_call_stack_next(const struct model *m, uint64_t id, size_t *cursor);
const struct m_stack *model_stack(const struct model *m, uint32_t id);
const struct m_pc *model_pc(const struct model *m, uint64_t pc);

/* Blocks of a launch's grid (x*y*z). */
static inline uint64_t model_launch_blocks(const struct m_launch_shape *l)
{
	return (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
}

/* The device record of ordinal @dev, or NULL. */
const struct trace_rec_device *model_device(const struct model *m, int dev);

/*
 * A stretch of the run without the shim's GPU timestamps, [from, to): from a CUPTI_OFF note
 * to the next CUPTI_ON note, or to the end (to = UINT64_MAX). The shim had handed CUPTI to
 * the application's own profiler (torch.profiler, Nsight), was waiting for it before its
 * first session, or could not go on: the GPU ran work the trace has no record of.
 */
struct m_stretch {
	uint64_t from, to;
};

/*
 * model_host_only - those stretches from the notes, in order of time and disjoint; *n_out of
 * them, NULL when none (free() the array). A trace without any CUPTI_ON note has no GPU
 * timestamps at all and no stretch: it is host-only as a whole, not in stretches.
 */
struct m_stretch *model_host_only(const struct model *m, size_t *n_out);

/*
 * model_kinds_off - model_host_only's stretches as CUPTI's kinds were off: a sampled window
 * ends at its end note, not earlier where the records it dropped at its close began (the
 * "records dropped at sampled window N's close" note). The calls made in between still had
 * their operations recorded (the join by launch order needs them).
 */
struct m_stretch *model_kinds_off(const struct model *m, size_t *n_out);

/* The index of the stretch of @v (@n, in order and disjoint) holding @t, or @n: O(log n). */
size_t model_stretch_of(const struct m_stretch *v, size_t n, uint64_t t);

/* How many of the @n stretches @v (in order, disjoint) end at or before @t: O(log n). */
size_t model_stretches_before(const struct m_stretch *v, size_t n, uint64_t t);

/* How much of [a, b) the @n stretches @v (model_host_only's) cover. O(log n) a stretch met. */
uint64_t model_host_only_overlap(const struct m_stretch *v, size_t n, uint64_t a, uint64_t b);

/*
 * model_sampled - whether the run was recorded in sampled mode (GPUSHIM_MODE=sampled, format
 * 1.8: its MODE note), with the windows' length and period as the shim was set (*@len_ms,
 * *@every_ms; either may be NULL). Its GPU timestamps come in windows: the stretches between
 * model_host_only's.
 */
int model_sampled(const struct model *m, uint32_t *len_ms, uint32_t *every_ms);

/*
 * model_cupti_detached - whether the sampled run detached CUPTI between its windows
 * (GPUSHIM_CUPTI_DETACH=1: its MODE note says so): it asked for no API
 * records in any window, its operations are joined by launch order.
 */
int model_cupti_detached(const struct model *m);

/*
 * model_gpu_windows - the stretches of [@lo, @hi) with GPU timestamps: between the host-only
 * stretches @v (@n of them, model_host_only's), in order; *@n_out of them, NULL when none
 * (free() the array).
 */
struct m_stretch *model_gpu_windows(const struct m_stretch *v, size_t n, uint64_t lo,
				    uint64_t hi, size_t *n_out);

#endif /* GPUSHIM_MODEL_H */
