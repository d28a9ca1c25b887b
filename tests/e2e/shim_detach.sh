#!/bin/sh
# SPDX-License-Identifier: MIT
# Sampled mode with CUPTI detached between windows (GPUSHIM_CUPTI_DETACH=1, asked for by name:
# not the default, since detaching crashed PyTorch programs on the H200) on the fake CUPTI,
# which detaches as CUPTI 13 does (tests/fake_cuda/fake_cupti.c: attached again, the context
# made before gives no API records; and it ends the process where the H200's CUPTI broke it:
# a detach after API records were ever on, a detach with CUDA graphs in use, a graph call
# while detached). Each window after the first attaches CUPTI again (its note says how long
# the detach and the attach took); launches outside the windows have no GPU record, those
# inside have theirs; no API record is ever asked for, so every kernel is joined to its
# launch by order, window by window: a window that lost its last kernels
# (still running at the close: a detach's forced flush gives them unfinished) shifts no pair
# of the next. The counters are off, and say why. The program's output is unchanged, also
# with the application's own CUPTI client starting sessions while CUPTI is detached.
. "$(dirname "$0")/lib.sh"

use_fake_cupti
export GPUSHIM_MODE=sampled GPUSHIM_WINDOW_MS=20 GPUSHIM_WINDOW_EVERY_MS=100
export GPUSHIM_CUPTI_DETACH=1
unset GPUSHIM_PM

# 600 launches 1 ms apart: ~0.6 s, windows of 20 ms every 100 ms.
run_plain "$WORK/plain.txt" paced 600 1000
FAKE_CUPTI_LOADS="$WORK/d.loads" run_shim "$WORK/d.txt" "$WORK/d.trace" paced 600 1000
cmp "$WORK/plain.txt" "$WORK/d.txt" || fail "detach: output changed by the shim"
"$GPUSHIM_BIN" info --format json "$WORK/d.trace" >"$WORK/d.info"
"$GPUSHIM_BIN" report --format json "$WORK/d.trace" >"$WORK/d.json"
expect "detach: mode note" \
	"$(jq -r '[.notes[] | select(.kind == "mode") | .text] | join(";")' "$WORK/d.info")" \
	"sampled: GPU timestamps for 20 ms every 100 ms; CUPTI detached between windows"
expect "detach: counters" \
	"$(jq -r '[.notes[] | select(.kind == "pm_off") | .text] | join(";")' "$WORK/d.info")" \
	"CUPTI detached between sampled windows (no counters; GPUSHIM_CUPTI_DETACH=0 keeps it attached)"
ons=$(jq '[.notes[] | select(.kind == "cupti_on" and (.text | startswith("sampled window")))] | length' "$WORK/d.info")
attached=$(jq '[.notes[] | select(.kind == "cupti_on" and
	(.text | test("^sampled window [0-9]+ \\(CUPTI detached in [0-9.]+ ms, attached again in [0-9.]+ ms; buffers back in detaching, not decoded: 0\\)$")))] | length' "$WORK/d.info")
first=$(jq '[.notes[] | select(.kind == "cupti_on" and
	(.text | test("^sampled window 1 \\(CUPTI attached in [0-9.]+ ms\\)$")))] | length' "$WORK/d.info")
# CUPTI is first attached by the first window, one period in: the program's kernels, loaded
# at their first launches before it, were loaded with CUPTI never attached (CUPTI
# instruments a kernel's code as it loads, and one loaded while attached kept costing GPU
# time on the H200 after a detach; the fake CUPTI's account: NAME ATTACHED RECORDS_ON). The
# windows after the first find CUPTI detached, but for those whose detach was called off (it
# waits for the program's next CUDA call to return; on a loaded machine the next window may
# open first): some, never more than one a window.
[ "$ons" -ge 2 ] && [ "$first" = 1 ] && [ "$attached" -ge 1 ] && [ "$attached" -le $((ons - 1)) ] ||
	fail "detach: $ons windows opened, the first attaching CUPTI: $first, $attached of the others attaching it again"
[ -s "$WORK/d.loads" ] && ! grep -qv ' 0 0$' "$WORK/d.loads" ||
	fail "detach: kernels loaded while CUPTI was attached: $(cat "$WORK/d.loads")"
kernels=$(jget "$WORK/d.json" .gpu.kernels)
between=$(jget "$WORK/d.json" .gpu.host_only_launches)
[ "$kernels" -gt 0 ] && [ "$kernels" -lt 600 ] ||
	fail "detach: $kernels of 600 launches recorded"
