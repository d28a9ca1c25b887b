// SPDX-License-Identifier: MIT
/*
 * test_findings.c - the attribution rules on hand-built timelines with known answers: a gap
 * the host spent blocked in a synchronization is host_sync; host work outside CUDA is
 * cpu_bound and the launch call plus launch latency is launch_overhead; sub-5 us gaps are
 * launch overhead when the GPU waited for the launch, noise when the work was queued; exposed
 * copies are memcpy; unfilled SMs are low_parallelism; a full memory is a signal, not time;
 * what precedes the first kernel is start-up, outside the window; hardware counter samples
 * split busy time into bandwidth-bound and compute-bound, and without them both are unknown;
 * a stretch where the application's profiler held CUPTI is left out of the window, the busy
 * share and the counters' coverage (never above 100 %), and the verdict says so.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyze.h"
#include "check.h"
#include "analysis/findings.h"
#include "analysis/savings.h"
#include "util/util.h"

static char *strings[] = { NULL, "k_big", "k_small" };
static struct m_api apis[] = {
	{ NULL, 0, 0 },
	{ "cuLaunchKernel", TRACE_FAM_LAUNCH, TRACE_API_ASYNC },
	{ "cuStreamSynchronize", TRACE_FAM_SYNC, 0 },
	{ "cuMemcpyHtoD_v2", TRACE_FAM_COPY, 0 },
	{ "cuMemAlloc_v2", TRACE_FAM_MEMORY, 0 },
};
static struct m_thread threads[] = { { 100, 0 } };
static struct trace_rec_device device;
static struct m_occupancy occ[1];

static void base(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->strings = strings;
	m->nr_strings = 3;
	m->apis = apis;
	m->nr_apis = 5;
	m->threads = threads;
	m->nr_threads = 1;
	memset(&device, 0, sizeof(device));
	device.sm_count = 4;
	device.max_threads_per_sm = 2048;
	device.max_blocks_per_sm = 32;
	device.total_bytes = 1000;
	m->devices = &device;
	m->nr_devices = 1;
	occ[0].name = 2;
	occ[0].block_threads = 256;
	occ[0].max_blocks_per_sm = 8;	/* 32 blocks fill the 4 SMs */
	m->occ = occ;
	m->nr_occ = 1;
	m->has_cupti = 1;
}

static int64_t call(struct model *m, uint8_t kind, uint16_t api, uint64_t t0, uint64_t t1)
{
	struct m_call *c;

	XGROW(m->calls, m->calls_cap, m->nr_calls + 1);
	c = &m->calls[m->nr_calls];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->api = api;
	c->t0 = t0;
	c->t1 = t1;
	c->device = 0;
	if (kind == MC_SYNC)
		c->sub = TRACE_SYNC_STREAM;
	if (kind == MC_COPY)
		c->sub = TRACE_COPY_H2D;
	if (kind == MC_LAUNCH)
		c->launch = model_launch_shape_add(m, &(struct m_launch_shape){ 0 });
	if (kind == MC_MEM || kind == MC_COPY || kind == MC_SET)
		model_call_args_new(m, c);
	return (int64_t)m->nr_calls++;
}

/* Give @g the shape @sh (its kind and device the operation's). */
static void gpu_shape(struct model *m, struct m_gpu_op *g, struct m_gpu_shape sh)
{
	sh.kind = model_gpu_shape(m, g)->kind;
	sh.device = model_gpu_shape(m, g)->device;
	g->shape = model_gpu_shape_add(m, &sh);
}

static struct m_gpu_op *op(struct model *m, uint8_t kind, uint64_t start, uint64_t end,
			   int64_t from)
{
	struct m_gpu_op *g;

	XGROW(m->gpu, m->gpu_cap, m->nr_gpu + 1);
	g = &m->gpu[m->nr_gpu++];
	memset(g, 0, sizeof(*g));
	g->shape = model_gpu_shape_add(m, &(struct m_gpu_shape){ .kind = kind });	/* device 0 */
	g->start = start;
	g->end = end;
	g->call = from;
	/* far more blocks than fill the GPU */
	gpu_shape(m, g, (struct m_gpu_shape){ .name = 1, .blocks = 1000, .block_threads = 256 });
	return g;
}

static void run(struct model *m, struct stats *s, struct findings *f)
{
	stats_compute(s, m);
	findings_compute(f, m, s);
}

static void done(struct model *m, struct stats *s)
{
	stats_free(s);
	free(m->calls);
	free(m->call_args);
	free(m->gpu);
	free(m->gpu_shapes);
	free(m->gpu_shape_slots);
	free(m->launch_shapes);
	free(m->launch_shape_slots);
}

#define US 1000ull

