/* SPDX-License-Identifier: MIT */
/*
 * nvtx_ranges.h - every NVTX range of the run as the first look reads the events: each thread's
 * push/pop stack per domain followed NVTX_RANGES_MAX_DEPTH deep, start/end ranges by id, each
 * occurrence kept (its name and domain, thread, start and end) up to NVTX_RANGES_MAX_KEPT in
 * all. The range table (analysis/ranges.h) places the calls, operations and idle gaps among
 * them. What cannot be followed is counted, never guessed: pops on an empty stack, pushes
 * deeper than the limit, ends of no open range, ranges past the limits, ranges still open when
 * the run ends (closed there). Memory: 24 bytes an occurrence, 24 a name. Pure.
 */
#ifndef GPUSHIM_NVTX_RANGES_H
#define GPUSHIM_NVTX_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define NVTX_RANGES_MAX_KEPT (1u << 20)		/* occurrences kept in all */
#define NVTX_RANGES_MAX_DEPTH 64		/* push/pop nesting followed per thread and domain */
#define NVTX_RANGES_MAX_OPEN (1u << 16)		/* start/end ranges open at once */
#define NVTX_RANGES_MAX_NAMES (1u << 16)	/* names (with domain) told apart */
#define NVTX_RANGES_ANY_THREAD UINT32_MAX	/* a start/end range: of no one thread */
#define NVTX_RANGES_OTHER 0u			/* the name slot of names past the limit */

struct nvtx_range_name {
	uint32_t domain;		/* NVTX domain id (0: default) */
	uint32_t name;			/* STRING id (0: none) */
	int is_start_end;		/* seen as a start/end range (else push/pop only) */
};

struct nvtx_occ {
	uint64_t start, end;
	uint32_t name;			/* index into names */
	uint32_t thread;		/* push/pop: the thread slot; start/end: ANY_THREAD */
};

struct nvtx_ranges {
	struct nvtx_range_name *names;	/* [0]: the names past NVTX_RANGES_MAX_NAMES */
	size_t nr_names, names_cap;
	struct nvtx_occ *occ;		/* by start once finished (each thread's in order before) */
	size_t nr_occ, occ_cap;
	uint64_t nr_ranges;		/* ranges that began (kept or not) */
	uint64_t nr_dropped;		/* ... not kept: past NVTX_RANGES_MAX_KEPT or too deep */
	uint64_t nr_too_deep, nr_unbalanced, nr_unmatched_ends, nr_open_at_end, nr_marks;
	uint64_t nr_other_names;	/* ranges whose name came past NVTX_RANGES_MAX_NAMES */
	struct nvtx_ranges_state *st;	/* while fed (nvtx_ranges.c) */
};

void nvtx_ranges_init(struct nvtx_ranges *r);
/* One NVTX event (struct m_nvtx), each thread's in order. */
void nvtx_ranges_event(struct nvtx_ranges *r, const struct m_nvtx *e);
/* The run ended at @run_end: ranges still open end there (counted). */
void nvtx_ranges_finish(struct nvtx_ranges *r, uint64_t run_end);
void nvtx_ranges_free(struct nvtx_ranges *r);

#endif /* GPUSHIM_NVTX_RANGES_H */
