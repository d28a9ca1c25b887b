/* SPDX-License-Identifier: MIT */
/*
 * slurp.h - a whole file in memory, for the benchmark tools that rewrite traces (recode.c,
 * relevel.c).
 */
#ifndef GPUSHIM_TESTS_SLURP_H
#define GPUSHIM_TESTS_SLURP_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of @path (*@len of them; the caller frees), or NULL when it cannot be opened. */
uint8_t *slurp(const char *path, size_t *len);

#endif
