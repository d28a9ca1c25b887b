#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/soak_sampled.sh, the long-run watcher, on a short run of the fake driver and CUPTI:
# its summary agrees with what `gpushim report` and `info` say of the same trace (windows, the
# windows that attached CUPTI again, GPU operations joined, launches between windows), it took
# samples of the process's memory, and it exits with the command's status.
. "$(dirname "$0")/lib.sh"

use_fake_cupti
export GPUSHIM_WINDOW_MS=20 GPUSHIM_WINDOW_EVERY_MS=60 INTERVAL=0.05 BUILD="$BUILD_ROOT"
unset GPUSHIM_MODE GPUSHIM_PM
export GPUSHIM_CUPTI_DETACH=1	# the windows that attach CUPTI again are counted

bash "$SOURCE_ROOT/scripts/soak_sampled.sh" "$WORK/s" -- "$FAKE_CLIENT" paced 600 1000 0 \
	>"$WORK/out" 2>"$WORK/err" || fail "soak: exit $? ($(head -c 300 "$WORK/err"))"
S=$WORK/s/summary.json
cmp "$WORK/out" "$S" || fail "soak: printed summary differs from summary.json"
expect "soak: the program's output" "$(cat "$WORK/s/stdout")" "paced: 600 launches"
"$GPUSHIM_BIN" report --format json "$WORK/s/soak.trace" >"$WORK/r.json"
"$GPUSHIM_BIN" info --format json "$WORK/s/soak.trace" >"$WORK/i.json"
expect "soak: exit" "$(jget "$S" .exit)" 0
expect "soak: mode" "$(jget "$S" .mode)" sampled
expect "soak: windows" "$(jget "$S" .windows)" "$(jget "$WORK/r.json" .sampling.windows)"
opens=$(jq '[.notes[] | select(.kind == "cupti_on" and (.text | startswith("sampled window")))] | length' "$WORK/i.json")
again=$(jq '[.notes[] | select(.text | test("attached again in"))] | length' "$WORK/i.json")
expect "soak: window opens" "$(jget "$S" .window_opens)" "$opens"
expect "soak: attached again" "$(jget "$S" .attached_again)" "$again"
[ "$again" -ge 1 ] || fail "soak: no window attached CUPTI again"
for k in kernels joined unjoined zero_timestamps dropped; do
	expect "soak: $k" "$(jget "$S" ".$k")" "$(jget "$WORK/r.json" ".gpu.$k")"
done
expect "soak: launches between windows" "$(jget "$S" .launches_between_windows)" \
	"$(jget "$WORK/r.json" .gpu.host_only_launches)"
expect "soak: every launch in or out of a window" \
	"$(jq '.kernels + .launches_between_windows + .unjoined >= 600' "$S")" true
expect "soak: complete, nothing lost" "$(jq -c '[.complete, .lost_records, .errors]' "$S")" \
	'[true,0,[]]'
[ "$(jq '.samples' "$S")" -ge 2 ] || fail "soak: $(jq .samples "$S") memory samples"
expect "soak: memory read" "$(jq '.rss_mb.max > 0 and .rss_mb.last > 0 and
	.rss_mb.first <= .rss_mb.max and .rss_mb.at_tenth <= .rss_mb.max' "$S")" true
# Samples every 50 ms over at least 0.6 s: the second half has enough for both slopes.
expect "soak: slopes" "$(jq '.rss_mb.second_half_mb_per_min != null and
	.trace_mb_per_hour_second_half != null' "$S")" true
expect "soak: the trace's size" "$(jq --argjson b "$(stat -c %s "$WORK/s/soak.trace")" \
	'(.trace_mb * 1e6 - $b) | fabs < 1' "$S")" true
expect "soak: trace rate" "$(jq '.trace_mb_per_hour > 0' "$S")" true

# The command's own exit status comes back.
rc=0
bash "$SOURCE_ROOT/scripts/soak_sampled.sh" "$WORK/f" -- sh -c 'exit 3' >/dev/null 2>&1 || rc=$?
expect "soak: command's exit status" "$rc" 3
# A command that ends well but wrote no trace is not a soak.
rc=0
bash "$SOURCE_ROOT/scripts/soak_sampled.sh" "$WORK/n" -- sh -c 'exit 0' >/dev/null 2>"$WORK/n.err" ||
	rc=$?
expect "soak: no trace" "$rc" 1
grep -q "wrote no trace" "$WORK/n.err" || fail "soak: no trace: $(cat "$WORK/n.err")"
echo "soak_tool: ok"
