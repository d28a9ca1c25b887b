// SPDX-License-Identifier: MIT
/*
 * cmd_report.c - `gpushim report`: loads each trace, computes its statistics and findings, and
 * prints them as text, JSON (schema gpushim.report/1, README "Report JSON") or one HTML page
 * (README "The HTML report"), to standard output or the file -o names.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyze.h"
#include "cmds.h"
#include "model/model.h"
#include "output/output.h"
#include "output/report_html.h"
#include "output/report_output.h"
#include "analysis/findings.h"
#include "analysis/job.h"
#include "analysis/stats.h"
#include "analysis/timeline.h"
#include "model/steps.h"
#include "util/util.h"

enum report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_HTML };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpushim report [--format text|json|html] [-o FILE] [--no-header]\n"
		"                      [--by-range] [--wide] [--top N | --all] [STEPS] TRACE...\n"
		"\nExplains where the GPU time of a run went: the verdict and the causes ranked\n"
		"by what fixing each alone saves (a replay of the run; by time lost where it\n"
		"cannot be replayed), then kernels, API calls and memory.\n"
		"Several traces (one per process or rank): a section each, then a combined\n"
		"summary; JSON: {\"schema\", \"reports\": [...], \"combined\": {...}}.\n"
		"\n  -f, --format text|json|html\n"
		"                          output (default text; JSON: gpushim.report/1; HTML:\n"
		"                          one self-contained page, its timeline, causes and\n"
		"                          steps drawn, its tables sortable, nothing fetched)\n"
		"  -o, --output FILE       write FILE instead of standard output\n"
		"      --no-header         no '#' lines (trace, command, versions) on top\n"
		"      --by-range          the NVTX range table after the causes: per range\n"
		"                          name, count, host time, launches and their GPU\n"
		"                          time, idle time inside by cause (JSON always has\n"
		"                          \"ranges\", HTML the table)\n"
		"      --wide              kernel names whole (demangled as c++filt prints\n"
		"                          them), not their short forms (JSON: always whole,\n"
		"                          and \"mangled\" as recorded; HTML: whole on hover)\n"
		"      --top N             N rows in each text table: kernels, API calls,\n"
		"                          allocations live at the peak (default 15, 15 and 8;\n"
		"                          HTML 100 each; a last line counts the rows left out)\n"
		"      --all               every row of each text or HTML table\n"
		"  -h, --help              this text\n"
		"\nThe verdict covers the steady state of the run's steps (an NVTX range that\n"
		"repeats, else the launch stream's period); start-up and warm-up apart. STEPS:\n"
		"      --step-range NAME   the NVTX range NAME is the step\n"
		"      --steps A:B         steps A to B (from 1) are the steady state\n"
		"      --window START:END  seconds from the run's start are the window\n"
		"      --whole             the whole run, no steps\n");
}

/* How the traces are printed: the options, and the writers of each format. */
struct report_out {
	FILE *f;
	int format;			/* enum report_format */
	int has_header, by_range, is_wide, is_many;
	size_t top;
	struct json j;
	struct report_html html;
	struct combined all;
	struct job job;			/* several traces: the ranks of one job */
};

/*
 * One trace: load, compute, print; added to the combined summary. The HTML page also draws
 * the run over time (timeline.h): its tap is fed beside the analyses, in the same pass.
 */
