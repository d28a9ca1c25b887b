/* SPDX-License-Identifier: MIT */
/*
 * cmds.h - the subcommands of `gpushim`. Each cmd_X.c owns its options, usage text and --help,
 * wires the modules together and returns the exit code (0 ok, 1 error or regression, 2 usage;
 * diff: 3 when it could not compare).
 */
#ifndef GPUSHIM_CMDS_H
#define GPUSHIM_CMDS_H

#include <stdint.h>

#define EXIT_USAGE 2
/*
 * diff: the runs could not be compared (a trace unreadable, the gate's metric missing on a
 * side, the output not written). diff(1) says trouble with 2, distinct from a difference (1);
 * here 2 is usage, so trouble is 3, and 1 stays a regression only: a gate can tell them apart.
 */
#define EXIT_DIFF_TROUBLE 3
#define EXIT_CANNOT_RUN 126		/* run: CMD found but not executable, as a shell says */
#define EXIT_NOT_FOUND 127		/* run: CMD not found */

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_whatif(int argc, char **argv);

/*
 * Shared by the commands that read traces: load @path whole (cmd_load_model) or analyze it
 * (cmd_analyze: analyze_trace), or print why not; warn when it is truncated unless @is_quiet.
 * 0 or -1. cmd_analyze_tap - the same through analyze_trace_tap (its tap and @is_whole; no
 * diff sums): 1 streamed, 0 loaded whole, or -1.
 */
struct analyze_tap;
struct findings;
struct model;
struct run_feed;
struct stats;
int cmd_load_model(struct model *m, const char *path, int is_quiet);
int cmd_analyze(const char *path, struct model *m, struct stats *s, struct findings *f,
		struct run_feed *feed, int is_quiet);
int cmd_analyze_tap(const char *path, struct model *m, struct stats *s, struct findings *f,
		    const struct analyze_tap *tap, int is_whole, int is_quiet);

/*
 * "gpushim: " and @msg (a reader's error: it names the file) on stderr; cleaned (print_clean),
 * as a file name may hold anything.
 */
void cmd_error(const char *msg);

/*
 * --format of command @cmd: "text" clears *is_json, "json" or @json_name (e.g. "jsonl") sets
 * it. Anything else: prints why and returns -1 (the caller exits with EXIT_USAGE).
 */
int cmd_parse_format(const char *cmd, const char *arg, const char *json_name, int *is_json);

/*
 * The step options (cmd_steps.c): give getopt_long these values; cmd_parse_steps_option takes
 * option @c into @o (1) or leaves it (0); cmd_check_steps_options says what is wrong (-1).
 */
struct steps_options;
enum {
	CMD_OPT_STEP_RANGE = 0x100,
	CMD_OPT_STEPS,
	CMD_OPT_WINDOW,
	CMD_OPT_WHOLE,
};
int cmd_parse_steps_option(int c, const char *arg, struct steps_options *o);
int cmd_check_steps_options(const char *cmd, const struct steps_options *o);

#endif /* GPUSHIM_CMDS_H */
