/* SPDX-License-Identifier: MIT */
/*
 * nvtx_late.h - libnvtxlate.so: a library whose destructor makes NVTX calls. Linked into
 * nvtx_client, it is initialized before the preloaded shim, so its destructor runs after the
 * shim's: its ranges come after the trace's END.
 */
#ifndef GPUSHIM_NVTX_LATE_H
#define GPUSHIM_NVTX_LATE_H

/* nvtx_late_arm - one mark now (NVTX's copy in this library starts), @n ranges at exit. */
void nvtx_late_arm(int n);

#endif