[ $((kernels + between)) -ge 600 ] ||
	fail "detach: $kernels recorded + $between between windows < 600 launches"
# A launch in flight while the kinds go on or off may have its record or not: the join by
# order leaves such a call out (its kernel unjoined: at most one an edge, ~1 run in 20 here).
jq -e --argjson w "$ons" '.gpu.unjoined <= 2 * ($w + 1) and .gpu.join.by_launch_order > 0 and
	.gpu.join.by_api_interval == 0 and .gpu.join.by_launch_order == .gpu.kernels - .gpu.unjoined' \
	"$WORK/d.json" >/dev/null ||
	fail "detach: the join: $(jq -c '.gpu | {kernels, unjoined, join}' "$WORK/d.json")"
expect "detach: records without timestamps" "$(jget "$WORK/d.info" .gpu_zero_timestamps)" 0
# The report's first screen says how much of the join is by order, and why.
"$GPUSHIM_BIN" report "$WORK/d.trace" >"$WORK/d.txt"
grep -q "^  joined   $(jget "$WORK/d.json" .gpu.join.by_launch_order) of $kernels GPU operations to their calls by launch order (CUPTI gave no API record for them: none is asked for while CUPTI is detached between windows); $(jget "$WORK/d.json" .gpu.unjoined) unjoined$" \
	"$WORK/d.txt" || fail "detach: the report's join line: $(grep '^  joined' "$WORK/d.txt")"

# A GPU slower than the launches (2 ms kernels launched every 1.5 ms): each window closes on
# kernels queued or running, which the detach's flush gives unfinished. They are dropped at
# the close and noted, not counted as records without timestamps, and their launches stay
# unpaired: each kernel kept is joined to a launch of its own window, less than a window
# before it (a pairing shifted by a lost kernel takes one of the window before: ~100 ms).
FAKE_CUPTI_OP_NS=2000000 FAKE_CUPTI_UNFINISHED=1 \
	run_shim "$WORK/q.txt" "$WORK/q.trace" paced 300 1500
"$GPUSHIM_BIN" info --format json "$WORK/q.trace" >"$WORK/q.info"
"$GPUSHIM_BIN" report --format json "$WORK/q.trace" >"$WORK/q.json"
# (The exit's flush gives what still runs then unfinished too: counted as records without
# timestamps, and allowed only where the run ended inside a window.)
jq -e '([.notes[] | select(.text | test("^sampled window [0-9]+"))] | sort_by(.ts_ns) | last |
	.kind == "cupti_on") or .gpu_zero_timestamps == 0' "$WORK/q.info" >/dev/null ||
	fail "queued: $(jget "$WORK/q.info" .gpu_zero_timestamps) records without timestamps, the last window closed"
jq -e '[.notes[] | select(.kind == "cupti_off" and
	(.text | test("^records dropped at sampled window [0-9]+.s close")))] | length >= 1' \
	"$WORK/q.info" >/dev/null || fail "queued: no drop noted at a close"
jq -e '.gpu.kernels > 0 and .gpu.unjoined <= 2 * .sampling.windows and
	.gpu.join.by_launch_order > 0' "$WORK/q.json" >/dev/null ||
	fail "queued: the join: $(jq -c '.gpu | {kernels, unjoined, join}' "$WORK/q.json")"
