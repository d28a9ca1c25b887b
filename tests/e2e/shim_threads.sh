#!/bin/sh
# SPDX-License-Identifier: MIT
# Four threads launching at once: every launch recorded, nothing lost, each thread its own.
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
echo "ok: 10000 launches from 4 threads, 0 lost; 8 serial threads kept apart"
