// SPDX-License-Identifier: MIT
/*
 * main.c - the `gpushim` command: global options, the command table, dispatch, exit codes.
 * Exit codes: 0 ok, 1 error (or a regression found by diff), 2 usage.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "gpushim/trace_format.h"

#include "cmd/cmds.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "run", cmd_run, "run a program under the shim: gpushim run [-o PATTERN] -- CMD..." },
	{ "report", cmd_report, "explain where GPU time goes: counts, kernels, memory, causes" },
	{ "diff", cmd_diff, "compare two runs; exit 1 when NEW is worse than BASE (--fail-on)" },
	{ "whatif", cmd_whatif, "replay the run: what fixing each cause would save, and changes" },
	{ "export", cmd_export, "timeline for Perfetto / chrome://tracing (Chrome trace JSON)" },
	{ "dump", cmd_dump, "print every record as decoded (reference reader)" },
	{ "info", cmd_info, "header, versions, counters, losses" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	const struct command *c;

	fprintf(f, "usage: gpushim [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (c = commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->help);
	fprintf(f, "\n'gpushim COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	const struct command *c;

	/*
	 * The model's arrays and the analysis' scratch tables are large and short-lived: a fixed
	 * threshold keeps each in its own mapping, handed back when freed, instead of glibc
	 * raising the threshold after the first such free and keeping later ones in the heap
	 * (resident until the process ends).
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("gpushim %s (trace format %d.%d)\n", GPUSHIM_VERSION, TRACE_VERSION_MAJOR,
		       TRACE_VERSION_MINOR);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	fprintf(stderr, "gpushim: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
