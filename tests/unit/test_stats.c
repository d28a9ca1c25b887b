// SPDX-License-Identifier: MIT
/*
 * test_stats.c - statistics on small in-memory models with hand-computed answers: counts
 * (failed launches counted, NOT_READY queries not errors), the memory peak with device pointers
 * and VMM handles in separate spaces, the allocations live at the peak and how the peak formed
 * (the live bytes by slice, the peak's bytes by phase and size, the steady low point's growth:
 * a leak against one buffer kept, the largest rise within a step), GPU busy as a union of
 * overlapping intervals, SM fill from the occupancy calculator or the thread limit, and the
 * stretches without GPU timestamps (CUPTI held by the application's profiler) from the notes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/model.h"
#include "model/first_look.h"
#include "analysis/stats.h"
#include "util/util.h"

static struct m_call *add_call(struct model *m, uint8_t kind, uint64_t t0, uint64_t t1)
{
	struct m_call *c;

	XGROW(m->calls, m->calls_cap, m->nr_calls + 1);
	c = &m->calls[m->nr_calls++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->t0 = t0;
	c->t1 = t1;
	c->api = 1;
	c->device = 0;
	if (kind == MC_LAUNCH)
		c->launch = model_launch_shape_add(m, &(struct m_launch_shape){ 0 });
	if (kind == MC_MEM || kind == MC_COPY || kind == MC_SET)
		model_call_args_new(m, c);
	return c;
}

static struct m_call *add_mem(struct model *m, uint64_t t, uint8_t kind, uint8_t op, uint64_t addr,
			      uint64_t bytes)
{
	struct m_call *c = add_call(m, MC_MEM, t, t + 1);

	c->sub = kind;
	c->op = op;
	m->call_args[c->args] = (struct m_call_args){ .bytes = bytes, .addr = addr };
	return c;
}

/* Give @g the shape @sh (its kind and device the operation's). */
static void gpu_shape(struct model *m, struct m_gpu_op *g, struct m_gpu_shape sh)
{
	sh.kind = model_gpu_shape(m, g)->kind;
	sh.device = model_gpu_shape(m, g)->device;
	g->shape = model_gpu_shape_add(m, &sh);
}

static struct m_gpu_op *add_gpu(struct model *m, uint8_t kind, uint64_t start, uint64_t end)
{
	struct m_gpu_op *g;

	XGROW(m->gpu, m->gpu_cap, m->nr_gpu + 1);
	g = &m->gpu[m->nr_gpu++];
	memset(g, 0, sizeof(*g));
	g->shape = model_gpu_shape_add(m, &(struct m_gpu_shape){ .kind = kind });	/* device 0 */
	g->start = start;
	g->end = end;
	g->call = -1;
	gpu_shape(m, g, (struct m_gpu_shape){ 0 });
	return g;
}

static void base_model(struct model *m)
{
	static char *strings[5];
	static struct m_api apis[2] = { { NULL, 0, 0 }, { "cuTest", TRACE_FAM_OTHER, 0 } };
	static struct trace_rec_device dev;

	memset(m, 0, sizeof(*m));
	strings[1] = "kernel_a";
	strings[2] = "kernel_b";
	strings[3] = "step";
	strings[4] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
	m->strings = strings;
	m->nr_strings = 5;
	m->apis = apis;
	m->nr_apis = 2;
	memset(&dev, 0, sizeof(dev));
	dev.ordinal = 0;
	dev.total_bytes = 1000;
	dev.sm_count = 4;
	dev.max_threads_per_sm = 2048;
	dev.max_blocks_per_sm = 32;
	m->devices = &dev;
	m->nr_devices = 1;
}

static void free_base(struct model *m)
{
	free(m->calls);
	free(m->call_args);
	free(m->gpu);
	free(m->gpu_shapes);
	free(m->gpu_shape_slots);
	free(m->launch_shapes);
	free(m->launch_shape_slots);
	free(m->occ);
	free(m->nvtx);
}

