// SPDX-License-Identifier: MIT
/*
 * cmd_report.c - `gpushim report`: loads each trace, computes its statistics and findings, and
 * prints them as text or JSON (schema gpushim.report/1, README "Report JSON").
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
#include "output/report_output.h"
#include "analysis/findings.h"
#include "analysis/stats.h"
#include "model/steps.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: gpushim report [--format text|json] [--no-header] [--by-range] [--wide]\n"
		   "                      [--top N | --all] [STEPS] TRACE...\n"
		   "\nExplains where the GPU time of a run went: the verdict and the causes ranked\n"
		   "by what fixing each alone saves (a replay of the run; by time lost where it\n"
		   "cannot be replayed), then kernels, API calls and memory.\n"
		   "Several traces (one per process or rank): a section each, then a combined\n"
		   "summary; JSON: {\"schema\", \"reports\": [...], \"combined\": {...}}.\n"
		   "\n  -f, --format text|json  output (default text; JSON: gpushim.report/1)\n"
		   "      --no-header         no '#' lines (trace, command, versions) on top\n"
		   "      --by-range          the NVTX range table after the causes: per range\n"
		   "                          name, count, host time, launches and their GPU\n"
		   "                          time, idle time inside by cause (JSON always has\n"
		   "                          \"ranges\")\n"
		   "      --wide              kernel names whole (demangled as c++filt prints\n"
		   "                          them), not their short forms (JSON: always whole,\n"
		   "                          and \"mangled\" as recorded)\n"
		   "      --top N             N rows in each text table: kernels, API calls,\n"
		   "                          allocations live at the peak (default 15, 15 and 8;\n"
		   "                          a last line counts the rows left out)\n"
		   "      --all               every row of each text table\n"
		   "  -h, --help              this text\n"
		   "\nThe verdict covers the steady state of the run's steps (an NVTX range that\n"
		   "repeats, else the launch stream's period); start-up and warm-up apart. STEPS:\n"
		   "      --step-range NAME   the NVTX range NAME is the step\n"
		   "      --steps A:B         steps A to B (from 1) are the steady state\n"
		   "      --window START:END  seconds from the run's start are the window\n"
		   "      --whole             the whole run, no steps\n");
}

/* One trace: load, compute, print. Adds to @all for the combined summary. */
static int report_one(const char *path, int is_json, int has_header, int by_range,
		      int is_wide, size_t top, int is_many, struct json *j, struct combined *all)
{
	struct findings fd;
	struct model m;
	struct stats s;

	if (cmd_analyze(path, &m, &s, &fd, NULL, 0) < 0)
		return -1;
	combined_add(all, &s, &fd);
	if (is_json) {
		json_object_begin(j, NULL);
		if (!is_many)
			json_str(j, "schema", "gpushim.report/1");
		report_json_members(j, &m, &s, &fd);
		json_object_end(j);
	} else {
		if (is_many) {
			printf("%s== process %u (", all->nr > 1 ? "\n" : "", m.pid);
			print_clean(stdout, path, 4096);
			printf(") ==\n");
		}
		report_print_text(stdout, &m, &s, &fd, has_header, is_wide, top);
		if (by_range)
			report_print_ranges(stdout, &s, 0);
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
	int c, i, is_json = 0, has_header = 1, by_range = 0, is_wide = 0, is_many, ret = 0;
	size_t top = REPORT_TOP_DEFAULT;
	struct steps_options so;
	char *end;
	struct combined all;
	struct json j;

	memset(&so, 0, sizeof(so));
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		if (cmd_parse_steps_option(c, optarg, &so) > 0)
			continue;
		switch (c) {
		case 'f':
			if (cmd_parse_format("report", optarg, "json", &is_json) < 0)
				return EXIT_USAGE;
			break;
		case 'H':
			has_header = 0;
			break;
		case 'R':
			by_range = 1;
			break;
		case 'W':
			is_wide = 1;
			break;
		case 'T':
			errno = 0;
			top = strtoul(optarg, &end, 10);
			if (!isdigit((unsigned char)optarg[0]) || *end || !top || errno) {
				fprintf(stderr, "gpushim: report: --top wants a number of rows "
						"(1 or more), not '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'A':
			top = SIZE_MAX;
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
	analyze_set_steps(&so);
	is_many = argc - optind > 1;
	memset(&all, 0, sizeof(all));
	json_init(&j, stdout, 1);
	if (is_json && is_many) {
		json_object_begin(&j, NULL);
		json_str(&j, "schema", "gpushim.report/1");
		json_array_begin(&j, "reports");
	}
	for (i = optind; i < argc; i++)
		if (report_one(argv[i], is_json, has_header, by_range, is_wide, top, is_many, &j,
			       &all) < 0)
			ret = 1;
	if (is_json && is_many) {
		json_array_end(&j);
		report_json_combined(&j, &all);
		json_object_end(&j);
	} else if (is_many) {
		report_print_combined_text(stdout, &all);
	}
	if (is_json)
		json_done(&j);
	return ret;
}
