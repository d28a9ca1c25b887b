#!/bin/sh
# SPDX-License-Identifier: MIT
# The recording modes on the fake CUPTI (tests/fake_cuda/fake_cupti.c). sampled: CUPTI's kinds
# and API records on in windows only (GPUSHIM_WINDOW_MS every GPUSHIM_WINDOW_EVERY_MS), each
# window a CUPTI_ON note and its end a CUPTI_OFF note: every launch has a GPU record or falls
# between windows, some do not have one, every record is joined, and the report says it is
# sampled, how much the windows cover, and extrapolates. host: no CUPTI at all. full: every
# launch recorded. The program's output is unchanged in every mode, also with the
# application's own CUPTI client (its records all its own) while windows come and go. Without
# API records, the join by launch order pairs within each window. This is sampled mode with
# CUPTI kept attached between windows (GPUSHIM_CUPTI_DETACH=0); shim_detach.sh tests the
# default, detached between windows.
. "$(dirname "$0")/lib.sh"

use_fake_cupti
export GPUSHIM_CUPTI_DETACH=0

# 600 launches 1 ms apart: ~0.6 s, windows of 20 ms every 100 ms.
run_plain "$WORK/plain.txt" paced 600 1000
GPUSHIM_MODE=sampled GPUSHIM_WINDOW_MS=20 GPUSHIM_WINDOW_EVERY_MS=100 FAKE_CUPTI_LOADS="$WORK/s.loads" \
	run_shim "$WORK/s.txt" "$WORK/s.trace" paced 600 1000
cmp "$WORK/plain.txt" "$WORK/s.txt" || fail "sampled: output changed by the shim"
"$GPUSHIM_BIN" info --format json "$WORK/s.trace" >"$WORK/s.info"
"$GPUSHIM_BIN" report --format json "$WORK/s.trace" >"$WORK/s.json"
"$GPUSHIM_BIN" report "$WORK/s.trace" >"$WORK/s.txt"
expect "sampled: mode note" \
	"$(jq -r '[.notes[] | select(.kind == "mode") | .text] | join(";")' "$WORK/s.info")" \
	"sampled: GPU timestamps for 20 ms every 100 ms; counters asked every 10000 us"
ons=$(jq '[.notes[] | select(.kind == "cupti_on" and (.text | startswith("sampled window")))] | length' "$WORK/s.info")
offs=$(jq '[.notes[] | select(.kind == "cupti_off" and (.text | startswith("sampled window")))] | length' "$WORK/s.info")
# The first window opens one period in, not at the start, where a program loads its kernels:
# CUPTI instruments a kernel's code as it loads, and one loaded while its records were on
# kept costing GPU time after they went off (H200). A slow machine may open fewer, never none;
# the last may be open at the exit.
[ "$ons" -ge 2 ] && [ "$offs" -ge $((ons - 1)) ] && [ "$offs" -le "$ons" ] ||
	fail "sampled: windows opened $ons, closed $offs"
"$GPUSHIM_BIN" dump --format jsonl "$WORK/s.trace" |
	jq -s '([.[] | select(.type == "note" and .kind == 2 and .text_str == "sampled window 1") | .ts_ns] | .[0]) as $w1 |
		{first_window: $w1, before: [.[] | select(.type == "gpu_kernel" and .start_ns < $w1)] | length,
		 start_note: [.[] | select(.type == "note" and .kind == 3 and
			(.text_str | startswith("sampled: no GPU timestamps before window 1, 100 ms in")))] | length,
		 in_ms: (($w1 - ([.[] | select(.type == "note" and .kind == 3 and
			(.text_str | startswith("sampled: no GPU timestamps"))) | .ts_ns] | .[0])) / 1e6)}' \
	>"$WORK/first.json"
jq -e '.first_window != null and .before == 0 and .start_note == 1 and .in_ms >= 95' "$WORK/first.json" >/dev/null ||
	fail "sampled: before the first window: $(cat "$WORK/first.json")"
