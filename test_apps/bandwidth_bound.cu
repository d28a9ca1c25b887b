// SPDX-License-Identifier: MIT
/*
 * bandwidth_bound.cu - large elementwise streaming (y = a * x + y over 2 x 1 GiB, float4, every
 * SM busy), launched back to back for about four seconds: the GPU is 100 % "utilized" and its
 * memory traffic near the DRAM's peak while the SMs do almost no arithmetic per byte.
 * Known bottleneck: memory bandwidth. Expected: primary memory_bandwidth (with counters).
 */
#include "common.h"

__global__ void triad(const float4 *__restrict__ x, float4 *__restrict__ y, float a, size_t n)
{
	size_t i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float4 u = x[i], v = y[i];

		v.x = a * u.x + v.x;
		v.y = a * u.y + v.y;
		v.z = a * u.z + v.z;
		v.w = a * u.w + v.w;
		y[i] = v;
	}
}

int main(int argc, char **argv)
{
	const size_t n = (1ull << 30) / sizeof(float4);
	int launches = argc > 1 ? atoi(argv[1]) : 5000;
	float4 *x, *y;
	double t0;
	int sms, i;

	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaMalloc(&x, n * sizeof(float4)));
	CK(cudaMalloc(&y, n * sizeof(float4)));
	CK(cudaMemset(x, 0, n * sizeof(float4)));
	CK(cudaMemset(y, 0, n * sizeof(float4)));
	CK(cudaDeviceSynchronize());
	t0 = now_s();
	for (i = 0; i < launches; i++)
		triad<<<sms * 8, 256>>>(x, y, 1.0001f, n);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	printf("elapsed_ms=%.1f GB/s=%.0f\n", (now_s() - t0) * 1e3,
	       3.0 * n * sizeof(float4) * launches / (now_s() - t0) / 1e9);
	CK(cudaFree(x));
	CK(cudaFree(y));
	printf("expect: launches=%d kernel=triad:%d\n", launches, launches);
	return 0;
}
