// SPDX-License-Identifier: MIT
/*
 * pipes.cu - one kind of GPU work per run, each launched back to back for about SECONDS
 * seconds with every SM busy, so that the hardware counters see nothing else: what "busy"
 * means differs between them, and the analyzer has to tell which.
 *   pipes latency   pointer chasing through 1 GiB, one warp per SM: each load waits for the
 *                   previous one; SMs active, neither memory nor any pipe near its peak
 *   pipes fma       independent fp32 FMA chains in registers: the FMA pipe
 *   pipes exp       __expf chains in registers: the XU pipe (special functions)
 *   pipes alu       shifts, xors and logic in registers: the ALU pipe
 *   pipes tensor    WMMA 16x16x16 fp16 multiply-accumulate on register fragments: the tensor pipe
 *   pipes fp64      fp64 FMA chains: the FP64 pipe
 *   pipes stream    y = x streamed over 2 x 1 GiB (float4): DRAM
 *   pipes d2d       cudaMemcpyAsync device to device, 1 GiB each: DRAM, no kernel of ours
 * Known class (test_apps/expected/pipes_<mode>.findings): latency_bound, compute_bound on
 * FMA / XU / ALU (CUDA cores), compute_bound on tensor / FP64 (used well),
 * memory_bandwidth on DRAM for stream and d2d.
 */
#include <mma.h>
#include <string.h>

#include "common.h"

#define SECONDS 3.5

__global__ void chase(const unsigned *__restrict__ next, unsigned *out, int steps)
{
	unsigned i = (blockIdx.x * 7919u + threadIdx.x * 104729u) & ((1u << 28) - 1);
	int s;

	for (s = 0; s < steps; s++)
		i = next[i];
	out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}

/* next[i] = i * P + C mod 2^28: one cycle over the whole array, far apart in memory. */
__global__ void chase_init(unsigned *next, unsigned n)
{
	unsigned i;

	for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		next[i] = (i * 2654435761u + 40503u) & (n - 1);
}

__global__ void fma_k(float *out, int iters)
{
	fma_chains_body(out, iters);
}

__global__ void exp_k(float *out, int iters)
{
	float a = threadIdx.x * 1e-4f, b = 0.5f, c = -0.25f, d = blockIdx.x * 1e-5f;
	int i;

	for (i = 0; i < iters; i++) {
		a = __expf(-a);
		b = __expf(-b);
		c = __expf(c * -0.5f);
		d = __expf(-d);
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}

__global__ void alu_k(unsigned *out, int iters)
{
	unsigned a = threadIdx.x, b = blockIdx.x | 1u, c = 0x9e3779b9u, d = 0x85ebca6bu;
	int i;

	for (i = 0; i < iters; i++) {
		a = (a ^ (b >> 3)) | (c & 0x0f0f0f0fu);
		b = (b ^ (c << 5)) & (d | 0x10101010u);
		c = (c ^ (d >> 7)) | (a & 0x33333333u);
		d = (d ^ (a << 11)) & (b | 0x01010101u);
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}

__global__ void fp64_k(double *out, int iters)
{
	double a = threadIdx.x * 1e-3, b = 1.0001, c = 0.9999, d = blockIdx.x * 1e-3;
	int i;

	for (i = 0; i < iters; i++) {
		a = fma(a, b, c);
		d = fma(d, c, b);
		b = fma(b, 0.99999, 1e-6);
		c = fma(c, 1.00001, -1e-6);
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}

__global__ void tensor_k(float *out, int iters)
{
	using namespace nvcuda;
	wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> c0, c1, c2, c3;
	int i;

	wmma::fill_fragment(fa, __float2half(0.001f));
	wmma::fill_fragment(fb, __float2half(0.002f));
	wmma::fill_fragment(c0, 0.0f);
	wmma::fill_fragment(c1, 0.0f);
	wmma::fill_fragment(c2, 0.0f);
	wmma::fill_fragment(c3, 0.0f);
	for (i = 0; i < iters; i++) {	/* four independent accumulators keep the pipe fed */
		wmma::mma_sync(c0, fa, fb, c0);
		wmma::mma_sync(c1, fa, fb, c1);
		wmma::mma_sync(c2, fa, fb, c2);
		wmma::mma_sync(c3, fa, fb, c3);
	}
	for (i = 0; i < c0.num_elements; i++)
		c0.x[i] += c1.x[i] + c2.x[i] + c3.x[i];
	wmma::store_matrix_sync(out + (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * 256, c0,
				16, wmma::mem_row_major);
}

__global__ void copy_k(const float4 *__restrict__ x, float4 *__restrict__ y, size_t n)
{
	size_t i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = x[i];
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const size_t big = 1ull << 30;
	int sms, launches = 0;
	void *a = NULL, *b = NULL;
	double t0;

	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaMalloc(&a, big));
	CK(cudaMalloc(&b, big));
	CK(cudaMemset(a, 0, big));
	CK(cudaMemset(b, 0, big));
	if (!strcmp(mode, "latency"))
		chase_init<<<sms * 8, 256>>>((unsigned *)a, 1u << 28);
	CK(cudaDeviceSynchronize());
	t0 = now_s();
	while (now_s() - t0 < SECONDS) {
		/* A batch of launches, then wait: the queue stays full, the run stays bounded. */
		for (int i = 0; i < 8; i++, launches++) {
			if (!strcmp(mode, "latency"))
				chase<<<sms, 32>>>((const unsigned *)a, (unsigned *)b, 20000);
			else if (!strcmp(mode, "fma"))
				fma_k<<<sms * 8, 256>>>((float *)b, 20000);
			else if (!strcmp(mode, "exp"))
				exp_k<<<sms * 8, 256>>>((float *)b, 5000);
			else if (!strcmp(mode, "alu"))
				alu_k<<<sms * 8, 256>>>((unsigned *)b, 20000);
			else if (!strcmp(mode, "tensor"))
				tensor_k<<<sms * 4, 256>>>((float *)b, 20000);
			else if (!strcmp(mode, "fp64"))
				fp64_k<<<sms * 8, 256>>>((double *)b, 5000);
			else if (!strcmp(mode, "stream"))
				copy_k<<<sms * 8, 256>>>((const float4 *)a, (float4 *)b,
							 big / sizeof(float4));
			else if (!strcmp(mode, "d2d"))
				CK(cudaMemcpyAsync(b, a, big, cudaMemcpyDeviceToDevice, 0));
			else {
				fprintf(stderr, "usage: pipes latency|fma|exp|alu|tensor|fp64|stream|d2d\n");
				return 2;
			}
		}
		CK_LAUNCH();
		CK(cudaDeviceSynchronize());
	}
	printf("elapsed_ms=%.1f launches=%d\n", (now_s() - t0) * 1e3, launches);
	CK(cudaFree(a));
	CK(cudaFree(b));
	return 0;
}