# Kept attached, CUPTI is attached from the start (the API records of contexts made before
# the first window need it), the kernel records off: the kernel loaded so (the fake CUPTI's
# account: NAME ATTACHED RECORDS_ON).
[ -s "$WORK/s.loads" ] && ! grep -qv ' 1 0$' "$WORK/s.loads" ||
	fail "sampled: kernels loaded while their records were on: $(cat "$WORK/s.loads")"
# No window is made up for the start-up (a window opened just before the exit may hold none of
# the run's calls and not count).
w=$(jget "$WORK/s.json" .sampling.windows)
[ "$w" -le "$ons" ] && [ "$w" -ge $((ons - 1)) ] ||
	fail "sampled: the analysis counts $w windows, the trace has $ons"
kernels=$(jget "$WORK/s.json" .gpu.kernels)
between=$(jget "$WORK/s.json" .gpu.host_only_launches)
expect "sampled: unjoined" "$(jget "$WORK/s.json" .gpu.unjoined)" 0
expect "sampled: mode" "$(jget "$WORK/s.json" .sampling.mode)" sampled
# Each launch inside a window has its record; those between windows (the stretches from
# a window's end note to the next one's start note) may not: none is missing elsewhere.
[ "$kernels" -gt 0 ] && [ "$kernels" -lt 600 ] ||
	fail "sampled: $kernels of 600 launches recorded (none, or all: no window closed)"
[ $((kernels + between)) -ge 600 ] ||
	fail "sampled: $kernels recorded + $between between windows < 600 launches"
windows=$(jget "$WORK/s.json" .sampling.windows)
[ "$windows" -ge 2 ] || fail "sampled: $windows windows in the analysis"
jq -e '.sampling.covered_pct > 1 and .sampling.covered_pct < 60' "$WORK/s.json" >/dev/null ||
	fail "sampled: coverage $(jget "$WORK/s.json" .sampling.covered_pct)%"
jq -e '[.attribution[] | select(.status == "measured") | .est_ns > 0] | all' "$WORK/s.json" \
	>/dev/null || fail "sampled: a measured cause without its estimate"
grep -q "^  covered  sampled: GPU timestamps in $windows windows (20 ms every 100 ms)" \
	"$WORK/s.txt" || fail "sampled: the report's first screen: $(sed -n 5,12p "$WORK/s.txt")"
grep -q "^verdict: .*; sampled: $windows windows, " "$WORK/s.txt" ||
	fail "sampled: the verdict does not say so: $(grep '^verdict' "$WORK/s.txt")"
grep -q "^  replayed [0-9]* windows, each on its own" "$WORK/s.txt" ||
	fail "sampled: not replayed window by window: $(grep -A1 '^causes' "$WORK/s.txt")"
# whatif replays a whole run: it says why it cannot, and the report is the one to read.
set +e
"$GPUSHIM_BIN" whatif "$WORK/s.trace" >/dev/null 2>"$WORK/whatif.err"
rc=$?
set -e
expect "sampled: whatif exit" "$rc" 1
grep -q "recorded in sampled mode (GPU timestamps in $windows windows" "$WORK/whatif.err" ||
	fail "sampled: whatif: $(cat "$WORK/whatif.err")"
# The API records go on 50 ms before each window's kinds (work launched just before a window
# and run in it keeps its call): the launches (1 ms apart) in the 50 ms before each window but
# the first have their records, at least 5 a window (a late writer may shorten the lead; with
# no lead there is at most the one launch in flight while the records go on).
"$GPUSHIM_BIN" dump --format jsonl "$WORK/s.trace" |
	jq -s '[.[] | select(.type == "note" and .kind == 2 and (.text_str | test("^sampled window [0-9]+$")))
		| .ts_ns] as $on | [.[] | select(.type == "gpu_api") | .start_ns] as $api |
		[$on[] as $t | [$api[] | select(. < $t and . >= $t - 50000000)] | length] |
		{windows: length, lead: add}' >"$WORK/lead.json"
jq -e '.windows >= 1 and .lead >= 5 * .windows' "$WORK/lead.json" >/dev/null ||
	fail "sampled: API records in the 50 ms before the windows: $(cat "$WORK/lead.json")"
