// SPDX-License-Identifier: MIT
/*
 * cmd_export.c - `gpushim export [--format chrome] [-o FILE] TRACE...`: a timeline of one or
 * more processes for Perfetto (ui.perfetto.dev) or chrome://tracing. The traces share one
 * time axis: all of them are on CLOCK_MONOTONIC of their host, counted from the earliest
 * trace's start; traces of several hosts are put on the first one's clock by their ranks'
 * collectives (analysis/job.h). Each trace goes through the analysis driver once, as a report's does
 * (streamed: memory bounded by how late its records come), the exporter fed beside the
 * statistics and findings.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyze.h"
#include "cmds.h"
#include "output/export.h"
#include "analysis/findings.h"
#include "analysis/job.h"
#include "model/model.h"
#include "model/steps.h"
#include "output/output.h"
#include "analysis/stats.h"
#include "trace/trace_reader.h"
#include "util/util.h"
#include "config.h"

static const struct steps_options whole_run = { .whole = 1 };

static const struct export_ops *const formats[] = {
	&export_chrome_ops,
	&export_perfetto_ops,
	&export_csv_ops,
#ifdef GPUSHIM_HAVE_SQLITE
	&export_sqlite_ops,
#endif
	NULL,
};
#define FORMAT_NAMES "chrome, perfetto, csv, sqlite"

static void usage(FILE *f)
{
	fprintf(f, "usage: gpushim export [--format chrome|perfetto|csv|sqlite] [-o FILE|DIR] "
		   "TRACE...\n"
		   "\nWrites the run of one or more traces on one time axis, as a timeline to open in\n"
		   "ui.perfetto.dev (chrome also in chrome://tracing): per process, the CUDA calls of\n"
		   "each host thread, the kernels and the copies and memsets of each GPU stream on\n"
		   "tracks of their own, with arrows from the calls that caused them, live device\n"
		   "memory, the counters, and the GPU's idle gaps named by their cause; or as tables\n"
		   "(csv, sqlite) of kernels, copies and memsets, calls, gaps, steps, NVTX ranges and\n"
		   "kernel names, analysed as a report is.\n"
		   "\n  -f, --format FMT      the format; chrome (the default): trace-event JSON,\n"
		   "                        which Holistic Trace Analysis reads too; perfetto:\n"
		   "                        Perfetto's protobuf, several times smaller; csv: a\n"
		   "                        file a table (NAME.csv) in directory DIR; sqlite: one\n"
		   "                        database FILE%s\n"
		   "  -o, --output FILE     write FILE or DIR, not standard output (csv and sqlite\n"
		   "                        need it)\n"
		   "  -h, --help            this text\n",
#ifdef GPUSHIM_HAVE_SQLITE
		""
#else
		" (not in this build:\n                        it was built without libsqlite3)"
#endif
	);
}

/*
 * Traces of more than one host: each one's clock less the first trace's, from the collectives
 * the ranks ran (analysis/job.h: the median difference of their ends), so that the ranks line
 * up. NULL when the traces share a host (one monotonic clock) or no collective aligns them
 * (then they stay on their own clocks, and a warning says so). Reads each trace once more.
 */
static int64_t *host_offsets(char **paths, int n)
{
	struct trace_reader rd;
	int64_t *off = NULL;
	char *host = NULL;
	int i, is_many = 0;
	struct job j;

	for (i = 0; i < n && !is_many; i++) {
		if (trace_reader_open(&rd, paths[i]) < 0)
			continue;
		if (!host)
			host = xstrdup(rd.host ? rd.host : "");
		else if (strcmp(host, rd.host ? rd.host : ""))
			is_many = 1;
		trace_reader_close(&rd);
	}
	free(host);
	if (!is_many)
		return NULL;
	job_init(&j);
	for (i = 0; i < n; i++) {
		struct findings fd;
		struct model m;
		struct stats s;

		if (cmd_analyze(paths[i], &m, &s, &fd, NULL, 1) < 0)
			break;		/* said again when exported */
		job_add(&j, paths[i], &m, &s, &fd);
		findings_free(&fd);
		stats_free(&s);
		model_free(&m);
	}
	job_compute(&j);
	if ((int)j.nr_ranks == n && !j.why_not) {
		off = xcalloc((size_t)n, sizeof(*off));
		for (i = 0; i < n; i++)
			off[i] = j.ranks[i].offset_ns;
	} else {
		fprintf(stderr, "gpushim: export: traces of several hosts, not aligned (%s): each "
				"on its own host's clock\n",
			j.why_not ? j.why_not : "a trace could not be read");
	}
	job_free(&j);
	return off;
}

