#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpushim diff on runs recorded on the H200 (tests/traces/h200/diff_*): host_sync twice is
# within noise (exit 0 at --fail-on 50); the same program with its per-step read-back added
# (base: one read-back at the end) shows +199 blocking copies, host_sync time lost growing and
# GPU busy dropping, and trips --fail-on 5 on span, busy and lost; launch_bound with 10000 more
# launches shows them and its kernel's count, and trips --fail-on 5; compute-bound time is not
# counted as time lost. Step time: diff pools the same steady steps the report counts; a run
# against itself is the same and passes; 10 against 30 steps of one loop is within noise by
# its interval and passes by default (step time) though its span trips --metric span; two
# different NVTX loops 40x apart are worse one way (exit 1) and better the other; without
# steady steps on a side the default is span, and --metric step fails as unavailable.
. "$(dirname "$0")/lib.sh"
T=$SOURCE_ROOT/tests/traces/h200
G=$GPUSHIM_BIN

"$G" diff --fail-on 50 "$T/diff_host_sync_a.trace" "$T/diff_host_sync_b.trace" >"$WORK/same.txt" ||
	fail "same program: exit $?"
"$G" diff --format json "$T/diff_host_sync_a.trace" "$T/diff_host_sync_b.trace" >"$WORK/same.json"
expect "same program: span" "$(jget "$WORK/same.json" '.changes[] | select(.key=="span") | .status')" noise
expect "same program: kernel" "$(jget "$WORK/same.json" '[.changes[] | select(.kind=="kernel") | .status] | unique | join(",")')" noise
expect "same program: counts" "$(jget "$WORK/same.json" '[.changes[] | select(.kind=="count")] | length')" 0

set +e
for metric in span busy lost; do
	"$G" diff --format json --metric $metric --fail-on 5 "$T/diff_host_sync_end.trace" \
		"$T/diff_host_sync_a.trace" >"$WORK/sync_$metric.json"
	expect "read-back added, --metric $metric: exit" "$?" 1
done
"$G" diff --fail-on 5 "$T/diff_launch_bound_10k.trace" "$T/diff_launch_bound_20k.trace" >"$WORK/lb.txt"
expect "kernels added: exit" "$?" 1
set -e
j=$WORK/sync_span.json
expect "memcpys" "$(jget "$j" '.changes[] | select(.kind=="count" and .key=="memcpys") | .delta')" 199
expect "DtoH copies" "$(jget "$j" '.changes[] | select(.kind=="copy" and .key=="DtoH") | "\(.base_count) \(.new_count)"')" "1 200"
expect "host_sync" "$(jget "$j" '.changes[] | select(.kind=="cause" and .key=="host_sync") | .status')" worse
jq -e '.gate.worse_by > 10' "$j" >/dev/null || fail "span grew only $(jget "$j" .gate.worse_by) %"
jq -e '.gate.worse_by > 10' "$WORK/sync_busy.json" >/dev/null ||
	fail "busy dropped only $(jget "$WORK/sync_busy.json" .gate.worse_by) pts"
"$G" diff --format json "$T/diff_launch_bound_10k.trace" "$T/diff_launch_bound_20k.trace" >"$WORK/lb.json"
expect "launches" "$(jget "$WORK/lb.json" '.changes[] | select(.kind=="count" and .key=="launches") | .delta')" 10000
expect "tiny_add" "$(jget "$WORK/lb.json" '.changes[] | select(.kind=="kernel") | "\(.key) \(.base_count) \(.new_count) \(.change)"')" "_Z8tiny_addPf 10000 20000 more"
grep -q "^REGRESSION: span grew by" "$WORK/lb.txt" || fail "no REGRESSION line"
# Twice the launches: what a CUDA graph's launch cost would save, a share of the window, stays.
expect "launch_overhead saving" "$(jget "$WORK/lb.json" '.changes[] | select(.kind=="saving" and .key=="launch_overhead") | .status')" noise
grep -q "^what fixing each cause alone saves (replay" "$WORK/lb.txt" || fail "no saving section"
# A read-back a step added: not blocking there saves 12.5 % of the window, from nothing.
expect "host_sync saving" "$(jget "$WORK/sync_span.json" '.changes[] | select(.kind=="saving" and .key=="host_sync") | "\(.status) \(.new > 10) \(.unit)"')" "worse true pct"

