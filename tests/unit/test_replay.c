// SPDX-License-Identifier: MIT
/*
 * test_replay.c - the what-if replay (analysis/replay.h) on hand-built runs whose answers are
 * known — a read-back per step, two streams and an event wait between them, a blocking
 * pageable copy, slow launches, a cycle, two sync sites of which one stops blocking — and,
 * replayed as recorded, every H200 fixture given as an argument gives its recorded span back
 * (within REPLAY_MAX_ERROR_PCT).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "analysis/findings.h"
#include "analysis/replay.h"
#include "model/model.h"
#include "output/export_whatif.h"
#include "trace/trace_reader.h"

#define REPLAY_MAX_ERROR_PCT 2.0

static void test_fixture(const char *path)
{
	struct trace_reader rd;
	struct replay *r;
	const char *why = NULL;
	struct model m;
	uint64_t rec, got;
	double err;
	int k;

	CHECK_EQ(trace_reader_open(&rd, path), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	trace_reader_close(&rd);
	r = replay_build(&m, 0, UINT64_MAX, &why);
	if (!r) {
		printf("%s: not replayed: %s\n", path, why);
		CHECK(why != NULL);
		model_free(&m);
		return;
	}
	rec = replay_recorded_span(r);
	got = replay_run(r, NULL);
	err = rec ? 100.0 * fabs((double)got - (double)rec) / (double)rec : 0;
	printf("%s: span %.3f ms recorded, %.3f ms replayed (%.3f %%);", path, rec / 1e6,
	       got / 1e6, err);
	for (k = 0; k < NR_CAUSES; k++) {
		struct replay_change c;
		uint64_t span;

		if (replay_change_of_cause(k, &c) < 0)
			continue;
		span = replay_run(r, &c);
		printf(" %s %+.1f%%", cause_name(k), got ? 100.0 * ((double)got - (double)span) /
								   (double)got : 0);
	}
	printf("\n");
	CHECK(err <= REPLAY_MAX_ERROR_PCT);
	replay_free(r);
	model_free(&m);
}

#define US 1000ull

/* A hand-built run: calls on threads, operations on streams of device 0. */
struct run {
	struct model m;
	struct m_gpu_shape shapes[4];
};

static void run_init(struct run *r, uint32_t threads)
{
	memset(r, 0, sizeof(*r));
	r->m.nr_threads = threads;
	r->m.threads = calloc(threads, sizeof(*r->m.threads));
	r->m.gpu_shapes = r->shapes;
	r->shapes[0] = (struct m_gpu_shape){ .kind = MG_KERNEL, .stream = 1 };
	r->shapes[1] = (struct m_gpu_shape){ .kind = MG_KERNEL, .stream = 2 };
	r->shapes[2] = (struct m_gpu_shape){ .kind = MG_MEMCPY, .stream = 1, .bytes = 100000000,
					     .copy_kind = 1, .src_kind = TRACE_GPU_MEM_PAGEABLE,
					     .dst_kind = 3 };
	r->shapes[3] = (struct m_gpu_shape){ .kind = MG_MEMCPY, .stream = 1, .bytes = 4,
					     .copy_kind = 2, .src_kind = 3, .dst_kind = 2 };
}

static uint32_t call(struct run *r, uint8_t kind, uint8_t sub, uint32_t thread, uint64_t t0,
		     uint64_t t1)
{
	struct model *m = &r->m;

	m->calls = realloc(m->calls, (m->nr_calls + 1) * sizeof(*m->calls));
	memset(&m->calls[m->nr_calls], 0, sizeof(*m->calls));
	m->calls[m->nr_calls].kind = kind;
	m->calls[m->nr_calls].sub = sub;
	m->calls[m->nr_calls].thread = thread;
	m->calls[m->nr_calls].t0 = t0;
	m->calls[m->nr_calls].t1 = t1;
	return (uint32_t)m->nr_calls++;
}

