// SPDX-License-Identifier: MIT
/*
 * trace_reader.c - see trace_reader.h. Owns: opening and the header's validation, chunk
 * framing and zstd decompression, each record's bounds, thread blocks and their times, END, and
 * trace_reader_next's dispatch: records that stand for others go to trace_columns.c, and
 * errors, with their byte offsets, are written here only. Does not print and does not
 * interpret record contents beyond what framing needs.
 */
#include "trace_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zstd.h>

#include "trace_internal.h"
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

/* The file itself cannot be read (missing, unreadable, a directory): no offset to name. */
static int reader_fail_file(struct trace_reader *rd, int err)
{
	snprintf(rd->err, sizeof(rd->err), "%s: %s", rd->path, strerror(err));
	return -err;
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
		return reader_fail_file(rd, errno);
	if (fstat(fileno(rd->f), &st) < 0) {
		ret = reader_fail_file(rd, errno);
		goto fail;
	}
	/* fopen opens a directory for reading; its first read would fail as a short header. */
	if (S_ISDIR(st.st_mode)) {
		ret = reader_fail_file(rd, EISDIR);
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

void trace_reader_close(struct trace_reader *rd)
{
	int i;

	trace_columns_free(rd);
	if (rd->f)
		fclose(rd->f);
	rd->f = NULL;
	ZSTD_freeDCtx((ZSTD_DCtx *)rd->dctx);
	rd->dctx = NULL;
	free(rd->zstd_buf);
	free(rd->raw);
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
	trace_columns_reset(rd);
	rd->nr_chunks++;
	return 1;
}

/* ---- Records ---- */

/* Do a STACK's frames fit in it (its size checked against the struct already)? */
static int stack_fits(const struct trace_rec_stack *s)
{
	return s->nr_native <= TRACE_STACK_MAX_FRAMES && s->nr_python <= TRACE_STACK_MAX_FRAMES &&
	       TRACE_STACK_BYTES(s->nr_native, s->nr_python) <= s->hdr.size;
}

int trace_reader_next(struct trace_reader *rd, struct trace_record *out)
{
	for (;;) {
		const struct trace_rec_hdr *h;
		const struct trace_type *t;
		int ret;

		/* A run's or refs' records come out one per call (trace_columns.c). */
		if (rd->launch_run.left) {
			trace_launch_run_next(rd, out);
			return 1;
		}
		if (rd->launch_refs.left) {
			trace_launch_refs_next(rd, out);
			return 1;
		}
		if (rd->gpu_run.left) {
			trace_gpu_run_next(rd, out);
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
		if (h->type == TRACE_REC_STACK && !stack_fits((const void *)h))
			return reader_fail(rd, -EPROTO, rd->chunk_off,
					   "chunk %u, record offset %zu: stack of %u native and %u "
					   "Python frames in a %u-byte record (at most %u each)",
					   rd->chunk_seq, rd->pos,
					   ((const struct trace_rec_stack *)h)->nr_native,
					   ((const struct trace_rec_stack *)h)->nr_python, h->size,
					   TRACE_STACK_MAX_FRAMES);
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
				out->shape_ref = trace_launch_add(rd, (const void *)h);
			} else if (h->type == TRACE_REC_LAUNCH_REPEAT) {
				if (trace_launch_repeat(rd, (const void *)h, out) < 0)
					return reader_fail(rd, -EPROTO, rd->chunk_off,
							   "chunk %u, record offset %zu: launch_repeat "
							   "with no launch of thread %u before it",
							   rd->chunk_seq, rd->pos - h->size,
							   rd->thread_index);
			} else if (h->type == TRACE_REC_LAUNCH_RUN ||
				   h->type == TRACE_REC_LAUNCH_GAP_RUN ||
				   h->type == TRACE_REC_LAUNCH_REFS) {
				const char *bad;

				if (h->type == TRACE_REC_LAUNCH_REFS)
					bad = trace_launch_refs_start(rd, (const void *)h);
				else
					bad = trace_launch_run_start(rd, (const void *)h);
				if (bad)
					return reader_fail(rd, -EPROTO, rd->chunk_off,
							   "chunk %u, record offset %zu: %s %s "
							   "(thread %u)",
							   rd->chunk_seq, rd->pos - h->size,
							   t->name, bad, rd->thread_index);
				continue;	/* its first launch, from the top */
			}
		} else if (!t && rd->is_in_block) {
			/*
			 * A newer version's record: a thread record's delta moves its thread's time
			 * (a meta record's is 0), or every later record of the block comes early.
			 */
			rd->now_ns += h->dt_ns;
		} else if (h->type == TRACE_REC_END) {
			memcpy(&rd->end, h, sizeof(rd->end));
			rd->has_end = 1;
		} else if (h->type == TRACE_REC_GPU_KERNEL) {
			out->shape_ref = trace_kernel_add(rd, (const void *)h);
		} else if (h->type == TRACE_REC_GPU_KERNEL_RUN || h->type == TRACE_REC_GPU_API_RUN) {
			const char *bad = trace_gpu_run_start(rd, (const void *)h);

			if (bad)
				return reader_fail(rd, -EPROTO, rd->chunk_off,
						   "chunk %u, record offset %zu: %s %s",
						   rd->chunk_seq, rd->pos - h->size, t->name, bad);
			continue;	/* its first record, from the top */
		}
		rd->nr_records++;
		return 1;
	}
}
