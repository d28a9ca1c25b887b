// SPDX-License-Identifier: MIT
/*
 * test_reader.c - the trace reader on hand-built traces: a valid one (times rebuilt from deltas,
 * unknown types skipped, grown records accepted), truncated ones (partial results, no error),
 * corrupt ones (each refused with a message naming the problem and the byte offset),
 * LAUNCH_REPEAT and LAUNCH_RUN expanded per thread within a chunk, and GPU records as columns.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_builder.h"
#include "trace/trace_reader.h"

static void add_launch(struct tb *t, uint32_t dt, uint32_t seq)
{
	struct trace_rec_launch l;

	memset(&l, 0, sizeof(l));
	tb_call(&l.call, TRACE_REC_LAUNCH, sizeof(l), dt, 1, 500, 0, seq);
	l.func = 1;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = l.block[1] = l.block[2] = 1;
	tb_rec(t, &l, sizeof(l));
}

/* A two-chunk trace: names and two launches, then two more launches and END. */
static void build_valid(struct tb *t)
{
	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(t, 1, "cuLaunchKernel");
	tb_api_def(t, 1, TRACE_FAM_LAUNCH, 1);
	tb_block(t, 100, 0, 5000);
	add_launch(t, 10, 1);
	add_launch(t, 20, 2);
	tb_flush(t);
	tb_block(t, 100, 0, 5030);
	add_launch(t, 5, 3);
	add_launch(t, 7, 4);
	tb_end(t, 9, 0, TRACE_END_EXIT);
	tb_flush(t);
}

static int read_all(const char *path, struct trace_reader *rd, int *nr_launch, uint64_t *last_ts)
{
	struct trace_record r;
	int ret;

	*nr_launch = 0;
	*last_ts = 0;
	if (trace_reader_open(rd, path) < 0)
		return -1;
	while ((ret = trace_reader_next(rd, &r)) > 0) {
		if (r.type == TRACE_REC_LAUNCH) {
			(*nr_launch)++;
			*last_ts = r.ts_ns;
		}
	}
	return ret;
}

static void test_valid(void)
{
	struct trace_reader rd;
	struct tb t;
	uint64_t ts;
	int n;

	build_valid(&t);
	CHECK_EQ(read_all(tb_write(&t, "valid.trace", 0), &rd, &n, &ts), 0);
	CHECK_EQ(n, 4);
	CHECK_EQ(ts, 5030 + 5 + 7);	/* second block's base + deltas */
	CHECK(rd.has_end);
	CHECK(!rd.is_truncated);
	CHECK_EQ(rd.nr_chunks, 2);
	CHECK_STR(rd.host, "testhost");
	CHECK_STR(rd.cmdline, "prog arg");
	CHECK_EQ(rd.argc, 2);
	trace_reader_close(&rd);
	tb_free(&t);
}

static void test_truncated(void)
{
	struct trace_reader rd;
	struct tb t;
	size_t first_chunk_end, full;
	uint64_t ts;
	int n;

	build_valid(&t);
	full = t.len;
	/* Locate the end of chunk 0: header + its 16-byte chunk header + frame. */
	{
		const struct trace_file_header *h = (const void *)t.file;
		const struct trace_chunk_header *c = (const void *)(t.file + h->header_bytes);

		first_chunk_end = h->header_bytes + sizeof(*c) + c->zstd_bytes;
	}
	/* Cut inside the second chunk's frame: the first chunk's records survive. */
	CHECK_EQ(read_all(tb_write(&t, "cut1.trace", full - 3), &rd, &n, &ts), 0);
	CHECK_EQ(n, 2);
	CHECK(rd.is_truncated);
	CHECK(!rd.has_end);
	trace_reader_close(&rd);
	/* Cut inside the second chunk's header. */
	CHECK_EQ(read_all(tb_write(&t, "cut2.trace", first_chunk_end + 5), &rd, &n, &ts), 0);
	CHECK_EQ(n, 2);
	CHECK(rd.is_truncated);
	trace_reader_close(&rd);
	/* Exactly on a chunk boundary: nothing truncated mid-chunk, but no END either. */
	CHECK_EQ(read_all(tb_write(&t, "cut3.trace", first_chunk_end), &rd, &n, &ts), 0);
	CHECK_EQ(n, 2);
	CHECK(!rd.has_end);
	trace_reader_close(&rd);
	/* Inside the file header: not a trace. */
	CHECK(trace_reader_open(&rd, tb_write(&t, "cut4.trace", 20)) < 0);
	CHECK(strstr(rd.err, "not a gpushim trace") != NULL);
	tb_free(&t);
}

static void expect_error(const char *name, struct tb *t, const char *what)
{
	struct trace_reader rd;
	uint64_t ts;
	int n, ret;

	ret = read_all(tb_write(t, name, 0), &rd, &n, &ts);
	CHECK(ret < 0);
	if (!strstr(rd.err, what) || !strstr(rd.err, "offset 0x")) {
		fprintf(stderr, "%s: error \"%s\" lacks \"%s\" or an offset\n", name, rd.err, what);
		check_failures++;
	}
	trace_reader_close(&rd);
}

static void test_bad_header(void)
{
	struct tb t;

	tb_init(&t, TRACE_VERSION_MAJOR + 1, 0);
	tb_flush(&t);
	expect_error("major.trace", &t, "this gpushim reads");
	tb_free(&t);

	tb_init(&t, TRACE_VERSION_MAJOR, 0);
	t.file[0] = 'X';
	expect_error("magic.trace", &t, "bad magic");
	tb_free(&t);

	tb_init(&t, TRACE_VERSION_MAJOR, 0);
	((struct trace_file_header *)t.file)->header_bytes = 1u << 30;
	expect_error("hdrsize.trace", &t, "header size");
	tb_free(&t);
}

