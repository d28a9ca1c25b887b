#!/bin/sh
# SPDX-License-Identifier: MIT
# Four threads launching at once: every launch recorded, nothing lost, each thread its own.
# Sixteen threads initializing CUDA at the same instant, half through dlsym: the same.
. "$(dirname "$0")/lib.sh"

run_plain "$WORK/plain.txt" threads
run_shim "$WORK/shim.txt" "$WORK/t-%p.trace" threads
cmp "$WORK/plain.txt" "$WORK/shim.txt" || fail "output changed by the shim"
trace=$(only_trace "$WORK/t-*.trace")
"$GPUSHIM_BIN" report --format json "$trace" >"$WORK/r.json"
expect launches "$(jget "$WORK/r.json" .counts.launches)" 10000
expect lost "$(jget "$WORK/r.json" .trace.lost_records)" 0
"$GPUSHIM_BIN" info --format json "$trace" >"$WORK/i.json"
expect threads "$(jget "$WORK/i.json" .threads)" 5

# Threads that come and go: each exited thread's buffer is freed and the next thread's buffer
# often lands at the same address. Every thread must still be told apart in the trace.
run_shim "$WORK/serial.txt" "$WORK/s-%p.trace" serial
trace=$(only_trace "$WORK/s-*.trace")
"$GPUSHIM_BIN" info --format json "$trace" >"$WORK/si.json"
expect "serial threads" "$(jget "$WORK/si.json" .threads)" 9
"$GPUSHIM_BIN" dump --format jsonl "$trace" |
	jq -r 'select(.type == "launch") | .tid' | sort | uniq -c | awk '{print $1}' | sort -u >"$WORK/per"
expect "launches per thread" "$(cat "$WORK/per")" 100
# Sixteen threads released by a barrier into cuInit, module loading and launches at once.
for i in 1 2 3; do
	rm -f "$WORK"/r-*.trace
	run_plain "$WORK/iplain.txt" initrace
	run_shim "$WORK/ishim.txt" "$WORK/r-%p.trace" initrace
	cmp "$WORK/iplain.txt" "$WORK/ishim.txt" || fail "initrace: output changed by the shim"
	trace=$(only_trace "$WORK/r-*.trace")
	"$GPUSHIM_BIN" report --format json "$trace" >"$WORK/ir.json"
	expect "initrace: launches" "$(jget "$WORK/ir.json" .counts.launches)" 1600
	expect "initrace: cuInit calls" "$(jget "$WORK/ir.json" '.api[] | select(.name == "cuInit") | .calls')" 16
	expect "initrace: lost" "$(jget "$WORK/ir.json" .trace.lost_records)" 0
	expect "initrace: complete" "$(jget "$WORK/ir.json" .trace.complete)" true
	"$GPUSHIM_BIN" info --format json "$trace" >"$WORK/ii.json"
	expect "initrace: threads" "$(jget "$WORK/ii.json" .threads)" 16
done
echo "ok: 10000 launches from 4 threads, 0 lost; 8 serial threads kept apart; 16 threads initializing at once"