static void test_counts(void)
{
	struct model m;
	struct stats s;
	struct m_call *c;

	base_model(&m);
	c = add_call(&m, MC_LAUNCH, 0, 10);
	c->flags = MCF_ERROR;
	add_call(&m, MC_LAUNCH, 10, 20)->flags = MCF_CAPTURING;
	add_call(&m, MC_GRAPH_LAUNCH, 20, 30);
	add_call(&m, MC_HOST_FUNC, 30, 40);
	add_call(&m, MC_SYNC, 40, 50)->sub = TRACE_SYNC_CTX;
	add_call(&m, MC_SYNC, 50, 60)->sub = TRACE_SYNC_STREAM;
	add_call(&m, MC_SYNC, 60, 70)->sub = TRACE_SYNC_EVENT;
	add_call(&m, MC_SYNC, 70, 80)->sub = TRACE_SYNC_STREAM_QUERY;
	add_call(&m, MC_SYNC, 80, 90)->sub = TRACE_SYNC_STREAM_WAIT_EVENT;
	c = add_call(&m, MC_COPY, 90, 100);
	m.call_args[c->args].bytes = 64;
	c = add_call(&m, MC_SET, 100, 110);
	m.call_args[c->args].bytes = 8;
	stats_compute(&s, &m);
	CHECK_EQ(s.counts.launches, 4);
	CHECK_EQ(s.counts.kernel_launches, 2);
	CHECK_EQ(s.counts.graph_launches, 1);
	CHECK_EQ(s.counts.host_funcs, 1);
	CHECK_EQ(s.counts.launch_errors, 1);
	CHECK_EQ(s.counts.captured_launches, 1);
	CHECK_EQ(s.counts.syncs, 3);
	CHECK_EQ(s.counts.queries, 1);
	CHECK_EQ(s.counts.stream_waits, 1);
	CHECK_EQ(s.counts.memcpys, 1);
	CHECK_EQ(s.counts.memcpy_bytes, 64);
	CHECK_EQ(s.counts.memsets, 1);
	CHECK_EQ(s.counts.errors, 1);
	CHECK_EQ(s.span_ns, 110);
	CHECK_EQ(s.nr_apis, 1);
	CHECK_EQ(s.apis[0].calls, 11);
	CHECK_EQ(s.apis[0].total_ns, 110);
	CHECK(!s.gpu.has_cupti);
	stats_free(&s);
	free_base(&m);
}

static void test_memory_peak(void)
{
	struct model m;
	struct stats s;

	base_model(&m);
	add_mem(&m, 10, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x1000, 100);
	add_mem(&m, 20, TRACE_MEM_ASYNC, TRACE_MEM_ALLOC, 0x2000, 50);
	add_mem(&m, 30, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x1000, 0);
	/* The same number as a freed pointer, but a VMM handle: a different space. */
	add_mem(&m, 40, TRACE_MEM_VMM_PHYS, TRACE_MEM_ALLOC, 0x2000, 200);
	add_mem(&m, 50, TRACE_MEM_ASYNC, TRACE_MEM_FREE, 0x2000, 0);
	add_mem(&m, 60, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x9999, 0);	/* never allocated */
	add_mem(&m, 70, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0, 0)->flags = MCF_ERROR;
	/* Host memory is not device memory. */
	add_mem(&m, 80, TRACE_MEM_HOST, TRACE_MEM_ALLOC, 0x5000, 10000);
	stats_compute(&s, &m);
	CHECK_EQ(s.counts.allocs, 4);
	CHECK_EQ(s.counts.frees, 3);
	CHECK_EQ(s.counts.alloc_errors, 1);
	CHECK_EQ(s.counts.host_allocs, 1);
	CHECK_EQ(s.mem.peak_bytes, 250);
	CHECK_EQ(s.mem.peak_ts, 41);
	CHECK_EQ(s.mem.final_bytes, 200);
	CHECK_EQ(s.mem.unmatched_frees, 1);
	CHECK_EQ(s.mem.device_total_bytes, 1000);
	CHECK_EQ((long long)(s.mem.peak_pct * 100), 2500);
	CHECK_EQ(s.mem.nr_live_at_peak, 2);
	CHECK_EQ(s.mem.allocs[s.mem.live_at_peak[0]].bytes, 200);
	CHECK_EQ(s.mem.allocs[s.mem.live_at_peak[1]].bytes, 50);
	CHECK_EQ(s.mem.alloc_bytes_total, 350);
	stats_free(&s);
	free_base(&m);
}

