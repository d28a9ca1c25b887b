// SPDX-License-Identifier: MIT
/*
 * config.c - every GPUSHIM_* environment variable the shim reads, with its default and meaning,
 * in one table (README.md lists the same table). Parsed once, in the constructor; nothing else
 * in the shim calls getenv for its own settings.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum opt_type { OPT_STR, OPT_BOOL, OPT_UINT, OPT_INT, OPT_LEVEL, OPT_MODE };

struct option_def {
	const char *name;
	enum opt_type type;
	size_t offset;			/* into struct shim_config */
	const char *def;
	long min, max;			/* OPT_UINT / OPT_INT */
	const char *doc;
};

#define OFF(field) offsetof(struct shim_config, field)

/* clang-format off */
static const struct option_def options[] = {
	{ "GPUSHIM_OUTPUT", OPT_STR, OFF(output), "gpushim-%h-%p.trace", 0, 0,
	  "trace path; %h host, %p pid, %r rank, %% a percent sign" },
	{ "GPUSHIM_DISABLE", OPT_BOOL, OFF(is_disabled), "0", 0, 1,
	  "1: pure pass-through, nothing is recorded or substituted" },
	{ "GPUSHIM_SUMMARY", OPT_BOOL, OFF(summary), "0", 0, 1,
	  "1: at a normal exit, one line on the log saying where the trace went (gpushim run "
	  "sets it)" },
	{ "GPUSHIM_BUFFER_KB", OPT_UINT, OFF(buffer_kb), "2048", 64, 1 << 20,
	  "per-thread ring buffer (rounded up to a power of two); a full ring drops and counts" },
	{ "GPUSHIM_FLUSH_MS", OPT_UINT, OFF(flush_ms), "250", 10, 60000,
	  "longest time between two chunks written to the trace" },
	{ "GPUSHIM_ZSTD_LEVEL", OPT_INT, OFF(zstd_level), "1", -7, 19,
	  "zstd compression level of the chunks" },
	{ "GPUSHIM_MODE", OPT_MODE, OFF(mode), "full", 0, 2,
	  "full: GPU timestamps all along; sampled: in windows (GPUSHIM_WINDOW_*), hooks and "
	  "counters all along; host: no CUPTI (no GPU timestamps, no counters)" },
	{ "GPUSHIM_WINDOW_MS", OPT_UINT, OFF(window_ms), "200", 10, 3600000,
	  "sampled mode: how long each window with GPU timestamps lasts" },
	{ "GPUSHIM_WINDOW_EVERY_MS", OPT_UINT, OFF(window_every_ms), "4000", 20, 86400000,
	  "sampled mode: a window opens this often (from CUPTI's start; at least twice the window)" },
	{ "GPUSHIM_CUPTI_DETACH", OPT_BOOL, OFF(cupti_detach), "0", 0, 1,
	  "sampled mode: 1 detaches CUPTI between windows (cuptiFinalize): launches at about "
	  "plain's cost, no counters, kernels joined to launches by order - but it crashed "
	  "launch-bound PyTorch programs on the H200 (7 of 15 runs); 0 keeps it attached "
	  "(counters, API records)" },
	{ "GPUSHIM_LOG", OPT_STR, OFF(log_path), NULL, 0, 0,
	  "file for the shim's messages (appended); default stderr" },
	{ "GPUSHIM_LOG_LEVEL", OPT_LEVEL, OFF(log_level), "warn", 0, 3,
	  "error, warn, info or debug" },
	{ "GPUSHIM_CUPTI", OPT_STR, OFF(cupti), NULL, 0, 0,
	  "0: no GPU timestamps; a path: that libcupti; unset: search (already loaded first)" },
	{ "GPUSHIM_CUPTI_BUFFER_KB", OPT_UINT, OFF(cupti_buffer_kb), "4096", 256, 65536,
	  "size of each CUPTI activity buffer" },
	{ "GPUSHIM_SIGNALS", OPT_BOOL, OFF(signals), "1", 0, 1,
	  "1: a fatal signal the program leaves at its default finishes the trace first" },
	{ "GPUSHIM_PM", OPT_BOOL, OFF(pm), "1", 0, 1,
	  "1: sample hardware counters (CUPTI PM sampling) where the GPU and permissions allow" },
	{ "GPUSHIM_PM_INTERVAL_US", OPT_UINT, OFF(pm_interval_us), "1000", 100, 1000000,
	  "hardware counter sampling interval" },
	{ "GPUSHIM_PM_DECODE_MS", OPT_UINT, OFF(pm_decode_ms), "100", 20, 10000,
	  "hardware counters: decode the samples this often (each decode costs CPU)" },
	{ "GPUSHIM_PM_BUFFER_MB", OPT_UINT, OFF(pm_buffer_mb), "64", 2, 512,
	  "hardware counters: the GPU-side buffer the samples wait in until decoded" },
	{ "GPUSHIM_PM_PIPES", OPT_BOOL, OFF(pm_pipes), "1", 0, 1,
	  "1: also sample the memory levels and the SM's pipes (which pipe is busy: more decoding CPU)" },
	{ "GPUSHIM_TSC", OPT_BOOL, OFF(tsc), "1", 0, 1,
	  "1: timestamps from the CPU's TSC, fitted to CLOCK_MONOTONIC, where the kernel's clock is the TSC" },
	{ "GPUSHIM_NVTX", OPT_BOOL, OFF(nvtx), "1", 0, 1,
	  "1: record the program's NVTX ranges and marks (NVTX_INJECTION64_PATH set to the shim where unset)" },
	{ "GPUSHIM_STACKS", OPT_BOOL, OFF(stacks), "1", 0, 1,
	  "1: capture call stacks (native, and Python's where the thread holds the GIL) at syncs, "
	  "blocking copies, allocations, module loads, first and sampled launches" },
	{ "GPUSHIM_STACK_SAMPLE", OPT_UINT, OFF(stack_sample), "1000", 0, 1000000000,
	  "capture the stack of one launch (or stream-ordered allocation) in N per thread; 0: "
	  "first launches of each kernel only" },
	{ "GPUSHIM_STACK_DEPTH", OPT_UINT, OFF(stack_depth), "24", 1, TRACE_STACK_MAX_FRAMES,
	  "frames kept of a stack, native and Python each (innermost first)" },
	{ "GPUSHIM_STACK_READY_MS", OPT_UINT, OFF(stack_ready_ms), "50", 0, 60000,
	  "how long the first CUDA call waits for the call stacks' thread to be ready (the unwinder "
	  "loaded, Python looked up); captures before it are counted as not ready" },
	{ "GPUSHIM_STACK_UNLOCKED", OPT_BOOL, OFF(stack_unlocked), "1", 0, 1,
	  "1: a thread that released the GIL (PyTorch's operators do) gets its Python frames read "
	  "from the interpreter's own structures (CPython 3.11 - 3.13); 0: native frames only" },
};
/* clang-format on */

