// SPDX-License-Identifier: MIT
/*
 * healthy.cu - the control: arithmetic-heavy kernels that fill every SM (8 blocks of 256
 * threads per SM), launched back to back without waiting, one synchronization at the end.
 * Expected: no host-side cause above 10 % of the span; SM fill near 100 %.
 */
#include "common.h"

__global__ void fma_kernel(float *out, int iters)
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
