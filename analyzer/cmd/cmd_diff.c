// SPDX-License-Identifier: MIT
/*
 * cmd_diff.c - `gpushim diff [--format text|json] [--fail-on PCT]
 * [--metric step|span|busy|lost] [--noise PCT] [--wide] BASE NEW`: compares two runs; each
 * side is one trace or several traces of one job, comma-separated (BASE=rank0.trace,
 * rank1.trace). Exit 1 when --fail-on is given and NEW is worse than BASE by more than PCT on
 * the metric (step: and significantly so), 3 when the runs could not be compared (a trace
 * cannot be read; with --fail-on, the metric is missing on a side), 2 usage, else 0. The
 * metric is step time when both runs have steady steps, else span, unless --metric says.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "analysis/diff.h"
#include "output/diff_output.h"
#include "analysis/findings.h"
#include "model/model.h"
#include "analysis/stats.h"
#include "util/util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpushim diff [--format text|json] [--fail-on PCT]\n"
		"                    [--metric step|span|busy|lost] [--noise PCT] [--wide]\n"
		"                    BASE NEW\n"
		"\nCompares two runs by kernel names, entry points, causes and copy directions:\n"
		"span, the mean steady step and steps/s (with a 95%% confidence interval), GPU\n"
		"busy and SM fill, time lost per cause, counts, memory peak and each kernel's\n"
		"count and mean GPU time. BASE and NEW are each a trace, or several traces of one\n"
		"job separated by commas. Differences within run-to-run noise are labelled.\n"
		"\n  -f, --format text|json  output (default text; JSON schema gpushim.diff/1)\n"
		"      --fail-on PCT       exit 1 when NEW is worse than BASE by more than PCT\n"
		"      --metric M          step: the mean steady step grew by PCT %%, and its\n"
		"                          95%% CI lies above 0 (needs 2 steady steps a side);\n"
		"                          span: the GPU window grew by PCT %%; busy: GPU busy\n"
		"                          dropped by PCT points; lost: time lost grew by PCT\n"
		"                          points of the window (default: step when both runs\n"
		"                          have steady steps, else span)\n"
		"      --noise PCT         run-level noise band, %% of the base span (default 5)\n"
		"      --wide              kernel names whole (demangled as c++filt prints\n"
		"                          them), not their short forms\n"
		"  -h, --help              this text\n"
		"\nExit status: 0 no regression, 1 a regression (--fail-on), 2 usage, 3 the runs\n"
		"could not be compared (a trace unreadable, the --fail-on metric missing on a\n"
		"side, the output not written).\n");
}

/* Split a comma-separated list of paths (in place). */
static char **split_paths(char *arg, int *n)
{
	char **v = NULL, *p, *save = NULL;
	size_t cap = 0;

	*n = 0;
	for (p = strtok_r(arg, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		XGROW(v, cap, (size_t)*n + 1);
		v[(*n)++] = p;
	}
	return v;
}

static int load_side(struct run_summary *r, char **paths, int n)
{
	int i;

	run_summary_init(r);
	for (i = 0; i < n; i++) {
		struct run_feed feed;
		struct findings fd;
		struct model m;
		struct stats s;

		memset(&feed, 0, sizeof(feed));
		if (cmd_analyze(paths[i], &m, &s, &fd, &feed, 0) < 0) {
			run_feed_free(&feed);
			return -1;
		}
		run_summary_add(r, &s, &fd, &feed);
		findings_free(&fd);
		stats_free(&s);
		model_free(&m);
	}
	return 0;
}

/*
 * The gate's metric when --metric is not given (step time when both runs have steady steps,
 * else span) and why, into @g.
 */
static void gate_default(struct diff_gate *g, const struct run_summary *a,
			 const struct run_summary *b)
{
	if (run_has_steps(a) && run_has_steps(b)) {
		g->metric = DM_STEP;
		snprintf(g->why, sizeof(g->why), "both runs have steady steps");
		return;
	}
	g->metric = DM_SPAN;
	snprintf(g->why, sizeof(g->why), "steady steps: base %zu, new %zu; step time needs %d a side",
		 a->nr_steps, b->nr_steps, DIFF_STEPS_MIN);
}

static int parse_pct(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return *end || end == s || *v < 0 ? -1 : 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "fail-on", required_argument, NULL, 'F' },
		{ "metric", required_argument, NULL, 'm' },
		{ "noise", required_argument, NULL, 'n' },
		{ "wide", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run_summary rs_base, rs_new;
	struct diff_side base, new;
	struct diff_gate gate;
	struct diff_result d;
	double noise = 5.0;
	int c, is_json = 0, has_metric = 0, is_wide = 0, ret = 0;

	memset(&gate, 0, sizeof(gate));
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (cmd_parse_format("diff", optarg, "json", &is_json) < 0)
				return EXIT_USAGE;
			break;
		case 'F':
			if (parse_pct(optarg, &gate.fail_on) < 0) {
				fprintf(stderr, "gpushim: diff: --fail-on wants a percentage, not '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			gate.is_set = 1;
			break;
		case 'm':
			has_metric = 1;
			snprintf(gate.why, sizeof(gate.why), "--metric %s", optarg);
			if (!strcmp(optarg, "step"))
				gate.metric = DM_STEP;
			else if (!strcmp(optarg, "span"))
				gate.metric = DM_SPAN;
			else if (!strcmp(optarg, "busy"))
				gate.metric = DM_BUSY;
			else if (!strcmp(optarg, "lost"))
				gate.metric = DM_LOST;
			else {
				fprintf(stderr,
					"gpushim: diff: unknown metric '%s' (step, span, busy, lost)\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (parse_pct(optarg, &noise) < 0) {
				fprintf(stderr, "gpushim: diff: --noise wants a percentage, not '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'W':
			is_wide = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	memset(&base, 0, sizeof(base));
	memset(&new, 0, sizeof(new));
	base.paths = split_paths(argv[optind], &base.nr_paths);
	new.paths = split_paths(argv[optind + 1], &new.nr_paths);
	if (!base.nr_paths || !new.nr_paths) {
		usage(stderr);
		free(base.paths);
		free(new.paths);
		return EXIT_USAGE;
	}
	run_summary_init(&rs_new);	/* freed below when BASE cannot be read */
	if (load_side(&rs_base, base.paths, base.nr_paths) < 0 ||
	    load_side(&rs_new, new.paths, new.nr_paths) < 0) {
		run_summary_free(&rs_base);
		run_summary_free(&rs_new);
		free(base.paths);
		free(new.paths);
		return EXIT_DIFF_TROUBLE;
	}
	base.summary = &rs_base;
	new.summary = &rs_new;
	diff_compute(&d, &rs_base, &rs_new, noise);
	if (!has_metric)
		gate_default(&gate, &rs_base, &rs_new);
	if (diff_worse_by(&rs_base, &rs_new, gate.metric, &gate.worse_by) < 0)
		gate.is_unavailable = 1;
	else if (gate.metric == DM_STEP)
		gate.has_ci = diff_step_ci(&rs_base, &rs_new, &gate.ci_lo_pct, &gate.ci_hi_pct) == 0;
	/* Step time: a regression only when its interval lies above 0, not noise. */
	if (gate.is_set)
		gate.is_failed = gate.is_unavailable ||
				 (gate.worse_by > gate.fail_on && (!gate.has_ci || gate.ci_lo_pct > 0));
	if (is_json)
		diff_print_json(stdout, &base, &new, &d, &gate);
	else
		diff_print_text(stdout, &base, &new, &d, &gate, is_wide);
	ret = gate.is_unavailable && gate.is_set ? EXIT_DIFF_TROUBLE : gate.is_failed ? 1 : 0;
	diff_free(&d);
	run_summary_free(&rs_base);
	run_summary_free(&rs_new);
	free(base.paths);
	free(new.paths);
	return ret;
}
