/* SPDX-License-Identifier: MIT */
/*
 * json_report.h - test-only: a trace's JSON report in a string, to compare two ways of making
 * it (test_stream, the fuzz target); how many times a report reads its trace (test_model,
 * test_stream).
 */
#ifndef GPUSHIM_JSON_REPORT_H
#define GPUSHIM_JSON_REPORT_H

#include <stddef.h>

#include "analysis/findings.h"
#include "model/model.h"
#include "analysis/stats.h"

/* The report's JSON object for @m, @s, @f, as `gpushim report --format json` prints it (free
 * it); its length in *@len (NULL: not wanted). */
char *json_report(const struct model *m, const struct stats *s, const struct findings *f,
		  size_t *len);

/*
 * How many times a report of @path reads it (analyze_trace, as `gpushim report` does); -1, with
 * the reader's message on stderr, when the report fails.
 */
long report_reads(const char *path);

#endif /* GPUSHIM_JSON_REPORT_H */