static void op(struct run *r, uint32_t shape, uint32_t c, uint64_t start, uint64_t end)
{
	struct model *m = &r->m;

	m->gpu = realloc(m->gpu, (m->nr_gpu + 1) * sizeof(*m->gpu));
	m->gpu[m->nr_gpu++] = (struct m_gpu_op){ start, end, c, shape };
}

static void run_free(struct run *r)
{
	free(r->m.calls);
	free(r->m.gpu);
	free(r->m.threads);
}

/*
 * Each 1 ms step: 3 launches of 1 us (each kernel 200 us), a 4-byte read-back that waits for
 * the kernels, then 300 us of host work. Without the wait, the host launches the next step
 * while the GPU runs: the GPU, 600 us a step, bounds it.
 */
static void test_readback(void)
{
	struct run r;
	struct replay *rp;
	struct replay_change c;
	const char *why = NULL;
	uint64_t t = 0, rec, as_is, no_sync;
	int step, k;

	run_init(&r, 1);
	for (step = 0; step < 10; step++) {
		uint64_t g = t + 5 * US, rb;

		for (k = 0; k < 3; k++) {
			uint32_t l = call(&r, MC_LAUNCH, 0, 0, t + k * US, t + k * US + US);

			op(&r, 0, l, g, g + 200 * US);
			g += 200 * US;
		}
		/* the read-back: its copy runs after the kernels, the call returns 10 us later */
		rb = call(&r, MC_COPY, TRACE_COPY_D2H, 0, t + 3 * US, g + 12 * US);
		op(&r, 3, rb, g, g + 2 * US);
		t = g + 12 * US + 300 * US;
	}
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (!rp)
		return;
	rec = replay_recorded_span(rp);
	as_is = replay_run(rp, NULL);
	CHECK_EQ(as_is, rec);
	CHECK_EQ(replay_change_of_cause(CAUSE_HOST_SYNC, &c), 0);
	no_sync = replay_run(rp, &c);
	/* 10 steps of (5 + 600 + 12 + 300) us as recorded; without waiting, the GPU's 10 x 602 us
	 * (the copy queued behind the kernels) plus the first launch latency */
	CHECK_EQ(rec, 10 * (5 + 600 + 12 + 300) * US - 300 * US);
	CHECK(no_sync <= 10 * 602 * US + 20 * US && no_sync >= 10 * 602 * US);
	replay_free(rp);
	run_free(&r);
}

/*
 * Two host_sync sites a step, on two streams: launch kA (stream 1, 200 us), cuStreamSynchronize
 * waits for it and returns 10 us after; 100 us of host work; launch kB (stream 2, 300 us),
 * cuCtxSynchronize waits for it, returns 10 us after; 50 us of host work. A step is 680 us.
 * Without the first site's wait the host goes on 10 us after the sync began: each step is
 * that site's wait shorter (204 us: from the sync's start to kA's end); kB, on its own stream,
 * does not wait for kA. Without the second's, each step is 304 us shorter but the last, whose
 * end is then kB's (10 us earlier than the sync's return).
 */
