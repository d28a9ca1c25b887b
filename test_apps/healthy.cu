// SPDX-License-Identifier: MIT
/*
 * healthy.cu - the control: arithmetic-heavy kernels that fill every SM (8 blocks of 256
 * threads per SM), launched back to back without waiting, one synchronization at the end.
 * Expected: no host-side cause above 10 % of the span; SM fill near 100 %.
 */
#include "common.h"

__global__ void fma_kernel(float *out, int iters)
{
	fma_chains_body(out, iters);
}

int main(void)
{
	int sms, blocks, i;
	float *out;

	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	blocks = sms * 8;
	CK(cudaMalloc(&out, (size_t)blocks * 256 * sizeof(float)));
	for (i = 0; i < 100; i++)
		fma_kernel<<<blocks, 256>>>(out, 20000);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaFree(out));
	printf("expect: launches=100 kernel=fma_kernel:100\n");
	return 0;
}