# Compute-bound time is not time lost: FMA app -> streaming app has 0 ns lost on the base side,
# its compute_bound row is a change (neither better nor worse), memory_bandwidth a regression.
"$G" diff --format json "$T/compute_bound.trace" "$T/bandwidth_bound.trace" >"$WORK/cb.json"
expect "compute -> bandwidth: time lost of the base" "$(jget "$WORK/cb.json" '.changes[] | select(.key=="lost") | .base')" 0
expect "compute -> bandwidth: compute_bound" "$(jget "$WORK/cb.json" '.changes[] | select(.kind=="cause" and .key=="compute_bound") | .status')" changed
expect "compute -> bandwidth: memory_bandwidth" "$(jget "$WORK/cb.json" '.changes[] | select(.kind=="cause" and .key=="memory_bandwidth") | .status')" worse

# Step time. diff's steady steps are the report's: their count and mean (the report truncates
# it to whole ns, diff rounds).
for t in torch_items_10 torch_items_30 nvtx_steps steps_nvtx torch_train; do
	"$G" report --format json "$T/$t.trace" >"$WORK/r_$t.json"
	"$G" diff --format json "$T/$t.trace" "$T/$t.trace" >"$WORK/d_$t.json"
	expect "$t: steady steps" "$(jget "$WORK/d_$t.json" .base.steps.steady_steps)" \
		"$(jget "$WORK/r_$t.json" .steps.steady_steps)"
	jq -e --slurpfile r "$WORK/r_$t.json" \
		'(.base.steps.mean_ns - $r[0].steps.mean_ns) | fabs <= 1' "$WORK/d_$t.json" >/dev/null ||
		fail "$t: diff's mean step $(jget "$WORK/d_$t.json" .base.steps.mean_ns), report's $(jget "$WORK/r_$t.json" .steps.mean_ns)"
	expect "$t against itself: step_time" "$(jget "$WORK/d_$t.json" '.changes[] | select(.key=="step_time") | .status')" same
	expect "$t against itself: steps_per_s" "$(jget "$WORK/d_$t.json" '.changes[] | select(.key=="steps_per_s") | .status')" same
	jq -e '.changes[] | select(.key=="step_time") | .ci_lo_pct < 0 and .ci_hi_pct > 0' \
		"$WORK/d_$t.json" >/dev/null || fail "$t against itself: interval without 0"
done
"$G" diff --fail-on 1 "$T/torch_items_10.trace" "$T/torch_items_10.trace" >"$WORK/self.txt" ||
	fail "a run against itself: exit $?"
grep -q "^gate: step time (both runs have steady steps) +0.00% \[95% CI -" "$WORK/self.txt" ||
	fail "a run against itself: no gate line"

# 10 and 30 steps of one loop: span grows with the run, step time is within its noise.
"$G" diff --format json --fail-on 5 "$T/torch_items_10.trace" "$T/torch_items_30.trace" >"$WORK/items.json" ||
	fail "10 -> 30 steps: exit $?"
expect "10 -> 30 steps: gate" "$(jget "$WORK/items.json" '.gate | "\(.metric) \(.why) \(.failed)"')" \
	"step both runs have steady steps false"
expect "10 -> 30 steps: step_time" "$(jget "$WORK/items.json" '.changes[] | select(.key=="step_time") | "\(.status) \(.base_count) \(.new_count)"')" \
	"noise $(jget "$WORK/r_torch_items_10.json" .steps.steady_steps) $(jget "$WORK/r_torch_items_30.json" .steps.steady_steps)"
jq -e '.gate.worse_by > 5 and .gate.ci_lo_pct < 0 and .gate.ci_hi_pct > .gate.worse_by' \
	"$WORK/items.json" >/dev/null || fail "10 -> 30 steps: gate $(jq -c .gate "$WORK/items.json")"
expect "10 -> 30 steps: span" "$(jget "$WORK/items.json" '.changes[] | select(.key=="span") | .status')" worse
set +e
"$G" diff --metric span --fail-on 5 "$T/torch_items_10.trace" "$T/torch_items_30.trace" >"$WORK/items_span.txt"
expect "10 -> 30 steps, --metric span: exit" "$?" 1
set -e
grep -q "^gate: span (--metric span)" "$WORK/items_span.txt" || fail "--metric span: no gate line"

