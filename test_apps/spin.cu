// SPDX-License-Identifier: MIT
/*
 * spin.cu - 50 kernels that each spin for exactly 200 us of GPU time (timed on the GPU's
 * global timer). The report's GPU time for spin_kernel must be 200 us per launch within 5 %:
 * the check that CUPTI timestamps are joined and converted correctly.
 */
#include "common.h"

int main(void)
{
	const unsigned long long ns = 200000;
	cudaStream_t s;
	int i;

	CK(cudaStreamCreate(&s));
	for (i = 0; i < 50; i++) {
		spin_kernel<<<1, 32, 0, s>>>(ns);
		CK_LAUNCH();
	}
	CK(cudaStreamSynchronize(s));
	printf("expect: launches=50 kernel=spin_kernel:50 mean_ns=%llu\n", ns);
	return 0;
}
