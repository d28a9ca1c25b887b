// SPDX-License-Identifier: MIT
/*
 * trace_reader.c - see trace_reader.h. Owns: header validation, chunk framing, zstd
 * decompression, per-record bounds checks, thread-block time reconstruction. Does not print and
 * does not interpret record contents beyond what framing needs.
 */
#include "trace_reader.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zstd.h>

#include "gpushim/varint.h"
#include "trace_internal.h"
#include "uthash.h"
#include "util/util.h"

static int reader_fail(struct trace_reader *rd, int ret, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int reader_fail(struct trace_reader *rd, int ret, uint64_t off, const char *fmt, ...)
{
	int n = snprintf(rd->err, sizeof(rd->err), "%s: offset 0x%llx: ", rd->path,
			 (unsigned long long)off);
	va_list ap;

	if (n < 0 || (size_t)n >= sizeof(rd->err))
		return ret;
	va_start(ap, fmt);
	vsnprintf(rd->err + n, sizeof(rd->err) - n, fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- Opening ---- */

static int read_at(struct trace_reader *rd, uint64_t off, void *buf, size_t n)
{
	if (fseeko(rd->f, (off_t)off, SEEK_SET) != 0)
		return -errno;
	if (fread(buf, 1, n, rd->f) != n)
		return ferror(rd->f) ? -EIO : -ENODATA;
	return 0;
}

static void split_cmdline(struct trace_reader *rd, const char *s, size_t len)
{
	size_t i, start = 0;
	struct strbuf sb;

	sb_init(&sb);
	rd->argc = 0;
	rd->argv = xcalloc(len + 2, sizeof(char *));
	for (i = 0; i <= len; i++) {
		if (i == len || s[i] == 0) {
			rd->argv[rd->argc++] = xstrndup(s + start, i - start);
			if (sb.len)
				sb_add(&sb, " ", 1);
			sb_add(&sb, s + start, i - start);
			start = i + 1;
		}
	}
	rd->cmdline = sb.buf ? sb.buf : xstrdup("");
}

int trace_reader_open(struct trace_reader *rd, const char *path)
{
	struct trace_file_header *h = &rd->hdr;
	struct stat st;
	char *strings = NULL;
	size_t need;
	int ret;

	memset(rd, 0, sizeof(*rd));
	rd->path = path;
	rd->f = fopen(path, "rb");
	if (!rd->f)
		return reader_fail(rd, -errno, 0, "%s", strerror(errno));
	if (fstat(fileno(rd->f), &st) < 0) {
		ret = reader_fail(rd, -errno, 0, "%s", strerror(errno));
		goto fail;
	}
	rd->file_bytes = (uint64_t)st.st_size;
	ret = read_at(rd, 0, h, sizeof(*h));
	if (ret < 0) {
		ret = reader_fail(rd, -EPROTO, 0, "not a gpushim trace (%llu bytes, header needs %zu)",
				  (unsigned long long)rd->file_bytes, sizeof(*h));
		goto fail;
	}
	if (memcmp(h->magic, TRACE_MAGIC, sizeof(TRACE_MAGIC)) != 0) {
		ret = reader_fail(rd, -EPROTO, 0, "not a gpushim trace (bad magic)");
		goto fail;
	}
	if (h->version_major != TRACE_VERSION_MAJOR) {
		ret = reader_fail(rd, -EPROTO, 8, "trace format %u.%u; this gpushim reads %u.x",
				  h->version_major, h->version_minor, TRACE_VERSION_MAJOR);
		goto fail;
	}
	need = sizeof(*h) + (size_t)h->shim_version_len + h->host_len + h->cmdline_len;
	if (h->header_bytes < need || h->header_bytes > TRACE_MAX_HEADER_BYTES ||
	    h->header_bytes % 8) {
		ret = reader_fail(rd, -EPROTO, 12, "header size %u is invalid (strings need %zu)",
				  h->header_bytes, need);
		goto fail;
	}
	if (h->header_bytes > rd->file_bytes) {
		ret = reader_fail(rd, -EPROTO, 12, "header size %u exceeds the file (%llu bytes)",
				  h->header_bytes, (unsigned long long)rd->file_bytes);
		goto fail;
	}
	strings = xmalloc(need - sizeof(*h) + 1);
	ret = read_at(rd, sizeof(*h), strings, need - sizeof(*h));
	if (ret < 0) {
		ret = reader_fail(rd, ret, sizeof(*h), "cannot read header strings");
		goto fail;
	}
	rd->shim_version = xstrndup(strings, h->shim_version_len);
	rd->host = xstrndup(strings + h->shim_version_len, h->host_len);
	split_cmdline(rd, strings + h->shim_version_len + h->host_len, h->cmdline_len);
	free(strings);

	rd->dctx = (struct ZSTD_DCtx_s *)ZSTD_createDCtx();
	if (!rd->dctx)
		die("out of memory creating a zstd context");
	rd->next_chunk_off = h->header_bytes;
	return 0;
fail:
	free(strings);
	trace_reader_close(rd);
	return ret;
}

static void forget_launches(struct trace_reader *rd);

void trace_reader_close(struct trace_reader *rd)
{
	int i;

	forget_launches(rd);
	if (rd->f)
		fclose(rd->f);
	rd->f = NULL;
	ZSTD_freeDCtx((ZSTD_DCtx *)rd->dctx);
	rd->dctx = NULL;
	free(rd->zstd_buf);
	free(rd->raw);
	free(rd->kernel_shapes);
	free(rd->launch_shapes);
	free(rd->columns.values);
	rd->columns.values = NULL;
	rd->columns.cap = 0;
	rd->kernel_shapes = NULL;
	rd->launch_shapes = NULL;
	rd->nr_kernel_shapes = rd->kernel_shapes_cap = rd->nr_launch_shapes = rd->launch_shapes_cap = 0;
	free(rd->shim_version);
	free(rd->host);
	free(rd->cmdline);
	for (i = 0; i < rd->argc; i++)
		free(rd->argv[i]);
	free(rd->argv);
	rd->zstd_buf = rd->raw = NULL;
	rd->shim_version = rd->host = rd->cmdline = NULL;
	rd->argv = NULL;
	rd->argc = 0;
}

/* ---- Chunks ---- */

/*
 * The most a chunk's records may outweigh its zstd frame. zstd reaches 10,000:1 and more on
 * repeated bytes (a 16 MiB chunk of identical maximal LAUNCH_RUNs fits in 1.5 KB), and the
 * reader hands out every launch such a chunk counts: a few KB of file would keep the analyzer
 * busy for minutes with hundreds of millions of launches. The shim's chunks stay far below:
 * on the traces recorded on the H200 or the fake driver (tests/traces, tests/fuzz/seeds) no
 * chunk passes 7.8:1 at the writer's level; the most alike records a program makes, a polling
 * loop's context synchronizations (tests/e2e/shim_ends.sh), reach 59:1 at the default level and
 * 90:1 at level 9. TRACE_MAX_CHUNK_RATIO (1024:1) leaves ten times that, and refuses bombs,
 * which are thousands to one. With it, as a handed-out record costs at least 2 raw bytes (a
 * LAUNCH_RUN's launch), a file of N bytes hands out at most 512 N records whatever it holds,
 * and a bomb fails at its chunk header, before its frame is read or decompressed.
 */

/* Return 1 with a chunk loaded, 0 at the end of the file, <0 on corrupt data. */
static int load_chunk(struct trace_reader *rd)
{
	struct trace_chunk_header ch;
	uint64_t off = rd->next_chunk_off;
	uint64_t left = rd->file_bytes > off ? rd->file_bytes - off : 0;
	size_t n;

	if (left == 0)
		return 0;
	if (left < sizeof(ch)) {
		rd->is_truncated = 1;
		return 0;
	}
	if (read_at(rd, off, &ch, sizeof(ch)) < 0)
		return reader_fail(rd, -EIO, off, "cannot read chunk header");
	if (ch.magic != TRACE_CHUNK_MAGIC)
		return reader_fail(rd, -EPROTO, off, "bad chunk magic 0x%08x (chunk %llu)", ch.magic,
				   (unsigned long long)rd->nr_chunks);
	if (ch.raw_bytes > TRACE_MAX_CHUNK_RAW || ch.raw_bytes < sizeof(struct trace_rec_hdr))
		return reader_fail(rd, -EPROTO, off + 8, "chunk %u: raw size %u out of range",
				   ch.seq, ch.raw_bytes);
	if (ch.zstd_bytes > ZSTD_compressBound(ch.raw_bytes) || ch.zstd_bytes == 0)
		return reader_fail(rd, -EPROTO, off + 12, "chunk %u: compressed size %u invalid",
				   ch.seq, ch.zstd_bytes);
	if (ch.raw_bytes > (uint64_t)ch.zstd_bytes * TRACE_MAX_CHUNK_RATIO)
		return reader_fail(rd, -EPROTO, off + 8,
				   "chunk %u: %u record bytes from %u compressed, %u:1 (the limit "
				   "is %u:1): a decompression bomb",
				   ch.seq, ch.raw_bytes, ch.zstd_bytes,
				   (ch.raw_bytes + ch.zstd_bytes - 1) / ch.zstd_bytes,
				   TRACE_MAX_CHUNK_RATIO);
	if (ch.seq != rd->nr_chunks)
		return reader_fail(rd, -EPROTO, off + 4, "chunk sequence %u, expected %llu", ch.seq,
				   (unsigned long long)rd->nr_chunks);
	if (left - sizeof(ch) < ch.zstd_bytes) {
		rd->is_truncated = 1;	/* the process died while writing this chunk */
		return 0;
	}
	XGROW(rd->zstd_buf, rd->zstd_buf_cap, ch.zstd_bytes);
	XGROW(rd->raw, rd->raw_cap, ch.raw_bytes);
	if (read_at(rd, off + sizeof(ch), rd->zstd_buf, ch.zstd_bytes) < 0)
		return reader_fail(rd, -EIO, off + sizeof(ch), "cannot read chunk %u", ch.seq);
	n = ZSTD_decompressDCtx((ZSTD_DCtx *)rd->dctx, rd->raw, ch.raw_bytes, rd->zstd_buf,
				ch.zstd_bytes);
	if (ZSTD_isError(n))
		return reader_fail(rd, -EPROTO, off + sizeof(ch), "chunk %u: zstd: %s", ch.seq,
				   ZSTD_getErrorName(n));
	if (n != ch.raw_bytes)
		return reader_fail(rd, -EPROTO, off + sizeof(ch),
				   "chunk %u: decompressed to %zu bytes, header says %u", ch.seq, n,
				   ch.raw_bytes);
	rd->chunk_off = off;
	rd->chunk_seq = ch.seq;
	rd->next_chunk_off = off + sizeof(ch) + ch.zstd_bytes;
	rd->raw_len = ch.raw_bytes;
	rd->pos = 0;
	rd->is_in_block = 0;
	forget_launches(rd);
	rd->nr_kernel_shapes = rd->nr_launch_shapes = 0;
	rd->launch_refs.left = rd->gpu_run.left = rd->launch_run.left = 0;
	rd->nr_chunks++;
	return 1;
}

/* ---- LAUNCH_REPEAT: each thread's last LAUNCH in the chunk ---- */

struct last_launch {
	UT_hash_handle hh;
	uint32_t thread_index;
	const struct trace_rec_launch *rec;	/* the thread's last LAUNCH record, in the chunk */
	uint32_t ref;				/* its place in rd->launch_shapes, plus 1 */
};

static void forget_launches(struct trace_reader *rd)
{
	struct last_launch *e, *tmp;

	HASH_ITER(hh, rd->last_launches, e, tmp) {
		HASH_DEL(rd->last_launches, e);
		free(e);
	}
	rd->cur_last_launch = NULL;
}

/* The current block's thread's last LAUNCH record (what its LAUNCH_REPEATs mean) is @l. */
static void remember_launch(struct trace_reader *rd, const struct trace_rec_launch *l)
{
	struct last_launch *e = rd->cur_last_launch;

	if (!e) {
		HASH_FIND(hh, rd->last_launches, &rd->thread_index, sizeof(uint32_t), e);
		if (!e) {
			e = xcalloc(1, sizeof(*e));
			e->thread_index = rd->thread_index;
			HASH_ADD(hh, rd->last_launches, thread_index, sizeof(uint32_t), e);
		}
		rd->cur_last_launch = e;
	}
	e->rec = l;
	e->ref = (uint32_t)rd->nr_launch_shapes;	/* appended to rd->launch_shapes next */
}

/* Expand into rd->expanded; -1 when the thread has no LAUNCH before it in this chunk. */
static int expand_repeat(struct trace_reader *rd, const struct trace_rec_launch_repeat *r)
{
	struct last_launch *e = rd->cur_last_launch;

	if (!e)
		HASH_FIND(hh, rd->last_launches, &rd->thread_index, sizeof(uint32_t), e);
	if (!e)
		return -1;
	rd->cur_last_launch = e;
	memcpy(&rd->expanded, e->rec, sizeof(rd->expanded));
	rd->expanded_ref = e->ref + 1;
	rd->expanded.call.hdr.size = sizeof(rd->expanded);
	rd->expanded.call.hdr.dt_ns = r->hdr.dt_ns;
	rd->expanded.call.dur = r->dur;
	rd->expanded.call.seq = r->seq;
	return 0;
}

/*
 * An unsigned LEB128 varint of at most 5 bytes and 32 bits from [*p, end) (LAUNCH_RUN's
 * columns). Returns 0, or -1 when it runs past @end or does not fit.
 */
static int get_varint32(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	const uint8_t *start = *p;
	uint64_t x;

	if (varint_get(p, end, &x) < 0 || x > UINT32_MAX || *p - start > 5)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/*
 * Check a LAUNCH_RUN's or LAUNCH_GAP_RUN's (@is_gap) columns end to end before handing out any
 * of its launches, so a corrupt one fails at its own offset and never half-way: its varints,
 * and a gap run's deltas (a gap plus the previous duration) below 2^32. Returns NULL or what
 * is wrong, to follow the record's name.
 */
static const char *check_launch_run(struct trace_reader *rd, const struct trace_rec_launch_run *r,
			     int is_gap)
{
	const uint8_t *end = (const uint8_t *)r + r->hdr.size;
	const uint8_t *p = (const uint8_t *)(r + 1), *dt, *dur;
	uint32_t i, v, gap, prev = 0;

	if (!r->count)
		return "of 0 launches";
	if (r->count > (r->hdr.size - sizeof(*r)) / 2)
		return "counts more launches than its bytes hold";
	rd->launch_run.dt = p;
	for (i = 0; i < 2 * r->count; i++) {
		if (i == r->count)
			rd->launch_run.dur = p;
		if (get_varint32(&p, end, &v) < 0)
			return "varint runs past the record or past 32 bits";
	}
	if (end - p >= 8)
		return "has bytes after its columns";
	while (p < end)
		if (*p++)
			return "padding is not zero";
	/* The columns are whole now: read them in step, each gap against the duration before. */
	for (dt = rd->launch_run.dt, dur = rd->launch_run.dur, i = 0; is_gap && i < r->count; i++) {
		get_varint32(&dt, end, &gap);
		if (i && (uint64_t)gap + prev > UINT32_MAX)
			return "gap and duration add up past 32 bits";
		get_varint32(&dur, end, &prev);
	}
	rd->launch_run.is_gap = is_gap;
	return NULL;
}

/* Consumers see the LAUNCH a LAUNCH_REPEAT or a LAUNCH_RUN's launch stands for. */
static void out_expanded(struct trace_reader *rd, struct trace_record *out)
{
	out->rec = &rd->expanded;
	out->type = TRACE_REC_LAUNCH;
	out->size = sizeof(rd->expanded);
	out->shape_ref = rd->expanded_ref;
}

/* The next launch of the current LAUNCH_RUN into rd->expanded and @out. */
static void launch_run_next(struct trace_reader *rd, struct trace_record *out)
{
	const uint8_t *far = rd->raw + rd->pos;	/* the columns were checked: no bound is hit */
	uint32_t dt = 0, dur = 0;

	get_varint32(&rd->launch_run.dt, far, &dt);
	if (rd->launch_run.is_gap)	/* the first adds 0: the run starts from a repeat with none */
		dt += rd->expanded.call.dur;	/* check_launch_run: below 2^32 */
	get_varint32(&rd->launch_run.dur, far, &dur);
	rd->now_ns += dt;
	rd->expanded.call.hdr.dt_ns = dt;
	rd->expanded.call.dur = dur;
	rd->expanded.call.seq++;
	rd->launch_run.left--;
	out_expanded(rd, out);
	out->ts_ns = rd->now_ns;
	rd->nr_records++;
}

/* ---- Records as columns: LAUNCH_REFS, GPU_KERNEL_RUN, GPU_API_RUN ---- */


enum col_err { COL_OK, COL_VARINT, COL_RANGE, COL_TAIL, COL_PAD };

/*
 * Decode @ncols columns of @count varints each, from @first up to @end, into rd->columns.values
 * (column after column), column c's values at most @max[c]; after them only zero padding, less
 * than 8 bytes. On an error *@col is the column it is in.
 */
static enum col_err decode_columns(struct trace_reader *rd, const void *first, const uint8_t *end,
				   uint32_t count, unsigned ncols, const uint64_t *max,
				   unsigned *col)
{
	const uint8_t *p = first;
	uint32_t i;
	unsigned c;
	uint64_t v;

	XGROW(rd->columns.values, rd->columns.cap, (size_t)count * ncols);
	for (c = 0; c < ncols; c++) {
		uint64_t *out = rd->columns.values + (size_t)c * count;

		*col = c;
		for (i = 0; i < count; i++) {
			if (varint_get(&p, end, &v) < 0)
				return COL_VARINT;
			if (v > max[c])
				return COL_RANGE;
			out[i] = v;
		}
	}
	if (end - p >= 8)
		return COL_TAIL;
	while (p < end)
		if (*p++)
			return COL_PAD;
	return COL_OK;
}

/*
 * Check a GPU run's columns end to end (every varint, every value's range, every shape a
 * GPU_KERNEL the chunk has before it) before handing out any of its records, decoding them into
 * rd->columns.values (column after column). Returns NULL or what is wrong.
 */
static const char *check_gpu_run(struct trace_reader *rd, const struct trace_rec_gpu_run *r)
{
	static const uint64_t kernel_max[6] = { 0, UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX,
						UINT64_MAX };
	static const uint64_t api_max[6] = { UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX,
					     UINT32_MAX, UINT16_MAX };
	int is_kernel = r->hdr.type == TRACE_REC_GPU_KERNEL_RUN;
	uint64_t max[6];
	unsigned col = 0;

	if (!r->count)
		return "of 0 records";
	if (r->count > (r->hdr.size - sizeof(*r)) / 6)
		return "counts more records than its bytes hold";
	if (is_kernel && !rd->nr_kernel_shapes)
		return "with no gpu_kernel before it in the chunk";
	memcpy(max, is_kernel ? kernel_max : api_max, sizeof(max));
	if (is_kernel)
		max[0] = rd->nr_kernel_shapes - 1;
	switch (decode_columns(rd, r + 1, (const uint8_t *)r + r->hdr.size, r->count, 6, max,
			       &col)) {
	case COL_OK:
		return NULL;
	case COL_VARINT:
		return "varint runs past the record or past 64 bits";
	case COL_RANGE:
		return is_kernel && !col ? "refers to a gpu_kernel the chunk does not have before it" :
					   "value out of its field's range";
	case COL_TAIL:
		return "has bytes after its columns";
	case COL_PAD:
		return "padding is not zero";
	}
	return NULL;
}

/* The next record of the current GPU run into rd->gpu_kernel or rd->gpu_api and @out. */
static void gpu_run_next(struct trace_reader *rd, struct trace_record *out)
{
	const uint64_t *col = rd->columns.values + rd->columns.row++;
	size_t n = rd->columns.nr_rows;
	uint64_t v[6] = { col[0], col[n], col[2 * n], col[3 * n], col[4 * n], col[5 * n] };

	memset(out, 0, sizeof(*out));
	out->chunk_off = rd->chunk_off;
	if (rd->gpu_run.type == TRACE_REC_GPU_KERNEL_RUN) {
		struct trace_rec_gpu_kernel *k = &rd->gpu_kernel;

		memcpy(k, rd->kernel_shapes[v[0]], sizeof(*k));
		k->hdr.size = sizeof(*k);
		out->shape_ref = (uint32_t)v[0] + 1;
		rd->gpu_run.start_ns += zigzag_get(v[1]);
		k->start_ns = rd->gpu_run.start_ns;
		k->end_ns = rd->gpu_run.start_ns + v[2];
		rd->gpu_run.corr += (uint32_t)zigzag_get(v[3]);
		k->cupti_corr = rd->gpu_run.corr;
		k->graph_id = (uint32_t)v[4];
		rd->gpu_run.aux += zigzag_get(v[5]);
		k->graph_node = rd->gpu_run.aux;
		out->rec = k;
		out->type = TRACE_REC_GPU_KERNEL;
		out->size = sizeof(*k);
	} else {
		struct trace_rec_gpu_api *a = &rd->gpu_api;

		memset(a, 0, sizeof(*a));
		a->hdr.type = TRACE_REC_GPU_API;
		a->hdr.size = sizeof(*a);
		rd->gpu_run.start_ns += zigzag_get(v[0]);
		a->start_ns = rd->gpu_run.start_ns;
		a->end_ns = rd->gpu_run.start_ns + v[1];
		rd->gpu_run.corr += (uint32_t)zigzag_get(v[2]);
		a->cupti_corr = rd->gpu_run.corr;
		rd->gpu_run.aux = (uint32_t)(rd->gpu_run.aux + zigzag_get(v[3]));
		a->tid = (uint32_t)rd->gpu_run.aux;
		a->cbid = (uint32_t)v[4];
		a->domain = (uint16_t)v[5];
		out->rec = a;
		out->type = TRACE_REC_GPU_API;
		out->size = sizeof(*a);
	}
	rd->gpu_run.left--;
	rd->nr_records++;
}

/*
 * Check a LAUNCH_REFS's columns end to end (32-bit varints, every shape a LAUNCH the chunk has
 * before it) before handing out any of its launches, decoding them into rd->columns.values
 * (column after column). Returns NULL or what is wrong.
 */
static const char *check_launch_refs(struct trace_reader *rd, const struct trace_rec_launch_refs *r)
{
	uint64_t max[TRACE_LAUNCH_REFS_COLUMNS] = { 0, UINT32_MAX, UINT32_MAX, UINT32_MAX };
	unsigned col = 0;

	if (!r->count)
		return "launch_refs of 0 launches";
	if (r->count > (r->hdr.size - sizeof(*r)) / TRACE_LAUNCH_REFS_COLUMNS)
		return "launch_refs counts more launches than its bytes hold";
	if (!rd->nr_launch_shapes)
		return "launch_refs with no launch before it in the chunk";
	max[0] = rd->nr_launch_shapes - 1;
	switch (decode_columns(rd, r + 1, (const uint8_t *)r + r->hdr.size, r->count,
			       TRACE_LAUNCH_REFS_COLUMNS, max, &col)) {
	case COL_OK:
		return NULL;
	case COL_VARINT:
		return "launch_refs varint runs past the record or past 64 bits";
	case COL_RANGE:
		return col ? "launch_refs value past 32 bits" :
			     "launch_refs refers to a launch the chunk does not have before it";
	case COL_TAIL:
		return "launch_refs has bytes after its columns";
	case COL_PAD:
		return "launch_refs padding is not zero";
	}
	return NULL;
}

/* The next launch of the current LAUNCH_REFS into rd->expanded and @out. */
static void launch_refs_next(struct trace_reader *rd, struct trace_record *out)
{
	const uint64_t *v = rd->columns.values + rd->columns.row++;
	const struct trace_rec_launch *shape = rd->launch_shapes[v[0]];
	uint32_t dt = (uint32_t)v[rd->columns.nr_rows];
	uint32_t dur = (uint32_t)v[2 * rd->columns.nr_rows];
	uint32_t dseq = (uint32_t)v[3 * rd->columns.nr_rows];

	memcpy(&rd->expanded, shape, sizeof(rd->expanded));
	rd->expanded.call.hdr.size = sizeof(rd->expanded);
	rd->expanded.call.hdr.dt_ns = dt;
	rd->expanded.call.dur = dur;
	rd->launch_refs.seq += (uint32_t)zigzag_get(dseq);
	rd->expanded.call.seq = rd->launch_refs.seq;
	rd->expanded_ref = (uint32_t)v[0] + 1;
	rd->now_ns += dt;
	rd->launch_refs.left--;
	memset(out, 0, sizeof(*out));
	out->is_thread = 1;
	out->tid = rd->tid;
	out->thread_index = rd->thread_index;
	out->chunk_off = rd->chunk_off;
	out_expanded(rd, out);
	out->ts_ns = rd->now_ns;
	rd->nr_records++;
}

/* ---- Records ---- */

int trace_reader_next(struct trace_reader *rd, struct trace_record *out)
{
	for (;;) {
		const struct trace_rec_hdr *h;
		const struct trace_type *t;
		int ret;

		if (rd->launch_run.left) {
			memset(out, 0, sizeof(*out));
			out->is_thread = 1;
			out->tid = rd->tid;
			out->thread_index = rd->thread_index;
			out->chunk_off = rd->chunk_off;
			launch_run_next(rd, out);
			return 1;
		}
		if (rd->launch_refs.left) {
			launch_refs_next(rd, out);
			return 1;
		}
		if (rd->gpu_run.left) {
			gpu_run_next(rd, out);
			return 1;
		}
		if (rd->pos >= rd->raw_len) {
			if (rd->has_end)
				return 0;	/* nothing is read after END */
			ret = load_chunk(rd);
			if (ret <= 0)
				return ret;
			continue;
		}
		if (rd->raw_len - rd->pos < sizeof(*h))
			return reader_fail(rd, -EPROTO, rd->chunk_off,
					   "chunk %u: %zu stray bytes at record offset %zu",
					   rd->chunk_seq, rd->raw_len - rd->pos, rd->pos);
		h = (const void *)(rd->raw + rd->pos);
		if (h->size < sizeof(*h) || h->size % 8 || h->size > rd->raw_len - rd->pos)
			return reader_fail(rd, -EPROTO, rd->chunk_off,
					   "chunk %u, record offset %zu: size %u invalid (type %u)",
					   rd->chunk_seq, rd->pos, h->size, h->type);
		t = trace_type_get(h->type);
		if (t && h->size < t->min_size)
			return reader_fail(rd, -EPROTO, rd->chunk_off,
					   "chunk %u, record offset %zu: %s record of %u bytes, "
					   "needs %u",
					   rd->chunk_seq, rd->pos, t->name, h->size, t->min_size);
		if (h->type == TRACE_REC_STRING &&
		    ((const struct trace_rec_string *)h)->len > h->size - sizeof(struct trace_rec_string))
			return reader_fail(rd, -EPROTO, rd->chunk_off,
					   "chunk %u, record offset %zu: string of %u bytes in a "
					   "%u-byte record",
					   rd->chunk_seq, rd->pos,
					   ((const struct trace_rec_string *)h)->len, h->size);
		memset(out, 0, sizeof(*out));
		out->rec = h;
		out->type = h->type;
		out->size = h->size;
		out->chunk_off = rd->chunk_off;
		rd->pos += h->size;

		if (h->type == TRACE_REC_BLOCK) {
			const struct trace_rec_block *b = (const void *)h;

			rd->is_in_block = 1;
			rd->tid = b->tid;
			rd->thread_index = b->thread_index;
			rd->now_ns = b->base_ns;
			rd->cur_last_launch = NULL;
		} else if (t && t->is_thread) {
			if (!rd->is_in_block)
				return reader_fail(rd, -EPROTO, rd->chunk_off,
						   "chunk %u, record offset %zu: %s record outside "
						   "a thread block",
						   rd->chunk_seq, rd->pos - h->size,
						   trace_record_type_name(h->type));
			if (h->type == TRACE_REC_TIME)
				rd->now_ns = ((const struct trace_rec_time *)h)->ts_ns;
			else
				rd->now_ns += h->dt_ns;
			out->is_thread = 1;
			out->ts_ns = rd->now_ns;
			out->tid = rd->tid;
			out->thread_index = rd->thread_index;
			if (h->type == TRACE_REC_LAUNCH && h->size >= sizeof(struct trace_rec_launch)) {
				remember_launch(rd, (const void *)h);
				XGROW(rd->launch_shapes, rd->launch_shapes_cap, rd->nr_launch_shapes + 1);
				rd->launch_shapes[rd->nr_launch_shapes++] = (const void *)h;
				out->shape_ref = (uint32_t)rd->nr_launch_shapes;
			} else if (h->type == TRACE_REC_LAUNCH_REFS) {
				const struct trace_rec_launch_refs *lr = (const void *)h;
				const char *bad = check_launch_refs(rd, lr);

				if (bad)
					return reader_fail(rd, -EPROTO, rd->chunk_off,
							   "chunk %u, record offset %zu: %s (thread %u)",
							   rd->chunk_seq, rd->pos - h->size, bad,
							   rd->thread_index);
				/* Its launches come out one per call; this one is the first. */
				rd->columns.row = 0;
				rd->columns.nr_rows = lr->count;
				rd->launch_refs.seq = lr->seq;
				rd->launch_refs.left = lr->count;
				launch_refs_next(rd, out);
				return 1;
			} else if (h->type == TRACE_REC_LAUNCH_REPEAT) {
				if (expand_repeat(rd, (const void *)h) < 0)
					return reader_fail(rd, -EPROTO, rd->chunk_off,
							   "chunk %u, record offset %zu: launch_repeat "
							   "with no launch of thread %u before it",
							   rd->chunk_seq, rd->pos - h->size,
							   rd->thread_index);
				out_expanded(rd, out);
			} else if (h->type == TRACE_REC_LAUNCH_RUN ||
				   h->type == TRACE_REC_LAUNCH_GAP_RUN) {
				const struct trace_rec_launch_run *lr = (const void *)h;
				struct trace_rec_launch_repeat first = { .seq = lr->seq };
				const int is_gap = h->type == TRACE_REC_LAUNCH_GAP_RUN;
				const char *bad = check_launch_run(rd, lr, is_gap);

				if (!bad && expand_repeat(rd, &first) < 0)
					bad = "with no launch of its thread before it";
				if (bad)
					return reader_fail(rd, -EPROTO, rd->chunk_off,
							   "chunk %u, record offset %zu: %s %s "
							   "(thread %u)",
							   rd->chunk_seq, rd->pos - h->size,
							   is_gap ? "launch_gap_run" : "launch_run",
							   bad, rd->thread_index);
				/* Its launches come out one per call; this one is the first. */
				rd->expanded.call.seq--;
				rd->launch_run.left = lr->count;
				launch_run_next(rd, out);
				return 1;
			}
		} else if (h->type == TRACE_REC_END) {
			memcpy(&rd->end, h, sizeof(rd->end));
			rd->has_end = 1;
		} else if (h->type == TRACE_REC_GPU_KERNEL) {
			XGROW(rd->kernel_shapes, rd->kernel_shapes_cap, rd->nr_kernel_shapes + 1);
			rd->kernel_shapes[rd->nr_kernel_shapes++] = (const void *)h;
			out->shape_ref = (uint32_t)rd->nr_kernel_shapes;
		} else if (h->type == TRACE_REC_GPU_KERNEL_RUN || h->type == TRACE_REC_GPU_API_RUN) {
			const struct trace_rec_gpu_run *gr = (const void *)h;
			const char *bad = check_gpu_run(rd, gr);

			if (bad)
				return reader_fail(rd, -EPROTO, rd->chunk_off,
						   "chunk %u, record offset %zu: %s %s",
						   rd->chunk_seq, rd->pos - h->size,
						   trace_record_type_name(h->type), bad);
			/* Its records come out one per call; this one is the first. */
			rd->gpu_run.type = h->type;
			rd->columns.row = 0;
			rd->columns.nr_rows = gr->count;
			rd->gpu_run.left = gr->count;
			rd->gpu_run.start_ns = gr->base_ns;
			rd->gpu_run.corr = gr->corr;
			rd->gpu_run.aux = 0;
			gpu_run_next(rd, out);
			return 1;
		}
		rd->nr_records++;
		return 1;
	}
}