# Two NVTX loops 40x apart: worse (exit 1) one way, better the other.
set +e
"$G" diff --fail-on 5 "$T/nvtx_steps.trace" "$T/steps_nvtx.trace" >"$WORK/slower.txt"
expect "slower steps: exit" "$?" 1
set -e
grep -q "^REGRESSION: step time grew by" "$WORK/slower.txt" || fail "slower steps: no REGRESSION line"
"$G" diff --format json "$T/nvtx_steps.trace" "$T/steps_nvtx.trace" >"$WORK/slower.json"
expect "slower steps: step_time" "$(jget "$WORK/slower.json" '.changes[] | select(.key=="step_time") | .status')" worse
expect "slower steps: steps_per_s" "$(jget "$WORK/slower.json" '.changes[] | select(.key=="steps_per_s") | .status')" worse
jq -e '.changes[] | select(.key=="step_time") | .ci_lo_pct > 0' "$WORK/slower.json" >/dev/null ||
	fail "slower steps: interval reaches 0"
"$G" diff --fail-on 5 --format json "$T/steps_nvtx.trace" "$T/nvtx_steps.trace" >"$WORK/faster.json" ||
	fail "faster steps: exit $?"
expect "faster steps: step_time" "$(jget "$WORK/faster.json" '.changes[] | select(.key=="step_time") | .status')" better
jq -e '.gate.worse_by < 0 and .gate.ci_hi_pct < 0' "$WORK/faster.json" >/dev/null ||
	fail "faster steps: gate $(jq -c .gate "$WORK/faster.json")"

# Several traces a side pool their steady steps.
"$G" diff --format json "$T/torch_items_10.trace,$T/torch_items_30.trace" "$T/torch_items_10.trace" >"$WORK/pool.json"
expect "pooled steady steps" "$(jget "$WORK/pool.json" .base.steps.steady_steps)" \
	"$(($(jget "$WORK/r_torch_items_10.json" .steps.steady_steps) + $(jget "$WORK/r_torch_items_30.json" .steps.steady_steps)))"

# A side without steady steps: span by default, and step time unavailable.
"$G" diff --format json "$T/torch_items_10.trace" "$T/diff_host_sync_a.trace" >"$WORK/nosteps.json"
expect "no steps: gate" "$(jget "$WORK/nosteps.json" '.gate | "\(.metric) \(.why)"')" \
	"span steady steps: base $(jget "$WORK/r_torch_items_10.json" .steps.steady_steps), new 0; step time needs 2 a side"
expect "no steps: step rows" "$(jget "$WORK/nosteps.json" '[.changes[] | select(.key=="step_time" or .key=="steps_per_s")] | length')" 0
set +e
"$G" diff --metric step --fail-on 50 "$T/torch_items_10.trace" "$T/diff_host_sync_a.trace" >"$WORK/nosteps.txt"
expect "no steps, --metric step: exit (could not compare)" "$?" 3
set -e
grep -q "^FAIL: --metric step needs 2 steady steps or more on both sides (base [0-9]*, new 0)" \
	"$WORK/nosteps.txt" || fail "no steps, --metric step: no explanation"
# A sampled run against the same program recorded whole (twice the steps): its time lost is
# the windows' taken over its whole window, as its shares are, so the share of time lost
# stays (24.7 % and 24.1 %) and the time lost doubles with the steps; the windows' own time
# (877 ms whole, 179 ms in the windows) would read as a 62 % improvement.
"$G" diff --format json "$T/torch_twins_sync.trace" "$T/torch_twins_sync_sampled.trace" \
	>"$WORK/sampled.json"
jq -e '(.new.lost_pct - .base.lost_pct | fabs) < 2' "$WORK/sampled.json" >/dev/null ||
	fail "sampled: share of time lost $(jq -c '[.base.lost_pct, .new.lost_pct]' "$WORK/sampled.json")"
jq -e '(.new.lost_ns / .base.lost_ns) as $r | $r > 1.6 and $r < 2.4' "$WORK/sampled.json" \
	>/dev/null ||
	fail "sampled: time lost $(jq -c '[.base.lost_ns, .new.lost_ns]' "$WORK/sampled.json")"
expect "sampled: step time" \
	"$(jget "$WORK/sampled.json" '.changes[] | select(.key == "step_time") | .status')" noise
echo "h200 diff: ok"
