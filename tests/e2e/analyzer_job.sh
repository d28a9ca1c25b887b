#!/bin/sh
# SPDX-License-Identifier: MIT
# Several ranks' traces as one job (analysis/job.c), on hand-built traces of a two-rank job
# (tests/unit/hostile_trace.c "job": 200 steps, each a 2 ms kernel then an NCCL all-reduce;
# rank 1 launches each step DELAY late): the collectives matched by name and order, rank 1 named
# the straggler, the cost of waiting for it exactly the delay injected, cpu_bound what made it
# late, and which step (a spike in one step: that step, and its idle time's largest part); the same with rank 1 on another host whose clock is 1 s ahead (aligned by the
# all-reduces' ends, in the report and the exported timeline); no straggler without a delay; a rank that ran fewer steps leaves its
# extra collectives unmatched; one trace has no job.
. "$(dirname "$0")/lib.sh"
cd "$WORK"
G=$GPUSHIM_BIN

job() {	# job NAME N DELAY OFFSET [SPIKE]
	mkdir -p "$1"
	"$HOSTILE_TRACE" job "$@" || fail "hostile_trace job $*"
}
j() {	# j JSON FILTER
	jq -r ".job | $2" "$1"
}

for case in "one 0" "two 1000000000"; do
	set -- $case
	job "$1" 200 3000000 "$2"
	"$G" report --format json "$1/rank0.trace" "$1/rank1.trace" >"$1.json" ||
		fail "$1: report failed"
	"$G" report "$1/rank0.trace" "$1/rank1.trace" >"$1.txt" || fail "$1: text report failed"
	expect "$1: matched" "$(j "$1.json" .collectives_matched)" 200
	expect "$1: unmatched" "$(j "$1.json" .kernels_unmatched)" 0
	expect "$1: one host" "$(j "$1.json" .one_host)" "$([ "$2" = 0 ] && echo true || echo false)"
	expect "$1: rank 1's clock" "$(j "$1.json" '.per_rank[1].clock_offset_ns')" "$2"
	expect "$1: straggler" "$(j "$1.json" .straggler.rank)" 1
	expect "$1: arrived last" "$(j "$1.json" .straggler.arrived_last)" 200
	# the cost of waiting for it: within 10 % of the 3 ms injected (here: exact)
	expect "$1: cost each" "$(j "$1.json" .straggler.cost_each_ns)" 3000000
	expect "$1: skew" "$(j "$1.json" .skew_mean_ns)" 3000000
	expect "$1: rank 0 waited" "$(j "$1.json" '.per_rank[0].wait_ns')" 600000000
	expect "$1: what made it late" "$(j "$1.json" .straggler.cause)" cpu_bound
	grep -q "straggler: rank 1 (pid 5001) arrived last at 200 of 200 collectives" "$1.txt" ||
		fail "$1: text: $(sed -n '/^# job/,$p' "$1.txt")"
done

# the HTML page says it too, its figures the JSON's
"$G" report --format html -o one.html one/rank0.trace one/rank1.trace || fail "html failed"
grep -q 'data-json="straggler.cost_ns" data-unit="ns" data-value="600000000"' one.html ||
	fail "html: no straggler's cost"
grep -q 'data-json="straggler.cause" data-unit="str" data-value="cpu_bound"' one.html ||
	fail "html: no straggler's cause"

# one timeline: the two hosts' ranks on the first one's clock, their all-reduces ending together
ends() {	# ends CHROME_JSON PID: the all-reduce kernels' ends, in microseconds
	jq -r --argjson p "$2" '[.traceEvents[] | select(.ph == "X" and .pid == $p and
		(.name | startswith("nccl"))) | .ts + .dur] | sort | map(floor) | join(",")' "$1"
}
"$G" export --format chrome -o two.chrome.json two/rank0.trace two/rank1.trace 2>two.err ||
	fail "two: export failed: $(cat two.err)"
e0=$(ends two.chrome.json 5000)
[ -n "$e0" ] || fail "two: no all-reduce in the export"
expect "two: export, the ranks aligned" "$(ends two.chrome.json 5001)" "$e0"

# which step: rank 1's step 101 starts 4 ms later again (four launches a step: steps found)
job spike 200 3000000 0 4000000
"$G" report --format json spike/rank0.trace spike/rank1.trace >spike.json || fail "spike: report"
"$G" report spike/rank0.trace spike/rank1.trace >spike.txt || fail "spike: text report"
expect "spike: straggler" "$(j spike.json .straggler.rank)" 1
expect "spike: its steps" "$(j spike.json .straggler.steps)" 200
expect "spike: late in" "$(j spike.json .straggler.steps_late)" 200
expect "spike: the latest step" "$(j spike.json .straggler.latest.step)" 101
expect "spike: the latest instance" "$(j spike.json .straggler.latest.instance)" 101
expect "spike: how late" "$(j spike.json .straggler.latest.late_ns)" 7000000
expect "spike: that step's idle" "$(j spike.json .straggler.latest.step_idle_mostly)" cpu_bound
expect "spike: cost" "$(j spike.json .straggler.cost_ns)" 604000000
grep -q "late in 200 of its 200 steps; the latest: 7.00 ms in step 101 (.* #101); that step's idle time mostly cpu_bound" spike.txt ||
	fail "spike: text: $(sed -n '/^# job/,$p' spike.txt)"
"$G" report --format html -o spike.html spike/rank0.trace spike/rank1.trace || fail "spike: html"
grep -q 'data-json="straggler.latest.late_ns" data-unit="ns" data-value="7000000"' spike.html ||
	fail "spike: html: no latest collective"
# a collective's name from the trace printed clean: no terminal control reaches the text
job evil 20 3000000 0 2000000 "$(printf 'ncclEvil\033]0;PWNED\007\033[31mRED')"
"$G" report evil/rank0.trace evil/rank1.trace >evil.txt || fail "evil: text report"
grep -q "the latest: .*(ncclEvil?]0;PWNED??\[31mRED #" evil.txt ||
	fail "evil: $(sed -n '/^# job/,$p' evil.txt | od -c | head -20)"
if LC_ALL=C grep -q "$(printf '\033')" evil.txt; then fail "evil: an escape in the text"; fi
# without steps (two launches a step), the latest collective still named, no step
expect "one: no steps" "$(j one.json .straggler.steps)" 0
expect "one: latest, no step" "$(j one.json .straggler.latest.step)" null
expect "one: latest" "$(j one.json .straggler.latest.late_ns)" 3000000

job even 50 0 0
"$G" report --format json even/rank0.trace even/rank1.trace >even.json || fail "even: report"
expect "even: no straggler" "$(j even.json .straggler)" null
expect "even: no skew" "$(j even.json .skew_max_ns)" 0

job short 150 3000000 0
"$G" report --format json one/rank0.trace short/rank1.trace >mixed.json || fail "mixed: report"
expect "mixed: matched" "$(j mixed.json .collectives_matched)" 150
expect "mixed: unmatched" "$(j mixed.json .kernels_unmatched)" 50

"$G" report --format json one/rank0.trace >single.json || fail "single: report"
expect "single: no job" "$(jq -r 'has("job")' single.json)" false
echo "ok: the straggler named and its cost measured, on one host and two"
