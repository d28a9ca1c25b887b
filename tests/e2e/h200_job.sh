#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A distributed job recorded on one H200 (tests/traces/h200/job_*: `scripts/gpu-check.sh --only
# job`, test_apps/python/torch_dist_job.py, two ranks under NCCL on one GPU, each with its own
# NCCL_HOSTID, rank 1 spending 30 ms of CPU before each of 60 steps, each step's loss read
# back): the report of both ranks' traces as one job.
#   allreduce  an all-reduce of 16 MiB a step: its loop took 2.436 s against 0.615 s for the
#              same job with no rank slowed (the program's own timing): the delay cost the job
#              1.821 s; waiting for rank 1 must cost within 10 % of that and of 60 x 30 ms
#   ddp        DistributedDataParallel: 3.027 s against 1.205 s (1.822 s). On one GPU the late
#              rank's kernels share it with the waiting rank's spinning NCCL kernel, and its
#              lateness grew 13 % past that: pinned as measured (a regression check), the
#              bound on two GPUs is the gpu-check's
. "$(dirname "$0")/lib.sh"
dir=$SOURCE_ROOT/tests/traces/h200
G=$GPUSHIM_BIN

for job in allreduce ddp; do
	"$G" report --format json "$dir/job_${job}_0.trace" "$dir/job_${job}_1.trace" \
		>"$WORK/$job.json" || fail "$job: report failed"
	"$G" report "$dir/job_${job}_0.trace" "$dir/job_${job}_1.trace" >"$WORK/$job.txt" ||
		fail "$job: text report failed"
	j() { jq -r ".job | $1" "$WORK/$job.json"; }
	expect "$job: one host" "$(j .one_host)" true
	expect "$job: unmatched" "$(j .kernels_unmatched)" 0
	# the NCCL kernels as recorded (mangled) are communication on both ranks
	expect "$job: all-reduce among the collectives" \
		"$(j '[.collective_kernels[] | select(test("ncclDevKernel_AllReduce"))] | length')" 1
	expect "$job: straggler" "$(j .straggler.rank)" 1
	expect "$job: what made it late is among its causes" \
		"$(j '[.straggler.causes[].cause] | index("cpu_bound") != null')" true
	grep -q "^  straggler: rank 1 (pid [0-9]*) arrived last at" "$WORK/$job.txt" ||
		fail "$job: text: $(sed -n '/^# job/,$p' "$WORK/$job.txt")"
	# a communication kernel's time is not low parallelism (its blocks are its channels)
	for r in 0 1; do
		"$G" report --format json "$dir/job_${job}_$r.trace" >"$WORK/$job$r.json" ||
			fail "$job rank $r: report"
		expect "$job rank $r: no NCCL kernel among low_parallelism's sites" \
			"$(jq '[.attribution[] | select(.cause == "low_parallelism") | .evidence.sites[]? | select((.kernel_mangled // .kernel // "") | test("nccl"))] | length' "$WORK/$job$r.json")" 0
		expect "$job rank $r: its communication" \
			"$(jq '.gpu.comm.kernels > 0' "$WORK/$job$r.json")" true
		# but its empty SMs count in the fill signal: busy, not filled
		expect "$job rank $r: SMs filled below busy" \
			"$(jq '.gpu.fill_pct < .gpu.busy_pct / 2' "$WORK/$job$r.json")" true
	done
done

within() {	# within WHAT GOT WANT PCT
	awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }' ||
		fail "$1: $2 not within $4 % of $3"
}
cost=$(jq .job.straggler.cost_ns "$WORK/allreduce.json")
within "allreduce: cost against the job's loss" "$cost" 1821000000 10
within "allreduce: cost against 60 x 30 ms" "$cost" 1800000000 10
expect "allreduce: what made it late" "$(jq -r .job.straggler.cause "$WORK/allreduce.json")" cpu_bound
expect "allreduce: last at" "$(jq .job.straggler.arrived_last "$WORK/allreduce.json")" 63
cost=$(jq .job.straggler.cost_ns "$WORK/ddp.json")
within "ddp: cost as measured on one GPU" "$cost" 2064980000 1
expect "ddp: steps late" "$(jq .job.straggler.steps_late "$WORK/ddp.json")" 62
# one timeline with a process per rank, in both formats, as Perfetto reads them
"$G" export --format chrome -o "$WORK/job.json" "$dir/job_ddp_0.trace" "$dir/job_ddp_1.trace" ||
	fail "export chrome"
expect "export: a process per rank" "$(jq '[.traceEvents[] | select(.ph == "X") | .pid] | unique | length' "$WORK/job.json")" 2
python3 "$SOURCE_ROOT/tests/e2e/check_timeline.py" chrome "$WORK/job.json" || fail "chrome timeline"
"$G" export --format perfetto -o "$WORK/job.pftrace" "$dir/job_ddp_0.trace" "$dir/job_ddp_1.trace" ||
	fail "export perfetto"
python3 "$SOURCE_ROOT/tests/e2e/check_timeline.py" perfetto "$WORK/job.pftrace" ||
	fail "perfetto timeline"
echo "ok: both one-GPU jobs' straggler, its cost and its causes; their timeline"
