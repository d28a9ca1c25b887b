// SPDX-License-Identifier: MIT
/*
 * recode.c - rewrites a trace's LAUNCH, GPU_KERNEL and GPU_API records through the shim's column
 * encoder (shim/gpucols.c), chunk for chunk and in the writer's way (a launch or kernel whose
 * shape the chunk has is held in a run, any other goes in full and becomes a shape; every API
 * record is held; held launches go out before their thread's next record, GPU runs at the
 * chunk's end), and copies every other record as it is — but a LAUNCH_REPEAT or LAUNCH_RUN
 * whose thread's LAUNCH went by reference goes by reference too, as in the writer: they mean
 * the thread's previous LAUNCH record. The input is the shim's own: a launch run's varints are
 * taken as valid (the reader checks them in the comparison that follows). It turns the H200
 * traces recorded before format 1.3 into 1.3 ones holding the same records, so CI checks the
 * encoder against real GPU data (tests/e2e/gpucols_recode.sh) and one can measure what the
 * columns save (BENCHMARKS.md, fifth session). A trace that ends inside a chunk is recoded up
 * to there.
 * Usage: recode IN OUT [LEVEL]   (zstd level, 3 unless given: what the tests' traces were
 * recoded at; BENCHMARKS.md compares levels with it)
 * Prints: records held in runs, runs, chunks, file bytes in and out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "gpucols.h"
#include "gpushim/trace_format.h"
#include "slurp.h"

/* Per thread of the chunk: its last launch's shape, and whether that was a LAUNCH record. */
struct thread_state {
	int64_t shape;
	int is_full;
};

/*
 * A LAUNCH_RUN or LAUNCH_GAP_RUN whose launch went by reference: its launches go by reference
 * too (a run repeats the thread's LAUNCH record, which the output does not have). Returns the
 * launches.
 */
static uint32_t run_by_reference(const struct trace_rec_launch_run *r, int64_t shape,
				 uint8_t *raw, size_t *len, uint64_t *nr)
{
	const uint8_t *dt = (const uint8_t *)(r + 1), *dur = dt;
	const uint8_t *end = (const uint8_t *)r + r->hdr.size;
	uint64_t v;
	uint32_t i, prev = 0;

	for (i = 0; i < r->count; i++)
		varint_get(&dur, end, &v);
	for (i = 0; i < r->count; i++) {
		uint32_t d, du;

		d = varint_get(&dt, end, &v) ? 0 : (uint32_t)v;
		du = varint_get(&dur, end, &v) ? 0 : (uint32_t)v;

		if (i && r->hdr.type == TRACE_REC_LAUNCH_GAP_RUN)
			d += prev;	/* a gap after the previous launch returned */
		gpucols_launch_hold((uint32_t)shape, d, du, r->seq + i, raw, len, nr);
		prev = du;
	}
	return r->count;
}

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "recode: %s: %s\n", path, what);
	return 1;
}