/* Call @c of @m failed with @result (kept in call order, as the loader keeps them). */
static void set_result(struct model *m, struct m_call *c, uint32_t result)
{
	XGROW(m->results, m->results_cap, m->nr_results + 1);
	m->results[m->nr_results++] = (struct m_call_result){ (uint32_t)(c - m->calls), result };
	c->flags |= MCF_ERROR;
}

/*
 * Memory pressure: an allocation refused for want of memory, two frees, then the retry (a
 * reclaim); a refusal of another kind (not memory); and a buffer freed and allocated again
 * at the same size within 100 ms (churn), then once more a second later (not churn).
 */
static void test_memory_pressure(void)
{
	const uint64_t ms = 1000000;
	struct model m;
	struct stats s;

	base_model(&m);
	add_mem(&m, 1 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x1000, 600);
	add_mem(&m, 2 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x2000, 300);
	set_result(&m, add_mem(&m, 3 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0, 500), 2);
	add_mem(&m, 4 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x1000, 0);
	add_mem(&m, 5 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x2000, 0);
	add_mem(&m, 6 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x3000, 500);	/* the retry */
	/* not memory: CUDA_ERROR_NOT_SUPPORTED (801) */
	set_result(&m, add_mem(&m, 7 * ms, TRACE_MEM_VMM_PHYS, TRACE_MEM_ALLOC, 0, 64), 801);
	add_mem(&m, 8 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x3000, 0);
	add_mem(&m, 50 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x4000, 500);	/* churn */
	add_mem(&m, 60 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x4000, 0);
	add_mem(&m, 1060 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x5000, 500);	/* too late */
	stats_compute(&s, &m);
	CHECK_EQ(s.mem.pressure.failed, 1);
	CHECK_EQ(s.mem.pressure.first[0].bytes, 500);
	CHECK_EQ(s.mem.pressure.first[0].live_bytes, 900);
	CHECK_EQ(s.mem.pressure.first[0].t, 3 * ms);
	CHECK_EQ(s.mem.pressure.reclaims, 1);
	CHECK_EQ(s.mem.pressure.reclaim_frees, 2);
	CHECK_EQ(s.mem.pressure.reclaim_freed_bytes, 900);
	CHECK_EQ(s.mem.pressure.reclaim_ns, 3 * ms + 1);
	CHECK_EQ(s.mem.pressure.churn_allocs, 1);
	CHECK_EQ(s.mem.pressure.churn_bytes, 500);
	CHECK_EQ(s.mem.pressure.churn_ns, 2);
	stats_free(&s);
	free(m.results);
	free_base(&m);
}

/* An NVTX range named "step" (STRING 3) on thread 0 over [@start, @end). */
static void add_step(struct model *m, uint64_t start, uint64_t end)
{
	XGROW(m->nvtx, m->nvtx_cap, m->nr_nvtx + 2);
	m->nvtx[m->nr_nvtx++] = (struct m_nvtx){ .t = start, .name = 3, .kind = MN_PUSH };
	m->nvtx[m->nr_nvtx++] = (struct m_nvtx){ .t = end, .kind = MN_POP };
}

#define MIB (1ull << 20)

/*
 * How the peak formed, with phases. 640 ms (32 slices of 20 ms): start-up 0-100 ms loads 1000
 * and 500 MiB; a 40 ms warm-up step makes 300 MiB and, 5 ms later, 100 MiB it frees at 130 ms
 * (the spike: 1500 to 1900 MiB within a 10 ms step); 20 steady steps of 10 ms from 140 ms, each
 * with a 50 MiB buffer made and freed inside it, and with @is_leak 4 MiB kept every second step
 * (the low point rises 4 MiB a step pair: 9 new highs, both halves), else 40 MiB kept once in
 * step 10 (one new high: no leak); the tail makes 100 MiB at 350 ms: the peak.
 */
