/* SPDX-License-Identifier: MIT */
/*
 * diff_output.h - printing a comparison of two runs as text or JSON (gpushim.diff/1).
 * Part of the output layer: formats, never computes.
 */
#ifndef GPUSHIM_DIFF_OUTPUT_H
#define GPUSHIM_DIFF_OUTPUT_H

#include <stdio.h>

#include "analysis/diff.h"

/* One side of the comparison: the traces it was built from and their summary. */
struct diff_side {
	char **paths;
	int nr_paths;
	const struct run_summary *summary;
};

/* The --fail-on gate and how it went. */
struct diff_gate {
	int is_set;			/* --fail-on given */
	int metric;			/* enum diff_metric: --metric's, else step when both runs
					   have steady steps, else span */
	char why[96];			/* why this metric, for people */
	double fail_on;			/* PCT */
	double worse_by;
	int has_ci;			/* step: worse_by's interval */
	double ci_lo_pct, ci_hi_pct;
	int is_unavailable;		/* the metric needs what a side lacks: GPU timestamps,
					   steady steps */
	int is_failed;
};

/* Kernels print demangled, in short forms distinct within the table; @is_wide: whole. JSON:
 * a kernel's "key" is its name as recorded (the runs are matched by it), "name" demangled. */
void diff_print_text(FILE *f, const struct diff_side *base, const struct diff_side *new,
		     const struct diff_result *d, const struct diff_gate *g, int is_wide);
void diff_print_json(FILE *f, const struct diff_side *base, const struct diff_side *new,
		     const struct diff_result *d, const struct diff_gate *g);

#endif /* GPUSHIM_DIFF_OUTPUT_H */
