/* SPDX-License-Identifier: MIT */
/*
 * report_output.h - printing one report (text for people, JSON gpushim.report/1 for programs)
 * from a model and its statistics. Part of the output layer: formats, never computes.
 */
#ifndef GPUSHIM_REPORT_OUTPUT_H
#define GPUSHIM_REPORT_OUTPUT_H

#include <stdio.h>

#include "model.h"
#include "stats.h"

void report_print_text(FILE *f, const struct model *m, const struct stats *s, int has_header);

/* One process's report as a JSON object (members only: the caller opens/closes it). */
struct json;
void report_json_members(struct json *j, const struct model *m, const struct stats *s);

#endif /* GPUSHIM_REPORT_OUTPUT_H */
