// SPDX-License-Identifier: MIT
/*
 * compute_bound.cu - dense arithmetic: chains of fp32 FMAs in registers, 8 blocks of 256
 * threads per SM, no memory traffic to speak of, launched back to back for about four seconds.
 * Known state: the SMs compute near their peak. Expected: primary compute_bound (with counters).
 */
#include "common.h"

__global__ void fma_chains(float *out, int iters)
{
	fma_chains_body(out, iters);
}

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 800;
	int sms, blocks, i;
	float *out;
	double t0;

	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	blocks = sms * 8;
	CK(cudaMalloc(&out, (size_t)blocks * 256 * sizeof(float)));
	t0 = now_s();
	for (i = 0; i < launches; i++)
		fma_chains<<<blocks, 256>>>(out, 100000);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	printf("elapsed_ms=%.1f\n", (now_s() - t0) * 1e3);
	CK(cudaFree(out));
	printf("expect: launches=%d kernel=fma_chains:%d\n", launches, launches);
	return 0;
}