"$GPUSHIM_BIN" export --format csv -o "$WORK/q.csv" "$WORK/q.trace"
late=$(awk -F, '{ sub(/\r$/, "") }
	NR == FNR { if (FNR > 1) t[$2] = $6; next }
	FNR == 1 { for (i = 1; i <= NF; i++) { if ($i == "start_ns") s = i; if ($i == "call_id") c = i }; next }
	$c == "" { next }
	!($c in t) { print "a call not in the table"; next }
	{ d = $s - t[$c]; if (d < 0 || d >= 20000000) print d }' \
	"$WORK/q.csv/calls.csv" "$WORK/q.csv/kernels.csv" | head -3)
[ -z "$late" ] || fail "queued: kernels joined to a launch not of their window (ns after it): $late"

# The application's client starts its sessions while CUPTI is detached: it gets what it gets
# alone, and the shim's windows come back after each.
"$CUPTI_CLIENT" slow >"$WORK/c.plain" 2>/dev/null
GPUSHIM_WINDOW_MS=10 GPUSHIM_WINDOW_EVERY_MS=20 LD_PRELOAD="$GPUSHIM_SHIM" \
	GPUSHIM_OUTPUT="$WORK/c.trace" "$CUPTI_CLIENT" slow >"$WORK/c.out" 2>"$WORK/c.err"
cmp "$WORK/c.plain" "$WORK/c.out" ||
	fail "client: its output changed: $(cat "$WORK/c.out") (alone: $(cat "$WORK/c.plain"))"
"$GPUSHIM_BIN" info --format json "$WORK/c.trace" >"$WORK/c.info"
jq -e '[.notes[] | select(.kind == "cupti_off" and (.text | startswith("yielded to the application")))] | length == 3' \
	"$WORK/c.info" >/dev/null || fail "client: not yielded three times"
jq -e '[.notes[] | select(.kind == "cupti_on" and (.text | test("CUPTI detached in")))] | length >= 1' \
	"$WORK/c.info" >/dev/null || fail "client: CUPTI not detached between windows"
"$GPUSHIM_BIN" report --format json "$WORK/c.trace" >"$WORK/c.json"
jq -e '.gpu.kernels > 0 and .gpu.unjoined <= 2 * .sampling.windows' "$WORK/c.json" >/dev/null ||
	fail "client: the join: $(jq -c '.gpu | {kernels, unjoined, join}' "$WORK/c.json")"

# A detach is armed at a close and made at the exit of the next CUDA call (cuptiFinalize from
# another thread crashed PyTorch on the H200; the fake CUPTI aborts on one made outside such a
# callback). A program with no CUDA call for longer than the shim waits (200 ms) has the detach
# called off, the subscription given back (the next close's is not refused: no "another tool"
# warning) and CUPTI kept attached for that window; the others detach.
# Launches 400 ms apart, windows of 20 ms every 500 ms: some closes have a launch within
# 200 ms (detached), some not (called off by the writer).
run_plain "$WORK/idle.plain" paced 8 400000
GPUSHIM_WINDOW_MS=20 GPUSHIM_WINDOW_EVERY_MS=500 \
	run_shim "$WORK/idle.txt" "$WORK/idle.trace" paced 8 400000
cmp "$WORK/idle.plain" "$WORK/idle.txt" || fail "idle: output changed by the shim"
"$GPUSHIM_BIN" info --format json "$WORK/idle.trace" >"$WORK/idle.info"
jq -e '([.notes[] | select(.kind == "warning")] | length == 0) and
	([.notes[] | select(.kind == "cupti_on" and (.text | test("^sampled window [0-9]+$")))] | length >= 1) and
	([.notes[] | select(.kind == "cupti_on" and (.text | test("attached again in")))] | length >= 1)' \
	"$WORK/idle.info" >/dev/null ||
	fail "idle: $(jq -c '[.notes[] | select(.kind == "cupti_on" or .kind == "warning") | .text]' "$WORK/idle.info")"

# A finalize that fails: noted once, CUPTI left attached, the shim's subscription given back
# (each later close subscribes again: no "another tool" warning), the output unchanged.
FAKE_CUPTI_FINALIZE_FAILS=1 run_shim "$WORK/ff.txt" "$WORK/ff.trace" paced 600 1000
cmp "$WORK/plain.txt" "$WORK/ff.txt" || fail "failed finalize: output changed by the shim"
"$GPUSHIM_BIN" info --format json "$WORK/ff.trace" >"$WORK/ff.info"
jq -e '([.notes[] | select(.kind == "warning")] | map(.text) ==
	["CUPTI could not be detached between windows (999)"]) and
	([.notes[] | select(.kind == "cupti_on" and (.text | test("attached again in")))] | length == 0) and
	([.notes[] | select(.kind == "cupti_on" and (.text | test("^sampled window [0-9]+$")))] | length >= 2)' \
	"$WORK/ff.info" >/dev/null ||
	fail "failed finalize: $(jq -c '[.notes[] | select(.kind == "cupti_on" or .kind == "warning") | .text]' "$WORK/ff.info")"

