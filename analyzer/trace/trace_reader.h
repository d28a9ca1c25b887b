/* SPDX-License-Identifier: MIT */
/*
 * trace_reader.h - the only code that knows the trace's byte layout. Opens a trace, validates
 * the header, decompresses chunk after chunk, and hands out records one at a time with their
 * absolute times. Every length, count and offset is checked before use; errors carry the file
 * name and, for its contents, the byte offset. A trace that ends inside a chunk is truncated,
 * not corrupt: the reader stops there with is_truncated set, and everything before is valid.
 * Never prints. The field layouts that gpushim dump prints are trace_fields.h's.
 */
#ifndef GPUSHIM_TRACE_READER_H
#define GPUSHIM_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpushim/trace_format.h"

struct ZSTD_DCtx_s;

struct last_launch;

struct trace_reader {
	const char *path;
	FILE *f;
	uint64_t file_bytes;
	struct trace_file_header hdr;
	char *shim_version;		/* NUL-terminated copies of the header strings */
	char *host;
	char *cmdline;			/* arguments joined by spaces */
	char **argv;			/* the arguments as recorded */
	int argc;

	struct ZSTD_DCtx_s *dctx;
	uint8_t *zstd_buf;		/* the current chunk's zstd frame */
	size_t zstd_buf_cap;
	uint8_t *raw;			/* its records, decompressed */
	size_t raw_len, raw_cap;
	size_t pos;			/* next record in raw */
	uint64_t next_chunk_off;	/* file offset of the next chunk header */
	uint64_t chunk_off;		/* file offset of the current chunk header */
	uint32_t chunk_seq;
	uint64_t nr_chunks;

	int is_in_block;		/* thread-record state of the current chunk */
	uint32_t tid, thread_index;
	uint64_t now_ns;

	/* The chunk's records that stand for others (trace_columns.c): */
	struct last_launch *last_launches;	/* each thread's last LAUNCH (uthash) */
	struct last_launch *cur_last_launch;	/* the current block's thread's, once looked up */
	struct trace_rec_launch expanded;	/* the LAUNCH a repeat, run or refs stands for */
	uint32_t expanded_ref;		/* its LAUNCH's place in launch_shapes, plus 1 */
	const struct trace_rec_launch **launch_shapes;	/* the chunk's LAUNCHes, in order */
	size_t nr_launch_shapes, launch_shapes_cap;
	const struct trace_rec_gpu_kernel **kernel_shapes;	/* the chunk's GPU_KERNELs */
	size_t nr_kernel_shapes, kernel_shapes_cap;
	struct {			/* the current LAUNCH_RUN or LAUNCH_GAP_RUN */
		uint32_t left;		/* launches still to hand out */
		const uint8_t *dt;	/* its next varints (validated) */
		const uint8_t *dur;
		int is_gap;		/* time values after the first are gaps */
	} launch_run;
	struct {			/* the current LAUNCH_REFS */
		uint32_t left;		/* launches still to hand out */
		uint32_t seq;		/* the last one's call sequence number */
	} launch_refs;
	struct {			/* the current GPU_KERNEL_RUN or GPU_API_RUN */
		uint32_t left;		/* records still to hand out */
		uint16_t type;
		uint64_t start_ns;	/* the last record's start */
		uint64_t aux;		/* its graph node (kernel) or thread id (API) */
		uint32_t corr;		/* its CUPTI correlation id */
	} gpu_run;
	struct {			/* a column record's values (LAUNCH_REFS, GPU_*_RUN) */
		uint64_t *values;	/* column after column */
		size_t cap;
		size_t row, nr_rows;	/* the next record's row, and the rows */
	} columns;
	struct trace_rec_gpu_kernel gpu_kernel;	/* a GPU_KERNEL_RUN's record, expanded */
	struct trace_rec_gpu_api gpu_api;	/* a GPU_API_RUN's record, expanded */

	uint64_t nr_records;
	int is_truncated;		/* the file ends inside a chunk (killed process, full disk) */
	int has_end;			/* an END record was read: the trace was closed cleanly */
	struct trace_rec_end end;
	char err[512];
};

/*
 * struct trace_record - one decoded record. @rec points into the reader's chunk buffer and stays
 * valid until the next trace_reader_next(). Thread records have is_thread set and carry their
 * start time, thread id and thread index; meta records carry ts_ns 0. A LAUNCH_REPEAT comes back
 * as the LAUNCH it stands for (type, size and @rec those of the expanded record), a LAUNCH_RUN
 * as its COUNT launches, one per call; LAUNCH_REFS, GPU_KERNEL_RUN and GPU_API_RUN likewise as
 * their LAUNCH, GPU_KERNEL and GPU_API records.
 *
 * A LAUNCH or GPU_KERNEL, however written, also says which of its chunk's LAUNCH or GPU_KERNEL
 * records it repeats (@shape_ref, 1 for the chunk's first; 0 for other records): two records of
 * one chunk with the same ref have the same fields but for times, sequence and correlation
 * numbers and, for a kernel, its graph's ids. A consumer that derives something from those
 * fields can do it once per ref and chunk (@chunk_off) instead of once per record.
 */
struct trace_record {
	const void *rec;
	uint16_t type;
	uint16_t size;
	uint32_t shape_ref;
	uint64_t ts_ns;
	uint32_t tid;
	uint32_t thread_index;
	uint64_t chunk_off;
	int is_thread;
};

/*
 * Return: 0, or -errno with rd->err set: "path: offset 0x..: what" for its contents, "path:
 * what" (strerror's text) when the file cannot be opened or is a directory.
 */
int trace_reader_open(struct trace_reader *rd, const char *path);

/*
 * trace_reader_next - the next record. Return: 1 with *out filled, 0 at the end of the trace
 * (check rd->is_truncated / rd->has_end), or -errno with rd->err set (corrupt data).
 */
int trace_reader_next(struct trace_reader *rd, struct trace_record *out);

void trace_reader_close(struct trace_reader *rd);

/*
 * trace_id_plausible - is @id a plausible STRING or FUNC id after @defined ids of its kind? The
 * writer numbers them densely from 1; lost meta records leave gaps, never jumps. Tables indexed
 * by id then grow with what a trace defines, not with one hostile number.
 */
static inline int trace_id_plausible(uint32_t id, size_t defined)
{
	return id && id < (1u << 26) && id <= 2 * (uint64_t)defined + 65536;
}

/*
 * trace_stack_pcs / trace_stack_py - the native addresses (nr_native) and Python frames
 * (nr_python) of a STACK record the reader handed out: it checked that they fit.
 */
static inline const uint64_t *trace_stack_pcs(const struct trace_rec_stack *s)
{
	return (const uint64_t *)(s + 1);
}

static inline const struct trace_stack_py *trace_stack_py(const struct trace_rec_stack *s)
{
	return (const struct trace_stack_py *)(trace_stack_pcs(s) + s->nr_native);
}

/* The smallest size a record of @type may have; 0 for types this reader does not know. */
uint16_t trace_record_min_size(uint16_t type);

/* A record type's name for messages and dumps ("launch", "gpu_kernel", "type 99"). */
const char *trace_record_type_name(uint16_t type);

/* Is @type a thread record (time base from a BLOCK)? */
int trace_record_is_thread(uint16_t type);

#endif /* GPUSHIM_TRACE_READER_H */
