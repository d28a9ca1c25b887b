// SPDX-License-Identifier: MIT
/*
 * host_sync.cu - a training-style loop that reads one value back after every step (what
 * PyTorch's loss.item() does: a 4-byte device-to-host copy that waits for the stream). Each
 * step's kernels finish, the queue drains, and the GPU idles until the host has the value and
 * launches the next step.
 * Known bottleneck: host synchronization. Expected: primary host_sync.
 */
#include "common.h"

__global__ void step_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = x[i] * 0.999f + 0.001f;
}

int main(void)
{
	const int n = 1 << 20, steps = 400;
	float *x, loss = 0;
	int i, k;

	CK(cudaMalloc(&x, n * sizeof(float)));
	CK(cudaMemset(x, 0, n * sizeof(float)));
	for (i = 0; i < steps; i++) {
		for (k = 0; k < 4; k++)
			step_kernel<<<n / 256, 256>>>(x, n);
		CK(cudaMemcpy(&loss, x, sizeof(float), cudaMemcpyDeviceToHost));
		host_busy_us(20);	/* the host looks at the value before the next step */
	}
	CK(cudaFree(x));
	printf("host_sync: loss %.4f\n", loss);
	printf("expect: launches=%d kernel=step_kernel:%d\n", 4 * steps, 4 * steps);
	return 0;
}
