// SPDX-License-Identifier: MIT
/*
 * init_race.cu - 16 threads, released at once, each calling cuInit (through dlsym on libcuda,
 * as JAX and Triton reach the driver) and then launching 100 spin kernels. Under the shim the
 * first cuInit sets up CUPTI and the hardware counters while the others wait: every kernel must
 * have its GPU record, the counters be set up once, and the exit be clean. Prints the longest
 * cuInit a thread saw.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include "common.h"

typedef int (*init_fn)(unsigned int);

static pthread_barrier_t barrier;
static init_fn init;
static double longest_ms;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *worker(void *arg)
{
	double t0, dt;
	int i, rc;

	(void)arg;
	pthread_barrier_wait(&barrier);
	t0 = now_ms();
	rc = init(0);
	dt = now_ms() - t0;
	pthread_mutex_lock(&lock);
	if (dt > longest_ms)
		longest_ms = dt;
	pthread_mutex_unlock(&lock);
	if (rc) {
		fprintf(stderr, "cuInit: %d\n", rc);
		exit(1);
	}
	for (i = 0; i < 100; i++) {
		spin_kernel<<<1, 32>>>(2000);
		CK_LAUNCH();
	}
	CK(cudaDeviceSynchronize());
	return NULL;
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	pthread_t t[16];
	int i;

	init = h ? (init_fn)dlsym(h, "cuInit") : NULL;
	if (!init) {
		fprintf(stderr, "no cuInit\n");
		return 1;
	}
	pthread_barrier_init(&barrier, NULL, 16);
	for (i = 0; i < 16; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 16; i++)
		pthread_join(t[i], NULL);
	printf("expect: launches=1600\n");
	printf("longest cuInit %.1f ms\n", longest_ms);
	return 0;
}
