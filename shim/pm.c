// SPDX-License-Identifier: MIT
/*
 * pm.c - hardware counters through CUPTI PM sampling: a few single-pass metrics per chip (SM
 * active, DRAM throughput, tensor pipe, GR engine, SM throughput), sampled by the GPU every
 * GPUSHIM_PM_INTERVAL_US, decoded every GPUSHIM_PM_DECODE_MS on the shim's own thread and written as
 * PM_SAMPLE records with times in the trace clock. Samples the device of the first kernel
 * launch, from START_DELAY_MS after it. Never fatal: an unknown chip, missing permission or
 * another profiler holding the counters leaves one PM_OFF note (and one warning) and the rest
 * of the trace as it is.
 * Runs on: the first cuInit's thread (pm_start: loading the profiler's libraries), a thread in
 * cuInit (pm_after_cuinit: initializing the profiler, once; other callers wait for it), the
 * first launching app thread (pm_claim: two driver queries and the exit handler, once), the PM
 * thread (everything else; every signal blocked but the faults), threads tearing a context
 * down and the exiting thread (pm_before_context_teardown, pm_atexit: bounded waits).
 *
 * The metrics were chosen on an H200 (their cost there: BENCHMARKS.md, "Hardware-counter
 * sampling"). Measured there too:
 * with the shim's CLOCK_MONOTONIC timestamp callback registered, CUPTI reports sample times in
 * that clock (without it they are raw %globaltimer, on CLOCK_REALTIME); sample 0 starts at
 * Enable, not Start, and is dropped.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * GPUSHIM_PM_DECODE_MS: decode this often (amortizes CUPTI's fixed cost per decode over many
 * samples); GPUSHIM_PM_BUFFER_MB: the hardware buffer on the GPU (KEEP_LATEST never stops the
 * session when it fills).
 */
/*
 * At exit, wait this long for a set-up under way and the last decode; cuInit callers and the
 * exit handler wait as long at most for the profiler's initialization in another thread.
 */
#define EXIT_WAIT_MS 2000
/* Sampling starts this long after the first kernel launch (see pm_main). */
#define START_DELAY_MS 1000

#include "futex.h"
#include "pm_host.h"

#define PARAMS(type, var, last)                                                                    \
	type var;                                                                                  \
	memset(&var, 0, sizeof(var));                                                              \
	var.structSize = offsetof(type, last) + sizeof(var.last)

/* ---- Metrics by chip ---- */

struct pm_chip {
	const char *chip;
	const char *metric[TRACE_PM_NR_SLOTS];	/* by enum trace_pm_slot; NULL: not on this chip */
};

/*
 * Single-pass sets only (PM sampling cannot replay); each set was checked on its chip. The
 * slots from TRACE_PM_NR_SLOTS_1_1 on (memory levels, pipes) are asked for together with the
 * first ones; where the whole set is refused (a driver that lacks one of them, or more than
 * one pass), the first ones are asked for alone.
 */
static const struct pm_chip chips[] = {
	{ "GH100",
	  { [TRACE_PM_SM_ACTIVE] = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
	    [TRACE_PM_DRAM] = "dram__throughput.avg.pct_of_peak_sustained_elapsed",
	    [TRACE_PM_TENSOR] =
		    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
	    [TRACE_PM_GR_ACTIVE] = "gr__cycles_active.avg.pct_of_peak_sustained_elapsed",
	    [TRACE_PM_SM_THROUGHPUT] =
		    "TriageCompute.sm__throughput.avg.pct_of_peak_sustained_elapsed",
	    [TRACE_PM_L2] =
		    "LTS.TriageCompute.lts__t_sector_throughput.avg.pct_of_peak_sustained_elapsed",
	    [TRACE_PM_ISSUE] = "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
	    [TRACE_PM_FMA] = "TPC.TriageCompute.sm__inst_executed_pipe_fma_realtime.avg."
			     "pct_of_peak_sustained_elapsed",
	    [TRACE_PM_ALU] = "TPC.TriageCompute.sm__inst_executed_pipe_alu_realtime.avg."
			     "pct_of_peak_sustained_elapsed",
	    [TRACE_PM_XU] = "SM_A.TriageCompute.sm__inst_executed_pipe_xu_realtime.avg."
			    "pct_of_peak_sustained_elapsed",
	    [TRACE_PM_FP64] = "TPC.TriageCompute.sm__pipe_fp64_cycles_active_realtime.avg."
			      "pct_of_peak_sustained_elapsed",
	    [TRACE_PM_LSU] = "SM_A.TriageCompute.l1tex__data_pipe_lsu_wavefronts.avg."
			     "pct_of_peak_sustained_elapsed",
	    [TRACE_PM_WARPS] = "sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed" } },
};

/* ---- The library ---- */

