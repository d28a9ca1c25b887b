// SPDX-License-Identifier: MIT
/*
 * test_ranges.c - the NVTX range table (analysis/ranges.h over model/nvtx_ranges.h) on
 * hand-made events whose answer is known: nested push/pop ranges and a start/end range of no
 * thread, launches and operations inside them by their own thread, by a thread with no range of
 * its own (work handed over) and by one with its own, the pieces of
 * an idle gap in the ranges they fall in, a name nested in itself counted once, the window; the
 * interval tree against a brute force on random nestings; and NVTX input that cannot be
 * followed (unbalanced, 70 deep, ends without starts, ranges never ended, names and ranges past
 * the limits), counted and bounded.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "analysis/findings.h"
#include "analysis/ranges.h"
#include "model/first_look.h"
#include "model/model.h"

#define MS 1000000ull

enum { S_STEP = 1, S_FWD, S_BWD, S_ASYNC, S_EMIT1, S_EMIT2, S_EMIT3, S_NR };

static char *strings[S_NR] = { NULL, "step", "forward", "backward", "prefetch",
			       "aten::addmm, seq = 45, op_id = 569",
			       "aten::addmm, seq = 46, op_id = 570, sizes = [[512, 2048]]",
			       "aten::div, op_id = 3281" };

static struct model model_with_strings(void)
{
	struct model m;

	memset(&m, 0, sizeof(m));
	m.strings = strings;
	m.nr_strings = S_NR;
	return m;
}

static void ev(struct first_look *p, uint8_t kind, uint32_t thread, uint64_t t, uint32_t name,
	       uint64_t id)
{
	struct m_nvtx e = { .t = t, .id = id, .thread = thread, .name = name, .kind = kind };

	first_look_nvtx(p, &e);
}

static struct m_call launch(uint32_t thread, uint64_t t0)
{
	struct m_call c;

	memset(&c, 0, sizeof(c));
	c.kind = MC_LAUNCH;
	c.thread = thread;
	c.t0 = t0;
	c.t1 = t0 + 1000;
	return c;
}

static const struct range_row *row(const struct range_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nr_rows; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	return NULL;
}

/* What is inside what: launches, their GPU time, a gap's idle time by cause. */
static void test_inside(void)
{
	struct model m = model_with_strings();
	struct first_look p;
	struct range_table t;
	struct ranges_acc *a;
	struct m_call c0 = launch(0, 25 * MS), c1 = launch(1, 55 * MS), c2 = launch(2, 215 * MS);
	struct m_call c3 = launch(3, 55 * MS);
	struct m_gpu_op g;
	const struct range_row *r;

	first_look_init(&p);
	ev(&p, MN_PUSH, 0, 0, S_STEP, 0);
	ev(&p, MN_PUSH, 0, 10 * MS, S_FWD, 0);
	ev(&p, MN_POP, 0, 40 * MS, 0, 0);
	ev(&p, MN_START, 0, 20 * MS, S_ASYNC, 7);	/* ended by another thread */
	ev(&p, MN_PUSH, 0, 50 * MS, S_BWD, 0);
	ev(&p, MN_POP, 0, 90 * MS, 0, 0);
	ev(&p, MN_POP, 0, 100 * MS, 0, 0);
	ev(&p, MN_END, 1, 60 * MS, 0, 7);
	ev(&p, MN_PUSH, 3, 52 * MS, S_FWD, 0);		/* a thread with ranges of its own */
	ev(&p, MN_POP, 3, 58 * MS, 0, 0);
	ev(&p, MN_PUSH, 2, 200 * MS, S_STEP, 0);	/* a step inside a step: one name */
	ev(&p, MN_PUSH, 2, 210 * MS, S_STEP, 0);
	ev(&p, MN_POP, 2, 220 * MS, 0, 0);
	ev(&p, MN_POP, 2, 300 * MS, 0, 0);
	first_look_finish(&p, &m);

	a = ranges_begin(&t, &m, &p, 0, UINT64_MAX);
	ranges_call(a, &c0);	/* step, forward, prefetch */
	memset(&g, 0, sizeof(g));
	g.start = 26 * MS;
	g.end = 46 * MS;
	ranges_op(a, &g, &c0);
	ranges_call(a, &c1);	/* thread 1, no range of its own: thread 0's step, backward; prefetch */
	g.start = 56 * MS;
	g.end = 58 * MS;
	ranges_op(a, &g, &c1);
	ranges_call(a, &c3);	/* thread 3 in its own forward: that; prefetch */
	/* a gap [35, 55): the thread waited in a sync to 49, then ran Python */
	ranges_idle(a, 35 * MS, 49 * MS, CAUSE_HOST_SYNC);
	ranges_idle(a, 49 * MS, 55 * MS, CAUSE_CPU_BOUND);
	ranges_call(a, &c2);	/* thread 2's step in a step: once */
	ranges_idle(a, 205 * MS, 215 * MS, CAUSE_CPU_BOUND);
	ranges_end(a);

	CHECK_EQ(t.nr_rows, 4);
	CHECK_EQ(t.nr_in_window, 7);
	CHECK_STR(t.rows[0].name, "step");	/* most host time first */
	r = row(&t, "step");
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->count, 3);
		CHECK_EQ(r->host_ns, 100 * MS + 100 * MS + 10 * MS);
		CHECK_EQ(r->launches, 3);	/* c0, c1, c2; not c3 */
		CHECK_EQ(r->gpu_ns, 22 * MS);
		/* [35, 55) all inside thread 0's step; [205, 215) in thread 2's outer step */
		CHECK_EQ(r->idle_ns, 30 * MS);
		CHECK_EQ(r->idle[CAUSE_HOST_SYNC], 14 * MS);
		CHECK_EQ(r->idle[CAUSE_CPU_BOUND], 16 * MS);
		CHECK_EQ(range_top_cause(r), CAUSE_CPU_BOUND);
		CHECK(!r->is_start_end);
	}
	r = row(&t, "forward");
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->count, 2);
		CHECK_EQ(r->launches, 3);	/* c0, c3, and c1: thread 3's forward was open */
		CHECK_EQ(r->gpu_ns, 22 * MS);
		CHECK_EQ(r->idle_ns, 8 * MS);	/* [35, 40) in the sync, [52, 55) after */
		CHECK_EQ(r->idle[CAUSE_HOST_SYNC], 5 * MS);
		CHECK_EQ(r->idle[CAUSE_CPU_BOUND], 3 * MS);
	}
	r = row(&t, "backward");
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->launches, 1);		/* c1, handed to thread 1 */
		CHECK_EQ(r->gpu_ns, 2 * MS);
		CHECK_EQ(r->idle_ns, 5 * MS);		/* [50, 55): after the sync */
		CHECK_EQ(r->idle[CAUSE_CPU_BOUND], 5 * MS);
	}
	r = row(&t, "prefetch");
	CHECK(r != NULL);
	if (r) {
		CHECK(r->is_start_end);
		CHECK_EQ(r->host_ns, 40 * MS);
		CHECK_EQ(r->launches, 3);		/* any thread's */
		CHECK_EQ(r->gpu_ns, 22 * MS);
		CHECK_EQ(r->idle_ns, 20 * MS);
		CHECK_EQ(r->idle[CAUSE_HOST_SYNC], 14 * MS);
	}
	ranges_free(&t);

	/* The window [50 ms, 250 ms): ranges that began in it only. */
	a = ranges_begin(&t, &m, &p, 50 * MS, 250 * MS);
	ranges_call(a, &c0);
	ranges_call(a, &c2);
	ranges_end(a);
	CHECK_EQ(t.nr_in_window, 4);	/* backward, thread 3's forward, thread 2's two steps */
	r = row(&t, "forward");
	CHECK(r != NULL && r->count == 1);
	r = row(&t, "step");
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->count, 2);
		CHECK_EQ(r->launches, 1);
	}
	ranges_free(&t);
	first_look_free(&p);
}

