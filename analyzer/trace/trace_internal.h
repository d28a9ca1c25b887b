/* SPDX-License-Identifier: MIT */
/*
 * trace_internal.h - what the files of trace/ share: the record-type table (trace_types.c) and
 * the records that stand for others, repeats, runs and columns (trace_columns.c), which
 * trace_reader_next (trace_reader.c) hands out as the records they stand for. Not for the
 * other folders: they see trace_reader.h and trace_fields.h only.
 */
#ifndef GPUSHIM_TRACE_INTERNAL_H
#define GPUSHIM_TRACE_INTERNAL_H

#include <stdint.h>

#include "trace_reader.h"

/* ---- Record types (trace_types.c) ---- */

/* Record types are numbered below this (trace_format.h); the table is indexed by type. */
#define TRACE_NR_TYPES 64

struct trace_type {
	const char *name;		/* NULL: a type this reader does not know */
	uint16_t min_size;
	uint8_t is_thread;		/* its time comes from the thread's BLOCK */
};

extern const struct trace_type trace_types[TRACE_NR_TYPES];

/* @type's entry, or NULL for a type this reader does not know. Inline: it is read per record. */
static inline const struct trace_type *trace_type_get(uint16_t type)
{
	return type < TRACE_NR_TYPES && trace_types[type].name ? &trace_types[type] : NULL;
}

/* ---- Repeats, runs and columns (trace_columns.c) ---- */

/*
 * A record of the current block's thread (or, for GPU runs, of the chunk) that stands for
 * others is checked whole when it is read: trace_*_start returns NULL or what is wrong, to follow
 * the record's name in the reader's message. On NULL, rd->launch_run, rd->launch_refs or
 * rd->gpu_run counts the records to hand out, the first included, and each call of the matching
 * trace_*_next fills @out with the next one as trace_reader_next hands it out. The _next
 * functions run once per record handed out; one call each, as when they were static in
 * trace_reader.c (GCC did not inline them there either).
 */
const char *trace_launch_run_start(struct trace_reader *rd, const struct trace_rec_launch_run *r);
void trace_launch_run_next(struct trace_reader *rd, struct trace_record *out);
const char *trace_launch_refs_start(struct trace_reader *rd,
				    const struct trace_rec_launch_refs *r);
void trace_launch_refs_next(struct trace_reader *rd, struct trace_record *out);
const char *trace_gpu_run_start(struct trace_reader *rd, const struct trace_rec_gpu_run *r);
void trace_gpu_run_next(struct trace_reader *rd, struct trace_record *out);

/*
 * A LAUNCH_REPEAT of the current block's thread: @out, filled as for any thread record, becomes
 * the LAUNCH it stands for. Return: 0, or -1 when the thread has no LAUNCH before it in the chunk.
 */
int trace_launch_repeat(struct trace_reader *rd, const struct trace_rec_launch_repeat *r,
			struct trace_record *out);

/*
 * A LAUNCH of the current block's thread, or a GPU_KERNEL: kept as the shape the chunk's later
 * repeats, runs and columns refer to. Return: its shape ref (1 for the chunk's first).
 */
uint32_t trace_launch_add(struct trace_reader *rd, const struct trace_rec_launch *l);
uint32_t trace_kernel_add(struct trace_reader *rd, const struct trace_rec_gpu_kernel *k);

/* A new chunk: forget the last one's shapes, its threads' last launches and any run left. */
void trace_columns_reset(struct trace_reader *rd);

/* Free what the chunks' shapes and columns took (trace_reader_close). */
void trace_columns_free(struct trace_reader *rd);

#endif /* GPUSHIM_TRACE_INTERNAL_H */
