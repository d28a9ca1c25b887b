// SPDX-License-Identifier: MIT
/*
 * cmd_whatif.c - `gpushim whatif [--format text|json] [CHANGES] [STEPS] [--export FILE] TRACE`:
 * replays the recorded run (analysis/replay.h) as recorded (the replay error) and with each
 * cause taken away alone — what fixing it would save, the causes ranked by it — and each
 * host_sync site alone (where in the code); with CHANGES, with those changes together, and
 * --export writes the window recorded and replayed with them (output/export_whatif.h). The
 * trace is loaded whole.
 */
#include <errno.h>
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
#include "output/export_whatif.h"
#include "output/output.h"
#include "util/demangle.h"
#include "util/util.h"

#define MAX_SITES_SHOWN 5
/* Sites replayed one by one for the ranking, those whose calls waited longest first: a
 * replay is one pass over the graph; the most sites a fixture has is 56 (jax_steps, --whole). */
#define MAX_SITES_REPLAYED 32

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpushim whatif [--format text|json] [--no-sync[=SITE]] [--graph]\n"
		"                      [--cpu-speedup K] [--pinned] [--no-alloc] [--full-fill]\n"
		"                      [STEPS] [--export FILE] TRACE\n"
		"\nReplays the recorded run as a graph of its calls and GPU operations: as recorded\n"
		"(the replay error), and with each cause taken away alone, which ranks the causes by\n"
		"what fixing them would save in the window (the steady state when steps are\n"
		"found); then each host_sync site alone (the %d that save the most).\n"
		"The changes, together (what the span would be):\n"
		"  --no-sync          synchronizations and blocking read-backs do not wait\n"
		"  --no-sync=SITE     ... only those of SITE, as the report names host_sync\n"
		"                     sites: 'ENTRY' (every site of that entry point) or\n"
		"                     'ENTRY after NAME', NAME what the sync waited for, as\n"
		"                     recorded or as printed (a C++ kernel demangled, whole or\n"
		"                     short): whole, its end (a kernel's name without its\n"
		"                     start), or its start and '...'; again: the sites together\n"
		"  --graph            kernel launches cost what a CUDA graph's replay does (%u ns)\n"
		"  --cpu-speedup K    CPU time between calls divided by K (K >= 1; inf: none)\n"
		"  --pinned           pageable copies pinned and asynchronous\n"
		"  --no-alloc         allocations and frees cost nothing\n"
		"  --full-fill        kernels take their time x their SM fill\n"
		"Output:\n"
		"  -f, --format FMT   text (default) or json\n"
		"  --export FILE      the window as recorded and as replayed with the changes\n"
		"                     (none: as recorded) as Chrome trace-event JSON\n"
		"                     (Perfetto), both from 0 us\n"
		"  -h, --help         this text\n"
		"STEPS, the window (as report's; 'gpushim report --help'):\n"
		"  --step-range NAME  the NVTX range NAME is the step\n"
		"  --steps A:B        steps A to B (from 1) are the steady state\n"
		"  --window START:END seconds from the run's start are the window\n"
		"  --whole            the whole run, no steps\n",
		MAX_SITES_SHOWN, REPLAY_GRAPH_LAUNCH_NS);
}

/* What each cause alone would save, most first. */
struct saving {
	int cause;
	uint64_t lost_ns;		/* the findings' time lost */
	uint64_t span_ns;		/* replayed without it */
	double pct;			/* of the replayed span as recorded */
	double bound_pct;		/* launches or CPU time at zero: the most it can save; NAN */
};

static int cmp_saving(const void *a, const void *b)
{
	const struct saving *x = a, *y = b;

	if (x->pct != y->pct)
		return x->pct > y->pct ? -1 : 1;
	return x->cause - y->cause;
}

/* A host_sync site with calls in the window, and what not blocking at it alone saves. */
struct site_saving {
	size_t site;
	const struct replay_site *s;
	uint64_t span_ns;		/* replayed without its waits */
	double pct;
};