static const char *level_names[] = { "error", "warn", "info", "debug" };
const char *const shim_mode_names[] = { "full", "sampled", "host" };

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

/*
 * Problems found while parsing, at most one an option; reported after the table is done so
 * logging is configured.
 */
static char problems[NR_OPTIONS][48];
static int nr_problems;

static void note_problem(const char *name, const char *value)
{
	if (nr_problems < (int)NR_OPTIONS)
		snprintf(problems[nr_problems++], sizeof(problems[0]), "%s=%.8s", name, value);
}

static void set_option(struct shim_config *cfg, const struct option_def *o, const char *value,
		       int is_default)
{
	char *p = (char *)cfg + o->offset;
	char *end;
	long v;
	int i;

	switch (o->type) {
	case OPT_STR:
		if (*value || !o->def) {
			*(const char **)p = *value ? value : NULL;
			return;
		}
		break;		/* empty where a value is needed (GPUSHIM_OUTPUT) */
	case OPT_BOOL:
		if (!strcmp(value, "1") || !strcasecmp(value, "yes") || !strcasecmp(value, "true")) {
			*(int *)p = 1;
			return;
		}
		if (!strcmp(value, "0") || !strcasecmp(value, "no") || !strcasecmp(value, "false") ||
		    !*value) {
			*(int *)p = 0;
			return;
		}
		break;
	case OPT_UINT:
	case OPT_INT:
		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || end == value || *end || v < o->min || v > o->max)
			break;
		if (o->type == OPT_UINT)
			*(uint32_t *)p = (uint32_t)v;
		else
			*(int *)p = (int)v;
		return;
	case OPT_LEVEL:
		for (i = 0; i < 4; i++) {
			if (!strcasecmp(value, level_names[i])) {
				*(int *)p = i;
				return;
			}
		}
		break;
	case OPT_MODE:
		for (i = 0; i < 3; i++) {
			if (!strcasecmp(value, shim_mode_names[i])) {
				*(int *)p = i;
				return;
			}
		}
		break;
	}
	if (!is_default) {
		note_problem(o->name, value);
		set_option(cfg, o, o->def, 1);
	}
}

