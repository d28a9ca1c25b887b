// SPDX-License-Identifier: MIT
/*
 * cmd_common.c - what several commands share: loading or analyzing a trace with the
 * user-facing messages (error with offset; the one warning for a truncated trace), cleaned of
 * control characters.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/analyze.h"
#include "cmds.h"
#include "model/model.h"
#include "output/output.h"
#include "trace/trace_reader.h"

/* The one warning that @path ends after @nr_chunks chunks with no END record. */
static void warn_truncated(const char *path, uint64_t nr_chunks)
{
	fputs("gpushim: warning: ", stderr);
	print_clean(stderr, path, 4096);
	fprintf(stderr, " is truncated (no END record after %llu chunks): the report covers what "
			"was written\n",
		(unsigned long long)nr_chunks);
}

int cmd_load_model(struct model *m, const char *path, int is_quiet)
{
	struct trace_reader rd;
	int ret;

	if (trace_reader_open(&rd, path) < 0) {
		cmd_error(rd.err);
		return -1;
	}
	ret = model_load(m, &rd);
	if (ret < 0) {
		cmd_error(rd.err);
		trace_reader_close(&rd);
		model_free(m);
		return -1;
	}
	if (m->is_truncated && !is_quiet)
		warn_truncated(path, m->nr_chunks);
	trace_reader_close(&rd);
	return 0;
}

static int analyze(const char *path, struct model *m, struct stats *s, struct findings *f,
		   struct run_feed *feed, const struct analyze_tap *tap, int is_whole, int is_quiet)
{
	char err[sizeof(((struct trace_reader *)0)->err)];
	int ret = analyze_trace_tap(path, m, s, f, feed, tap, is_whole, err, sizeof(err));

	if (ret < 0) {
		cmd_error(err);
		return -1;
	}
	if (m->is_truncated && !is_quiet)
		warn_truncated(path, m->nr_chunks);
	return ret;
}

int cmd_analyze(const char *path, struct model *m, struct stats *s, struct findings *f,
		struct run_feed *feed, int is_quiet)
{
	return analyze(path, m, s, f, feed, NULL, 0, is_quiet) < 0 ? -1 : 0;
}

int cmd_analyze_tap(const char *path, struct model *m, struct stats *s, struct findings *f,
		    const struct analyze_tap *tap, int is_whole, int is_quiet)
{
	return analyze(path, m, s, f, NULL, tap, is_whole, is_quiet);
}

void cmd_error(const char *msg)
{
	fputs("gpushim: ", stderr);
	print_clean(stderr, msg, strlen(msg));
	fputc('\n', stderr);
}

int cmd_parse_format(const char *cmd, const char *arg, const char *json_name, int *is_json)
{
	if (!strcmp(arg, json_name) || !strcmp(arg, "json")) {
		*is_json = 1;
		return 0;
	}
	if (!strcmp(arg, "text")) {
		*is_json = 0;
		return 0;
	}
	fprintf(stderr, "gpushim: %s: unknown format '%s'\n", cmd, arg);
	return -1;
}