/* The earliest start among the traces' headers (cheap: no chunk is read). */
static uint64_t earliest_start(char **paths, int n)
{
	uint64_t t = UINT64_MAX;
	int i;

	for (i = 0; i < n; i++) {
		struct trace_reader rd;

		if (trace_reader_open(&rd, paths[i]) < 0)
			continue;	/* reported when the model is loaded */
		if (rd.hdr.start_mono_ns && rd.hdr.start_mono_ns < t)
			t = rd.hdr.start_mono_ns;
		trace_reader_close(&rd);
	}
	return t == UINT64_MAX ? 0 : t;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct export_ops *ops = &export_chrome_ops;
	const char *out = NULL;
	struct export_ctx x;
	int64_t *offsets;
	uint64_t base = 0;
	int c, i, k, ret = 0;

	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			for (k = 0; formats[k] && strcmp(optarg, formats[k]->name); k++)
				;
			if (!formats[k] && !strcmp(optarg, "sqlite")) {
				fputs("gpushim: export: this gpushim was built without SQLite "
				      "(libsqlite3-dev): use --format csv\n", stderr);
				return EXIT_USAGE;
			}
			if (!formats[k]) {
				fprintf(stderr, "gpushim: export: unknown format '%s' (%s)\n",
					optarg, FORMAT_NAMES);
				return EXIT_USAGE;
			}
			ops = formats[k];
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	memset(&x, 0, sizeof(x));
	x.f = stdout;
	x.path = out;
	if (ops->wants_path && !out) {
		fprintf(stderr, "gpushim: export: --format %s needs -o %s\n", ops->name,
			ops == &export_csv_ops ? "DIR" : "FILE");
		return EXIT_USAGE;
	}
	if (ops->wants_path) {
		x.f = NULL;
	} else if (out && !(x.f = fopen(out, "w"))) {
		fprintf(stderr, "gpushim: %s: %s\n", out, strerror(errno));
		return 1;
	}
	x.base_ns = earliest_start(argv + optind, argc - optind);
	/* A timeline shows the whole run: every idle gap named, not the steady state's only.
	 * Tables are a report's, so that their counts and causes are the report's. */
	if (!ops->wants_path)
		analyze_set_steps(&whole_run);
	c = ops->begin(&x);
	if (c < 0) {
		if (ops->wants_path)
			fprintf(stderr, "gpushim: export: %s: %s\n", out, strerror(-c));
		else
			fprintf(stderr, "gpushim: export: no temporary file (TMPDIR): %s\n",
				strerror(-c));
		if (ops->wants_path)
			ops->end(&x);	/* its files closed */
		if (out && x.f)
			fclose(x.f);
		return 1;
	}
	offsets = argc - optind > 1 ? host_offsets(argv + optind, argc - optind) : NULL;
	if (offsets) {
		/* on the first trace's clock: the earliest start there */
		int64_t earliest = INT64_MAX;

		for (i = optind; i < argc; i++) {
			struct trace_reader rd;
			int64_t t;

			if (trace_reader_open(&rd, argv[i]) < 0)
				continue;
			/* a start beyond 2^61 ns (no clock's) is not taken: no overflow */
			t = (int64_t)(rd.hdr.start_mono_ns & ((1ull << 61) - 1)) - offsets[i - optind];
			if (rd.hdr.start_mono_ns && rd.hdr.start_mono_ns < (1ull << 61) && t < earliest)
				earliest = t;
			trace_reader_close(&rd);
		}
		base = earliest > 0 && earliest < INT64_MAX ? (uint64_t)earliest : 0;
	}
	for (i = optind; i < argc; i++) {
		struct analyze_tap tap;
		struct findings fd;
		struct model m;
		struct stats s;
		int streamed;

		if (offsets)		/* its times on the first trace's clock */
			x.base_ns = (uint64_t)((int64_t)base + offsets[i - optind]);
		ops->process_tap(&x, &tap);
		streamed = cmd_analyze_tap(argv[i], &m, &s, &fd, &tap, 0, 0);
		if (streamed < 0) {
			ret = 1;
			continue;
		}
		ops->process(&x, &m, &s, &fd);
		findings_free(&fd);
		stats_free(&s);
		model_free(&m);
	}
	ops->end(&x);
	free(offsets);
	/* Standard output's write errors are main's to report, as every command's. */
	if (out && x.f) {
		x.has_error |= ferror(x.f) != 0;
		x.has_error |= fclose(x.f) != 0;
	}
	if (x.has_error) {
		fputs("gpushim: export: write error", stderr);
		if (out) {
			fputs(" on ", stderr);
			print_clean(stderr, out, 4096);
		}
		fputc('\n', stderr);
		ret = 1;
	}
	return ret;
}
