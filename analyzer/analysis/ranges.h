/* SPDX-License-Identifier: MIT */
/*
 * ranges.h - the NVTX range table: per range name and domain, what happened inside its
 * occurrences in the analysis window (the steady state when steps are found; the whole run
 * with --whole or without steps).
 *
 * Definitions (README "Steps and phases", NVTX ranges):
 *   occurrence    a range from its push to its pop (or start to end) that begins in the window;
 *                 nested ones each count (a range inside itself counts twice in host time)
 *   host time     the occurrences' lengths, summed
 *   row           a range name and domain; PyTorch's emit_nvtx() names ("aten::addmm, seq =
 *                 45, op_id = 569") one row per operator, cut before ", seq = " / ", op_id = "
 *   launches      kernel and graph launches made inside: a call counts for the push/pop
 *                 ranges open on its thread at its start, or, when its thread has none open,
 *                 for those open on every thread (work handed to a helper thread: PyTorch's
 *                 autograd runs backward on a thread of its own); and for the start/end ranges
 *                 open then (they belong to no thread)
 *   GPU time      the GPU time of the operations those calls (and copies, memsets) issued,
 *                 wherever it ran: the work the range asked for
 *   idle inside   the device idle gaps (findings.h) inside the range's occurrences, each
 *                 piece of a gap (what the issuing thread was doing then: findings_pieces_to)
 *                 with its cause: a range's idle time by cause, once per name even where its
 *                 occurrences nest
 * Pure: no I/O.
 */
#ifndef GPUSHIM_RANGES_H
#define GPUSHIM_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "model/first_look.h"
#include "model/model.h"

/* Parts of an idle gap: findings.h's cause ids and enum gap_part (findings.h includes this
 * header through stats.h). */
#define RANGES_NR_PARTS 13


struct range_row {
	const char *name;		/* "(unnamed)", "(other names)" */
	const char *domain;		/* NULL: the default domain */
	int is_start_end;
	uint64_t count, host_ns, launches, gpu_ns;
	uint64_t idle_ns;
	uint64_t idle[RANGES_NR_PARTS];	/* ns per cause id or enum gap_part */
};

struct range_table {
	int has_nvtx;			/* the trace has NVTX ranges (or marks) */
	uint64_t window_start, window_end;
	struct range_row *rows;		/* by host time, most first */
	size_t nr_rows;
	uint64_t nr_in_window;		/* occurrences that began in the window */
	/* what the NVTX records held that could not be followed (nvtx_ranges.h), whole run */
	uint64_t nr_ranges, nr_dropped, nr_too_deep, nr_unbalanced, nr_unmatched_ends;
	uint64_t nr_open_at_end, nr_marks, nr_other_names;
	char **owned;			/* names cut from the trace's (emit_nvtx's) */
	size_t nr_owned, owned_cap;
};

struct ranges_acc;

/*
 * ranges_begin - the table @t of the ranges the first look @p kept that begin in [@lo, @hi),
 * then every call and operation in order of start and every idle piece as findings split it;
 * ranges_end ranks the rows.
 */
struct ranges_acc *ranges_begin(struct range_table *t, const struct model *m,
				const struct first_look *p, uint64_t lo, uint64_t hi);
void ranges_call(struct ranges_acc *a, const struct m_call *c);
void ranges_op(struct ranges_acc *a, const struct m_gpu_op *g, const struct m_call *call);
/* A piece [@start, @end) of an idle gap that went to @part (a cause id or enum gap_part). */
void ranges_idle(struct ranges_acc *a, uint64_t start, uint64_t end, int part);
void ranges_end(struct ranges_acc *a);
void ranges_free(struct range_table *t);

/* The cause (a cause id, not noise or a dependency) with the most idle time in @r; -1 none. */
int range_top_cause(const struct range_row *r);

#endif /* GPUSHIM_RANGES_H */