static void test_bad_records(void)
{
	struct tb t;
	struct trace_rec_launch l;
	uint8_t buf[64];

	/* A record size that is not a multiple of 8. */
	tb_init(&t, TRACE_VERSION_MAJOR, 0);
	memset(buf, 0, sizeof(buf));
	((struct trace_rec_hdr *)buf)->type = 99;
	((struct trace_rec_hdr *)buf)->size = 12;
	tb_rec(&t, buf, 16);
	tb_flush(&t);
	expect_error("odd.trace", &t, "size 12 invalid");
	tb_free(&t);

	/* A known type smaller than its struct. */
	tb_init(&t, TRACE_VERSION_MAJOR, 0);
	tb_block(&t, 1, 0, 0);
	memset(&l, 0, sizeof(l));
	tb_call(&l.call, TRACE_REC_LAUNCH, 32, 0, 1, 0, 0, 0);
	tb_rec(&t, &l, 32);
	tb_flush(&t);
	expect_error("small.trace", &t, "launch record of 32 bytes");
	tb_free(&t);

	/* A thread record with no BLOCK before it. */
	tb_init(&t, TRACE_VERSION_MAJOR, 0);
	add_launch(&t, 1, 1);
	tb_flush(&t);
	expect_error("noblock.trace", &t, "outside a thread block");
	tb_free(&t);

	/* A string longer than its record. */
	tb_init(&t, TRACE_VERSION_MAJOR, 0);
	tb_string(&t, 1, "abc");
	((struct trace_rec_string *)t.chunk)->len = 1000;
	tb_flush(&t);
	expect_error("string.trace", &t, "string of 1000 bytes");
	tb_free(&t);

	/* A record whose size runs past the chunk. */
	tb_init(&t, TRACE_VERSION_MAJOR, 0);
	memset(buf, 0, sizeof(buf));
	((struct trace_rec_hdr *)buf)->type = 99;
	((struct trace_rec_hdr *)buf)->size = 4096;
	tb_rec(&t, buf, 16);
	tb_flush(&t);
	expect_error("overrun.trace", &t, "size 4096 invalid");
	tb_free(&t);
}

static void test_bad_chunks(void)
{
	struct tb t;
	size_t hb;

	build_valid(&t);
	hb = ((struct trace_file_header *)t.file)->header_bytes;
	t.file[hb] ^= 0xff;
	expect_error("chunkmagic.trace", &t, "bad chunk magic");
	tb_free(&t);

	build_valid(&t);
	hb = ((struct trace_file_header *)t.file)->header_bytes;
	((struct trace_chunk_header *)(t.file + hb))->seq = 7;
	expect_error("chunkseq.trace", &t, "chunk sequence 7");
	tb_free(&t);

	build_valid(&t);
	hb = ((struct trace_file_header *)t.file)->header_bytes;
	((struct trace_chunk_header *)(t.file + hb))->raw_bytes += 8;
	expect_error("chunkraw.trace", &t, "chunk 0");
	tb_free(&t);

	/* A flipped bit inside the compressed data: zstd's checksum or framing catches it. */
	build_valid(&t);
	hb = ((struct trace_file_header *)t.file)->header_bytes;
	t.file[hb + sizeof(struct trace_chunk_header) + 10] ^= 0x40;
	expect_error("chunkflip.trace", &t, "chunk 0");
	tb_free(&t);
}

static void test_unknown_and_grown(void)
{
	struct trace_reader rd;
	struct trace_record r;
	uint8_t buf[128];
	struct tb t;
	int nr_unknown = 0, nr_launch = 0;

	tb_init(&t, TRACE_VERSION_MAJOR, 0);
	memset(buf, 0, sizeof(buf));
	((struct trace_rec_hdr *)buf)->type = 200;	/* from a newer minor version */
	((struct trace_rec_hdr *)buf)->size = 40;
	tb_rec(&t, buf, 40);
	tb_block(&t, 1, 0, 100);
	memset(buf, 0, sizeof(buf));	/* a newer thread record: its delta still counts */
	((struct trace_rec_hdr *)buf)->type = 201;
	((struct trace_rec_hdr *)buf)->size = 16;
	((struct trace_rec_hdr *)buf)->dt_ns = 5;
	tb_rec(&t, buf, 16);
	memset(buf, 0, sizeof(buf));
	tb_call((struct trace_call *)buf, TRACE_REC_LAUNCH, 80, 3, 1, 0, 0, 1);	/* grown */
	tb_rec(&t, buf, 80);
	tb_end(&t, 2, 0, TRACE_END_EXIT);
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "grown.trace", 0)), 0);
	while (trace_reader_next(&rd, &r) > 0) {
		nr_unknown += r.type == 200 || r.type == 201;
		if (r.type == TRACE_REC_LAUNCH) {
			nr_launch++;
			CHECK_EQ(r.size, 80);
			CHECK_EQ(r.ts_ns, 108);	/* 100 + 5 + 3 */
		}
	}
	CHECK_EQ(nr_unknown, 2);
	CHECK_EQ(nr_launch, 1);
	CHECK(rd.has_end);
	trace_reader_close(&rd);
	tb_free(&t);
}

static void add_repeat(struct tb *t, uint32_t dt, uint32_t dur, uint32_t seq)
{
	struct trace_rec_launch_repeat r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = TRACE_REC_LAUNCH_REPEAT;
	r.hdr.size = sizeof(r);
	r.hdr.dt_ns = dt;
	r.dur = dur;
	r.seq = seq;
	tb_rec(t, &r, sizeof(r));
}

/*
 * LAUNCH_REPEAT: read back as the thread's previous LAUNCH of the chunk with its own time,
 * duration and sequence number, per thread across BLOCK switches; one with no LAUNCH of its
 * thread before it in the chunk (another thread's, or one in an earlier chunk) is corrupt.
 */
static void test_launch_repeat(void)
{
	struct trace_reader rd;
	struct trace_record r;
	struct tb t;
	uint32_t seqs[8];
	uint64_t times[8];
	int n = 0, ret;

	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);			/* thread 0: func 1, dur 500, at 1010 */
	tb_block(&t, 200, 1, 2000);
	add_launch(&t, 1, 1);
	((struct trace_rec_launch *)(t.chunk + t.chunk_len - sizeof(struct trace_rec_launch)))->func = 7;
	tb_block(&t, 100, 0, 1010);
	add_repeat(&t, 5, 42, 2);		/* thread 0 again: func 1, at 1015 */
	tb_block(&t, 200, 1, 2001);
	add_repeat(&t, 4, 43, 2);		/* thread 1: func 7, at 2005 */
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "repeat.trace", 0)), 0);
	while ((ret = trace_reader_next(&rd, &r)) > 0) {
		const struct trace_rec_launch *l = r.rec;

		if (r.type != TRACE_REC_LAUNCH || n >= 8)
			continue;
		CHECK_EQ(r.size, sizeof(*l));
		seqs[n] = l->func * 1000 + l->call.seq * 100 + (l->call.dur == 500 ? 0 : l->call.dur);
		times[n++] = r.ts_ns;
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(n, 4);
	CHECK_EQ(seqs[0], 1100);
	CHECK_EQ(seqs[1], 7100);
	CHECK_EQ(seqs[2], 1242);		/* func 1, seq 2, dur 42 */
	CHECK_EQ(seqs[3], 7243);
	CHECK_EQ(times[2], 1015);
	CHECK_EQ(times[3], 2005);
	trace_reader_close(&rd);
	tb_free(&t);

	/* Another thread's LAUNCH does not count. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);
	tb_block(&t, 200, 1, 2000);
	add_repeat(&t, 5, 42, 2);
	tb_flush(&t);
	expect_error("repeat_other.trace", &t, "launch_repeat with no launch of thread 1");
	tb_free(&t);

	/* Nor one in the chunk before: chunks decode on their own. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);
	tb_flush(&t);
	tb_block(&t, 100, 0, 1010);
	add_repeat(&t, 5, 42, 2);
	tb_flush(&t);
	expect_error("repeat_chunk.trace", &t, "launch_repeat with no launch of thread 0");
	tb_free(&t);
}

/*
 * A LAUNCH_RUN or LAUNCH_REFS (@type) of @n launches from @seq: columns given as bytes (already
 * varint-encoded), padded. The two share their layout: header, count, seq, columns.
 */
static void add_launches(struct tb *t, uint16_t type, uint32_t n, uint32_t seq,
			 const uint8_t *cols, size_t len)
{
	uint8_t buf[256];
	struct trace_rec_launch_run r;
	size_t size = (sizeof(r) + len + 7) & ~(size_t)7;

	_Static_assert(sizeof(struct trace_rec_launch_run) == sizeof(struct trace_rec_launch_refs) &&
			       offsetof(struct trace_rec_launch_run, count) ==
				       offsetof(struct trace_rec_launch_refs, count) &&
			       offsetof(struct trace_rec_launch_run, seq) ==
				       offsetof(struct trace_rec_launch_refs, seq),
		       "LAUNCH_RUN and LAUNCH_REFS share their head");
	memset(&r, 0, sizeof(r));
	r.hdr.type = type;
	r.hdr.size = (uint16_t)size;
	r.count = n;
	r.seq = seq;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), cols, len);
	tb_rec(t, buf, size);
}

