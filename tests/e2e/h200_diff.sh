#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpushim diff on runs recorded on the H200 (tests/traces/h200/diff_*): host_sync twice is
# within noise (exit 0 at --fail-on 50); the same program with its per-step read-back added
# (base: one read-back at the end) shows +199 blocking copies, host_sync time lost growing and
# GPU busy dropping, and trips --fail-on 5 on span, busy and lost; launch_bound with 10000 more
# launches shows them and its kernel's count, and trips --fail-on 5; compute-bound time is not
# counted as time lost.
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

# Compute-bound time is not time lost: FMA app -> streaming app has 0 ns lost on the base side,
# its compute_bound row is a change (neither better nor worse), memory_bandwidth a regression.
"$G" diff --format json "$T/compute_bound.trace" "$T/bandwidth_bound.trace" >"$WORK/cb.json"
expect "compute -> bandwidth: time lost of the base" "$(jget "$WORK/cb.json" '.changes[] | select(.key=="lost") | .base')" 0
expect "compute -> bandwidth: compute_bound" "$(jget "$WORK/cb.json" '.changes[] | select(.kind=="cause" and .key=="compute_bound") | .status')" changed
expect "compute -> bandwidth: memory_bandwidth" "$(jget "$WORK/cb.json" '.changes[] | select(.kind=="cause" and .key=="memory_bandwidth") | .status')" worse
echo "h200 diff: ok"
