/* SPDX-License-Identifier: MIT */
/*
 * trace_builder.h - test-only helper that writes trace files record by record, valid or broken
 * on purpose (wrong sizes, bad magic, truncated chunks), so reader and model tests control every
 * byte. It follows trace_format.h; it is not the shim's writer.
 */
#ifndef GPUSHIM_TRACE_BUILDER_H
#define GPUSHIM_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "gpushim/trace_format.h"

struct tb {
	uint8_t *file;			/* the whole file so far */
	size_t len, cap;
	uint8_t *chunk;			/* records of the open chunk */
	size_t chunk_len, chunk_cap;
	uint32_t seq;
};

void tb_init(struct tb *t, uint16_t major, uint16_t minor);
/* tb_init with the header's strings: @cmd is @cmd_len bytes, arguments joined by NUL bytes. */
void tb_init_named(struct tb *t, uint16_t major, uint16_t minor, const char *shim_version,
		   const char *host, const char *cmd, size_t cmd_len);
void tb_free(struct tb *t);
/* Append a record (its hdr.size must be set) to the open chunk. */
void tb_rec(struct tb *t, const void *rec, size_t size);
void tb_string(struct tb *t, uint32_t id, const char *s);
void tb_block(struct tb *t, uint32_t tid, uint32_t index, uint64_t base_ns);
/* API_DEF: entry point @api of @family, named by STRING @name. */
void tb_api_def(struct tb *t, uint16_t api, uint8_t family, uint32_t name);
/* A FUNC record (handle 0x1000 x @id) and an H200-like DEVICE record (16 GiB, 132 SMs). */
void tb_func(struct tb *t, uint32_t id, uint32_t name);
void tb_device(struct tb *t, uint32_t ordinal, uint32_t name);
/* GPU_API: CUPTI's record of the API call owning @corr, inside [start, end] on thread @tid. */
void tb_gpu_api(struct tb *t, uint64_t start, uint64_t end, uint32_t corr, uint32_t tid);
/* GPU_KERNEL @name on device 0 over [start, end), @grid_x blocks of @block_x threads. */
void tb_gpu_kernel(struct tb *t, uint64_t start, uint64_t end, uint32_t corr, uint32_t name,
		   uint32_t grid_x, uint32_t block_x);
/*
 * A decompression bomb's records: in a BLOCK of thread 0, a LAUNCH and then LAUNCH_RUNs as big
 * as a record gets (32,756 launches in 65,528 bytes, every varint 1), to @raw_bytes in the open
 * chunk. zstd makes 16 MiB of them (8.4 M launches) about 1.6 KB.
 */
void tb_launch_bomb(struct tb *t, size_t raw_bytes);
/* A NOTE of @kind at @ts_ns with the text of STRING @text (0: none). */
void tb_note(struct tb *t, uint64_t ts_ns, uint32_t kind, uint32_t text);
/* An END: @records written, ended at @end_ns for @reason (enum trace_end_reason). */
void tb_end(struct tb *t, uint64_t records, uint64_t end_ns, uint32_t reason);
/* Compress the open chunk into the file. */
void tb_flush(struct tb *t);
/* Write the file; @cut > 0 keeps only the first @cut bytes. Returns the path (static buffer). */
const char *tb_write(struct tb *t, const char *name, size_t cut);

/* A call header for thread records. */
void tb_call(struct trace_call *c, uint16_t type, uint16_t size, uint32_t dt, uint16_t api,
	     uint32_t dur, uint32_t result, uint32_t seq);

#endif /* GPUSHIM_TRACE_BUILDER_H */
