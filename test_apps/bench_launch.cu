// SPDX-License-Identifier: MIT
/*
 * bench_launch.cu - host cost of a kernel launch: N back-to-back launches of an empty kernel,
 * timed on the host around the loop (the GPU cannot keep up, so each launch's host cost is
 * what the loop measures). Prints "launch_ns=<ns per launch>". With BATCH, the loop is also
 * timed BATCH launches at a time, and "batch_min_ns=" and "batch_med_ns=" give the fastest and
 * the median batch, per launch: what interrupts and the machine's neighbours add to some
 * batches stays out. Run plain, under the shim without CUPTI and under the shim with CUPTI by
 * scripts/gpu-check.sh (BENCHMARKS.md).
 * Usage: bench_launch [N [BATCH]]
 */
#include <stdlib.h>

#include "common.h"

__global__ void empty_kernel(void)
{
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, i;
	int batch = argc > 2 ? atoi(argv[2]) : 0, nb = 0;
	double t0, t1, *b = NULL, tb;

	if (batch > 0 && n / batch > 0)
		b = (double *)malloc(sizeof(*b) * (n / batch));
	empty_kernel<<<1, 1>>>();	/* module load and first-launch costs stay out */
	CK(cudaDeviceSynchronize());
	t0 = tb = now_s();
	for (i = 0; i < n; i++) {
		empty_kernel<<<1, 1>>>();
		if (b && (i + 1) % batch == 0) {
			double t = now_s();

			b[nb++] = t - tb;
			tb = t;
		}
	}
	t1 = now_s();
	CK(cudaDeviceSynchronize());
	CK_LAUNCH();
	printf("launch_ns=%.1f\n", (t1 - t0) * 1e9 / n);
	if (nb) {
		qsort(b, nb, sizeof(*b), cmp_double);
		printf("batch_min_ns=%.1f batch_med_ns=%.1f\n", b[0] * 1e9 / batch,
		       b[nb / 2] * 1e9 / batch);
	}
	free(b);
	return 0;
}