static void test_memory_formation(int is_leak)
{
	const uint64_t ms = 1000000;
	const struct s_mem_formation *fm;
	struct model m;
	struct stats s;
	uint64_t addr = 0x10000, t, sum = 0;
	int i;

	base_model(&m);
	m.devices[0].total_bytes = 4096 * MIB;
	add_call(&m, MC_SYNC, 0, 1);
	add_mem(&m, 10 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x1000, 1000 * MIB);
	add_mem(&m, 20 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x2000, 500 * MIB);
	add_step(&m, 100 * ms, 140 * ms);
	add_mem(&m, 110 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x3000, 300 * MIB);
	add_mem(&m, 115 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x4000, 100 * MIB);
	add_mem(&m, 130 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x4000, 0);
	for (i = 1; i <= 20; i++) {
		t = 140 * ms + (uint64_t)(i - 1) * 10 * ms;
		add_step(&m, t, t + 10 * ms);
		add_mem(&m, t + 2 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x5000, 50 * MIB);
		if (is_leak && i % 2 == 0)
			add_mem(&m, t + 5 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, addr++, 4 * MIB);
		if (!is_leak && i == 10)
			add_mem(&m, t + 5 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, addr++, 40 * MIB);
		add_mem(&m, t + 8 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x5000, 0);
	}
	add_mem(&m, 350 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x6000, 100 * MIB);
	add_call(&m, MC_SYNC, 639 * ms, 640 * ms);
	stats_compute(&s, &m);
	fm = &s.mem.formation;

	CHECK_EQ(s.loop.count, 21);
	CHECK_EQ(s.loop.warmup, 1);
	CHECK_EQ(s.mem.peak_bytes, 1940 * MIB);
	CHECK_EQ(s.mem.peak_ts, 350 * ms + 1);
	CHECK_EQ(fm->has_phases, 1);
	CHECK_EQ(fm->peak_phase, PHASE_TAIL);
	CHECK_EQ(fm->peak_first_alloc, 10 * ms + 1);
	CHECK_EQ(fm->peak_last_alloc, 350 * ms + 1);

	/* The series: 32 slices of 20 ms; a slice's least and most, and its end. */
	CHECK_EQ(fm->slice_ns, 20 * ms);
	CHECK_EQ(fm->nr_series, 32);
	CHECK_EQ(fm->series[0].end, 20 * ms);
	CHECK_EQ(fm->series[0].min_bytes, 0);
	CHECK_EQ(fm->series[0].max_bytes, 1000 * MIB);
	CHECK_EQ(fm->series[0].end_bytes, 1000 * MIB);
	CHECK_EQ(fm->series[0].peak_made_bytes, 1000 * MIB);
	CHECK_EQ(fm->series[1].min_bytes, 1000 * MIB);	/* made at 20 ms + 1 ns: slice 1 */
	CHECK_EQ(fm->series[1].max_bytes, 1500 * MIB);
	CHECK_EQ(fm->series[3].min_bytes, 1500 * MIB);	/* nothing happened: the level held */
	CHECK_EQ(fm->series[3].max_bytes, 1500 * MIB);
	CHECK_EQ(fm->series[5].min_bytes, 1500 * MIB);
	CHECK_EQ(fm->series[5].max_bytes, 1900 * MIB);
	CHECK_EQ(fm->series[5].peak_made_bytes, 300 * MIB);	/* the 100 MiB was freed */
	CHECK_EQ(fm->series[6].min_bytes, 1800 * MIB);
	CHECK_EQ(fm->series[6].end_bytes, 1800 * MIB);
	CHECK_EQ(fm->series[17].max_bytes, 1940 * MIB);
	CHECK_EQ(fm->series[17].peak_made_bytes, 100 * MIB);
	CHECK_EQ(fm->series[31].end, 640 * ms);
	CHECK_EQ(fm->series[31].min_bytes, 1940 * MIB);
	CHECK_EQ(fm->series[31].end_bytes, 1940 * MIB);
	for (i = 0; i < 32; i++)
		sum += fm->series[i].peak_made_bytes;
	CHECK_EQ(sum, s.mem.peak_bytes);

	/* What the peak is made of: by phase, by size. */
	CHECK_EQ(fm->by_phase[PHASE_STARTUP].nr, 2);
	CHECK_EQ(fm->by_phase[PHASE_STARTUP].bytes, 1500 * MIB);
	CHECK_EQ(fm->by_phase[PHASE_WARMUP].nr, 1);
	CHECK_EQ(fm->by_phase[PHASE_WARMUP].bytes, 300 * MIB);
	CHECK_EQ(fm->by_phase[PHASE_STEADY].nr, is_leak ? 10 : 1);
	CHECK_EQ(fm->by_phase[PHASE_STEADY].bytes, 40 * MIB);
	CHECK_EQ(fm->by_phase[PHASE_TAIL].nr, 1);
	CHECK_EQ(fm->by_phase[PHASE_TAIL].bytes, 100 * MIB);
	CHECK_EQ(fm->by_size[3].nr, 3);			/* 256 MiB - 4 GiB */
	CHECK_EQ(fm->by_size[3].bytes, 1800 * MIB);
	CHECK_EQ(fm->by_size[2].nr, is_leak ? 1 : 2);	/* 16 - 256 MiB */
	CHECK_EQ(fm->by_size[1].nr, is_leak ? 10 : 0);	/* 1 - 16 MiB */
	CHECK_EQ(fm->by_size[0].nr + fm->by_size[4].nr, 0);

	/* The spike: within a step (10 ms), from the first step on, not the start-up's load. */
	CHECK_EQ(fm->spike.window_ns, 10 * ms);
	CHECK_EQ(fm->spike.bytes, 400 * MIB);
	CHECK_EQ(fm->spike.from_bytes, 1500 * MIB);
	CHECK_EQ(fm->spike.to_bytes, 1900 * MIB);
	CHECK_EQ(fm->spike.start, 110 * ms + 1);
	CHECK_EQ(fm->spike.end, 115 * ms + 1);
	CHECK_EQ(fm->spike.phase, PHASE_WARMUP);
	CHECK_EQ(fm->spike.nr_allocs, 2);
	CHECK_EQ(fm->spike.largest_bytes, 300 * MIB);

	/* The steady low point, step by step: 1800 MiB, rising 4 MiB every second step. */
	CHECK_EQ(fm->growth.nr_steps, 20);
	CHECK_EQ(fm->growth.first_bytes, 1800 * MIB);
	CHECK_EQ(fm->growth.last_bytes, (is_leak ? 1836 : 1840) * MIB);
	if (is_leak) {
		/* y = 1800 + 4 floor(x / 2) MiB, x = 0..19: slope 2 - 10/665 MiB */
		CHECK(fabs(fm->growth.per_step_bytes - (2.0 - 10.0 / 665) * MIB) < 1);
		CHECK_EQ(fm->growth.nr_rises, 9);
		CHECK_EQ(fm->growth.is_growing, 1);
	} else {
		CHECK(fm->growth.per_step_bytes > 0);
		CHECK_EQ(fm->growth.nr_rises, 1);
		CHECK_EQ(fm->growth.is_growing, 0);	/* one buffer kept: no leak */
	}
	stats_free(&s);
	free_base(&m);
}

