/* SPDX-License-Identifier: MIT */
/*
 * trace_internal.h - what the files of trace/ share: the record-type table (trace_types.c).
 * Not for the other folders: they see trace_reader.h only.
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

#endif /* GPUSHIM_TRACE_INTERNAL_H */