/* A malformed LAUNCH_RUN or LAUNCH_REFS, and the error it must give. */
struct bad_launches {
	const char *name;
	uint32_t count;
	uint8_t cols[24];
	size_t len;
	const char *what;
};

/* Each of @bad as a record of @type after a LAUNCH of its thread: an error at its offset. */
static void expect_bad_launches(uint16_t type, const struct bad_launches *bad, size_t n)
{
	struct tb t;
	size_t i;

	for (i = 0; i < n; i++) {
		tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
		tb_block(&t, 100, 0, 1000);
		add_launch(&t, 10, 1);
		add_launches(&t, type, bad[i].count, 2, bad[i].cols, bad[i].len);
		tb_flush(&t);
		expect_error(bad[i].name, &t, bad[i].what);
		tb_free(&t);
	}
}

static void add_run(struct tb *t, uint32_t n, uint32_t seq, const uint8_t *cols, size_t len)
{
	add_launches(t, TRACE_REC_LAUNCH_RUN, n, seq, cols, len);
}

static void add_refs(struct tb *t, uint32_t n, uint32_t seq, const uint8_t *cols, size_t len)
{
	add_launches(t, TRACE_REC_LAUNCH_REFS, n, seq, cols, len);
}

/*
 * LAUNCH_RUN: read back as COUNT launches of the thread's previous LAUNCH, one per call, each
 * with its own delta and duration from the columns and consecutive numbers; varints of one to
 * five bytes; per thread across BLOCK switches. Every malformed column is an error at the
 * record's offset before any of its launches is handed out.
 */
static void test_launch_run(void)
{
	/* dt 1, 300, 2^32-1; dur 127, 128, 70000 */
	static const uint8_t cols[] = { 0x01, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f,
					0x7f, 0x80, 0x01, 0xf0, 0xa2, 0x04 };
	static const uint8_t one[] = { 0x05, 0x2a };	/* dt 5, dur 42 */
	struct trace_reader rd;
	struct trace_record r;
	uint64_t times[8];
	uint32_t durs[8], seqs[8], funcs[8];
	struct tb t;
	int n = 0, ret;

	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);			/* thread 0: func 1 at 1010 */
	tb_block(&t, 200, 1, 2000);
	add_launch(&t, 1, 1);
	((struct trace_rec_launch *)(t.chunk + t.chunk_len - sizeof(struct trace_rec_launch)))->func = 7;
	tb_block(&t, 100, 0, 1010);
	add_run(&t, 3, 5, cols, sizeof(cols));	/* thread 0: seq 5, 6, 7 */
	tb_block(&t, 200, 1, 2001);
	add_run(&t, 1, 9, one, sizeof(one));	/* thread 1: func 7, seq 9 at 2006 */
	tb_end(&t, 7, 0, TRACE_END_EXIT);
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "run.trace", 0)), 0);
	while ((ret = trace_reader_next(&rd, &r)) > 0) {
		const struct trace_rec_launch *l = r.rec;

		if (r.type == TRACE_REC_LAUNCH_RUN)
			n = 100;		/* never handed out as itself */
		if (r.type != TRACE_REC_LAUNCH || n >= 8)
			continue;
		CHECK_EQ(r.size, sizeof(*l));
		CHECK(r.is_thread);
		times[n] = r.ts_ns;
		durs[n] = l->call.dur;
		seqs[n] = l->call.seq;
		funcs[n++] = l->func * 1000 + r.thread_index;
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(n, 6);
	CHECK_EQ(rd.nr_records, 7 + 4);		/* 6 launches, END, 4 BLOCKs */
	CHECK_EQ(times[2], 1011);
	CHECK_EQ(times[3], 1311);
	CHECK_EQ(times[4], 1311 + 0xffffffffull);
	CHECK_EQ(times[5], 2006);
	CHECK_EQ(durs[2], 127);
	CHECK_EQ(durs[3], 128);
	CHECK_EQ(durs[4], 70000);
	CHECK_EQ(durs[5], 42);
	CHECK_EQ(seqs[2], 5);
	CHECK_EQ(seqs[3], 6);
	CHECK_EQ(seqs[4], 7);
	CHECK_EQ(seqs[5], 9);
	CHECK_EQ(funcs[4], 1000);
	CHECK_EQ(funcs[5], 7001);
	trace_reader_close(&rd);
	tb_free(&t);

	/* Malformed runs, each after a LAUNCH of its thread. */
	static const struct bad_launches bad[] = {
		{ "run_zero.trace", 0, { 0 }, 1, "launch_run of 0 launches" },
		{ "run_count.trace", 5, { 1, 1, 1, 1 }, 4, "counts more launches than its bytes" },
		{ "run_past.trace", 4, { 1, 1, 1, 1, 1, 1, 1, 0x81 }, 8, "varint runs past the record" },
		{ "run_wide.trace", 1, { 0xff, 0xff, 0xff, 0xff, 0x1f, 1 }, 6, "past 32 bits" },
		{ "run_long.trace", 1, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1 }, 7, "past 32 bits" },
		{ "run_overlong.trace", 1, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 1 }, 7,
		  "past 32 bits" },	/* 0 in six bytes: more than a 32-bit varint has */
		{ "run_tail.trace", 1, { 1, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, 10,
		  "bytes after its columns" },
		{ "run_pad.trace", 1, { 1, 1, 0, 9 }, 4, "padding is not zero" },
	};

	expect_bad_launches(TRACE_REC_LAUNCH_RUN, bad, sizeof(bad) / sizeof(bad[0]));

	/* No LAUNCH of the thread before it in the chunk. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);
	tb_block(&t, 200, 1, 2000);
	add_run(&t, 1, 2, one, sizeof(one));
	tb_flush(&t);
	expect_error("run_other.trace", &t, "launch_run with no launch of its thread before it");
	tb_free(&t);
}

/*
 * LAUNCH_GAP_RUN: a LAUNCH_RUN whose time values after the first are gaps after the previous
 * launch returned. The first value is a delta, after a LAUNCH with a duration (500 here) and
 * after another gap run; a gap plus the duration before it may reach 2^32 - 1 and no more.
 */
