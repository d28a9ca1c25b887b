/* SPDX-License-Identifier: MIT */
/*
 * cmds.h - the subcommands of `gpushim`. Each cmd_X.c owns its options, usage text and --help,
 * wires the modules together and returns the exit code (0 ok, 1 error or regression, 2 usage).
 */
#ifndef GPUSHIM_CMDS_H
#define GPUSHIM_CMDS_H

#include <stdint.h>

#define EXIT_USAGE 2

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* Shared by the commands that read traces: open @path or print why not. 0 or -1. */
struct trace_reader;
struct model;
int cmd_load_model(struct model *m, const char *path, int is_quiet);

/*
 * "gpushim: " and @msg (a reader's error: it names the file), or the warning that @path ends
 * after @nr_chunks chunks with no END record, on stderr; cleaned (print_clean), as a file name
 * may hold anything.
 */
void cmd_error(const char *msg);
void cmd_warn_truncated(const char *path, uint64_t nr_chunks);

/*
 * --format of command @cmd: "text" clears *is_json, "json" or @json_name (e.g. "jsonl") sets
 * it. Anything else: prints why and returns -1 (the caller exits with EXIT_USAGE).
 */
int cmd_parse_format(const char *cmd, const char *arg, const char *json_name, int *is_json);

#endif /* GPUSHIM_CMDS_H */