static void test_sync_sites(void)
{
	static const char *const strings[] = { NULL, "_Z7kernelAv", "_Z7kernelBv" };
	static const struct m_api apis[] = { { "cuLaunchKernel", 0, 0 },
					     { "cuStreamSynchronize", 0, 0 },
					     { "cuCtxSynchronize", 0, 0 } };
	struct run r;
	struct replay *rp;
	struct replay_change c = { .cpu_factor = 1.0, .no_sync = 1 };
	const struct replay_site *s0, *s1;
	const char *why = NULL;
	uint8_t mask[2];
	uint64_t t = 0, rec, as_is, all, first, last, t0, t1;
	int step;

	run_init(&r, 1);
	r.m.strings = (char **)strings;
	r.m.nr_strings = 3;
	r.m.apis = (struct m_api *)apis;
	r.m.nr_apis = 3;
	r.shapes[0].name = 1;			/* kA on stream 1 */
	r.shapes[1].name = 2;			/* kB on stream 2 */
	for (step = 0; step < 10; step++) {
		uint32_t la, sa, lb, sb;

		la = call(&r, MC_LAUNCH, 0, 0, t, t + 1 * US);
		sa = call(&r, MC_SYNC, TRACE_SYNC_STREAM, 0, t + 1 * US, t + 215 * US);
		lb = call(&r, MC_LAUNCH, 0, 0, t + 315 * US, t + 316 * US);
		sb = call(&r, MC_SYNC, TRACE_SYNC_CTX, 0, t + 316 * US, t + 630 * US);
		r.m.calls[sa].api = 1;
		r.m.calls[sb].api = 2;
		op(&r, 0, la, t + 5 * US, t + 205 * US);
		op(&r, 1, lb, t + 320 * US, t + 620 * US);
		t += 680 * US;
	}
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (!rp) {
		run_free(&r);
		return;
	}
	rec = replay_recorded_span(rp);
	as_is = replay_run(rp, NULL);
	CHECK_EQ(rec, 9 * 680 * US + 630 * US);
	CHECK_EQ(as_is, rec);
	replay_window_times(rp, REPLAY_RECORDED, &first, &last);
	CHECK_EQ(first, 0);
	CHECK_EQ(last, rec);

	/* The sites, named as the report names them, with their calls and recorded time */
	CHECK_EQ(replay_nr_sites(rp), 2);
	s0 = replay_site(rp, 0);
	s1 = replay_site(rp, 1);
	CHECK_STR(s0->entry, "cuStreamSynchronize");
	CHECK_STR(s0->after, "_Z7kernelAv");
	CHECK_EQ(s0->nr_calls, 10);
	CHECK_EQ(s0->waited_ns, 10 * 214 * US);
	CHECK_STR(s1->entry, "cuCtxSynchronize");
	CHECK_STR(s1->after, "_Z7kernelBv");
	CHECK_EQ(s1->nr_calls, 10);

	/* What a site spec names: the entry point exact; the name whole, its end, its start... */
	memset(mask, 0, sizeof(mask));
	CHECK_EQ(replay_sites_match(rp, "cuStreamSynchronize", mask), 1);
	CHECK(mask[0] && !mask[1]);
	memset(mask, 0, sizeof(mask));
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after _Z7kernelBv", mask), 1);
	CHECK(!mask[0] && mask[1]);
	memset(mask, 0, sizeof(mask));
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after kernelBv", mask), 1);
	CHECK_EQ(replay_sites_match(rp, "cuStreamSynchronize after _Z7ker...", mask), 1);
	CHECK(mask[0] && mask[1]);
	/* ... and as the outputs print it: demangled whole (its end, its start), short */
	memset(mask, 0, sizeof(mask));
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after kernelB()", mask), 1);
	CHECK(!mask[0] && mask[1]);
	memset(mask, 0, sizeof(mask));
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after kernelB", mask), 1);
	CHECK(!mask[0] && mask[1]);
	memset(mask, 0, sizeof(mask));
	CHECK_EQ(replay_sites_match(rp, "cuStreamSynchronize after lA()", mask), 1);
	CHECK_EQ(replay_sites_match(rp, "cuStreamSynchronize after kern...", mask), 1);
	CHECK(mask[0] && !mask[1]);
	memset(mask, 0, sizeof(mask));
	CHECK_EQ(replay_sites_match(rp, "cuStream", mask), 0);
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after _Z7kernelAv", mask), 0);
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after ", mask), 0);
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after kernelA", mask), 0);
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after kernel", mask), 0);
	CHECK_EQ(replay_sites_match(rp, "cuCtxSynchronize after kernelB(", mask), 0);
	CHECK(!mask[0] && !mask[1]);

	/* No site asked: nothing changes; the first alone: its wait a step, 204 us */
	c.sync_sites = mask;
	CHECK_EQ(replay_run(rp, &c), as_is);
	mask[0] = 1;
	CHECK_EQ(replay_run(rp, &c), as_is - 10 * 204 * US);
	/* where that replay put things: the sync returns 10 us after it began, kB (operation 1)
	 * starts 5 us after its launch, 100 us later; as recorded, as they were */
	CHECK_EQ(replay_call_times(rp, 1, REPLAY_LAST_RUN, &t0, &t1), 1);
	CHECK(t0 == 1 * US && t1 == 11 * US);
	CHECK_EQ(replay_call_times(rp, 1, REPLAY_RECORDED, &t0, &t1), 1);
	CHECK(t0 == 1 * US && t1 == 215 * US);
	CHECK_EQ(replay_op_times(rp, 1, REPLAY_LAST_RUN, &t0, &t1), 1);
	CHECK(t0 == 116 * US && t1 == 416 * US);
	replay_window_times(rp, REPLAY_LAST_RUN, &first, &last);
	CHECK(first == 0 && last == as_is - 10 * 204 * US);
	/* the second alone: 304 us a step, the last one's end kB's */
	mask[0] = 0, mask[1] = 1;
	CHECK_EQ(replay_run(rp, &c), as_is - 9 * 304 * US - 10 * US);
	/* both: kA on stream 1 and kB on stream 2 pile up; kB's 300 us a step bound the run */
	mask[0] = 1;
	all = replay_run(rp, &c);
	c.sync_sites = NULL;
	CHECK_EQ(replay_run(rp, &c), all);
	CHECK(all < as_is - 9 * 304 * US - 10 * US);
	CHECK(all >= 10 * 300 * US);
	replay_free(rp);

	/* A window of the last 5 steps: the sites count their calls in it, and only its things
	 * belong to it */
	rp = replay_build(&r.m, 5 * 680 * US, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (rp) {
		CHECK_EQ(replay_site(rp, 0)->nr_calls, 5);
		CHECK_EQ(replay_site(rp, 1)->waited_ns, 5 * 314 * US);
		CHECK_EQ(replay_call_times(rp, 1, REPLAY_RECORDED, &t0, &t1), 0);
		CHECK_EQ(replay_op_times(rp, 10, REPLAY_RECORDED, &t0, &t1), 1);
		CHECK_EQ(t0, 5 * 680 * US + 5 * US);
		replay_free(rp);
	}
	/* ... and a wait that began before the window and ended in it (step 4's second) */
	rp = replay_build(&r.m, 4 * 680 * US + 400 * US, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (rp) {
		CHECK_EQ(replay_site(rp, 0)->nr_calls, 5);
		CHECK_EQ(replay_site(rp, 1)->nr_calls, 6);
		replay_free(rp);
	}
	r.m.strings = NULL;
	r.m.apis = NULL;
	run_free(&r);
}

/* How many times @needle occurs in @s. */
static int count_of(const char *s, const char *needle)
{
	int n = 0;

	while ((s = strstr(s, needle)) != NULL)
		n++, s++;
	return n;
}

/*
 * The timeline export: ten kernels on one stream, each launched 10 us after the one before and
 * lasting 100 us, overlap as recorded (a clock that disagrees, or CUPTI's word for concurrent
 * copies; the replay keeps them side by side): each goes to a lane of its own beside the
 * stream, up to 8, and the ninth and tenth are cut to end with the eighth (by 10 and 20 us).
 * Replayed without CPU time between the launches (1 us each), the kernels start 1 us apart:
 * the two cut by 1 and 2 us, the last at 9 + 5 us.
 */
static void test_export(void)
{
	struct run r;
	struct replay *rp;
	struct replay_change c = { .cpu_factor = 0 };
	const char *why = NULL;
	char *doc = NULL, *replayed;
	size_t len = 0;
	FILE *f;
	int k;

	run_init(&r, 1);
	r.m.threads[0].tid = 77;
	for (k = 0; k < 10; k++) {
		uint32_t l = call(&r, MC_LAUNCH, 0, 0, k * 10 * US, k * 10 * US + US);

		op(&r, 0, l, k * 10 * US + 5 * US, k * 10 * US + 105 * US);
	}
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (!rp) {
		run_free(&r);
		return;
	}
	CHECK_EQ(replay_run(rp, NULL), 9 * 10 * US + 105 * US);
	CHECK_EQ(replay_run(rp, &c), 9 * US + 105 * US);
	f = open_memstream(&doc, &len);
	CHECK_EQ(export_whatif_chrome(f, &r.m, rp, "--cpu-speedup inf"), 0);
	fclose(f);
	replayed = strstr(doc, "\"replayed (--cpu-speedup inf)\"");
	CHECK(replayed != NULL);
	if (replayed) {
		replayed[-1] = 0;	/* doc: the recorded process, replayed: the other */
		CHECK_EQ(count_of(doc, "\"ph\":\"X\""), 20);
		CHECK_EQ(count_of(replayed, "\"ph\":\"X\""), 20);
		CHECK_EQ(count_of(doc, "\"host thread 77\""), 1);
		CHECK_EQ(count_of(doc, "(overlapping "), 7);
		CHECK_EQ(count_of(doc, "\"GPU 0 stream 1 (overlapping 7)\""), 1);
		CHECK_EQ(count_of(doc, "\"clipped_ns\":"), 2);
		CHECK_EQ(count_of(doc, "\"clipped_ns\":10000}"), 1);
		CHECK_EQ(count_of(doc, "\"clipped_ns\":20000}"), 1);
		CHECK_EQ(count_of(doc, "\"ts\":95.000,\"dur\":80.000"), 1);	/* the tenth, cut */
		CHECK_EQ(count_of(replayed, "(overlapping "), 7);
		CHECK_EQ(count_of(replayed, "\"clipped_ns\":"), 2);
		CHECK_EQ(count_of(replayed, "\"clipped_ns\":1000}"), 1);
		CHECK_EQ(count_of(replayed, "\"clipped_ns\":2000}"), 1);
		CHECK_EQ(count_of(replayed, "\"ts\":9.000,\"dur\":1.000,\"name\":\"api ?\""), 1);
		CHECK_EQ(count_of(replayed, "\"ts\":14.000,\"dur\":98.000"), 1);
	}
	free(doc);
	replay_free(rp);
	run_free(&r);
}

/*
 * Two streams: stream 2's kernel waits (an event) for stream 1's, 50 us after the launch
 * would allow; replayed as recorded, and with stream 1's kernel faster (full SM fill is not
 * known here: the launch change instead) the dependency still holds.
 */
static void test_event_wait(void)
{
	struct run r;
	struct replay *rp;
	const char *why = NULL;
	uint32_t a, b;

	run_init(&r, 1);
	a = call(&r, MC_LAUNCH, 0, 0, 0, 1 * US);
	b = call(&r, MC_LAUNCH, 0, 0, 2 * US, 3 * US);
	op(&r, 0, a, 5 * US, 105 * US);		/* stream 1: 100 us */
	op(&r, 1, b, 106 * US, 126 * US);	/* stream 2: waits for it */
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (rp) {
		CHECK_EQ(replay_run(rp, NULL), 126 * US);
		replay_free(rp);
	}
	run_free(&r);
}

/* A blocking pageable copy of 100 MB at 8 GB/s: pinned and asynchronous, 50 GB/s. */
static void test_pageable(void)
{
	struct run r;
	struct replay *rp;
	struct replay_change c;
	const char *why = NULL;
	uint32_t cp, l;
	uint64_t pinned;
	int measured;

	run_init(&r, 1);
	cp = call(&r, MC_COPY, TRACE_COPY_H2D, 0, 0, 12600 * US);
	op(&r, 2, cp, 100 * US, 12600 * US - 2000 * US);
	l = call(&r, MC_LAUNCH, 0, 0, 12610 * US, 12611 * US);
	op(&r, 0, l, 12615 * US, 13615 * US);
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (!rp)
		return;
	CHECK_EQ(replay_run(rp, NULL), 13615 * US);
	replay_change_of_cause(CAUSE_MEMCPY, &c);
	pinned = replay_run(rp, &c);
	CHECK(replay_pinned_bw(rp, &measured) == 50e9 && !measured);
	/* the copy 2 ms at 50 GB/s; the kernel after it on the stream, 1 ms */
	CHECK(pinned >= 3100 * US && pinned <= 3200 * US);
	replay_free(rp);
	run_free(&r);
}

/* An operation that starts before its launch call and a call inside a call: no cycle. */
static void test_odd_order(void)
{
	struct run r;
	struct replay *rp;
	const char *why = NULL;
	uint32_t outer, inner;

	run_init(&r, 1);
	outer = call(&r, MC_OTHER, 0, 0, 0, 100 * US);
	inner = call(&r, MC_LAUNCH, 0, 0, 10 * US, 20 * US);
	op(&r, 0, inner, 5 * US, 50 * US);	/* a clock that disagrees */
	(void)outer;
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (rp) {
		CHECK(replay_run(rp, NULL) >= 100 * US);
		replay_free(rp);
	}
	run_free(&r);
}

/*
 * A corrupt order: kernel A waits for B (another stream's, ended just before it), a call waits
 * for A, and B is launched after that call (its times before its launch): a cycle, refused.
 */
static void test_cycle(void)
{
	struct run r;
	const char *why = NULL;
	uint32_t l0, l1, l2, l3;

	run_init(&r, 1);
	l0 = call(&r, MC_LAUNCH, 0, 0, 0, 1 * US);
	l1 = call(&r, MC_LAUNCH, 0, 0, 1 * US, 2 * US);
	l2 = call(&r, MC_SYNC, TRACE_SYNC_CTX, 0, 2 * US, 305 * US);
	l3 = call(&r, MC_LAUNCH, 0, 0, 306 * US, 307 * US);
	op(&r, 0, l0, 5 * US, 10 * US);		/* C, stream 1: a launch latency of 5 us */
	op(&r, 1, l3, 150 * US, 195 * US);	/* B, stream 2 */
	op(&r, 0, l1, 200 * US, 300 * US);	/* A, stream 1 */
	(void)l2;
	CHECK(replay_build(&r.m, 0, UINT64_MAX, &why) == NULL);
	CHECK(why && strstr(why, "impossible order"));
	run_free(&r);
}

/*
 * A thread's first call follows the other thread's call that ended last before it: with the
 * CPU time halved it comes earlier with it (thread 0: A [0, 10], 200 us of CPU, B [210, 220];
 * thread 1: C [300, 310], 80 us after B, its kernel 315..415 us).
 */
static void test_second_thread(void)
{
	struct run r;
	struct replay *rp;
	struct replay_change c;
	const char *why = NULL;
	uint32_t k;

	run_init(&r, 2);
	call(&r, MC_OTHER, 0, 0, 0, 10 * US);
	call(&r, MC_OTHER, 0, 0, 210 * US, 220 * US);
	k = call(&r, MC_LAUNCH, 0, 1, 300 * US, 310 * US);
	op(&r, 0, k, 315 * US, 415 * US);
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (rp) {
		CHECK_EQ(replay_run(rp, NULL), 415 * US);
		CHECK_EQ(replay_change_of_cause(CAUSE_CPU_BOUND, &c), 0);
		/* B at 110, C at 120 + 40, its kernel 15 us after: 175 .. 275 */
		CHECK_EQ(replay_run(rp, &c), 275 * US);
		replay_free(rp);
	}
	run_free(&r);
}

/*
 * Kernels of a CUDA graph side by side on their launch's stream: replayed as recorded, none
 * waits for the one it overlaps (one launch [0, 5]; 10..110, 20..60, then 110..150).
 */
static void test_side_by_side(void)
{
	struct run r;
	struct replay *rp;
	const char *why = NULL;
	uint32_t g;

	run_init(&r, 1);
	g = call(&r, MC_GRAPH_LAUNCH, 0, 0, 0, 5 * US);
	op(&r, 0, g, 10 * US, 110 * US);
	op(&r, 0, g, 20 * US, 60 * US);
	op(&r, 0, g, 110 * US, 150 * US);
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (rp) {
		CHECK_EQ(replay_run(rp, NULL), 150 * US);
		replay_free(rp);
	}
	run_free(&r);
}

/*
 * Ten launches 15 us apart (10 us calls, 5 us of dispatch between them), each kernel 1 us,
 * 12 us after its call began: in a CUDA graph's replay the launches cost
 * REPLAY_GRAPH_LAUNCH_NS each and the dispatch between them nothing; a gap of 30 us (real host
 * work, REPLAY_GRAPH_GAP_NS and more) stays.
 */
static void test_launch_run(void)
{
	struct run r;
	struct replay *rp;
	struct replay_change c;
	const char *why = NULL;
	uint64_t t = 0, g = REPLAY_GRAPH_LAUNCH_NS;
	int i;

	run_init(&r, 1);
	for (i = 0; i < 10; i++) {
		uint32_t l = call(&r, MC_LAUNCH, 0, 0, t, t + 10 * US);

		op(&r, 0, l, t + 12 * US, t + 13 * US);
		t += i == 4 ? 40 * US : 15 * US;	/* after the fifth: 30 us of host work */
	}
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (rp) {
		CHECK_EQ(replay_run(rp, NULL), 9 * 15 * US + 25 * US + 13 * US);
		CHECK_EQ(replay_change_of_cause(CAUSE_LAUNCH_OVERHEAD, &c), 0);
		/* calls back to back at g each, but 30 us kept after the fifth; the last kernel
		 * 12 us after its call */
		CHECK_EQ(replay_run(rp, &c), 9 * g + 30 * US + 13 * US);
		replay_free(rp);
	}
	run_free(&r);
}

/*
 * Calls of no length — a first call of a thread, two threads' first calls at one instant —
 * are no cycle: a first call follows another thread's call made before it.
 */
static void test_zero_length(void)
{
	struct run r;
	struct replay *rp;
	const char *why = NULL;
	uint32_t l;

	run_init(&r, 2);
	l = call(&r, MC_LAUNCH, 0, 0, 0, 1 * US);
	op(&r, 0, l, 5 * US, 100 * US);
	call(&r, MC_SYNC, TRACE_SYNC_CTX, 1, 200 * US, 200 * US);
	l = call(&r, MC_LAUNCH, 0, 0, 300 * US, 301 * US);
	op(&r, 0, l, 305 * US, 400 * US);
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	if (rp) {
		CHECK_EQ(replay_run(rp, NULL), 400 * US);
		replay_free(rp);
	}
	run_free(&r);

	run_init(&r, 2);
	l = call(&r, MC_LAUNCH, 0, 0, 100 * US, 100 * US);
	op(&r, 0, l, 105 * US, 200 * US);
	call(&r, MC_SYNC, TRACE_SYNC_CTX, 1, 100 * US, 100 * US);
	rp = replay_build(&r.m, 0, UINT64_MAX, &why);
	CHECK(rp != NULL);
	replay_free(rp);
	run_free(&r);
}

int main(int argc, char **argv)
{
	int i;

	RUN(test_cycle);

	RUN(test_readback);
	RUN(test_event_wait);
	RUN(test_pageable);
	RUN(test_sync_sites);
	RUN(test_export);
	RUN(test_odd_order);
	RUN(test_second_thread);
	RUN(test_side_by_side);
	RUN(test_launch_run);
	RUN(test_zero_length);
	for (i = 1; i < argc; i++)
		test_fixture(argv[i]);
	return TEST_RESULT();
}