static void test_launch_gap_run(void)
{
	/* values 1, 5, 0; dur 100, 200, 300 */
	static const uint8_t cols[] = { 0x01, 0x05, 0x00, 0x64, 0xc8, 0x01, 0xac, 0x02 };
	/* value 2, then 1 after a duration of 2^32 - 2: a delta of 2^32 - 1; dur 2^32 - 2, 7 */
	static const uint8_t edge[] = { 0x02, 0x01, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x07 };
	static const uint64_t want_ts[] = { 1011, 1116, 1316, 1318, 1318 + 0xffffffffull };
	static const uint32_t want_dur[] = { 100, 200, 300, 0xfffffffe, 7 };
	struct trace_reader rd;
	struct trace_record r;
	struct tb t;
	int n = 0, ret;

	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);			/* at 1010, 500 ns */
	add_launches(&t, TRACE_REC_LAUNCH_GAP_RUN, 3, 2, cols, sizeof(cols));
	add_launches(&t, TRACE_REC_LAUNCH_GAP_RUN, 2, 5, edge, sizeof(edge));
	tb_end(&t, 7, 0, TRACE_END_EXIT);
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "gap_run.trace", 0)), 0);
	while ((ret = trace_reader_next(&rd, &r)) > 0) {
		const struct trace_rec_launch *l = r.rec;

		if (r.type != TRACE_REC_LAUNCH || l->call.seq < 2)
			continue;
		CHECK(n < 5);
		if (n >= 5)
			break;
		CHECK_EQ(r.ts_ns, want_ts[n]);
		CHECK_EQ(l->call.dur, want_dur[n]);
		CHECK_EQ(l->call.seq, 2 + (uint32_t)n);
		CHECK_EQ(l->func, 1);
		n++;
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(n, 5);
	trace_reader_close(&rd);
	tb_free(&t);

	static const struct bad_launches bad[] = {
		{ "gap_zero.trace", 0, { 0 }, 1, "launch_gap_run of 0 launches" },
		{ "gap_count.trace", 5, { 1, 1, 1, 1 }, 4, "counts more launches than its bytes" },
		{ "gap_past.trace", 4, { 1, 1, 1, 1, 1, 1, 1, 0x81 }, 8,
		  "launch_gap_run varint runs past the record" },
		{ "gap_pad.trace", 1, { 1, 1, 0, 9 }, 4, "padding is not zero" },
		/* a gap of 2 after a duration of 2^32 - 2 */
		{ "gap_sum.trace", 2, { 0x02, 0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x07 }, 8,
		  "gap and duration add up past 32 bits" },
	};

	expect_bad_launches(TRACE_REC_LAUNCH_GAP_RUN, bad, sizeof(bad) / sizeof(bad[0]));
}

/*
 * LAUNCH_REFS: read back as COUNT launches of its block's thread, each the chunk's LAUNCH named
 * by its shape column (of any thread: here thread 1 uses thread 0's) with its own delta,
 * duration and number (zigzag differences: down, up, wrapping 32 bits). A LAUNCH_REPEAT still
 * means its thread's previous LAUNCH record, never a launch of a LAUNCH_REFS (what a 1.2 reader,
 * which skips them, reads too); a thread with none has nothing to repeat. Malformed columns, a
 * shape the chunk lacks (or has only in the chunk before) are errors at the record's offset.
 */