# Kernels in windows are joined through CUPTI's API records, not only by launch order: also
# those of a context created between two windows (110 ms after cuInit: windows of 20 ms every
# 200 ms, the writer meets their edges within 25 ms),
# which gives no API record at all unless the shim turns them on for its creation.
jq -e '.gpu.join.by_api_interval > 0' "$WORK/s.json" >/dev/null ||
	fail "sampled: no kernel joined by API record: $(jq -c .gpu.join "$WORK/s.json")"
GPUSHIM_MODE=sampled GPUSHIM_WINDOW_MS=20 GPUSHIM_WINDOW_EVERY_MS=200 GPUSHIM_PM_INTERVAL_US=2000 \
	run_shim "$WORK/late.txt" "$WORK/late.trace" paced 400 1000 110
# Sampled mode's counters come every 10 ms unless GPUSHIM_PM_INTERVAL_US says otherwise.
expect "sampled: counters' interval as set" \
	"$("$GPUSHIM_BIN" info --format json "$WORK/late.trace" | jq -r '.notes[] | select(.kind == "mode") | .text')" \
	"sampled: GPU timestamps for 20 ms every 200 ms; counters asked every 2000 us"
"$GPUSHIM_BIN" report --format json "$WORK/late.trace" >"$WORK/late.json"
jq -e '.gpu.kernels > 0 and .gpu.unjoined == 0 and .gpu.join.by_launch_order == 0 and
	.gpu.join.by_api_interval == .gpu.kernels' "$WORK/late.json" >/dev/null ||
	fail "sampled, context made between windows: $(jq -c '.gpu | {kernels, unjoined, join}' "$WORK/late.json")"
"$GPUSHIM_BIN" info --format json "$WORK/late.trace" |
	jq -e '[.notes[] | select(.kind == "cupti_off" and (.text | startswith("sampled window 1 ends")))
		| .t_ns] | length == 1' >/dev/null || fail "sampled, late context: window 1 never ended"

# A kernel still running when its kind goes off gets an end far later than it ran (a CUDA
# graph's, on the H200: 75-176 ms; the fake gives 50 ms to kernels of 4 ms, one launched
# every 5 ms, so most windows close on one). The shim drops such a record and notes it with a
# CUPTI_OFF note at its start: no kernel kept spans a window's close, and the fake GPU (one
# stream) is busy for less time than the windows cover (with the late ends kept: 2.9 times
# longer).
FAKE_CUPTI_OP_NS=4000000 FAKE_CUPTI_LATE_END_NS=50000000 GPUSHIM_MODE=sampled \
	GPUSHIM_WINDOW_MS=20 GPUSHIM_WINDOW_EVERY_MS=100 \
	run_shim "$WORK/edge.txt" "$WORK/edge.trace" paced 200 5000
