#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpushim diff. The gate is checked on traces whose times are exact (hostile_trace launches):
# doubling back-to-back launches grows the span by exactly 100 %, which trips --fail-on 5 and
# --fail-on 99.99 (exit 1) but not --fail-on 100 (the gate is "worse by more than"); a span
# 4 % longer passes --fail-on 5, and a shorter one passes. Traces recorded through the fake
# driver (host timestamps only) are compared on what does not depend on wall time: the same
# program twice changes no count, kernel or API; doubling the launches is reported as +2000
# launches and a kernel run 2000 -> 4000 times; added synchronizations are counted with the
# right sign; several traces per side add up. Exit codes keep a regression (1) apart from
# runs that could not be compared (3: a metric that needs GPU timestamps, with its reason; a
# trace that cannot be read; output that cannot be written) and from usage (2).
. "$(dirname "$0")/lib.sh"
# No CUPTI search: loading a toolkit libcupti at cuInit takes tens of ms for nothing here.
export GPUSHIM_CUPTI=0
steps() {
	run_shim "$WORK/$1.out" "$WORK/$1.trace" steps "$2" "$3"
}
steps a 2000 0
steps b 2000 0
steps more 4000 0
steps syncs 2000 40
# exact NAME N GAP_NS: N launches, each GAP_NS long and back to back: a span of N x GAP_NS.
exact() {
	"$HOSTILE_TRACE" launches "$WORK/$1.trace" "$2" "$3" || fail "hostile_trace launches $*"
}
exact x2000 2000 20000		# 40 ms
exact x4000 4000 20000		# 80 ms: +100 %
exact x2000_slow 2000 20800	# 41.6 ms: +4 %
G=$GPUSHIM_BIN

# gate NAME WANT_EXIT WANT_LINE ARGS...: gpushim diff ARGS (text), its exit and gate line.
gate() {
	local name=$1 want_rc=$2 want_line=$3 rc
	shift 3
	"$G" diff "$@" >"$WORK/gate.txt" && rc=0 || rc=$?
	expect "$name: exit" "$rc" "$want_rc"
	expect "$name: gate line" "$(grep -E '^(ok|REGRESSION): ' "$WORK/gate.txt")" "$want_line"
}

# The gate on exact spans.
gate "twice the launches, --fail-on 5" 1 \
	"REGRESSION: span grew by 100.00% (--fail-on 5.00, metric span)" \
	--fail-on 5 "$WORK/x2000.trace" "$WORK/x4000.trace"
gate "twice the launches, --fail-on 99.99" 1 \
	"REGRESSION: span grew by 100.00% (--fail-on 99.99, metric span)" \
	--fail-on 99.99 "$WORK/x2000.trace" "$WORK/x4000.trace"
gate "twice the launches, --fail-on 100" 0 \
	"ok: span grew by 100.00% (--fail-on 100.00, metric span)" \
	--fail-on 100 "$WORK/x2000.trace" "$WORK/x4000.trace"
gate "4 % slower, --fail-on 5" 0 "ok: span grew by 4.00% (--fail-on 5.00, metric span)" \
	--fail-on 5 "$WORK/x2000.trace" "$WORK/x2000_slow.trace"
gate "half the launches, --fail-on 5" 0 "ok: span shrank by 50.00% (--fail-on 5.00, metric span)" \
	--fail-on 5 "$WORK/x4000.trace" "$WORK/x2000.trace"
set +e
"$G" diff --format json --fail-on 5 "$WORK/x2000.trace" "$WORK/x4000.trace" >"$WORK/x.json"
expect "twice the launches: exit (json)" "$?" 1
set -e
expect "gate (json)" "$(jget "$WORK/x.json" '.gate | "\(.metric) \(.fail_on) \(.worse_by) \(.failed)"')" \
	"span 5 100 true"
expect "span (json)" "$(jget "$WORK/x.json" '.changes[] | select(.kind=="run" and .key=="span") | "\(.base) \(.new) \(.delta_pct) \(.status)"')" \
	"40000000 80000000 100 worse"

# Recorded runs, on counts only (their spans are wall time).
"$G" diff --format json "$WORK/a.trace" "$WORK/b.trace" >"$WORK/same.json" || fail "same program: exit $?"
expect "same program: count, kernel and API changes" \
	"$(jget "$WORK/same.json" '[.changes[] | select(.kind=="count" or .kind=="kernel" or .kind=="api")] | length')" 0
expect "same program: no gate" "$(jget "$WORK/same.json" .gate.failed)" false