/*
 * The profiler's one-time set-up, in this order: pm_start loads the libraries and registers the
 * exit handler (NONE -> READY), then the first successful cuInit after that initializes the
 * profiler (READY -> RUNNING -> DONE, whatever the outcome). A futex word: cuInit callers and
 * the exit handler that find it RUNNING wait (bounded) until it is DONE.
 */
enum pm_init {
	PM_INIT_NONE = 0,		/* no sampling thread (yet, or at all) */
	PM_INIT_READY = 1,
	PM_INIT_RUNNING = 2,
	PM_INIT_DONE = 3,
};

struct pm_fns {
	CUptiResult (*GetResultString)(CUptiResult, const char **);
	CUptiResult (*ProfilerInitialize)(CUpti_Profiler_Initialize_Params *);
	CUptiResult (*DeviceSupported)(CUpti_Profiler_DeviceSupported_Params *);
	CUptiResult (*GetChipName)(CUpti_Device_GetChipName_Params *);
	CUptiResult (*GetCounterAvailability)(CUpti_PmSampling_GetCounterAvailability_Params *);
	CUptiResult (*HostInitialize)(struct host_initialize_params *);
	CUptiResult (*HostDeinitialize)(struct host_deinitialize_params *);
	CUptiResult (*HostAddMetrics)(struct host_add_metrics_params *);
	CUptiResult (*HostConfigSize)(struct host_config_size_params *);
	CUptiResult (*HostConfigImage)(struct host_config_image_params *);
	CUptiResult (*HostPasses)(struct host_passes_params *);
	CUptiResult (*HostEvaluate)(struct host_evaluate_params *);
	CUptiResult (*Enable)(CUpti_PmSampling_Enable_Params *);
	CUptiResult (*SetConfig)(CUpti_PmSampling_SetConfig_Params *);
	CUptiResult (*CounterDataSize)(CUpti_PmSampling_GetCounterDataSize_Params *);
	CUptiResult (*ImageInitialize)(CUpti_PmSampling_CounterDataImage_Initialize_Params *);
	CUptiResult (*Start)(CUpti_PmSampling_Start_Params *);
	CUptiResult (*Stop)(CUpti_PmSampling_Stop_Params *);
	CUptiResult (*Decode)(CUpti_PmSampling_DecodeData_Params *);
	CUptiResult (*DataInfo)(CUpti_PmSampling_GetCounterDataInfo_Params *);
	CUptiResult (*SampleInfo)(CUpti_PmSampling_CounterData_GetSampleInfo_Params *);
};

static struct {
	struct pm_fns f;
	void *lib;
	char lib_dir[PATH_MAX];
	pthread_t thread;
	_Atomic int has_thread;		/* set after thread and pid; cleared by its joiner */
	pid_t pid;			/* the process the thread runs in */
	_Atomic int init;		/* enum pm_init; futex word */
	_Atomic int claimed;		/* futex word: 1 once a launch told the device */
	_Atomic int stop;
	_Atomic int done;		/* futex word: the thread has finished */
	_Atomic int is_initialized;	/* the profiler initialized (in cuInit) */
	CUcontext ctx;			/* of the first launch */
	int device;			/* its ordinal; -1 unknown */
	/* The running session (PM thread only). */
	CUpti_PmSampling_Object *obj;
	void *host;
	const char *names[TRACE_PM_NR_SLOTS];	/* metrics evaluated, in order */
	int slot_of[TRACE_PM_NR_SLOTS];		/* names[i] fills slot slot_of[i] */
	size_t nr_names;
	uint8_t *image, *pristine;
	size_t image_bytes;
	uint8_t *avail, *config;	/* CUPTI keeps pointers into these: alive for the session */
	int is_first;			/* the next sample is the session's first */
	int overflowed;			/* flag the next sample */
	uint64_t nr_samples, nr_decodes, nr_errors, nr_overflows, nr_unaligned;
	uint64_t nr_mono, nr_real;	/* sample times found in each clock (two per sample) */
	uint64_t cpu_start_ns, wall_start_ns;	/* the thread's CPU time and the time at Start */
	uint64_t decode_cpu_ns, eval_cpu_ns, reset_cpu_ns;	/* decode(): CUPTI, emit_samples, memcpy */
} pm = { .device = -1 };

_Atomic int pm_claim_open;

