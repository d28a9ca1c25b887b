// SPDX-License-Identifier: MIT
/*
 * findings.c - see findings.h. Pure: reads the model and its statistics, fills struct
 * findings. Works per device over the GPU operations in start order and, for each idle gap,
 * looks at the calls of the thread that issued the operation ending the gap.
 */
#define _GNU_SOURCE
#include "findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/first_look.h"
#include "uthash.h"
#include "welch.h"
#include "where.h"
#include "util/util.h"

static const char *const names[NR_CAUSES] = {
	[CAUSE_HOST_SYNC] = "host_sync",
	[CAUSE_LAUNCH_OVERHEAD] = "launch_overhead",
	[CAUSE_CPU_BOUND] = "cpu_bound",
	[CAUSE_MEMCPY] = "memcpy",
	[CAUSE_ALLOCATION] = "allocation",
	[CAUSE_LOW_PARALLELISM] = "low_parallelism",
	[CAUSE_MEMORY_CAPACITY] = "memory_capacity",
	[CAUSE_MEMORY_BANDWIDTH] = "memory_bandwidth",
	[CAUSE_COMPUTE_BOUND] = "compute_bound",
	[CAUSE_LATENCY_BOUND] = "latency_bound",
};

/* Advice in PyTorch's terms. */
static const char *const advice_torch[NR_CAUSES] = {
	[CAUSE_HOST_SYNC] =
		"The host waits for the GPU and the queue runs dry: drop per-step .item(), .cpu(), "
		"print() of GPU values and torch.cuda.synchronize() from the loop (keep metrics on "
		"the GPU, read them every N steps), use non_blocking copies and CUDA events.",
	[CAUSE_LAUNCH_OVERHEAD] =
		"Kernels finish faster than the host launches them: fuse small operations "
		"(torch.compile), capture the step in a CUDA graph, or give each kernel more work "
		"(a larger batch).",
	[CAUSE_CPU_BOUND] =
		"The GPU waits while the host works outside CUDA (data loading, preprocessing, "
		"Python): use DataLoader workers (num_workers > 0, pin_memory=True), prefetch the "
		"next batch, or move the work to the GPU.",
	[CAUSE_MEMCPY] =
		"Host-device copies stall the GPU: allocate pinned host memory, copy with "
		"non_blocking=True on a side stream to overlap compute, keep data resident on the GPU.",
	[CAUSE_ALLOCATION] =
		"Allocation and release calls stall the GPU: reuse buffers (caching allocator), "
		"avoid empty_cache() in the loop, use stream-ordered pools (cudaMallocAsync).",
	[CAUSE_LOW_PARALLELISM] =
		"The GPU is busy but most SMs are empty: kernels launch too few blocks. Increase the "
		"batch or problem size per kernel, merge independent small kernels, or run "
		"independent work concurrently on several streams.",
	[CAUSE_MEMORY_CAPACITY] =
		"Device memory is nearly full, which says data is resident, not that the GPU "
		"computes. If memory limits the batch: activation checkpointing, mixed precision, "
		"smaller activations; the time is lost to the causes ranked above.",
	[CAUSE_MEMORY_BANDWIDTH] =
		"The GPU is busy but its SMs wait on memory: DRAM throughput is high while the SMs "
		"issue little (elementwise ops, normalization, masks, reshapes). Fuse elementwise "
		"chains (torch.compile, fused kernels), keep activations in lower precision, avoid "
		"materialized copies (contiguous(), transposes); more SMs will not help.",
	[CAUSE_COMPUTE_BOUND] =
		"The SMs compute near their peak; on the tensor cores the GPU is used well, and "
		"speed-ups come from the maths itself: tensor cores (bf16/fp8, TF32 for fp32), "
		"better kernels (cuBLAS/cuDNN/FlashAttention), or less work.",
	[CAUSE_LATENCY_BOUND] =
		"The SMs hold warps but neither memory nor any pipe is near its peak: the warps "
		"wait on dependencies (chains of loads or arithmetic, too few warps per SM, kernels "
		"too small to ramp up). Give each kernel more independent work: a larger batch, "
		"fused kernels (torch.compile, mode=\"max-autotune\" tunes their tiles), fewer "
		"small sequential ops (e.g. per-token loops); a faster GPU will not help much.",
};

/* In JAX's terms (XLA compiles the step; dispatch is asynchronous until a value is read). */
static const char *const advice_jax[NR_CAUSES] = {
	[CAUSE_HOST_SYNC] =
		"The host waits for the GPU and the queue runs dry: drop per-step float(), "
		"np.asarray(), .block_until_ready() and print() of device arrays from the loop "
		"(keep metrics on the device, fetch them every N steps).",
	[CAUSE_LAUNCH_OVERHEAD] =
		"Kernels finish faster than the host dispatches them: jit the whole step (lax.scan or "
		"fori_loop for inner loops) so that XLA fuses it, or give each kernel more work (a "
		"larger batch).",
	[CAUSE_CPU_BOUND] =
		"The GPU waits while the host works outside CUDA (input pipeline, Python): prefetch "
		"the next batches to the device in the background (jax.device_put ahead of the step), "
		"or move the preprocessing into the jitted step.",
	[CAUSE_MEMCPY] =
		"Host-device transfers stall the GPU: put inputs on the device ahead of the step "
		"(prefetch with jax.device_put), keep arrays on the device between steps.",
	[CAUSE_ALLOCATION] =
		"Allocation calls stall the GPU: keep XLA's preallocated pool "
		"(XLA_PYTHON_CLIENT_PREALLOCATE, XLA_PYTHON_CLIENT_ALLOCATOR not 'platform'), and "
		"keep shapes fixed so that buffers are reused.",
	[CAUSE_LOW_PARALLELISM] =
		"The GPU is busy but most SMs are empty: kernels launch too few blocks. Increase the "
		"batch, vmap independent work into one computation, or jit larger pieces together.",
	[CAUSE_MEMORY_CAPACITY] =
		"Device memory is nearly full, which says data is resident (XLA preallocates most of "
		"it by default), not that the GPU computes; the time is lost to the causes ranked "
		"above. If memory limits the batch: rematerialization (jax.checkpoint), bf16.",
	[CAUSE_MEMORY_BANDWIDTH] =
		"The GPU is busy but its SMs wait on memory: DRAM throughput is high while the SMs "
		"issue little. Jit the step whole so that XLA fuses elementwise chains, keep "
		"activations in bf16, avoid materialized transposes and copies; more SMs will not "
		"help.",
	[CAUSE_COMPUTE_BOUND] =
		"The SMs compute near their peak; on the tensor cores the GPU is used well, and "
		"speed-ups come from the maths itself: tensor cores (bf16/fp8 matmuls, "
		"jax.default_matmul_precision), better "
		"kernels, or less work.",
	[CAUSE_LATENCY_BOUND] =
		"The SMs hold warps but neither memory nor any pipe is near its peak: the warps "
		"wait on dependencies (chains of loads or arithmetic, too few warps per SM). Give "
		"XLA more independent work per kernel: a larger batch, vmap over independent items, "
		"lax.scan instead of Python loops of small steps.",
};

/* In the CUDA API's terms: a program that is neither. */
static const char *const advice_cuda[NR_CAUSES] = {
	[CAUSE_HOST_SYNC] =
		"The host waits for the GPU and the queue runs dry: take cudaDeviceSynchronize, "
		"cudaStreamSynchronize and blocking read-backs (cudaMemcpy to the host) out of the "
		"loop; read results every N iterations with cudaMemcpyAsync into pinned memory and "
		"an event, so that the host keeps the GPU's queue ahead.",
	[CAUSE_LAUNCH_OVERHEAD] =
		"Kernels finish faster than the host launches them: capture the loop body in a CUDA "
		"graph (stream capture, cudaGraphLaunch), fuse small kernels, or give each kernel "
		"more work.",
	[CAUSE_CPU_BOUND] =
		"The GPU waits while the host works outside CUDA: prepare the next input while the "
		"GPU runs (a producer thread, double-buffered pinned memory, streams and events), or "
		"move the work to the GPU.",
	[CAUSE_MEMCPY] =
		"Host-device copies stall the GPU: use pinned host memory (cudaMallocHost, "
		"cudaHostRegister) and cudaMemcpyAsync on a stream of its own to overlap copies with "
		"kernels, and keep data resident on the GPU.",
	[CAUSE_ALLOCATION] =
		"Allocation and release calls stall the GPU (cudaFree synchronizes the device): "
		"allocate once and reuse buffers, or allocate stream-ordered (cudaMallocAsync, "
		"memory pools).",
	[CAUSE_LOW_PARALLELISM] =
		"The GPU is busy but most SMs are empty: kernels launch too few blocks. Give each "
		"kernel more blocks (more work per launch, smaller blocks), merge independent small "
		"kernels, or run independent work concurrently on several streams.",
	[CAUSE_MEMORY_CAPACITY] =
		"Device memory is nearly full, which says data is resident, not that the GPU "
		"computes; the time is lost to the causes ranked above.",
	[CAUSE_MEMORY_BANDWIDTH] =
		"The GPU is busy but its SMs wait on memory: DRAM throughput is high while the SMs "
		"issue little. Fuse kernels that stream the same data, use narrower types, avoid "
		"device-to-device copies; more SMs will not help.",
	[CAUSE_COMPUTE_BOUND] =
		"The SMs compute near their peak; on the tensor cores (or FP64 in numerical codes) "
		"the GPU is used well, and speed-ups come from the maths itself: tensor cores "
		"(cuBLAS or CUTLASS in bf16, fp8 or TF32), better algorithms, or "
		"less work.",
	[CAUSE_LATENCY_BOUND] =
		"The SMs hold warps but neither memory nor any pipe is near its peak: the warps "
		"wait on dependencies. Give each SM more independent work: more warps per SM "
		"(smaller blocks, fewer registers or less shared memory per thread), more "
		"independent operations per thread (unrolling, several accumulators), loads issued "
		"early (prefetch into shared memory, cp.async) instead of chains of dependent loads.",
};

