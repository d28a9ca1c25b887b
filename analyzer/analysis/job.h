/* SPDX-License-Identifier: MIT */
/*
 * job.h - a distributed job's traces (one a rank) as one job: their collectives matched across
 * ranks, the ranks' clocks aligned, and the rank the others waited for. Pure: each trace's
 * model, statistics and findings in (job_add, while they live), the job's figures out.
 *
 * Collectives: the communication kernels each rank ran (stats_is_comm_kernel: NCCL, NVSHMEM,
 * PyTorch's symmetric memory), matched across ranks by name and order - the i-th kernel of a
 * name on one rank is the i-th of that name on every other rank (a communicator's collectives
 * run in the same order on all its ranks). An instance every rank ran is matched; the rest
 * (a rank that ran more, ranks whose traces ended early) is counted.
 * Clocks: traces of one host share CLOCK_MONOTONIC and compare as recorded. Across hosts, a
 * collective ends nearly together on every rank (the last rank to arrive releases the
 * others): each rank's offset to the first rank is the median, over the matched instances, of
 * the difference of their ends.
 * Arrival: a rank's kernel start (aligned). In each instance the last rank to arrive made
 * the others wait: skew = last arrival - first; what waiting for the last rank cost the job
 * = last arrival - the arrival before it (had it come as early as the next slowest rank, the
 * collective would have started that much sooner). The straggler is the rank that cost the
 * job the most so; what made it late: the cause (findings) whose time on it exceeds the
 * other ranks' median the most. Which step: each collective falls in a step of its rank
 * (loop.h's series, where the rank's steps were found); the straggler's steps with an
 * instance it arrived last at are counted, and the instance it cost the most is named with
 * its step and that step's largest part of idle time (loop_step_idle).
 */
#ifndef GPUSHIM_JOB_H
#define GPUSHIM_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "findings.h"
#include "model/model.h"
#include "stats.h"

struct job_op {
	uint64_t start, end;
	uint32_t name;			/* index into job.names */
	uint32_t step;			/* the rank's step it started in, from 1; 0: none */
};

struct job_rank {
	int32_t rank;			/* the trace's (RANK, SLURM_PROCID); -1: none */
	uint32_t pid;
	char *host;
	char *path;
	uint64_t window_ns;
	uint64_t cause_ns[NR_CAUSES];	/* measured causes' time lost */
	int has_gpu;
	uint64_t comm_ns, comm_overlap_ns, nr_comm;
	struct job_op *ops;		/* its communication kernels, in order of start */
	size_t nr_ops, ops_cap;
	uint64_t ops_dropped;		/* beyond STATS_MAX_COMM_OPS */
	int8_t *step_part;		/* each step's largest idle part (a cause id or enum
					 * gap_part; -1 none), nr_steps of them */
	size_t nr_steps;
	/* job_compute's */
	int64_t offset_ns;		/* its clock less the first rank's */
	uint64_t nr_last;		/* instances it arrived last at */
	uint64_t wait_ns;		/* its time waiting for the last rank, summed */
	uint64_t cost_ns;		/* what waiting for it cost the job (last - the one before) */
	uint64_t steps_late;		/* its steps with a collective it arrived last at */
	uint64_t worst_ns;		/* the instance it cost the most: that cost, */
	uint32_t worst_step;		/* its step (from 1; 0 none), */
	uint32_t worst_name;		/* its collective (job.names) */
	uint64_t worst_instance;	/* and which of that name's, from 1 */
};

struct job {
	struct job_rank *ranks;
	size_t nr_ranks, ranks_cap;
	char **names;			/* collectives' kernel names, distinct */
	size_t nr_names, names_cap;
	size_t nr_ops;			/* held over all ranks (bounded: job.c) */
	/* job_compute's */
	int is_computed;
	const char *why_not;		/* no matching: why (static text); NULL when matched */
	int is_one_host;
	uint64_t nr_matched;		/* instances every rank ran */
	uint64_t nr_unmatched;		/* kernels of instances some rank did not run */
	uint64_t skew_sum_ns, skew_max_ns;
	int straggler;			/* index into ranks; -1 none */
	int straggler_cause;		/* enum cause_id; -1 none above the others' median */
	uint64_t straggler_excess_ns;
	/* each cause's time on the straggler above the other ranks' median (0: not above), and
	 * the causes above it, most first: nr_excess of them */
	uint64_t excess_ns[NR_CAUSES];
	int excess_order[NR_CAUSES];
	int nr_excess;
};

void job_init(struct job *j);
/* Add one rank's trace: @path, its model, statistics and findings (copied: they may go). */
void job_add(struct job *j, const char *path, const struct model *m, const struct stats *s,
	     const struct findings *fd);
/* The largest idle part (a cause id or enum gap_part) of the step @r cost the job the most
 * in; -1: none, or no step. */
int job_latest_part(const struct job_rank *r);
/* Match the collectives, align the clocks, find the straggler. */
void job_compute(struct job *j);
void job_free(struct job *j);

#endif /* GPUSHIM_JOB_H */
