// SPDX-License-Identifier: MIT
/*
 * cmd_run.c - `gpushim run`: put libgpushim.so in LD_PRELOAD, set GPUSHIM_* from the options,
 * point NVTX_INJECTION64_PATH at the shim where it is unset, and exec the program. Records
 * nothing itself; the program's exit code becomes ours (127 or 126 when it cannot be run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmds.h"
#include "output/output.h"
#include "util/util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpushim run [-o PATTERN] [--mode MODE] [--no-cupti] [--shim PATH] -- CMD "
		"[ARGS...]\n"
		"\n"
		"Runs CMD with libgpushim.so preloaded. The trace goes to PATTERN\n"
		"(default gpushim-%%h-%%p.trace; %%h host, %%p pid, %%r rank). The exit status\n"
		"is CMD's; as in a shell, 127 when CMD is not found, 126 when it cannot be run.\n"
		"\n"
		"  -o, --output PATTERN  trace path pattern (sets GPUSHIM_OUTPUT)\n"
		"  -m, --mode MODE       full (GPU timestamps all along), sampled (in windows:\n"
		"                        GPUSHIM_WINDOW_MS every GPUSHIM_WINDOW_EVERY_MS, CUPTI\n"
		"                        detached between them) or host (no CUPTI); sets\n"
		"                        GPUSHIM_MODE (README \"Recording modes\")\n"
		"      --no-cupti        host timestamps only (sets GPUSHIM_CUPTI=0)\n"
		"      --shim PATH       the libgpushim.so to preload (default: next to gpushim)\n"
		"  -h, --help            this text\n"
		"\n"
		"The shim's other settings are GPUSHIM_* environment variables, passed through\n"
		"(GPUSHIM_PM=0: no hardware counters; GPUSHIM_SIGNALS=0: no fatal-signal handler;\n"
		"README.md lists them all). The program's NVTX ranges are recorded through\n"
		"NVTX_INJECTION64_PATH, set to the shim unless it is set already (another tool's,\n"
		"such as Nsight's, is left alone) or GPUSHIM_NVTX=0.\n");
}

/* The shim next to this binary: build tree (../shim) or install tree (../lib*). */
static int find_shim(char *out, size_t n)
{
	static const char *const rel[] = { "../shim/libgpushim.so", "../lib/libgpushim.so",
					   "../lib64/libgpushim.so",
					   "../lib/x86_64-linux-gnu/libgpushim.so" };
	char exe[PATH_MAX], cand[PATH_MAX * 2];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	size_t i;

	if (len <= 0)
		return -1;
	exe[len] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]);
		if (access(cand, R_OK) == 0 && realpath(cand, out) && strlen(out) < n)
			return 0;
	}
	return -1;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "no-cupti", no_argument, NULL, 'C' },
		{ "mode", required_argument, NULL, 'm' },
		{ "shim", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *shim = NULL, *mode = NULL, *old, *nvtx;
	char path[PATH_MAX];
	struct strbuf preload;
	int c, err, is_no_cupti = 0;

	while ((c = getopt_long(argc, argv, "+o:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "full") && strcmp(optarg, "sampled") &&
			    strcmp(optarg, "host")) {
				fprintf(stderr, "gpushim: run: --mode is full, sampled or host, not "
						"\"%s\"\n",
					optarg);
				return EXIT_USAGE;
			}
			mode = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'C':
			is_no_cupti = 1;
			break;
		case 'S':
			shim = optarg;
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
	if (output && !*output) {
		fprintf(stderr, "gpushim: run: -o needs a pattern (empty given)\n");
		return EXIT_USAGE;
	}
	if (shim) {
		if (!realpath(shim, path)) {
			fprintf(stderr, "gpushim: %s: %s\n", shim, strerror(errno));
			return 1;
		}
	} else if (find_shim(path, sizeof(path)) < 0) {
		fprintf(stderr, "gpushim: libgpushim.so not found next to this gpushim; use --shim\n");
		return 1;
	}

	if (strpbrk(path, " \t\n:")) {
		/* The dynamic loader splits LD_PRELOAD at spaces and colons, with no quoting. */
		fprintf(stderr,
			"gpushim: run: the shim's path \"%s\" holds a space or a colon, which "
			"LD_PRELOAD cannot carry; install or copy libgpushim.so to a path without them "
			"and pass it with --shim\n",
			path);
		return 1;
	}
	sb_init(&preload);
	sb_puts(&preload, path);
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		sb_puts(&preload, ":");
		sb_puts(&preload, old);
	}
	setenv("LD_PRELOAD", preload.buf, 1);
	nvtx = getenv("GPUSHIM_NVTX");
	old = getenv("NVTX_INJECTION64_PATH");
	/* What the shim's constructor does, done here too so the program's environment has it
	 * from its first instruction. Another tool's setting is left alone. */
	if ((!old || !*old) && !(nvtx && (!*nvtx || !strcmp(nvtx, "0") ||
					 !strcasecmp(nvtx, "no") || !strcasecmp(nvtx, "false"))))
		setenv("NVTX_INJECTION64_PATH", path, 1);
	if (output)
		setenv("GPUSHIM_OUTPUT", output, 1);
	if (is_no_cupti)
		setenv("GPUSHIM_CUPTI", "0", 1);
	if (mode)
		setenv("GPUSHIM_MODE", mode, 1);
	/* At its exit the shim says where the trace went (unless told otherwise). */
	setenv("GPUSHIM_SUMMARY", "1", 0);
	execvp(argv[optind], argv + optind);
	err = errno;
	fputs("gpushim: run: ", stderr);
	print_clean(stderr, argv[optind], 4096);
	fprintf(stderr, ": %s\n", strerror(err));
	sb_free(&preload);
	/* As a shell's: 127 when CMD is not found, 126 when it is found but cannot be run. */
	return err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}
