// SPDX-License-Identifier: MIT
/*
 * floor_hook.c - the least a recorder of launches can do, preloaded by scripts/bench.sh in
 * place of the shim so its instructions are counted the same way: cuLaunchKernel reads the
 * time-stamp counter before and after the real call and keeps the two numbers a relaunched
 * kernel needs (the gap since the previous launch returned and the call's duration, in ticks,
 * as two columns of varints), and every 4,096 launches compresses them with zstd on the
 * calling thread (level 1 as the shim, or FLOOR_ZSTD_LEVEL). It keeps no kernel, grid,
 * stream, result or sequence number, restores no errno, counts no loss and survives no crash:
 * what it costs a launch is a floor under any recorder that times launches and compresses
 * what it keeps. At exit it prints "floor_hook: N launches, B bytes at zstd level L".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include <cuda.h>

#include "gpushim/varint.h"

#define BLOCK 4096

typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
			      unsigned int, unsigned int, unsigned int, CUstream, void **, void **);

#define TLS __thread __attribute__((tls_model("initial-exec")))

/* The two columns as LEB128 varints, as the shim writes a relaunched kernel's gaps and
 * durations: 1 to 5 bytes a value. */
static TLS struct {
	uint8_t gap[5 * BLOCK], dur[5 * BLOCK];
	uint32_t n, gap_len, dur_len;
	uint64_t last;
} cols;
static TLS ZSTD_CCtx *cctx;
static TLS char in[10 * BLOCK];
static TLS char out[ZSTD_COMPRESSBOUND(10 * BLOCK)];
static unsigned long long kept, launches;	/* compressed bytes and launches, for the last line */
static int level = 1;			/* FLOOR_ZSTD_LEVEL */

static inline uint64_t now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static void compress_block(void)
{
	size_t n;

	if (!cctx)
		cctx = ZSTD_createCCtx();
	memcpy(in, cols.gap, cols.gap_len);	/* one column after the other */
	memcpy(in + cols.gap_len, cols.dur, cols.dur_len);
	n = ZSTD_compressCCtx(cctx, out, sizeof(out), in, cols.gap_len + cols.dur_len, level);
	if (!ZSTD_isError(n))
		kept += n;
	launches += cols.n;
	cols.n = cols.gap_len = cols.dur_len = 0;
}

/* The one symbol this library exports (it is built with hidden visibility). */
__attribute__((visibility("default"))) CUresult
cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
	       unsigned int by, unsigned int bz, unsigned int smem, CUstream s, void **params,
	       void **extra)
{
	static launch_fn real;
	uint64_t t0, t1;
	CUresult res;

	if (!real)
		real = (launch_fn)dlsym(RTLD_NEXT, "cuLaunchKernel");
	t0 = now();
	res = real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
	t1 = now();
	cols.gap_len = (uint32_t)(varint_put(cols.gap + cols.gap_len, (uint32_t)(t0 - cols.last)) - cols.gap);
	cols.dur_len = (uint32_t)(varint_put(cols.dur + cols.dur_len, (uint32_t)(t1 - t0)) - cols.dur);
	cols.last = t1;
	if (++cols.n == BLOCK)
		compress_block();
	return res;
}

__attribute__((constructor)) static void floor_start(void)
{
	const char *v = getenv("FLOOR_ZSTD_LEVEL");

	if (v && *v)
		level = atoi(v);
}

__attribute__((destructor)) static void floor_end(void)
{
	if (cols.n)
		compress_block();
	fprintf(stderr, "floor_hook: %llu launches, %llu bytes at zstd level %d\n", launches, kept,
		level);
}
