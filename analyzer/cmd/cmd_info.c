// SPDX-License-Identifier: MIT
/*
 * cmd_info.c - `gpushim info`: what a trace is (header, versions, devices), whether it is
 * complete, how many records of each type it holds, what was lost, and the shim's notes
 * (CUPTI state changes, self-disabling). The trace is streamed through the analysis driver
 * with nothing analyzed: its first read gives all of that but the calls and operations, which
 * are counted as the second hands them on (memory bounded as a report's).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analysis/analyze.h"
#include "cmds.h"
#include "model/model.h"
#include "output/output.h"
#include "trace/trace_reader.h"

static const char *note_kind(uint32_t k)
{
	switch (k) {
	case TRACE_NOTE_DISABLED:
		return "disabled";
	case TRACE_NOTE_CUPTI_ON:
		return "cupti_on";
	case TRACE_NOTE_CUPTI_OFF:
		return "cupti_off";
	case TRACE_NOTE_WARNING:
		return "warning";
	case TRACE_NOTE_DOORS:
		return "doors";
	case TRACE_NOTE_SIGNAL:
		return "signal";
	case TRACE_NOTE_EXEC:
		return "exec";
	case TRACE_NOTE_PM_ON:
		return "pm_on";
	case TRACE_NOTE_PM_OFF:
		return "pm_off";
	case TRACE_NOTE_PM_SETUP:
		return "pm_setup";
	case TRACE_NOTE_CLOCK:
		return "clock";
	case TRACE_NOTE_MODE:
		return "mode";
	case TRACE_NOTE_STACKS:
		return "stacks";
	default:
		return "note";
	}
}

static void start_time(char *buf, size_t n, uint64_t real_ns)
{
	time_t t = (time_t)(real_ns / 1000000000u);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "?");
}

/* The calls and GPU operations, counted as the driver hands them on. */
struct info_counts {
	size_t nr_calls;
	size_t nr_gpu;
};

static void count_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	(void)m, (void)p;
	memset(ctx, 0, sizeof(struct info_counts));	/* again when loaded whole after all */
}

static void count_call(void *ctx, const struct m_call *c, uint32_t id)
{
	(void)c, (void)id;
	((struct info_counts *)ctx)->nr_calls++;
}

static void count_op(void *ctx, const struct m_gpu_op *g, const struct m_call *call, uint32_t id)
{
	(void)g, (void)call, (void)id;
	((struct info_counts *)ctx)->nr_gpu++;
}

static void count_sample(void *ctx, const struct m_pm_sample *s)
{
	(void)ctx, (void)s;
}

static void count_floor(void *ctx, uint64_t t)
{
	(void)ctx, (void)t;
}

static void info_text(const struct model *m, const struct info_counts *nr)
{
	char a[64], b[64];
	size_t i;

	printf("trace       ");
	print_clean(stdout, m->path, 4096);
	printf("\nformat      %u.%u (this gpushim reads %u.x)\n", m->version_major,
	       m->version_minor, TRACE_VERSION_MAJOR);
	printf("shim        ");
	print_clean(stdout, m->shim_version, 200);
	printf("\nprocess     pid %u, parent %u%s, host ", m->pid, m->ppid,
	       (m->file_flags & TRACE_FILE_FORKED) ? " (forked child)" : "");
	print_clean(stdout, m->host, 200);
	if (m->rank >= 0)
		printf(", rank %d", m->rank);
	printf("\ncommand     ");
	print_clean(stdout, m->cmdline, 4096);
	start_time(a, sizeof(a), m->start_real_ns);
	printf("\nstarted     %s\n", a);
	if (!m->is_complete) {
		printf("state       truncated (no END record: killed, or still running)\n");
	} else {
		const char *detail = model_end_detail(m);

		printf("state       complete, ended by %s", model_end_reason(m));
		if (detail) {
			printf(": ");
			print_clean(stdout, detail, 200);
		}
		printf("\n");
	}
	printf("records     %s in %llu chunks\n", fmt_count(a, sizeof(a), m->nr_records),
	       (unsigned long long)m->nr_chunks);
	printf("lost        %s records\n", fmt_count(a, sizeof(a), m->lost_records));
	printf("calls       %s intercepted, %zu threads\n", fmt_count(a, sizeof(a), nr->nr_calls),
	       m->nr_threads);
	printf("gpu         %s", m->has_cupti ? "CUPTI timestamps" : "host timestamps only");
	if (m->has_cupti)
		printf(" (CUPTI %u): %s operations, %s dropped, %s without timestamps",
		       m->cupti_version, fmt_count(a, sizeof(a), nr->nr_gpu),
		       fmt_count(b, sizeof(b), m->gpu_dropped),
		       fmt_count(a + 32, sizeof(a) - 32, m->gpu_zero_ts));
	printf("\n");
	for (i = 0; i < m->nr_devices; i++) {
		const struct trace_rec_device *d = &m->devices[i];

		printf("device %-4u ", d->ordinal);
		print_clean(stdout, model_string(m, d->name, "?"), 200);
		printf(", %u SMs, cc %u.%u, %s\n", d->sm_count, d->cc_major, d->cc_minor,
		       fmt_bytes(a, sizeof(a), d->total_bytes));
	}
	for (i = 0; i < m->nr_notes; i++) {
		const struct m_note *n = &m->notes[i];

		printf("note        +%s %s: ",
		       fmt_ns(a, sizeof(a), n->ts > m->start_mono_ns ? n->ts - m->start_mono_ns : 0),
		       note_kind(n->kind));
		print_clean(stdout, model_string(m, n->text, ""), 400);
		printf("\n");
	}
	if (m->nr_stacks || m->stacks_bad)
		printf("stacks      %zu defined, %zu calls with one, %llu records not taken (out of "
		       "order, their call not found)\n",
		       m->nr_stacks, m->nr_call_stacks, (unsigned long long)m->stacks_bad);
	printf("types      ");
	for (i = 1; i < 64; i++)
		if (m->nr_by_type[i])
			printf(" %s=%llu", trace_record_type_name((uint16_t)i),
			       (unsigned long long)m->nr_by_type[i]);
	if (m->nr_by_type[0])
		printf(" unknown=%llu", (unsigned long long)m->nr_by_type[0]);
	printf("\n");
}

