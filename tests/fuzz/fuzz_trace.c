// SPDX-License-Identifier: MIT
/*
 * fuzz_trace.c - libFuzzer target for everything that reads a trace: the reader (header,
 * chunks, zstd frames, records), the model and its joins, statistics, attribution with gaps,
 * the text and JSON reports, the Chrome export, and a diff of the input against itself; the
 * streamed analysis (analyze_stream), whose JSON report must equal the whole model's; and the
 * HTML report with its timeline, fed through the analysis driver's tap; and every STACK
 * record's frames, read as gpushim dump reads them.
 * Output goes to /dev/null; what matters is that nothing crashes, hangs or trips a sanitizer.
 * An input starting with byte 0x01 is raw record bytes: the harness wraps them in a valid
 * header and zstd chunk, so mutations reach the record decoder instead of dying in zstd
 * (seeds raw_*.bin); any other input is a whole trace file.
 * Built with -Dfuzz=true (clang); tests/fuzz/run.sh runs it for a bounded time in CI.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis/analyze.h"
#include "analysis/diff.h"
#include "output/export.h"
#include "analysis/findings.h"
#include "analysis/replay.h"
#include "json_report.h"
#include "model/model.h"
#include "output/output.h"
#include "output/report_html.h"
#include "output/report_output.h"
#include "analysis/stats.h"
#include "analysis/timeline.h"
#include "trace_builder.h"
#include "trace/trace_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

/* Streamed where it can be, the report is the whole model's (@whole, @len). */
static void check_stream(const char *path, const char *whole, size_t len)
{
	struct model_load_opts whole_opts;
	struct trace_reader rd;
	struct findings fd;
	struct model m;
	struct stats s;
	size_t n;
	char *json;

	if (trace_reader_open(&rd, path) < 0)
		abort();	/* it opened for the whole model */
	if (analyze_stream(&rd, &m, &s, &fd, NULL, &whole_opts) == 1) {
		json = json_report(&m, &s, &fd, &n);
		if (n != len || memcmp(json, whole, n)) {
			fprintf(stderr, "streamed report differs:\n%s\nwhole:\n%s\n", json, whole);
			abort();
		}
		free(json);
		findings_free(&fd);
		stats_free(&s);
		model_free(&m);
	}
	trace_reader_close(&rd);
}

/* The HTML report, its timeline fed beside the analyses as report --format html feeds it. */
static void check_html(const char *path)
{
	struct report_html h;
	struct analyze_tap tap;
	struct timeline *tl = malloc(sizeof(*tl));
	struct findings fd;
	struct model m;
	struct stats s;
	char err[256];

	if (!tl)
		return;
	timeline_tap(tl, &tap);
	if (analyze_trace_tap(path, &m, &s, &fd, NULL, &tap, 0, err, sizeof(err)) >= 0) {
		report_html_init(&h, devnull, 0, 1, 0, SIZE_MAX);
		report_html_process(&h, &m, &s, &fd, tl);
		report_html_end(&h);
		findings_free(&fd);
		stats_free(&s);
		model_free(&m);
	}
	timeline_free(tl);
	free(tl);
}

/* Every STACK's frames, as gpushim dump reads them: the reader checked that they fit. */
static void touch_stacks(const char *path)
{
	struct trace_reader rd;
	struct trace_record r;
	volatile uint64_t sum = 0;
	uint16_t i;

	if (trace_reader_open(&rd, path) < 0)
		return;
	while (trace_reader_next(&rd, &r) > 0) {
		const struct trace_rec_stack *st = r.rec;

		if (r.type != TRACE_REC_STACK)
			continue;
		for (i = 0; i < st->nr_native; i++)
			sum += trace_stack_pcs(st)[i];
		for (i = 0; i < st->nr_python; i++)
			sum += (uint64_t)trace_stack_py(st)[i].line + trace_stack_py(st)[i].file;
	}
	trace_reader_close(&rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_reader rd;
	struct run_summary rs;
	struct diff_result d;
	struct export_ctx x;
	struct findings fd;
	struct model m;
	struct stats s;
	struct json j;
	char path[64], *whole;
	size_t len;
	int fd_mem;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	fd_mem = memfd_create("trace", 0);
	if (fd_mem < 0)
		return 0;
	if (size && data[0] == 0x01) {
		struct tb t;
		ssize_t n;

		tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
		tb_rec(&t, data + 1, size - 1);
		tb_flush(&t);
		n = write(fd_mem, t.file, t.len);
		tb_free(&t);
		if (n < 0) {
			close(fd_mem);
			return 0;
		}
	} else if (size && write(fd_mem, data, size) != (ssize_t)size) {
		close(fd_mem);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd_mem);
	touch_stacks(path);
	if (trace_reader_open(&rd, path) == 0) {
		if (model_load(&m, &rd) == 0) {
			struct replay *rp;
			const char *why;

			/* one pass: the steps' and ranges' idle pieces too */
			analyze_model(&m, &s, &fd, NULL, 1);
			report_print_text(devnull, &m, &s, &fd, 1, 0, SIZE_MAX);
			report_print_ranges(devnull, &s, 0);
			rp = replay_build(&m, fd.window_start, fd.window_end, &why);
			if (rp) {
				struct replay_change c;
				int k;

				replay_run(rp, NULL);
				for (k = 0; k < NR_CAUSES; k++)
					if (replay_change_of_cause(k, &c) == 0)
						replay_run(rp, &c);
				replay_free(rp);
			}
			json_init(&j, devnull, 1);
			json_object_begin(&j, NULL);
			report_json_members(&j, &m, &s, &fd);
			json_object_end(&j);
			json_done(&j);
			memset(&x, 0, sizeof(x));
			x.f = devnull;
			export_chrome_ops.begin(&x);
			export_chrome_ops.process(&x, &m, &s, &fd);
			export_chrome_ops.end(&x);
			run_summary_init(&rs);
			run_summary_add_model(&rs, &m, &s, &fd);
			diff_compute(&d, &rs, &rs, 5.0);
			diff_free(&d);
			run_summary_free(&rs);
			whole = json_report(&m, &s, &fd, &len);
			findings_free(&fd);
			stats_free(&s);
			check_stream(path, whole, len);
			free(whole);
			check_html(path);
		}
		model_free(&m);
		trace_reader_close(&rd);
	}
	close(fd_mem);
	return 0;
}