/* compute_bound on the CUDA cores (FMA, ALU, XU pipes), per framework. */
static const char *const advice_cuda_cores[3] = {
	[FW_PYTORCH] =
		"The SMs are busy on CUDA-core arithmetic, not on the tensor cores: elementwise "
		"maths, exponentials, reductions, index computations (masks, broadcasts, softmax). "
		"Fuse the chain (torch.compile, fused kernels such as scaled_dot_product_attention "
		"instead of softmax over a materialized score matrix), express the work as matrix "
		"operations (bf16/TF32 matmuls on the tensor cores), use lower precision, and avoid "
		"materializing large broadcast intermediates.",
	[FW_JAX] =
		"The SMs are busy on CUDA-core arithmetic, not on the tensor cores: elementwise "
		"maths, exponentials, reductions, index computations. Jit the step whole so that "
		"XLA fuses the chain, express the work as matrix operations (jnp.einsum/dot in "
		"bf16 on the tensor cores: jax.nn.dot_product_attention instead of softmax over a "
		"materialized score matrix), use lower precision, avoid large broadcasts.",
	[FW_CUDA] =
		"The SMs are busy on CUDA-core arithmetic, not on the tensor cores: elementwise "
		"maths, special functions (exp, log: the XU pipe), integer and index computations "
		"(the ALU pipe). Move matrix-shaped work to tensor-core kernels (cuBLAS, CUTLASS, "
		"WMMA/MMA in bf16 or TF32), fuse kernels, use fast intrinsics (__expf) and 32-bit "
		"indices, and compute less (hoist invariant work out of loops).",
};

const char *cause_name(int id)
{
	return id >= 0 && id < NR_CAUSES ? names[id] : "none";
}

const char *cause_advice(int id, int framework)
{
	const char *const *t = framework == FW_PYTORCH ? advice_torch :
			       framework == FW_JAX     ? advice_jax :
							 advice_cuda;

	return id >= 0 && id < NR_CAUSES ? t[id] : "";
}

int findings_compute_pipe(const struct findings *f)
{
	return f->ctr.has ? counters_top_unit(&f->ctr, PM_CLASS_COMPUTE) : -1;
}

const char *findings_advice(const struct findings *f, int id)
{
	int pipe = findings_compute_pipe(f);

	if (id == CAUSE_COMPUTE_BOUND && pipe >= 0 && !pm_pipe_is_good(pipe))
		return advice_cuda_cores[f->framework == FW_PYTORCH || f->framework == FW_JAX ?
						 f->framework :
						 FW_CUDA];
	return cause_advice(id, f->framework);
}

const char *framework_name(int framework)
{
	return framework == FW_PYTORCH ? "pytorch" : framework == FW_JAX ? "jax" : "cuda";
}

/*
 * The framework behind a run, from its kernels' names: PyTorch's (in namespaces at:: and
 * c10::, or Triton's from torch.compile), XLA's (JAX: stream_executor's, fusions), the more
 * of the two; a program with neither is told in the CUDA API's terms.
 */
int findings_framework(const struct model *m)
{
	size_t i, torch = 0, xla = 0;

	for (i = 0; i < m->nr_funcs; i++) {
		const char *n = model_string(m, m->funcs[i].name, "");

		size_t len = strlen(n);

		if (!strncmp(n, "_ZN2at", 6) || !strncmp(n, "_ZN3c10", 7) ||
		    !strncmp(n, "triton_", 7))
			torch++;
		else if (!strncmp(n, "_ZN15stream_executor", 20) ||
			 (len >= 6 && !strcmp(n + len - 6, "fusion")) || strstr(n, "_fusion_"))
			xla++;
	}
	if (!torch && !xla)
		return FW_CUDA;
	return torch >= xla ? FW_PYTORCH : FW_JAX;
}

/* ---- Sites: where a cause happens, aggregated by (what, after) ---- */

struct site_acc {
	struct f_site *v;
	size_t n, cap;
	uint32_t *slot;			/* open addressing by (what, after, where): index + 1 */
	size_t nr_slots;		/* a power of two, at least twice n */
};

/* Where a site is in the program: the call's stack (where.h), and the call before CPU work. */
struct site_where {
	uint64_t key;
	uint32_t stack, from_stack;
};

static size_t site_hash(const char *what, const char *after, uint64_t where)
{
	uint64_t h = ((uint64_t)(uintptr_t)what * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(uintptr_t)after;

	h = (h ^ where) * 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 32));
}

static void site_rehash(struct site_acc *a, size_t nr_slots)
{
	size_t i;

	free(a->slot);
	a->slot = xcalloc(nr_slots, sizeof(*a->slot));
	a->nr_slots = nr_slots;
	for (i = 0; i < a->n; i++) {
		size_t j = site_hash(a->v[i].what, a->v[i].after, a->v[i].where) & (nr_slots - 1);

		while (a->slot[j])
			j = (j + 1) & (nr_slots - 1);
		a->slot[j] = (uint32_t)i + 1;
	}
}

/*
 * Add @ns (and @value) to the site (@what, @after, @w's key): names are the model's, compared
 * by address. @w NULL: no place in the program.
 */
static void site_add(struct site_acc *a, const char *what, const char *after,
		     const struct site_where *w, uint64_t ns, double value)
{
	const uint64_t where = w ? w->key : 0;
	struct f_site *e;
	size_t j;

	if (2 * (a->n + 1) > a->nr_slots)
		site_rehash(a, a->nr_slots ? 2 * a->nr_slots : 64);
	for (j = site_hash(what, after, where) & (a->nr_slots - 1); a->slot[j];
	     j = (j + 1) & (a->nr_slots - 1)) {
		e = &a->v[a->slot[j] - 1];
		if (e->what == what && e->after == after && e->where == where) {
			e->count++;
			e->time_ns += ns;
			e->value += value;
			if (w && ns > e->stack_ns) {
				e->stack = w->stack;
				e->from_stack = w->from_stack;
				e->stack_ns = ns;
			}
			return;
		}
	}
	XGROW(a->v, a->cap, a->n + 1);
	e = &a->v[a->n];
	memset(e, 0, sizeof(*e));
	e->what = what;
	e->after = after;
	e->where = where;
	e->count = 1;
	e->time_ns = ns;
	e->value = value;
	if (w) {
		e->stack = w->stack;
		e->from_stack = w->from_stack;
		e->stack_ns = ns;
	}
	a->slot[j] = (uint32_t)++a->n;
}

static int cmp_site(const void *x, const void *y)
{
	const struct f_site *a = x, *b = y;
	int c;

	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	c = strcmp(a->what ? a->what : "", b->what ? b->what : "");
	if (!c)
		c = strcmp(a->after ? a->after : "", b->after ? b->after : "");
	return c ? c : a->where < b->where ? -1 : a->where > b->where;
}

static int cmp_place(const void *x, const void *y)
{
	const struct f_place *a = x, *b = y;

	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->where < b->where ? -1 : a->where > b->where;
}

/* By place, the largest site of each first. */
static int cmp_place_key(const void *x, const void *y)
{
	const struct f_place *a = x, *b = y;

	if (a->where != b->where)
		return a->where < b->where ? -1 : 1;
	return a->time_ns > b->time_ns ? -1 : a->time_ns < b->time_ns;
}

/* The cause's time by place alone: its sites merged by place (f_place). */
static void places_finish(struct f_cause *c, const struct site_acc *a)
{
	struct f_place *v = xcalloc(a->n + 1, sizeof(*v));
	size_t i, j, n = 0;

	for (i = 0; i < a->n; i++) {
		const struct f_site *st = &a->v[i];

		if (!st->where)
			continue;
		c->placed_ns += st->time_ns;
		v[n++] = (struct f_place){ st->where, st->stack, st->count, st->time_ns };
	}
	xqsort(v, n, sizeof(*v), cmp_place_key);
	for (i = 0, j = 0; i < n; i++) {
		if (j && v[j - 1].where == v[i].where) {	/* its largest site came first */
			v[j - 1].count += v[i].count;
			v[j - 1].time_ns += v[i].time_ns;
		} else {
			v[j++] = v[i];
		}
	}
	xqsort(v, j, sizeof(*v), cmp_place);
	for (i = 0; i < MAX_PLACES && i < j; i++)
		c->places[i] = v[i];
	c->nr_places = (int)i;
	free(v);
}

static void sites_finish(struct f_cause *c, struct site_acc *a)
{
	int i;

	places_finish(c, a);
	xqsort(a->v, a->n, sizeof(*a->v), cmp_site);
	for (i = 0; i < MAX_SITES && (size_t)i < a->n; i++)
		c->sites[i] = a->v[i];
	c->nr_sites = i;
	free(a->v);
	free(a->slot);
	memset(a, 0, sizeof(*a));
}

/* ---- The calls a gap's walk reads ---- */

/* A call as the gap walks read it (48 bytes), kept while a gap can still reach it. */
struct walk_call {
	struct m_call c;
	uint64_t max_t1;		/* the latest end of the thread's calls up to this one */
	uint32_t id;			/* the call's number (the driver's: compared, not read) */
	uint32_t is_load;		/* the first launch of its kernel, long enough to have loaded */
	uint32_t stack;			/* its stack (f_site: a launch's may be another's); 0 none */
	uint32_t prev_stack;		/* the thread's last stack before it (0 none): where CPU
					 * work before it began, whatever calls have gone since */
};

/* A thread's calls in order of start: [head, n) of v, those ending after the keep bound. */
struct walk_thread {
	struct walk_call *v;
	size_t head, n, cap;
	size_t hint;			/* where the last search ended */
	uint32_t last_stack;		/* of its calls so far, the last one's with a stack */
	uint64_t max_t1;
};

