// SPDX-License-Identifier: MIT
/*
 * test_model.c - the join of GPU operations to the calls that caused them, on a hand-built
 * trace: by the external correlation id the shim pushed (driver-API launches), by the
 * thread and interval of CUPTI's API record (cudart's launch path), and, where CUPTI gave no
 * correlation after another client held it, by order — kernels by name, sets by size —
 * leaving out the calls made while that client held CUPTI, and pairing within each window of
 * a sampled run. The join as the records are read
 * against the join after loading: the same answer, on hand-built traces and on the H200
 * fixtures named on the command line.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analyze.h"
#include "check.h"
#include "json_report.h"
#include "model/model.h"
#include "trace_builder.h"
#include "trace/trace_reader.h"

enum { API_LAUNCH = 1, API_SET = 2 };
enum { S_LAUNCH = 1, S_SET, S_KERN_A, S_KERN_B, S_NOTE };

#define TID 100
#define BASE 1000000ull

static void def_func(struct tb *t, uint32_t id, uint32_t name)
{
	struct trace_rec_func f;

	memset(&f, 0, sizeof(f));
	f.hdr.type = TRACE_REC_FUNC;
	f.hdr.size = sizeof(f);
	f.handle = 0x1000 * id;
	f.id = id;
	f.name = name;
	tb_rec(t, &f, sizeof(f));
}

/* A launch @dt ns after the previous thread record, lasting 5 us, that returned @result. */
static void launch_result(struct tb *t, uint32_t dt, uint32_t seq, uint32_t func,
			  uint32_t result)
{
	struct trace_rec_launch l;

	memset(&l, 0, sizeof(l));
	tb_call(&l.call, TRACE_REC_LAUNCH, sizeof(l), dt, API_LAUNCH, 5000, result, seq);
	l.func = func;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = l.block[1] = l.block[2] = 32;
	tb_rec(t, &l, sizeof(l));
}

static void launch(struct tb *t, uint32_t dt, uint32_t seq, uint32_t func)
{
	launch_result(t, dt, seq, func, 0);
}

static void set(struct tb *t, uint32_t dt, uint32_t seq, uint64_t bytes)
{
	struct trace_rec_set s;

	memset(&s, 0, sizeof(s));
	tb_call(&s.call, TRACE_REC_SET, sizeof(s), dt, API_SET, 5000, 0, seq);
	s.bytes = bytes;
	s.elem_bytes = 1;
	s.dst = 0xd000;
	tb_rec(t, &s, sizeof(s));
}

static void kernel(struct tb *t, uint64_t start, uint32_t corr, uint32_t name)
{
	tb_gpu_kernel(t, start, start + 2000, corr, name, 1, 32);
}

static void memset_op(struct tb *t, uint64_t start, uint32_t corr, uint64_t bytes)
{
	struct trace_rec_gpu_memset s;

	memset(&s, 0, sizeof(s));
	s.hdr.type = TRACE_REC_GPU_MEMSET;
	s.hdr.size = sizeof(s);
	s.start_ns = start;
	s.end_ns = start + 1000;
	s.cupti_corr = corr;
	s.bytes = bytes;
	tb_rec(t, &s, sizeof(s));
}

/* GPU_CORR: CUPTI's @corr belongs to the call of thread index @index numbered @seq. */
static void ext_corr_of(struct tb *t, uint32_t index, uint32_t seq, uint32_t corr)
{
	struct trace_rec_gpu_corr c;

	memset(&c, 0, sizeof(c));
	c.hdr.type = TRACE_REC_GPU_CORR;
	c.hdr.size = sizeof(c);
	c.ext_id = TRACE_CORR_ID(index, seq);
	c.cupti_corr = corr;
	tb_rec(t, &c, sizeof(c));
}

static void ext_corr(struct tb *t, uint32_t seq, uint32_t corr)
{
	ext_corr_of(t, 0, seq, corr);
}


/*
 * Thread timeline (us after BASE): launch A at 0 (seq 1), launch A at 10 (seq 2), set of 64 B
 * at 20 (seq 3); CUPTI handed to another client from 30 to 60, launch B at 40 (seq 4) inside;
 * launch B at 70 (seq 5), launch A at 80 (seq 6), set of 64 B at 90 (seq 7).
 */
