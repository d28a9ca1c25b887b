// SPDX-License-Identifier: MIT
/*
 * cmd_steps.c - the options that choose the steps and the window (model/steps.h), shared by
 * the commands that analyze: --step-range NAME, --steps A:B, --window START:END, --whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "model/steps.h"

/* "A:B" of two numbers (either may be empty: A then defaults to @lo_def, B to 0). */
static int parse_pair(const char *arg, double *a, double *b)
{
	const char *colon = strchr(arg, ':');
	char *end;

	if (!colon)
		return -1;
	*a = 0;
	*b = 0;
	if (colon > arg) {
		*a = strtod(arg, &end);
		if (end != colon || *a < 0)
			return -1;
	}
	if (colon[1]) {
		*b = strtod(colon + 1, &end);
		if (*end || *b < 0)
			return -1;
	}
	return 0;
}

int cmd_parse_steps_option(int c, const char *arg, struct steps_options *o)
{
	double a, b;

	switch (c) {
	case CMD_OPT_STEP_RANGE:
		o->range_name = arg;
		return 1;
	case CMD_OPT_STEPS:
		if (parse_pair(arg, &a, &b) < 0 || a != (double)(uint64_t)a ||
		    b != (double)(uint64_t)b || (b && a > b)) {
			o->has_steps = -1;	/* said by cmd_check_steps_options */
			return 1;
		}
		o->has_steps = 1;
		o->steps_from = (uint64_t)a;
		o->steps_to = (uint64_t)b;
		return 1;
	case CMD_OPT_WINDOW:
		if (parse_pair(arg, &a, &b) < 0 || (b && a >= b)) {
			o->has_window = -1;
			return 1;
		}
		o->has_window = 1;
		o->window_from_s = a;
		o->window_to_s = b;
		return 1;
	case CMD_OPT_WHOLE:
		o->whole = 1;
		return 1;
	default:
		return 0;
	}
}

int cmd_check_steps_options(const char *cmd, const struct steps_options *o)
{
	if (o->has_steps < 0) {
		fprintf(stderr, "gpushim: %s: --steps wants A:B, step numbers from 1 (A <= B)\n",
			cmd);
		return -1;
	}
	if (o->has_window < 0) {
		fprintf(stderr, "gpushim: %s: --window wants START:END in seconds (START < END)\n",
			cmd);
		return -1;
	}
	if (o->whole + (o->has_window > 0) + (o->range_name != NULL) > 1) {
		fprintf(stderr, "gpushim: %s: --whole, --window and --step-range exclude each "
				"other\n", cmd);
		return -1;
	}
	return 0;
}
