/* SPDX-License-Identifier: MIT */
/*
 * report_figures.h - the HTML report's pictures (report_html.c's): inline SVG drawn from the
 * figures the analyses hold, each with its legend and caption, in one colour per cause
 * throughout. Strings from a trace go through html_escape. Lays out; computes nothing.
 */
#ifndef GPUSHIM_REPORT_FIGURES_H
#define GPUSHIM_REPORT_FIGURES_H

#include <stdio.h>

#include "analysis/findings.h"
#include "analysis/loop.h"
#include "analysis/stats.h"
#include "analysis/timeline.h"

/* The colour of a cause or gap part (a cause id or enum gap_part), in pictures and tables. */
const char *figure_colour(int part);

/*
 * figure_timeline - the run over time: phases (with a tick a step), the GPU's device time busy
 * and idle by cause, the live device memory; then, when the analysis window (the steady
 * state) is a small part of the run, the window alone, with the hardware counters. @sec: the
 * section's number, which keeps the page's ids apart.
 */
void figure_timeline(FILE *f, const struct stats *s, const struct findings *fd,
		     const struct timeline *tl, int sec);

/* One cause's bars: its share of the time lost and its saving (points), with intervals. */
struct figure_cause {
	int cause;
	double share, share_ci;		/* ci < 0: none */
	double saving, saving_ci;	/* saving < 0: not replayed */
};

/* figure_causes - a bar pair per cause, in the order given (@n of them; none: nothing). */
void figure_causes(FILE *f, const struct figure_cause *bars, int n);

/* figure_steps - each step's length in order, the steady steps' idle time by cause inside. */
void figure_steps(FILE *f, const struct loop *l);

#endif /* GPUSHIM_REPORT_FIGURES_H */