# Another tool subscribed to CUPTI's callbacks past the shim's interposers (as XLA's profiler
# reaches libcupti through its own dlsym): CUPTI is never detached, which would end its session.
FAKE_CUPTI_SUBSCRIBER=1 run_shim "$WORK/sub.txt" "$WORK/sub.trace" paced 300 1000
expect "subscriber: the program's output" "$(cat "$WORK/sub.txt")" "paced: 300 launches"
"$GPUSHIM_BIN" info --format json "$WORK/sub.trace" >"$WORK/sub.info"
jq -e '([.notes[] | select(.text == "another tool is subscribed to CUPTI'"'"'s callbacks: CUPTI stays attached from here on")] | length == 1) and
	([.notes[] | select(.kind == "cupti_on" and (.text | test("CUPTI detached in")))] | length == 0) and
	([.notes[] | select(.kind == "cupti_on" and (.text | startswith("sampled window")))] | length >= 2)' \
	"$WORK/sub.info" >/dev/null ||
	fail "subscriber: $(jq -c '[.notes[] | select(.kind == "cupti_on" or .kind == "warning") | .text]' "$WORK/sub.info")"

# The application subscribes to CUPTI's callbacks while a detach is armed (the shim holding
# the one subscription, from a close to the next CUDA call): its cuptiSubscribe calls the
# detach off first and succeeds, its callbacks come to the end, and CUPTI is not detached after
# (the next close finds the subscription taken: one warning). Without the settle the client's
# subscribe fails (MULTIPLE_SUBSCRIBERS, 39); a detach after would end its session.
"$CUPTI_CLIENT" subscribe >"$WORK/s.plain" 2>/dev/null
expect "subscribe alone" "$(cat "$WORK/s.plain")" \
	"subscribe: subscribe 0, 300 callbacks, 100 in the last 100 ms, 0 failed CUPTI calls"
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/s.trace" "$CUPTI_CLIENT" subscribe \
	>"$WORK/s.out" 2>"$WORK/s.err"
cmp "$WORK/s.plain" "$WORK/s.out" ||
	fail "subscribe while armed: $(cat "$WORK/s.out") (alone: $(cat "$WORK/s.plain"))"
grep -q "subscribe: held when asked 1" "$WORK/s.err" ||
	fail "subscribe while armed: the shim never held the subscription: $(cat "$WORK/s.err")"
"$GPUSHIM_BIN" info --format json "$WORK/s.trace" >"$WORK/s.info"
jq -e '(.notes | map(select(.text == "another tool is subscribed to CUPTI'"'"'s callbacks: CUPTI stays attached from here on")) | .[0].ts_ns) as $n |
	$n != null and ([.notes[] | select(.text | startswith("another tool"))] | length == 1) and
	([.notes[] | select(.kind == "cupti_on" and (.text | test("CUPTI detached in")) and .ts_ns > $n)] | length == 0) and
	([.notes[] | select(.kind == "cupti_on" and (.text | startswith("sampled window")) and .ts_ns > $n)] | length >= 1)' \
	"$WORK/s.info" >/dev/null ||
	fail "subscribe while armed: $(jq -c '[.notes[] | select(.kind == "cupti_on" or .kind == "warning") | [.ts_ns, .text]]' "$WORK/s.info")"

# A client that turns API records on (Kineto's runtime kind): CUPTI is not detached after it.
"$CUPTI_CLIENT" slowapi >"$WORK/a.plain" 2>/dev/null
GPUSHIM_WINDOW_MS=10 GPUSHIM_WINDOW_EVERY_MS=20 LD_PRELOAD="$GPUSHIM_SHIM" \
	GPUSHIM_OUTPUT="$WORK/a.trace" "$CUPTI_CLIENT" slowapi >"$WORK/a.out" 2>"$WORK/a.err"
cmp "$WORK/a.plain" "$WORK/a.out" ||
	fail "client with API records: its output changed: $(cat "$WORK/a.out") (alone: $(cat "$WORK/a.plain")) $(cat "$WORK/a.err")"
"$GPUSHIM_BIN" info --format json "$WORK/a.trace" >"$WORK/a.info"
jq -e '(.notes | map(select(.text == "the application'"'"'s CUPTI client turned API records on: CUPTI stays attached from here on")) | .[0].ts_ns) as $n |
	$n != null and ([.notes[] | select(.kind == "cupti_on" and (.text | test("CUPTI detached in")) and .ts_ns > $n)] | length == 0) and
	([.notes[] | select(.kind == "cupti_on" and (.text | test("CUPTI detached in")))] | length >= 1)' \
	"$WORK/a.info" >/dev/null ||
	fail "client with API records: $(jq -c '[.notes[] | select(.kind == "cupti_on" or .kind == "warning") | [.ts_ns, .text]]' "$WORK/a.info")"