/* Recorded wait, most first; then the order the sites came in. */
static int cmp_site_waited(const void *a, const void *b)
{
	const struct site_saving *x = a, *y = b;

	if (x->s->waited_ns != y->s->waited_ns)
		return x->s->waited_ns > y->s->waited_ns ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

static int cmp_site_saving(const void *a, const void *b)
{
	const struct site_saving *x = a, *y = b;

	if (x->span_ns != y->span_ns)
		return x->span_ns < y->span_ns ? -1 : 1;
	return cmp_site_waited(a, b);
}

/* The sites with calls in the window, by recorded wait (*@n of them; free() it). */
static struct site_saving *sites_by_wait(const struct replay *r, size_t *n)
{
	struct site_saving *v = xcalloc(replay_nr_sites(r) + 1, sizeof(*v));
	size_t i;

	*n = 0;
	for (i = 0; i < replay_nr_sites(r); i++)
		if (replay_site(r, i)->nr_calls)
			v[(*n)++] = (struct site_saving){ i, replay_site(r, i), 0, 0 };
	xqsort(v, *n, sizeof(*v), cmp_site_waited);
	return v;
}

/*
 * How a list of @n sites (@v) names what each waited for: one table's forms (output.h,
 * name_table), so a kernel prints demangled and short, and two never alike. Free with
 * demangle_names_free.
 */
static char **site_names(const struct replay_site *const *v, size_t n)
{
	const char **names = xmalloc((n + 1) * sizeof(*names));
	char **forms;
	size_t i;

	for (i = 0; i < n; i++)
		names[i] = v[i]->after;
	forms = name_table(names, n, NAME_WIDTH);
	free(names);
	return forms;
}

/* "ENTRY after NAME" of @s, NAME as @after prints it, cleaned, to @f. */
static void print_site(FILE *f, const struct replay_site *s, const char *after)
{
	print_clean(f, s->entry, 200);
	fputs(" after ", f);
	print_clean(f, after, SIZE_MAX);
}

/* "ENTRY after NAME", NAME demangled whole: what --no-sync takes back. */
static void json_site_name(struct json *j, const char *key, const struct replay_site *s)
{
	struct strbuf sb;
	char *after = name_readable(s->after, 0);

	sb_init(&sb);
	sb_printf(&sb, "%s after %s", s->entry, after);
	json_strn(j, key, sb.buf, sb.len);
	sb_free(&sb);
	free(after);
}

/* The first @n sites of @v, named as one table (site_names). */
static char **ranked_site_names(const struct site_saving *v, size_t n)
{
	const struct replay_site *list[MAX_SITES_SHOWN];
	size_t i;

	for (i = 0; i < n && i < MAX_SITES_SHOWN; i++)
		list[i] = v[i].s;
	return site_names(list, i);
}

/*
 * The sites @specs (@nr of them) name, into @mask (replay_nr_sites bytes). Return: 0, or
 * -1 when one names none (said, with the sites known).
 */
static int match_sites(const struct replay *r, char **specs, int nr, uint8_t *mask)
{
	struct site_saving *v;
	size_t n, i;
	int k;

	for (k = 0; k < nr; k++)
		if (!replay_sites_match(r, specs[k], mask))
			break;
	if (k == nr)
		return 0;
	fputs("gpushim: whatif: --no-sync=", stderr);
	print_clean(stderr, specs[k], 200);
	fputs(": no such host_sync site", stderr);
	v = sites_by_wait(r, &n);
	if (!n) {
		fputs("; no synchronization in the window waited for the GPU\n", stderr);
	} else {
		size_t shown = n < MAX_SITES_SHOWN ? n : MAX_SITES_SHOWN;
		char **names = ranked_site_names(v, shown);

		fprintf(stderr, "; the sites (ENTRY after NAME), longest wait first:\n");
		for (i = 0; i < shown; i++) {
			fputs("  ", stderr);
			print_site(stderr, v[i].s, names[i]);
			fputc('\n', stderr);
		}
		demangle_names_free(names, shown);
		if (n > MAX_SITES_SHOWN)
			fprintf(stderr, "  (%zu more)\n", n - MAX_SITES_SHOWN);
	}
	free(v);
	return -1;
}

/* The changes asked, as given: the replayed timeline's name. */
static void changes_label(struct strbuf *sb, const struct replay_change *c, int all_sites,
			  char **specs, int nr_specs, const char *speedup)
{
	int k;

	if (all_sites)
		sb_puts(sb, " --no-sync");
	for (k = 0; k < nr_specs && !all_sites; k++)
		sb_printf(sb, " --no-sync=%s", specs[k]);
	if (c->has_launch_ns)
		sb_puts(sb, " --graph");
	if (speedup)
		sb_printf(sb, " --cpu-speedup %s", speedup);
	if (c->pinned)
		sb_puts(sb, " --pinned");
	if (c->no_alloc)
		sb_puts(sb, " --no-alloc");
	if (c->full_fill)
		sb_puts(sb, " --full-fill");
	if (!sb->len)
		sb_puts(sb, " as recorded");
}

int cmd_whatif(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "no-sync", optional_argument, NULL, 'S' },
		{ "graph", no_argument, NULL, 'G' },
		{ "cpu-speedup", required_argument, NULL, 'C' },
		{ "pinned", no_argument, NULL, 'P' },
		{ "no-alloc", no_argument, NULL, 'A' },
		{ "full-fill", no_argument, NULL, 'F' },
		{ "export", required_argument, NULL, 'E' },
		{ "step-range", required_argument, NULL, CMD_OPT_STEP_RANGE },
		{ "steps", required_argument, NULL, CMD_OPT_STEPS },
		{ "window", required_argument, NULL, CMD_OPT_WINDOW },
		{ "whole", no_argument, NULL, CMD_OPT_WHOLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct replay_change chg = { .cpu_factor = 1.0 }, one;
	struct saving sv[NR_CAUSES];
	struct site_saving *ss = NULL;
	struct steps_options so;
	struct findings fd;
	struct replay *r = NULL;
	struct model m;
	struct stats s;
	struct json j;
	const char *why = NULL, *export_path = NULL, *speedup = NULL;
	char **specs = NULL;
	uint8_t *mask = NULL, *site_mask = NULL;
	uint64_t lo, hi, rec, as_is, combined = 0, steps = 0;
	size_t nr_ss = 0, nr_replayed = 0, i;
	int c, k, n = 0, is_json = 0, has_change = 0, nr_specs = 0, all_sites = 0, ret = 0;
	double err;
	char *end;

	memset(&so, 0, sizeof(so));
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		if (cmd_parse_steps_option(c, optarg, &so) > 0)
			continue;
		switch (c) {
		case 'f':
			if (cmd_parse_format("whatif", optarg, "json", &is_json) < 0)
				goto usage_said;
			break;
		case 'S':
			chg.no_sync = has_change = 1;
			if (!optarg) {
				all_sites = 1;
				break;
			}
			specs = xrealloc(specs, (size_t)(nr_specs + 1) * sizeof(*specs));
			specs[nr_specs++] = optarg;
			break;
		case 'G':
			chg.has_launch_ns = has_change = 1;
			chg.launch_ns = REPLAY_GRAPH_LAUNCH_NS;
			break;
		case 'C':
			chg.cpu_factor = strtod(optarg, &end);
			if (*end || end == optarg || !(chg.cpu_factor >= 1.0)) {
				fprintf(stderr, "gpushim: whatif: --cpu-speedup wants a factor >= 1 "
						"(inf: no CPU time at all), not '%s'\n", optarg);
				goto usage_said;
			}
			chg.cpu_factor = isinf(chg.cpu_factor) ? 0 : 1.0 / chg.cpu_factor;
			speedup = optarg;
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
		case 'E':
			export_path = optarg;
			break;
		case 'h':
			usage(stdout);
			free(specs);
			return 0;
		default:
			goto usage;
		}
	}
	if (argc - optind != 1)
		goto usage;
	if (cmd_check_steps_options("whatif", &so) < 0)
		goto usage_said;
	analyze_set_steps(&so);
	if (cmd_analyze_tap(argv[optind], &m, &s, &fd, NULL, 1, 0) < 0) {
		free(specs);
		return 1;
	}
	if (fd.sampling.is_sampled) {
		/* Between windows the launches have no GPU work to replay: one replay across
		 * them would take that for the run. The report replays each window alone. */
		fputs("gpushim: whatif: ", stderr);
		print_clean(stderr, argv[optind], 4096);
		fprintf(stderr,
			": recorded in sampled mode (GPU timestamps in %llu windows, %.1f%% of the "
			"window): whatif replays a whole run and needs a full recording "
			"(GPUSHIM_MODE=full); `gpushim report` replays each window on its own and "
			"gives each cause's saving\n",
			(unsigned long long)fd.sampling.nr_windows, fd.sampling.covered_pct);
		ret = 1;
		goto out;
	}
	/* The window: the steady state with steps, else the findings' */
	if (s.loop.found.source != STEPS_NONE) {
		lo = s.loop.phase[PHASE_STEADY].start;
		hi = s.loop.phase[PHASE_STEADY].end;
	} else {
		lo = fd.window_start;
		hi = fd.window_end;
	}
	steps = s.loop.found.source != STEPS_NONE ? s.loop.steady : 0;
	r = replay_build(&m, lo, hi, &why);
	if (!r) {
		fputs("gpushim: whatif: ", stderr);
		print_clean(stderr, argv[optind], 4096);
		fprintf(stderr, ": cannot replay: %s\n", why);
		ret = 1;
		goto out;
	}
	if (nr_specs && !all_sites) {
		mask = xcalloc(replay_nr_sites(r) + 1, 1);
		if (match_sites(r, specs, nr_specs, mask) < 0) {
			ret = EXIT_USAGE;
			goto out;
		}
		chg.sync_sites = mask;
	}
	replay_set_stats(r, &s);
	rec = replay_recorded_span(r);
	as_is = replay_run(r, NULL);
	err = rec ? 100.0 * ((double)as_is - (double)rec) / (double)rec : 0;
	for (k = 0; k < NR_CAUSES; k++) {
		if (replay_change_of_cause(k, &one) < 0)
			continue;
		sv[n].cause = k;
		sv[n].lost_ns = fd.causes[k].status == CS_MEASURED ? fd.causes[k].time_ns : 0;
		sv[n].span_ns = replay_run(r, &one);
		sv[n].pct = as_is ? 100.0 * ((double)as_is - (double)sv[n].span_ns) / (double)as_is :
				    0;
		sv[n].bound_pct = NAN;
		/* The bounds the changes have: launches free, no CPU time at all. */
		if (k == CAUSE_LAUNCH_OVERHEAD || k == CAUSE_CPU_BOUND) {
			uint64_t b;

			one.launch_ns = 0;
			one.cpu_factor = k == CAUSE_CPU_BOUND ? 0 : 1.0;
			b = replay_run(r, &one);
			sv[n].bound_pct = as_is ? 100.0 * ((double)as_is - (double)b) / (double)as_is :
						  0;
		}
		n++;
	}
	qsort(sv, (size_t)n, sizeof(*sv), cmp_saving);
	/* Each host_sync site alone: where in the code the host_sync saving lies */
	ss = sites_by_wait(r, &nr_ss);
	nr_replayed = nr_ss < MAX_SITES_REPLAYED ? nr_ss : MAX_SITES_REPLAYED;
	site_mask = xcalloc(replay_nr_sites(r) + 1, 1);
	replay_change_of_cause(CAUSE_HOST_SYNC, &one);
	one.sync_sites = site_mask;
	for (i = 0; i < nr_replayed; i++) {
		struct site_saving *x = &ss[i];

		site_mask[x->site] = 1;
		x->span_ns = replay_run(r, &one);
		site_mask[x->site] = 0;
		x->pct = as_is ? 100.0 * ((double)as_is - (double)x->span_ns) / (double)as_is : 0;
	}
	xqsort(ss, nr_replayed, sizeof(*ss), cmp_site_saving);
	if (has_change)
		combined = replay_run(r, &chg);
	if (export_path) {
		struct strbuf label;
		FILE *f;
		int bad;

		errno = 0;
		f = fopen(export_path, "w");
		bad = !f;
		if (f) {
			sb_init(&label);
			changes_label(&label, &chg, all_sites, specs, nr_specs, speedup);
			replay_run(r, has_change ? &chg : NULL);
			bad = export_whatif_chrome(f, &m, r, label.buf + 1) < 0;
			bad |= fclose(f) != 0;
			sb_free(&label);
		}
		if (bad) {
			fputs("gpushim: whatif: ", stderr);
			print_clean(stderr, export_path, 4096);
			fprintf(stderr, ": %s\n", errno ? strerror(errno) : "cannot write");
			ret = 1;
			goto out;
		}
	}
	if (is_json) {
		json_init(&j, stdout, 1);
		json_object_begin(&j, NULL);
		json_str(&j, "schema", "gpushim.whatif/1");
		json_str(&j, "window", s.loop.found.source != STEPS_NONE ? "steady" : "findings");
		json_u64(&j, "recorded_span_ns", rec);
		json_u64(&j, "replayed_span_ns", as_is);
		json_double(&j, "replay_error_pct", err, 3);
		/* With steps: the mean steady step, recorded (the replay's) */
		json_u64(&j, "steps", steps);
		json_u64(&j, "step_ns", steps ? rec / steps : 0);
		json_array_begin(&j, "causes");
		for (k = 0; k < n; k++) {
			json_object_begin(&j, NULL);
			json_str(&j, "cause", cause_name(sv[k].cause));
			json_u64(&j, "time_ns", sv[k].lost_ns);
			json_u64(&j, "span_ns", sv[k].span_ns);
			json_u64(&j, "saving_ns", as_is > sv[k].span_ns ? as_is - sv[k].span_ns : 0);
			json_double(&j, "saving_pct", sv[k].pct, 2);
			json_double(&j, "bound_saving_pct", sv[k].bound_pct, 2);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_begin(&j, "host_sync_sites");
		json_u64(&j, "count", nr_ss);
		json_u64(&j, "replayed", nr_replayed);
		json_array_begin(&j, "sites");
		for (i = 0; i < nr_replayed && i < MAX_SITES_SHOWN; i++) {
			const struct site_saving *x = &ss[i];

			json_object_begin(&j, NULL);
			json_site_name(&j, "site", x->s);
			json_str(&j, "entry", x->s->entry);
			json_name(&j, "after", "after_mangled", x->s->after);
			json_u64(&j, "calls", x->s->nr_calls);
			json_u64(&j, "waited_ns", x->s->waited_ns);
			json_u64(&j, "saving_ns", as_is > x->span_ns ? as_is - x->span_ns : 0);
			json_double(&j, "saving_pct", x->pct, 2);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
		if (has_change) {
			json_object_begin(&j, "changes");
			json_u64(&j, "span_ns", combined);
			json_u64(&j, "step_ns", steps ? combined / steps : 0);
			json_double(&j, "saving_pct",
				    as_is ? 100.0 * ((double)as_is - (double)combined) / (double)as_is : 0,
				    2);
			if (mask) {
				json_array_begin(&j, "no_sync_sites");
				for (i = 0; i < replay_nr_sites(r); i++)
					if (mask[i])
						json_site_name(&j, NULL, replay_site(r, i));
				json_array_end(&j);
			}
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
				[CAUSE_MEMCPY] = "pageable copies pinned, uploads async",
				[CAUSE_ALLOCATION] = "allocations and frees free",
				[CAUSE_LOW_PARALLELISM] = "kernels at full SM fill",
			};

			printf("  %-17s %12s %12s %8.1f%%   %s", cause_name(sv[k].cause),
			       fmt_ns(a, sizeof(a), sv[k].lost_ns),
			       fmt_ns(d, sizeof(d), as_is > sv[k].span_ns ? as_is - sv[k].span_ns : 0),
			       sv[k].pct, how[sv[k].cause] ? how[sv[k].cause] : "");
			if (!isnan(sv[k].bound_pct))
				printf(" (%s: %.1f%%)",
				       sv[k].cause == CAUSE_CPU_BOUND ? "none at all" : "at no cost",
				       sv[k].bound_pct);
			printf("\n");
		}
		printf("  (memory_bandwidth, compute_bound, latency_bound, memory_capacity: not "
		       "replayed, they need a kernel model)\n");
		if (!nr_ss) {
			printf("\nhost_sync sites: none (no synchronization in the window waited "
			       "for the GPU)\n");
		} else {
			printf("\nwhere host_sync's saving lies: each site alone does not wait "
			       "(replay), most first\n");
			size_t shown = nr_replayed < MAX_SITES_SHOWN ? nr_replayed : MAX_SITES_SHOWN;
			char **names = ranked_site_names(ss, shown);

			printf("  %9s %12s %12s %9s   %s\n", "calls", "waited", "saving", "saving",
			       "site");
			for (i = 0; i < shown; i++) {
				printf("  %9s %12s %12s %8.1f%%   ",
				       fmt_count(a, sizeof(a), ss[i].s->nr_calls),
				       fmt_ns(b, sizeof(b), ss[i].s->waited_ns),
				       fmt_ns(d, sizeof(d),
					      as_is > ss[i].span_ns ? as_is - ss[i].span_ns : 0),
				       ss[i].pct);
				print_site(stdout, ss[i].s, names[i]);
				putchar('\n');
			}
			demangle_names_free(names, shown);
			if (nr_ss > MAX_SITES_SHOWN && nr_replayed < nr_ss)
				printf("  (%zu more sites; the %zu that waited least not "
				       "replayed)\n",
				       nr_ss - MAX_SITES_SHOWN, nr_ss - nr_replayed);
			else if (nr_ss > MAX_SITES_SHOWN)
				printf("  (%zu more sites)\n", nr_ss - MAX_SITES_SHOWN);
		}
		if (has_change) {
			printf("\nwith the changes asked together: %s, %+.1f%%",
			       fmt_ns(a, sizeof(a), combined),
			       as_is ? -100.0 * ((double)as_is - (double)combined) / (double)as_is : 0);
			if (steps)
				printf("; a step %s (recorded %s)", fmt_ns(a, sizeof(a), combined / steps),
				       fmt_ns(b, sizeof(b), rec / steps));
			printf("\n");
			if (mask) {
				const struct replay_site **asked =
					xmalloc((replay_nr_sites(r) + 1) * sizeof(*asked));
				size_t nr_asked = 0;
				char **names;

				for (i = 0; i < replay_nr_sites(r); i++)
					if (mask[i])
						asked[nr_asked++] = replay_site(r, i);
				names = site_names(asked, nr_asked);
				printf("  syncs that do not wait: those of");
				for (i = 0; i < nr_asked; i++) {
					fputs(i ? "; " : " ", stdout);
					print_site(stdout, asked[i], names[i]);
				}
				putchar('\n');
				demangle_names_free(names, nr_asked);
				free(asked);
			}
		}
		if (export_path) {
			printf("\ntimeline: ");
			print_clean(stdout, export_path, 4096);
			printf(" (the window recorded and replayed, for Perfetto)\n");
		}
	}
out:
	if (r)
		replay_free(r);
	free(ss);
	free(mask);
	free(site_mask);
	free(specs);
	stats_free(&s);
	findings_free(&fd);
	model_free(&m);
	return ret;
usage:
	usage(stderr);
usage_said:
	free(specs);
	return EXIT_USAGE;
}