static void test_host_sync(void)
{
	struct model m;
	struct stats s;
	struct findings f;

	base(&m);
	op(&m, MG_KERNEL, 0, 100 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	call(&m, MC_SYNC, 2, 50 * US, 130 * US);	/* blocked when the kernel ended */
	op(&m, MG_KERNEL, 150 * US, 250 * US, call(&m, MC_LAUNCH, 1, 135 * US, 140 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.window_ns, 250 * US);
	CHECK_EQ(f.idle_ns, 50 * US);
	CHECK_EQ(f.causes[CAUSE_HOST_SYNC].time_ns, 50 * US);
	CHECK_EQ(f.causes[CAUSE_HOST_SYNC].count, 1);
	CHECK_STR(f.causes[CAUSE_HOST_SYNC].sites[0].what, "cuStreamSynchronize");
	CHECK_STR(f.causes[CAUSE_HOST_SYNC].sites[0].after, "k_big");
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 0);
	CHECK_EQ(f.primary, CAUSE_HOST_SYNC);
	CHECK_EQ((long long)(f.busy_pct * 10), 800);
	done(&m, &s);

	/* A 10 us step, a sync from 3 us on, then 1 ms of host work: the sync owns what the work
	 * that ran during the wait could have hidden (7 us), the rest is the host's own. */
	base(&m);
	op(&m, MG_KERNEL, 0, 10 * US, call(&m, MC_LAUNCH, 1, 0, 2 * US));
	call(&m, MC_SYNC, 2, 3 * US, 12 * US);
	op(&m, MG_KERNEL, 1010 * US, 1020 * US, call(&m, MC_LAUNCH, 1, 1000 * US, 1005 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.causes[CAUSE_HOST_SYNC].time_ns, 7 * US);
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 983 * US);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 10 * US);
	CHECK_EQ(f.primary, CAUSE_CPU_BOUND);
	done(&m, &s);

	/* A blocking read-back (.item()): 400 us of kernels, then the copy the host waits for
	 * runs 8 us later; 100 us of host work follows. The wait spans both busy stretches, so
	 * the 100 us after the copy are the sync's, not the host's. */
	base(&m);
	op(&m, MG_KERNEL, 0, 400 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	{
		int64_t c = call(&m, MC_COPY, 3, 10 * US, 412 * US);

		m.calls[c].sub = TRACE_COPY_D2H;
		op(&m, MG_MEMCPY, 408 * US, 410 * US, c);
	}
	op(&m, MG_KERNEL, 520 * US, 920 * US, call(&m, MC_LAUNCH, 1, 512 * US, 515 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.causes[CAUSE_HOST_SYNC].time_ns, 8 * US + 110 * US);
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 0);
	CHECK_EQ(f.primary, CAUSE_HOST_SYNC);
	done(&m, &s);

	/* A sync on a GPU that was already idle drained nothing: the gap is the host's, but for
	 * the microsecond spent in the call itself. */
	base(&m);
	op(&m, MG_KERNEL, 0, 10 * US, call(&m, MC_LAUNCH, 1, 0, 2 * US));
	call(&m, MC_SYNC, 2, 20 * US, 21 * US);
	op(&m, MG_KERNEL, 110 * US, 120 * US, call(&m, MC_LAUNCH, 1, 100 * US, 105 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.causes[CAUSE_HOST_SYNC].time_ns, 1 * US);
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 89 * US);
	done(&m, &s);
}

/*
 * A long run of kernels with gaps between them, then a sync whose wait reaches 5,000 kernels
 * (5 ms of work) back and returns 1 ms after the GPU ran dry; 7 ms of host work follow. The
 * stretches findings keeps for such waits are trimmed as they pile up (those ending before the
 * longest call could reach), and the sync still owns what the 5 ms could have hidden, the
 * host the 3 ms beyond: a memory too short, or a wrong sum, would move that line. The
 * launches were all queued first: the 1 us gaps are the GPU's own.
 */
static void test_long_wait(void)
{
	const uint64_t k0 = 2000 * US, n = 20000, last_end = k0 + n * 2 * US;
	const uint64_t w0 = k0 + 15000 * 2 * US, w1 = last_end + 1000 * US;
	const uint64_t l0 = last_end + 8000 * US;
	struct model m;
	struct stats s;
	struct findings f;
	uint64_t i;

	base(&m);
	for (i = 0; i < n; i++)
		op(&m, MG_KERNEL, k0 + i * 2 * US + US, k0 + i * 2 * US + 2 * US,
		   call(&m, MC_LAUNCH, 1, i * 100, i * 100 + 50));
	call(&m, MC_SYNC, 2, w0, w1);
	op(&m, MG_KERNEL, l0 + US, l0 + 2 * US, call(&m, MC_LAUNCH, 1, l0 + 100, l0 + 400));
	run(&m, &s, &f);
	CHECK_EQ(f.causes[CAUSE_HOST_SYNC].time_ns, 5000 * US);
	CHECK_EQ(f.causes[CAUSE_HOST_SYNC].count, 1);
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 3000 * US + 100);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 900);
	CHECK_EQ(f.work_ns, (n + 1) * US);
	CHECK_EQ(f.exposed_copy_ns, 0);
	CHECK_EQ(f.idle_ns, f.window_ns - f.work_ns);
	done(&m, &s);
}

