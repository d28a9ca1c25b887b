// SPDX-License-Identifier: MIT
/*
 * relevel.c - what another zstd level would make of a recorded trace: every complete chunk is
 * decompressed and compressed again as the writer compresses it (ZSTD_compress2, the content
 * checksum on) at each level given, its bytes summed and its compression timed (the best of
 * three passes over all chunks, one core). With OUT, the trace is also written again at the
 * last level given — the same records, for the analyzer to read back.
 * Usage: relevel TRACE LEVEL... [-o OUT]
 * Prints: one line per level: chunks, raw bytes, zstd bytes, ns of compression per raw KiB.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zstd.h>

#include "gpushim/trace_format.h"
#include "slurp.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct chunk {
	const struct trace_chunk_header *h;
	uint8_t *raw;
};

int main(int argc, char **argv)
{
	const char *out_path = NULL;
	int levels[16], nr_levels = 0, i, pass;
	struct chunk *chunks = NULL;
	size_t len, pos, nr = 0, raw_total = 0, c;
	const struct trace_file_header *fh;
	uint8_t *file, *dst;
	size_t dst_cap = ZSTD_compressBound(TRACE_MAX_CHUNK_RAW);
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	FILE *out = NULL;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out_path = argv[++i];
		else if (nr_levels < 16)
			levels[nr_levels++] = atoi(argv[i]);
	}
	if (argc < 3 || !nr_levels) {
		fprintf(stderr, "usage: relevel TRACE LEVEL... [-o OUT]\n");
		return 2;
	}
	file = slurp(argv[1], &len);
	fh = (const void *)file;
	if (!file || len < sizeof(*fh) || fh->header_bytes > len) {
		fprintf(stderr, "relevel: %s: cannot read a trace header\n", argv[1]);
		return 1;
	}
	for (pos = fh->header_bytes; pos + sizeof(struct trace_chunk_header) <= len;) {
		const struct trace_chunk_header *h = (const void *)(file + pos);
		uint8_t *raw;

		if (h->magic != TRACE_CHUNK_MAGIC || h->raw_bytes > TRACE_MAX_CHUNK_RAW ||
		    h->zstd_bytes > len - pos - sizeof(*h))
			break;		/* the end of what was written */
		raw = malloc(h->raw_bytes ? h->raw_bytes : 1);
		if (!raw || ZSTD_decompress(raw, h->raw_bytes, h + 1, h->zstd_bytes) !=
				    h->raw_bytes) {
			fprintf(stderr, "relevel: %s: chunk %zu does not decompress\n", argv[1], nr);
			return 1;
		}
		chunks = realloc(chunks, (nr + 1) * sizeof(*chunks));
		chunks[nr++] = (struct chunk){ h, raw };
		raw_total += h->raw_bytes;
		pos += sizeof(*h) + h->zstd_bytes;
	}
	dst = malloc(dst_cap);
	if (out_path) {
		out = fopen(out_path, "wb");
		if (!out || fwrite(file, 1, fh->header_bytes, out) != fh->header_bytes) {
			fprintf(stderr, "relevel: cannot write %s\n", out_path);
			return 1;
		}
	}
	for (i = 0; i < nr_levels; i++) {
		uint64_t best = UINT64_MAX;
		size_t zbytes = 0;

		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, levels[i]);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
		for (pass = 0; pass < 3; pass++) {
			uint64_t t0 = now_ns(), dt;

			zbytes = 0;
			for (c = 0; c < nr; c++) {
				size_t n = ZSTD_compress2(cctx, dst, dst_cap, chunks[c].raw,
							  chunks[c].h->raw_bytes);

				if (ZSTD_isError(n)) {
					fprintf(stderr, "relevel: %s\n", ZSTD_getErrorName(n));
					return 1;
				}
				zbytes += n;
				if (out && pass == 2 && i == nr_levels - 1) {
					struct trace_chunk_header h = *chunks[c].h;

					h.zstd_bytes = (uint32_t)n;
					fwrite(&h, sizeof(h), 1, out);
					fwrite(dst, 1, n, out);
				}
			}
			dt = now_ns() - t0;
			if (dt < best)
				best = dt;
		}
		printf("level %d: %zu chunks, %zu raw bytes, %zu zstd bytes, %.0f ns a raw KiB\n",
		       levels[i], nr, raw_total, zbytes,
		       raw_total ? (double)best * 1024 / (double)raw_total : 0.0);
	}
	if (out && fclose(out)) {
		fprintf(stderr, "relevel: cannot write %s\n", out_path);
		return 1;
	}
	for (c = 0; c < nr; c++)
		free(chunks[c].raw);
	free(chunks);
	free(dst);
	free(file);
	ZSTD_freeCCtx(cctx);
	return 0;
}