static const char *build(struct tb *t)
{
	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(t, S_LAUNCH, "cuLaunchKernel");
	tb_string(t, S_SET, "cuMemsetD8Async");
	tb_string(t, S_KERN_A, "kern_a");
	tb_string(t, S_KERN_B, "kern_b");
	tb_string(t, S_NOTE, "note");
	tb_api_def(t, API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH);
	tb_api_def(t, API_SET, TRACE_FAM_SET, S_SET);
	def_func(t, 1, S_KERN_A);
	def_func(t, 2, S_KERN_B);
	tb_note(t, BASE - 1000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	tb_block(t, TID, 0, BASE);
	launch(t, 0, 1, 1);
	launch(t, 10000, 2, 1);
	set(t, 10000, 3, 64);
	launch(t, 20000, 4, 2);
	launch(t, 30000, 5, 2);
	launch(t, 10000, 6, 1);
	set(t, 10000, 7, 64);
	tb_note(t, BASE + 30000, TRACE_NOTE_CUPTI_OFF, S_NOTE);
	tb_note(t, BASE + 60000, TRACE_NOTE_CUPTI_ON, S_NOTE);

	/* Exact: the pushed id (seq 1), and API records inside the calls (seq 2 and 3). */
	ext_corr(t, 1, 11);
	kernel(t, BASE + 6000, 11, S_KERN_A);
	tb_gpu_api(t, BASE + 10500, BASE + 14000, 12, TID);
	kernel(t, BASE + 16000, 12, S_KERN_A);
	tb_gpu_api(t, BASE + 20500, BASE + 24000, 13, TID);
	memset_op(t, BASE + 26000, 13, 64);
	/* An API record of another thread at the same time must not join. */
	tb_gpu_api(t, BASE + 80500, BASE + 84000, 16, TID + 1);
	/* After the client: no correlation of ours; the kernel of seq 4 went to the client. */
	kernel(t, BASE + 76000, 0, S_KERN_B);
	kernel(t, BASE + 86000, 16, S_KERN_A);
	memset_op(t, BASE + 96000, 0, 64);
	/* An execution with no launch before it stays unjoined. */
	kernel(t, BASE - 500000, 0, S_KERN_B);
	tb_flush(t);
	return tb_write(t, "join.trace", 0);
}

/* The call a GPU operation starting at @start joined, as its seq (the thread's calls are in
 * time order: call i has seq i + 1); 0 when unjoined. */
static uint32_t joined_seq(const struct model *m, uint64_t start)
{
	size_t i;

	for (i = 0; i < m->nr_gpu; i++) {
		if (m->gpu[i].start != start)
			continue;
		if (m->gpu[i].call == M_NO_CALL)
			return 0;
		return m->gpu[i].call + 1;
	}
	return 0xffffffff;
}

static void test_join(void)
{
	struct trace_reader rd;
	struct model m;
	struct tb t;

	CHECK_EQ(trace_reader_open(&rd, build(&t)), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	CHECK_EQ(m.nr_gpu, 7);
	CHECK_EQ(joined_seq(&m, BASE + 6000), 1);	/* pushed id */
	CHECK_EQ(joined_seq(&m, BASE + 16000), 2);	/* API record's interval */
	CHECK_EQ(joined_seq(&m, BASE + 26000), 3);
	CHECK_EQ(joined_seq(&m, BASE + 76000), 5);	/* by order, not seq 4 (client's span) */
	CHECK_EQ(joined_seq(&m, BASE + 86000), 6);	/* other thread's record ignored */
	CHECK_EQ(joined_seq(&m, BASE + 96000), 7);	/* set by size */
	CHECK_EQ(joined_seq(&m, BASE - 500000), 0);
	CHECK_EQ(m.gpu_joined_by_corr, 1);
	CHECK_EQ(m.gpu_joined_by_api, 2);
	CHECK_EQ(m.gpu_joined_by_order, 3);
	CHECK_EQ(m.gpu_joined, 6);
	CHECK_EQ(m.gpu_unjoined, 1);
	model_free(&m);
	trace_reader_close(&rd);
	tb_free(&t);
}

/*
 * The join by order, window by window (sampled windows, no API record at all; us after BASE;
 * one kernel): window 1 (to 30) with launches at 0, 10, 20 and 24 (seq 1-4), the third's
 * kernel dropped at the close, the fourth's queued behind it and started at 33, after the
 * close; a launch at 40 between windows (seq 5); window 2 (60 to 90) opening while a launch
 * from 58 to 63 that made no kernel (seq 6) was in flight, then launches at 70, 80 and 84
 * (seq 7-9), the last one's kernel dropped at the close; a launch at 100 between windows (seq
 * 10); window 3 (from 120) opening while a launch from 117 to 122 (seq 11) was in flight, whose
 * kernel started at 119, before the note; a launch at 130 (seq 12). Paired across the whole
 * trace, the kernel at 33 would take seq 3's launch and every later one the launch before its
 * own; taking in the calls in flight at a window's start, seq 6 (no kernel) would take 76's;
 * counting the kernel at 119 in window 2, where it started, it would take seq 9's.
 */
static const char *build_windows(struct tb *t)
{
	static const uint32_t dt[] = { 0, 10000, 10000, 4000, 16000, 18000, 12000, 10000, 4000,
				       16000, 17000, 13000 };
	static const uint64_t starts[] = { 6000, 16000, 33000, 76000, 86000, 119000, 136000 };
	size_t i;

	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(t, S_LAUNCH, "cuLaunchKernel");
	tb_string(t, S_KERN_A, "kern_a");
	tb_string(t, S_NOTE, "note");
	tb_api_def(t, API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH);
	def_func(t, 1, S_KERN_A);
	tb_note(t, BASE - 1000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	tb_block(t, TID, 0, BASE);
	for (i = 0; i < sizeof(dt) / sizeof(dt[0]); i++)
		launch(t, dt[i], (uint32_t)i + 1, 1);
	tb_note(t, BASE + 30000, TRACE_NOTE_CUPTI_OFF, S_NOTE);
	tb_note(t, BASE + 60000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	tb_note(t, BASE + 90000, TRACE_NOTE_CUPTI_OFF, S_NOTE);
	tb_note(t, BASE + 120000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
		kernel(t, BASE + starts[i], 0, S_KERN_A);
	tb_flush(t);
	return tb_write(t, "join_windows.trace", 0);
}

static void test_join_windows(void)
{
	struct trace_reader rd;
	struct model m;
	struct tb t;

	CHECK_EQ(trace_reader_open(&rd, build_windows(&t)), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	CHECK_EQ(m.nr_gpu, 7);
	CHECK_EQ(joined_seq(&m, BASE + 6000), 1);
	CHECK_EQ(joined_seq(&m, BASE + 16000), 2);
	CHECK_EQ(joined_seq(&m, BASE + 33000), 4);	/* after the close: from the end */
	CHECK_EQ(joined_seq(&m, BASE + 76000), 7);	/* not seq 6, in flight at the start */
	CHECK_EQ(joined_seq(&m, BASE + 86000), 8);
	CHECK_EQ(joined_seq(&m, BASE + 119000), 0);	/* window 3's, before any of its calls */
	CHECK_EQ(joined_seq(&m, BASE + 136000), 12);
	CHECK_EQ(m.gpu_joined_by_order, 6);
	CHECK_EQ(m.gpu_unjoined, 1);
	model_free(&m);
	trace_reader_close(&rd);
	tb_free(&t);
}

static int same_join(const char *path, uint32_t window);

/*
 * A window's first launches after its end note may have records too (the kinds go off just
 * after the note): us after BASE, one kernel, no API record; window 1 (to 30) with launches at
 * 0, 10 and 20 (seq 1-3), the third's kernel dropped at the close (noted at its start, 26:
 * "records dropped at sampled window 1's close: 1 in all"); a launch at 31 (seq 4), after the
 * end note, whose kernel was recorded and started at 36; a launch at 40 (seq 5) without one;
 * window 2 (from 60) with a launch at 70 (seq 6). Paired from the end with the window's own
 * launches only, the kernel at 36 would take seq 3's launch (whose kernel was dropped).
 */
static const char *build_after_end(struct tb *t)
{
	static const uint32_t dt[] = { 0, 10000, 10000, 11000, 9000, 30000 };
	size_t i;

	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(t, S_LAUNCH, "cuLaunchKernel");
	tb_string(t, S_KERN_A, "kern_a");
	tb_string(t, S_NOTE, "note");
	tb_string(t, S_NOTE + 1, "records dropped at sampled window 1's close: 1 in all (in flight "
				 "then: CUPTI's end times for them are not reliable)");
	tb_api_def(t, API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH);
	def_func(t, 1, S_KERN_A);
	tb_note(t, BASE - 1000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	tb_block(t, TID, 0, BASE);
	for (i = 0; i < sizeof(dt) / sizeof(dt[0]); i++)
		launch(t, dt[i], (uint32_t)i + 1, 1);
	tb_note(t, BASE + 30000, TRACE_NOTE_CUPTI_OFF, S_NOTE);
	tb_note(t, BASE + 26000, TRACE_NOTE_CUPTI_OFF, S_NOTE + 1);
	tb_note(t, BASE + 60000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	kernel(t, BASE + 6000, 0, S_KERN_A);
	kernel(t, BASE + 16000, 0, S_KERN_A);
	kernel(t, BASE + 36000, 0, S_KERN_A);
	kernel(t, BASE + 76000, 0, S_KERN_A);
	tb_flush(t);
	return tb_write(t, "join_after_end.trace", 0);
}

static void test_join_after_end(void)
{
	struct trace_reader rd;
	struct model m;
	struct tb t;

	CHECK_EQ(trace_reader_open(&rd, build_after_end(&t)), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	CHECK_EQ(m.nr_gpu, 4);
	CHECK_EQ(joined_seq(&m, BASE + 6000), 1);
	CHECK_EQ(joined_seq(&m, BASE + 16000), 2);
	CHECK_EQ(joined_seq(&m, BASE + 36000), 4);	/* the launch after the end, not seq 3 */
	CHECK_EQ(joined_seq(&m, BASE + 76000), 6);
	CHECK_EQ(m.gpu_joined_by_order, 4);
	CHECK_EQ(m.gpu_unjoined, 0);
	model_free(&m);
	trace_reader_close(&rd);
	tb_free(&t);
	/* Joined as read (the stream's second read) the same as after loading. */
	same_join(build_after_end(&t), 0);
	tb_free(&t);
}

/*
 * Load @path as the analyzer does (joined as read, with a window of @window API records, 0 the
 * default) and with the join after loading: the same join, operation by operation. Returns
 * whether the first load read the trace twice (m->join_redone).
 */
static int same_join(const char *path, uint32_t window)
{
	const struct model_load_opts batch = { .batch_join = 1 }, early = { .join_window = window };
	struct trace_reader ra, rb;
	struct model a, b;
	size_t i, differ = 0;
	int redone;

	CHECK_EQ(trace_reader_open(&ra, path), 0);
	CHECK_EQ(trace_reader_open(&rb, path), 0);
	CHECK_EQ(model_load_opts(&a, &ra, &early), model_load_opts(&b, &rb, &batch));
	CHECK_EQ(a.nr_calls, b.nr_calls);
	CHECK_EQ(a.nr_gpu, b.nr_gpu);
	for (i = 0; i < a.nr_gpu && i < b.nr_gpu; i++)
		differ += a.gpu[i].call != b.gpu[i].call || a.gpu[i].start != b.gpu[i].start;
	for (i = 0; i < a.nr_calls && i < b.nr_calls; i++)
		differ += memcmp(&a.calls[i], &b.calls[i], sizeof(a.calls[i])) != 0;
	if (differ)
		fprintf(stderr, "%s (window %u): %zu operations or calls differ\n", path, window,
			differ);
	CHECK_EQ(differ, 0);
	CHECK_EQ(a.gpu_joined, b.gpu_joined);
	CHECK_EQ(a.gpu_unjoined, b.gpu_unjoined);
	CHECK_EQ(a.gpu_joined_by_corr, b.gpu_joined_by_corr);
	CHECK_EQ(a.gpu_joined_by_api, b.gpu_joined_by_api);
	CHECK_EQ(a.gpu_joined_by_order, b.gpu_joined_by_order);
	CHECK_EQ(a.gpu_graph_ops_to_launch, b.gpu_graph_ops_to_launch);
	CHECK(b.join_redone == NULL);
	/* A loaded model's shapes are found again (their hash, let go after loading, remade). */
	for (i = 0; i < a.nr_gpu; i += 1 + a.nr_gpu / 64) {
		struct m_gpu_shape sh = *model_gpu_shape(&a, &a.gpu[i]);
		size_t nr = a.nr_gpu_shapes;

		CHECK_EQ(model_gpu_shape_add(&a, &sh), a.gpu[i].shape);
		CHECK_EQ(a.nr_gpu_shapes, nr);
	}
	redone = a.join_redone != NULL;
	model_free(&a);
	model_free(&b);
	trace_reader_close(&ra);
	trace_reader_close(&rb);
	return redone;
}

/* A trace of launches of one kernel (kern_a), its definitions written. */
static void begin_launches(struct tb *t)
{
	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(t, S_LAUNCH, "cuLaunchKernel");
	tb_string(t, S_KERN_A, "kern_a");
	tb_api_def(t, API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH);
	def_func(t, 1, S_KERN_A);
}

/* Begin a trace with @n launches of kern_a on one thread, 10 us apart from BASE. */
static void launches_10us(struct tb *t, size_t n)
{
	size_t i;

	begin_launches(t);
	tb_block(t, TID, 0, BASE);
	for (i = 0; i < n; i++)
		launch(t, i ? 10000 : 0, 0, 1);
}

/* GPU operations among the first @n that did not join the launch that began 6 us before. */
static size_t misjoined(const struct model *m, size_t n)
{
	size_t i, wrong = 0;

	for (i = 0; i < n && i < m->nr_gpu; i++)
		wrong += m->gpu[i].call == M_NO_CALL ||
			 m->calls[m->gpu[i].call].t0 + 6000 != m->gpu[i].start;
	return wrong;
}

/*
 * Many launches of one thread joined through API records that come in no particular order,
 * with correlation numbers unrelated to time: the join walks the records in correlation order
 * and its search for each record's call starts where the last one ended, forwards or back.
 */
#define MANY 3000

static void test_join_many(void)
{
	const char *path;
	struct trace_reader rd;
	struct model m;
	struct tb t;
	size_t i;

	launches_10us(&t, MANY);	/* launch i: [BASE + 10 us i, + 5 us), no number pushed */
	for (i = 0; i < MANY; i++) {
		size_t j = i * 1237 % MANY;	/* a scrambled order; 1237 is prime to MANY */
		uint32_t corr = (uint32_t)((j * 2903 + 11) % MANY) + 100;

		tb_gpu_api(&t, BASE + 10000 * j + 1000, BASE + 10000 * j + 4000, corr, TID);
		kernel(&t, BASE + 10000 * j + 6000, corr, S_KERN_A);
	}
	tb_flush(&t);
	path = tb_write(&t, "join_many.trace", 0);
	CHECK_EQ(trace_reader_open(&rd, path), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	CHECK_EQ(m.nr_gpu, MANY);
	CHECK_EQ(m.gpu_joined_by_api, MANY);
	CHECK_EQ(misjoined(&m, m.nr_gpu), 0);	/* each kernel 6 us after its own launch began */
	CHECK(m.join_redone == NULL);		/* 3,000 numbers: inside the window */
	model_free(&m);
	trace_reader_close(&rd);
	/* A window of 16 numbers lets go of most before their partners come: read twice. */
	CHECK_EQ(same_join(path, 16), 1);
	CHECK_EQ(same_join(path, 0), 0);
	tb_free(&t);
}

/*
 * Two thread slots of one tid (the shim's index changed under the same thread id) whose calls
 * interleave in time: the join as read cannot tell which call an API record names before the
 * sort, so the trace is read twice; the join is the same either way.
 */
static void test_join_tid_reused(void)
{
	struct tb t;
	size_t i;

	begin_launches(&t);
	tb_block(&t, TID, 0, BASE);		/* launches at 0, 20, 40 ... us */
	for (i = 0; i < 10; i++)
		launch(&t, i ? 20000 : 0, 0, 1);
	tb_block(&t, TID, 1, BASE + 10000);	/* the same tid at 10, 30, 50 ... us */
	for (i = 0; i < 10; i++)
		launch(&t, i ? 20000 : 0, 0, 1);
	for (i = 0; i < 20; i++) {
		tb_gpu_api(&t, BASE + 10000 * i + 1000, BASE + 10000 * i + 4000, (uint32_t)i + 1, TID);
		kernel(&t, BASE + 10000 * i + 6000, (uint32_t)i + 1, S_KERN_A);
	}
	tb_flush(&t);
	CHECK_EQ(same_join(tb_write(&t, "join_tid_reused.trace", 0), 0), 1);
	/* The report's first look sees the join fail: the whole load joins after, in one read. */
	CHECK_EQ(report_reads(tb_write(&t, "join_tid_reused.trace", 0)), 2);
	tb_free(&t);
}

/*
 * Joins by pushed id (GPU_CORR) over three threads: thread A (index 0) numbers its launches
 * 1..N in time order; thread B (index 1) numbers them out of time order; thread C reuses
 * index 0 under another tid (the shim's index of a thread that ended) with numbers N+1..2N,
 * then once more 1. The records come scrambled. Every kernel joins the launch it names; the
 * id both A and C carry joins the first call that carries it (A's).
 */
#define EXT_N 200

static void test_join_by_ext(void)
{
	const uint64_t t_b = BASE + 3000, t_c = BASE + 10000000;
	struct trace_reader rd;
	struct model m;
	struct tb t;
	size_t i;

	begin_launches(&t);
	tb_block(&t, TID, 0, BASE);	/* A: launch i at BASE + 10 us i, seq i + 1 */
	for (i = 0; i < EXT_N; i++)
		launch(&t, i ? 10000 : 0, (uint32_t)i + 1, 1);
	tb_block(&t, TID + 1, 1, t_b);	/* B: launch i at t_b + 10 us i, seq scrambled */
	for (i = 0; i < EXT_N; i++)
		launch(&t, i ? 10000 : 0, (uint32_t)(i * 7 % EXT_N) + 1, 1);
	tb_block(&t, TID + 2, 0, t_c);	/* C: seq N+1.., then 1 again */
	for (i = 0; i <= EXT_N; i++)
		launch(&t, i ? 10000 : 0, i < EXT_N ? (uint32_t)(EXT_N + i + 1) : 1, 1);
	for (i = 0; i < EXT_N; i++) {	/* kernel 6 us after its launch, records scrambled */
		size_t j = i * 37 % EXT_N;	/* 37 is prime to EXT_N */
		uint32_t corr = (uint32_t)(j * 3 % EXT_N) * 3 + 1000;

		ext_corr_of(&t, 0, (uint32_t)j + 1, corr);
		kernel(&t, BASE + 10000 * j + 6000, corr, S_KERN_A);
		ext_corr_of(&t, 1, (uint32_t)(j * 7 % EXT_N) + 1, corr + 1);
		kernel(&t, t_b + 10000 * j + 6000, corr + 1, S_KERN_A);
		ext_corr_of(&t, 0, (uint32_t)(EXT_N + j + 1), corr + 2);
		kernel(&t, t_c + 10000 * j + 6000, corr + 2, S_KERN_A);
	}
	ext_corr_of(&t, 0, 1, 5000);	/* the id A's first launch and C's last carry */
	kernel(&t, t_c + 10000 * EXT_N + 6000, 5000, S_KERN_A);
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "join_by_ext.trace", 0)), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	CHECK_EQ(m.nr_gpu, 3 * EXT_N + 1);
	CHECK_EQ(m.gpu_joined_by_corr, 3 * EXT_N + 1);
	CHECK_EQ(misjoined(&m, m.nr_gpu - 1), 0);	/* but the last, 6 us after its launch */
	CHECK(m.gpu[m.nr_gpu - 1].call != M_NO_CALL);
	CHECK_EQ(m.calls[m.gpu[m.nr_gpu - 1].call].t0, BASE);
	CHECK_EQ(m.nr_reads, 2);	/* again, keeping each call's seq for the pushed ids */
	model_free(&m);
	trace_reader_close(&rd);
	/* A report: the first look, then the whole load keeping each call's seq (was 3). */
	CHECK_EQ(report_reads(tb_write(&t, "join_by_ext.trace", 0)), 2);
	tb_free(&t);
}

/*
 * A call's result follows it through the sort: two threads whose launches interleave in time
 * (A at 0, 20, 40 ... us, B at 10, 30 ...) are written one after the other; every third
 * launch failed with a result naming its time. Without GPU operations, with one (the calls
 * joined as read move too) and with the join after loading. Read once: no pushed ids.
 */
static void test_results(void)
{
	int with_gpu, batch;

	for (with_gpu = 0; with_gpu < 2; with_gpu++) {
		for (batch = 0; batch < 2; batch++) {
			const struct model_load_opts o = { .batch_join = batch };
			struct trace_reader rd;
			struct model m;
			struct tb t;
			size_t i, failed = 0;
			uint32_t k;

			begin_launches(&t);
			for (k = 0; k < 2; k++) {
				uint32_t j;

				tb_block(&t, TID + k, k, BASE + 10000 * k);
				for (j = 0; j < 10; j++) {
					uint32_t at = 2 * j + k;	/* in 10 us */

					launch_result(&t, j ? 20000 : 0, 0, 1, at % 3 ? 0 : 700 + at);
				}
			}
			if (with_gpu) {
				tb_gpu_api(&t, BASE + 1000, BASE + 4000, 1, TID);
				kernel(&t, BASE + 6000, 1, S_KERN_A);
			}
			tb_flush(&t);
			CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "results.trace", 0)), 0);
			CHECK_EQ(model_load_opts(&m, &rd, &o), 0);
			CHECK_EQ(m.nr_calls, 20);
			CHECK_EQ(m.nr_reads, 1);
			for (i = 0; i < m.nr_calls; i++) {
				uint32_t at = (uint32_t)((m.calls[i].t0 - BASE) / 10000);
				uint32_t want = at % 3 ? 0 : 700 + at;

				CHECK_EQ(at, i);
				CHECK_EQ(model_call_result(&m, i), want);
				CHECK_EQ(!!(m.calls[i].flags & MCF_ERROR), want != 0);
				failed += want != 0;
			}
			CHECK_EQ(failed, 7);
			CHECK_EQ(m.nr_gpu, (size_t)with_gpu);
			if (with_gpu)
				CHECK_EQ(m.gpu[0].call, 0);
			model_free(&m);
			trace_reader_close(&rd);
			tb_free(&t);
		}
	}
}

/*
 * Operations that start and end together are ordered by CUPTI's number, whatever order they
 * came in (the number is not kept in the operation: the sort puts them right after). Launches at
 * 0, 10 and 20 us own numbers 10, 20 and 30; their kernels, all at the same time, come as 30,
 * 10, 20; after loading, in either join, the operations follow their launches.
 */
static void test_equal_ops_by_corr(void)
{
	static const uint32_t came[3] = { 30, 10, 20 };
	int batch;

	for (batch = 0; batch < 2; batch++) {
		const struct model_load_opts o = { .batch_join = batch };
		struct trace_reader rd;
		struct model m;
		struct tb t;
		size_t i;

		launches_10us(&t, 3);
		for (i = 0; i < 3; i++)
			tb_gpu_api(&t, BASE + 10000 * i + 1000, BASE + 10000 * i + 4000,
				(uint32_t)(10 * i + 10), TID);
		for (i = 0; i < 3; i++)
			kernel(&t, BASE + 50000, came[i], S_KERN_A);
		tb_flush(&t);
		CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "equal_ops.trace", 0)), 0);
		CHECK_EQ(model_load_opts(&m, &rd, &o), 0);
		CHECK_EQ(m.nr_gpu, 3);
		for (i = 0; i < m.nr_gpu; i++) {
			CHECK(m.gpu[i].call != M_NO_CALL);
			if (m.gpu[i].call != M_NO_CALL)
				CHECK_EQ(m.calls[m.gpu[i].call].t0, BASE + 10000 * i);
		}
		CHECK(m.gpu_corr == NULL);	/* let go after the join */
		model_free(&m);
		trace_reader_close(&rd);
		tb_free(&t);
	}
}

/*
 * Ids a trace defines index dense tables: a FUNC or STRING id far beyond what the trace has
 * defined so far (hostile; the writer numbers densely from 1) is ignored instead of growing a
 * table to it (2 GiB for one FUNC id near 2^26); a dense one, even after a gap, is taken.
 */
static void test_hostile_ids(void)
{
	struct trace_reader rd;
	struct model m;
	struct tb t;

	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(&t, S_KERN_A, "kern_a");
	tb_string(&t, (1u << 26) - 1, "far");
	def_func(&t, (1u << 26) - 1, S_KERN_A);
	def_func(&t, 1, S_KERN_A);
	def_func(&t, 1000, S_KERN_A);		/* a gap (lost records) */
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "hostile_ids.trace", 0)), 0);
	CHECK_EQ(model_load(&m, &rd), 0);
	CHECK(m.nr_funcs <= 1001);
	CHECK(m.nr_strings <= S_KERN_A + 1);
	CHECK_EQ(m.nr_funcs, 1001);
	CHECK_EQ(m.funcs[1000].name, S_KERN_A);
	CHECK(model_string(&m, S_KERN_A, NULL) != NULL);
	CHECK(model_string(&m, (1u << 26) - 1, NULL) == NULL);
	model_free(&m);
	trace_reader_close(&rd);
	tb_free(&t);
}