/* The interval tree finds what a scan of every occurrence finds. */
static void test_tree(void)
{
	struct model m = model_with_strings();
	struct first_look p;
	struct range_table t;
	struct ranges_acc *a;
	uint64_t want[S_NR] = { 0 }, clock[4] = { 0 };
	struct { uint64_t s, e; uint32_t name, thread; } occ[4000];
	size_t n = 0, i, k;
	uint32_t th;

	srand(12345);
	first_look_init(&p);
	for (th = 0; th < 4; th++) {
		/* Random nesting: each thread pushes and pops at random, 1000 ranges. */
		size_t stack[64], depth = 0, made = 0;

		while (made < 1000 || depth) {
			clock[th] += 1 + (uint64_t)(rand() % 1000);
			if (made < 1000 && depth < 64 && (!depth || rand() % 2)) {
				uint32_t name = 1 + (uint32_t)(rand() % S_ASYNC);

				occ[n] = (typeof(occ[0])){ clock[th], 0, name, th };
				stack[depth++] = n++;
				made++;
				ev(&p, MN_PUSH, th, clock[th], name, 0);
			} else {
				occ[stack[--depth]].e = clock[th];
				ev(&p, MN_POP, th, clock[th], 0, 0);
			}
		}
	}
	first_look_finish(&p, &m);
	a = ranges_begin(&t, &m, &p, 0, UINT64_MAX);
	for (i = 0; i < 20000; i++) {
		struct m_call c = launch((uint32_t)(rand() % 4), (uint64_t)(rand() % 600000));
		int seen[S_NR] = { 0 };

		int own = 0;

		ranges_call(a, &c);
		/* its thread's open ranges; when none, every thread's */
		for (k = 0; k < n; k++)
			own |= occ[k].thread == c.thread && occ[k].s <= c.t0 && c.t0 < occ[k].e;
		for (k = 0; k < n; k++)
			if ((!own || occ[k].thread == c.thread) && occ[k].s <= c.t0 &&
			    c.t0 < occ[k].e && !seen[occ[k].name]) {
				seen[occ[k].name] = 1;
				want[occ[k].name]++;
			}
	}
	ranges_end(a);
	CHECK_EQ(t.nr_in_window, n);
	for (k = 1; k <= S_ASYNC; k++) {
		const struct range_row *r = row(&t, strings[k]);

		CHECK(r != NULL);
		if (r)
			CHECK_EQ(r->launches, want[k]);
	}
	ranges_free(&t);
	first_look_free(&p);
}