static const char *result_text(CUptiResult r)
{
	const char *s = NULL;

	if (pm.f.GetResultString && pm.f.GetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

static int load_fns(void)
{
#define SYM(field, name)                                                                           \
	do {                                                                                       \
		pm.f.field = (__typeof__(pm.f.field))resolve_dlsym(pm.lib, name);                  \
		if (!pm.f.field)                                                                   \
			return -1;                                                                 \
	} while (0)
	SYM(GetResultString, "cuptiGetResultString");
	SYM(ProfilerInitialize, "cuptiProfilerInitialize");
	SYM(DeviceSupported, "cuptiProfilerDeviceSupported");
	SYM(GetChipName, "cuptiDeviceGetChipName");
	SYM(GetCounterAvailability, "cuptiPmSamplingGetCounterAvailability");
	SYM(HostInitialize, "cuptiProfilerHostInitialize");
	SYM(HostDeinitialize, "cuptiProfilerHostDeinitialize");
	SYM(HostAddMetrics, "cuptiProfilerHostConfigAddMetrics");
	SYM(HostConfigSize, "cuptiProfilerHostGetConfigImageSize");
	SYM(HostConfigImage, "cuptiProfilerHostGetConfigImage");
	SYM(HostPasses, "cuptiProfilerHostGetNumOfPasses");
	SYM(HostEvaluate, "cuptiProfilerHostEvaluateToGpuValues");
	SYM(Enable, "cuptiPmSamplingEnable");
	SYM(SetConfig, "cuptiPmSamplingSetConfig");
	SYM(CounterDataSize, "cuptiPmSamplingGetCounterDataSize");
	SYM(ImageInitialize, "cuptiPmSamplingCounterDataImageInitialize");
	SYM(Start, "cuptiPmSamplingStart");
	SYM(Stop, "cuptiPmSamplingStop");
	SYM(Decode, "cuptiPmSamplingDecodeData");
	SYM(DataInfo, "cuptiPmSamplingGetCounterDataInfo");
	SYM(SampleInfo, "cuptiPmSamplingCounterDataGetSampleInfo");
#undef SYM
	return 0;
}

/* ---- Notes ---- */

static void note_off(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note_off(const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	rec_note(TRACE_NOTE_PM_OFF, clock_now_ns(), text);
	shim_log(LOG_WARN, "no hardware counters (the trace is complete otherwise): %s", text);
}

/* "RmProfilingAdminOnly: 1" in the driver's parameters restricts counters to admins. */
static int profiling_admin_only(void)
{
	char buf[8192];
	const char *p;
	ssize_t n;
	int fd = open("/proc/driver/nvidia/params", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "RmProfilingAdminOnly: ");
	return p ? p[22] == '1' : -1;
}

static void note_failure(const char *step, CUptiResult r)
{
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		note_off("%s: insufficient privileges (RmProfilingAdminOnly: %d; run as root or "
			 "with CAP_PERFMON, or load nvidia with "
			 "NVreg_RestrictProfilingToAdminUsers=0)",
			 step, profiling_admin_only());
	else if (r == CUPTI_ERROR_HARDWARE_BUSY || r == CUPTI_ERROR_INVALID_OPERATION)
		note_off("%s: the counters are in use (another profiler: Nsight, DCGM "
			 "profiling?): %s",
			 step, result_text(r));
	else
		note_off("%s: %s (%d)", step, result_text(r), (int)r);
}

/* ---- Set-up ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const struct pm_chip *chip_entry(const char *chip)
{
	size_t i;

	for (i = 0; i < sizeof(chips) / sizeof(chips[0]); i++)
		if (!strcmp(chips[i].chip, chip))
			return &chips[i];
	return NULL;
}

static void preload_nvperf(void)
{
	/* libcupti dlopens these by bare name without $ORIGIN: give it the copies next to it. */
	static const char *const libs[] = { "libnvperf_host.so", "libnvperf_target.so" };
	char path[PATH_MAX + 32];
	size_t i;

	for (i = 0; i < 2 && pm.lib_dir[0]; i++) {
		snprintf(path, sizeof(path), "%s/%s", pm.lib_dir, libs[i]);
		if (!dlopen(path, RTLD_NOW | RTLD_LOCAL))
			dlerror();
	}
}

/* Room for two decode periods of samples (the image is decoded again when it fills). */
static uint32_t samples_per_image(void)
{
	uint64_t n = (uint64_t)shim.cfg.pm_decode_ms * 2000u / shim.cfg.pm_interval_us;

	return n < 64 ? 64 : n > 1024 ? 1024 : (uint32_t)n;
}

/* A host object's configuration image for one metric set (session_setup). */
struct host_config {
	uint8_t *config;		/* allocated; the caller keeps it */
	size_t config_size;
	const char *step;		/* failed: the step (NULL: out of memory) */
	CUptiResult r;
	size_t passes;			/* > 1: the set needs that many */
};

/*
 * The metrics of @chip's slots below @nr_slots into pm.names and a host object (pm.host) with
 * their configuration image. Returns 0, or -1 with the host object released and @hc saying
 * why.
 */
static int host_config(const struct pm_chip *chip, const char *chip_name, const uint8_t *avail,
		       int nr_slots, struct host_config *hc)
{
	int i;

	pm.nr_names = 0;
	for (i = 0; i < nr_slots; i++) {
		if (!chip->metric[i])
			continue;
		pm.names[pm.nr_names] = chip->metric[i];
		pm.slot_of[pm.nr_names++] = i;
	}
	{
		PARAMS(struct host_initialize_params, p, pHostObject);
		p.profilerType = HOST_PROFILER_PM_SAMPLING;
		p.pChipName = chip_name;
		p.pCounterAvailabilityImage = avail;
		if ((hc->r = pm.f.HostInitialize(&p)) != CUPTI_SUCCESS) {
			hc->step = "host initialization";
			return -1;
		}
		pm.host = p.pHostObject;
	}
	{
		PARAMS(struct host_add_metrics_params, p, numMetrics);
		p.pHostObject = pm.host;
		p.ppMetricNames = pm.names;
		p.numMetrics = pm.nr_names;
		if ((hc->r = pm.f.HostAddMetrics(&p)) != CUPTI_SUCCESS) {
			hc->step = "metric set-up";
			goto fail;
		}
	}
	{
		PARAMS(struct host_config_size_params, ps, configImageSize);
		PARAMS(struct host_config_image_params, pi, pConfigImage);
		PARAMS(struct host_passes_params, pp, numOfPasses);

		ps.pHostObject = pm.host;
		if ((hc->r = pm.f.HostConfigSize(&ps)) != CUPTI_SUCCESS) {
			hc->step = "config image size";
			goto fail;
		}
		hc->config = malloc(ps.configImageSize ? ps.configImageSize : 1);
		if (!hc->config)
			goto fail;	/* step NULL: out of memory */
		pi.pHostObject = pm.host;
		pi.configImageSize = ps.configImageSize;
		pi.pConfigImage = hc->config;
		if ((hc->r = pm.f.HostConfigImage(&pi)) != CUPTI_SUCCESS) {
			hc->step = "config image";
			goto fail;
		}
		pp.configImageSize = ps.configImageSize;
		pp.pConfigImage = hc->config;
		if ((hc->r = pm.f.HostPasses(&pp)) != CUPTI_SUCCESS || pp.numOfPasses != 1) {
			hc->step = "pass count";
			hc->passes = hc->r == CUPTI_SUCCESS ? pp.numOfPasses : 0;
			goto fail;
		}
		hc->config_size = ps.configImageSize;
	}
	return 0;

fail:
	free(hc->config);
	hc->config = NULL;
	{
		PARAMS(struct host_deinitialize_params, p, pHostObject);
		p.pHostObject = pm.host;
		pm.f.HostDeinitialize(&p);
		pm.host = NULL;
	}
	return -1;
}

/*
 * Returns 0 when sampling runs; otherwise the PM_OFF note is written. Once begun it runs to
 * the end even when the program exits meanwhile (the exit handler waits, bounded): measured on
 * the H200, a program that exited while the set-up was stopped half-way aborted in the
 * profiler's teardown (an uncaught C++ exception); a started session always stopped cleanly.
 */
static int session_setup(void)
{
	const struct pm_chip *chip;
	uint8_t *avail = NULL, *config = NULL;
	size_t config_size = 0;
	char chip_name[32];
	CUptiResult r;
	size_t i;

	if (!atomic_load(&pm.is_initialized))
		return -1;	/* pm_after_cuinit wrote why */
	{
		PARAMS(CUpti_Profiler_DeviceSupported_Params, p, api);
		p.cuDevice = pm.device;
		p.api = CUPTI_PROFILER_PM_SAMPLING;
		if ((r = pm.f.DeviceSupported(&p)) != CUPTI_SUCCESS) {
			note_failure("device support query", r);
			return -1;
		}
		if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
			note_off("device %d does not support PM sampling (architecture %d, vGPU %d, "
				 "confidential compute %d, CMP %d, WSL %d; 2 = supported)",
				 pm.device, p.architecture, p.vGpu, p.confidentialCompute, p.cmp,
				 p.wsl);
			return -1;
		}
	}
	{
		PARAMS(CUpti_Device_GetChipName_Params, p, pChipName);
		p.deviceIndex = (size_t)pm.device;
		if ((r = pm.f.GetChipName(&p)) != CUPTI_SUCCESS || !p.pChipName) {
			note_failure("chip name", r);
			return -1;
		}
		snprintf(chip_name, sizeof(chip_name), "%s", p.pChipName);
	}
	chip = chip_entry(chip_name);
	if (!chip) {
		note_off("no counter set for chip %s (known: GH100)", chip_name);
		return -1;
	}
	{
		PARAMS(CUpti_PmSampling_GetCounterAvailability_Params, p, pCounterAvailabilityImage);
		p.deviceIndex = (size_t)pm.device;
		if ((r = pm.f.GetCounterAvailability(&p)) != CUPTI_SUCCESS) {
			note_failure("counter availability", r);
			return -1;
		}
		avail = malloc(p.counterAvailabilityImageSize ? p.counterAvailabilityImageSize : 1);
		if (!avail)
			goto nomem;
		p.pCounterAvailabilityImage = avail;
		if ((r = pm.f.GetCounterAvailability(&p)) != CUPTI_SUCCESS) {
			note_failure("counter availability", r);
			goto fail;
		}
	}
	/* The whole set, else the first slots alone (see chips[]). */
	for (i = shim.cfg.pm_pipes ? 0 : 1; i < 2; i++) {
		struct host_config hc = { 0 };

		if (host_config(chip, chip_name, avail, i ? TRACE_PM_NR_SLOTS_1_1 : TRACE_PM_NR_SLOTS,
				&hc) == 0) {
			config = hc.config;
			config_size = hc.config_size;
			break;
		}
		if (!hc.step)
			goto nomem;
		if (i) {
			if (hc.passes > 1)
				note_off("the metric set needs %zu passes on %s; PM sampling takes "
					 "one", hc.passes, chip_name);
			else
				note_failure(hc.step, hc.r);
			goto fail;
		}
		shim_log(LOG_INFO, "PM sampling: the whole metric set was refused (%s: %s), the "
				   "first %d metrics asked for alone",
			 hc.step, hc.passes > 1 ? "more than one pass" : result_text(hc.r),
			 (int)TRACE_PM_NR_SLOTS_1_1);
	}
	{
		PARAMS(CUpti_PmSampling_Enable_Params, pe, pPmSamplingObject);
		pe.deviceIndex = (size_t)pm.device;
		if ((r = pm.f.Enable(&pe)) != CUPTI_SUCCESS) {
			note_failure("enable", r);
			goto fail;
		}
		pm.obj = pe.pPmSamplingObject;
	}
	{
		PARAMS(CUpti_PmSampling_SetConfig_Params, pc, hwBufferAppendMode);
		pc.pPmSamplingObject = pm.obj;
		pc.configSize = config_size;
		pc.pConfig = config;
		pc.hardwareBufferSize = (size_t)shim.cfg.pm_buffer_mb << 20;
		pc.samplingInterval = (uint64_t)shim.cfg.pm_interval_us * 1000u;
		pc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
		pc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
		if ((r = pm.f.SetConfig(&pc)) != CUPTI_SUCCESS) {
			note_failure("configuration", r);
			goto fail;
		}
	}
	{
		PARAMS(CUpti_PmSampling_GetCounterDataSize_Params, p, counterDataSize);
		PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params, pi, pCounterData);

		p.pPmSamplingObject = pm.obj;
		p.pMetricNames = pm.names;
		p.numMetrics = pm.nr_names;
		p.maxSamples = samples_per_image();
		if ((r = pm.f.CounterDataSize(&p)) != CUPTI_SUCCESS) {
			note_failure("counter data size", r);
			goto fail;
		}
		pm.image_bytes = p.counterDataSize;
		pm.image = malloc(pm.image_bytes);
		pm.pristine = malloc(pm.image_bytes);
		if (!pm.image || !pm.pristine)
			goto nomem;
		pi.pPmSamplingObject = pm.obj;
		pi.counterDataSize = pm.image_bytes;
		pi.pCounterData = pm.image;
		if ((r = pm.f.ImageInitialize(&pi)) != CUPTI_SUCCESS) {
			note_failure("counter data image", r);
			goto fail;
		}
		memcpy(pm.pristine, pm.image, pm.image_bytes);
	}
	{
		PARAMS(CUpti_PmSampling_Start_Params, p, pPmSamplingObject);
		p.pPmSamplingObject = pm.obj;
		if ((r = pm.f.Start(&p)) != CUPTI_SUCCESS) {
			note_failure("start", r);
			goto fail;
		}
	}
	pm.avail = avail;
	pm.config = config;

	{
		struct trace_rec_pm_config c;
		char text[160];

		memset(&c, 0, sizeof(c));
		c.hdr.type = TRACE_REC_PM_CONFIG;
		c.hdr.size = sizeof(c);
		c.device = (uint32_t)pm.device;
		c.chip = rec_intern_meta(chip_name, strlen(chip_name));
		c.interval_ns = (uint64_t)shim.cfg.pm_interval_us * 1000u;
		for (i = 0; i < pm.nr_names; i++)
			c.metric[pm.slot_of[i]] = rec_intern_meta(pm.names[i], strlen(pm.names[i]));
		meta_append(&c, sizeof(c));
		snprintf(text, sizeof(text), "PM sampling on device %d (%s): %zu metrics every %u us",
			 pm.device, chip_name, pm.nr_names, shim.cfg.pm_interval_us);
		rec_note(TRACE_NOTE_PM_ON, clock_now_ns(), text);
	}
	pm.is_first = 1;
	pm.cpu_start_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	pm.wall_start_ns = clock_now_ns();
	return 0;

nomem:
	note_off("out of memory setting up PM sampling");
fail:
	free(avail);
	free(config);
	return -1;
}

