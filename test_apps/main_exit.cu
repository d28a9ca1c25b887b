// SPDX-License-Identifier: MIT
/*
 * main_exit.cu - the main thread leaves by pthread_exit() while a second thread still launches:
 * the process must end when that thread returns (glibc's rule), with or without the shim, and
 * the shim's trace must be complete with all 200 launches.
 */
#include <pthread.h>

#include "common.h"

static void *second(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 100; i++) {
		spin_kernel<<<1, 32>>>(20000);
		CK_LAUNCH();
	}
	CK(cudaDeviceSynchronize());
	printf("second thread: 100 launches\n");
	fflush(stdout);
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i;

	CK(cudaFree(0));
	for (i = 0; i < 100; i++) {
		spin_kernel<<<1, 32>>>(20000);
		CK_LAUNCH();
	}
	pthread_create(&t, NULL, second, NULL);
	pthread_detach(t);
	printf("expect: launches=200\n");
	fflush(stdout);
	pthread_exit(NULL);
}
