/* SPDX-License-Identifier: MIT */
/*
 * report_html.h - the report as one self-contained HTML page (report --format html): the
 * verdict and the four signals, a timeline of the run drawn as inline SVG, the ranked causes,
 * the step-time series, sortable tables (a small script of its own), a section per process and
 * the combined view. Nothing is fetched: no URL, font or script from elsewhere. Part of the
 * output layer: it lays out what the model, the statistics, the findings and the timeline
 * hold (the same figures as the JSON report), and computes nothing of its own.
 */
#ifndef GPUSHIM_REPORT_HTML_H
#define GPUSHIM_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/findings.h"
#include "analysis/stats.h"
#include "analysis/timeline.h"
#include "model/model.h"
#include "report_output.h"

/* One process's line in the combined view's table. */
struct report_html_row {
	unsigned pid;
	char *path;			/* a copy */
	int primary;			/* cause id, -1 none */
	int has_gpu;
	double busy_pct;
	uint64_t window_ns;
};

struct report_html {
	FILE *f;
	int is_many;			/* several traces: a section each, then the combined view */
	int has_header;			/* the trace's provenance on top of each section */
	int is_wide;			/* kernel names whole */
	size_t top;			/* rows of each table (REPORT_TOP_DEFAULT, SIZE_MAX: all) */
	int is_begun;
	struct report_html_row *rows;
	size_t nr_rows, rows_cap;
};

/*
 * report_html_init - a page to @f; nothing is written until the first process is (a page of
 * traces that could not be read stays empty). Then report_html_process for each trace read,
 * report_html_combined for several, report_html_end. Context: the analyzer's thread; the
 * page is streamed, memory bounded by the tables' rows (@top).
 */
void report_html_init(struct report_html *h, FILE *f, int is_many, int has_header, int is_wide,
		      size_t top);
void report_html_process(struct report_html *h, const struct model *m, const struct stats *s,
			 const struct findings *fd, const struct timeline *tl);
void report_html_combined(struct report_html *h, const struct combined *c);
/* The job (several ranks: analysis/job.h), after the combined view; nothing for one rank. */
struct job;
void report_html_job(struct report_html *h, const struct job *j);
/* The page's end (when begun) and its script; frees @h's rows. */
void report_html_end(struct report_html *h);

#endif /* GPUSHIM_REPORT_HTML_H */