/* What cannot be followed is counted; the table stays bounded. */
static void test_bad_input(void)
{
	struct model m = model_with_strings();
	struct first_look p;
	struct range_table t;
	struct ranges_acc *a;
	uint64_t tm = 1;
	uint32_t i;

	first_look_init(&p);
	ev(&p, MN_POP, 0, tm++, 0, 0);			/* a pop with nothing pushed */
	ev(&p, MN_END, 1, tm++, 0, 777);		/* an end without a start */
	ev(&p, MN_START, 1, tm++, S_ASYNC, 5);		/* a start never ended */
	ev(&p, MN_START, 1, tm++, S_ASYNC, 5);		/* ... and its id again */
	for (i = 0; i < 70; i++)			/* 70 deep: 6 past the limit */
		ev(&p, MN_PUSH, 2, tm++, S_FWD, 0);
	for (i = 0; i < 70; i++)
		ev(&p, MN_POP, 2, tm++, 0, 0);
	ev(&p, MN_PUSH, 3, tm++, S_STEP, 0);		/* pushed, never popped */
	for (i = 0; i < NVTX_RANGES_MAX_NAMES + 10; i++) {	/* a name per range */
		ev(&p, MN_PUSH, 4, tm++, 100000 + i, 0);
		ev(&p, MN_POP, 4, tm++, 0, 0);
	}
	for (i = 0; i < NVTX_RANGES_MAX_KEPT; i++) {	/* past the ranges kept */
		ev(&p, MN_PUSH, 5, tm++, S_FWD, 0);
		ev(&p, MN_POP, 5, tm++, 0, 0);
	}
	first_look_finish(&p, &m);
	CHECK_EQ(p.ranges.nr_unbalanced, 1);
	CHECK_EQ(p.ranges.nr_unmatched_ends, 2);
	CHECK_EQ(p.ranges.nr_too_deep, 6);
	CHECK_EQ(p.ranges.nr_open_at_end, 2);		/* the start and the push */
	/* 65,536 names told apart: 3 before the loop, the rest of its names past them */
	CHECK_EQ(p.ranges.nr_other_names, NVTX_RANGES_MAX_NAMES + 10 - (NVTX_RANGES_MAX_NAMES - 3));
	CHECK_EQ(p.ranges.nr_occ, NVTX_RANGES_MAX_KEPT);
	CHECK_EQ(p.ranges.nr_ranges, 1 + 70 + 1 + NVTX_RANGES_MAX_NAMES + 10 + NVTX_RANGES_MAX_KEPT);
	CHECK_EQ(p.ranges.nr_dropped, p.ranges.nr_ranges - NVTX_RANGES_MAX_KEPT);
	CHECK_EQ(p.ranges.occ[0].end, tm - 1);		/* the open start ends with the run */
	a = ranges_begin(&t, &m, &p, 0, UINT64_MAX);
	ranges_end(a);
	CHECK(t.has_nvtx);
	CHECK(t.nr_rows <= NVTX_RANGES_MAX_NAMES + 1);
	CHECK(row(&t, "(other names)") != NULL);
	CHECK(row(&t, "(unnamed)") != NULL);		/* STRING ids the trace never defined */
	ranges_free(&t);
	first_look_free(&p);
}

