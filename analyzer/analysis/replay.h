/* SPDX-License-Identifier: MIT */
/*
 * replay.h - what-if: the recorded run as a dependency graph, replayed as recorded and with
 * one cause taken away, so that each cause is ranked by what fixing it would save.
 *
 * The graph (README "What-if replay"):
 *   nodes    each call's start and end on its thread; each GPU operation's start
 *   host     a thread's call starts after its previous call ended, by the CPU time between
 *            them as recorded — or, when the thread was idle 20 us and more and started
 *            within 1 ms after a call of another thread ended, after that call (a hand-off:
 *            its own gap was waiting; the time since that call, its CPU work); a call lasts its own time as recorded, except a call that
 *            waited for the GPU (a synchronization, a blocking copy, an allocation or free,
 *            or any call of 100 us and more): it ends when the operation it waited for ends (the
 *            operation whose end came last before the call returned, submitted before it,
 *            the call having spent most of its time before that end), plus the time it took
 *            to return after it
 *   GPU      an operation starts after its launch call began (by the launch latency), after
 *            the operation before it on its stream ended, and, when neither explains its
 *            start (5 us and more later), after the operation of another stream of its device
 *            that ended last before it started (an event wait); of these the one that bound
 *            it in the recording keeps its recorded delay, the others their least
 *   time     each node at the latest of what it waits for; a node nothing precedes (a thread's
 *            first call, an operation joined to none) at its recorded time
 * Replayed as recorded, the graph gives the recorded times back (the replay error says how
 * closely). Changes: syncs that do not block (all, or those of the sites asked), launch calls
 * of a given cost, CPU time between calls scaled, pageable copies pinned (uploads
 * asynchronous), allocations free, kernels at full SM fill. The span is the window's (the
 * steady state when steps are found): from its first node to its last end, replayed.
 * Memory: ~64 bytes a call and an operation. Pure.
 */
#ifndef GPUSHIM_REPLAY_H
#define GPUSHIM_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

#define REPLAY_DEP_NS 5000u		/* a start this much later than its stream and launch
					 * allow waits for another stream */
/* What a kernel launch costs the host inside a CUDA graph's replay (the launch_overhead
 * change): cuGraphLaunch's time per kernel of the graph, measured on the H200 under the shim
 * (BENCHMARKS "What-if"): `twins launch fixed` (200 kernels a graph) 0.98 and 1.63 us in two
 * runs, `torch_twins.py launch fixed` (81) 1.28 us; the median. */
#define REPLAY_GRAPH_LAUNCH_NS 1300u
/* ... and the host's time between two launches of a thread, when shorter than this (a
 * framework's dispatch between operations: PyTorch eager on the H200, torch_twins.py launch,
 * 4.0 us median, 9.0 us p99), which the graph's replay does not have. */
#define REPLAY_GRAPH_GAP_NS 20000u
/* What an asynchronous copy call costs the host (the memcpy change); provisional as above. */
#define REPLAY_ASYNC_CALL_NS 5000u
#define REPLAY_WAIT_SLACK_NS 20000u
#define REPLAY_LONG_CALL_NS 100000u	/* a call of another kind this long may have waited */
#define REPLAY_WAKE_MIN_GAP_NS 20000u	/* a thread idle this long may have waited for another */
#define REPLAY_WAKE_NS 1000000u		/* ... when it started this soon after another's call */	/* a call returning within this of an operation's end
					 * waited for it */

/* What a replay changes (zeroed, with cpu_factor 1: the recorded run). */
struct replay_change {
	int no_sync;			/* synchronizations and blocking read-backs do not wait */
	int has_launch_ns;		/* launch calls cost at most launch_ns */
	uint64_t launch_ns;
	double cpu_factor;		/* CPU time between calls x this (1: as recorded) */
	int pinned;			/* pageable copies at the pinned bandwidth; an upload's call
					 * does not wait (a read-back's does: the host reads what it
					 * brings; not blocking there is no_sync's change) */
	int no_alloc;			/* allocation and free calls cost nothing, never wait */
	int full_fill;			/* kernels take time x their SM fill */
	const uint8_t *sync_sites;	/* with no_sync: only the calls of site i (replay_site)
					 * where sync_sites[i] is set; NULL: every site */
};

