// SPDX-License-Identifier: MIT
/*
 * test_steps.c - the step finder (model/steps.h) on hand-made launch streams and NVTX events
 * whose steps are known: NVTX step ranges after a slow start-up with slow first steps, an
 * anchor kernel found in a launch stream whose first step runs another sequence, per-operation
 * ranges (as emit_nvtx makes them) that are no steps, a stream without a period, the user's
 * choices, and NVTX input that cannot be followed (unbalanced, thousands deep, ends without
 * starts), counted and bounded.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/model.h"
#include "model/steps.h"

#define MS 1000000ull

enum { S_STEP = 1, S_FWD, S_OTHER, S_MM, S_ADD, S_NR };

static struct model model_with_strings(void)
{
	static char *strings[S_NR] = { NULL, "train_step", "forward", "setup", "aten::mm",
				       "aten::add" };
	struct model m;

	memset(&m, 0, sizeof(m));
	m.strings = strings;
	m.nr_strings = S_NR;
	return m;
}

static void nvtx(struct steps_finder *f, uint8_t kind, uint32_t thread, uint64_t t, uint32_t name,
		 uint64_t id)
{
	struct m_nvtx e = { .t = t, .id = id, .thread = thread, .name = name, .kind = kind };

	steps_nvtx(f, &e);
}

/* 20 steps of 10 ms (the first two 40 ms) after 3 s of start-up, each with a nested range. */
static void test_nvtx_steps(void)
{
	struct steps_finder *f = steps_finder_new();
	const struct model m = model_with_strings();
	struct steps_found s;
	uint64_t t = 3000 * MS;
	int i;

	nvtx(f, MN_PUSH, 0, 10 * MS, S_OTHER, 0);	/* start-up work in a range of its own */
	nvtx(f, MN_POP, 0, 2900 * MS, 0, 0);
	for (i = 0; i < 20; i++) {
		uint64_t len = i < 2 ? 40 * MS : 10 * MS;

		nvtx(f, MN_PUSH, 0, t, S_STEP, 0);
		nvtx(f, MN_PUSH, 0, t + 1 * MS, S_FWD, 0);
		nvtx(f, MN_POP, 0, t + 5 * MS, 0, 0);
		nvtx(f, MN_POP, 0, t + len, 0, 0);
		t += len + MS / 10;
	}
	steps_finish(f, &m, NULL, 0, t + 100 * MS, &s);
	CHECK_EQ(s.source, STEPS_NVTX);
	CHECK_EQ(s.name, S_STEP);
	CHECK_EQ(s.count, 20);
	CHECK_EQ(s.nr, 20);
	CHECK_EQ(s.warmup, 2);
	CHECK_EQ(s.first_start, 3000 * MS);
	CHECK_EQ(s.steady_start, s.v[2].start);
	CHECK_EQ(s.steady_end, s.v[19].end);
	CHECK_EQ(s.median_ns, 10 * MS);
	CHECK_EQ(s.nr_unbalanced, 0);
	steps_found_free(&s);

	/* --steps 5:10 */
	{
		struct steps_options o = { .has_steps = 1, .steps_from = 5, .steps_to = 10 };

		steps_finish(f, &m, &o, 0, t, &s);
		CHECK_EQ(s.warmup, 4);
		CHECK_EQ(s.steady_start, s.v[4].start);
		CHECK_EQ(s.steady_end, s.v[9].end);
		steps_found_free(&s);
	}
	/* --step-range forward: that range, though nested */
	{
		struct steps_options o = { .range_name = "forward" };

		steps_finish(f, &m, &o, 0, t, &s);
		CHECK_EQ(s.source, STEPS_NONE);	/* never at the top level */
		CHECK(s.why && strstr(s.why, "--step-range"));
		steps_found_free(&s);
	}
	/* --whole */
	{
		struct steps_options o = { .whole = 1 };

		steps_finish(f, &m, &o, 0, t, &s);
		CHECK_EQ(s.source, STEPS_NONE);
		steps_found_free(&s);
	}
	steps_finder_free(f);
}

/*
 * A launch stream: 200 start-up launches of distinct kernels, then 30 steps of the sequence
 * 10 11 12 13 14 15 12 13 (kernel 12 and 13 twice), the first step with two extra kernels.
 */
