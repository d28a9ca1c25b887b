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

/* ---- Shared with the HTML report (report_html.c): the text report's names and wording ---- */

/*
 * The names a text report prints that can be kernels' (the steps' anchor, what the causes'
 * sites waited for or ran, the kernel table's rows), printed as one table's (name_table): a
 * kernel prints alike wherever it shows, and two kernels never alike. Tens of names (--all:
 * every kernel), looked up by their text.
 */
struct report_names {
	const char **names;
	char **forms;
	size_t n, cap;
};
void report_names_build(struct report_names *tn, const struct stats *s,
			const struct findings *fd, size_t width, size_t top);
/* @name as the report prints it (print it cleaned and whole); @name itself when not built. */
const char *report_name(const struct report_names *tn, const char *name);
void report_names_free(struct report_names *tn);

/*
 * Where in the program STACK @stack was captured (analysis/where.h) into @buf: "train.py:57 in
 * train_step" for a Python frame, "step_loop+0x1c in app" for a native one; "" when the stack
 * has no frame. @src (NULL: not asked) gets the source line as the file reads now, "" when it
 * cannot be read. Returns whether the frame is the program's own code.
 */
int report_where(const struct model *m, uint32_t stack, char *buf, size_t len, char *src,
		 size_t src_len);
/* A site's stacks as JSON members: "where", "python", "native" (and "from" with @from). */
void report_json_where(struct json *j, const struct model *m, uint32_t stack, uint32_t from);

/* The rows a table of @nr shows at @top (REPORT_TOP_DEFAULT: @dflt; SIZE_MAX: all). */
size_t report_table_rows(size_t nr, size_t top, size_t dflt);
/* A kernel's class from its counters as the tables print it ("(mixed)", "compute", ...): @buf. */
const char *report_kernel_bound(char *buf, size_t n, const struct s_kernel *k);
const char *report_api_family(uint8_t f);	/* "launch", "memory", ... (JSON api.family) */
const char *report_mem_kind(uint8_t k);		/* "device", "vmm", ... (JSON's kind) */
const char *report_device_name(const struct model *m, int dev);	/* "?" when unknown */

/*
 * report_left_out - what the analysis left out (the stretches without GPU timestamps), one
 * sentence into @buf, as the first screen's "covered" line and JSON verdict.excluded; NULL
 * when nothing was.
 */
const char *report_left_out(char *buf, size_t n, const struct stats *s,
			    const struct findings *fd);

/*
 * The text report's lines, each as it prints there (indented, one per line): the hardware
 * counters' line; a busy-time cause's evidence (memory_bandwidth, compute_bound,
 * latency_bound: the counters while busy, the unit named; no newline); the run's counts (after
 * an empty line); memory pressure; how the peak formed (@has_ascii: with its picture in
 * characters); steps and phases (loop.h).
 */
void report_print_counters(FILE *f, const struct findings *fd);
void report_print_busy_evidence(FILE *f, const struct findings *fd, int k);
void report_print_summary(FILE *f, const struct stats *s);
void report_print_pressure(FILE *f, const struct stats *s);
void report_print_formation(FILE *f, const struct stats *s, int has_ascii);
void report_print_loop(FILE *f, const struct model *m, const struct stats *s,
		       const struct report_names *tn);

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
/* Every process replayed: the causes rank by saving (else by time lost). */
int combined_by_saving(const struct combined *c);
/* @ns as a share of the processes' summed windows (0 when none). */
double combined_pct(const struct combined *c, uint64_t ns);
/* The causes measured, ranked, into @out (NR_CAUSES room); returns how many. */
int combined_ranked(const struct combined *c, int *out);
/* The combined verdict's cause, or -1: none worth naming. */
int combined_primary(const struct combined *c);
void report_print_combined_text(FILE *f, const struct combined *c);
void report_json_combined(struct json *j, const struct combined *c);

/*
 * The job (several ranks' traces, analysis/job.h): its collectives matched, each rank's
 * communication and waiting, the straggler and what made it late. Nothing for one trace.
 */
struct job;
void report_print_job_text(FILE *f, const struct job *j);
void report_json_job(struct json *js, const struct job *j);

#endif /* GPUSHIM_REPORT_OUTPUT_H */
