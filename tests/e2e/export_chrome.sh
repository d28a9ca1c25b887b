#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpushim export --format chrome: for every trace recorded on the H200, valid JSON whose launch
# slices and kernel slices match the report's counts, one flow start and one flow end per
# joined GPU operation, non-negative times, idle gaps named by known causes; a kernel name
# that needs escaping (quotes, commas, brackets, backslash, control bytes, non-UTF-8) survives
# the round trip (a byte that is not UTF-8 as U+FFFD); several traces become several processes,
# in Perfetto's format too (the same bytes to a pipe as to a file); --format defaults to chrome;
# usage errors give 2.
. "$(dirname "$0")/lib.sh"
G=$GPUSHIM_BIN
n=0
for t in "$SOURCE_ROOT"/tests/traces/h200/*.trace; do
	name=$(basename "$t" .trace)
	"$G" export --format chrome -o "$WORK/e.json" "$t" || fail "$name: export exited $?"
	"$G" report --format json "$t" >"$WORK/r.json"
	got=$(jq -c '[.traceEvents[] | select(.ph == "X")] as $x |
		[([$x[] | select(.args.kind == "launch")] | length),
		 ([$x[] | select(.cat == "kernel")] | length),
		 ([.traceEvents[] | select(.ph == "s")] | length),
		 ([.traceEvents[] | select(.ph == "f")] | length)]' "$WORK/e.json") ||
		fail "$name: export is not valid JSON"
	want=$(jq -c '[.counts.launches, .gpu.kernels, .gpu.joined, .gpu.joined]' "$WORK/r.json")
	expect "$name: launches, kernels, flow starts, flow ends" "$got" "$want"
	jq -e '[.traceEvents[] | select(.ts != null) | .ts >= 0 and (.dur // 0) >= 0] | all' \
		"$WORK/e.json" >/dev/null || fail "$name: negative time"
	jq -e '[.traceEvents[] | select(.cat == "idle") | .name] - ["host_sync", "launch_overhead",
		"cpu_bound", "memcpy", "allocation", "dependency", "module_load"] | length == 0' \
		"$WORK/e.json" >/dev/null || fail "$name: unknown idle gap name"
	# A counter-track value at each hardware-counter sample's start (and a 0 after holes).
	samples=$("$G" info --format json "$t" | jq '.record_types.pm_sample // 0')
	tracks=$(jq '[.traceEvents[] | select(.ph == "C" and (.name | test("counters")))] | length' "$WORK/e.json")
	[ "$tracks" -ge "$samples" ] && [ "$tracks" -le $((2 * samples)) ] ||
		fail "$name: $tracks counter events for $samples samples"
	n=$((n + 1))
done
[ "$n" -ge 20 ] || fail "only $n traces exported"

# A name that breaks naive JSON writers, recorded through the fake driver.
run_shim "$WORK/names.out" "$WORK/names.trace" names
"$G" export --format chrome "$WORK/names.trace" >"$WORK/names.json"
expect "escaped kernel name" \
	"$(jq -r '[.traceEvents[] | select(.args.kind == "launch") | .args.kernel][0]' "$WORK/names.json" | od -An -c | tr -s ' ')" \
	"$(printf 'k<"q",[1,2]>{a\\b}\n\t\001\357\277\275\n' | od -An -c | tr -s ' ')"

# Two traces (the same one twice): two processes with distinct ids.
t=$SOURCE_ROOT/tests/traces/h200/driver_api.trace
"$G" export --format chrome "$t" "$t" >"$WORK/two.json"
expect "two processes" "$(jq '[.traceEvents[] | select(.name == "process_name") | .pid] | unique | length' "$WORK/two.json")" 2

# Perfetto's format: to a pipe as to a file; two traces are two checked processes.
"$G" export --format perfetto -o "$WORK/two.pftrace" "$t" "$t"
"$G" export --format perfetto "$t" "$t" | cat >"$WORK/two-pipe.pftrace"
cmp -s "$WORK/two.pftrace" "$WORK/two-pipe.pftrace" || fail "perfetto: a pipe got other bytes than a file"
python3 "$SOURCE_ROOT/tests/e2e/check_timeline.py" perfetto "$WORK/two.pftrace" >/dev/null ||
	fail "perfetto: two processes"

set +e
"$G" export --format svg "$t" >/dev/null 2>&1
expect "unknown format" "$?" 2
"$G" export "$t" >"$WORK/default.json"
expect "no format: exit" "$?" 0
"$G" export --format chrome "$t" >"$WORK/chrome.json"
cmp -s "$WORK/default.json" "$WORK/chrome.json" || fail "export without --format is not --format chrome"
"$G" export --format chrome -o /nonexistent/dir/x.json "$t" 2>/dev/null
expect "unwritable output" "$?" 1
"$G" export --format csv "$t" >/dev/null 2>"$WORK/err"
expect "csv without -o" "$?" 2
grep -q "needs -o DIR" "$WORK/err" || fail "csv without -o: $(cat "$WORK/err")"
"$G" export --format csv -o /nonexistent/dir/x "$t" 2>/dev/null
expect "csv into an unwritable directory" "$?" 1
set -e
echo "export: $n traces"