static void test_memory_formation_leak(void)
{
	test_memory_formation(1);
}

static void test_memory_formation_kept(void)
{
	test_memory_formation(0);
}

/*
 * Without steps: no phases, no growth; the spike's window is a slice (10 ms of 320). 60 MiB made
 * in 8 ms is the spike; 100 MiB made over 15 ms and 80 MiB over 12 ms are not within a slice.
 */
static void test_memory_formation_no_steps(void)
{
	const uint64_t ms = 1000000;
	const struct s_mem_formation *fm;
	struct model m;
	struct stats s;
	int k;

	base_model(&m);
	add_call(&m, MC_SYNC, 0, 1);
	add_mem(&m, 5 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x1000, 50 * MIB);
	add_mem(&m, 20 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x1100, 50 * MIB);
	add_mem(&m, 50 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x2000, 20 * MIB);
	add_mem(&m, 55 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x3000, 20 * MIB);
	add_mem(&m, 58 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x4000, 20 * MIB);
	add_mem(&m, 100 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x2000, 0);
	add_mem(&m, 101 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x3000, 0);
	add_mem(&m, 102 * ms, TRACE_MEM_DEVICE, TRACE_MEM_FREE, 0x4000, 0);
	add_mem(&m, 200 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x5000, 40 * MIB);
	add_mem(&m, 212 * ms, TRACE_MEM_DEVICE, TRACE_MEM_ALLOC, 0x6000, 40 * MIB);
	add_call(&m, MC_SYNC, 319 * ms, 320 * ms);
	stats_compute(&s, &m);
	fm = &s.mem.formation;

	CHECK_EQ(s.loop.found.source, STEPS_NONE);
	CHECK_EQ(s.mem.peak_bytes, 180 * MIB);
	CHECK_EQ(fm->has_phases, 0);
	CHECK_EQ(fm->peak_phase, -1);
	for (k = 0; k < NR_PHASES; k++)
		CHECK_EQ(fm->by_phase[k].nr, 0);
	CHECK_EQ(fm->growth.nr_steps, 0);
	CHECK_EQ(fm->slice_ns, 10 * ms);
	CHECK_EQ(fm->nr_series, 32);
	CHECK_EQ(fm->series[0].max_bytes, 50 * MIB);
	CHECK_EQ(fm->series[2].max_bytes, 100 * MIB);
	CHECK_EQ(fm->series[5].min_bytes, 100 * MIB);
	CHECK_EQ(fm->series[5].max_bytes, 160 * MIB);
	CHECK_EQ(fm->series[10].min_bytes, 100 * MIB);	/* freed at 100-102 ms */
	CHECK_EQ(fm->series[10].max_bytes, 160 * MIB);
	CHECK_EQ(fm->series[10].end_bytes, 100 * MIB);
	CHECK_EQ(fm->series[21].max_bytes, 180 * MIB);
	CHECK_EQ(fm->series[21].peak_made_bytes, 40 * MIB);
	CHECK_EQ(fm->spike.window_ns, 10 * ms);
	CHECK_EQ(fm->spike.bytes, 60 * MIB);
	CHECK_EQ(fm->spike.from_bytes, 100 * MIB);
	CHECK_EQ(fm->spike.to_bytes, 160 * MIB);
	CHECK_EQ(fm->spike.start, 50 * ms + 1);
	CHECK_EQ(fm->spike.end, 58 * ms + 1);
	CHECK_EQ(fm->spike.phase, -1);
	CHECK_EQ(fm->spike.nr_allocs, 3);
	CHECK_EQ(fm->spike.largest_bytes, 20 * MIB);
	CHECK_EQ(fm->by_size[2].nr, 4);			/* 50, 50, 40, 40 MiB */
	CHECK_EQ(fm->by_size[2].bytes, 180 * MIB);
	stats_free(&s);
	free_base(&m);
}

