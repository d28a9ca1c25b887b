/* SPDX-License-Identifier: MIT */
/*
 * gpucols.h - the writer's encoder of records as columns (GPU_KERNEL_RUN, GPU_API_RUN,
 * LAUNCH_REFS, LAUNCH_GAP_RUN; the layouts are in trace_format.h). It holds GPU_KERNEL, GPU_API,
 * LAUNCH and LAUNCH_REPEAT records back in runs and writes each run as one record at the end of the caller's chunk: a
 * few bytes of varints per record instead of 88, 40 and 64. Only trace_format.h and libc: tests
 * build it on its own.
 *
 * The chunk is the caller's buffer: records in raw[0, *len), *nr counting the records written.
 * Before handing a record to gpucols_kernel or gpucols_api the caller makes sure the chunk has
 * gpucols_room() bytes free beyond the record itself; gpucols_flush writes the held runs (at a
 * chunk's end, before END, whenever the caller wants them out), gpucols_chunk_done forgets
 * the chunk's kernel shapes once the chunk is written: a chunk decodes on its own.
 * Context: one thread (the writer's).
 */
#ifndef GPUSHIM_GPUCOLS_H
#define GPUSHIM_GPUCOLS_H

#include <stddef.h>
#include <stdint.h>

#include "gpushim/trace_format.h"
#include "gpushim/varint.h"

/*
 * gpucols_kernel - hold @k in the kernel run when the chunk has its shape (a GPU_KERNEL written
 * in full, equal in all but times, correlation id and graph node). Returns 1 when held; 0 when
 * @k must go in full: the caller writes it at the chunk's end and calls gpucols_kernel_full().
 */
int gpucols_kernel(const struct trace_rec_gpu_kernel *k, uint8_t *raw, size_t *len, uint64_t *nr);

/* gpucols_kernel_full - a GPU_KERNEL of @size bytes was written in full at raw + @off. */
void gpucols_kernel_full(const uint8_t *raw, size_t off, uint16_t size);

/* gpucols_api - hold @a in the API run (always). */
void gpucols_api(const struct trace_rec_gpu_api *a, uint8_t *raw, size_t *len, uint64_t *nr);

/* The most bytes the chunk grows by when the held GPU runs are written and a record more held. */
size_t gpucols_room(void);

/* gpucols_flush - write the held GPU runs (not the launches). */
void gpucols_flush(uint8_t *raw, size_t *len, uint64_t *nr);

/*
 * Launches (LAUNCH_REFS, thread records): the run holds one thread's launches, in order, and
 * belongs to the caller's current thread block; the caller writes it (gpucols_launch_flush)
 * before any other record of that thread and before the block changes.
 *
 * gpucols_launch_find - the chunk's index of a LAUNCH with @l's shape; -1 when none.
 * gpucols_launch_full - a LAUNCH of @size bytes was written in full at raw + @off (every one
 *	must be told: the index counts them): its index as a shape, or -1 when it is none.
 * gpucols_launch_hold - hold a launch of shape @shape (flushing the run first when it is full).
 * gpucols_launch_room - the most bytes the chunk grows by for the held launches and one more.
 */
int64_t gpucols_launch_find(const struct trace_rec_launch *l, const uint8_t *raw);
int64_t gpucols_launch_full(const uint8_t *raw, size_t off, uint16_t size);
void gpucols_launch_hold(uint32_t shape, uint32_t dt, uint32_t dur, uint32_t seq, uint8_t *raw,
			 size_t *len, uint64_t *nr);
uint32_t gpucols_launches_held(void);
size_t gpucols_launch_room(void);
void gpucols_launch_flush(uint8_t *raw, size_t *len, uint64_t *nr);
void gpucols_chunk_done(void);


/* gpucols_forget - drop the held runs and the shapes (a fork child starting a trace anew). */
void gpucols_forget(void);

/*
 * The launch run (LAUNCH_GAP_RUN): LAUNCH_REPEATs of the chunk's current thread block with
 * consecutive correlation numbers, none starting before its predecessor returned, held back and
 * written as one record: the time deltas (as gaps after the first) and durations in columns of
 * varints, so zstd sees the fields that change apart from what repeats. The caller says which
 * ring (@owner) a repeat is of and keeps room for the run grown by one
 * (TRACE_LAUNCH_RUN_MAX_BYTES); gpucols_gap_extend is on its hot path, hence inline.
 */
#define GPUCOLS_GAP_RUN_MAX 4096u

struct gpucols_gap_run {
	const void *owner;		/* the ring; its BLOCK is the chunk's current one */
	uint32_t n;			/* launches held; 0 none */
	uint32_t seq;			/* the first one's correlation number */
	uint32_t dt[GPUCOLS_GAP_RUN_MAX], dur[GPUCOLS_GAP_RUN_MAX];
};

extern struct gpucols_gap_run gpucols_gap;

/* gpucols_gap_extend - hold @rep in the run if it continues it; 1 when held. */
static inline int gpucols_gap_extend(const void *owner, const struct trace_rec_launch_repeat *rep)
{
	struct gpucols_gap_run *r = &gpucols_gap;

	if (!r->n || r->owner != owner || r->n == GPUCOLS_GAP_RUN_MAX ||
	    rep->seq != r->seq + r->n || rep->hdr.dt_ns < r->dur[r->n - 1])
		return 0;
	r->dt[r->n] = rep->hdr.dt_ns;
	r->dur[r->n++] = rep->dur;
	return 1;
}

/* gpucols_gap_start - a run of @owner begins with @rep (none may be held). */
void gpucols_gap_start(const void *owner, const struct trace_rec_launch_repeat *rep);

/* gpucols_gap_flush - write the held run at the chunk's end: a LAUNCH_REPEAT for one launch. */
void gpucols_gap_flush(uint8_t *raw, size_t *len, uint64_t *nr);

#endif /* GPUSHIM_GPUCOLS_H */
