/* SPDX-License-Identifier: MIT */
/*
 * fake_cupti.h - the fake driver's side of its fake CUPTI (fake_cupti.c, built into the variant
 * tests/fake_cupti/libcuda.so.1 only): each GPU-work entry point brackets its work with
 * fake_cupti_enter() and fake_cupti_leave() (the API record) and reports what the "GPU" ran.
 * Without FAKE_CUPTI every call compiles to nothing.
 */
#ifndef GPUSHIM_FAKE_CUPTI_H
#define GPUSHIM_FAKE_CUPTI_H

#include <stdint.h>

/* One GPU-work call in flight: its API record's start and correlation id (0: not traced). */
struct fake_api {
	uint64_t start;
	uint32_t corr;
	/* The kinds as the call began: its operation's record is decided there, as early in a
	 * call as CUPTI decides it (a call in flight as a kind goes off keeps its record). */
	uint8_t kernel_on, copy_on, set_on;
};

/* Which API record a call makes: one driver callback id per kind of work. */
enum fake_api_kind { FAKE_API_LAUNCH, FAKE_API_COPY, FAKE_API_SET };

#ifdef FAKE_CUPTI
void fake_cupti_enter(struct fake_api *a);
void fake_cupti_leave(const struct fake_api *a, enum fake_api_kind kind);
void fake_cupti_kernel(const struct fake_api *a, const char *name, const unsigned int grid[3],
		       const unsigned int block[3]);
void fake_cupti_copy(const struct fake_api *a, uint64_t bytes);
void fake_cupti_set(const struct fake_api *a, uint64_t bytes);
/* The call returns: the subscriber's API exit callback, if its domain is enabled. */
void fake_cupti_exit(enum fake_api_kind kind);
/* The context is created: its API records exist only if some are on now, as in CUPTI 13. */
void fake_cupti_context_created(void);
/*
 * A CUDA graph call (capture, instantiation, launch) is made. CUPTI detached at a graph call,
 * or detached once one was made, ends the process (abort) as a detached CUPTI broke CUDA-graph
 * loops on the H200 (BENCHMARKS.md runs P, Q).
 */
void fake_cupti_graph_call(const char *what);
/* fake_pm.c: a traced call is made (checked against the profiler's initialization). */
void fake_pm_note_call(void);
#else
#define fake_cupti_enter(a) ((void)(a))
#define fake_cupti_leave(a, kind) ((void)(a), (void)(kind))
#define fake_cupti_kernel(a, name, grid, block) ((void)(a), (void)(name), (void)(grid), (void)(block))
#define fake_cupti_copy(a, bytes) ((void)(a), (void)(bytes))
#define fake_cupti_set(a, bytes) ((void)(a), (void)(bytes))
#define fake_cupti_exit(kind) ((void)(kind))
#define fake_cupti_context_created() ((void)0)
#define fake_cupti_graph_call(what) ((void)(what))
#endif

#endif /* GPUSHIM_FAKE_CUPTI_H */