static void test_launch_refs(void)
{
	/* shape 1, 0, 1; dt 3, 300, 0; dur 10, 20, 2^32-1; seq from 50: 50, 49, 2^32-1 (-50) */
	static const uint8_t cols[] = { 0x01, 0x00, 0x01,
					0x03, 0xac, 0x02, 0x00,
					0x0a, 0x14, 0xff, 0xff, 0xff, 0xff, 0x0f,
					0x00, 0x01, 0x63 };
	static const uint8_t one[] = { 0x00, 0x02, 0x03, 0x00 };	/* shape 0, dt 2, dur 3 */
	struct trace_rec_launch_repeat rep;
	struct trace_reader rd;
	struct trace_record r;
	uint64_t times[8];
	uint32_t durs[8], seqs[8], funcs[8], threads[8], refs[8];
	struct tb t;
	int n = 0, ret;

	memset(&rep, 0, sizeof(rep));
	rep.hdr.type = TRACE_REC_LAUNCH_REPEAT;
	rep.hdr.size = sizeof(rep);
	rep.hdr.dt_ns = 1;
	rep.dur = 5;
	rep.seq = 1;
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);			/* shape 0: func 1, at 1010 */
	add_launch(&t, 5, 2);			/* shape 1: func 7, at 1015 */
	((struct trace_rec_launch *)(t.chunk + t.chunk_len - sizeof(struct trace_rec_launch)))->func = 7;
	add_refs(&t, 1, 3, one, sizeof(one));	/* func 1 at 1017 */
	tb_rec(&t, &rep, sizeof(rep));		/* thread 0's LAUNCH record: func 7 */
	tb_block(&t, 200, 1, 2000);
	add_refs(&t, 3, 50, cols, sizeof(cols));
	tb_end(&t, 7, 0, TRACE_END_EXIT);
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "refs.trace", 0)), 0);
	while ((ret = trace_reader_next(&rd, &r)) > 0) {
		const struct trace_rec_launch *l = r.rec;

		CHECK(r.type != TRACE_REC_LAUNCH_REFS);
		if (r.type != TRACE_REC_LAUNCH || n >= 8)
			continue;
		CHECK_EQ(r.size, sizeof(*l));
		CHECK_EQ(l->call.hdr.size, sizeof(*l));
		times[n] = r.ts_ns;
		durs[n] = l->call.dur;
		seqs[n] = l->call.seq;
		threads[n] = r.thread_index;
		refs[n] = r.shape_ref;
		funcs[n++] = l->func;
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(n, 7);
	CHECK_EQ(rd.nr_records, 7 + 1 + 2);	/* launches, END, BLOCKs */
	/* Which of the chunk's LAUNCH records each repeats, 1 for the first. */
	CHECK_EQ(refs[0], 1);
	CHECK_EQ(refs[1], 2);
	CHECK_EQ(refs[2], 1);			/* LAUNCH_REFS: shape 0 */
	CHECK_EQ(refs[3], 2);			/* the repeat of thread 0's last LAUNCH */
	CHECK_EQ(refs[4], 2);
	CHECK_EQ(refs[5], 1);
	CHECK_EQ(refs[6], 2);
	CHECK_EQ(funcs[2], 1);
	CHECK_EQ(times[2], 1017);
	CHECK_EQ(seqs[2], 3);
	CHECK_EQ(funcs[3], 7);			/* the repeat: thread 0's LAUNCH record */
	CHECK_EQ(times[3], 1018);
	CHECK_EQ(funcs[4], 7);
	CHECK_EQ(funcs[5], 1);
	CHECK_EQ(funcs[6], 7);
	CHECK_EQ(threads[4], 1);
	CHECK_EQ(threads[6], 1);
	CHECK_EQ(times[4], 2003);
	CHECK_EQ(times[5], 2303);
	CHECK_EQ(times[6], 2303);
	CHECK_EQ(durs[4], 10);
	CHECK_EQ(durs[5], 20);
	CHECK_EQ(durs[6], 0xffffffffu);
	CHECK_EQ(seqs[4], 50);
	CHECK_EQ(seqs[5], 49);
	CHECK_EQ(seqs[6], 0xffffffffu);
	trace_reader_close(&rd);
	tb_free(&t);

	/* A repeat after a LAUNCH_REFS of a thread with no LAUNCH record: nothing to repeat. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);
	tb_block(&t, 200, 1, 2000);
	add_refs(&t, 1, 3, (const uint8_t[]){ 0, 1, 1, 0 }, 4);
	tb_rec(&t, &rep, sizeof(rep));
	tb_flush(&t);
	expect_error("refs_repeat.trace", &t, "launch_repeat with no launch of thread 1");
	tb_free(&t);

	static const struct bad_launches bad[] = {
		{ "refs_zero.trace", 0, { 0 }, 1, "launch_refs of 0 launches" },
		{ "refs_count.trace", 3, { 0, 1, 1, 1 }, 4, "counts more launches than its bytes" },
		{ "refs_past.trace", 1, { 0, 1, 1, 0x81, 0x81, 0x81, 0x81, 0x81 }, 8,
		  "varint runs past the record" },
		{ "refs_wide.trace", 1, { 0, 0xff, 0xff, 0xff, 0xff, 0x1f, 1, 1 }, 8, "past 32 bits" },
		{ "refs_shape.trace", 1, { 1, 1, 1, 1 }, 4,
		  "refers to a launch the chunk does not have before it" },
		{ "refs_tail.trace", 1, { 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, 12,
		  "bytes after its columns" },
		{ "refs_pad.trace", 1, { 0, 1, 1, 1, 0, 0, 0, 2 }, 8, "padding is not zero" },
	};

	expect_bad_launches(TRACE_REC_LAUNCH_REFS, bad, sizeof(bad) / sizeof(bad[0]));

	/* The chunk before's LAUNCH is not a shape of this one. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_block(&t, 100, 0, 1000);
	add_launch(&t, 10, 1);
	tb_flush(&t);
	tb_block(&t, 100, 0, 1010);
	add_refs(&t, 1, 2, (const uint8_t[]){ 0, 1, 1, 0 }, 4);
	tb_flush(&t);
	expect_error("refs_chunk.trace", &t, "launch_refs with no launch before it in the chunk");
	tb_free(&t);
}

/* ---- GPU_KERNEL_RUN and GPU_API_RUN ---- */

/* Columns being built: six of varints. */
struct cols {
	uint8_t b[6][512];
	size_t n[6];
};

static void col_put(struct cols *c, int col, uint64_t v)
{
	while (v >= 0x80) {
		c->b[col][c->n[col]++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	c->b[col][c->n[col]++] = (uint8_t)v;
}

static uint64_t zz(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static uint64_t zz32(uint32_t d)
{
	return (uint32_t)((d << 1) ^ (uint32_t)((int32_t)d >> 31));
}

/* A GPU run record of @count records: the struct, then @bytes, zero-padded to 8. */
static void add_gpu_run_bytes(struct tb *t, uint16_t type, uint32_t count, uint32_t corr,
			      uint64_t base_ns, const uint8_t *bytes, size_t len)
{
	uint8_t buf[4096];
	struct trace_rec_gpu_run r;
	size_t size = (sizeof(r) + len + 7) & ~(size_t)7;

	memset(&r, 0, sizeof(r));
	r.hdr.type = type;
	r.hdr.size = (uint16_t)size;
	r.count = count;
	r.corr = corr;
	r.base_ns = base_ns;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), bytes, len);
	tb_rec(t, buf, size);
}

static void add_gpu_run(struct tb *t, uint16_t type, uint32_t count, uint32_t corr,
			uint64_t base_ns, const struct cols *c)
{
	uint8_t bytes[3072];
	size_t len = 0;
	int i;

	for (i = 0; i < 6; i++) {
		memcpy(bytes + len, c->b[i], c->n[i]);
		len += c->n[i];
	}
	add_gpu_run_bytes(t, type, count, corr, base_ns, bytes, len);
}

static struct trace_rec_gpu_kernel kernel_of_shape(uint32_t name, uint32_t stream, uint32_t grid)
{
	struct trace_rec_gpu_kernel k;

	memset(&k, 0, sizeof(k));
	k.hdr.type = TRACE_REC_GPU_KERNEL;
	k.hdr.size = sizeof(k);
	k.device = 0;
	k.context = 1;
	k.stream = stream;
	k.name = name;
	k.grid[0] = grid;
	k.grid[1] = k.grid[2] = 1;
	k.block[0] = 256;
	k.block[1] = k.block[2] = 1;
	k.regs_per_thread = 32;
	k.static_smem_bytes = 1024;
	k.dyn_smem_bytes = 48;
	return k;
}

/*
 * The columns come back as the GPU_KERNEL and GPU_API records they encode, field for field:
 * shapes copied from the chunk's GPU_KERNELs (the first and a later one), times going
 * backwards and by more than 2^32, varints of one, two, three, five and ten bytes, correlation
 * and thread ids wrapping their 32 bits, graph ids and nodes. A run refers only to its own
 * chunk, and every malformed column is an error at the record's offset before any of its
 * records is handed out.
 */
static void test_gpu_runs(void)
{
	struct trace_rec_gpu_kernel shape[2], want[5];
	struct trace_rec_gpu_api api[4];
	static const uint32_t of_shape[5] = { 1, 0, 1, 1, 0 };
	struct trace_rec_gpu_kernel got[8];
	uint32_t got_ref[8];
	struct trace_rec_gpu_api got_api[8];
	struct trace_reader rd;
	struct trace_record r;
	struct cols kc, ac;
	uint64_t prev, node;
	uint32_t pcorr, ptid;
	int nk = 0, na = 0, ret, i;
	struct tb t;

	shape[0] = kernel_of_shape(3, 7, 132);
	shape[1] = kernel_of_shape(4, 13, 1);
	shape[0].start_ns = 100;
	shape[0].end_ns = 200;
	shape[0].cupti_corr = 1;
	shape[1].start_ns = 300;
	shape[1].end_ns = 400;
	shape[1].cupti_corr = 2;
	for (i = 0; i < 5; i++)
		want[i] = shape[of_shape[i]];
	want[0].start_ns = 5000;			/* from base_ns 1000: +4000 */
	want[0].end_ns = 5000 + (1ull << 33);		/* a duration past 32 bits */
	want[0].cupti_corr = 10;
	want[1].start_ns = 4000;			/* backwards */
	want[1].end_ns = 4000 + 1000000;		/* a three-byte duration */
	want[1].cupti_corr = 9;
	want[2].start_ns = UINT64_MAX - 5;		/* a 10-byte varint */
	want[2].end_ns = UINT64_MAX - 1;
	want[2].cupti_corr = UINT32_MAX;
	want[3].start_ns = 6000;			/* wraps back */
	want[3].end_ns = 6000;
	want[3].cupti_corr = 3;				/* wraps 32 bits forward */
	want[3].graph_id = 77;
	want[3].graph_node = 1ull << 40;
	want[4].start_ns = 6100;
	want[4].end_ns = 6200;
	want[4].cupti_corr = 4;
	want[4].graph_id = 77;
	want[4].graph_node = (1ull << 40) - 3;
	memset(&kc, 0, sizeof(kc));
	prev = 1000;
	pcorr = 10;
	node = 0;
	for (i = 0; i < 5; i++) {
		col_put(&kc, 0, of_shape[i]);
		col_put(&kc, 1, zz(want[i].start_ns - prev));
		col_put(&kc, 2, want[i].end_ns - want[i].start_ns);
		col_put(&kc, 3, zz32(want[i].cupti_corr - pcorr));
		col_put(&kc, 4, want[i].graph_id);
		col_put(&kc, 5, zz(want[i].graph_node - node));
		prev = want[i].start_ns;
		pcorr = want[i].cupti_corr;
		node = want[i].graph_node;
	}

	memset(api, 0, sizeof(api));
	memset(&ac, 0, sizeof(ac));
	for (i = 0; i < 4; i++) {
		api[i].hdr.type = TRACE_REC_GPU_API;
		api[i].hdr.size = sizeof(api[i]);
		api[i].start_ns = 10000 + 1000 * (uint64_t)(3 - i);	/* descending */
		api[i].end_ns = api[i].start_ns + (i == 2 ? 100000 : 7 * (uint64_t)i);
		api[i].cupti_corr = 20 + (uint32_t)i;
		api[i].tid = i == 2 ? 5 : 4000000000u;	/* 32-bit thread ids, down and up */
		api[i].cbid = i == 3 ? UINT32_MAX : 211;
		api[i].domain = i == 1 ? TRACE_GPU_API_RUNTIME : TRACE_GPU_API_DRIVER;
	}
	prev = 9000;
	pcorr = 20;
	ptid = 0;
	for (i = 0; i < 4; i++) {
		col_put(&ac, 0, zz(api[i].start_ns - prev));
		col_put(&ac, 1, api[i].end_ns - api[i].start_ns);
		col_put(&ac, 2, zz32(api[i].cupti_corr - pcorr));
		col_put(&ac, 3, zz32(api[i].tid - ptid));
		col_put(&ac, 4, api[i].cbid);
		col_put(&ac, 5, api[i].domain);
		prev = api[i].start_ns;
		pcorr = api[i].cupti_corr;
		ptid = api[i].tid;
	}

	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_rec(&t, &shape[0], sizeof(shape[0]));
	add_gpu_run(&t, TRACE_REC_GPU_API_RUN, 4, 20, 9000, &ac);
	tb_rec(&t, &shape[1], sizeof(shape[1]));
	add_gpu_run(&t, TRACE_REC_GPU_KERNEL_RUN, 5, 10, 1000, &kc);
	tb_end(&t, 11, 0, TRACE_END_EXIT);
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "gpu_runs.trace", 0)), 0);
	while ((ret = trace_reader_next(&rd, &r)) > 0) {
		CHECK(r.type != TRACE_REC_GPU_KERNEL_RUN && r.type != TRACE_REC_GPU_API_RUN);
		CHECK(!r.is_thread);
		if (r.type == TRACE_REC_GPU_KERNEL && nk < 8) {
			CHECK_EQ(r.size, sizeof(got[0]));
			got_ref[nk] = r.shape_ref;
			memcpy(&got[nk++], r.rec, sizeof(got[0]));
		} else if (r.type == TRACE_REC_GPU_API && na < 8) {
			CHECK_EQ(r.size, sizeof(got_api[0]));
			CHECK_EQ(r.shape_ref, 0);
			memcpy(&got_api[na++], r.rec, sizeof(got_api[0]));
		}
	}
	CHECK_EQ(ret, 0);
	CHECK_EQ(rd.nr_records, 2 + 5 + 4 + 1);
	CHECK_EQ(nk, 7);
	CHECK_EQ(na, 4);
	CHECK(!memcmp(&got[0], &shape[0], sizeof(shape[0])));
	CHECK(!memcmp(&got[1], &shape[1], sizeof(shape[1])));
	CHECK_EQ(got_ref[0], 1);		/* the chunk's GPU_KERNELs, 1 for the first */
	CHECK_EQ(got_ref[1], 2);
	for (i = 0; i < 5 && nk == 7; i++)
		CHECK_EQ(got_ref[2 + i], of_shape[i] + 1);
	for (i = 0; i < 5 && nk == 7; i++)
		if (memcmp(&got[2 + i], &want[i], sizeof(want[i]))) {
			fprintf(stderr, "gpu_kernel_run record %d differs\n", i);
			check_failures++;
		}
	for (i = 0; i < 4 && na == 4; i++)
		if (memcmp(&got_api[i], &api[i], sizeof(api[i]))) {
			fprintf(stderr, "gpu_api_run record %d differs\n", i);
			check_failures++;
		}
	trace_reader_close(&rd);
	tb_free(&t);

	/* A shape in the chunk before does not count: chunks decode on their own. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_rec(&t, &shape[0], sizeof(shape[0]));
	tb_rec(&t, &shape[1], sizeof(shape[1]));
	tb_flush(&t);
	add_gpu_run(&t, TRACE_REC_GPU_KERNEL_RUN, 5, 10, 1000, &kc);
	tb_flush(&t);
	expect_error("gpu_run_chunk.trace", &t, "gpu_kernel_run with no gpu_kernel before it");
	tb_free(&t);

	/* Shape 1 of a chunk that has one GPU_KERNEL only. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_rec(&t, &shape[0], sizeof(shape[0]));
	add_gpu_run(&t, TRACE_REC_GPU_KERNEL_RUN, 5, 10, 1000, &kc);
	tb_flush(&t);
	expect_error("gpu_run_shape.trace", &t,
		     "gpu_kernel_run refers to a gpu_kernel the chunk does not have before it");
	tb_free(&t);

	/* Malformed columns, each after a GPU_KERNEL (shape 0). */
	static const struct {
		const char *name;
		uint16_t type;
		uint32_t count;
		uint8_t cols[24];
		size_t len;
		const char *what;
	} bad[] = {
		{ "grun_zero.trace", TRACE_REC_GPU_API_RUN, 0, { 0 }, 1, "gpu_api_run of 0 records" },
		{ "grun_count.trace", TRACE_REC_GPU_KERNEL_RUN, 2, { 0, 1, 1, 1, 1, 1, 1, 1 }, 8,
		  "counts more records than its bytes hold" },
		{ "grun_past.trace", TRACE_REC_GPU_KERNEL_RUN, 1, { 0, 1, 1, 1, 1, 0x81, 0x81, 0x81 }, 8,
		  "varint runs past the record" },
		{ "grun_wide.trace", TRACE_REC_GPU_API_RUN, 1,
		  { 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 1, 1, 1, 1 }, 15,
		  "past 64 bits" },
		{ "grun_long.trace", TRACE_REC_GPU_API_RUN, 1,
		  { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1, 1, 1, 1, 1 },
		  16, "past 64 bits" },
		{ "grun_corr.trace", TRACE_REC_GPU_KERNEL_RUN, 1, { 0, 1, 1, 0x80, 0x80, 0x80, 0x80,
		  0x10, 1, 1 }, 10, "value out of its field's range" },
		{ "grun_domain.trace", TRACE_REC_GPU_API_RUN, 1, { 1, 1, 1, 1, 1, 0x80, 0x80, 0x04 }, 8,
		  "value out of its field's range" },
		{ "grun_tail.trace", TRACE_REC_GPU_KERNEL_RUN, 1, { 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
		  0, 0, 0 }, 14, "has bytes after its columns" },
		{ "grun_pad.trace", TRACE_REC_GPU_KERNEL_RUN, 1, { 0, 1, 1, 1, 1, 1, 0, 3 }, 8,
		  "padding is not zero" },
	};
	size_t b;

	for (b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
		tb_rec(&t, &shape[0], sizeof(shape[0]));
		add_gpu_run_bytes(&t, bad[b].type, bad[b].count, 0, 0, bad[b].cols, bad[b].len);
		tb_flush(&t);
		expect_error(bad[b].name, &t, bad[b].what);
		tb_free(&t);
	}
}