static void test_cpu_bound(void)
{
	struct model m;
	struct stats s;
	struct findings f;

	base(&m);
	op(&m, MG_KERNEL, 0, 100 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	/* 195 us of host work, a 5 us launch call, 5 us until the kernel starts. */
	op(&m, MG_KERNEL, 310 * US, 410 * US, call(&m, MC_LAUNCH, 1, 300 * US, 305 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 200 * US);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 10 * US);
	CHECK_STR(f.causes[CAUSE_CPU_BOUND].sites[0].what, "cuLaunchKernel");
	CHECK_EQ(f.primary, CAUSE_CPU_BOUND);
	CHECK_EQ(f.nr_ranked, 2);
	CHECK_EQ(f.ranked[0], CAUSE_CPU_BOUND);
	done(&m, &s);
}

/* A launch stalled by the shim's own counter set-up: that part is warm-up, not the program's. */
static void test_profiler_setup_stall(void)
{
	struct model m;
	struct stats s;
	struct findings f;

	base(&m);
	op(&m, MG_KERNEL, 0, 100 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	/* The next launch call lasts 200 us, 150 us of them inside the set-up's notes. */
	op(&m, MG_KERNEL, 305 * US, 405 * US, call(&m, MC_LAUNCH, 1, 100 * US, 300 * US));
	m.pm_setup_start = 120 * US;
	m.pm_setup_end = 270 * US;
	run(&m, &s, &f);
	CHECK_EQ(f.profiler_setup_ns, 150 * US);
	CHECK_EQ(f.module_load_ns, 0);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 55 * US);	/* 50 in the call + 5 latency */
	done(&m, &s);

	/* Without the notes the whole call is launch overhead. */
	base(&m);
	op(&m, MG_KERNEL, 0, 100 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	op(&m, MG_KERNEL, 305 * US, 405 * US, call(&m, MC_LAUNCH, 1, 100 * US, 300 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.profiler_setup_ns, 0);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 205 * US);
	done(&m, &s);
}

static int64_t launch(struct model *m, uint32_t func, uint64_t t0, uint64_t t1)
{
	int64_t i = call(m, MC_LAUNCH, 1, t0, t1);

	m->calls[i].launch = model_launch_shape_add(m, &(struct m_launch_shape){ .func = func });
	return i;
}

/*
 * Lazy loading: the first launch of a kernel loads its module inside the call. What that call
 * took beyond the trace's median launch (here 5 us, read as its 256-ns bucket's middle, 4992 ns)
 * is one-time loading when it is at least 100 us; later slow launches of the same kernel, and
 * a first launch only 85 us slower than the median, are launch overhead.
 */
static void test_lazy_load(void)
{
	struct model m;
	struct stats s;
	struct findings f;

	base(&m);
	op(&m, MG_KERNEL, 0, 100 * US, launch(&m, 1, 0, 5 * US));
	op(&m, MG_KERNEL, 2105 * US, 2205 * US, launch(&m, 2, 100 * US, 2100 * US));
	op(&m, MG_KERNEL, 2205 * US, 2305 * US, launch(&m, 2, 2105 * US, 2110 * US));
	op(&m, MG_KERNEL, 2305 * US, 2405 * US, launch(&m, 1, 2110 * US, 2115 * US));
	op(&m, MG_KERNEL, 2405 * US, 2505 * US, launch(&m, 1, 2115 * US, 2120 * US));
	/* Kernel 2 again, as slow as its first launch: not loading any more. */
	op(&m, MG_KERNEL, 4605 * US, 4705 * US, launch(&m, 2, 2600 * US, 4600 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.module_load_ns, 2000 * US - 4992);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 4992 + 5 * US + 2005 * US);
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 95 * US);
	done(&m, &s);

	/* A first launch 90 us long against a 5 us median: under 100 us more, launch overhead. */
	base(&m);
	op(&m, MG_KERNEL, 0, 100 * US, launch(&m, 1, 0, 5 * US));
	op(&m, MG_KERNEL, 195 * US, 295 * US, launch(&m, 2, 100 * US, 190 * US));
	op(&m, MG_KERNEL, 295 * US, 395 * US, launch(&m, 1, 190 * US, 195 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.module_load_ns, 0);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 95 * US);
	done(&m, &s);
}

static void test_small_gaps(void)
{
	struct model m;
	struct stats s;
	struct findings f;
	uint64_t t;

	base(&m);
	/* 1 us kernels launched every 5 us: the GPU waits for each launch call. */
	for (t = 0; t < 100 * US; t += 5 * US)
		op(&m, MG_KERNEL, t + 4 * US, t + 5 * US, call(&m, MC_LAUNCH, 1, t, t + 3 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 19 * 4 * US);
	CHECK_EQ(f.noise_ns, 0);
	CHECK_EQ(f.primary, CAUSE_LAUNCH_OVERHEAD);
	done(&m, &s);

	/* Work queued before the GPU ran dry: a 2 us gap is noise, a 20 us gap a dependency. */
	base(&m);
	op(&m, MG_KERNEL, 0, 10 * US, call(&m, MC_LAUNCH, 1, 0, 1 * US));
	op(&m, MG_KERNEL, 12 * US, 13 * US, call(&m, MC_LAUNCH, 1, 2 * US, 3 * US));
	op(&m, MG_KERNEL, 33 * US, 34 * US, call(&m, MC_LAUNCH, 1, 4 * US, 5 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.noise_ns, 2 * US);
	CHECK_EQ(f.dependency_ns, 20 * US);
	CHECK_EQ(f.nr_ranked, 0);
	done(&m, &s);
}

static void test_memcpy_and_alloc(void)
{
	struct model m;
	struct stats s;
	struct findings f;
	struct m_gpu_op *g;

	base(&m);
	op(&m, MG_KERNEL, 0, 10 * US, call(&m, MC_LAUNCH, 1, 0, 2 * US));
	g = op(&m, MG_MEMCPY, 10 * US, 110 * US, call(&m, MC_COPY, 3, 5 * US, 120 * US));
	gpu_shape(&m, g, (struct m_gpu_shape){ .bytes = 1 << 20, .src_kind = TRACE_GPU_MEM_PAGEABLE,
					       .copy_kind = TRACE_GPU_COPY_HTOD });
	/* Host in a blocking copy, then an allocation, then the launch. */
	call(&m, MC_MEM, 4, 120 * US, 160 * US);
	op(&m, MG_KERNEL, 170 * US, 210 * US, call(&m, MC_LAUNCH, 1, 160 * US, 165 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.exposed_copy_ns, 100 * US);
	/* 100 us exposed copy + 10 us of the gap inside the copy call. */
	CHECK_EQ(f.causes[CAUSE_MEMCPY].time_ns, 110 * US);
	CHECK_EQ(f.causes[CAUSE_MEMCPY].pageable_bytes, 1 << 20);
	CHECK_EQ(f.causes[CAUSE_ALLOCATION].time_ns, 40 * US);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 10 * US);
	CHECK_EQ(f.primary, CAUSE_MEMCPY);
	done(&m, &s);
}

/*
 * A device-to-device copy (a materialized tensor: clone, contiguous) is GPU work, not a
 * transfer: kernel 0..10 us, the copy 10..110 us, a kernel 110..120 us, all queued ahead.
 */
static void test_device_copy(void)
{
	struct model m;
	struct stats s;
	struct findings f;
	struct m_gpu_op *g;

	base(&m);
	op(&m, MG_KERNEL, 0, 10 * US, call(&m, MC_LAUNCH, 1, 0, 2 * US));
	g = op(&m, MG_MEMCPY, 10 * US, 110 * US, call(&m, MC_COPY, 3, 3 * US, 5 * US));
	gpu_shape(&m, g, (struct m_gpu_shape){ .bytes = 1 << 30, .src_kind = 3, .dst_kind = 3,
					       .copy_kind = TRACE_GPU_COPY_DTOD });
	op(&m, MG_KERNEL, 110 * US, 120 * US, call(&m, MC_LAUNCH, 1, 6 * US, 8 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.exposed_copy_ns, 0);
	CHECK_EQ(f.work_ns, 120 * US);
	CHECK_EQ(f.causes[CAUSE_MEMCPY].time_ns, 0);
	CHECK_EQ(f.causes[CAUSE_MEMCPY].bytes, 0);
	CHECK(f.busy_pct > 99.9);
	done(&m, &s);
}

/*
 * The report's replay without steps starts at the GPU window, not at the run's start: 70,000
 * calls of start-up (more than the replay's budget of calls) before 100 iterations of a 200 us
 * kernel and a stream synchronization that waits for it, 300 us of host work after each. Not
 * blocking there saves the most, and the verdict says so.
 */
static void test_savings_after_startup(void)
{
	struct model m;
	struct stats s;
	struct findings f;
	uint64_t t = 0;
	int i;

	base(&m);
	for (i = 0; i < 70000; i++, t += 200)
		call(&m, MC_OTHER, 0, t, t + 100);
	t += 10 * US;
	for (i = 0; i < 100; i++) {
		uint64_t g = t + 5 * US;

		op(&m, MG_KERNEL, g, g + 200 * US, call(&m, MC_LAUNCH, 1, t, t + US));
		call(&m, MC_SYNC, 2, t + 2 * US, g + 210 * US);
		t = g + 210 * US + 300 * US;
	}
	analyze_model(&m, &s, &f, NULL, 0);
	CHECK(f.replay.done);
	CHECK(f.replay.start >= m.gpu[0].start);
	CHECK(f.causes[CAUSE_HOST_SYNC].has_saving && f.causes[CAUSE_HOST_SYNC].saving_pct > 30);
	CHECK_EQ(f.primary, CAUSE_HOST_SYNC);
	findings_free(&f);
	done(&m, &s);
}

/* Weights uploaded, then a second of setup before the first kernel: start-up, not idle time. */
static void test_startup(void)
{
	struct model m;
	struct stats s;
	struct findings f;
	struct m_gpu_op *g;

	base(&m);
	g = op(&m, MG_MEMCPY, 0, 100 * US, call(&m, MC_COPY, 3, 0, 110 * US));
	gpu_shape(&m, g, (struct m_gpu_shape){ .bytes = 1 << 20, .copy_kind = TRACE_GPU_COPY_HTOD });
	op(&m, MG_KERNEL, 1000000 * US, 1000100 * US,
	   call(&m, MC_LAUNCH, 1, 999990 * US, 999995 * US));
	op(&m, MG_KERNEL, 1000100 * US, 1000200 * US,
	   call(&m, MC_LAUNCH, 1, 999996 * US, 999999 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.window_start, 1000000 * US);
	CHECK_EQ(f.window_ns, 200 * US);
	CHECK_EQ(f.startup_ns, 1000000 * US);
	CHECK_EQ(f.idle_ns, 0);
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 0);
	CHECK_EQ(f.primary, -1);
	/* The copy still counts as the copy it was. */
	CHECK_EQ(f.causes[CAUSE_MEMCPY].bytes, 1 << 20);
	done(&m, &s);
}

static void test_low_parallelism_and_memory(void)
{
	struct model m;
	struct stats s;
	struct findings f;
	struct m_call *c;
	struct m_gpu_op *g;
	int64_t i;

	base(&m);
	i = call(&m, MC_MEM, 4, 0, 1);
	c = &m.calls[i];
	c->sub = TRACE_MEM_DEVICE;
	c->op = TRACE_MEM_ALLOC;
	m.call_args[c->args] = (struct m_call_args){ .bytes = 950, .addr = 0x1000 };	/* 95 % */
	/* 8 blocks where 32 fill the GPU: a quarter of the SMs for 100 us. */
	g = op(&m, MG_KERNEL, 10 * US, 110 * US, call(&m, MC_LAUNCH, 1, 2, 3));
	gpu_shape(&m, g, (struct m_gpu_shape){ .name = 2, .blocks = 8, .block_threads = 256 });
	run(&m, &s, &f);
	CHECK_EQ(f.causes[CAUSE_LOW_PARALLELISM].time_ns, 75 * US);
	CHECK_EQ((long long)f.causes[CAUSE_LOW_PARALLELISM].value, 25);
	CHECK_EQ(f.primary, CAUSE_LOW_PARALLELISM);
	CHECK_EQ((long long)f.fill_pct, 25);
	CHECK_EQ(f.is_memory_full, 1);
	CHECK_EQ(f.causes[CAUSE_MEMORY_CAPACITY].status, CS_SIGNAL);
	CHECK_EQ(f.causes[CAUSE_MEMORY_CAPACITY].time_ns, 0);
	CHECK_EQ(f.causes[CAUSE_COMPUTE_BOUND].status, CS_UNKNOWN);
	CHECK_EQ(f.startup_ns, 10 * US);
	done(&m, &s);
}

static void test_healthy_and_host_only(void)
{
	struct model m;
	struct stats s;
	struct findings f;

	base(&m);
	op(&m, MG_KERNEL, 0, 1000 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	op(&m, MG_KERNEL, 1001 * US, 2000 * US, call(&m, MC_LAUNCH, 1, 6 * US, 10 * US));
	run(&m, &s, &f);
	CHECK_EQ(f.primary, -1);
	CHECK_EQ(f.noise_ns, 1 * US);
	CHECK(strstr(f.summary, "no cause") != NULL);
	done(&m, &s);

	base(&m);
	m.has_cupti = 0;
	call(&m, MC_LAUNCH, 1, 0, 5 * US);
	run(&m, &s, &f);
	CHECK(!f.has_gpu);
	CHECK_EQ(f.primary, -1);
	CHECK_EQ(f.causes[CAUSE_HOST_SYNC].status, CS_UNKNOWN);
	done(&m, &s);
}

static void pm_sample(struct model *m, uint64_t start, uint64_t end, float sm_active, float dram,
		      float sm_tp, float tensor)
{
	struct m_pm_sample *p;
	int k;

	XGROW(m->pm, m->pm_cap, m->nr_pm + 1);
	p = &m->pm[m->nr_pm++];
	memset(p, 0, sizeof(*p));
	p->start = start;
	p->end = end;
	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		p->value[k] = NAN;
	p->value[TRACE_PM_SM_ACTIVE] = sm_active;
	p->value[TRACE_PM_DRAM] = dram;
	p->value[TRACE_PM_SM_THROUGHPUT] = sm_tp;
	p->value[TRACE_PM_TENSOR] = tensor;
	if (end - start > m->pm_max_len)
		m->pm_max_len = end - start;
}

static int cmp_pm_start(const void *a, const void *b)
{
	const struct m_pm_sample *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Counters: 12 ms of a streaming kernel under bandwidth-bound samples (DRAM 80 %, SM
 * throughput 10 %), then 7.5 ms of a maths kernel under compute-bound samples; 1 ms samples,
 * the one at 12-13 ms half idle. Means are time-weighted; each cause is busy time inside its
 * samples; each kernel gets the samples over the time it ran.
 */
static void test_counters(void)
{
	static struct trace_rec_pm_config cfg;
	struct model m;
	struct stats s;
	struct findings f;
	struct m_gpu_op *g;
	uint64_t t;
	size_t i;

	base(&m);
	memset(&cfg, 0, sizeof(cfg));
	cfg.interval_ns = 1000 * US;
	m.pm_configs = &cfg;
	m.nr_pm_configs = 1;
	op(&m, MG_KERNEL, 0, 12000 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	g = op(&m, MG_KERNEL, 12500 * US, 20000 * US, call(&m, MC_LAUNCH, 1, 6 * US, 10 * US));
	gpu_shape(&m, g, (struct m_gpu_shape){ .name = 2, .blocks = 1000, .block_threads = 256 });
	for (t = 0; t < 20000 * US; t += 1000 * US) {
		if (t < 12000 * US)
			pm_sample(&m, t, t + 1000 * US, 90, 80, 10, 0);
		else
			pm_sample(&m, t, t + 1000 * US, 99, 5, 95, 20);
	}
	run(&m, &s, &f);
	CHECK(f.ctr.has);
	CHECK_EQ(f.ctr.nr_samples, 20);
	CHECK_EQ(f.causes[CAUSE_MEMORY_BANDWIDTH].status, CS_MEASURED);
	CHECK_EQ(f.causes[CAUSE_MEMORY_BANDWIDTH].time_ns, 12000 * US);
	CHECK_EQ(f.causes[CAUSE_MEMORY_BANDWIDTH].count, 12);
	CHECK_EQ(f.causes[CAUSE_COMPUTE_BOUND].status, CS_MEASURED);
	CHECK_EQ(f.causes[CAUSE_COMPUTE_BOUND].time_ns, 7500 * US);
	CHECK_EQ(f.primary, CAUSE_MEMORY_BANDWIDTH);
	CHECK(!strcmp(cause_name(f.primary), "memory_bandwidth"));
	CHECK(!strcmp(cause_name(CAUSE_COMPUTE_BOUND), "compute_bound"));
	CHECK(strstr(f.summary, "bandwidth-bound: DRAM at 80% of peak") != NULL);
	CHECK(fabs(f.ctr.mean[TRACE_PM_DRAM] - (12 * 80 + 8 * 5) / 20.0) < 1e-9);
	CHECK(isnan(f.ctr.mean[TRACE_PM_GR_ACTIVE]));
	for (i = 0; i < s.nr_kernels; i++) {
		if (s.kernels[i].name_id == 1) {
			CHECK(fabs(s.kernels[i].pm[TRACE_PM_DRAM] - 80) < 1e-9);
		} else if (s.kernels[i].name_id == 2) {
			CHECK(fabs(s.kernels[i].pm[TRACE_PM_SM_THROUGHPUT] - 95) < 1e-9);
			CHECK(fabs(s.kernels[i].pm[TRACE_PM_DRAM] - 5) < 1e-9);
		}
	}
	done(&m, &s);
	free(m.pm);

	/* The same timeline without samples: both causes unknown, and the reason said. */
	base(&m);
	op(&m, MG_KERNEL, 0, 12000 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	run(&m, &s, &f);
	CHECK(!f.ctr.has);
	CHECK_EQ(f.causes[CAUSE_MEMORY_BANDWIDTH].status, CS_UNKNOWN);
	CHECK_EQ(f.causes[CAUSE_COMPUTE_BOUND].status, CS_UNKNOWN);
	CHECK(f.ctr.absent && strstr(f.ctr.absent, "sampling was not set up") != NULL);
	for (i = 0; i < s.nr_kernels; i++)
		CHECK(isnan(s.kernels[i].pm[TRACE_PM_DRAM]));
	done(&m, &s);
}

static void note(struct model *m, uint64_t ts, uint32_t kind)
{
	XGROW(m->notes, m->notes_cap, m->nr_notes + 1);
	m->notes[m->nr_notes++] = (struct m_note){ .ts = ts, .kind = kind };
}

/*
 * torch.profiler takes CUPTI at 300 us and gives it back at 800 us; the application launches
 * three kernels meanwhile, which have no GPU record. Kernels 0-100 and 150-250 us before it
 * (the host outside CUDA in between), 900-1000 us after. The gap 250-900 us meets the stretch:
 * the GPU ran work the trace cannot see, so the window is 1000 - 650 = 350 us, of which 300
 * busy. Counter samples of 100 us tile the run; those meeting the stretch are in the
 * profiler's clock, and one of them (start 0, as CUPTI gave one on the H200) spans everything:
 * summed, the samples covered 200 % of the window; left out and as a union, exactly 100 %.
 */
static void test_host_only_stretch(void)
{
	static struct trace_rec_pm_config cfg;
	struct model m;
	struct stats s;
	struct findings f;
	uint64_t t;

	base(&m);
	memset(&cfg, 0, sizeof(cfg));
	cfg.interval_ns = 100 * US;
	m.pm_configs = &cfg;
	m.nr_pm_configs = 1;
	note(&m, 0, TRACE_NOTE_CUPTI_ON);
	note(&m, 800 * US, TRACE_NOTE_CUPTI_ON);
	note(&m, 300 * US, TRACE_NOTE_CUPTI_OFF);	/* noted after handing over: out of order */
	op(&m, MG_KERNEL, 0, 100 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	op(&m, MG_KERNEL, 150 * US, 250 * US, call(&m, MC_LAUNCH, 1, 110 * US, 115 * US));
	for (t = 400; t <= 600; t += 100)
		call(&m, MC_LAUNCH, 1, t * US, t * US + 5 * US);
	op(&m, MG_KERNEL, 900 * US, 1000 * US, call(&m, MC_LAUNCH, 1, 850 * US, 855 * US));
	pm_sample(&m, 0, 1000 * US, 99, 99, 99, 0);	/* the profiler's clock */
	for (t = 0; t < 1000; t += 100)
		pm_sample(&m, t * US, (t + 100) * US, 50, 10, 10, 0);
	qsort(m.pm, m.nr_pm, sizeof(*m.pm), cmp_pm_start);
	run(&m, &s, &f);
	CHECK_EQ(s.gpu.nr_host_only, 1);
	CHECK_EQ(s.gpu.host_only_ns, 500 * US);
	CHECK_EQ(s.gpu.host_only_launches, 3);
	CHECK_EQ(s.counts.launches, 6);
	CHECK_EQ(f.excluded_ns, 650 * US);
	CHECK_EQ(f.nr_excluded_gaps, 1);
	CHECK_EQ(f.window_ns, 350 * US);
	CHECK_EQ(f.work_ns, 300 * US);
	CHECK_EQ(f.idle_ns, 50 * US);
	CHECK_EQ((long long)(f.busy_pct * 100), 8571);
	/* 100-150 us: outside CUDA, then the launch and its latency. */
	CHECK_EQ(f.nr_gaps, 1);
	CHECK_EQ(f.causes[CAUSE_CPU_BOUND].time_ns, 10 * US);
	CHECK_EQ(f.causes[CAUSE_LAUNCH_OVERHEAD].time_ns, 40 * US);
	CHECK_EQ((long long)(f.causes[CAUSE_LAUNCH_OVERHEAD].share_pct * 100), 1142);
	CHECK(f.ctr.has);
	CHECK_EQ(f.ctr.covered_ns, 350 * US);
	CHECK(f.ctr.coverage_pct <= 100.0);
	CHECK_EQ((long long)f.ctr.coverage_pct, 100);
	/* 0-100, 100-200, 200-300 (its 250-300 left out), 900-1000 us; 300-800 and the first
	 * in the profiler's clock; 800-900 wholly in the gap left out. */
	CHECK_EQ(f.ctr.nr_samples, 4);
	CHECK_EQ(f.ctr.nr_left_out, 7);
	CHECK(fabs(f.ctr.mean[TRACE_PM_SM_ACTIVE] - 50) < 1e-9);
	CHECK(strstr(f.summary, "left out: 3 launches while another CUPTI client held CUPTI") !=
	      NULL);
	done(&m, &s);
	free(m.notes);
	free(m.pm);

	/*
	 * Held from the first kernel's end to the end: no gap meets it, the window is what came
	 * before; the launches after it are left out.
	 */
	base(&m);
	note(&m, 0, TRACE_NOTE_CUPTI_ON);
	op(&m, MG_KERNEL, 0, 100 * US, call(&m, MC_LAUNCH, 1, 0, 5 * US));
	note(&m, 150 * US, TRACE_NOTE_CUPTI_OFF);
	for (t = 200; t < 1000; t += 100)
		call(&m, MC_LAUNCH, 1, t * US, t * US + 5 * US);
	run(&m, &s, &f);
	CHECK_EQ(s.gpu.host_only_ns, 755 * US);	/* to the end of the last call */
	CHECK_EQ(s.gpu.host_only_launches, 8);
	CHECK_EQ(f.window_ns, 100 * US);
	CHECK_EQ(f.excluded_ns, 0);
	CHECK((long long)f.busy_pct == 100);
	CHECK(strstr(f.summary, "left out: 8 launches") != NULL);
	done(&m, &s);
	free(m.notes);

	/*
	 * Taken before the shim's first session and held to the end: no GPU timestamps anywhere,
	 * the host-only report, whose verdict is unchanged.
	 */
	base(&m);
	note(&m, 0, TRACE_NOTE_CUPTI_OFF);
	note(&m, 1 * US, TRACE_NOTE_CUPTI_ON);
	note(&m, 2 * US, TRACE_NOTE_CUPTI_OFF);
	for (t = 200; t < 1000; t += 100)
		call(&m, MC_LAUNCH, 1, t * US, t * US + 5 * US);
	run(&m, &s, &f);
	CHECK(!f.has_gpu);
	CHECK_EQ(f.primary, -1);
	CHECK_EQ(s.gpu.host_only_launches, 8);
	CHECK(strstr(f.summary, "the trace has no GPU timestamps") != NULL);
	CHECK(strstr(f.summary, "left out") == NULL);
	done(&m, &s);
	free(m.notes);

	/* CUPTI never on (no CUPTI_ON note): host-only as a whole, no stretch. */
	base(&m);
	note(&m, 0, TRACE_NOTE_CUPTI_OFF);
	call(&m, MC_LAUNCH, 1, 0, 5 * US);
	run(&m, &s, &f);
	CHECK_EQ(s.gpu.nr_host_only, 0);
	CHECK_EQ(s.gpu.host_only_ns, 0);
	CHECK_EQ(s.gpu.host_only_launches, 0);
	done(&m, &s);
	free(m.notes);
}

/*
 * A sampled run against the same run recorded whole. A loop of a 50 us kernel, a
 * synchronization waiting for it and host work, one iteration every 100 us in even 10-ms
 * stretches and every 150 us in odd ones, for 200 ms. Sampled: GPU timestamps only in windows
 * of 2 ms every 10 ms (at each stretch's start), as the shim's notes mark them; the launches
 * between have no operation. The shares measured in the windows stand for the whole: they
 * are the whole run's within their error, which the windows' two kinds make non-zero; the
 * replay of each window saves what the whole run's replay saves.
 */
static void sampled_loop(struct model *m, int is_sampled, int filler)
{
	static char *sstrings[] = { NULL, "k_big", "k_small",
				    "sampled: GPU timestamps for 2 ms every 10 ms" };
	uint64_t t = 0, end = 200000 * US;
	uint64_t ms = 1000 * US;

	base(m);
	m->strings = sstrings;
	m->nr_strings = 4;
	if (is_sampled) {
		uint64_t w;

		XGROW(m->notes, m->notes_cap, m->nr_notes + 1);
		m->notes[m->nr_notes++] = (struct m_note){ .ts = 0, .kind = TRACE_NOTE_MODE,
							   .text = 3 };
		for (w = 0; w < end; w += 10 * ms) {
			note(m, w, TRACE_NOTE_CUPTI_ON);
			note(m, w + 2 * ms, TRACE_NOTE_CUPTI_OFF);
		}
	}
	while (t < end) {
		uint64_t period = (t / (10 * ms)) % 2 ? 150 * US : 100 * US;
		int64_t l = call(m, MC_LAUNCH, 1, t, t + US);

		/* An operation only where its launch had GPU timestamps. */
		if (!is_sampled || t % (10 * ms) < 2 * ms)
			op(m, MG_KERNEL, t + 5 * US, t + 55 * US, l);
		call(m, MC_SYNC, 2, t + 2 * US, t + 58 * US);
		/* @filler: many more calls between windows, past the replay's budget */
		if (filler && t % (10 * ms) >= 2 * ms) {
			int i;

			for (i = 0; i < filler; i++)
				call(m, MC_OTHER, 0, t + 60 * US + (uint64_t)i, t + 60 * US + i + 1);
		}
		t += period;
	}
}

static void test_sampled(void)
{
	struct model m, mw;
	struct stats s, sw;
	struct findings f, fw;
	const struct f_cause *c, *cw;
	double err;

	sampled_loop(&mw, 0, 0);
	analyze_model(&mw, &sw, &fw, NULL, 0);
	sampled_loop(&m, 1, 0);
	analyze_model(&m, &s, &f, NULL, 0);
	CHECK(!fw.sampling.is_sampled);
	CHECK(f.sampling.is_sampled);
	CHECK_EQ(f.sampling.window_ms, 2);
	CHECK_EQ(f.sampling.every_ms, 10);
	CHECK_EQ(f.sampling.nr_windows, 20);
	CHECK(fabs(f.sampling.covered_pct - 20) < 0.5);
	CHECK(s.gpu.host_only_launches > 1000);
	CHECK_EQ(s.gpu.unjoined, 0);
	CHECK_EQ(fw.primary, CAUSE_HOST_SYNC);
	CHECK_EQ(f.primary, CAUSE_HOST_SYNC);
	c = &f.causes[CAUSE_HOST_SYNC];
	cw = &fw.causes[CAUSE_HOST_SYNC];
	/* The windows' two kinds of stretch differ: an error, and the whole's share inside it. */
	CHECK(c->share_ci_pct > 0.1);
	err = fabs(c->share_pct - cw->share_pct);
	CHECK(err <= c->share_ci_pct);
	CHECK(err < 3);
	/* Extrapolated over the window: its share of the span. */
	CHECK(llabs((long long)c->est_ns - (long long)(f.sampling.span_ns * c->share_pct / 100)) <
	      1000);
	CHECK(llabs((long long)c->est_ns - (long long)cw->time_ns) < (long long)cw->time_ns / 20);
	/* Replayed window by window: the whole run's saving within the error. */
	CHECK(f.replay.done);
	CHECK_EQ(f.replay.windows, 20);
	CHECK(c->has_saving && cw->has_saving);
	CHECK(c->saving_ci_pct >= 0);
	CHECK(fabs(c->saving_pct - cw->saving_pct) < 3 + c->saving_ci_pct);
	CHECK(strstr(f.summary, "sampled: 20 windows, 20.") != NULL);
	CHECK(strstr(fw.summary, "sampled") == NULL);
	/* Causes of busy time have no error across windows (not made of idle gaps). */
	CHECK(f.causes[CAUSE_LOW_PARALLELISM].share_ci_pct < 0);
	findings_free(&f);
	findings_free(&fw);
	done(&m, &s);
	done(&mw, &sw);
	free(m.notes);

	/* 120 calls after each iteration between windows: ~150,000, beyond the replay's budget,
	 * which goes to what the windows hold: every window is replayed. */
	sampled_loop(&m, 1, 120);
	CHECK(m.nr_calls > SAVINGS_MAX_ITEMS);
	analyze_model(&m, &s, &f, NULL, 0);
	CHECK(f.replay.done);
	CHECK_EQ(f.replay.windows, 20);
	CHECK_EQ(f.primary, CAUSE_HOST_SYNC);
	findings_free(&f);
	done(&m, &s);
	free(m.notes);
}

/* The ratio estimator's interval: zero for windows alike, the textbook figure otherwise. */
static void test_ratio_ci(void)
{
	double t[4] = { 10, 10, 10, 10 }, w[4] = { 100, 100, 100, 100 };
	double t2[4] = { 10, 20, 10, 20 };
	double se;

	CHECK(fabs(findings_ratio_ci(t, w, 4, 0)) < 1e-12);
	CHECK(findings_ratio_ci(t, w, 2, 0) < 0);
	/* r = 0.15; residuals +-5, ss = 100; se = sqrt(100 / 12) / 100; t(0.975, 3) = 3.182 */
	se = sqrt(100.0 / 12) / 100;
	CHECK(fabs(findings_ratio_ci(t2, w, 4, 0) - 100 * 3.18244630528 * se) < 1e-3);
	/* Half the population seen: the finite-population correction sqrt(1 - 0.5). */
	CHECK(fabs(findings_ratio_ci(t2, w, 4, 0.5) - 100 * 3.18244630528 * se * sqrt(0.5)) <
	      1e-3);
}

int main(void)
{
	RUN(test_host_sync);
	RUN(test_long_wait);
	RUN(test_cpu_bound);
	RUN(test_profiler_setup_stall);
	RUN(test_lazy_load);
	RUN(test_small_gaps);
	RUN(test_memcpy_and_alloc);
	RUN(test_device_copy);
	RUN(test_savings_after_startup);
	RUN(test_startup);
	RUN(test_low_parallelism_and_memory);
	RUN(test_healthy_and_host_only);
	RUN(test_counters);
	RUN(test_host_only_stretch);
	RUN(test_sampled);
	RUN(test_ratio_ci);
	return TEST_RESULT();
}
