#!/bin/sh
# SPDX-License-Identifier: MIT
# The shim's CUPTI path without a GPU: the fake driver variant that carries a fake CUPTI
# (tests/fake_cuda/fake_cupti.c), loaded as CUPTI through GPUSHIM_CUPTI. Every kernel, copy and
# set the fake ran comes back as a GPU record joined to the call that caused it, through the
# API record of that call (same thread, inside its interval); with four threads launching at
# once each kernel joins its own thread's launch; buffers that fill on the application's threads
# and the exit flush lose nothing; an application's own CUPTI session gets its records while
# the shim steps aside; sixteen threads calling cuInit at once wait for CUPTI's set-up and the
# profiler's initialization. The program's output is unchanged.
. "$(dirname "$0")/lib.sh"

use_fake_cupti

run_plain "$WORK/plain.txt" direct
run_shim "$WORK/shim.txt" "$WORK/d.trace" direct
cmp "$WORK/plain.txt" "$WORK/shim.txt" || fail "output changed by the shim"
"$GPUSHIM_BIN" report --format json "$WORK/d.trace" >"$WORK/d.json"
"$GPUSHIM_BIN" info "$WORK/d.trace" >"$WORK/d.info"
grep -q "cupti_on: CUPTI [0-9]* from .*fake_cupti/libcuda.so.1" "$WORK/d.info" ||
	fail "CUPTI not started from the fake: $(grep note "$WORK/d.info")"
expect source "$(jget "$WORK/d.json" .gpu.source)" cupti
# 14 launches: 12 kernels run (one launch fails, one is a host function); 3 copies, 1 set.
expect kernels "$(jget "$WORK/d.json" .gpu.kernels)" 12
expect memcpys "$(jget "$WORK/d.json" .gpu.memcpys)" 3
expect memsets "$(jget "$WORK/d.json" .gpu.memsets)" 1
expect unjoined "$(jget "$WORK/d.json" .gpu.unjoined)" 0
expect "joined by API interval" "$(jget "$WORK/d.json" .gpu.join.by_api_interval)" 16
expect "joined by pushed id" "$(jget "$WORK/d.json" .gpu.join.by_correlation)" 0
expect "vec_add executions" \
	"$(jget "$WORK/d.json" '.kernels[] | select(.name == "vec_add") | "\(.launches) \(.gpu_count)"')" "10 10"
expect "scale executions" \
	"$(jget "$WORK/d.json" '.kernels[] | select(.name == "scale") | "\(.launches) \(.gpu_count)"')" "2 2"
expect "CUPTI drops" "$(jget "$WORK/d.json" .gpu.dropped)" 0

# Four threads, 2,500 launches each, buffers of 256 KiB (a few hundred kernel records each):
# every kernel joined to a launch of the thread whose API record it shares.
GPUSHIM_CUPTI_BUFFER_KB=256 run_shim "$WORK/t.txt" "$WORK/t.trace" threads
"$GPUSHIM_BIN" report --format json "$WORK/t.trace" >"$WORK/t.json"
expect "threads: kernels" "$(jget "$WORK/t.json" .gpu.kernels)" 10000
expect "threads: unjoined" "$(jget "$WORK/t.json" .gpu.unjoined)" 0
expect "threads: dropped" "$(jget "$WORK/t.json" .gpu.dropped)" 0
expect "threads: lost" "$(jget "$WORK/t.json" .trace.lost_records)" 0
# The API records name the four launching threads, 2,500 each; a kernel joins only a call of
# its API record's thread (inside that record's interval), so none unjoined means each kernel
# found a launch of its own thread.
"$GPUSHIM_BIN" dump --format jsonl "$WORK/t.trace" >"$WORK/t.jsonl"
jq -r 'select(.type == "gpu_api") | .tid' "$WORK/t.jsonl" | sort | uniq -c | awk '{print $1}' |
	sort -u >"$WORK/per"
expect "API records per thread" "$(cat "$WORK/per")" 2500

# The application's own CUPTI client (as torch.profiler is), between launches: it receives its
# 3 kernel records as without the shim; the shim yields for its session (a host-only span) and
# takes CUPTI back at its flush - 10 of the 13 kernels are the shim's, each joined.
run_plain "$WORK/cp.txt" cupticlient
run_shim "$WORK/cs.txt" "$WORK/c.trace" cupticlient
grep -q ", 3 kernel records" "$WORK/cp.txt" || fail "the client's session alone: $(cat "$WORK/cp.txt")"
cmp "$WORK/cp.txt" "$WORK/cs.txt" || fail "the client's session changed by the shim: $(cat "$WORK/cs.txt")"
"$GPUSHIM_BIN" report --format json "$WORK/c.trace" >"$WORK/c.json"
"$GPUSHIM_BIN" info "$WORK/c.trace" >"$WORK/c.info"
expect "client: launches" "$(jget "$WORK/c.json" .counts.launches)" 13
expect "client: the shim's kernels" "$(jget "$WORK/c.json" .gpu.kernels)" 10
expect "client: unjoined" "$(jget "$WORK/c.json" .gpu.unjoined)" 0
[ "$(jget "$WORK/c.json" .gpu.host_only_ns)" -gt 0 ] || fail "no host-only span for the client's session"
grep -q "cupti_off: yielded to the application's CUPTI client" "$WORK/c.info" ||
	fail "no yield noted: $(grep note "$WORK/c.info")"
grep -q "cupti_on: resumed after the application's CUPTI client finished" "$WORK/c.info" ||
	fail "no resumption noted: $(grep note "$WORK/c.info")"
# Sixteen threads released by a barrier into cuInit (half through dlsym), then module loading
# and launches. The first sets CUPTI up and the others wait for it, so every kernel has its GPU
# record. The profiler (the fake's, tests/fake_cuda/fake_pm.c) is initialized once, after the
# shim loaded its libraries, and no thread goes on to launch (or exit) before that is done.
for i in 1 2 3; do
	FAKE_CUPTI_REPORT=1 run_shim "$WORK/ir.txt" "$WORK/ir-$i.trace" initrace 2>"$WORK/ir.err"
	grep -q "^initrace: 16 threads, 1600 launches, 0 failed" "$WORK/ir.txt" ||
		fail "initrace: $(cat "$WORK/ir.txt")"
	expect "initrace: the profiler's initialization" \
		"$(sed -n 's/^fake_cupti: //p' "$WORK/ir.err")" \
		"profiler initialized 1 time(s); its libraries loaded first: yes; traced calls before it was done: 0"
	"$GPUSHIM_BIN" report --format json "$WORK/ir-$i.trace" >"$WORK/ir.json"
	expect "initrace: launches" "$(jget "$WORK/ir.json" .counts.launches)" 1600
	expect "initrace: kernels" "$(jget "$WORK/ir.json" .gpu.kernels)" 1600
	expect "initrace: unjoined" "$(jget "$WORK/ir.json" .gpu.unjoined)" 0
	expect "initrace: lost" "$(jget "$WORK/ir.json" .trace.lost_records)" 0
done
echo "ok: CUPTI records through the fake: 16 operations joined; 10,000 kernels from 4 threads; an application's CUPTI session yielded to and resumed after; 16 threads in cuInit at once"
