// SPDX-License-Identifier: MIT
/*
 * read_trace.c - the analyzer's ceiling: reads every record of each trace through trace_reader
 * (decompression, validation, launch-run expansion) and does nothing with them. Prints records,
 * seconds and records per second, best of @runs. For scripts/bench.sh (BENCHMARKS.md).
 * Usage: read_trace [-n RUNS] TRACE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trace_reader.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds to read @path once, the record count in *@n; -1 when it cannot be read. */
static double read_once(const char *path, unsigned long long *n)
{
	struct trace_reader rd;
	struct trace_record r;
	double t0 = now_s();
	int ret;

	*n = 0;
	if (trace_reader_open(&rd, path) < 0) {
		fprintf(stderr, "read_trace: %s\n", rd.err);
		trace_reader_close(&rd);
		return -1;
	}
	while ((ret = trace_reader_next(&rd, &r)) > 0)
		(*n)++;
	if (ret < 0)
		fprintf(stderr, "read_trace: %s (counted up to there)\n", rd.err);
	trace_reader_close(&rd);
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	int i = 1, runs = 3, k, status = 0;

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		runs = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc || runs < 1) {
		fprintf(stderr, "usage: read_trace [-n RUNS] TRACE...\n");
		return 2;
	}
	for (; i < argc; i++) {
		unsigned long long n = 0;
		double best = -1;

		for (k = 0; k < runs; k++) {
			double s = read_once(argv[i], &n);

			if (s < 0) {
				status = 1;
				break;
			}
			if (best < 0 || s < best)
				best = s;
		}
		if (best > 0)
			printf("%s: %llu records read in %.1f ms (best of %d), %.2f M records/s\n",
			       argv[i], n, best * 1e3, runs, (double)n / best / 1e6);
	}
	return status;
}