/* ---- Decoding ---- */

/*
 * The trace clock of a sample time. CUPTI reports PM sample times in the clock of its timestamp
 * callback when one is registered (the shim registers its CLOCK_MONOTONIC clock: cupti.c),
 * else in the raw %globaltimer domain, which the driver keeps on CLOCK_REALTIME. Which one is
 * told by where the value lies; anything else cannot be placed (counted, dropped).
 */
static int to_trace_clock(uint64_t ts, uint64_t mono_now, uint64_t real_now, uint64_t *out)
{
	const uint64_t hour = 3600ull * 1000000000ull;

	if (ts + hour > mono_now && ts < mono_now + hour) {
		*out = ts;
		pm.nr_mono++;
		return 0;
	}
	if (ts + hour > real_now && ts < real_now + hour && real_now > mono_now) {
		*out = ts - (real_now - mono_now);
		pm.nr_real++;
		return 0;
	}
	pm.nr_unaligned++;
	return -1;
}

/* Every completed sample in the image to PM_SAMPLE records. */
static void emit_samples(void)
{
	PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params, info, numCompletedSamples);
	double values[TRACE_PM_NR_SLOTS];
	uint64_t mono_now = clock_ns(CLOCK_MONOTONIC), real_now = clock_ns(CLOCK_REALTIME);
	size_t i, k;

	info.pCounterDataImage = pm.image;
	info.counterDataImageSize = pm.image_bytes;
	if (pm.f.DataInfo(&info) != CUPTI_SUCCESS) {
		pm.nr_errors++;
		return;
	}
	for (i = 0; i < info.numCompletedSamples; i++) {
		PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params, si, endTimestamp);
		PARAMS(struct host_evaluate_params, ev, pMetricValues);
		struct trace_rec_pm_sample s;

		si.pPmSamplingObject = pm.obj;
		si.pCounterDataImage = pm.image;
		si.counterDataImageSize = pm.image_bytes;
		si.sampleIndex = i;
		ev.pHostObject = pm.host;
		ev.pCounterDataImage = pm.image;
		ev.counterDataImageSize = pm.image_bytes;
		ev.rangeIndex = i;
		ev.ppMetricNames = pm.names;
		ev.numMetrics = pm.nr_names;
		ev.pMetricValues = values;
		if (pm.f.SampleInfo(&si) != CUPTI_SUCCESS || pm.f.HostEvaluate(&ev) != CUPTI_SUCCESS) {
			pm.nr_errors++;
			continue;
		}
		if (pm.is_first) {
			pm.is_first = 0;	/* it runs from Enable, not from Start */
			continue;
		}
		memset(&s, 0, sizeof(s));
		if (si.endTimestamp <= si.startTimestamp ||
		    to_trace_clock(si.startTimestamp, mono_now, real_now, &s.start_ns) < 0 ||
		    to_trace_clock(si.endTimestamp, mono_now, real_now, &s.end_ns) < 0)
			continue;
		s.hdr.type = TRACE_REC_PM_SAMPLE;
		s.hdr.size = sizeof(s);
		s.device = (uint32_t)pm.device;
		s.flags = pm.overflowed ? TRACE_PM_OVERFLOW : 0;
		for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
			s.value[k] = NAN;
		for (k = 0; k < pm.nr_names; k++)
			s.value[pm.slot_of[k]] = (float)values[k];
		if (meta_append(&s, sizeof(s)) == 0) {
			pm.overflowed = 0;
			pm.nr_samples++;
		}
	}
}

