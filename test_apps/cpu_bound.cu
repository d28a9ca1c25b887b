// SPDX-License-Identifier: MIT
/*
 * cpu_bound.cu - the host prepares each batch itself (300 us of CPU work, like data loading
 * or augmentation in the training process) and then launches 50 us of GPU work without
 * waiting for it. The GPU idles while the host computes outside CUDA.
 * Known bottleneck: CPU-bound input. Expected: primary cpu_bound.
 */
#include "common.h"

int main(void)
{
	const int steps = 200;
	cudaStream_t s;
	int i;

	CK(cudaStreamCreate(&s));
	for (i = 0; i < steps; i++) {
		host_busy_us(300);
		spin_kernel<<<132, 128, 0, s>>>(50000);
		CK_LAUNCH();
	}
	CK(cudaStreamSynchronize(s));
	printf("expect: launches=%d kernel=spin_kernel:%d\n", steps, steps);
	return 0;
}
