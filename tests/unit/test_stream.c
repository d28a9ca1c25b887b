// SPDX-License-Identifier: MIT
/*
 * test_stream.c - the streamed analysis (model_stream, analyze_stream) against the whole
 * model's: the same JSON report for a long hand-built run whose GPU records come late and
 * out of order (two threads, two devices, copies, syncs, allocations, API records that end
 * after their kernel starts), holding about as much for twice the run; the traces it must
 * load whole, and why; and the H200 fixtures named on the command line.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyze.h"
#include "analysis/savings.h"
#include "check.h"
#include "model/model.h"
#include "json_report.h"
#include "model/first_look.h"
#include "trace_builder.h"
#include "trace/trace_reader.h"

enum { API_LAUNCH = 1, API_COPY, API_ALLOC, API_FREE, API_SYNC };
enum { S_LAUNCH = 1, S_COPY, S_ALLOC, S_FREE, S_SYNC, S_KERN_A, S_KERN_B, S_DEV, S_CHIP };

#define TID_A 100
#define TID_B 200
#define BASE 1000000000ull
#define STEP 50000ull			/* a step every 50 us */
#define LATE 40			/* GPU records come this many steps after their calls */

static char *whole_json(const char *path)
{
	struct trace_reader rd;
	struct findings f;
	struct model m;
	struct stats s;
	char *json;

	CHECK_EQ(trace_reader_open(&rd, path), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	analyze_model(&m, &s, &f, NULL, 0);	/* one pass: the steps and ranges take its gaps */
	json = json_report(&m, &s, &f, NULL);
	{
		/* The counters' window, known before the first operation, is the findings'. */
		uint64_t ws, we;
		struct first_look p;

		first_look_of_model(&p, &m);
		if (s.loop.found.source == STEPS_NONE && first_look_window(&p, &ws, &we)) {
			CHECK_EQ(ws, f.window_start);
			CHECK_EQ(we, f.window_end);
		}
		first_look_free(&p);
	}
	findings_free(&f);
	stats_free(&s);
	model_free(&m);
	trace_reader_close(&rd);
	return json;
}

/*
 * Streamed: 1 (then the report must be the whole model's, and *@held is how many calls and
 * operations it held at most, *@walk_held how many calls the findings did, *@samples_held how
 * many counter samples the counters did), 0 loaded whole.
 */
static int stream_same_walk(const char *path, size_t *held, size_t *walk_held,
			    size_t *samples_held)
{
	char *whole = whole_json(path), *json;
	struct model_load_opts opts;
	struct trace_reader rd;
	struct findings f;
	struct model m;
	struct stats s;
	int ret;

	CHECK_EQ(trace_reader_open(&rd, path), 0);
	ret = analyze_stream(&rd, &m, &s, &f, NULL, &opts);
	trace_reader_close(&rd);
	CHECK(ret >= 0);
	if (ret == 1) {
		json = json_report(&m, &s, &f, NULL);
		if (strcmp(json, whole)) {
			fprintf(stderr, "%s: streamed:\n%s\nwhole:\n%s\n", path, json, whole);
			CHECK(!"the streamed report is the whole model's");
		}
		CHECK_EQ(m.nr_calls, 0);	/* nothing held after */
		CHECK_EQ(m.nr_gpu, 0);
		if (held)
			*held = m.stream_held_max;
		if (walk_held)
			*walk_held = f.calls_held_max;
		if (samples_held)
			*samples_held = f.ctr.samples_held_max;
		free(json);
		findings_free(&f);
		stats_free(&s);
		model_free(&m);
	}
	free(whole);
	return ret;
}

static int stream_same(const char *path, size_t *held)
{
	return stream_same_walk(path, held, NULL, NULL);
}

static void rec_call(struct tb *t, uint32_t tid, uint64_t ts, void *rec, uint16_t type,
		     uint16_t size, uint16_t api, uint32_t dur)
{
	tb_block(t, tid, tid == TID_A ? 0 : 1, ts);
	tb_call(rec, type, size, 0, api, dur, 0, 0);
	tb_rec(t, rec, size);
}


static void kernel(struct tb *t, uint64_t start, uint64_t len, uint32_t corr, uint32_t name,
		   uint32_t grid)
{
	tb_gpu_kernel(t, start, start + len, corr, name, grid, 128);
}

static void copy_op(struct tb *t, uint64_t start, uint64_t len, uint32_t corr, uint32_t dev)
{
	struct trace_rec_gpu_memcpy c;

	memset(&c, 0, sizeof(c));
	c.hdr.type = TRACE_REC_GPU_MEMCPY;
	c.hdr.size = sizeof(c);
	c.start_ns = start;
	c.end_ns = start + len;
	c.bytes = 1 << 20;
	c.cupti_corr = corr;
	c.device = dev;
	c.copy_kind = TRACE_GPU_COPY_DTOH;
	c.dst_kind = TRACE_GPU_MEM_PAGEABLE;
	tb_rec(t, &c, sizeof(c));
}

static void dict(struct tb *t)
{
	static const struct {
		uint16_t api;
		uint8_t family;
		uint32_t name;
		const char *s;
	} apis[] = {
		{ API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH, "cuLaunchKernel" },
		{ API_COPY, TRACE_FAM_COPY, S_COPY, "cuMemcpyDtoH_v2" },
		{ API_ALLOC, TRACE_FAM_MEMORY, S_ALLOC, "cuMemAlloc_v2" },
		{ API_FREE, TRACE_FAM_MEMORY, S_FREE, "cuMemFree_v2" },
		{ API_SYNC, TRACE_FAM_SYNC, S_SYNC, "cuStreamSynchronize" },
	};
	size_t i;

	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	for (i = 0; i < sizeof(apis) / sizeof(apis[0]); i++) {
		tb_string(t, apis[i].name, apis[i].s);
		tb_api_def(t, apis[i].api, apis[i].family, apis[i].name);
	}
	tb_string(t, S_KERN_A, "kern_a");
	tb_string(t, S_KERN_B, "kern_b");
	tb_string(t, S_DEV, "NVIDIA H200");
	tb_string(t, S_CHIP, "GH100");
	tb_func(t, 1, S_KERN_A);
	tb_func(t, 2, S_KERN_B);
	tb_device(t, 0, S_DEV);
	tb_device(t, 1, S_DEV);
}

/* Counter samples of device 0: 1 ms each, DRAM and SM throughput changing. */
static void pm_config(struct tb *t)
{
	struct trace_rec_pm_config c;

	memset(&c, 0, sizeof(c));
	c.hdr.type = TRACE_REC_PM_CONFIG;
	c.hdr.size = sizeof(c);
	c.chip = S_CHIP;
	c.interval_ns = 1000000;
	tb_rec(t, &c, sizeof(c));
}

static void pm_sample(struct tb *t, uint64_t start, size_t i)
{
	struct trace_rec_pm_sample ps;
	int k;

	memset(&ps, 0, sizeof(ps));
	ps.hdr.type = TRACE_REC_PM_SAMPLE;
	ps.hdr.size = sizeof(ps);
	ps.start_ns = start;
	ps.end_ns = start + 1000000;
	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		ps.value[k] = (float)((i * 7 + (size_t)k * 13) % 100);
	ps.value[TRACE_PM_DRAM] = i % 3 ? 70.0f : 10.0f;
	ps.value[TRACE_PM_SM_THROUGHPUT] = i % 3 ? 20.0f : 75.0f;
	tb_rec(t, &ps, sizeof(ps));
}

/* Step @i's calls: thread A launches (a sync every 50), thread B copies every 10 and
 * allocates and frees every 100. */
static void step_calls(struct tb *t, size_t i)
{
	const uint64_t ts = BASE + STEP * i;
	struct trace_rec_launch l;
	struct trace_rec_sync sy;
	struct trace_rec_copy c;
	struct trace_rec_mem mem;

	memset(&l, 0, sizeof(l));
	l.func = i % 5 ? 1 : 2;
	l.grid[0] = (uint32_t)(i % 7 + 1) * 8;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = 128;
	l.block[1] = l.block[2] = 1;
	rec_call(t, TID_A, ts, &l, TRACE_REC_LAUNCH, sizeof(l), API_LAUNCH,
		 i < 2 ? 400000 : 5000 + (uint32_t)(i % 3) * 700);
	if (i % 50 == 49) {
		memset(&sy, 0, sizeof(sy));
		sy.kind = TRACE_SYNC_STREAM;
		rec_call(t, TID_A, ts + 10000, &sy, TRACE_REC_SYNC, sizeof(sy), API_SYNC, 30000);
	}
	if (i % 10 == 3) {
		memset(&c, 0, sizeof(c));
		c.dir = TRACE_COPY_D2H;
		c.bytes = 1 << 20;
		rec_call(t, TID_B, ts + 20000, &c, TRACE_REC_COPY, sizeof(c), API_COPY, 12000);
	}
	if (i % 100 == 7) {
		memset(&mem, 0, sizeof(mem));
		mem.kind = TRACE_MEM_DEVICE;
		mem.op = TRACE_MEM_ALLOC;
		mem.addr = 0x7000000 + 0x100000 * (i % 300);
		mem.bytes = 1 << 22;
		rec_call(t, TID_B, ts + 35000, &mem, TRACE_REC_MEM, sizeof(mem), API_ALLOC, 3000);
	}
	if (i % 100 == 57) {
		memset(&mem, 0, sizeof(mem));
		mem.kind = TRACE_MEM_DEVICE;
		mem.op = TRACE_MEM_FREE;
		mem.addr = 0x7000000 + 0x100000 * ((i - 50) % 300);
		rec_call(t, TID_B, ts + 35000, &mem, TRACE_REC_MEM, sizeof(mem), API_FREE, 2000);
	}
}

/* Step @i's GPU records: the kernel (its API record ending after it starts, every third step)
 * on device 0, a copy on device 1 every 10 steps. */
static void step_gpu(struct tb *t, size_t i)
{
	const uint64_t ts = BASE + STEP * i;
	const uint32_t corr = (uint32_t)i * 2 + 1;
	uint64_t start = ts + (i % 3 ? 9000 : 3000) + (i % 11 == 0 ? 30000 : 0);

	tb_gpu_api(t, ts + 100, ts + 4900, corr, TID_A);
	kernel(t, start, 2000 + (i % 13) * 150, corr, i % 5 ? S_KERN_A : S_KERN_B,
	       (uint32_t)(i % 7 + 1) * 8);
	if (i % 10 == 3) {
		tb_gpu_api(t, ts + 20100, ts + 31900, corr + 1, TID_B);
		copy_op(t, ts + 21000, 9000, corr + 1, 1);
	}
	if (i % 20 == 9 && i > 100)	/* sampling from 5 ms on */
		pm_sample(t, ts, i);
}

/* @n steps, the GPU records of a step written LATE steps after its calls, in reverse. */
static const char *build_run(struct tb *t, size_t n, const char *name)
{
	size_t i, j;

	dict(t);
	pm_config(t);
	for (i = 0; i < n + LATE; i++) {
		if (i < n)
			step_calls(t, i);
		if (i >= LATE && (i - LATE) % 8 == 7)
			for (j = 0; j < 8; j++)
				step_gpu(t, i - LATE - j);
		if (i % 64 == 63)
			tb_flush(t);
	}
	for (j = n - n % 8; j < n; j++)
		step_gpu(t, j);
	tb_flush(t);
	return tb_write(t, name, 0);
}

static void test_stream_long(void)
{
	size_t held_1 = 0, held_2 = 0, walk_1 = 0, walk_2 = 0;
	struct tb t;

	CHECK_EQ(stream_same_walk(build_run(&t, 30000, "stream_30k.trace"), &held_1, &walk_1, NULL), 1);
	tb_free(&t);
	CHECK_EQ(stream_same_walk(build_run(&t, 60000, "stream_60k.trace"), &held_2, &walk_2, NULL), 1);
	tb_free(&t);
	/* About 2.6 records a step: 78,000 and 156,000 in all, a few thousand held at most. */
	CHECK(held_1 > 0 && held_1 < 20000);
	CHECK(held_2 < held_1 + held_1 / 4);
	CHECK(walk_1 > 0 && walk_1 < 5000);
	CHECK(walk_2 < walk_1 + walk_1 / 4);
	fprintf(stderr, "held at most: %zu and %zu calls and operations, the walks %zu and %zu calls "
			"(30,000 and 60,000 steps)\n", held_1, held_2, walk_1, walk_2);
}

/*
 * The report's replay (analysis/savings.h) keeps at most SAVINGS_MAX_ITEMS calls and operations
 * of the window, streamed or loaded whole: a long run is replayed in part, a short one whole.
 */
static void replay_of(const char *path, struct f_replay *out)
{
	struct model_load_opts opts;
	struct trace_reader rd;
	struct findings f;
	struct model m;
	struct stats s;

	CHECK_EQ(trace_reader_open(&rd, path), 0);
	CHECK_EQ(analyze_stream(&rd, &m, &s, &f, NULL, &opts), 1);
	trace_reader_close(&rd);
	*out = f.replay;
	findings_free(&f);
	stats_free(&s);
	model_free(&m);
}

static void test_stream_replay_budget(void)
{
	struct f_replay long_run, short_run;
	struct tb t;

	replay_of(build_run(&t, 60000, "stream_replay_60k.trace"), &long_run);
	tb_free(&t);
	replay_of(build_run(&t, 2000, "stream_replay_2k.trace"), &short_run);
	tb_free(&t);
	CHECK(long_run.done && long_run.is_part);
	CHECK(long_run.items <= SAVINGS_MAX_ITEMS && long_run.items > SAVINGS_MAX_ITEMS / 2);
	CHECK(long_run.error_pct < 2 && long_run.error_pct > -2);
	CHECK(short_run.done && !short_run.is_part);
	CHECK(short_run.items < SAVINGS_MAX_ITEMS / 2);
	fprintf(stderr, "replayed %llu items (%s) of 60,000 steps, %llu of 2,000 (%s)\n",
		(unsigned long long)long_run.items, long_run.is_part ? "part" : "whole",
		(unsigned long long)short_run.items, short_run.is_part ? "part" : "whole");
}

/*
 * Calls only, no GPU operation but counter samples (a millisecond each): no gap to come, so the
 * walks keep no call, and the counters let each sample go as it comes.
 */
static void test_stream_calls_only(void)
{
	size_t held = 0, walk = 0, samples = 0, i;
	struct trace_rec_launch l;
	struct tb t;

	dict(&t);
	pm_config(&t);
	for (i = 0; i < 50000; i++) {
		if (i % 100 == 0)
			pm_sample(&t, BASE + 10000 * i, i);
		memset(&l, 0, sizeof(l));
		l.func = 1;
		l.grid[0] = l.grid[1] = l.grid[2] = 1;
		l.block[0] = l.block[1] = l.block[2] = 32;
		rec_call(&t, TID_A, BASE + 10000 * i, &l, TRACE_REC_LAUNCH, sizeof(l), API_LAUNCH,
			 3000);
		if (i % 1000 == 999)
			tb_flush(&t);
	}
	CHECK_EQ(stream_same_walk(tb_write(&t, "stream_calls.trace", 0), &held, &walk, &samples),
		 1);
	CHECK_EQ(walk, 0);
	CHECK(samples < 100);	/* of 500 */
	CHECK(held < 20000);
	tb_free(&t);
}

/* A sink that only counts, to see why model_stream gives up. */
static void nop_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	(void)ctx, (void)m, (void)p;
}