static void decode(void)
{
	uint64_t t0, t1;
	int round;

	for (round = 0; round < 16; round++) {
		PARAMS(CUpti_PmSampling_DecodeData_Params, d, overflow);
		CUptiResult r;

		d.pPmSamplingObject = pm.obj;
		d.pCounterDataImage = pm.image;
		d.counterDataImageSize = pm.image_bytes;
		t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		r = pm.f.Decode(&d);
		t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		pm.decode_cpu_ns += t1 - t0;
		pm.nr_decodes++;
		if (r == CUPTI_ERROR_OUT_OF_MEMORY || d.overflow) {
			pm.nr_overflows++;
			pm.overflowed = 1;
		} else if (r != CUPTI_SUCCESS) {
			pm.nr_errors++;
		}
		emit_samples();
		t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		pm.eval_cpu_ns += t0 - t1;
		memcpy(pm.image, pm.pristine, pm.image_bytes);
		pm.reset_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (r != CUPTI_SUCCESS ||
		    d.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
			break;
	}
}

/* ---- The thread ---- */

static void *pm_main(void *arg)
{
	uint64_t start;

	(void)arg;
	pthread_setname_np(pthread_self(), "gpushim-pm");
	while (!atomic_load(&pm.claimed) && !atomic_load(&pm.stop))
		futex_wait_ms(&pm.claimed, 0, 1000);
	/*
	 * Set-up stalls the driver once (tens to a hundred ms on the H200) and, once begun, runs to
	 * the end (see session_setup): a program that ends within START_DELAY_MS of its first
	 * launch is left alone - no stall, no wait at exit - and has no counters.
	 */
	start = clock_now_ns() + (uint64_t)START_DELAY_MS * 1000000u;
	while (!atomic_load(&pm.stop) && futex_wait_until(&pm.stop, 0, start))
		;
	if (atomic_load(&pm.stop)) {
		if (atomic_load(&pm.claimed) && pm.device >= 0)
			note_off("the program ended within %u ms of its first kernel launch, before "
				 "sampling started", START_DELAY_MS);
		goto out;
	}
	rec_note(TRACE_NOTE_PM_SETUP, clock_now_ns(), "PM sampling set-up begins");
	/* Profiler calls want the application's context current on the calling thread. */
	if (!drv.cuCtxSetCurrent || drv.cuCtxSetCurrent(pm.ctx) != CUDA_SUCCESS) {
		note_off("cannot make the application's context current on the sampling thread");
		goto out;
	}
	if (session_setup() < 0)
		goto out;
	while (!atomic_load(&pm.stop)) {
		futex_wait_ms(&pm.stop, 0, shim.cfg.pm_decode_ms);
		decode();
	}
	{
		PARAMS(CUpti_PmSampling_Stop_Params, p, pPmSamplingObject);
		uint64_t cpu, wall;
		char text[320];

		p.pPmSamplingObject = pm.obj;
		pm.f.Stop(&p);
		decode();
		/*
		 * Not disabled: disabling the sampling object may finalize CUPTI, and the
		 * activity buffers are flushed after this at exit. The process is ending.
		 */
		/* What decoding cost this thread: CPU time over the time sampled. */
		cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - pm.cpu_start_ns;
		wall = clock_now_ns() - pm.wall_start_ns;
		snprintf(text, sizeof(text),
			 "PM sampling stopped: %llu samples, %llu decodes, %llu overflows, %llu "
			 "errors; sample times in CLOCK_MONOTONIC %llu, CLOCK_REALTIME %llu, "
			 "neither %llu; decoding took %llu ms of CPU in %llu ms (CUPTI's decode "
			 "%llu, evaluating %llu, resetting the image %llu; %u KiB image, every "
			 "%u ms)",
			 (unsigned long long)pm.nr_samples, (unsigned long long)pm.nr_decodes,
			 (unsigned long long)pm.nr_overflows, (unsigned long long)pm.nr_errors,
			 (unsigned long long)pm.nr_mono, (unsigned long long)pm.nr_real,
			 (unsigned long long)pm.nr_unaligned, (unsigned long long)(cpu / 1000000u),
			 (unsigned long long)(wall / 1000000u),
			 (unsigned long long)(pm.decode_cpu_ns / 1000000u),
			 (unsigned long long)(pm.eval_cpu_ns / 1000000u),
			 (unsigned long long)(pm.reset_cpu_ns / 1000000u),
			 (unsigned)(pm.image_bytes >> 10), shim.cfg.pm_decode_ms);
		rec_note(TRACE_NOTE_PM_OFF, clock_now_ns(), text);
	}
out:
	atomic_store(&pm.done, 1);
	futex_wake_all(&pm.done);
	return NULL;
}

/* Stop sampling and wait (bounded) until the thread is done with the profiler. */
static void pm_stop_and_wait(void)
{
	uint64_t deadline = shim_deadline(clock_now_ns() + (uint64_t)EXIT_WAIT_MS * 1000000u);

	if (!atomic_load(&pm.has_thread))
		return;
	atomic_store(&pm_claim_open, 0);
	atomic_store(&pm.stop, 1);
	futex_wake_all(&pm.stop);
	futex_wake_all(&pm.claimed);
	while (!atomic_load(&pm.done) && futex_wait_until(&pm.done, 0, deadline))
		;
	if (atomic_load(&pm.done)) {
		pthread_join(pm.thread, NULL);
		atomic_store(&pm.has_thread, 0);
	}
}

void pm_before_context_teardown(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	if (!atomic_load(&pm.has_thread) || pm.pid != getpid())
		return;
	pthread_mutex_lock(&lock);	/* one joiner */
	pm_stop_and_wait();
	pthread_mutex_unlock(&lock);
}

/* While another thread initializes the profiler, wait (at most @ms) until it is done. */
static void wait_init(uint32_t ms)
{
	uint64_t deadline = shim_deadline(clock_now_ns() + (uint64_t)ms * 1000000u);

	while (atomic_load_explicit(&pm.init, memory_order_acquire) == PM_INIT_RUNNING &&
	       futex_wait_until(&pm.init, PM_INIT_RUNNING, deadline))
		;
}

static void pm_atexit(void)
{
	shim_exit_begin();	/* every exit wait within one deadline */
	/* Never exit inside the profiler's initialization (see pm_after_cuinit). */
	wait_init(EXIT_WAIT_MS);
	pm_before_context_teardown();
}

void pm_claim(void)
{
	int expected = 1;
	CUcontext ctx = NULL;
	CUdevice dev;

	if (!atomic_compare_exchange_strong(&pm_claim_open, &expected, 0))
		return;
	/*
	 * Once more, now that the CUDA runtime has registered its exit handler (at the end of its
	 * initialization, before any launch): this one runs before it.
	 */
	atexit(pm_atexit);
	if (drv.cuCtxGetCurrent && drv.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx &&
	    drv.cuCtxGetDevice && drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS) {
		pm.ctx = ctx;
		pm.device = (int)dev;
	} else {
		atomic_store(&pm.stop, 1);
	}
	atomic_store(&pm.claimed, 1);
	futex_wake_all(&pm.claimed);
}

void pm_start(void *cupti_lib, const char *cupti_path)
{
	sigset_t all, old;
	const char *slash;

	if (!shim.cfg.pm) {
		rec_note(TRACE_NOTE_PM_OFF, clock_now_ns(),
			 shim.cfg.cupti_detach ? "CUPTI detached between sampled windows (no "
						 "counters; GPUSHIM_CUPTI_DETACH=0 keeps it "
						 "attached)" :
						 "GPUSHIM_PM=0");
		return;
	}
	pm.lib = cupti_lib;
	slash = strrchr(cupti_path, '/');
	if (slash)
		snprintf(pm.lib_dir, sizeof(pm.lib_dir), "%.*s", (int)(slash - cupti_path),
			 cupti_path);
	/* Every signal blocked but the faults: a crash in CUPTI must reach a handler. */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGABRT);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pm.pid = getpid();
	if (pthread_create(&pm.thread, NULL, pm_main, NULL) == 0)
		atomic_store(&pm.has_thread, 1);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!atomic_load(&pm.has_thread)) {
		note_off("cannot create the sampling thread");
		return;
	}
	/*
	 * The profiler libraries are loaded here, and the exit handler registered after them:
	 * exit runs it before their static destructors, so sampling stops while they are whole.
	 * (The CUDA runtime's exit handler comes later and runs earlier; it releases the primary
	 * context, which pm_before_context_teardown() intercepts.)
	 */
	preload_nvperf();
	atexit(pm_atexit);
	atomic_store(&pm_claim_open, 1);
	/* Only now may cuInit initialize the profiler: its libraries and exit handler first. */
	atomic_store_explicit(&pm.init, PM_INIT_READY, memory_order_release);
}

