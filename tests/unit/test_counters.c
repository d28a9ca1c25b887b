// SPDX-License-Identifier: MIT
/*
 * test_counters.c - pm_classify on hand-made counter values: the classes and the unit that
 * names them (analysis/counters.h), the values read while busy, and the pre-1.7 traces that
 * lack the pipes. The values are those of the H200 kernels in test_apps/pipes.cu, rounded.
 */
#include <math.h>

#include "analysis/counters.h"
#include "check.h"

/* A sample's values, NaN where not given; @gr: GR active, @pipes: slots from 1.7 present. */
static void vals(double v[TRACE_PM_NR_SLOTS], double gr, int pipes)
{
	int k;

	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		v[k] = k <= TRACE_PM_SM_THROUGHPUT || pipes ? 0 : NAN;
	v[TRACE_PM_GR_ACTIVE] = gr;
	v[TRACE_PM_SM_ACTIVE] = gr;
}

static void test_classes(void)
{
	double v[TRACE_PM_NR_SLOTS];
	struct pm_judgement j;

	/* Streaming copy: DRAM at 82 %, SMs at 6 % */
	vals(v, 100, 1);
	v[TRACE_PM_DRAM] = 82, v[TRACE_PM_L2] = 39, v[TRACE_PM_LSU] = 13;
	v[TRACE_PM_SM_THROUGHPUT] = 6;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_BANDWIDTH);
	CHECK_EQ(j.unit, TRACE_PM_DRAM);

	/* FMA chains: the FMA pipe at 63 %, issue 68 % */
	vals(v, 100, 1);
	v[TRACE_PM_SM_THROUGHPUT] = 70, v[TRACE_PM_FMA] = 63, v[TRACE_PM_ISSUE] = 68;
	v[TRACE_PM_ALU] = 6;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_COMPUTE);
	CHECK_EQ(j.unit, TRACE_PM_FMA);
	CHECK(!pm_pipe_is_good(j.unit));

	/* Softmax: no pipe near its peak, instructions issued at 74 %: a mix */
	vals(v, 100, 1);
	v[TRACE_PM_SM_THROUGHPUT] = 75, v[TRACE_PM_ISSUE] = 74, v[TRACE_PM_ALU] = 50;
	v[TRACE_PM_FMA] = 21, v[TRACE_PM_XU] = 19, v[TRACE_PM_DRAM] = 42;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_COMPUTE);
	CHECK_EQ(j.unit, TRACE_PM_ISSUE);

	/* A bf16 GEMM: tensor 91 %, L1 93 % (what feeds it): compute on the tensor pipe */
	vals(v, 100, 1);
	v[TRACE_PM_SM_THROUGHPUT] = 91, v[TRACE_PM_TENSOR] = 91, v[TRACE_PM_LSU] = 93;
	v[TRACE_PM_L2] = 33, v[TRACE_PM_DRAM] = 17;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_COMPUTE);
	CHECK_EQ(j.unit, TRACE_PM_TENSOR);
	CHECK(pm_pipe_is_good(j.unit));

	/* FP64 chains: used well */
	vals(v, 100, 1);
	v[TRACE_PM_SM_THROUGHPUT] = 77, v[TRACE_PM_FP64] = 77;
	pm_classify(v, &j);
	CHECK_EQ(j.unit, TRACE_PM_FP64);
	CHECK(pm_pipe_is_good(j.unit));

	/* L2-bound: L2 at 80 %, DRAM 30 %, SMs 40 % */
	vals(v, 100, 1);
	v[TRACE_PM_L2] = 80, v[TRACE_PM_DRAM] = 30, v[TRACE_PM_SM_THROUGHPUT] = 40;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_BANDWIDTH);
	CHECK_EQ(j.unit, TRACE_PM_L2);

	/* Pointer chasing: SMs hold warps, nothing near its peak */
	vals(v, 100, 1);
	v[TRACE_PM_DRAM] = 10, v[TRACE_PM_L2] = 3, v[TRACE_PM_WARPS] = 2;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_LATENCY);
	CHECK_EQ(j.unit, -1);

	/* ... but a few SMs busy is low parallelism, not latency: no class */
	vals(v, 100, 1);
	v[TRACE_PM_SM_ACTIVE] = 20, v[TRACE_PM_DRAM] = 5, v[TRACE_PM_L2] = 3;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_NONE);
}

static void test_while_busy(void)
{
	double v[TRACE_PM_NR_SLOTS];
	struct pm_judgement j;

	/* Half the sample idle: DRAM 41 % over it is 82 % while busy */
	vals(v, 50, 1);
	v[TRACE_PM_DRAM] = 41, v[TRACE_PM_SM_THROUGHPUT] = 3;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_BANDWIDTH);
	CHECK(fabs(j.busy[TRACE_PM_DRAM] - 82) < 1e-9);
	CHECK(fabs(j.busy[j.unit] - 82) < 1e-9);

	/* Busy under PM_GR_MIN_PCT of the sample: too little to tell */
	vals(v, PM_GR_MIN_PCT / 2, 1);
	v[TRACE_PM_DRAM] = 4;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_NONE);
	CHECK(isnan(j.busy[TRACE_PM_DRAM]));

	/* Traffic the engine's busy share does not cover (copies) is capped at 100 % */
	vals(v, 20, 1);
	v[TRACE_PM_DRAM] = 60;
	pm_classify(v, &j);
	CHECK(fabs(j.busy[TRACE_PM_DRAM] - 100) < 1e-9);
}

static void test_before_1_7(void)
{
	double v[TRACE_PM_NR_SLOTS];
	struct pm_judgement j;

	/* SM throughput high, no pipe sampled: compute-bound, pipe unknown */
	vals(v, 100, 0);
	v[TRACE_PM_SM_THROUGHPUT] = 70, v[TRACE_PM_TENSOR] = 2;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_COMPUTE);
	CHECK_EQ(j.unit, -1);
	/* ... the tensor pipe is known */
	v[TRACE_PM_TENSOR] = 88;
	pm_classify(v, &j);
	CHECK_EQ(j.unit, TRACE_PM_TENSOR);
	/* nothing near peak: no latency class without L2 and the pipes */
	vals(v, 100, 0);
	v[TRACE_PM_DRAM] = 10;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_NONE);
	/* the old bandwidth rule still holds: DRAM 55 %, SMs 10 % */
	v[TRACE_PM_DRAM] = 55, v[TRACE_PM_SM_THROUGHPUT] = 10;
	pm_classify(v, &j);
	CHECK_EQ(j.cls, PM_CLASS_BANDWIDTH);
	CHECK_EQ(j.unit, TRACE_PM_DRAM);
}

int main(void)
{
	RUN(test_classes);
	RUN(test_while_busy);
	RUN(test_before_1_7);
	return TEST_RESULT();
}