static void count_call(void *ctx, const struct m_call *c, uint32_t id)
{
	(void)c, (void)id;
	((size_t *)ctx)[0]++;
}

static void count_op(void *ctx, const struct m_gpu_op *g, const struct m_call *call, uint32_t id)
{
	(void)g, (void)call, (void)id;
	((size_t *)ctx)[1]++;
}

static void nop_sample(void *ctx, const struct m_pm_sample *s)
{
	(void)ctx, (void)s;
}

static void nop_floor(void *ctx, uint64_t t)
{
	(void)ctx, (void)t;
}

static const char *why_whole(const char *path)
{
	static char why[256];
	size_t n[2] = { 0, 0 };
	const struct model_sink sink = { nop_begin, count_call, count_op, nop_sample, nop_floor, n };
	struct model_load_opts opts;
	struct trace_reader rd;
	struct first_look p;
	struct model m;
	int ret;

	CHECK_EQ(trace_reader_open(&rd, path), 0);
	ret = model_stream(&m, &rd, &p, &sink, &opts);
	snprintf(why, sizeof(why), "%s", ret == 1 && m.stream_failed ? m.stream_failed : "");
	CHECK(ret == 0 || ret == 1);
	model_free(&m);
	first_look_free(&p);
	trace_reader_close(&rd);
	return why;
}

