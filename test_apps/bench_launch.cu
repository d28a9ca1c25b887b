// SPDX-License-Identifier: MIT
/*
 * bench_launch.cu - host cost of a kernel launch: N back-to-back launches of an empty kernel,
 * timed on the host around the loop (the GPU cannot keep up, so each launch's host cost is
 * what the loop measures). Prints "launch_ns=<ns per launch>". With BATCH, the loop is also
 * timed BATCH launches at a time, and "batch_min_ns=" and "batch_med_ns=" give the fastest and
 * the median batch, per launch: what interrupts and the machine's neighbours add to some
 * batches stays out. Run plain, under the shim without CUPTI and under the shim with CUPTI by
 * scripts/gpu-check.sh (BENCHMARKS.md). "cpu_main_ns= cpu_shim_ns= cpu_other_ns=" give the CPU
 * time each kind of thread spent during the loop, per launch (/proc/self/task/TID/schedstat): the
 * loop's own thread, the shim's threads (named gpushim-*), and the rest (the driver's, CUPTI's).
 * Usage: bench_launch [N [BATCH]]
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

__global__ void empty_kernel(void)
{
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

enum { CPU_MAIN, CPU_SHIM, CPU_OTHER, NR_CPU };
#define MAX_TASKS 256

struct task_cpu {
	int tid;
	int group;
	unsigned long long ns;
};

/* On-CPU ns of every thread of this process; returns how many were read (0: no schedstat). */
static int read_tasks(struct task_cpu *t)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while (n < MAX_TASKS && (e = readdir(d))) {
		char path[64], comm[32] = "";
		FILE *f;
		int tid = atoi(e->d_name);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
		if ((f = fopen(path, "r"))) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%llu", &t[n].ns) == 1) {
			t[n].tid = tid;
			t[n].group = tid == getpid() ? CPU_MAIN :
				     !strncmp(comm, "gpushim-", 8) ? CPU_SHIM : CPU_OTHER;
			n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* CPU time per group between two readings (threads born in between count from 0). */
static void cpu_between(const struct task_cpu *a, int na, const struct task_cpu *b, int nb,
			double *out)
{
	int i, j;

	for (i = 0; i < NR_CPU; i++)
		out[i] = 0;
	for (j = 0; j < nb; j++) {
		unsigned long long before = 0;

		for (i = 0; i < na; i++)
			if (a[i].tid == b[j].tid)
				before = a[i].ns;
		out[b[j].group] += (double)(b[j].ns - before);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, i;
	int batch = argc > 2 ? atoi(argv[2]) : 0, nb = 0;
	double t0, t1, *b = NULL, tb, cpu[NR_CPU];
	static struct task_cpu ta[MAX_TASKS], tz[MAX_TASKS];
	int na, nz;

	if (batch > 0 && n / batch > 0)
		b = (double *)malloc(sizeof(*b) * (n / batch));
	empty_kernel<<<1, 1>>>();	/* module load and first-launch costs stay out */
	CK(cudaDeviceSynchronize());
	na = read_tasks(ta);
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
	nz = read_tasks(tz);
	CK(cudaDeviceSynchronize());
	CK_LAUNCH();
	printf("launch_ns=%.1f\n", (t1 - t0) * 1e9 / n);
	if (nb) {
		qsort(b, nb, sizeof(*b), cmp_double);
		printf("batch_min_ns=%.1f batch_med_ns=%.1f\n", b[0] * 1e9 / batch,
		       b[nb / 2] * 1e9 / batch);
	}
	if (na && nz) {
		cpu_between(ta, na, tz, nz, cpu);
		printf("cpu_main_ns=%.1f cpu_shim_ns=%.1f cpu_other_ns=%.1f\n", cpu[CPU_MAIN] / n,
		       cpu[CPU_SHIM] / n, cpu[CPU_OTHER] / n);
	}
	free(b);
	return 0;
}