static void test_auto_steps(void)
{
	static const uint32_t seq[] = { 10, 11, 12, 13, 14, 15, 12, 13 };
	struct steps_finder *f = steps_finder_new();
	struct model m = model_with_strings();
	struct m_func funcs[32];
	struct steps_found s;
	uint64_t t = 0;
	int i, k;

	memset(funcs, 0, sizeof(funcs));
	funcs[10].name = S_MM;
	m.funcs = funcs;
	m.nr_funcs = 32;
	for (i = 0; i < 200; i++, t += 10 * MS)
		steps_launch(f, 0, 100 + (uint32_t)i, t);
	for (i = 0; i < 30; i++) {
		uint64_t step_t = t;

		for (k = 0; k < 8; k++, t += 100000)
			steps_launch(f, 0, seq[k], t);
		if (i == 0) {
			steps_launch(f, 0, 20, t);
			steps_launch(f, 0, 21, t + 1000);
			t += 200 * MS;	/* compiling */
		}
		t = step_t + (i == 0 ? 300 * MS : 5 * MS);
	}
	steps_finish(f, &m, NULL, 0, t, &s);
	CHECK_EQ(s.source, STEPS_AUTO);
	CHECK_EQ(s.anchor_func, 10);	/* of the four once a step, the first */
	CHECK_EQ(s.name, S_MM);
	CHECK_EQ(s.anchor_gap, 8);
	CHECK_EQ(s.count, 30);
	CHECK_EQ(s.warmup, 1);
	CHECK_EQ(s.first_start, 2000 * MS);
	CHECK_EQ(s.steady_start, 2000 * MS + 300 * MS);
	CHECK_EQ(s.median_ns, 5 * MS);
	steps_found_free(&s);

	/* Two threads launching the anchor: not one loop's period. */
	steps_launch(f, 1, 10, t);
	steps_finish(f, &m, NULL, 0, t, &s);
	CHECK_EQ(s.source, STEPS_AUTO);
	CHECK(s.anchor_func != 10);
	steps_found_free(&s);
	steps_finder_free(f);
}

/*
 * A jitted loop replaying one CUDA graph a step (as JAX does), among bursts of autotuning
 * launches on other threads and a regular burst of a kernel on the main thread: the graph.
 */
static void test_graph_steps(void)
{
	struct steps_finder *f = steps_finder_new();
	struct model m = model_with_strings();
	struct steps_found s;
	uint64_t t = 0;
	int i, k;

	for (i = 0; i < 7; i++)		/* autotuning: regular, short */
		for (k = 0; k < 6; k++, t += 1000)
			steps_launch(f, 1, 50 + (uint32_t)k, t);
	for (i = 0; i < 5; i++, t += 1000)	/* set-up kernels on the main thread */
		steps_launch(f, 0, 60 + (uint32_t)i, t);
	for (i = 0; i < 100; i++, t += MS)
		steps_launch(f, 0, STEPS_GRAPH_FUNC, t);
	steps_finish(f, &m, NULL, 0, t, &s);
	CHECK_EQ(s.source, STEPS_AUTO);
	CHECK_EQ(s.anchor_func, STEPS_GRAPH_FUNC);
	CHECK_EQ(s.count, 100);
	CHECK_EQ(s.median_ns, MS);
	steps_found_free(&s);
	steps_finder_free(f);
}

/* Per-operation ranges (emit_nvtx): many, short, no step among them; no period either. */
static void test_no_steps(void)
{
	struct steps_finder *f = steps_finder_new();
	const struct model m = model_with_strings();
	struct steps_found s;
	uint64_t t = 0;
	int i;

	for (i = 0; i < 1000; i++, t += MS) {
		nvtx(f, MN_PUSH, 0, t, i % 3 ? S_MM : S_ADD, 0);
		nvtx(f, MN_POP, 0, t + MS / 10, 0, 0);
		steps_launch(f, 0, (uint32_t)(1000 + (i * 7919) % 997), t);
	}
	steps_finish(f, &m, NULL, 0, t, &s);
	CHECK_EQ(s.source, STEPS_NONE);
	CHECK(s.why && strstr(s.why, "period"));
	CHECK_EQ(s.nr_ranges, 1000);
	steps_found_free(&s);
	steps_finder_free(f);

	f = steps_finder_new();
	steps_finish(f, &m, NULL, 0, 0, &s);
	CHECK_EQ(s.source, STEPS_NONE);
	steps_found_free(&s);
	steps_finder_free(f);
}

/* What cannot be followed is counted; the steps around it are still found. */
static void test_bad_nvtx(void)
{
	struct steps_finder *f = steps_finder_new();
	const struct model m = model_with_strings();
	struct steps_found s;
	uint64_t t = 0;
	int i;

	nvtx(f, MN_POP, 0, t++, 0, 0);		/* a pop with nothing pushed */
	nvtx(f, MN_END, 1, t++, 0, 777);	/* an end without a start */
	nvtx(f, MN_START, 1, t++, S_OTHER, 5);	/* a start never ended */
	for (i = 0; i < 10000; i++)		/* thousands deep on another thread */
		nvtx(f, MN_PUSH, 2, t++, S_FWD, 0);
	for (i = 0; i < 10; i++) {		/* steps as start/end ranges, ended elsewhere */
		nvtx(f, MN_START, 0, t, S_STEP, 100 + (uint64_t)i);
		nvtx(f, MN_END, 3, t + MS, 0, 100 + (uint64_t)i);
		t += 2 * MS;
	}
	steps_finish(f, &m, NULL, 0, t, &s);
	CHECK_EQ(s.nr_unbalanced, 1);
	CHECK_EQ(s.nr_unmatched_ends, 2);	/* the end without a start, the start never ended */
	CHECK_EQ(s.nr_too_deep, 10000 - STEPS_MAX_DEPTH);
	CHECK_EQ(s.source, STEPS_NVTX);
	CHECK_EQ(s.count, 10);
	CHECK_EQ(s.median_ns, MS);
	steps_found_free(&s);
	steps_finder_free(f);
}

int main(void)
{
	RUN(test_nvtx_steps);
	RUN(test_auto_steps);
	RUN(test_graph_steps);
	RUN(test_no_steps);
	RUN(test_bad_nvtx);
	return TEST_RESULT();
}
