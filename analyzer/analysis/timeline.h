/* SPDX-License-Identifier: MIT */
/*
 * timeline.h - the run in TIMELINE_SLICES equal slices, for a picture of it over time (report
 * --format html): in each, the GPU's busy time, the idle time the findings attributed (by
 * cause or gap part) and the time without GPU timestamps. Fed through the analysis driver's
 * tap (analyze.h): the operations as they come, each idle gap as the findings split it. It
 * recomputes nothing: it sorts what the findings and the operations say into slices. Pure;
 * memory fixed but for one entry per device.
 *
 * Definitions:
 *   the run       from the trace's start (the process's, when the shim loaded with it) or the
 *                 first call, operation or NVTX event, whichever is earlier, to the last end:
 *                 the phases' extent (loop.h)
 *   busy          per device, the union of its operations (the findings' work and exposed
 *                 copies), summed over the devices
 *   idle by part  the findings' idle gaps (in their window: the steady state when there are
 *                 steps), each part of a gap spread over the slices the gap covers in
 *                 proportion; a part's slices sum to the part exactly
 *   dark          time in stretches without GPU timestamps (model_host_only: the application's
 *                 profiler held CUPTI, or between a sampled run's windows), per device
 * A slice holds nr_devices x slice_ns of device time; what is neither busy, idle by a part nor
 * dark lies outside the findings' window (start-up, warm-up, tail).
 */
#ifndef GPUSHIM_TIMELINE_H
#define GPUSHIM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze.h"
#include "findings.h"
#include "model/model.h"

/*
 * Fine enough that a picture of the run (some 200 columns) and one of its analysis window (the
 * steady state: a few percent of a run that starts up for long) can both be drawn from the
 * same slices, each column a sum of slices; 4096 x the parts' counters are half a megabyte.
 */
#define TIMELINE_SLICES 4096

struct timeline_device {
	uint32_t device;
	uint64_t end;			/* the union's end so far */
};

struct timeline {
	uint64_t start, end;		/* the run (above); end == start: nothing ran */
	uint64_t slice_ns;
	size_t nr_slices;
	unsigned nr_devices;		/* devices that ran an operation (at least 1) */
	uint64_t busy_ns[TIMELINE_SLICES];
	uint64_t idle_ns[TIMELINE_SLICES][NR_GAP_PARTS];	/* by cause id or enum gap_part */
	uint64_t dark_ns[TIMELINE_SLICES];
	uint64_t idle_total_ns[NR_GAP_PARTS];	/* over the run */
	/* while fed */
	struct model_sink sink;
	const struct model *m;
	struct timeline_device *devs;
	size_t nr_devs, devs_cap;
	struct m_stretch *dark;		/* model_host_only's */
	size_t nr_dark;
};

/*
 * timeline_tap - make @tap feed @t (zeroed here; it begins again when the driver starts over);
 * hand @tap to analyze_trace_tap (cmd_analyze_tap), then timeline_free(@t). Context: the
 * analyzer's one thread; allocates one entry per device and the dark stretches.
 */
void timeline_tap(struct timeline *t, struct analyze_tap *tap);
void timeline_free(struct timeline *t);

/* Slice @i's start (its end: the next one's, or t->end for the last). */
uint64_t timeline_slice_start(const struct timeline *t, size_t i);
/* The slice holding time @x, clipped to the run (nr_slices > 0). */
size_t timeline_slice_of(const struct timeline *t, uint64_t x);

#endif /* GPUSHIM_TIMELINE_H */
