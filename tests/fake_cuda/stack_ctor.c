// SPDX-License-Identifier: MIT
/*
 * stack_ctor.c - libstackctor.so, loaded with dlopen by `stack_client ctorexit`: its
 * constructor synchronizes (a stack the shim has not seen) and ends the process with exit(3),
 * while dlopen holds the dynamic loader's lock. The shim must still finish the trace: its
 * writer waits for the loader a bounded time only (shim/stacks.c, the loader thread).
 */
#include <cuda.h>
#include <stdlib.h>

void stack_ctor_sync(void) __attribute__((noinline, visibility("default")));

void stack_ctor_sync(void)
{
	cuStreamSynchronize(NULL);
}

__attribute__((constructor)) static void stack_ctor(void)
{
	stack_ctor_sync();
	exit(3);
}