static void test_stream_whole(void)
{
	struct trace_rec_gpu_corr gc;
	struct tb t;
	size_t i;

	/* A kernel no API record names: the join by launch order needs the whole trace. */
	dict(&t);
	step_calls(&t, 0);
	step_calls(&t, 1);
	step_gpu(&t, 0);
	kernel(&t, BASE + STEP + 9000, 2000, 0, S_KERN_A, 8);
	tb_flush(&t);
	CHECK(strstr(why_whole(tb_write(&t, "stream_unjoined.trace", 0)), "launch order"));
	CHECK_EQ(stream_same(tb_write(&t, "stream_unjoined.trace", 0), NULL), 0);
	CHECK_EQ(report_reads(tb_write(&t, "stream_unjoined.trace", 0)), 2);
	tb_free(&t);

	/*
	 * A kernel whose API record falls between its thread's calls (its launch was not
	 * recorded): the first read places it and loads whole in the second read, not a third.
	 */
	dict(&t);
	for (i = 0; i < 6; i++)
		step_calls(&t, i);
	step_gpu(&t, 0);
	tb_gpu_api(&t, BASE + 4 * STEP + 30000, BASE + 4 * STEP + 31000, 999, TID_A);
	kernel(&t, BASE + 4 * STEP + 32000, 2000, 999, S_KERN_A, 8);
	tb_flush(&t);
	CHECK(strstr(why_whole(tb_write(&t, "stream_nocall.trace", 0)), "no call of its thread"));
	CHECK_EQ(stream_same(tb_write(&t, "stream_nocall.trace", 0), NULL), 0);
	CHECK_EQ(report_reads(tb_write(&t, "stream_nocall.trace", 0)), 2);
	tb_free(&t);

	/* ... of a thread that made no call at all. */
	dict(&t);
	step_calls(&t, 0);
	step_calls(&t, 1);
	step_gpu(&t, 0);
	tb_gpu_api(&t, BASE + STEP + 30000, BASE + STEP + 31000, 999, TID_B + 1);
	kernel(&t, BASE + STEP + 32000, 2000, 999, S_KERN_A, 8);
	tb_flush(&t);
	CHECK(strstr(why_whole(tb_write(&t, "stream_nothread.trace", 0)), "made no call"));
	CHECK_EQ(report_reads(tb_write(&t, "stream_nothread.trace", 0)), 2);
	tb_free(&t);

	/* An API record starting after the kernel it joins, read after it: not streamed. */
	dict(&t);
	for (i = 0; i < 6; i++)
		step_calls(&t, i);
	step_gpu(&t, 0);
	kernel(&t, BASE + 4 * STEP + 1000, 2000, 999, S_KERN_A, 8);
	tb_gpu_api(&t, BASE + 4 * STEP + 1500, BASE + 4 * STEP + 3000, 999, TID_A);
	tb_flush(&t);
	CHECK(strstr(why_whole(tb_write(&t, "stream_apilate.trace", 0)), "starting after"));
	CHECK_EQ(report_reads(tb_write(&t, "stream_apilate.trace", 0)), 2);
	tb_free(&t);

	/* The API record comes before its thread's later calls: it waits for them, then streams. */
	dict(&t);
	step_calls(&t, 0);
	step_gpu(&t, 0);
	step_gpu(&t, 1);
	step_calls(&t, 1);
	step_calls(&t, 2);
	tb_flush(&t);
	CHECK_STR(why_whole(tb_write(&t, "stream_apifirst.trace", 0)), "");
	CHECK_EQ(stream_same(tb_write(&t, "stream_apifirst.trace", 0), NULL), 1);
	tb_free(&t);

	/* An older shim's pushed ids. */
	dict(&t);
	step_calls(&t, 0);
	memset(&gc, 0, sizeof(gc));
	gc.hdr.type = TRACE_REC_GPU_CORR;
	gc.hdr.size = sizeof(gc);
	gc.ext_id = TRACE_CORR_ID(0, 1);
	gc.cupti_corr = 1;
	tb_rec(&t, &gc, sizeof(gc));
	step_gpu(&t, 0);
	tb_flush(&t);
	CHECK(strstr(why_whole(tb_write(&t, "stream_corr.trace", 0)), "pushed"));
	CHECK_EQ(report_reads(tb_write(&t, "stream_corr.trace", 0)), 2);	/* not 3 */
	tb_free(&t);

	/* Nothing to give up on: a short run streams. */
	build_run(&t, 100, "stream_short.trace");
	CHECK_STR(why_whole(tb_write(&t, "stream_short.trace", 0)), "");
	tb_free(&t);
}