/* Does the host, inside this call, wait for work the GPU was given before? */
int findings_is_blocking_wait(const struct m_call *c)
{
	if (stats_is_host_sync(c))
		return 1;
	if (c->kind == MC_SYNC &&
	    (c->sub == TRACE_SYNC_STREAM_QUERY || c->sub == TRACE_SYNC_EVENT_QUERY))
		return 1;
	/* A blocking copy out of the device waits for the work before it (.item(), .cpu()). */
	return c->kind == MC_COPY && !(c->flags & MCF_ASYNC) &&
	       (c->sub == TRACE_COPY_D2H || c->sub == TRACE_COPY_UNKNOWN ||
		c->sub == TRACE_COPY_A2H || c->sub == TRACE_COPY_D2D);
}

static int call_cause(const struct m_call *c)
{
	switch (c->kind) {
	case MC_COPY:
		/* Within device memory: issuing GPU work, as a launch (memcpy is host<->device) */
		if (c->sub == TRACE_COPY_D2D || c->sub == TRACE_COPY_PEER ||
		    c->sub == TRACE_COPY_D2A || c->sub == TRACE_COPY_A2D || c->sub == TRACE_COPY_A2A)
			return CAUSE_LAUNCH_OVERHEAD;
		return CAUSE_MEMCPY;
	case MC_MEM:
		return CAUSE_ALLOCATION;
	case MC_SYNC:
		return findings_is_blocking_wait(c) ? CAUSE_HOST_SYNC : CAUSE_LAUNCH_OVERHEAD;
	default:
		/* launches, sets, graph and module work: the cost of issuing GPU work */
		return CAUSE_LAUNCH_OVERHEAD;
	}
}

struct ending_after {
	const struct walk_call *v;
	uint64_t t;
};

static int ends_after(size_t i, const void *ctx)
{
	const struct ending_after *q = ctx;

	return q->v[i].max_t1 > q->t;
}

/*
 * First call of @tc that ends after @t, found by the running latest end (exact with nested
 * calls), galloping from where the last search ended (gaps come in time order).
 */
static size_t first_ending_after(struct walk_thread *tc, uint64_t t)
{
	struct ending_after q = { tc->v, t };
	size_t hint;

	if (tc->head == tc->n)
		return tc->n;	/* none kept (none made, maybe: v NULL) */
	q.v += tc->head;
	hint = tc->hint > tc->head ? tc->hint - tc->head : 0;
	tc->hint = tc->head + gallop_search(tc->n - tc->head, hint, ends_after, &q);
	return tc->hint;
}

/* Time the thread spent in module/library loads inside [g0, g1), from call @i on. */
static uint64_t module_time(const struct walk_thread *tc, size_t i, uint64_t g0, uint64_t g1)
{
	uint64_t sum = 0;

	for (; i < tc->n; i++) {
		const struct m_call *c = &tc->v[i].c;

		if (c->t0 >= g1)
			break;
		if (c->kind == MC_MODULE)
			sum += (c->t1 < g1 ? c->t1 : g1) - (c->t0 > g0 ? c->t0 : g0);
	}
	return sum;
}

/* ---- Per device ---- */

struct stretch {				/* 16 bytes: one a gap */
	uint64_t end;
	uint64_t busy;			/* busy time of the stretches up to this one's end */
};

struct walk_device {
	uint32_t device;
	uint64_t nr_ops;		/* taken so far */
	uint64_t begin;			/* the window opens: its first kernel's start */
	uint64_t first;			/* the first operation taken; UINT64_MAX none yet */
	uint64_t cur_begin, cur_end;	/* the stretch being merged */
	/*
	 * The shape of the operation the GPU ran last, a copy: model.gpu_shapes grows (and
	 * moves) while a stream interns the shapes it has not met yet.
	 */
	struct m_gpu_shape prev;
	struct stats_union work;	/* kernels and sets: the GPU working */
	/*
	 * The closed busy stretches, in order: those a wait can still reach. A wait that owns a
	 * gap began at most the longest call before the gap, so the stretches ending earlier than
	 * that are let go but the last of them (its busy total is the base).
	 */
	struct stretch *st;
	size_t nr_st, cap_st;
};

/*
 * Lazy loading (CUDA's default since 12.2) loads a kernel's module inside the first launch of
 * that kernel: a launch call of milliseconds, once per kernel. That is one-time warm-up like an
 * explicit module load, not launch overhead. A kernel's first launch counts as loading for what
 * it took beyond the trace's median launch call, when that is at least LAZY_LOAD_MIN_NS.
 */
#define LAZY_LOAD_MIN_NS 100000

struct first_launch {
	UT_hash_handle hh;
	uint32_t func;
};

/* The last captured stack of a kernel's launches by a thread: (thread << 32 | FUNC id). */
struct launch_stack {
	UT_hash_handle hh;
	uint64_t key;
	uint32_t stack;
};

struct findings_acc {
	struct findings *f;
	const struct model *m;
	const struct first_look *p;
	struct walk_thread *threads;	/* by thread slot: nr_threads + 1 */
	struct site_acc sites[NR_CAUSES];
	uint64_t lp_lost, lp_work;	/* low parallelism: lost and total kernel time */
	uint64_t comm_lost;		/* communication kernels' SMs left empty: the fill signal's,
					 * not low parallelism's */
	struct stats_comm_memo comm;	/* communication kernels' names */
	uint64_t max_call_ns;		/* the longest call of the trace */
	uint64_t first_call;
	uint64_t keep_after;		/* every gap still to come starts at this or later */
	size_t held;			/* calls in the threads' lists */
	struct walk_device *devs;		/* in order of their first operation */
	size_t nr_devs;
	/* Kernels launched so far (lazy loading: the first launch of each) */
	uint8_t *func_seen;		/* by FUNC id */
	struct first_launch *firsts;	/* kernels with no FUNC record */
	uint32_t last_func;
	struct ctr_acc *ctr;		/* the counters over the window */
	struct m_stretch *host_only;	/* model_host_only */
	size_t nr_host_only;
	findings_gap_fn gap;		/* findings_gaps_to: each gap handed on, none kept */
	void *gap_ctx;
	findings_piece_fn piece;	/* findings_pieces_to: each gap's pieces handed on */
	void *piece_ctx;
	uint64_t piece_at;		/* the gap in hand's pieces reach this far */
	uint64_t win_lo, win_hi;	/* the window asked for (the steady state); else 0, max */
	uint64_t win_kernels;		/* kernels that started in the window */
	/* A sampled run: its windows with GPU timestamps, each cause's gap time in each */
	struct m_stretch *wins;
	size_t nr_wins;
	uint64_t (*win_ns)[NR_CAUSES];
	uint64_t last_work_call;	/* the end of the last call making GPU work */
	/* Call stacks (where.h) */
	struct launch_stack *launch_stacks;
	uint64_t *where_memo;		/* by STACK id: its where key + 1; 0 not yet asked */
	size_t call_stack_cursor;	/* model_call_stack_next's */
	size_t nr_where_memo;
};

/* Close the stretch [b, e); the gap after it starts at e. */
static void stretch_push(struct walk_device *ds, uint64_t max_call_ns, uint64_t b, uint64_t e)
{
	uint64_t busy = ds->nr_st ? ds->st[ds->nr_st - 1].busy : 0;

	if (ds->nr_st == ds->cap_st && ds->cap_st >= 4096) {
		/* Full: a wait owning this gap or a later one began at e - max_call_ns or after. */
		uint64_t reach = e > max_call_ns ? e - max_call_ns : 0;
		size_t k = 0;

		while (k < ds->nr_st && ds->st[k].end <= reach)
			k++;
		if (k > ds->nr_st / 2) {	/* keep the last of them: busy_since's base */
			memmove(ds->st, ds->st + k - 1, (ds->nr_st - k + 1) * sizeof(*ds->st));
			ds->nr_st -= k - 1;
		}
	}
	XGROW(ds->st, ds->cap_st, ds->nr_st + 1);
	ds->st[ds->nr_st++] = (struct stretch){ .end = e, .busy = busy + (e - b) };
}