"$G" diff --format json "$WORK/a.trace" "$WORK/more.trace" >"$WORK/more.json" || fail "more kernels: exit $?"
expect "launches delta" "$(jget "$WORK/more.json" '.changes[] | select(.kind=="count" and .key=="launches") | .delta')" 2000
expect "kernel counts" "$(jget "$WORK/more.json" '.changes[] | select(.kind=="kernel") | "\(.key) \(.base_count) \(.new_count) \(.change)"')" "_Z4spinv 2000 4000 more"
expect "API counts" "$(jget "$WORK/more.json" '.changes[] | select(.kind=="api") | "\(.key) \(.base) \(.new) \(.status)"')" "cuLaunchKernel 2000 4000 changed"

"$G" diff --format json "$WORK/a.trace" "$WORK/syncs.trace" >"$WORK/syncs.json" || fail "syncs: exit $?"
expect "syncs delta" "$(jget "$WORK/syncs.json" '.changes[] | select(.kind=="count" and .key=="syncs") | .delta')" 50
expect "cuStreamSynchronize" "$(jget "$WORK/syncs.json" '.changes[] | select(.kind=="api" and .key=="cuStreamSynchronize") | "\(.base) \(.new) \(.status)"')" "1 51 changed"
expect "no gate" "$(jget "$WORK/syncs.json" .gate.failed)" false

# Several traces of one job per side: counts add up; the same on both sides is no change.
"$G" diff --format json "$WORK/a.trace,$WORK/b.trace" "$WORK/a.trace,$WORK/more.trace" >"$WORK/multi.json"
expect "multi traces" "$(jget "$WORK/multi.json" '.base.traces | length')" 2
expect "multi launches" "$(jget "$WORK/multi.json" '"\(.base.counts.launches) \(.new.counts.launches)"')" "4000 6000"

# GPU metrics without GPU timestamps: a clear failure, not a pass, and not a regression.
set +e
"$G" diff --metric busy --fail-on 5 "$WORK/a.trace" "$WORK/b.trace" >"$WORK/busy.txt"
expect "busy without GPU: exit" "$?" 3
grep -q "needs GPU timestamps" "$WORK/busy.txt" || fail "busy without GPU: no explanation"
"$G" diff --format json --metric lost --fail-on 5 "$WORK/a.trace" "$WORK/b.trace" >"$WORK/lost.json"
expect "lost without GPU: exit (json)" "$?" 3
expect "lost without GPU: gate (json)" "$(jget "$WORK/lost.json" '.gate | "\(.worse_by) \(.failed)"')" "null true"
# Without --fail-on the gate decides nothing: the same runs compare, exit 0.
"$G" diff --metric busy "$WORK/a.trace" "$WORK/b.trace" >/dev/null
expect "busy without GPU, no --fail-on: exit" "$?" 0
"$G" diff "$WORK/a.trace" >/dev/null 2>&1
expect "one side: usage" "$?" 2
"$G" diff --fail-on lots "$WORK/a.trace" "$WORK/b.trace" >/dev/null 2>&1
expect "bad --fail-on: usage" "$?" 2
"$G" diff --metric speed "$WORK/a.trace" "$WORK/b.trace" >/dev/null 2>&1
expect "bad --metric: usage" "$?" 2
"$G" diff "$WORK/a.trace" "$WORK/missing.trace" >/dev/null 2>"$WORK/err"
expect "missing trace: exit" "$?" 3
expect "missing trace: message" "$(cat "$WORK/err")" \
	"gpushim: $WORK/missing.trace: No such file or directory"
"$G" diff --fail-on 5 "$WORK" "$WORK/x4000.trace" >/dev/null 2>&1
expect "a directory, --fail-on: exit" "$?" 3
head -c 200 /dev/zero >"$WORK/zeros.trace"
"$G" diff --fail-on 5 "$WORK/x2000.trace,$WORK/zeros.trace" "$WORK/x4000.trace" >/dev/null 2>&1
expect "not a trace, --fail-on: exit" "$?" 3
# A regression whose report cannot be written is trouble too: nobody saw it.
for args in "--fail-on 5" "--format json --fail-on 5" ""; do
	# shellcheck disable=SC2086 # the options are words
	"$G" diff $args "$WORK/x2000.trace" "$WORK/x4000.trace" >/dev/full 2>"$WORK/err"
	expect "diff $args >/dev/full: exit" "$?" 3
	expect "diff $args >/dev/full: message" "$(cat "$WORK/err")" \
		"gpushim: write error on standard output: No space left on device"
done
set -e
"$G" diff --help | grep -q "^Exit status: 0 no regression, 1 a regression (--fail-on), 2 usage, 3 the runs$" ||
	fail "diff --help: no exit status"
echo "diff: ok"