/*
 * The shapes' hash is let go after loading and made anew when a shape is asked for again,
 * large enough for all of them (1,000 here, more than its first size holds).
 */
static void test_shapes_remade(void)
{
	struct model m;
	uint32_t i;

	memset(&m, 0, sizeof(m));
	for (i = 0; i < 1000; i++)
		CHECK_EQ(model_gpu_shape_add(&m, &(struct m_gpu_shape){ .name = i + 1 }), i);
	free(m.gpu_shape_slots);
	m.gpu_shape_slots = NULL;
	m.nr_gpu_shape_slots = 0;
	CHECK_EQ(model_gpu_shape_add(&m, &(struct m_gpu_shape){ .name = 501 }), 500);
	CHECK_EQ(model_gpu_shape_add(&m, &(struct m_gpu_shape){ .name = 2000 }), 1000);
	CHECK_EQ(m.nr_gpu_shapes, 1001);
	free(m.gpu_shapes);
	free(m.gpu_shape_slots);
}

/* Every trace named on the command line (the H200 fixtures): the same join either way, also
 * with a window of 4 numbers (most of them read twice). */
static void test_join_traces(int argc, char **argv)
{
	int i, redone = 0;

	check_test = "test_join_traces";
	for (i = 1; i < argc; i++) {
		CHECK_EQ(same_join(argv[i], 0), 0);
		redone += same_join(argv[i], 4);
	}
	if (argc > 1)
		CHECK(redone > 0);
}

