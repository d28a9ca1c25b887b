// SPDX-License-Identifier: MIT
/*
 * low_parallelism.cu - kernels with a grid of 2 blocks that each run for 1 ms, back to back:
 * the GPU is "busy" (what nvidia-smi reports as 100 % utilization) while 2 of its 132 SMs work.
 * Known bottleneck: too little parallelism per kernel. Expected: primary low_parallelism.
 */
#include "common.h"

int main(void)
{
	const int launches = 60;
	int i;

	for (i = 0; i < launches; i++)
		spin_kernel<<<2, 128>>>(1000000);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	printf("expect: launches=%d kernel=spin_kernel:%d\n", launches, launches);
	return 0;
}
