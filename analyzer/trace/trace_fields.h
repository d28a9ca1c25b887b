/* SPDX-License-Identifier: MIT */
/*
 * trace_fields.h - the field layout of each record type, for the reference decoder (gpushim
 * dump): name, offset, size and how to show it. Tables only: it reads no records and prints
 * nothing.
 */
#ifndef GPUSHIM_TRACE_FIELDS_H
#define GPUSHIM_TRACE_FIELDS_H

#include <stddef.h>
#include <stdint.h>

enum trace_field_kind {
	TRACE_FIELD_U,			/* unsigned, 1/2/4/8 bytes */
	TRACE_FIELD_I,			/* signed, 4 bytes */
	TRACE_FIELD_X,			/* hexadecimal: handles, addresses */
	TRACE_FIELD_STR,		/* a STRING id (4 bytes) */
	TRACE_FIELD_API,		/* an API_DEF id (2 bytes) */
	TRACE_FIELD_U32X3,		/* three uint32_t: x,y,z */
	TRACE_FIELD_U16X3,		/* three uint16_t */
	TRACE_FIELD_TEXT,		/* STRING payload: len bytes after the struct */
	TRACE_FIELD_F32,		/* IEEE float, 4 bytes */
	TRACE_FIELD_FRAMES,		/* STACK payload: its frames after the struct */
	TRACE_FIELD_STACK,		/* a STACK id (4 bytes) */
};

struct trace_field {
	const char *name;
	uint16_t offset;
	uint8_t size;
	uint8_t kind;			/* enum trace_field_kind */
};

/* @type's fields in order, *@n of them; NULL (and *@n = 0) for types this reader does not know. */
const struct trace_field *trace_record_fields(uint16_t type, size_t *n);

#endif /* GPUSHIM_TRACE_FIELDS_H */
