#!/bin/sh
# SPDX-License-Identifier: MIT
# Where the shim's threads meet, run again and again: GPUSHIM_TEST_REPEAT rounds (2 unless
# set; the ThreadSanitizer build runs 20, scripts/test.sh), so that a race which shows in one
# run of five cannot hide there. A round: one thread starting CUDA with the fake CUPTI (it sets
# CUPTI up while the writer already polls), sixteen threads calling cuInit at once with and
# without it, and an application's own CUPTI session the shim yields to and resumes after.
# Every run must exit 0 (a TSan report fails it) and leave a complete trace, nothing lost.
. "$(dirname "$0")/lib.sh"

# check TRACE WANT: complete, lost records, GPU operations, threads.
check() {
	got=$("$GPUSHIM_BIN" info --format json "$1" |
		jq -r '"\(.complete) \(.lost_records) \(.gpu_operations) \(.threads)"')
	expect "round $round: $(basename "$1")" "$got" "$2"
}

n=${GPUSHIM_TEST_REPEAT:-2}
round=0
while [ $round -lt "$n" ]; do
	round=$((round + 1))
	rm -f "$WORK"/*.trace
	run_shim_cupti "$WORK/out" "$WORK/direct.trace" direct
	check "$WORK/direct.trace" "true 0 16 1"
	run_shim_cupti "$WORK/out" "$WORK/initrace-cupti.trace" initrace
	check "$WORK/initrace-cupti.trace" "true 0 1600 16"
	run_shim "$WORK/out" "$WORK/initrace.trace" initrace
	check "$WORK/initrace.trace" "true 0 0 16"
	run_shim_cupti "$WORK/out" "$WORK/client.trace" cupticlient
	check "$WORK/client.trace" "true 0 10 1"
done
echo "ok: $n rounds: CUDA started with CUPTI, 16 threads in cuInit with and without it, an application's CUPTI session"