void config_load(struct shim_config *cfg)
{
	size_t i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < NR_OPTIONS; i++) {
		const struct option_def *o = &options[i];
		const char *value = getenv(o->name);

		if (o->def)
			set_option(cfg, o, o->def, 1);
		if (value)
			set_option(cfg, o, value, 0);
	}
	if (cfg->window_every_ms < 2 * cfg->window_ms) {
		note_problem("GPUSHIM_WINDOW_EVERY_MS", "< 2 windows");
		cfg->window_ms = 200;
		cfg->window_every_ms = 4000;
	}
	/*
	 * Sampled mode is meant to stay on: its counters come every 10 ms unless set. On the H200
	 * the counters' thread took 0.157 CPU-s a second at 1 ms and 0.029 at 10 ms (CUPTI's
	 * decoding costs per sample), and 10 ms still gives 20 samples in a 200 ms window.
	 */
	if (cfg->mode == RECORD_SAMPLED && !getenv("GPUSHIM_PM_INTERVAL_US"))
		cfg->pm_interval_us = 10000;
	/*
	 * Detaching is sampled mode's alone (full mode has no windows to detach between), and
	 * takes the counters with it: cuptiFinalize tears down all of CUPTI, the profiler's
	 * sampling included. Attached, CUPTI costs a launch-bound loop ~10 % between windows,
	 * detached ~1 % (H200, BENCHMARKS.md run R) - but a detach in the middle of a run crashed
	 * launch-bound PyTorch programs with SIGSEGV in 7 of 15 runs on the H200 (runs U, V), from
	 * the writer's thread and from a CUDA call's exit callback alike (run V's three backtraces
	 * end inside CUPTI, entered by the driver from the program's own call). So it is never the
	 * default, and asking for it says so.
	 */
	if (cfg->mode != RECORD_SAMPLED)
		cfg->cupti_detach = 0;
	if (cfg->cupti_detach) {
		cfg->pm = 0;
		shim_log(LOG_WARN, "GPUSHIM_CUPTI_DETACH=1: detaching CUPTI between windows crashed "
				   "launch-bound PyTorch programs on the H200 (SIGSEGV, 7 of 15 "
				   "runs)");
	}
	/* One message for them all: each is named, and the log's budget is left for the run. */
	if (nr_problems) {
		char all[480];
		size_t len = 0;

		for (i = 0; i < (size_t)nr_problems && len < sizeof(all); i++)
			len += (size_t)snprintf(all + len, sizeof(all) - len, "%s%s", i ? ", " : "",
						problems[i]);
		shim_log(LOG_WARN, "not valid, the defaults used: %s", all);
	}
}
