// SPDX-License-Identifier: MIT
/*
 * test_reader.c - the trace reader on hand-built traces: a valid one (times rebuilt from deltas,
 * unknown types skipped, grown records accepted), truncated ones (partial results, no error),
 * corrupt ones (each refused with a message naming the problem and the byte offset), and
 * LAUNCH_REPEAT expanded per thread within a chunk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_builder.h"
#include "trace_reader.h"

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

static void add_end(struct tb *t, uint64_t records)
{
	struct trace_rec_end e;

	memset(&e, 0, sizeof(e));
	e.hdr.type = TRACE_REC_END;
	e.hdr.size = sizeof(e);
	e.nr_records = records;
	e.reason = TRACE_END_EXIT;
	tb_rec(t, &e, sizeof(e));
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
	add_end(t, 9);
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
	memset(buf, 0, sizeof(buf));
	tb_call((struct trace_call *)buf, TRACE_REC_LAUNCH, 80, 3, 1, 0, 0, 1);	/* grown */
	tb_rec(&t, buf, 80);
	add_end(&t, 2);
	tb_flush(&t);
	CHECK_EQ(trace_reader_open(&rd, tb_write(&t, "grown.trace", 0)), 0);
	while (trace_reader_next(&rd, &r) > 0) {
		nr_unknown += r.type == 200;
		if (r.type == TRACE_REC_LAUNCH) {
			nr_launch++;
			CHECK_EQ(r.size, 80);
			CHECK_EQ(r.ts_ns, 103);
		}
	}
	CHECK_EQ(nr_unknown, 1);
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

/* A LAUNCH_RUN of @n launches: columns given as bytes (already varint-encoded), padded. */
static void add_run(struct tb *t, uint32_t n, uint32_t seq, const uint8_t *cols, size_t len)
{
	uint8_t buf[256];
	struct trace_rec_launch_run r;
	size_t size = (sizeof(r) + len + 7) & ~(size_t)7;

	memset(&r, 0, sizeof(r));
	r.hdr.type = TRACE_REC_LAUNCH_RUN;
	r.hdr.size = (uint16_t)size;
	r.count = n;
	r.seq = seq;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), cols, len);
	tb_rec(t, buf, size);
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
	add_end(&t, 7);
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
	static const struct {
		const char *name;
		uint32_t count;
		uint8_t cols[24];
		size_t len;
		const char *what;
	} bad[] = {
		{ "run_zero.trace", 0, { 0 }, 1, "launch_run of 0 launches" },
		{ "run_count.trace", 5, { 1, 1, 1, 1 }, 4, "counts more launches than its bytes" },
		{ "run_past.trace", 4, { 1, 1, 1, 1, 1, 1, 1, 0x81 }, 8, "varint runs past the record" },
		{ "run_wide.trace", 1, { 0xff, 0xff, 0xff, 0xff, 0x1f, 1 }, 6, "past 32 bits" },
		{ "run_long.trace", 1, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1 }, 7, "past 32 bits" },
		{ "run_tail.trace", 1, { 1, 1, 0, 0, 0, 0, 0, 0, 0, 0 }, 10,
		  "bytes after its columns" },
		{ "run_pad.trace", 1, { 1, 1, 0, 9 }, 4, "padding is not zero" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
		tb_block(&t, 100, 0, 1000);
		add_launch(&t, 10, 1);
		add_run(&t, bad[i].count, 2, bad[i].cols, bad[i].len);
		tb_flush(&t);
		expect_error(bad[i].name, &t, bad[i].what);
		tb_free(&t);
	}

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

static void test_missing_file(void)
{
	struct trace_reader rd;

	CHECK_EQ(trace_reader_open(&rd, "/nonexistent/x.trace"), -ENOENT);
	CHECK(strstr(rd.err, "/nonexistent/x.trace") != NULL);
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
	RUN(test_missing_file);
	return TEST_RESULT();
}