/*
 * A host_sync site: the blocking calls of one entry point that waited for operations of one
 * name, as `gpushim report` prints them under host_sync ("cuStreamSynchronize after memcpy
 * DtoH"): @after is the operation the call waited for (its E_WAIT edge), named as the
 * findings name what the GPU ran before (a kernel's name, "memcpy DtoH", "memset").
 */
struct replay_site {
	const char *entry;		/* the call's entry point */
	const char *after;		/* what it waited for */
	uint64_t nr_calls;		/* its calls in the window (from start to return) */
	uint64_t waited_ns;		/* their recorded time, from start to return */
};

struct replay;

/*
 * replay_build - the graph of loaded model @m, its span measured over [@lo, @hi) (recorded
 * times; 0, UINT64_MAX: all). NULL with *@why when it cannot be replayed (no GPU timestamps, an
 * impossible order: a cycle).
 */
struct replay *replay_build(const struct model *m, uint64_t lo, uint64_t hi, const char **why);
/* Replay with @c (NULL: as recorded); the window's span in ns, 0 when the graph has a cycle. */
uint64_t replay_run(struct replay *r, const struct replay_change *c);
uint64_t replay_recorded_span(const struct replay *r);
/*
 * replay_set_stats - the kernels of @s whose own hardware counters say compute- or
 * bandwidth-bound (stats.h: KERNEL_PM_OWN_MIN of their samples theirs): full_fill leaves their
 * time as recorded, since a pipe or the memory, not the SMs left empty, sets it. Call before
 * replay_run; @s may be freed after.
 */
struct stats;
void replay_set_stats(struct replay *r, const struct stats *s);
/* The pinned copy bandwidth the pinned change uses (bytes/s) and whether the trace showed it. */
double replay_pinned_bw(const struct replay *r, int *measured);
void replay_free(struct replay *r);

/*
 * The host_sync sites: every synchronization or blocking read-back that waited for an
 * operation, in the order their first call came; @i < replay_nr_sites(@r).
 */
size_t replay_nr_sites(const struct replay *r);
const struct replay_site *replay_site(const struct replay *r, size_t i);
/*
 * replay_sites_match - set @mask[i] (replay_nr_sites bytes) for each site that @spec names:
 * "ENTRY" (every site of that entry point) or "ENTRY after NAME", NAME the operation's name,
 * or its end (a kernel's name without its start), or its start followed by "..." (a name cut
 * short); a C++ kernel's also demangled (util/demangle.h) whole, its end or its start and
 * "...", or any of its short forms (demangle_short at any width: as the outputs print it).
 * Return: the number of sites set (also those already set).
 */
size_t replay_sites_match(const struct replay *r, const char *spec, uint8_t *mask);

/*
 * Where things lay, as recorded (REPLAY_RECORDED) or in the last replay_run (REPLAY_LAST_RUN),
 * on the recording's clock (ns). replay_call_times: call @i (model order) from *@t0 to *@t1;
 * replay_op_times: operation @o from *@start to *@end. Each returns 1 when the thing belongs
 * to the window (its start was recorded in it), else 0. replay_window_times: the window's
 * first node and last end, whose difference replay_recorded_span or replay_run gave.
 */
enum replay_clock { REPLAY_RECORDED, REPLAY_LAST_RUN };
int replay_call_times(const struct replay *r, size_t i, enum replay_clock clk, uint64_t *t0,
		      uint64_t *t1);
int replay_op_times(const struct replay *r, size_t o, enum replay_clock clk, uint64_t *start,
		    uint64_t *end);
void replay_window_times(const struct replay *r, enum replay_clock clk, uint64_t *first,
			 uint64_t *last);

/* The change that takes cause @cause (findings.h's cause ids) away; 0, or -1 for a cause the
 * replay cannot take away (the bandwidth, compute and capacity causes need a kernel model). */
int replay_change_of_cause(int cause, struct replay_change *c);

#endif /* GPUSHIM_REPLAY_H */
