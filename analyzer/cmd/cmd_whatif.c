// SPDX-License-Identifier: MIT
/*
 * cmd_whatif.c - `gpushim whatif [--format text|json] [CHANGES] [STEPS] TRACE`: replays the
 * recorded run (analysis/replay.h) as recorded (the replay error) and with each cause taken
 * away alone — what fixing it would save, the causes ranked by it — and, with CHANGES, with
 * those changes together. The trace is loaded whole.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analyze.h"
#include "analysis/findings.h"
#include "analysis/replay.h"
#include "analysis/stats.h"
#include "cmds.h"
#include "model/model.h"
#include "model/steps.h"
#include "output/output.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpushim whatif [--format text|json] [--no-sync] [--graph] [--cpu-speedup K]\n"
		"                      [--pinned] [--no-alloc] [--full-fill] [STEPS] TRACE\n"
		"\nReplays the recorded run as a graph of its calls and GPU operations: as recorded\n"
		"(the replay error), and with each cause taken away alone, which ranks the causes by\n"
		"what fixing them would save in the window (the steady state when steps are found).\n"
		"The changes, together (what the span would be):\n"
		"  --no-sync          synchronizations and blocking read-backs do not wait\n"
		"  --graph            kernel launches cost what a CUDA graph's replay does (%u ns)\n"
		"  --cpu-speedup K    CPU time between calls divided by K (K >= 1)\n"
		"  --pinned           pageable copies pinned and asynchronous\n"
		"  --no-alloc         allocations and frees cost nothing\n"
		"  --full-fill        kernels take their time x their SM fill\n"
		"STEPS: --step-range NAME, --steps A:B, --window START:END, --whole (see report)\n",
		REPLAY_GRAPH_LAUNCH_NS);
}

/* What each cause alone would save, most first. */
struct saving {
	int cause;
	uint64_t lost_ns;		/* the findings' time lost */
	uint64_t span_ns;		/* replayed without it */
	double pct;			/* of the replayed span as recorded */
};

static int cmp_saving(const void *a, const void *b)
{
	const struct saving *x = a, *y = b;

	if (x->pct != y->pct)
		return x->pct > y->pct ? -1 : 1;
	return x->cause - y->cause;
}

