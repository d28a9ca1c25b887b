/* SPDX-License-Identifier: MIT */
/*
 * late_dtor.h - liblate.so: a library whose destructor makes CUDA calls. Linked into
 * exit_client, it is initialized before the preloaded shim, so its destructor runs after the
 * shim's: the calls it makes come after the trace's END.
 */
#ifndef GPUSHIM_LATE_DTOR_H
#define GPUSHIM_LATE_DTOR_H

#include <cuda.h>

/* late_dtor_arm - the destructor launches @f @n times. */
void late_dtor_arm(CUfunction f, int n);

#endif