/*
 * What the model interns once per chunk by the reader's shape_ref holds on every trace named
 * on the command line: the records of a chunk with one ref differ only in times, sequence
 * and correlation numbers and a kernel's graph ids — and refs do repeat.
 */
struct ref_seen {
	uint64_t chunk;		/* chunk_off + 1 of the record kept */
	union {
		struct trace_rec_launch l;
		struct trace_rec_gpu_kernel k;
	} u;
};

static void shape_fields(const struct trace_record *r, void *out)
{
	if (r->type == TRACE_REC_LAUNCH) {
		struct trace_rec_launch *l = out;

		memcpy(l, r->rec, sizeof(*l));
		l->call.hdr.dt_ns = 0;
		l->call.dur = 0;
		l->call.seq = 0;
	} else {
		struct trace_rec_gpu_kernel *k = out;

		memcpy(k, r->rec, sizeof(*k));
		k->start_ns = k->end_ns = 0;
		k->cupti_corr = 0;
		k->graph_id = 0;
		k->graph_node = 0;
	}
}

static void test_shape_refs_traces(int argc, char **argv)
{
	struct ref_seen *seen[2] = { NULL, NULL };
	size_t cap[2] = { 0, 0 }, repeats = 0, refs = 0;
	int i;

	check_test = "test_shape_refs_traces";
	for (i = 1; i < argc; i++) {
		struct trace_reader rd;
		struct trace_record r;

		CHECK_EQ(trace_reader_open(&rd, argv[i]), 0);
		if (cap[0])	/* chunk offsets repeat from file to file */
			memset(seen[0], 0, cap[0] * sizeof(*seen[0]));
		if (cap[1])
			memset(seen[1], 0, cap[1] * sizeof(*seen[1]));
		while (trace_reader_next(&rd, &r) > 0) {
			const int kind = r.type == TRACE_REC_GPU_KERNEL;
			struct ref_seen *e, now;

			if (!r.shape_ref) {
				CHECK(r.type != TRACE_REC_LAUNCH_REFS && r.type != TRACE_REC_GPU_KERNEL_RUN);
				continue;
			}
			CHECK(r.type == TRACE_REC_LAUNCH || r.type == TRACE_REC_GPU_KERNEL);
			refs++;
			if (r.shape_ref >= cap[kind]) {
				size_t old = cap[kind];

				cap[kind] = 2 * (size_t)r.shape_ref;
				seen[kind] = realloc(seen[kind], cap[kind] * sizeof(*seen[kind]));
				memset(seen[kind] + old, 0, (cap[kind] - old) * sizeof(*seen[kind]));
			}
			e = &seen[kind][r.shape_ref];
			memset(&now, 0, sizeof(now));
			shape_fields(&r, &now.u);
			if (e->chunk == r.chunk_off + 1) {
				repeats++;
				if (memcmp(&e->u, &now.u, sizeof(now.u))) {
					fprintf(stderr, "%s: ref %u of the chunk at %llu differs\n",
						argv[i], r.shape_ref, (unsigned long long)r.chunk_off);
					check_failures++;
				}
			} else {
				now.chunk = r.chunk_off + 1;
				*e = now;
			}
		}
		trace_reader_close(&rd);
	}
	if (argc > 1)
		CHECK(repeats > refs / 2);	/* a training loop relaunches its kernels */
	free(seen[0]);
	free(seen[1]);
}

int main(int argc, char **argv)
{
	RUN(test_join);
	RUN(test_join_windows);
	RUN(test_join_after_end);
	RUN(test_join_many);
	RUN(test_join_by_ext);
	RUN(test_join_tid_reused);
	RUN(test_results);
	RUN(test_equal_ops_by_corr);
	RUN(test_hostile_ids);
	RUN(test_shapes_remade);
	test_join_traces(argc, argv);
	test_shape_refs_traces(argc, argv);
	return TEST_RESULT();
}
