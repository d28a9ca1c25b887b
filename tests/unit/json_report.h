/* SPDX-License-Identifier: MIT */
/*
 * json_report.h - test-only: a trace's JSON report in a string, to compare two ways of making
 * it (test_stream, the fuzz target).
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

#endif /* GPUSHIM_JSON_REPORT_H */
