/* SPDX-License-Identifier: MIT */
/*
 * varint.h - the trace's column coding, shared by the shim's encoders, the reader and the bench
 * tools: unsigned LEB128 varints of at most 10 bytes (64 bits), and zigzag coding of signed
 * differences so that small changes either way take one byte. Header-only; libc types only.
 */
#ifndef GPUSHIM_VARINT_H
#define GPUSHIM_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* The bytes varint_put writes for @v (1 to 10). */
static inline unsigned varint_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Write @v at @p; returns the end. */
static inline uint8_t *varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * Read a varint of at most 10 bytes and 64 bits from [*p, end) into @v and advance *p. Returns
 * 0, or -1 when it runs past @end or past 64 bits (*p is then somewhere inside it).
 */
static inline int varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	int i;

	if (*p < end && **p < 0x80) {
		*v = *(*p)++;
		return 0;
	}
	if (end - *p >= 3) {
		/* Times and durations: mostly two or three bytes, unrolled. */
		const uint8_t *q = *p;

		if (!(q[1] & 0x80)) {
			*v = (q[0] & 0x7fu) | (uint64_t)q[1] << 7;
			*p = q + 2;
			return 0;
		}
		if (!(q[2] & 0x80)) {
			*v = (q[0] & 0x7fu) | (uint64_t)(q[1] & 0x7f) << 7 | (uint64_t)q[2] << 14;
			*p = q + 3;
			return 0;
		}
	}
	for (i = 0; i < 10 && *p < end; i++) {
		uint8_t c = *(*p)++;

		if (i == 9 && c > 1)
			return -1;
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* A difference @d (two's complement, 64 or 32 bits) as an unsigned number: 0, -1, 1, -2 ... */
static inline uint64_t zigzag_put64(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t zigzag_put32(uint32_t d)
{
	return (uint32_t)((d << 1) ^ (uint32_t)((int32_t)d >> 31));
}

/* The difference back (add it modulo 2^64, or cast the sum to 32 bits for a 32-bit one). */
static inline uint64_t zigzag_get(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

#endif /* GPUSHIM_VARINT_H */