/* A start/end range ended on a thread whose records were read before its start's. */
static void test_end_first(void)
{
	struct model m = model_with_strings();
	struct first_look p;
	struct range_table t;
	struct ranges_acc *a;
	struct m_call c = launch(5, 45 * MS);

	first_look_init(&p);
	ev(&p, MN_END, 1, 50 * MS, 0, 900);
	ev(&p, MN_START, 0, 40 * MS, S_ASYNC, 900);
	first_look_finish(&p, &m);
	CHECK_EQ(p.ranges.nr_unmatched_ends, 0);
	CHECK_EQ(p.ranges.nr_open_at_end, 0);
	a = ranges_begin(&t, &m, &p, 0, UINT64_MAX);
	ranges_call(a, &c);
	ranges_end(a);
	CHECK_EQ(t.nr_rows, 1);
	if (t.nr_rows) {
		CHECK_EQ(t.rows[0].host_ns, 10 * MS);
		CHECK_EQ(t.rows[0].launches, 1);
	}
	ranges_free(&t);
	first_look_free(&p);
}

/* emit_nvtx()'s names: one row per operator. */
static void test_emit_names(void)
{
	struct model m = model_with_strings();
	struct first_look p;
	struct range_table t;
	struct ranges_acc *a;
	const struct range_row *r;

	first_look_init(&p);
	ev(&p, MN_PUSH, 0, 1 * MS, S_EMIT1, 0);
	ev(&p, MN_POP, 0, 2 * MS, 0, 0);
	ev(&p, MN_PUSH, 0, 3 * MS, S_EMIT2, 0);
	ev(&p, MN_PUSH, 0, 4 * MS, S_EMIT3, 0);
	ev(&p, MN_POP, 0, 5 * MS, 0, 0);
	ev(&p, MN_POP, 0, 6 * MS, 0, 0);
	first_look_finish(&p, &m);
	a = ranges_begin(&t, &m, &p, 0, UINT64_MAX);
	ranges_end(a);
	CHECK_EQ(t.nr_rows, 2);
	r = row(&t, "aten::addmm");
	CHECK(r != NULL);
	if (r) {
		CHECK_EQ(r->count, 2);
		CHECK_EQ(r->host_ns, 4 * MS);
	}
	r = row(&t, "aten::div");
	CHECK(r != NULL && r->count == 1);
	ranges_free(&t);
	first_look_free(&p);
}

int main(void)
{
	RUN(test_emit_names);
	RUN(test_end_first);
	RUN(test_inside);
	RUN(test_tree);
	RUN(test_bad_input);
	return TEST_RESULT();
}