/* GPU busy time between @t and the end of the last closed stretch. */
static uint64_t busy_since(const struct walk_device *ds, uint64_t t)
{
	size_t lo = 0, hi = ds->nr_st, n = ds->nr_st;
	uint64_t before, begin, len;

	if (!n)
		return 0;
	/* First stretch ending after t. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ds->st[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n)
		return 0;
	before = lo ? ds->st[lo - 1].busy : 0;
	len = ds->st[lo].busy - before;
	begin = ds->st[lo].end - len;
	return ds->st[n - 1].busy - before - (t > begin ? t - begin : 0);
}

/* The gap's split, when asked: kept (want_gaps), handed on (findings_gaps_to), or both. */
static void keep_gap(struct findings_acc *a, uint32_t device, uint64_t g0, uint64_t g1,
		     const uint64_t *part)
{
	struct findings *f = a->f;
	struct f_gap *g, one;

	if (!f->want_gaps && !a->gap)
		return;
	if (f->want_gaps) {
		XGROW(f->gaps, f->gaps_cap, f->nr_gaps_kept + 1);
		g = &f->gaps[f->nr_gaps_kept++];
	} else {
		g = &one;
	}
	g->start = g0;
	g->end = g1;
	g->device = (int)device;
	memcpy(g->part, part, sizeof(g->part));
	if (a->gap)
		a->gap(a->gap_ctx, g);
}

/*
 * A piece [@s, @e) of a gap of @device that went to @part, when asked (findings_pieces_to):
 * from where the last one ended on (calls of one thread can nest), so that they never overlap.
 */
static void hand_piece(struct findings_acc *a, uint32_t device, uint64_t s, uint64_t e, int part)
{
	if (s < a->piece_at)
		s = a->piece_at;
	if (!a->piece || e <= s)
		return;
	a->piece(a->piece_ctx, device, s, e, part);
	a->piece_at = e;
}

/* A sampled run: the gap starting at @t adds @part to its window's causes. */
static void window_add(struct findings_acc *a, uint64_t t, const uint64_t *part)
{
	size_t i = model_stretch_of(a->wins, a->nr_wins, t);
	int k;

	if (i == a->nr_wins)
		return;
	for (k = 0; k < NR_CAUSES; k++)
		a->win_ns[i][k] += part[k];
}

/* ---- Where in the program (where.h) ---- */

/* The where key of STACK @stack (0 for none), asked once a stack. */
static uint64_t where_key(struct findings_acc *a, uint32_t stack)
{
	struct where w;

	if (!stack || stack >= a->nr_where_memo)
		return 0;
	if (!a->where_memo[stack])
		a->where_memo[stack] = (where_of(a->m, stack, &w) == 0 ? w.key : 0) + 1;
	return a->where_memo[stack] - 1;
}

static uint64_t launch_stack_key(const struct model *m, const struct m_call *c)
{
	return (uint64_t)c->thread << 32 | model_launch(m, c)->func;
}

/*
 * The stack of call @c (number @id): its own, or for a launch without one, the last captured
 * launch of the same kernel by the same thread (f_site). 0: none.
 */
static uint32_t inherited_stack(const struct findings_acc *a, const struct m_call *c)
{
	struct launch_stack *e;
	uint64_t key;

	if (!c || c->kind != MC_LAUNCH || !a->launch_stacks)
		return 0;
	key = launch_stack_key(a->m, c);
	HASH_FIND(hh, a->launch_stacks, &key, sizeof(key), e);
	return e ? e->stack : 0;
}

static uint32_t call_stack_of(const struct findings_acc *a, const struct m_call *c, uint32_t id)
{
	uint32_t stack = model_call_stack(a->m, id);

	return stack ? stack : inherited_stack(a, c);
}

/*
 * A launch with its own stack: the first of its kernel by the thread is the one its launches
 * without a stack take. The first, not the latest: which later launches have been read when a
 * gap or an operation asks depends on how the trace is read (streamed or whole), the first
 * does not.
 */
static void launch_stack_put(struct findings_acc *a, const struct m_call *c, uint32_t stack)
{
	uint64_t key = launch_stack_key(a->m, c);
	struct launch_stack *e;

	HASH_FIND(hh, a->launch_stacks, &key, sizeof(key), e);
	if (e)
		return;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->stack = stack;
	HASH_ADD(hh, a->launch_stacks, key, sizeof(e->key), e);
}

static struct site_where site_where(struct findings_acc *a, uint32_t stack, uint32_t from)
{
	return (struct site_where){ where_key(a, stack), stack, from };
}

/*
 * One idle gap [g0, g1) of device @ds that operation @next ends (@prev: the operation the GPU
 * ran before), issued by call @issuer (number @issuer_id; NULL: joined to none). Splits the
 * gap among the causes, adds it to their sites.
 */
static void attribute_gap(struct findings_acc *a, const struct walk_device *ds, uint64_t g0,
			  uint64_t g1, const struct m_call *issuer, uint32_t issuer_id)
{
	const struct model *m = a->m;
	struct findings *f = a->f;
	const char *after = model_gpu_op_name(m, &ds->prev);
	uint64_t part[NR_GAP_PARTS] = { 0 };
	const char *what[NR_CAUSES] = { NULL };
	uint64_t what_ns[NR_CAUSES] = { 0 };
	uint32_t what_stack[NR_CAUSES] = { 0 }, before = 0, cpu_from = 0, cpu_to = 0;
	int cpu_pending = 0;
	uint64_t cpu_max = 0;
	struct site_where sw;
	struct walk_thread *tc;
	const uint64_t gap0 = g0;
	uint64_t pos = g0, len = g1 - g0, waited = 0, setup = 0;
	size_t i;
	int k;

	f->nr_gaps++;
	a->piece_at = g0;
	if (!issuer || issuer->t1 <= g0) {
		/* Queued before the GPU ran dry: the wait is on the GPU side (or unknown). */
		if (len < NOISE_GAP_NS)
			f->noise_ns += len, part[GAP_NOISE] = len;
		else
			f->dependency_ns += len, part[GAP_DEPENDENCY] = len;
		hand_piece(a, ds->device, g0, g1, len < NOISE_GAP_NS ? GAP_NOISE : GAP_DEPENDENCY);
		keep_gap(a, ds->device, g0, g1, part);
		return;
	}
	tc = &a->threads[issuer->thread < m->nr_threads ? issuer->thread : m->nr_threads];
	i = first_ending_after(tc, g0);
	/* The thread's last call with a stack before the gap: where CPU work at its start began
	 * (calls without one, bookkeeping such as a query, say nothing of the place). Kept with
	 * the next call: the calls before the gap may have gone (how many are held depends on
	 * how the trace is read, streamed or whole), the one ending in it has not. */
	if (i < tc->n)
		before = tc->v[i].prev_stack;

	/*
	 * The host was blocked waiting when the GPU ran out of work: the wait drained the queue.
	 * Had the host not waited, the work that ran during the wait could have hidden what the
	 * host did next, so the sync owns the gap up to that much GPU time; a longer host
	 * stretch is classified like any other (a checkpoint or a profiler start after a sync is
	 * not the sync's, nor is a wait on a GPU that was already idle). Module loading is
	 * one-time warm-up either way.
	 */
	if (i < tc->n && tc->v[i].c.t0 <= g0 && findings_is_blocking_wait(&tc->v[i].c) &&
	    busy_since(ds, tc->v[i].c.t0) > 0) {
		const struct m_call *w = &tc->v[i].c;
		uint64_t hidden = busy_since(ds, w->t0);
		uint64_t own = len < hidden ? len : hidden;
		uint64_t load = module_time(tc, i, g0, g0 + own);

		part[GAP_MODULE] += load;
		waited = own - load;
		hand_piece(a, ds->device, g0, g0 + load, GAP_MODULE);
		hand_piece(a, ds->device, g0 + load, g0 + own, CAUSE_HOST_SYNC);
		f->causes[CAUSE_HOST_SYNC].time_ns += waited;
		f->causes[CAUSE_HOST_SYNC].count++;
		sw = site_where(a, tc->v[i].stack, 0);
		site_add(&a->sites[CAUSE_HOST_SYNC], model_api_name(m, w->api), after, &sw, waited,
			 0);
		pos = g0 + own;
		g0 = pos;
		i = first_ending_after(tc, g0);
		if (own == len)
			i = tc->n;	/* nothing left to walk */
	}

	/* Walk the issuing thread's calls through the gap; between calls it was outside CUDA. */
	for (; i < tc->n; i++) {
		const struct walk_call *fc = &tc->v[i];
		const struct m_call *c = &fc->c;
		uint64_t s = c->t0 > g0 ? c->t0 : g0;
		uint64_t e = c->t1 < g1 ? c->t1 : g1;

		if (c->t0 >= g1)
			break;
		if (s > pos) {
			part[CAUSE_CPU_BOUND] += s - pos;
			hand_piece(a, ds->device, pos, s, CAUSE_CPU_BOUND);
			/* its longest stretch: between the calls around it (the first after it
			 * with a stack, below) */
			if (s - pos > cpu_max) {
				cpu_max = s - pos;
				cpu_from = before;
				cpu_to = 0;
				cpu_pending = 1;
			}
		}
		if (cpu_pending && (fc->stack || fc->id == issuer_id)) {
			cpu_to = fc->stack;
			what[CAUSE_CPU_BOUND] = model_api_name(m, c->api);
			cpu_pending = 0;
		}
		if (fc->stack)
			before = fc->stack;
		if (e > s && c->kind == MC_MODULE) {
			part[GAP_MODULE] += e - s;
			hand_piece(a, ds->device, s, e, GAP_MODULE);
		} else if (e > s) {
			/* The shim's counter set-up stalls calls once: warm-up, not the program's. */
			uint64_t stall = overlap_ns(s, e, m->pm_setup_start, m->pm_setup_end);
			uint64_t load = 0;

			if (fc->is_load) {
				load = overlap_ns(s, e, c->t0,
						  c->t0 + (c->t1 - c->t0 - a->p->median_launch_ns));
				if (load > e - s - stall)
					load = e - s - stall;
			}
			part[GAP_MODULE] += stall + load;
			setup += stall;
			k = call_cause(c);
			part[k] += e - s - stall - load;
			/* the stall and the load come first in the call (the order inside a call
			 * is not recorded) */
			hand_piece(a, ds->device, s, s + stall + load, GAP_MODULE);
			hand_piece(a, ds->device, s + stall + load, e, k);
			if (e - s > what_ns[k]) {
				what_ns[k] = e - s;
				what[k] = model_api_name(m, c->api);
				what_stack[k] = fc->stack;
			}
		}
		if (e > pos)
			pos = e;
		if (fc->id == issuer_id)
			break;
	}
	/* After the issuing call returned, the GPU takes a moment to start: launch latency. */
	if (pos < g1) {
		k = issuer->t1 <= pos ? CAUSE_LAUNCH_OVERHEAD : CAUSE_CPU_BOUND;
		part[k] += g1 - pos;
		hand_piece(a, ds->device, pos, g1, k);
	}

	f->module_load_ns += part[GAP_MODULE] - setup;
	f->profiler_setup_ns += setup;
	for (k = 0; k < NR_CAUSES; k++) {
		if (!part[k])
			continue;
		f->causes[k].time_ns += part[k];
		f->causes[k].count++;
		/* Host work outside CUDA is named by the call the host made when it came back
		 * (after its longest stretch), and placed between the thread's calls around it. */
		if (k == CAUSE_CPU_BOUND && what[k])
			sw = site_where(a, cpu_to, cpu_from);
		else
			sw = site_where(a, what[k] ? what_stack[k] :
					call_stack_of(a, issuer, issuer_id), 0);
		site_add(&a->sites[k], what[k] ? what[k] : model_api_name(m, issuer->api), after,
			 &sw, part[k], 0);
	}
	part[CAUSE_HOST_SYNC] += waited;
	if (a->wins)
		window_add(a, gap0, part);
	keep_gap(a, ds->device, gap0, g1, part);
}

static struct walk_device *dev_of(struct findings_acc *a, uint32_t device)
{
	const struct first_look_device *pd;
	struct walk_device *d;
	size_t i;

	for (i = 0; i < a->nr_devs; i++)
		if (a->devs[i].device == device)
			return &a->devs[i];
	a->devs = xrealloc(a->devs, (a->nr_devs + 1) * sizeof(*a->devs));
	d = &a->devs[a->nr_devs++];
	memset(d, 0, sizeof(*d));
	d->device = device;
	d->first = UINT64_MAX;
	/*
	 * The window opens with the first kernel: what comes before (weights uploaded, then
	 * seconds of Python setup before the first step) is start-up, not the steady state the
	 * analysis is about. Without kernels it opens with the first operation.
	 */
	pd = first_look_find_device(a->p, device);
	d->begin = !pd ? 0 : pd->has_kernel ? pd->first_kernel : pd->first_op;
	if (d->begin < a->win_lo)
		d->begin = a->win_lo;	/* the steady state's start */
	return d;
}

/* Exposed copy time goes to memcpy, with the bytes and how much of them were pageable. */
/*
 * A copy with host memory on a side (to, from or within the host): the memcpy cause's. A copy
 * between device memories (device, array, peer) is GPU work of the bandwidth family: a
 * materialized tensor (clone, contiguous, an out-of-place mask), not a transfer.
 */
static int copy_touches_host(const struct m_gpu_shape *sh)
{
	switch (sh->copy_kind) {
	case TRACE_GPU_COPY_DTOD:
	case TRACE_GPU_COPY_PTOP:
	case 5:		/* array to array */
	case 6:		/* array to device */
	case 7:		/* device to array */
		return 0;
	default:
		return 1;
	}
}

static void copy_evidence(struct findings_acc *a, const struct m_gpu_op *g,
			  const struct m_gpu_shape *sh, const struct m_call *call, uint32_t call_id)
{
	struct f_cause *c = &a->f->causes[CAUSE_MEMCPY];
	int is_pageable = sh->src_kind == TRACE_GPU_MEM_PAGEABLE ||
			  sh->dst_kind == TRACE_GPU_MEM_PAGEABLE;
	const struct site_where sw = site_where(a, call_stack_of(a, call, call_id), 0);

	c->bytes += sh->bytes;
	if (is_pageable)
		c->pageable_bytes += sh->bytes;
	/* Sites: the copies by direction and memory kind, with their time on the GPU. */
	site_add(&a->sites[CAUSE_MEMCPY], model_gpu_op_name(a->m, sh),
		 is_pageable ? "pageable" : "pinned/device", &sw, g->end - g->start,
		 (double)sh->bytes);
}

/*
 * Does operation @g of device @ds close an idle gap that meets a stretch without GPU
 * timestamps? Work the trace has no record of ran in it: the gap is left out of the window.
 */
static int gap_left_out(const struct findings_acc *a, const struct walk_device *ds,
			const struct m_gpu_op *g)
{
	return a->nr_host_only && ds->first != UINT64_MAX && g->start >= ds->begin &&
	       g->start > ds->cur_end &&
	       model_host_only_overlap(a->host_only, a->nr_host_only, ds->cur_end, g->start);
}

/* Operation @g of device @ds inside its window: its stretch, a gap closed, the fill. */
static void window_op(struct findings_acc *a, struct walk_device *ds, const struct m_gpu_op *g,
		      const struct m_gpu_shape *sh, const struct m_call *call, uint32_t call_id)
{
	const struct model *m = a->m;

	/*
	 * Gaps of the union of all operations, in start order. Copies that run while no work
	 * does are exposed: the union of everything less the union of the work.
	 */
	if (ds->first == UINT64_MAX) {
		ds->first = ds->cur_begin = g->start;
		ds->cur_end = g->end;
		ds->prev = *sh;
	} else if (g->start > ds->cur_end) {
		stretch_push(ds, a->max_call_ns, ds->cur_begin, ds->cur_end);
		if (gap_left_out(a, ds, g)) {
			a->f->excluded_ns += g->start - ds->cur_end;
			a->f->nr_excluded_gaps++;
		} else {
			attribute_gap(a, ds, ds->cur_end, g->start, call, call_id);
		}
		ds->cur_begin = g->start;
		ds->cur_end = g->end;
		ds->prev = *sh;
	} else if (g->end > ds->cur_end) {
		ds->cur_end = g->end;
		ds->prev = *sh;
	}
	if (sh->kind != MG_MEMCPY || !copy_touches_host(sh))
		stats_union_add(&ds->work, g->start, g->end);

	if (sh->kind == MG_KERNEL) {
		int is_est;
		double fill = stats_fill_op(m, g, &is_est);
		uint64_t dur = g->end - g->start;
		uint64_t lost = fill >= 0 && fill < 1 ? (uint64_t)((double)dur * (1 - fill)) : 0;

		/* a communication kernel's few blocks are its channels, its time a transfer or a
		 * wait for the other ranks (the job view's), not work that more blocks would
		 * spread: the SMs it leaves empty count in the fill signal only */
		if (stats_is_comm_name(&a->comm, m, sh->name)) {
			a->comm_lost += lost;
			return;
		}
		a->lp_work += dur;
		if (fill >= 0 && fill < 1) {
			const struct site_where sw = site_where(a, call_stack_of(a, call, call_id), 0);

			a->lp_lost += lost;
			site_add(&a->sites[CAUSE_LOW_PARALLELISM], model_gpu_op_name(m, sh), NULL, &sw,
				 lost, fill);
		}
	}
}

/*
 * Every gap still to come starts at this time or later: a device's at its current end once
 * its window has begun, else at its window's start (the first look's); a device whose every
 * operation has come has none to come.
 */
static uint64_t keep_bound(const struct findings_acc *a)
{
	uint64_t keep = UINT64_MAX, t;
	size_t i, j;

	for (i = 0; i < a->p->nr_devices; i++) {
		const struct first_look_device *pd = &a->p->devices[i];
		const struct walk_device *ds = NULL;

		for (j = 0; j < a->nr_devs; j++)
			if (a->devs[j].device == pd->device)
				ds = &a->devs[j];
		if (ds && ds->nr_ops >= pd->nr_ops)
			continue;
		t = ds && ds->first != UINT64_MAX ? ds->cur_end :
		    pd->has_kernel		   ? pd->first_kernel :
						     pd->first_op;
		if (t < keep)
			keep = t;
	}
	return keep;
}

/* ---- As the calls and operations come ---- */

struct findings_acc *findings_begin(struct findings *f, const struct model *m,
				    const struct first_look *p, int want_gaps)
{
	return findings_begin_window(f, m, p, want_gaps, 0, UINT64_MAX);
}

struct findings_acc *findings_begin_window(struct findings *f, const struct model *m,
					   const struct first_look *p, int want_gaps,
					   uint64_t win_lo, uint64_t win_hi)
{
	struct findings_acc *a = xcalloc(1, sizeof(*a));
	uint64_t ws, we;

	memset(f, 0, sizeof(*f));
	f->want_gaps = want_gaps;
	a->f = f;
	a->m = m;
	a->p = p;
	a->threads = xcalloc(m->nr_threads + 1, sizeof(*a->threads));
	a->max_call_ns = p->max_call_ns;
	a->first_call = UINT64_MAX;
	a->func_seen = xcalloc(m->nr_funcs + 1, 1);
	a->nr_where_memo = m->nr_stacks + 1;
	a->where_memo = xcalloc(a->nr_where_memo, sizeof(*a->where_memo));
	a->keep_after = keep_bound(a);
	a->host_only = model_host_only(m, &a->nr_host_only);
	a->win_lo = win_lo;
	a->win_hi = win_hi;
	f->sampling.is_sampled = model_sampled(m, &f->sampling.window_ms, &f->sampling.every_ms);
	if (f->sampling.is_sampled) {
		a->wins = model_gpu_windows(a->host_only, a->nr_host_only, 0, UINT64_MAX,
					    &a->nr_wins);
		if (a->wins)
			a->win_ns = xcalloc(a->nr_wins, sizeof(*a->win_ns));
	}
	if (!first_look_window(p, &ws, &we))
		ws = we = 0;
	if (ws < win_lo)
		ws = win_lo;
	if (we > win_hi)
		we = win_hi;
	a->ctr = counters_begin(&f->ctr, m, ws, we < ws ? ws : we);
	return a;
}

void findings_pieces_to(struct findings_acc *a, findings_piece_fn piece, void *ctx)
{
	a->piece = piece;
	a->piece_ctx = ctx;
}

void findings_gaps_to(struct findings_acc *a, findings_gap_fn gap, void *ctx)
{
	a->gap = gap;
	a->gap_ctx = ctx;
}

/* Is launch @c the first of its kernel? (calls come in order of start) */
static int is_first_launch(struct findings_acc *a, const struct m_call *c)
{
	const struct model *m = a->m;
	uint32_t func = model_launch(m, c)->func;
	struct first_launch *e;

	if (!func || func == a->last_func)
		return 0;	/* loops launch the same kernel again and again */
	a->last_func = func;
	if (func < m->nr_funcs) {
		if (a->func_seen[func])
			return 0;
		a->func_seen[func] = 1;
		return 1;
	}
	HASH_FIND(hh, a->firsts, &func, sizeof(func), e);
	if (e)
		return 0;
	e = xcalloc(1, sizeof(*e));
	e->func = func;
	HASH_ADD(hh, a->firsts, func, sizeof(e->func), e);
	return 1;
}

void findings_call(struct findings_acc *a, const struct m_call *c, uint32_t id)
{
	const struct model *m = a->m;
	struct walk_thread *tc;
	struct walk_call *fc;
	uint32_t stack, fc_prev;
	int is_load = 0;

	if (c->t0 < a->first_call)
		a->first_call = c->t0;
	/* A sampled run's window goes on past its last window, to its last GPU work's call. */
	if ((c->kind == MC_LAUNCH || c->kind == MC_COPY || c->kind == MC_SET) &&
	    c->t1 > a->last_work_call && c->t0 >= a->win_lo && c->t0 < a->win_hi)
		a->last_work_call = c->t1;
	if (c->kind == MC_LAUNCH && is_first_launch(a, c))
		is_load = c->t1 - c->t0 >= a->p->median_launch_ns + LAZY_LOAD_MIN_NS;
	if (id >= M_NO_CALL)
		return;		/* no gap's walk can name it */
	stack = model_call_stack_next(m, id, &a->call_stack_cursor);
	if (stack && c->kind == MC_LAUNCH)
		launch_stack_put(a, c, stack);
	else if (!stack)
		stack = inherited_stack(a, c);
	tc = &a->threads[c->thread < m->nr_threads ? c->thread : m->nr_threads];
	/* What no gap can reach any more goes; the rest slides to the front now and then. */
	while (tc->head < tc->n && tc->v[tc->head].max_t1 <= a->keep_after) {
		tc->head++;
		a->held--;
	}
	if (tc->head == tc->n) {
		tc->head = tc->n = tc->hint = 0;
	} else if (tc->head >= 64 && tc->head >= tc->n / 2) {
		memmove(tc->v, tc->v + tc->head, (tc->n - tc->head) * sizeof(*tc->v));
		tc->n -= tc->head;
		tc->hint = tc->hint > tc->head ? tc->hint - tc->head : 0;
		tc->head = 0;
	}
	if (c->t1 > tc->max_t1)
		tc->max_t1 = c->t1;
	fc_prev = tc->last_stack;
	if (stack)
		tc->last_stack = stack;
	if (tc->head == tc->n && tc->max_t1 <= a->keep_after)
		return;		/* it would go at once */
	XGROW(tc->v, tc->cap, tc->n + 1);
	fc = &tc->v[tc->n++];
	if (++a->held > a->f->calls_held_max)
		a->f->calls_held_max = a->held;
	fc->c = *c;
	fc->max_t1 = tc->max_t1;
	fc->id = id;
	fc->is_load = is_load;
	fc->stack = stack;
	fc->prev_stack = fc_prev;
}

void findings_sample(struct findings_acc *a, const struct m_pm_sample *s)
{
	counters_sample(a->ctr, s);
}

void findings_floor(struct findings_acc *a, uint64_t t)
{
	counters_floor(a->ctr, t);
}

void findings_op(struct findings_acc *a, const struct m_gpu_op *g, const struct m_call *call,
		 uint32_t call_id)
{
	const struct model *m = a->m;
	const struct m_gpu_shape *sh = model_gpu_shape(m, g);
	struct walk_device *ds = dev_of(a, sh->device);

	ds->nr_ops++;
	if (gap_left_out(a, ds, g))
		counters_exclude(a->ctr, sh->device, ds->cur_end, g->start);
	counters_op(a->ctr, g);
	if (sh->kind == MG_MEMCPY && copy_touches_host(sh))
		copy_evidence(a, g, sh, call, call_id);
	/* Kernels shorter than the call that launched them (HTA's "short GPU kernels"). */
	if (sh->kind == MG_KERNEL && call && call->kind == MC_LAUNCH &&
	    g->end - g->start < call->t1 - call->t0)
		a->f->causes[CAUSE_LAUNCH_OVERHEAD].aux++;
	if (g->start >= ds->begin && g->start < a->win_hi) {
		a->win_kernels += sh->kind == MG_KERNEL;
		/* Copies within the device and memsets: bandwidth work, by what they are. */
		if (sh->kind == MG_MEMSET || (sh->kind == MG_MEMCPY && !copy_touches_host(sh))) {
			a->f->device_copy_ns += (g->end < a->win_hi ? g->end : a->win_hi) - g->start;
			a->f->nr_device_copies++;
		}
		window_op(a, ds, g, sh, call, call_id);
	}
	a->keep_after = keep_bound(a);
}
static int cmp_rank(const void *x, const void *y, void *ctx)
{
	const struct findings *f = ctx;
	int a = *(const int *)x, b = *(const int *)y;

	if (f->causes[a].time_ns != f->causes[b].time_ns)
		return f->causes[a].time_ns > f->causes[b].time_ns ? -1 : 1;
	return a - b;
}

/* What the verdict leaves out: the run's stretches without GPU timestamps, when there are. */
static void summarize_left_out(struct findings *f, const struct stats *s)
{
	char tail[160];

	if (!f->has_gpu || (!s->gpu.host_only_ns && !s->gpu.host_only_launches))
		return;
	if (f->sampling.is_sampled) {
		double ci = -1;
		int r;

		/* The widest interval of the causes named first. */
		for (r = 0; r < f->nr_ranked && r < 3; r++) {
			const struct f_cause *c = &f->causes[f->ranked[r]];
			double x = c->has_saving ? c->saving_ci_pct : c->share_ci_pct;

			if (x > ci)
				ci = x;
		}
		if (ci >= 0)
			snprintf(tail, sizeof(tail),
				 "; sampled: %llu windows, %.1f%% of the window, extrapolated "
				 "(+-%.1f points at 95%%)",
				 (unsigned long long)f->sampling.nr_windows, f->sampling.covered_pct,
				 ci);
		else
			snprintf(tail, sizeof(tail),
				 "; sampled: %llu windows, %.1f%% of the window, extrapolated (too few "
				 "windows for an error)",
				 (unsigned long long)f->sampling.nr_windows, f->sampling.covered_pct);
		strncat(f->summary, tail, sizeof(f->summary) - strlen(f->summary) - 1);
		return;
	}
	snprintf(tail, sizeof(tail),
		 "; left out: %llu launches while another CUPTI client held CUPTI, without GPU "
		 "timestamps",
		 (unsigned long long)s->gpu.host_only_launches);
	strncat(f->summary, tail, sizeof(f->summary) - strlen(f->summary) - 1);
}

/* The largest share of the time a replayed cause lost. */
static double idle_share_max(const struct findings *f)
{
	double most = 0;
	int k;

	for (k = 0; k < NR_CAUSES; k++)
		if (f->causes[k].has_saving && f->causes[k].share_pct > most)
			most = f->causes[k].share_pct;
	return most;
}

/* The verdict's end for a primary cause with a saving: what to fix and what it buys. */
static void summarize_saving(const struct findings *f, char *tail, size_t size)
{
	static const char *const fix[NR_CAUSES] = {
		[CAUSE_HOST_SYNC] = "not blocking in synchronizations and read-backs",
		[CAUSE_LAUNCH_OVERHEAD] = "launching at a CUDA graph's cost",
		[CAUSE_CPU_BOUND] = "halving the CPU time between CUDA calls",
		[CAUSE_MEMCPY] = "pinned, asynchronous copies",
		[CAUSE_ALLOCATION] = "allocating once (a caching allocator)",
		[CAUSE_LOW_PARALLELISM] = "kernels that fill the SMs (a bound)",
	};
	const struct f_cause *c = &f->causes[f->primary];
	const char *how = fix[f->primary] ? fix[f->primary] : "fixing it";
	const struct f_cause *busy = NULL;
	char more[96] = "";
	int k;

	/* The busy time's class, when one is large, said beside it: no replay can size it. */
	for (k = CAUSE_MEMORY_BANDWIDTH; k <= CAUSE_LATENCY_BOUND; k++)
		if (f->causes[k].status == CS_MEASURED && f->causes[k].share_pct >= PRIMARY_MIN_PCT &&
		    (!busy || f->causes[k].share_pct > busy->share_pct))
			busy = &f->causes[k];
	if (busy)
		snprintf(more, sizeof(more), "; %s %.1f%% of the time",
			 busy == &f->causes[CAUSE_MEMORY_BANDWIDTH] ? "bandwidth-bound" :
			 busy == &f->causes[CAUSE_COMPUTE_BOUND]    ? "compute-bound" :
								      "latency-bound",
			 busy->share_pct);
	if (f->replay.steps)
		snprintf(tail, size, "fix first %s: %s saves ~%.1f%% of a step (replay of %llu "
			 "steps)%s",
			 cause_name(f->primary), how, c->saving_pct,
			 (unsigned long long)f->replay.steps, more);
	else
		snprintf(tail, size, "fix first %s: %s saves ~%.1f%% of the time (replay)%s",
			 cause_name(f->primary), how, c->saving_pct, more);
}

static void summarize(struct findings *f)
{
	const struct counters *c = &f->ctr;
	/* The seed's complaint: memory full while the SMs compute little. */
	int is_idle = c->has ? !(c->mean[TRACE_PM_SM_THROUGHPUT] >= PM_SM_LOW_PCT) :
			       f->busy_pct >= 0 && f->busy_pct < 50;
	const char *mem = f->is_memory_full < 0 ? "memory use unknown" :
			  f->is_memory_full	  ? "memory full" :
						    "memory not full";
	const char *idle = f->is_memory_full > 0 && is_idle ? ", compute idle" : "";
	char busy[160], tail[240];

	if (f->busy_pct >= 0 && c->has)
		snprintf(busy, sizeof(busy),
			 "GPU busy %.1f%%, SM active %.1f%%, DRAM %.1f%% of peak, SMs filled %.1f%%",
			 f->busy_pct, c->mean[TRACE_PM_SM_ACTIVE], c->mean[TRACE_PM_DRAM],
			 f->fill_pct);
	else if (f->busy_pct >= 0)
		snprintf(busy, sizeof(busy), "GPU busy %.1f%%, SMs filled %.1f%%", f->busy_pct,
			 f->fill_pct);
	else
		snprintf(busy, sizeof(busy), "GPU activity unknown (no GPU timestamps)");
	if (f->memory_pct >= 0)
		snprintf(f->summary, sizeof(f->summary), "%s (%.1f%% peak)%s, %s: ", mem,
			 f->memory_pct, idle, busy);
	else
		snprintf(f->summary, sizeof(f->summary), "%s%s, %s: ", mem, idle, busy);
	if (!f->has_gpu) {
		snprintf(tail, sizeof(tail), "the trace has no GPU timestamps, so idle time cannot "
					     "be attributed (run with CUPTI available)");
	} else if (f->primary < 0 && f->replay.done && f->nr_ranked &&
		   f->causes[f->ranked[0]].has_saving && idle_share_max(f) >= PRIMARY_MIN_PCT) {
		snprintf(tail, sizeof(tail), "no single fix saves 5%% or more (replay): the most, "
			 "%s, saves %.1f%%",
			 cause_name(f->ranked[0]), f->causes[f->ranked[0]].saving_pct);
	} else if (f->primary < 0) {
		snprintf(tail, sizeof(tail), "no cause costs more than 5%% of the time; the GPU is "
					     "kept busy and its SMs filled");
	} else if (f->primary == CAUSE_MEMORY_BANDWIDTH) {
		const double *b = c->class_busy[PM_CLASS_BANDWIDTH];
		int unit = counters_top_unit(c, PM_CLASS_BANDWIDTH);

		if (f->device_copy_ns >= c->bw_ns)
			snprintf(tail, sizeof(tail),
				 "bandwidth-bound: copies within device memory and memsets (%llu) "
				 "take %.1f%% of the time%s",
				 (unsigned long long)f->nr_device_copies,
				 f->window_ns ? 100.0 * (double)f->device_copy_ns /
							(double)f->window_ns :
						0,
				 c->bw_ns ? ", kernels waiting on memory more" : "");
		else if (unit >= 0 && unit != TRACE_PM_DRAM)
			snprintf(tail, sizeof(tail),
				 "bandwidth-bound: %s at %.0f%% of peak while the SMs compute less "
				 "(SM throughput %.0f%%) for %.1f%% of the time",
				 pm_unit_text(unit), b[unit], b[TRACE_PM_SM_THROUGHPUT],
				 f->causes[f->primary].share_pct);
		else
			snprintf(tail, sizeof(tail),
				 "bandwidth-bound: DRAM at %.0f%% of peak while the SMs compute "
				 "little (SM throughput %.0f%%) for %.1f%% of the time",
				 b[TRACE_PM_DRAM], b[TRACE_PM_SM_THROUGHPUT],
				 f->causes[f->primary].share_pct);
	} else if (f->primary == CAUSE_COMPUTE_BOUND) {
		const double *b = c->class_busy[PM_CLASS_COMPUTE];
		int pipe = findings_compute_pipe(f);

		if (pipe < 0)
			snprintf(tail, sizeof(tail),
				 "compute-bound: the SMs compute near peak (SM throughput %.0f%%, "
				 "tensor %.0f%%) for %.1f%% of the time; which pipe is not recorded "
				 "(trace format %s)",
				 b[TRACE_PM_SM_THROUGHPUT], b[TRACE_PM_TENSOR],
				 f->causes[f->primary].share_pct,
				 c->has_pipes ? "1.7, no pipe stood out" : "before 1.7");
		else if (pm_pipe_is_good(pipe))
			snprintf(tail, sizeof(tail),
				 "compute-bound on the %s pipe (%.0f%% of its peak, SM throughput "
				 "%.0f%%) for %.1f%% of the time; the GPU is used well",
				 pm_unit_text(pipe), b[pipe], b[TRACE_PM_SM_THROUGHPUT],
				 f->causes[f->primary].share_pct);
		else if (pipe == TRACE_PM_ISSUE)
			snprintf(tail, sizeof(tail),
				 "compute-bound on CUDA-core arithmetic: instructions issued at "
				 "%.0f%% of peak over several pipes (ALU %.0f%%, FMA %.0f%%, XU "
				 "%.0f%%), tensor %.0f%%, for %.1f%% of the time: fuse, or move the "
				 "work to the tensor cores",
				 b[pipe], b[TRACE_PM_ALU], b[TRACE_PM_FMA], b[TRACE_PM_XU],
				 b[TRACE_PM_TENSOR], f->causes[f->primary].share_pct);
		else
			snprintf(tail, sizeof(tail),
				 "compute-bound on CUDA-core arithmetic: the %s pipe at %.0f%% of "
				 "its peak, tensor %.0f%% (SM throughput %.0f%%) for %.1f%% of the "
				 "time: fuse, or move the work to the tensor cores",
				 pm_unit_text(pipe), b[pipe], b[TRACE_PM_TENSOR],
				 b[TRACE_PM_SM_THROUGHPUT], f->causes[f->primary].share_pct);
	} else if (f->primary == CAUSE_LATENCY_BOUND) {
		const double *b = c->class_busy[PM_CLASS_LATENCY];
		int level = !isnan(b[TRACE_PM_L2]) && b[TRACE_PM_L2] > b[TRACE_PM_DRAM] ?
				    TRACE_PM_L2 :
				    TRACE_PM_DRAM;

		snprintf(tail, sizeof(tail),
			 "latency-bound: the SMs hold warps (SM active %.0f%%, warps %.0f%% of "
			 "their slots) but issue %.0f%% of peak, %s %.0f%%, for %.1f%% of the time: "
			 "the warps wait on dependencies",
			 b[TRACE_PM_SM_ACTIVE], b[TRACE_PM_WARPS], b[TRACE_PM_ISSUE],
			 pm_unit_text(level), b[level], f->causes[f->primary].share_pct);
	} else if (f->causes[f->primary].has_saving) {
		summarize_saving(f, tail, sizeof(tail));
	} else {
		snprintf(tail, sizeof(tail), "%s costs the most (%.1f%% of the time)",
			 cause_name(f->primary), f->causes[f->primary].share_pct);
	}
	strncat(f->summary, tail, sizeof(f->summary) - strlen(f->summary) - 1);
}

int gap_label(const struct f_gap *g)
{
	int k, best = GAP_NOISE;

	for (k = 0; k < NR_GAP_PARTS; k++)
		if (g->part[k] > g->part[best])
			best = k;
	return best;
}

const char *gap_part_name(int part)
{
	switch (part) {
	case GAP_NOISE:
		return "noise";
	case GAP_DEPENDENCY:
		return "dependency";
	case GAP_MODULE:
		return "module_load";
	default:
		return cause_name(part);
	}
}

void findings_free(struct findings *f)
{
	free(f->gaps);
	f->gaps = NULL;
	f->nr_gaps_kept = f->gaps_cap = 0;
}


static int cmp_gap(const void *x, const void *y)
{
	const struct f_gap *a = x, *b = y;

	/* .end holds the device's rank and the gap's place while sorting */
	return a->end < b->end ? -1 : a->end > b->end;
}

/* The gaps device by device (in order of their first operation), each in time order. */
static void sort_gaps(struct findings_acc *a)
{
	struct findings *f = a->f;
	uint64_t *end = xmalloc((f->nr_gaps_kept + 1) * sizeof(*end));
	size_t i, d;

	for (i = 0; i < f->nr_gaps_kept; i++) {
		end[i] = f->gaps[i].end;
		for (d = 0; d < a->nr_devs && a->devs[d].device != (uint32_t)f->gaps[i].device; d++)
			;
		f->gaps[i].end = (uint64_t)d << 48 | i;
	}
	xqsort(f->gaps, f->nr_gaps_kept, sizeof(*f->gaps), cmp_gap);
	for (i = 0; i < f->nr_gaps_kept; i++)
		f->gaps[i].end = end[f->gaps[i].end & ((1ull << 48) - 1)];
	free(end);
}

/*
 * The 95 % half-width, in points, of the ratio sum(t) / sum(w) over @n windows (@t: a cause's
 * time in each, @w: each window's time) as a share: the ratio estimator's standard error
 * across the windows, finite-population corrected by @covered (the share of the whole the
 * windows are), Student's t with n - 1 degrees of freedom. -1 below 3 windows.
 */
double findings_ratio_ci(const double *t, const double *w, size_t n, double covered)
{
	double st = 0, sw = 0, r, ss = 0, wbar, se;
	size_t i;

	if (n < 3)
		return -1;
	for (i = 0; i < n; i++) {
		st += t[i];
		sw += w[i];
	}
	if (sw <= 0)
		return -1;
	r = st / sw;
	wbar = sw / (double)n;
	for (i = 0; i < n; i++)
		ss += (t[i] - r * w[i]) * (t[i] - r * w[i]);
	se = sqrt(ss / ((double)n * (double)(n - 1))) / wbar;
	if (covered > 0 && covered < 1)
		se *= sqrt(1 - covered);
	return 100.0 * welch_t_quantile(0.975, (double)(n - 1)) * se;
}

/* A sampled run: the windows in the analysis window, and each gap cause's error. */
static void sampling_finish(struct findings_acc *a)
{
	struct findings *f = a->f;
	struct f_sampling *sp = &f->sampling;
	uint64_t lo = f->window_start > a->win_lo ? f->window_start : a->win_lo;
	uint64_t hi = f->window_end > a->last_work_call ? f->window_end : a->last_work_call;
	double *t, *w;
	size_t *at, i, n = 0;
	int k;

	if (hi > a->win_hi)
		hi = a->win_hi;
	if (hi <= lo)
		return;
	sp->span_ns = hi - lo;
	/* The windows meeting [lo, hi): their time in it (w), and which they are (at). */
	t = xcalloc(a->nr_wins, sizeof(*t));
	w = xcalloc(a->nr_wins, sizeof(*w));
	at = xcalloc(a->nr_wins, sizeof(*at));
	for (i = 0; i < a->nr_wins; i++) {
		uint64_t from = a->wins[i].from > lo ? a->wins[i].from : lo;
		uint64_t to = a->wins[i].to < hi ? a->wins[i].to : hi;

		if (to <= from)
			continue;
		sp->covered_ns += to - from;
		w[n] = (double)(to - from);
		at[n++] = i;
	}
	sp->nr_windows = n;
	sp->covered_pct = 100.0 * (double)sp->covered_ns / (double)sp->span_ns;
	for (k = 0; k < NR_CAUSES; k++) {
		f->causes[k].share_ci_pct = -1;
		f->causes[k].saving_ci_pct = -1;
		/* Causes made of idle gaps only (memcpy also has exposed copies: not per window). */
		if (k != CAUSE_HOST_SYNC && k != CAUSE_LAUNCH_OVERHEAD && k != CAUSE_CPU_BOUND &&
		    k != CAUSE_ALLOCATION)
			continue;
		for (i = 0; i < n; i++)
			t[i] = (double)a->win_ns[at[i]][k];
		f->causes[k].share_ci_pct = findings_ratio_ci(t, w, n, sp->covered_pct / 100.0);
	}
	free(t);
	free(w);
	free(at);
}

void findings_end(struct findings_acc *a, const struct stats *s)
{
	struct findings *f = a->f;
	const struct model *m = a->m;
	uint64_t win_start = UINT64_MAX, win_end = 0;
	struct first_launch *e, *tmp;
	struct launch_stack *ls, *ls_tmp;
	size_t i;
	int k;

	f->primary = -1;
	f->framework = findings_framework(m);
	f->is_memory_full = -1;
	f->memory_pct = s->mem.peak_pct;
	f->busy_pct = -1;
	f->fill_pct = -1;
	f->has_gpu = a->nr_devs > 0;

	for (i = 0; i < a->nr_devs; i++) {
		struct walk_device *ds = &a->devs[i];
		uint64_t busy;

		if (ds->first == UINT64_MAX)
			continue;
		/* The closed stretches' busy time, and the last one's. */
		busy = (ds->nr_st ? ds->st[ds->nr_st - 1].busy : 0) + (ds->cur_end - ds->cur_begin);
		f->work_ns += ds->work.total;
		f->exposed_copy_ns += busy - ds->work.total;
		f->window_ns += ds->cur_end - ds->first;
		if (ds->first < win_start)
			win_start = ds->first;
		if (ds->cur_end > win_end)
			win_end = ds->cur_end;
	}
	f->window_ns -= f->excluded_ns < f->window_ns ? f->excluded_ns : f->window_ns;
	if (f->has_gpu) {
		f->window_start = win_start;
		f->window_end = win_end;
		f->startup_ns = a->first_call < win_start ? win_start - a->first_call : 0;
		f->idle_ns = f->window_ns > f->work_ns + f->exposed_copy_ns ?
				     f->window_ns - f->work_ns - f->exposed_copy_ns :
				     0;
		f->causes[CAUSE_MEMCPY].time_ns += f->exposed_copy_ns;
		f->causes[CAUSE_LOW_PARALLELISM].time_ns = a->lp_lost;
		f->causes[CAUSE_LOW_PARALLELISM].value =
			a->lp_work ? 100.0 * (1 - (double)a->lp_lost / (double)a->lp_work) : -1;
		/* Concurrent kernels: never more lost than the time kernels ran. */
		if (a->lp_work > f->work_ns && a->lp_work)
			f->causes[CAUSE_LOW_PARALLELISM].time_ns =
				(uint64_t)((double)a->lp_lost * f->work_ns / a->lp_work);
		f->busy_pct = f->window_ns ? 100.0 * (f->work_ns + f->exposed_copy_ns) /
						     (double)f->window_ns :
					     0;
		f->fill_pct = f->window_ns ? 100.0 *
						     ((double)f->work_ns -
						      (double)f->causes[CAUSE_LOW_PARALLELISM].time_ns -
						      (double)a->comm_lost) /
						     (double)f->window_ns :
					     0;
		if (f->fill_pct < 0)
			f->fill_pct = 0;
		f->kernels_per_s = !f->window_ns ? 0 :
				   (double)(a->win_lo || a->win_hi != UINT64_MAX ?
						    a->win_kernels :
						    s->gpu.nr_kernels) *
					   1e9 / (double)f->window_ns;
		f->copy_bytes_per_s = f->window_ns ? (double)f->causes[CAUSE_MEMCPY].bytes * 1e9 /
							     f->window_ns :
						     0;
	}
	if (f->has_gpu && a->wins)
		sampling_finish(a);
	counters_end(a->ctr);	/* over the window the first look found: the same */
	if (f->nr_gaps_kept > 1)
		sort_gaps(a);
	for (k = 0; k < NR_CAUSES; k++)
		sites_finish(&f->causes[k], &a->sites[k]);
	for (i = 0; i < a->nr_devs; i++)
		free(a->devs[i].st);
	free(a->devs);
	stats_comm_memo_free(&a->comm);
	for (i = 0; i <= m->nr_threads; i++)
		free(a->threads[i].v);
	free(a->threads);
	free(a->func_seen);
	free(a->host_only);
	free(a->wins);
	free(a->win_ns);
	HASH_ITER(hh, a->firsts, e, tmp) {
		HASH_DEL(a->firsts, e);
		free(e);
	}
	HASH_ITER(hh, a->launch_stacks, ls, ls_tmp) {
		HASH_DEL(a->launch_stacks, ls);
		free(ls);
	}
	free(a->where_memo);
	free(a);

	/* Statuses and shares; the ranking covers measured causes. */
	for (k = 0; k < NR_CAUSES; k++) {
		struct f_cause *c = &f->causes[k];

		if (k == CAUSE_MEMORY_BANDWIDTH || k == CAUSE_COMPUTE_BOUND ||
		    k == CAUSE_LATENCY_BOUND) {
			if (k == CAUSE_MEMORY_BANDWIDTH && f->has_gpu) {
				/* Device copies and memsets count without counters too. */
				c->time_ns = f->ctr.bw_ns + f->device_copy_ns;
				c->count = f->ctr.bw_samples;
				c->value = f->ctr.bw_dram;
				if (!f->ctr.has && !f->device_copy_ns) {
					c->status = CS_UNKNOWN;
					continue;
				}
			} else if (!f->has_gpu || !f->ctr.has ||
				   (k == CAUSE_LATENCY_BOUND && !f->ctr.has_pipes)) {
				c->status = CS_UNKNOWN;
				continue;
			} else if (k == CAUSE_COMPUTE_BOUND) {
				c->time_ns = f->ctr.compute_ns;
				c->count = f->ctr.compute_samples;
				c->value = f->ctr.compute_sm;
			} else {
				c->time_ns = f->ctr.latency_ns;
				c->count = f->ctr.latency_samples;
				c->value = f->ctr.class_busy[PM_CLASS_LATENCY][TRACE_PM_SM_ACTIVE];
			}
		}
		if (k == CAUSE_MEMORY_CAPACITY)
			continue;
		if (!f->has_gpu) {
			c->status = CS_UNKNOWN;
			continue;
		}
		c->share_pct = f->window_ns ? 100.0 * (double)c->time_ns / (double)f->window_ns : 0;
		if (f->sampling.is_sampled)
			c->est_ns = (uint64_t)((double)f->sampling.span_ns * c->share_pct / 100.0);
		if (c->time_ns) {
			c->status = CS_MEASURED;
			f->ranked[f->nr_ranked++] = k;
		}
	}
	qsort_r(f->ranked, f->nr_ranked, sizeof(int), cmp_rank, f);
	if (f->nr_ranked && f->causes[f->ranked[0]].share_pct >= PRIMARY_MIN_PCT)
		f->primary = f->ranked[0];

	if (s->mem.peak_pct >= 0) {
		struct f_cause *c = &f->causes[CAUSE_MEMORY_CAPACITY];

		f->is_memory_full = s->mem.peak_pct >= MEMORY_FULL_PCT;
		c->bytes = s->mem.peak_bytes;
		c->value = s->mem.peak_pct;
		c->count = s->mem.nr_live_at_peak;
		if (f->is_memory_full)
			c->status = CS_SIGNAL;
	}
	summarize(f);
	summarize_left_out(f, s);
}

/* Replayed causes by saving, then the others by time. */
static int cmp_saving(const void *x, const void *y, void *ctx)
{
	const struct findings *f = ctx;
	const struct f_cause *a = &f->causes[*(const int *)x], *b = &f->causes[*(const int *)y];

	if (a->has_saving != b->has_saving)
		return a->has_saving ? -1 : 1;
	if (a->has_saving && a->saving_pct != b->saving_pct)
		return a->saving_pct > b->saving_pct ? -1 : 1;
	return cmp_rank(x, y, ctx);
}

void findings_rank_by_saving(struct findings *f, const struct stats *s)
{
	int k, r;

	if (!f->replay.done)
		return;
	/* A cause whose fix saves time is ranked, idle time of its own or not. */
	for (k = 0; k < NR_CAUSES; k++) {
		struct f_cause *c = &f->causes[k];

		if (c->has_saving && c->saving_pct >= RANK_MIN_SAVING_PCT &&
		    c->status != CS_MEASURED) {
			c->status = CS_MEASURED;
			c->time_ns = 0;
			c->share_pct = 0;
			f->ranked[f->nr_ranked++] = k;
		}
	}
	qsort_r(f->ranked, f->nr_ranked, sizeof(int), cmp_saving, f);
	f->primary = -1;
	for (r = 0; r < f->nr_ranked && f->primary < 0; r++) {
		const struct f_cause *c = &f->causes[f->ranked[r]];

		if (c->has_saving ? c->saving_pct >= PRIMARY_MIN_SAVING_PCT :
				    c->share_pct >= PRIMARY_MIN_PCT)
			f->primary = f->ranked[r];
	}
	summarize(f);
	summarize_left_out(f, s);
}
