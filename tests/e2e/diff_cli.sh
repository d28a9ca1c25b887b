#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpushim diff through the fake driver (host timestamps only; each launch made to cost 20 us):
# the same program twice passes --fail-on 100 (its two spans are wall time: on a loaded 2-core
# machine they were seen 50 % apart); doubling the launches is
# reported as +2000 launches and a kernel run 2000 -> 4000 times and trips --fail-on 5 (exit 1);
# added synchronizations are counted with the right sign; several traces per side add up;
# a metric that needs GPU timestamps fails clearly; bad input and usage give 1 and 2.
. "$(dirname "$0")/lib.sh"
export FAKE_CUDA_LAUNCH_NS=20000
# No CUPTI search: loading a toolkit libcupti at cuInit takes tens of ms and would be the span.
export GPUSHIM_CUPTI=0
steps() {
	run_shim "$WORK/$1.out" "$WORK/$1.trace" steps "$2" "$3"
}
steps a 2000 0
steps b 2000 0
steps more 4000 0
steps syncs 2000 40
G=$GPUSHIM_BIN

"$G" diff --fail-on 100 "$WORK/a.trace" "$WORK/b.trace" >"$WORK/same.txt" || fail "same program: exit $?"
grep -Eq "^ok: span (grew|shrank) by" "$WORK/same.txt" || fail "same program: no gate line"

set +e
"$G" diff --fail-on 5 "$WORK/a.trace" "$WORK/more.trace" >"$WORK/more.txt"
rc=$?
"$G" diff --format json --fail-on 5 "$WORK/a.trace" "$WORK/more.trace" >"$WORK/more.json"
rcj=$?
set -e
[ "$rc" = 1 ] || fail "more kernels: exit $rc, want 1:
$(cat "$WORK/more.txt")"
expect "more kernels: exit (json)" "$rcj" 1
grep -q "^REGRESSION: span grew by" "$WORK/more.txt" || fail "no REGRESSION line"
expect "launches delta" "$(jget "$WORK/more.json" '.changes[] | select(.kind=="count" and .key=="launches") | .delta')" 2000
expect "kernel counts" "$(jget "$WORK/more.json" '.changes[] | select(.kind=="kernel") | "\(.key) \(.base_count) \(.new_count) \(.change)"')" "_Z4spinv 2000 4000 more"
expect "gate" "$(jget "$WORK/more.json" '.gate | "\(.metric) \(.failed)"')" "span true"
# Twice as many 20 us launches: the span grows by about 100 % (only its sign is checked
# here, with a wide margin: wall time on a loaded CI machine is no exact figure).
jq -e '.gate.worse_by > 20' "$WORK/more.json" >/dev/null ||
	fail "span growth $(jget "$WORK/more.json" .gate.worse_by) % is not a clear growth"

"$G" diff --format json "$WORK/a.trace" "$WORK/syncs.trace" >"$WORK/syncs.json" || fail "syncs: exit $?"
expect "syncs delta" "$(jget "$WORK/syncs.json" '.changes[] | select(.kind=="count" and .key=="syncs") | .delta')" 50
expect "cuStreamSynchronize" "$(jget "$WORK/syncs.json" '.changes[] | select(.kind=="api" and .key=="cuStreamSynchronize") | "\(.base) \(.new) \(.status)"')" "1 51 changed"
expect "no gate" "$(jget "$WORK/syncs.json" .gate.failed)" false

# Several traces of one job per side: counts add up; the same on both sides is no change.
"$G" diff --format json "$WORK/a.trace,$WORK/b.trace" "$WORK/a.trace,$WORK/more.trace" >"$WORK/multi.json"
expect "multi traces" "$(jget "$WORK/multi.json" '.base.traces | length')" 2
expect "multi launches" "$(jget "$WORK/multi.json" '"\(.base.counts.launches) \(.new.counts.launches)"')" "4000 6000"

# GPU metrics without GPU timestamps: a clear failure, not a pass.
set +e
"$G" diff --metric busy --fail-on 5 "$WORK/a.trace" "$WORK/b.trace" >"$WORK/busy.txt"
expect "busy without GPU: exit" "$?" 1
grep -q "needs GPU timestamps" "$WORK/busy.txt" || fail "busy without GPU: no explanation"
"$G" diff "$WORK/a.trace" >/dev/null 2>&1
expect "one side: usage" "$?" 2
"$G" diff --fail-on lots "$WORK/a.trace" "$WORK/b.trace" >/dev/null 2>&1
expect "bad --fail-on: usage" "$?" 2
"$G" diff --metric speed "$WORK/a.trace" "$WORK/b.trace" >/dev/null 2>&1
expect "bad --metric: usage" "$?" 2
"$G" diff "$WORK/a.trace" "$WORK/missing.trace" >/dev/null 2>"$WORK/err"
expect "missing trace: exit" "$?" 1
set -e
grep -q "missing.trace" "$WORK/err" || fail "missing trace not named"
echo "diff: ok"