# CUDA graphs: CUPTI is attached before the first graph call (if detached then) and stays
# attached; the windows go on. The fake CUPTI aborts on a graph call while detached and on a
# detach once graphs are in use, as the H200's broke graph loops.
run_plain "$WORK/g.plain" pacedgraph 600 1000
run_shim "$WORK/g.txt" "$WORK/g.trace" pacedgraph 600 1000
cmp "$WORK/g.plain" "$WORK/g.txt" || fail "graphs: output changed by the shim: $(cat "$WORK/g.txt")"
"$GPUSHIM_BIN" info --format json "$WORK/g.trace" >"$WORK/g.info"
jq -e '[.notes[] | select(.text | test("^CUDA graphs in use: CUPTI stays attached from here on(, attached now)? \\([0-9.]+ ms\\)$"))] | length == 1' \
	"$WORK/g.info" >/dev/null || fail "graphs: the note: $(jq -c '[.notes[] | select(.text | startswith("CUDA graphs"))]' "$WORK/g.info")"
# Detached before the graphs, not after; windows open after them.
jq -e '(.notes | map(select(.text | startswith("CUDA graphs in use"))) | .[0].ts_ns) as $g |
	([.notes[] | select(.kind == "cupti_on" and (.text | test("CUPTI detached in")))] |
	 (map(select(.ts_ns < $g)) | length >= 1) and (map(select(.ts_ns > $g)) | length == 0)) and
	([.notes[] | select(.kind == "cupti_on" and .ts_ns > $g)] | length >= 1)' \
	"$WORK/g.info" >/dev/null ||
	fail "graphs: detaches around the graphs: $(jq -c '[.notes[] | select(.kind == "cupti_on" or (.text | startswith("CUDA graphs"))) | [.ts_ns, .text]]' "$WORK/g.info")"

# Sampled mode keeps CUPTI attached (with its counters and API records) unless the detach is
# asked for by name, and asking for it warns.
mode_of() {	# ENV... : the trace's mode note and its counters' off note
	env -u GPUSHIM_CUPTI_DETACH "$@" LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/m.trace" \
		"$FAKE_CLIENT" paced 50 1000 >/dev/null 2>"$WORK/m.err"
	"$GPUSHIM_BIN" info --format json "$WORK/m.trace" |
		jq -r '[.notes[] | select(.kind == "mode" or (.kind == "pm_off" and (.text | test("detached")))) | .text] | join(";")'
	rm -f "$WORK/m.trace"
}
expect "the default" "$(mode_of)" \
	"sampled: GPU timestamps for 20 ms every 100 ms; counters asked every 10000 us"
! grep -q "GPUSHIM_CUPTI_DETACH" "$WORK/m.err" || fail "the default warns: $(cat "$WORK/m.err")"
expect "counters by name" "$(mode_of GPUSHIM_PM=1)" \
	"sampled: GPU timestamps for 20 ms every 100 ms; counters asked every 10000 us"
expect "detach by name" "$(mode_of GPUSHIM_CUPTI_DETACH=1)" \
	"CUPTI detached between sampled windows (no counters; GPUSHIM_CUPTI_DETACH=0 keeps it attached);sampled: GPU timestamps for 20 ms every 100 ms; CUPTI detached between windows"
grep -q "GPUSHIM_CUPTI_DETACH=1: detaching CUPTI between windows crashed" "$WORK/m.err" ||
	fail "detach by name: no warning: $(cat "$WORK/m.err")"
expect "counters and detach by name" "$(mode_of GPUSHIM_PM=1 GPUSHIM_CUPTI_DETACH=1)" \
	"CUPTI detached between sampled windows (no counters; GPUSHIM_CUPTI_DETACH=0 keeps it attached);sampled: GPU timestamps for 20 ms every 100 ms; CUPTI detached between windows"
expect "attached by name" "$(mode_of GPUSHIM_CUPTI_DETACH=0)" \
	"sampled: GPU timestamps for 20 ms every 100 ms; counters asked every 10000 us"

# Full mode has no windows: the setting is ignored there.
GPUSHIM_MODE=full run_shim "$WORK/f.txt" "$WORK/f.trace" paced 300 100
expect "full: mode note" \
	"$("$GPUSHIM_BIN" info --format json "$WORK/f.trace" | jq -r '.notes[] | select(.kind == "mode") | .text')" \
	"full"
expect "full: kernels" "$("$GPUSHIM_BIN" report --format json "$WORK/f.trace" | jq .gpu.kernels)" 300
echo "shim_detach: ok ($kernels of 600 launches recorded, $attached windows attached again)"