static void test_gpu_busy(void)
{
	struct model m;
	struct stats s;

	base_model(&m);
	m.has_cupti = 1;
	add_call(&m, MC_LAUNCH, 0, 1);
	add_gpu(&m, MG_KERNEL, 0, 100);
	add_gpu(&m, MG_MEMCPY, 50, 150);
	add_gpu(&m, MG_KERNEL, 200, 300);
	add_gpu(&m, MG_KERNEL, 210, 220);	/* inside another kernel: no extra busy time */
	stats_compute(&s, &m);
	CHECK_EQ(s.span_ns, 300);
	CHECK_EQ(s.gpu.busy_ns, 250);
	CHECK_EQ(s.gpu.kernel_ns, 200);
	CHECK_EQ(s.gpu.memcpy_ns, 100);
	CHECK_EQ(s.gpu.idle_ns, 50);
	CHECK_EQ((long long)(s.gpu.busy_pct * 100), 8333);
	CHECK_EQ(s.gpu.nr_kernels, 3);
	stats_free(&s);
	free_base(&m);
}

/*
 * Communication kernels: their union, the part other kernels overlap (|comm and other| =
 * |comm| + |other| - |kernels|), the rest exposed; the names that count.
 */
static void test_comm(void)
{
	struct model m;
	struct stats s;

	base_model(&m);
	m.has_cupti = 1;
	add_call(&m, MC_LAUNCH, 0, 1);
	gpu_shape(&m, add_gpu(&m, MG_KERNEL, 0, 150), (struct m_gpu_shape){ .name = 1 });
	gpu_shape(&m, add_gpu(&m, MG_KERNEL, 100, 300), (struct m_gpu_shape){ .name = 4 });
	gpu_shape(&m, add_gpu(&m, MG_KERNEL, 250, 280), (struct m_gpu_shape){ .name = 2 });
	gpu_shape(&m, add_gpu(&m, MG_KERNEL, 400, 500), (struct m_gpu_shape){ .name = 4 });
	add_gpu(&m, MG_MEMCPY, 450, 600);	/* a copy beside it is not a kernel: no overlap */
	stats_compute(&s, &m);
	CHECK_EQ(s.gpu.nr_comm, 2);
	CHECK_EQ(s.gpu.comm_ns, 300);
	CHECK_EQ(s.gpu.comm_overlap_ns, 80);
	CHECK_EQ(s.gpu.devices[0].comm_ns, 300);
	CHECK_EQ(s.gpu.kernel_ns, 400);
	stats_free(&s);
	free_base(&m);

	CHECK(stats_is_comm_kernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
	CHECK(stats_is_comm_kernel("ncclDevKernel_SendRecv"));
	/* as PyTorch 2.11's NCCL 2.28 gives it (H200) */
	CHECK(stats_is_comm_kernel(
		"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"));
	CHECK(!stats_is_comm_kernel("_Z12not_nccl_allv"));
	CHECK(stats_is_comm_kernel("_Z22nvshmemi_barrier_kernelv"));
	CHECK(stats_is_comm_kernel(
		"_ZN4c10d16symmetric_memory27multimem_all_reduce_kernelIfLi16ELi4EEEvPT_mmPjmm"));
	CHECK(!stats_is_comm_kernel("_ZN2at6native29vectorized_elementwise_kernel"));
	CHECK(!stats_is_comm_kernel("sm90_xmma_gemm_bf16bf16_bf16f32"));
	CHECK(!stats_is_comm_kernel(NULL));
}

static void test_fill(void)
{
	struct model m;
	struct stats s;
	struct m_gpu_op *g;
	int is_est;

	base_model(&m);
	m.has_cupti = 1;
	m.occ = calloc(1, sizeof(*m.occ));
	m.occ[0].name = 1;
	m.occ[0].block_threads = 256;
	m.occ[0].max_blocks_per_sm = 8;	/* 4 SMs x 8 = 32 blocks fill the GPU */
	m.nr_occ = 1;
	CHECK_EQ((long long)(stats_fill(&m, 1, 16, 256, 0, 0, &is_est) * 100), 50);
	CHECK(!is_est);
	CHECK_EQ((long long)(stats_fill(&m, 1, 64, 256, 0, 0, &is_est) * 100), 100);
	/* No calculator answer for kernel 2: threads bound it to 2048/1024 = 2 blocks per SM. */
	CHECK_EQ((long long)(stats_fill(&m, 2, 2, 1024, 0, 0, &is_est) * 100), 25);
	CHECK(is_est);
	CHECK(stats_fill(&m, 1, 16, 256, 0, 7, &is_est) < 0);	/* unknown device */

	add_call(&m, MC_OTHER, 0, 1);
	g = add_gpu(&m, MG_KERNEL, 0, 100);
	gpu_shape(&m, g, (struct m_gpu_shape){ .name = 1, .blocks = 16, .block_threads = 256 });
	g = add_gpu(&m, MG_KERNEL, 100, 200);
	gpu_shape(&m, g, (struct m_gpu_shape){ .name = 1, .blocks = 64, .block_threads = 256 });
	stats_compute(&s, &m);
	CHECK_EQ(s.nr_kernels, 1);
	CHECK_STR(s.kernels[0].name, "kernel_a");
	CHECK_EQ(s.kernels[0].gpu_count, 2);
	CHECK_EQ((long long)(s.kernels[0].fill * 100), 75);
	CHECK_EQ((long long)(s.gpu.fill_pct * 10), 750);
	CHECK_EQ(s.kernels[0].gpu_p50_ns, 100);
	stats_free(&s);
	free_base(&m);
}

static void note(struct model *m, uint64_t ts, uint32_t kind)
{
	XGROW(m->notes, m->notes_cap, m->nr_notes + 1);
	m->notes[m->nr_notes++] = (struct m_note){ .ts = ts, .kind = kind };
}

/*
 * The notes as the shim writes them: waiting for the application's client before its first
 * session (OFF first), resumed, yielded twice (a yield noted after a note written while it
 * handed over), still yielded at the end; other notes in between.
 */
static void test_host_only(void)
{
	struct m_stretch *v;
	struct model m;
	struct stats s;
	struct m_pm_sample sm;
	struct stats_acc *a;
	struct first_look p;
	size_t n;
	int i;

	base_model(&m);
	m.has_cupti = 1;
	note(&m, 10, TRACE_NOTE_CUPTI_OFF);
	note(&m, 20, TRACE_NOTE_PM_ON);
	note(&m, 100, TRACE_NOTE_CUPTI_ON);
	note(&m, 300, TRACE_NOTE_WARNING);
	note(&m, 250, TRACE_NOTE_CUPTI_OFF);
	note(&m, 400, TRACE_NOTE_CUPTI_ON);
	note(&m, 600, TRACE_NOTE_CUPTI_OFF);
	v = model_host_only(&m, &n);
	CHECK_EQ(n, 3);
	CHECK(v[0].from == 10 && v[0].to == 100);
	CHECK(v[1].from == 250 && v[1].to == 400);
	CHECK(v[2].from == 600 && v[2].to == UINT64_MAX);
	CHECK_EQ(model_host_only_overlap(v, n, 0, 1000), 90 + 150 + 400);
	CHECK_EQ(model_host_only_overlap(v, n, 100, 250), 0);
	CHECK_EQ(model_host_only_overlap(v, n, 399, 601), 2);
	free(v);

	for (i = 0; i < 10; i++)	/* launches at 0, 100, ... 900 */
		add_call(&m, MC_LAUNCH, (uint64_t)i * 100, (uint64_t)i * 100 + 5);
	add_gpu(&m, MG_KERNEL, 100, 200);
	/* The statistics as they come, with two counter samples: one in a stretch. */
	first_look_of_model(&p, &m);
	a = stats_begin(&s, &m, &p);
	for (i = 0; i < 10; i++) {
		stats_call(a, &m.calls[i], (uint32_t)i);
		if (i == 1)
			stats_op(a, &m.gpu[0]);
	}
	memset(&sm, 0, sizeof(sm));
	sm.start = 120;
	sm.end = 180;
	stats_sample(a, &sm);
	sm.start = 300;
	sm.end = 320;
	stats_sample(a, &sm);
	stats_end(a);
	first_look_free(&p);
	CHECK_EQ(s.span_ns, 905);
	CHECK_EQ(s.gpu.nr_host_only, 3);
	CHECK_EQ(s.gpu.host_only_ns, 90 + 150 + 305);
	CHECK_EQ(s.gpu.host_only_launches, 1 + 4);	/* at 300; at 600, 700, 800, 900 */
	CHECK_EQ(s.gpu.host_only_samples, 1);
	stats_free(&s);
	free_base(&m);
	free(m.notes);

	/* No CUPTI_ON note: no GPU timestamps anywhere, so no stretch. */
	base_model(&m);
	note(&m, 10, TRACE_NOTE_CUPTI_OFF);
	CHECK(model_host_only(&m, &n) == NULL);
	CHECK_EQ(n, 0);
	free(m.notes);
}

int main(void)
{
	RUN(test_counts);
	RUN(test_memory_peak);
	RUN(test_memory_pressure);
	RUN(test_memory_formation_leak);
	RUN(test_memory_formation_kept);
	RUN(test_memory_formation_no_steps);
	RUN(test_gpu_busy);
	RUN(test_comm);
	RUN(test_fill);
	RUN(test_host_only);
	return TEST_RESULT();
}
