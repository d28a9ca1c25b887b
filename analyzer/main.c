// SPDX-License-Identifier: MIT
/*
 * main.c - the `gpushim` command: global options, the command table, dispatch, exit codes.
 * Exit codes: 0 ok, 1 error (or a regression found by diff), 2 usage, 3 diff could not compare;
 * run: the program's. Standard output not written is an error of every command.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "gpushim/trace_format.h"

#include "cmd/cmds.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	int exit_error;			/* when its standard output could not be written */
	const char *help;
};

static const struct command commands[] = {
	{ "run", cmd_run, 1, "run a program under the shim: gpushim run [-o PATTERN] -- CMD..." },
	{ "report", cmd_report, 1, "explain where GPU time goes: counts, kernels, memory, causes" },
	{ "diff", cmd_diff, EXIT_DIFF_TROUBLE,
	  "compare two runs; exit 1 when NEW is worse than BASE (--fail-on)" },
	{ "whatif", cmd_whatif, 1,
	  "replay the run: what fixing each cause would save, and changes" },
	{ "export", cmd_export, 1, "timeline for Perfetto / chrome://tracing (Chrome trace JSON)" },
	{ "dump", cmd_dump, 1, "print every record as decoded (reference reader)" },
	{ "info", cmd_info, 1, "header, versions, counters, losses" },
	{ NULL, NULL, 0, NULL },
};

static void usage(FILE *f)
{
	const struct command *c;

	fprintf(f, "usage: gpushim [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (c = commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->help);
	fprintf(f, "\n'gpushim COMMAND --help' describes a command's options.\n");
}

/*
 * What a command printed reaches the file only when stdio's buffer is written: a full disk, a
 * quota or a closed pipe shows at the last flush, after the command returned. ferror keeps a
 * write that failed earlier (its errno gone by now, so the message may have no reason).
 */
static int close_stdout(void)
{
	int had_error = ferror(stdout);

	errno = 0;
	if (fclose(stdout) == 0 && !had_error)
		return 0;
	fprintf(stderr, "gpushim: write error on standard output%s%s\n", errno ? ": " : "",
		errno ? strerror(errno) : "");
	return -1;
}

/* The global options, or the command named (*@cmd); its exit code. */
static int dispatch(int argc, char **argv, const struct command **cmd)
{
	static char prefix[64];
	const struct command *c;

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
	/*
	 * Hidden, for the build: the command table as NAME<TAB>SUMMARY lines, from which
	 * doc/cli_docs.py makes the man pages and shell completion (with each command's --help).
	 */
	if (!strcmp(argv[1], "--help-commands")) {
		for (c = commands; c->name; c++)
			printf("%s\t%s\n", c->name, c->help);
		return 0;
	}
	for (c = commands; c->name; c++) {
		if (strcmp(argv[1], c->name))
			continue;
		*cmd = c;
		/* getopt_long starts its messages with argv[0]: "gpushim: report: unrecognized
		 * option", as the commands' own. */
		snprintf(prefix, sizeof(prefix), "gpushim: %s", c->name);
		argv[1] = prefix;
		return c->fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "gpushim: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct command *c = NULL;
	int ret;

	/*
	 * The model's arrays and the analysis' scratch tables are large and short-lived: a fixed
	 * threshold keeps each in its own mapping, handed back when freed, instead of glibc
	 * raising the threshold after the first such free and keeping later ones in the heap
	 * (resident until the process ends).
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	ret = dispatch(argc, argv, &c);
	if (close_stdout() < 0)
		return c ? c->exit_error : 1;
	return ret;
}