/* A STRING of @n bytes (at most a record's) that zstd cannot shrink: a chunk's ratio set by hand. */
static void add_noise(struct tb *t, uint32_t id, size_t n)
{
	static uint8_t buf[TRACE_MAX_RECORD];
	struct trace_rec_string *r = (void *)buf;
	uint64_t x = 88172645463325252ull;
	size_t i;

	memset(buf, 0, sizeof(buf));
	r->hdr.type = TRACE_REC_STRING;
	r->hdr.size = (uint16_t)((sizeof(*r) + n + 7) & ~(size_t)7);
	r->id = id;
	r->len = (uint32_t)n;
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[sizeof(*r) + i] = (uint8_t)x;
	}
	tb_rec(t, buf, r->hdr.size);
}

/*
 * A 1 MiB chunk of launch runs and @noise incompressible bytes; its ratio into *@ratio. Returns
 * the launches it holds.
 */
/* Bytes of noise that put a 1 MiB chunk of launch runs just under and just over the limit. */
#define NOISE_UNDER 1200
#define NOISE_OVER 500

static size_t build_ratio(struct tb *t, size_t noise, double *ratio)
{
	const size_t per_run = (TRACE_MAX_RECORD - sizeof(struct trace_rec_launch_run)) / 2;
	const struct trace_chunk_header *ch;
	size_t off, runs;

	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	add_noise(t, 1, noise);
	off = t->chunk_len + sizeof(struct trace_rec_block) + sizeof(struct trace_rec_launch);
	tb_launch_bomb(t, 1u << 20);
	runs = (t->chunk_len - off) / TRACE_MAX_RECORD;
	off = t->len;
	tb_flush(t);
	ch = (const void *)(t->file + off);
	*ratio = (double)ch->raw_bytes / ch->zstd_bytes;
	return 1 + runs * per_run;
}

