// SPDX-License-Identifier: MIT
/*
 * cmd_report.c - `gpushim report`: loads each trace, computes its statistics and findings, and
 * prints them as text or JSON (schema gpushim.report/1, README "Report JSON").
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "model.h"
#include "output.h"
#include "report_output.h"
#include "stats.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: gpushim report [--format text|json] [--no-header] TRACE...\n"
		   "\nExplains where the GPU time of a run went: counts, kernels, memory, GPU\n"
		   "busy and SM fill (with CUPTI timestamps), and the ranked causes.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, is_json = 0, has_header = 1;
	struct model m;
	struct stats s;
	struct json j;

	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "json"))
				is_json = 1;
			else if (strcmp(optarg, "text")) {
				fprintf(stderr, "gpushim: report: unknown format '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'H':
			has_header = 0;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (cmd_load_model(&m, argv[optind], 0) < 0)
		return 1;
	stats_compute(&s, &m);
	if (is_json) {
		json_init(&j, stdout, 1);
		json_object_begin(&j, NULL);
		json_str(&j, "schema", "gpushim.report/1");
		report_json_members(&j, &m, &s);
		json_array_begin(&j, "attribution");
		json_array_end(&j);
		json_object_begin(&j, "verdict");
		json_str(&j, "primary", "unknown");
		json_str(&j, "summary", "attribution is not computed by this version");
		json_object_end(&j);
		json_object_end(&j);
		json_done(&j);
	} else {
		report_print_text(stdout, &m, &s, has_header);
	}
	stats_free(&s);
	model_free(&m);
	return 0;
}