/*
 * The profiler's initialization loads its driver interface and registers the libraries' exit
 * handlers. Done once, in a successful cuInit after pm_start, never concurrently with exit:
 * measured on the H200, a program that exited while another thread was inside it crashed. So
 * the other threads in cuInit meanwhile wait (bounded) until it is done before they return to
 * the program, and so does the exit handler.
 */
void pm_after_cuinit(void)
{
	int st = PM_INIT_READY;
	CUptiResult r;

	if (atomic_load_explicit(&pm.init, memory_order_acquire) == PM_INIT_DONE)
		return;
	if (!atomic_compare_exchange_strong(&pm.init, &st, PM_INIT_RUNNING)) {
		if (st == PM_INIT_RUNNING)
			wait_init(EXIT_WAIT_MS);
		return;		/* NONE: no sampling, or pm_start's own cuInit comes later */
	}
	if (load_fns() < 0) {
		note_off("libcupti lacks the PM sampling API (CUDA 12.6 or later)");
	} else {
		PARAMS(CUpti_Profiler_Initialize_Params, p, pPriv);
		if ((r = pm.f.ProfilerInitialize(&p)) != CUPTI_SUCCESS)
			note_failure("profiler initialization", r);
		else
			atomic_store(&pm.is_initialized, 1);
	}
	atomic_store_explicit(&pm.init, PM_INIT_DONE, memory_order_release);
	futex_wake_all(&pm.init);
}

void pm_reset_after_fork(void)
{
	/* Counters do not follow a fork: the child's trace has none. */
	atomic_store(&pm_claim_open, 0);
	atomic_store(&pm.claimed, 0);
	atomic_store(&pm.stop, 0);
	atomic_store(&pm.done, 0);
	atomic_store(&pm.is_initialized, 0);
	atomic_store(&pm.init, PM_INIT_NONE);
	atomic_store(&pm.has_thread, 0);
	pm.device = -1;
}
