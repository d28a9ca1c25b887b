// SPDX-License-Identifier: MIT
/*
 * json_report.c - see json_report.h. Test-only.
 */
#define _GNU_SOURCE
#include "json_report.h"

#include <stdio.h>
#include <stdlib.h>

#include "analysis/analyze.h"
#include "output/output.h"
#include "output/report_output.h"

char *json_report(const struct model *m, const struct stats *s, const struct findings *f,
		  size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);
	struct json j;

	if (!out)
		abort();
	json_init(&j, out, 1);
	json_object_begin(&j, NULL);
	report_json_members(&j, m, s, f);
	json_object_end(&j);
	json_done(&j);
	fclose(out);
	if (len)
		*len = n;
	return buf;
}

long report_reads(const char *path)
{
	unsigned long before = model_nr_reads();
	struct findings f;
	struct model m;
	struct stats s;
	char err[512];

	if (analyze_trace(path, &m, &s, &f, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		return -1;
	}
	findings_free(&f);
	stats_free(&s);
	model_free(&m);
	return (long)(model_nr_reads() - before);
}