/*
 * Times at the end of the clock: a call and a kernel there, ending at 2^64 - 1, in a run with
 * counter samples (an operation waits for the samples starting before it ends): all handed on.
 */
static void test_stream_edges(void)
{
	struct trace_rec_launch l;
	struct tb t;

	dict(&t);
	pm_config(&t);
	step_calls(&t, 0);
	step_gpu(&t, 0);
	pm_sample(&t, BASE + 1000, 1);
	memset(&l, 0, sizeof(l));
	l.func = 1;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = l.block[1] = l.block[2] = 32;
	rec_call(&t, TID_A, UINT64_MAX - 100000, &l, TRACE_REC_LAUNCH, sizeof(l), API_LAUNCH, 5000);
	tb_gpu_api(&t, UINT64_MAX - 99000, UINT64_MAX - 96000, 7777, TID_A);
	kernel(&t, UINT64_MAX - 90000, 90000, 7777, S_KERN_A, 8);
	tb_flush(&t);
	CHECK_EQ(stream_same(tb_write(&t, "stream_edges.trace", 0), NULL), 1);
	tb_free(&t);
}

/*
 * A trace still being written grows between the two reads (here: in the sink's begin, between
 * them): the second read stops where the first did, so the stream hands on what the whole
 * model of the first read's file holds.
 */
