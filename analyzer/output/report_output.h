/* SPDX-License-Identifier: MIT */
/*
 * report_output.h - printing one report (text for people, JSON gpushim.report/1 for programs)
 * from a model and its statistics. Part of the output layer: formats, never computes.
 */
#ifndef GPUSHIM_REPORT_OUTPUT_H
#define GPUSHIM_REPORT_OUTPUT_H

#include <stdio.h>

#include "analysis/findings.h"
#include "model/model.h"
#include "analysis/stats.h"

/*
 * One process: the first screen (signals, verdict, ranked causes), then the tables. Kernel
 * names print demangled, in short forms distinct within a table; @is_wide: whole. @top: the
 * rows of each table (kernels, API calls, allocations live at the peak; "... N more" for the
 * rest): REPORT_TOP_DEFAULT, each table's own number; SIZE_MAX, all.
 */
#define REPORT_TOP_DEFAULT 0
void report_print_text(FILE *f, const struct model *m, const struct stats *s,
		       const struct findings *fd, int has_header, int is_wide, size_t top);

/* The NVTX range table (report --by-range): the @max names of most host time (0: all). */
void report_print_ranges(FILE *f, const struct stats *s, size_t max);

/* One process's report as JSON object members (the caller opens and closes the object). */
struct json;
void report_json_members(struct json *j, const struct model *m, const struct stats *s,
			 const struct findings *fd);

/*
 * Several processes of one job (e.g. one trace per rank): causes summed over processes, shares
 * of the summed windows, the primary cause of the sum.
 */
struct combined {
	int nr;
	uint64_t window_ns;
	uint64_t cause_ns[NR_CAUSES];
	int is_cause_measured[NR_CAUSES];
	uint64_t saving_ns[NR_CAUSES];	/* what fixing each alone saves, summed (replay) */
	int has_saving[NR_CAUSES];
	int nr_replayed;		/* processes whose run was replayed */
	int nr_memory_full;
	uint64_t launches, syncs, memcpys, allocs;
	double busy_sum;		/* of busy_pct, for the mean */
	int nr_busy;
};

void combined_add(struct combined *c, const struct stats *s, const struct findings *fd);
void report_print_combined_text(FILE *f, const struct combined *c);
void report_json_combined(struct json *j, const struct combined *c);

#endif /* GPUSHIM_REPORT_OUTPUT_H */