/*
 * Decompression bombs: a chunk whose records outweigh its zstd frame past 1024:1 (16 MiB of
 * launch runs in 1.6 KB: 8.4 M launches) is refused at its header, with the file and the offset
 * of its raw size, before its frame is read; the chunks before it are read. Near the limit, a
 * chunk of 700-1000:1 is read whole and one of 1100-2000:1 is refused.
 */
static void test_bomb(void)
{
	struct trace_reader rd;
	const char *path;
	char want[64];
	double ratio;
	struct tb t;
	uint64_t ts;
	size_t off, launches;
	int n, ret;

	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(&t, 1, "cuLaunchKernel");
	tb_api_def(&t, 1, TRACE_FAM_LAUNCH, 1);
	tb_block(&t, 100, 0, 5000);
	add_launch(&t, 10, 1);
	add_launch(&t, 20, 2);
	tb_flush(&t);
	off = t.len;
	tb_launch_bomb(&t, 16u << 20);
	tb_flush(&t);
	CHECK(t.len - off < 4096);
	path = tb_write(&t, "bomb.trace", 0);
	ret = read_all(path, &rd, &n, &ts);
	CHECK(ret < 0);
	CHECK_EQ(n, 2);			/* chunk 0's launches, then the error */
	snprintf(want, sizeof(want), "offset 0x%zx: chunk 1: ", off + 8);
	if (!strstr(rd.err, path) || !strstr(rd.err, want) ||
	    !strstr(rd.err, "a decompression bomb")) {
		fprintf(stderr, "bomb: error \"%s\" lacks the path, \"%s\" or what\n", rd.err,
			want);
		check_failures++;
	}
	trace_reader_close(&rd);
	tb_free(&t);

	launches = build_ratio(&t, NOISE_UNDER, &ratio);
	if (!(ratio > 700 && ratio < TRACE_MAX_CHUNK_RATIO)) {
		fprintf(stderr, "bomb: a chunk near the limit has %.0f:1\n", ratio);
		check_failures++;
	}
	CHECK_EQ(read_all(tb_write(&t, "ratio_under.trace", 0), &rd, &n, &ts), 0);
	CHECK_EQ(n, launches);
	trace_reader_close(&rd);
	tb_free(&t);

	build_ratio(&t, NOISE_OVER, &ratio);
	if (!(ratio > TRACE_MAX_CHUNK_RATIO && ratio < 2000)) {
		fprintf(stderr, "bomb: a chunk past the limit has %.0f:1\n", ratio);
		check_failures++;
	}
	expect_error("ratio_over.trace", &t, "a decompression bomb");
	tb_free(&t);
}