int main(int argc, char **argv)
{
	static uint8_t in_raw[TRACE_MAX_CHUNK_RAW], out_raw[2 * TRACE_MAX_CHUNK_RAW];
	static uint8_t zbuf[2 * TRACE_MAX_CHUNK_RAW];
	unsigned long long held = 0, runs = 0, chunks = 0;
	struct thread_state *threads = NULL;
	size_t nr_threads = 0;
	struct trace_file_header fh;
	size_t len, off, out_bytes;
	uint8_t *file;
	uint32_t seq = 0;
	FILE *out;
	int level = argc > 3 ? atoi(argv[3]) : 3;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: recode IN OUT [LEVEL]\n");
		return 2;
	}
	file = slurp(argv[1], &len);
	if (!file || len < sizeof(fh))
		return fail("cannot read a trace header", argv[1]);
	memcpy(&fh, file, sizeof(fh));
	if (memcmp(fh.magic, TRACE_MAGIC, sizeof(TRACE_MAGIC)) ||
	    fh.version_major != TRACE_VERSION_MAJOR || fh.header_bytes > len)
		return fail("not a trace of this format", argv[1]);
	if (fh.version_minor >= 3)
		return fail("already in format 1.3 or later: its runs would be renumbered", argv[1]);
	out = fopen(argv[2], "wb");
	if (!out)
		return fail(strerror(errno), argv[2]);
	fh.version_minor = 3;
	fwrite(&fh, sizeof(fh), 1, out);
	fwrite(file + sizeof(fh), fh.header_bytes - sizeof(fh), 1, out);
	out_bytes = fh.header_bytes;

	for (off = fh.header_bytes; off + sizeof(struct trace_chunk_header) <= len;) {
		struct trace_chunk_header ch;
		size_t raw_len, out_len = 0, pos, z, i;
		uint32_t thread = UINT32_MAX;	/* the current BLOCK's thread index */
		uint64_t nr = 0;
		int64_t shape;

		memcpy(&ch, file + off, sizeof(ch));
		if (ch.magic != TRACE_CHUNK_MAGIC || ch.raw_bytes > TRACE_MAX_CHUNK_RAW)
			return fail("bad chunk header", argv[1]);
		if (len - off - sizeof(ch) < ch.zstd_bytes)
			break;		/* truncated: recoded up to here */
		raw_len = ZSTD_decompress(in_raw, sizeof(in_raw), file + off + sizeof(ch),
					  ch.zstd_bytes);
		if (ZSTD_isError(raw_len) || raw_len != ch.raw_bytes)
			return fail("chunk does not decompress", argv[1]);
		off += sizeof(ch) + ch.zstd_bytes;
		for (i = 0; i < nr_threads; i++)	/* a chunk refers only within itself */
			threads[i] = (struct thread_state){ -1, 0 };

		for (pos = 0; pos + sizeof(struct trace_rec_hdr) <= raw_len;) {
			const struct trace_rec_hdr *h = (const void *)(in_raw + pos);

			if (h->size < sizeof(*h) || h->size > raw_len - pos)
				return fail("bad record size", argv[1]);
			if (h->type == TRACE_REC_BLOCK) {
				thread = ((const struct trace_rec_block *)h)->thread_index;
				if (thread >= nr_threads) {
					size_t n = (size_t)thread + 1;

					threads = realloc(threads, n * sizeof(*threads));
					if (!threads)
						abort();
					while (nr_threads < n)
						threads[nr_threads++] = (struct thread_state){ -1, 0 };
				}
			}
			if (h->type == TRACE_REC_LAUNCH && h->size == sizeof(struct trace_rec_launch) &&
			    thread < nr_threads &&
			    (shape = gpucols_launch_find((const void *)h, out_raw)) >= 0) {
				const struct trace_rec_launch *l = (const void *)h;

				gpucols_launch_hold((uint32_t)shape, l->call.hdr.dt_ns, l->call.dur,
						    l->call.seq, out_raw, &out_len, &nr);
				threads[thread] = (struct thread_state){ shape, 0 };
				held++;
			} else if (h->type == TRACE_REC_LAUNCH_REPEAT && thread < nr_threads &&
				   !threads[thread].is_full && threads[thread].shape >= 0) {
				/* Its LAUNCH went by reference: so does it, as the writer does. */
				const struct trace_rec_launch_repeat *r = (const void *)h;

				gpucols_launch_hold((uint32_t)threads[thread].shape, r->hdr.dt_ns,
						    r->dur, r->seq, out_raw, &out_len, &nr);
				held++;
			} else if ((h->type == TRACE_REC_LAUNCH_RUN ||
				    h->type == TRACE_REC_LAUNCH_GAP_RUN) &&
				   thread < nr_threads && !threads[thread].is_full &&
				   threads[thread].shape >= 0) {
				held += run_by_reference((const void *)h, threads[thread].shape, out_raw,
							 &out_len, &nr);
			} else if (h->type == TRACE_REC_GPU_API &&
				   h->size == sizeof(struct trace_rec_gpu_api)) {
				gpucols_api((const void *)h, out_raw, &out_len, &nr);
				held++;
			} else if (h->type == TRACE_REC_GPU_KERNEL &&
				   h->size == sizeof(struct trace_rec_gpu_kernel) &&
				   gpucols_kernel((const void *)h, out_raw, &out_len, &nr)) {
				held++;
			} else {
				/* Held launches are thread records: they go before the next one. */
				if (h->type != TRACE_REC_GPU_KERNEL)
					gpucols_launch_flush(out_raw, &out_len, &nr);
				memcpy(out_raw + out_len, h, h->size);
				if (h->type == TRACE_REC_GPU_KERNEL)
					gpucols_kernel_full(out_raw, out_len, h->size);
				else if (h->type == TRACE_REC_LAUNCH && thread < nr_threads)
					threads[thread] = (struct thread_state){
						gpucols_launch_full(out_raw, out_len, h->size), 1
					};
				else if (h->type == TRACE_REC_LAUNCH)
					gpucols_launch_full(out_raw, out_len, h->size);
				out_len += h->size;
			}
			pos += h->size;
		}
		gpucols_launch_flush(out_raw, &out_len, &nr);
		gpucols_flush(out_raw, &out_len, &nr);
		gpucols_chunk_done();
		for (pos = 0; pos < out_len;) {
			const struct trace_rec_hdr *h = (const void *)(out_raw + pos);

			runs += h->type == TRACE_REC_GPU_KERNEL_RUN || h->type == TRACE_REC_GPU_API_RUN ||
				h->type == TRACE_REC_LAUNCH_REFS;
			pos += h->size;
		}
		if (out_len > TRACE_MAX_CHUNK_RAW)
			return fail("a recoded chunk outgrew the format's limit", argv[1]);
		z = ZSTD_compress(zbuf, sizeof(zbuf), out_raw, out_len, level);
		if (ZSTD_isError(z))
			return fail(ZSTD_getErrorName(z), argv[2]);
		ch.seq = seq++;
		ch.raw_bytes = (uint32_t)out_len;
		ch.zstd_bytes = (uint32_t)z;
		fwrite(&ch, sizeof(ch), 1, out);
		fwrite(zbuf, z, 1, out);
		out_bytes += sizeof(ch) + z;
		chunks++;
	}
	if (fclose(out))
		return fail(strerror(errno), argv[2]);
	printf("%s: %llu records in %llu runs, %llu chunks, %zu -> %zu bytes\n", argv[1], held,
	       runs, chunks, len, out_bytes);
	free(threads);
	free(file);
	return 0;
}
