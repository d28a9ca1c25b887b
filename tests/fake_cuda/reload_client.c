// SPDX-License-Identifier: MIT
/*
 * reload_client.c - a client that is not linked against libcuda: it dlopens libcuda.so.1,
 * launches through dlsym'd pointers, dlcloses it, opens it again and launches again, as a
 * plugin that loads and unloads a CUDA backend would. Prints what each step returned; the
 * output must be the same with and without the shim, and every launch recorded.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*getf_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
			      unsigned int, unsigned int, unsigned int, CUstream, void **, void **);

static int round_trip(int round)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUmodule mod;
	CUfunction f;
	int i, fails = 0;

	if (!h) {
		printf("round %d: dlopen failed\n", round);
		return 1;
	}
	fails += ((init_fn)dlsym(h, "cuInit"))(0) != CUDA_SUCCESS;
	fails += ((load_fn)dlsym(h, "cuModuleLoadData"))(&mod, "image") != CUDA_SUCCESS;
	fails += ((getf_fn)dlsym(h, "cuModuleGetFunction"))(&f, mod, "_Z4spinv") != CUDA_SUCCESS;
	for (i = 0; i < 3; i++)
		fails += ((launch_fn)dlsym(h, "cuLaunchKernel"))(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL,
								 NULL) != CUDA_SUCCESS;
	printf("round %d: %d failed, dlclose %d\n", round, fails, dlclose(h));
	return fails;
}

int main(void)
{
	return round_trip(1) + round_trip(2);
}