/* A file that cannot be read has no offset to name: its error reads as the system's. */
/* A STACK of @nat native and @py Python frames (addresses 0x1000 + i, files and functions
 * STRING 1 and 2, lines 10 + i) with id @id, in @buf; its size. */
static size_t stack_rec(uint64_t *buf, uint32_t id, uint16_t nat, uint16_t py)
{
	struct trace_rec_stack *s = (void *)buf;
	struct trace_stack_py *f;
	uint64_t *pc = (uint64_t *)(s + 1);
	size_t size = TRACE_STACK_BYTES(nat, py);
	uint16_t i;

	memset(buf, 0, size);
	s->hdr.type = TRACE_REC_STACK;
	s->hdr.size = (uint16_t)size;
	s->id = id;
	s->nr_native = nat;
	s->nr_python = py;
	s->flags = py ? TRACE_STACK_PYTHON : 0;
	for (i = 0; i < nat; i++)
		pc[i] = 0x1000 + i;
	f = (struct trace_stack_py *)(pc + nat);
	for (i = 0; i < py; i++) {
		f[i].file = 1;
		f[i].func = 2;
		f[i].line = 10 + i;
	}
	return size;
}

/* STACK, PC and CALL_STACK (1.9): read back as written; frames that do not fit refused. */
static void test_stacks(void)
{
	uint64_t buf[TRACE_STACK_BYTES(TRACE_STACK_MAX_FRAMES + 1, 2) / 8 + 1];
	const struct trace_rec_call_stack *cs = NULL;
	const struct trace_rec_stack *st = NULL;
	struct trace_rec_call_stack c;
	struct trace_rec_sync sync;
	struct trace_rec_pc pc;
	struct trace_reader rd;
	struct trace_record r;
	uint64_t sync_ts = 0, cs_ts = 0;
	size_t size;
	struct tb t;
	int ret;

	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(&t, 1, "train.py");
	tb_string(&t, 2, "step");
	memset(&pc, 0, sizeof(pc));
	pc.hdr.type = TRACE_REC_PC;
	pc.hdr.size = sizeof(pc);
	pc.pc = 0x1000;
	tb_rec(&t, &pc, sizeof(pc));
	tb_rec(&t, buf, stack_rec(buf, 1, 3, 2));
	tb_block(&t, 7, 0, 1000);
	memset(&sync, 0, sizeof(sync));
	tb_call(&sync.call, TRACE_REC_SYNC, sizeof(sync), 50, 3, 10, 0, 0);
	tb_rec(&t, &sync, sizeof(sync));
	memset(&c, 0, sizeof(c));
	c.hdr.type = TRACE_REC_CALL_STACK;
	c.hdr.size = sizeof(c);
	c.stack = 1;
	c.api = 3;
	tb_rec(&t, &c, sizeof(c));
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "stacks.trace", 0)), 0);
	while ((ret = trace_reader_next(&rd, &r)) > 0) {
		if (r.type == TRACE_REC_STACK) {
			st = r.rec;
			CHECK(!r.is_thread);
			CHECK_EQ(st->nr_native, 3);
			CHECK_EQ(st->nr_python, 2);
			CHECK_EQ(trace_stack_pcs(st)[2], 0x1002);
			CHECK_EQ(trace_stack_py(st)[1].line, 11);
			CHECK_EQ(trace_stack_py(st)[1].func, 2);
		} else if (r.type == TRACE_REC_SYNC) {
			sync_ts = r.ts_ns;
		} else if (r.type == TRACE_REC_CALL_STACK) {
			CHECK(r.is_thread);
			cs = r.rec;
			cs_ts = r.ts_ns;
			CHECK_EQ(cs->stack, 1);
		}
	}
	CHECK_EQ(ret, 0);
	CHECK(st && cs);
	CHECK_EQ(sync_ts, 1050);
	CHECK_EQ(cs_ts, sync_ts);	/* stamped with its call's start */
	trace_reader_close(&rd);
	tb_free(&t);

	/* More frames than the record holds. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	size = stack_rec(buf, 1, 3, 2);
	((struct trace_rec_stack *)buf)->nr_native = 5;
	tb_rec(&t, buf, size);
	tb_flush(&t);
	expect_error("stack_over.trace", &t, "stack of 5 native and 2 Python frames in a 80-byte");
	tb_free(&t);

	/* More frames than a stack may have, however big the record. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_rec(&t, buf, stack_rec(buf, 1, TRACE_STACK_MAX_FRAMES + 1, 0));
	tb_flush(&t);
	expect_error("stack_deep.trace", &t, "stack of 65 native");
	tb_free(&t);

	/* A STACK smaller than its struct. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	stack_rec(buf, 1, 0, 0);
	((struct trace_rec_stack *)buf)->hdr.size = 16;
	tb_rec(&t, buf, 16);
	tb_flush(&t);
	expect_error("stack_small.trace", &t, "stack record of 16 bytes");
	tb_free(&t);

	/* A CALL_STACK outside a thread block. */
	tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_rec(&t, &c, sizeof(c));
	tb_flush(&t);
	expect_error("call_stack_noblock.trace", &t, "call_stack record outside a thread block");
	tb_free(&t);
}

static void test_missing_file(void)
{
	struct trace_reader rd;

	CHECK_EQ(trace_reader_open(&rd, "/nonexistent/x.trace"), -ENOENT);
	CHECK_STR(rd.err, "/nonexistent/x.trace: No such file or directory");
	CHECK_EQ(trace_reader_open(&rd, "/"), -EISDIR);
	CHECK_STR(rd.err, "/: Is a directory");
}

int main(void)
{
	RUN(test_valid);
	RUN(test_truncated);
	RUN(test_bad_header);
	RUN(test_bad_records);
	RUN(test_bad_chunks);
	RUN(test_unknown_and_grown);
	RUN(test_launch_repeat);
	RUN(test_launch_run);
	RUN(test_launch_gap_run);
	RUN(test_launch_refs);
	RUN(test_gpu_runs);
	RUN(test_bomb);
	RUN(test_stacks);
	RUN(test_missing_file);
	return TEST_RESULT();
}