static void info_json(const struct model *m, const struct info_counts *nr)
{
	struct json j;
	char v[32];
	size_t i;

	json_init(&j, stdout, 1);
	json_object_begin(&j, NULL);
	json_str(&j, "schema", "gpushim.info/1");
	json_str(&j, "path", m->path);
	snprintf(v, sizeof(v), "%u.%u", m->version_major, m->version_minor);
	json_str(&j, "format_version", v);
	json_str(&j, "shim_version", m->shim_version);
	json_u64(&j, "pid", m->pid);
	json_u64(&j, "ppid", m->ppid);
	json_bool(&j, "forked", (m->file_flags & TRACE_FILE_FORKED) != 0);
	json_str(&j, "host", m->host);
	json_i64(&j, "rank", m->rank);
	json_str(&j, "command", m->cmdline);
	json_u64(&j, "start_realtime_ns", m->start_real_ns);
	json_bool(&j, "complete", m->is_complete);
	json_str(&j, "end_reason", model_end_reason(m));
	json_str(&j, "end_detail", model_end_detail(m));
	json_u64(&j, "records", m->nr_records);
	json_u64(&j, "chunks", m->nr_chunks);
	json_u64(&j, "lost_records", m->lost_records);
	json_u64(&j, "calls", nr->nr_calls);
	json_u64(&j, "threads", m->nr_threads);
	json_str(&j, "gpu_source", m->has_cupti ? "cupti" : "host");
	json_u64(&j, "gpu_operations", nr->nr_gpu);
	json_u64(&j, "gpu_records_converted", m->gpu_records);
	json_u64(&j, "gpu_dropped", m->gpu_dropped);
	json_u64(&j, "gpu_zero_timestamps", m->gpu_zero_ts);
	json_object_begin(&j, "stacks");	/* call stacks (1.9) */
	json_u64(&j, "defined", m->nr_stacks);
	json_u64(&j, "calls", m->nr_call_stacks);
	json_u64(&j, "not_taken", m->stacks_bad);
	json_object_end(&j);
	json_array_begin(&j, "devices");
	for (i = 0; i < m->nr_devices; i++) {
		const struct trace_rec_device *d = &m->devices[i];

		json_object_begin(&j, NULL);
		json_u64(&j, "ordinal", d->ordinal);
		json_str(&j, "name", model_string(m, d->name, NULL));
		json_u64(&j, "sm_count", d->sm_count);
		snprintf(v, sizeof(v), "%u.%u", d->cc_major, d->cc_minor);
		json_str(&j, "compute_capability", v);
		json_u64(&j, "total_bytes", d->total_bytes);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_array_begin(&j, "notes");
	for (i = 0; i < m->nr_notes; i++) {
		json_object_begin(&j, NULL);
		json_u64(&j, "ts_ns", m->notes[i].ts);
		json_str(&j, "kind", note_kind(m->notes[i].kind));
		json_str(&j, "text", model_string(m, m->notes[i].text, ""));
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_begin(&j, "record_types");
	for (i = 1; i < 64; i++)
		if (m->nr_by_type[i])
			json_u64(&j, trace_record_type_name((uint16_t)i), m->nr_by_type[i]);
	if (m->nr_by_type[0])
		json_u64(&j, "unknown", m->nr_by_type[0]);
	json_object_end(&j);
	json_object_end(&j);
	json_done(&j);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gpushim info [--format text|json] TRACE\n"
		   "\nWhat TRACE is: header, versions, devices, whether it is complete, its\n"
		   "chunks, records by type, what was lost, and the shim's notes.\n"
		   "\n  -f, --format text|json  output (default text)\n"
		   "  -h, --help              this text\n");
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct info_counts n;
	const struct model_sink counter = { count_begin, count_call, count_op, count_sample,
					    count_floor, &n };
	const struct analyze_tap tap = { &counter, NULL };
	struct model m;
	int c, is_json = 0;

	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (cmd_parse_format("info", optarg, "json", &is_json) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (cmd_analyze_tap(argv[optind], &m, NULL, NULL, &tap, 0, 1) < 0)
		return 1;
	if (is_json)
		info_json(&m, &n);
	else
		info_text(&m, &n);
	model_free(&m);
	return 0;
}