"$GPUSHIM_BIN" dump --format jsonl "$WORK/edge.trace" |
	jq -s '[.[] | select(.type == "note" and .kind == 3) | .ts_ns] as $off |
		[.[] | select(.type == "note" and .kind == 3 and
			(.text_str | test("^records dropped at sampled window [0-9]+'"'"'s close: [0-9]+ in all")))] as $drop |
		[.[] | select(.type == "gpu_kernel") | .start_ns as $s | .end_ns as $e |
			select([$off[] | select(. > $s and . < $e)] | length > 0)] as $cross |
		{kernels: [.[] | select(.type == "gpu_kernel")] | length, crossing: ($cross | length),
		 drop_notes: ($drop | length)}' >"$WORK/edge.json"
jq -e '.kernels > 0 and .crossing == 0 and .drop_notes >= 1' "$WORK/edge.json" >/dev/null ||
	fail "sampled, kernels in flight at a close: $(cat "$WORK/edge.json")"
"$GPUSHIM_BIN" report --format json "$WORK/edge.trace" >"$WORK/edge.rep"
jq -e '.gpu.busy_ns < .sampling.covered_ns and .gpu.unjoined == 0' "$WORK/edge.rep" >/dev/null ||
	fail "sampled, kernels in flight at a close: $(jq -c '{busy: .gpu.busy_ns, covered: .sampling.covered_ns, unjoined: .gpu.unjoined}' "$WORK/edge.rep")"

# Without any API record (a context CUPTI gives none for) every kernel is joined by launch
# order, and the pairs are made afresh in each window: a GPU slower than the launches (2 ms
# kernels every 1.5 ms) has a kernel in flight at every close, whose record is dropped, and
# kernels queued behind it that start after the close. Each kernel must be joined to its own
# launch: the fake CUPTI's correlation id of a kernel is its launch's number (the program's
# n-th launch). Paired across the whole trace, each window's kernels took the launch before
# their own (~100 ms earlier: the last of the window before); paired from each window's start
# only, the kernels queued behind a dropped one did. A launch in flight while the kinds go on
# may have its record or not: the join leaves it out (its kernel unjoined, if it had one).
FAKE_CUPTI_NO_API=1 FAKE_CUPTI_OP_NS=2000000 FAKE_CUPTI_LATE_END_NS=50000000 GPUSHIM_MODE=sampled \
	GPUSHIM_WINDOW_MS=20 GPUSHIM_WINDOW_EVERY_MS=100 \
	run_shim "$WORK/q.txt" "$WORK/q.trace" paced 300 1500
"$GPUSHIM_BIN" report --format json "$WORK/q.trace" >"$WORK/q.json"
jq -e '.gpu.kernels > 0 and .gpu.join.by_launch_order > 0 and .gpu.join.by_api_interval == 0 and
	.gpu.unjoined <= 2 * .sampling.windows' "$WORK/q.json" >/dev/null ||
	fail "order join: $(jq -c '.gpu | {kernels, unjoined, join}' "$WORK/q.json")"
"$GPUSHIM_BIN" info --format json "$WORK/q.trace" |
	jq -e '[.notes[] | select(.kind == "cupti_off" and
		(.text | test("^records dropped at sampled window [0-9]+.s close")))] | length >= 1' \
	>/dev/null || fail "order join: no kernel dropped at a close"
# Kernels in order of start: each one's correlation id (the trace) and joined call (the CSV).
"$GPUSHIM_BIN" dump --format jsonl "$WORK/q.trace" |
	jq -r 'select(.type == "gpu_kernel") | "\(.start_ns) \(.cupti_corr)"' | sort -n >"$WORK/q.corr"
"$GPUSHIM_BIN" export --format csv -o "$WORK/q.csv" "$WORK/q.trace"
col() {	# col FILE NAME...: those columns of a CSV table, by its header
	f=$1
	shift
	awk -F, -v want="$*" '{ sub(/\r$/, "") }
		FNR == 1 { n = split(want, w, " "); for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ line = ""; for (i = 1; i <= n; i++) line = line (i > 1 ? " " : "") $(c[w[i]]); print line }' "$f"
}
col "$WORK/q.csv/calls.csv" start_ns call_id kind | awk '$3 == "launch"' | sort -n |
	awk '{ print $2, NR }' >"$WORK/q.launches"
col "$WORK/q.csv/kernels.csv" start_ns call_id | sort -n >"$WORK/q.kernels"
[ "$(wc -l <"$WORK/q.corr")" = "$(wc -l <"$WORK/q.kernels")" ] || fail "order join: kernels differ"
wrong=$(paste -d' ' "$WORK/q.corr" "$WORK/q.kernels" |
	awk 'NR == FNR { n[$1] = $2; next } $4 != "" && n[$4] != $2 { print $2 "->" n[$4] }' \
		"$WORK/q.launches" - | head -3)
[ -z "$wrong" ] || fail "order join: kernels joined to another launch (its number -> the joined one's): $wrong"
"$GPUSHIM_BIN" report "$WORK/q.trace" >"$WORK/q.txt"
grep -q "^  joined   $(jget "$WORK/q.json" .gpu.join.by_launch_order) of $(jget "$WORK/q.json" .gpu.kernels) GPU operations to their calls by launch order (CUPTI gave no API record for them); $(jget "$WORK/q.json" .gpu.unjoined) unjoined$" \
	"$WORK/q.txt" || fail "order join: the report's line: $(grep '^  joined' "$WORK/q.txt")"

# full: every launch recorded; host: none, and no CUPTI at all.
GPUSHIM_MODE=full FAKE_CUPTI_LOADS="$WORK/f.loads" run_shim "$WORK/f.txt" "$WORK/f.trace" paced 300 100
[ -s "$WORK/f.loads" ] && ! grep -qv ' 1 1$' "$WORK/f.loads" ||
	fail "full: kernels not loaded with their records on: $(cat "$WORK/f.loads")"
"$GPUSHIM_BIN" report --format json "$WORK/f.trace" >"$WORK/f.json"
expect "full: kernels" "$(jget "$WORK/f.json" .gpu.kernels)" 300
expect "full: mode" "$(jget "$WORK/f.json" .sampling.mode)" full
expect "full: windows" "$(jget "$WORK/f.json" .sampling.windows)" null
run_plain "$WORK/hplain.txt" paced 300 100
GPUSHIM_MODE=host run_shim "$WORK/h.txt" "$WORK/h.trace" paced 300 100
cmp "$WORK/hplain.txt" "$WORK/h.txt" || fail "host: output changed by the shim"
"$GPUSHIM_BIN" report --format json "$WORK/h.trace" >"$WORK/h.json"
"$GPUSHIM_BIN" info --format json "$WORK/h.trace" >"$WORK/h.info"
expect "host: kernels" "$(jget "$WORK/h.json" .gpu.kernels)" 0
expect "host: source" "$(jget "$WORK/h.json" .gpu.source)" host
expect "host: launches" "$(jget "$WORK/h.json" .counts.launches)" 300
jq -e '[.notes[] | select(.kind == "cupti_off" and .text == "GPUSHIM_MODE=host")] | length == 1' \
	"$WORK/h.info" >/dev/null || fail "host: no note that CUPTI stayed off"
jq -e '[.notes[] | select(.kind == "cupti_on")] | length == 0' "$WORK/h.info" >/dev/null ||
	fail "host: CUPTI started"
# gpushim run --mode sets it; an unknown mode is a usage error.
"$GPUSHIM_BIN" run -o "$WORK/r.trace" --mode host -- "$FAKE_CLIENT" paced 10 10 >/dev/null
"$GPUSHIM_BIN" info --format json "$WORK/r.trace" | jq -e '[.notes[] | select(.kind == "mode" and .text == "host")] | length == 1' >/dev/null ||
	fail "run --mode host: no host mode note"
set +e
"$GPUSHIM_BIN" run --mode often -- true 2>"$WORK/usage.err"
rc=$?
set -e
expect "run --mode often: exit" "$rc" 2
grep -q "full, sampled or host" "$WORK/usage.err" || fail "run --mode often: $(cat "$WORK/usage.err")"

# The application's own client while windows open and close: it gets what it gets alone.
"$CUPTI_CLIENT" cycles >"$WORK/c.plain" 2>/dev/null
GPUSHIM_MODE=sampled GPUSHIM_WINDOW_MS=10 GPUSHIM_WINDOW_EVERY_MS=20 LD_PRELOAD="$GPUSHIM_SHIM" \
	GPUSHIM_OUTPUT="$WORK/c.trace" "$CUPTI_CLIENT" cycles >"$WORK/c.out" 2>"$WORK/c.err"
cmp "$WORK/c.plain" "$WORK/c.out" ||
	fail "client: its output changed by the sampled shim: $(cat "$WORK/c.out") (alone: $(cat "$WORK/c.plain"))"
"$GPUSHIM_BIN" report --format json "$WORK/c.trace" >"$WORK/c.json"
expect "client: unjoined" "$(jget "$WORK/c.json" .gpu.unjoined)" 0
echo "shim_sampled: ok ($kernels of 600 launches recorded in $windows windows)"