int cmd_whatif(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "no-sync", no_argument, NULL, 'S' },
		{ "graph", no_argument, NULL, 'G' },
		{ "cpu-speedup", required_argument, NULL, 'C' },
		{ "pinned", no_argument, NULL, 'P' },
		{ "no-alloc", no_argument, NULL, 'A' },
		{ "full-fill", no_argument, NULL, 'F' },
		{ "step-range", required_argument, NULL, CMD_OPT_STEP_RANGE },
		{ "steps", required_argument, NULL, CMD_OPT_STEPS },
		{ "window", required_argument, NULL, CMD_OPT_WINDOW },
		{ "whole", no_argument, NULL, CMD_OPT_WHOLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct replay_change chg = { .cpu_factor = 1.0 };
	struct saving sv[NR_CAUSES];
	struct steps_options so;
	struct findings fd;
	struct replay *r;
	struct model m;
	struct stats s;
	struct json j;
	const char *why = NULL;
	uint64_t lo, hi, rec, as_is, combined = 0;
	int c, k, n = 0, is_json = 0, has_change = 0;
	double err;
	char *end;

	memset(&so, 0, sizeof(so));
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		if (cmd_parse_steps_option(c, optarg, &so) > 0)
			continue;
		switch (c) {
		case 'f':
			if (cmd_parse_format("whatif", optarg, "json", &is_json) < 0)
				return EXIT_USAGE;
			break;
		case 'S':
			chg.no_sync = has_change = 1;
			break;
		case 'G':
			chg.has_launch_ns = has_change = 1;
			chg.launch_ns = REPLAY_GRAPH_LAUNCH_NS;
			break;
		case 'C':
			chg.cpu_factor = strtod(optarg, &end);
			if (*end || end == optarg || !(chg.cpu_factor >= 1.0) || isinf(chg.cpu_factor)) {
				fprintf(stderr, "gpushim: whatif: --cpu-speedup wants a factor >= 1, "
						"not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			chg.cpu_factor = 1.0 / chg.cpu_factor;
			has_change = 1;
			break;
		case 'P':
			chg.pinned = has_change = 1;
			break;
		case 'A':
			chg.no_alloc = has_change = 1;
			break;
		case 'F':
			chg.full_fill = has_change = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (cmd_check_steps_options("whatif", &so) < 0)
		return EXIT_USAGE;
	analyze_set_steps(&so);
	if (cmd_analyze_tap(argv[optind], &m, &s, &fd, NULL, 1, 0) < 0)
		return 1;
	/* The window: the steady state with steps, else the findings' */
	if (s.loop.found.source != STEPS_NONE) {
		lo = s.loop.phase[PHASE_STEADY].start;
		hi = s.loop.phase[PHASE_STEADY].end;
	} else {
		lo = fd.window_start;
		hi = fd.window_end;
	}
	r = replay_build(&m, lo, hi, &why);
	if (!r) {
		fputs("gpushim: whatif: ", stderr);
		print_clean(stderr, argv[optind], 4096);
		fprintf(stderr, ": cannot replay: %s\n", why);
		stats_free(&s);
		findings_free(&fd);
		model_free(&m);
		return 1;
	}
	rec = replay_recorded_span(r);
	as_is = replay_run(r, NULL);
	err = rec ? 100.0 * ((double)as_is - (double)rec) / (double)rec : 0;
	for (k = 0; k < NR_CAUSES; k++) {
		struct replay_change one;

		if (replay_change_of_cause(k, &one) < 0)
			continue;
		sv[n].cause = k;
		sv[n].lost_ns = fd.causes[k].status == CS_MEASURED ? fd.causes[k].time_ns : 0;
		sv[n].span_ns = replay_run(r, &one);
		sv[n].pct = as_is ? 100.0 * ((double)as_is - (double)sv[n].span_ns) / (double)as_is :
				    0;
		n++;
	}
	qsort(sv, (size_t)n, sizeof(*sv), cmp_saving);
	if (has_change)
		combined = replay_run(r, &chg);
	if (is_json) {
		json_init(&j, stdout, 1);
		json_object_begin(&j, NULL);
		json_str(&j, "schema", "gpushim.whatif/1");
		json_str(&j, "window", s.loop.found.source != STEPS_NONE ? "steady" : "findings");
		json_u64(&j, "recorded_span_ns", rec);
		json_u64(&j, "replayed_span_ns", as_is);
		json_double(&j, "replay_error_pct", err, 3);
		json_array_begin(&j, "causes");
		for (k = 0; k < n; k++) {
			json_object_begin(&j, NULL);
			json_str(&j, "cause", cause_name(sv[k].cause));
			json_u64(&j, "time_ns", sv[k].lost_ns);
			json_u64(&j, "span_ns", sv[k].span_ns);
			json_u64(&j, "saving_ns", as_is > sv[k].span_ns ? as_is - sv[k].span_ns : 0);
			json_double(&j, "saving_pct", sv[k].pct, 2);
			json_object_end(&j);
		}
		json_array_end(&j);
		if (has_change) {
			json_object_begin(&j, "changes");
			json_u64(&j, "span_ns", combined);
			json_double(&j, "saving_pct",
				    as_is ? 100.0 * ((double)as_is - (double)combined) / (double)as_is : 0,
				    2);
			json_object_end(&j);
		}
		json_object_end(&j);
		json_done(&j);
	} else {
		char a[32], b[32], d[32];

		printf("# gpushim whatif: ");
		print_clean(stdout, argv[optind], 4096);
		printf("\nwindow   %s %s, replayed as recorded %s (error %+.3f%%)\n",
		       s.loop.found.source != STEPS_NONE ? "the steady state," : "the GPU window,",
		       fmt_ns(a, sizeof(a), rec), fmt_ns(b, sizeof(b), as_is), err);
		printf("\nwhat fixing each cause alone would save (replay), most first\n");
		printf("  %-17s %12s %12s %9s   %s\n", "cause", "time lost", "saving", "saving",
		       "change replayed");
		for (k = 0; k < n; k++) {
			static const char *const how[NR_CAUSES] = {
				[CAUSE_HOST_SYNC] = "syncs and read-backs do not wait",
				[CAUSE_LAUNCH_OVERHEAD] = "launches at a CUDA graph's cost",
				[CAUSE_CPU_BOUND] = "CPU time between calls halved",
				[CAUSE_MEMCPY] = "pageable copies pinned, asynchronous",
				[CAUSE_ALLOCATION] = "allocations and frees free",
				[CAUSE_LOW_PARALLELISM] = "kernels at full SM fill",
			};

			printf("  %-17s %12s %12s %8.1f%%   %s\n", cause_name(sv[k].cause),
			       fmt_ns(a, sizeof(a), sv[k].lost_ns),
			       fmt_ns(d, sizeof(d), as_is > sv[k].span_ns ? as_is - sv[k].span_ns : 0),
			       sv[k].pct, how[sv[k].cause] ? how[sv[k].cause] : "");
		}
		printf("  (memory_bandwidth, compute_bound, memory_capacity: not replayed, they need a "
		       "kernel model)\n");
		if (has_change)
			printf("\nwith the changes asked together: %s, %+.1f%%\n",
			       fmt_ns(a, sizeof(a), combined),
			       as_is ? -100.0 * ((double)as_is - (double)combined) / (double)as_is : 0);
	}
	replay_free(r);
	stats_free(&s);
	findings_free(&fd);
	model_free(&m);
	return 0;
}
