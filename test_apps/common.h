/* SPDX-License-Identifier: MIT */
/*
 * common.h - shared by the CUDA test apps (links nothing from the project): error checks that
 * stop the program with the failing call named, a host clock, a spin kernel timed by the GPU's
 * global timer, and the "expect:" lines scripts/gpu-check.sh compares with the report.
 */
#ifndef GPUSHIM_TEST_APPS_COMMON_H
#define GPUSHIM_TEST_APPS_COMMON_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
				cudaGetErrorString(e_));                                           \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CK_LAUNCH() CK(cudaGetLastError())

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void host_busy_us(double us)
{
	double end = now_s() + us * 1e-6;
	volatile double x = 1;

	while (now_s() < end)
		x = x * 1.0000001 + 1e-9;
}

__device__ __forceinline__ unsigned long long global_ns(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Every thread waits until @ns of GPU time have passed since it started. */
__global__ void spin_kernel(unsigned long long ns)
{
	unsigned long long t0 = global_ns();

	while (global_ns() - t0 < ns)
		;
}

/* Four chains of fp32 FMAs in registers, @iters long: arithmetic with no memory traffic. */
__device__ __forceinline__ void fma_chains_body(float *out, int iters)
{
	float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x * 1e-3f;
	int i;

	for (i = 0; i < iters; i++) {
		a = fmaf(a, b, c);
		d = fmaf(d, c, b);
		b = fmaf(b, 0.99999f, 1e-6f);
		c = fmaf(c, 1.00001f, -1e-6f);
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}

#endif /* GPUSHIM_TEST_APPS_COMMON_H */