static int report_one(const char *path, struct report_out *o)
{
	struct analyze_tap tap;
	struct timeline *tl = NULL;
	struct findings fd;
	struct model m;
	struct stats s;
	int ret;

	if (o->format == FORMAT_HTML) {
		tl = xmalloc(sizeof(*tl));
		timeline_tap(tl, &tap);
		ret = cmd_analyze_tap(path, &m, &s, &fd, &tap, 0, 0);
	} else {
		ret = cmd_analyze(path, &m, &s, &fd, NULL, 0);
	}
	if (ret < 0) {
		if (tl)
			timeline_free(tl);
		free(tl);
		return -1;
	}
	combined_add(&o->all, &s, &fd);
	if (o->is_many)
		job_add(&o->job, path, &m, &s, &fd);
	if (o->format == FORMAT_JSON) {
		json_object_begin(&o->j, NULL);
		if (!o->is_many)
			json_str(&o->j, "schema", "gpushim.report/1");
		report_json_members(&o->j, &m, &s, &fd);
		json_object_end(&o->j);
	} else if (o->format == FORMAT_HTML) {
		report_html_process(&o->html, &m, &s, &fd, tl);
		timeline_free(tl);
		free(tl);
	} else {
		if (o->is_many) {
			fprintf(o->f, "%s== process %u (", o->all.nr > 1 ? "\n" : "", m.pid);
			print_clean(o->f, path, 4096);
			fprintf(o->f, ") ==\n");
		}
		report_print_text(o->f, &m, &s, &fd, o->has_header, o->is_wide, o->top);
		if (o->by_range)
			report_print_ranges(o->f, &s, 0);
	}
	stats_free(&s);
	findings_free(&fd);
	model_free(&m);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "by-range", no_argument, NULL, 'R' },
		{ "wide", no_argument, NULL, 'W' },
		{ "top", required_argument, NULL, 'T' },
		{ "all", no_argument, NULL, 'A' },
		{ "step-range", required_argument, NULL, CMD_OPT_STEP_RANGE },
		{ "steps", required_argument, NULL, CMD_OPT_STEPS },
		{ "window", required_argument, NULL, CMD_OPT_WINDOW },
		{ "whole", no_argument, NULL, CMD_OPT_WHOLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	struct steps_options so;
	struct report_out o;
	int c, i, ret = 0;
	char *end;

	memset(&so, 0, sizeof(so));
	memset(&o, 0, sizeof(o));
	job_init(&o.job);
	o.has_header = 1;
	o.top = REPORT_TOP_DEFAULT;
	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		if (cmd_parse_steps_option(c, optarg, &so) > 0)
			continue;
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "text")) {
				o.format = FORMAT_TEXT;
			} else if (!strcmp(optarg, "json")) {
				o.format = FORMAT_JSON;
			} else if (!strcmp(optarg, "html")) {
				o.format = FORMAT_HTML;
			} else {
				fprintf(stderr, "gpushim: report: unknown format '%s' (text, json, "
						"html)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'H':
			o.has_header = 0;
			break;
		case 'R':
			o.by_range = 1;
			break;
		case 'W':
			o.is_wide = 1;
			break;
		case 'T':
			errno = 0;
			o.top = strtoul(optarg, &end, 10);
			if (!isdigit((unsigned char)optarg[0]) || *end || !o.top || errno) {
				fprintf(stderr, "gpushim: report: --top wants a number of rows "
						"(1 or more), not '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'A':
			o.top = SIZE_MAX;
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
	if (cmd_check_steps_options("report", &so) < 0)
		return EXIT_USAGE;
	/* Before the analysis: an output that cannot be written is said at once. */
	o.f = stdout;
	if (out && !(o.f = fopen(out, "w"))) {
		fprintf(stderr, "gpushim: ");
		print_clean(stderr, out, 4096);
		fprintf(stderr, ": %s\n", strerror(errno));
		return 1;
	}
	analyze_set_steps(&so);
	o.is_many = argc - optind > 1;
	json_init(&o.j, o.f, 1);
	report_html_init(&o.html, o.f, o.is_many, o.has_header, o.is_wide, o.top);
	if (o.format == FORMAT_JSON && o.is_many) {
		json_object_begin(&o.j, NULL);
		json_str(&o.j, "schema", "gpushim.report/1");
		json_array_begin(&o.j, "reports");
	}
	for (i = optind; i < argc; i++)
		if (report_one(argv[i], &o) < 0)
			ret = 1;
	if (o.is_many)
		job_compute(&o.job);
	if (o.format == FORMAT_JSON && o.is_many) {
		json_array_end(&o.j);
		report_json_combined(&o.j, &o.all);
		report_json_job(&o.j, &o.job);
		json_object_end(&o.j);
	} else if (o.format == FORMAT_HTML && o.is_many) {
		report_html_combined(&o.html, &o.all);
		report_html_job(&o.html, &o.job);
	} else if (o.format == FORMAT_TEXT && o.is_many) {
		report_print_combined_text(o.f, &o.all);
		report_print_job_text(o.f, &o.job);
	}
	job_free(&o.job);
	if (o.format == FORMAT_JSON)
		json_done(&o.j);
	report_html_end(&o.html);
	/* Standard output's write errors are main's to report, as every command's. */
	if (out) {
		int is_bad = ferror(o.f) != 0;

		is_bad |= fclose(o.f) != 0;
		if (is_bad) {
			fputs("gpushim: report: write error on ", stderr);
			print_clean(stderr, out, 4096);
			fputc('\n', stderr);
			ret = 1;
		}
	}
	return ret;
}
