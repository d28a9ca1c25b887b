// SPDX-License-Identifier: MIT
/*
 * host_sync.cu - a training-style loop that reads one value back after every step (what
 * PyTorch's loss.item() does: a 4-byte device-to-host copy that waits for the stream), then
 * spends 100 us on the host with it. Each step queues 0.5 ms of GPU work at once; the read-back
 * waits for all of it, so the queue drains and the GPU idles while the host works and launches
 * the next step. Without the read-back the host would have queued ahead and hidden that time.
 * Known bottleneck: host synchronization. Expected: primary host_sync.
 * Usage: host_sync [EVERY] - read back after every EVERY-th step (default 1; 0: once at the
 * end, the fix: `gpushim diff` of the two shows what the per-step read-back costs).
 */
#include "common.h"

__global__ void step_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = x[i] * 0.999f + 0.001f;
}

int main(int argc, char **argv)
{
	/* every: read back after every N-th step (default 1); 0: only once, after the loop. */
	const int n = 1 << 26, steps = 200, every = argc > 1 ? atoi(argv[1]) : 1;
	float *x, loss = 0;
	int i, k;

	CK(cudaMalloc(&x, (size_t)n * sizeof(float)));
	CK(cudaMemset(x, 0, (size_t)n * sizeof(float)));
	for (i = 0; i < steps; i++) {
		for (k = 0; k < 4; k++)
			step_kernel<<<n / 256, 256>>>(x, n);
		if (every > 0 && (i + 1) % every == 0)
			CK(cudaMemcpy(&loss, x, sizeof(float), cudaMemcpyDeviceToHost));
		host_busy_us(100);	/* the host looks at the value before the next step */
	}
	if (every <= 0)
		CK(cudaMemcpy(&loss, x, sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaFree(x));
	printf("host_sync: loss %.4f\n", loss);
	printf("expect: launches=%d kernel=step_kernel:%d\n", 4 * steps, 4 * steps);
	return 0;
}