struct grow_sink {
	size_t n[2];			/* first: count_call and count_op count here */
	const char *path;
	struct tb more;			/* what is appended */
};

static void grow_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	struct grow_sink *g = ctx;
	FILE *f = fopen(g->path, "ab");

	(void)m, (void)p;
	if (!f)
		abort();
	fwrite(g->more.file, 1, g->more.len, f);
	fclose(f);
}

static void test_stream_growing(void)
{
	struct grow_sink g;
	const struct model_sink sink = { grow_begin, count_call, count_op, nop_sample, nop_floor, &g };
	struct trace_reader rd;
	struct first_look p;
	struct model_load_opts opts;
	struct model m;
	struct tb t;
	size_t i, calls, ops;

	memset(&g, 0, sizeof(g));
	g.path = build_run(&t, 2000, "stream_growing.trace");
	CHECK_EQ(trace_reader_open(&rd, g.path), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	calls = m.nr_calls;
	ops = m.nr_gpu;
	model_free(&m);
	trace_reader_close(&rd);
	/* More steps, as the shim would append them: chunks only (no second header). */
	tb_init(&g.more, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	g.more.len = 0;
	g.more.seq = t.seq;
	for (i = 2000; i < 2100; i++) {
		step_calls(&g.more, i);
		step_gpu(&g.more, i);
	}
	tb_flush(&g.more);
	CHECK_EQ(trace_reader_open(&rd, g.path), 0);
	CHECK_EQ(model_stream(&m, &rd, &p, &sink, &opts), 0);
	CHECK_EQ(g.n[0], calls);
	CHECK_EQ(g.n[1], ops);
	model_free(&m);
	first_look_free(&p);
	trace_reader_close(&rd);
	tb_free(&g.more);
	tb_free(&t);
}

/* A counter sample of device 0 over [start, end), every value @v. */
static void pm_sample_at(struct tb *t, uint64_t start, uint64_t end, float v)
{
	struct trace_rec_pm_sample ps;
	size_t k;

	memset(&ps, 0, sizeof(ps));
	ps.hdr.type = TRACE_REC_PM_SAMPLE;
	ps.hdr.size = sizeof(ps);
	ps.start_ns = start;
	ps.end_ns = end;
	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		ps.value[k] = v;
	tb_rec(t, &ps, sizeof(ps));
}

/*
 * The application's profiler holds CUPTI for steps 1000-8999 of 10000: no GPU record for
 * those steps nor for the 40 around each end of it (the profiler starting, its last work
 * draining), a counter sample in each of those two idle stretches, and one in the profiler's
 * clock that ends after the resumption. Streamed as loaded whole: the gap around the
 * stretch is left out of the window and of the counters (its samples wait for the operation
 * that ends it while the stream lets go of what comes before: the stretch is longer than a
 * release), the coverage stays at most 100 %, and the 8000 launches are counted as left out.
 */
static void test_stream_host_only(void)
{
	struct trace_reader rd;
	struct findings f;
	struct model m;
	struct stats s;
	struct tb t;
	const char *path;
	size_t i, j;

	dict(&t);
	pm_config(&t);
	tb_note(&t, BASE - 1000, TRACE_NOTE_CUPTI_ON, 0);
	for (i = 0; i < 10000 + LATE; i++) {
		if (i < 10000)
			step_calls(&t, i);
		if (i == 1000)
			tb_note(&t, BASE + STEP * 1000 - 500, TRACE_NOTE_CUPTI_OFF, 0);
		if (i == 9000)
			tb_note(&t, BASE + STEP * 9000 - 500, TRACE_NOTE_CUPTI_ON, 0);
		if (i == 961 || i == 9001)
			pm_sample_at(&t, BASE + STEP * i, BASE + STEP * (i + 20), 55.0f);
		if (i == 9010)		/* the profiler's clock */
			pm_sample_at(&t, BASE + STEP * 8990, BASE + STEP * 9000 + 400000, 99.0f);
		if (i >= LATE && (i - LATE) % 8 == 7)
			for (j = i - LATE - 7; j <= i - LATE; j++)
				if (j < 960 || j >= 9040)
					step_gpu(&t, j);
		if (i % 64 == 63)
			tb_flush(&t);
	}
	tb_flush(&t);
	path = tb_write(&t, "stream_host_only.trace", 0);
	CHECK_EQ(stream_same(path, NULL), 1);
	CHECK_EQ(trace_reader_open(&rd, path), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	analyze_model(&m, &s, &f, NULL, 0);	/* one pass: the steps and ranges take its gaps */
	CHECK_EQ(s.gpu.nr_host_only, 1);
	CHECK_EQ(s.gpu.host_only_launches, 8000);
	CHECK(f.excluded_ns > STEP * 8000);
	CHECK(f.ctr.has);
	CHECK(f.ctr.coverage_pct > 0 && f.ctr.coverage_pct <= 100.0);
	CHECK_EQ(f.ctr.nr_left_out, 3);
	CHECK(f.busy_pct > 0 && f.busy_pct <= 100.0);
	findings_free(&f);
	stats_free(&s);
	model_free(&m);
	trace_reader_close(&rd);
	tb_free(&t);
}

/*
 * The H200 fixtures: each streamed one reports as the whole model does; most stream. A report
 * reads each at most twice: the first look, then the stream or the whole load it decided on.
 */
static void test_stream_traces(int argc, char **argv)
{
	int i, streamed = 0;

	check_test = "test_stream_traces";
	for (i = 1; i < argc; i++) {
		long reads = report_reads(argv[i]);

		if (reads > 2)
			fprintf(stderr, "%s: read %ld times for one report\n", argv[i], reads);
		CHECK(reads >= 0 && reads <= 2);
		streamed += stream_same(argv[i], NULL);
	}
	if (argc > 1)
		CHECK(2 * streamed > argc - 1);
	fprintf(stderr, "streamed %d of %d traces, each read at most twice\n", streamed, argc - 1);
}

int main(int argc, char **argv)
{
	RUN(test_stream_long);
	RUN(test_stream_replay_budget);
	RUN(test_stream_calls_only);
	RUN(test_stream_whole);
	RUN(test_stream_edges);
	RUN(test_stream_growing);
	RUN(test_stream_host_only);
	test_stream_traces(argc, argv);
	return TEST_RESULT();
}
