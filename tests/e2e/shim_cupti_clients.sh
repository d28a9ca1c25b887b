#!/bin/sh
# SPDX-License-Identifier: MIT
# The application's own CUPTI client in the orders torch.profiler's Kineto uses
# (tests/fake_cuda/cupti_client.c), with the fake CUPTI: the client gets every record it gets
# without the shim, on its own clock; the shim keeps every GPU record of the time it held
# CUPTI, notes its yield when the client's first call came (not after handing over: a forced
# flush may take long), resumes only once the client is done, and the report leaves the
# client's stretches out and says so.
. "$(dirname "$0")/lib.sh"

use_fake_cupti

# client MODE: plain and under the shim; outputs compared; report, info and stderr kept.
client() {
	"$CUPTI_CLIENT" "$1" >"$WORK/$1.plain" 2>/dev/null
	LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/$1.trace" "$CUPTI_CLIENT" "$1" \
		>"$WORK/$1.out" 2>"$WORK/$1.err"
	cmp "$WORK/$1.plain" "$WORK/$1.out" ||
		fail "$1: the client's output changed by the shim: $(cat "$WORK/$1.out") (alone: $(cat "$WORK/$1.plain"))"
	"$GPUSHIM_BIN" report --format json "$WORK/$1.trace" >"$WORK/$1.json"
	"$GPUSHIM_BIN" report "$WORK/$1.trace" >"$WORK/$1.txt"
	"$GPUSHIM_BIN" info --format json "$WORK/$1.trace" >"$WORK/$1.info"
	expect "$1: unjoined" "$(jget "$WORK/$1.json" .gpu.unjoined)" 0
	# Every record on the trace's clock: the client's is a day ahead.
	[ "$(jget "$WORK/$1.json" .trace_span_ns)" -lt 60000000000 ] ||
		fail "$1: records off the trace's clock (span $(jget "$WORK/$1.json" .trace_span_ns) ns)"
}

# notes TRACE KIND TEXT: the times of the notes of KIND whose text starts with TEXT.
notes() {
	jq -r --arg k "$2" --arg t "$3" \
		'.notes[] | select(.kind == $k and (.text | startswith($t))) | .ts_ns' "$WORK/$1.info"
}

# Held to the end: the 5 kernels before it are the shim's, the 20 after it the client's. The
# yield is noted at the client's registration although handing over (a forced flush of
# 200 ms here) ends later; the slow hand-over is noted too.
FAKE_CUPTI_FORCED_FLUSH_MS=200 client held
expect "held: the client" "$(cat "$WORK/held.out")" \
	"held: 0 failed CUPTI calls, 20 kernel records, 0 not on its clock"
expect "held: the shim's kernels" "$(jget "$WORK/held.json" .gpu.kernels)" 5
expect "held: launches" "$(jget "$WORK/held.json" .counts.launches)" 25
expect "held: launches left out" "$(jget "$WORK/held.json" .gpu.host_only_launches)" 20
read -r _ _ t0 t1 <"$WORK/held.err"
off=$(notes held cupti_off "yielded to the application's CUPTI client")
[ -n "$off" ] && [ "$off" -ge "$t0" ] && [ "$off" -le "$t1" ] &&
	[ $((off - t0)) -lt 100000000 ] ||
	fail "held: yield noted at $off, the client's session began at $t0 and returned at $t1"
[ -n "$(notes held warning "handing CUPTI to the application's client took")" ] ||
	fail "held: the slow hand-over is not noted: $(jq -c .notes "$WORK/held.info")"
grep -q "20 launches while the application's CUPTI client held CUPTI are left out" \
	"$WORK/held.txt" || fail "held: the report does not say what it left out: $(head -12 "$WORK/held.txt")"
jget "$WORK/held.json" .verdict.excluded | grep -q "20 launches" ||
	fail "held: verdict.excluded: $(jget "$WORK/held.json" .verdict.excluded)"

# Registered and enabled before CUDA is initialized: the shim waits, resumes at the client's
# collection, and its exit flush keeps the 10 kernels after it.
client early
expect "early: the client" "$(cat "$WORK/early.out")" \
	"early: 0 failed CUPTI calls, 10 kernel records, 0 not on its clock"
expect "early: the shim's kernels" "$(jget "$WORK/early.json" .gpu.kernels)" 10
expect "early: launches left out" "$(jget "$WORK/early.json" .gpu.host_only_launches)" 10

# Kernels enabled with no callbacks while the shim runs (Kineto's force load): the shim keeps
# them, and on yielding leaves on the kind the client enabled, so the client's session (copies
# only enabled) still gets its 3 kernels.
client forceload
expect "forceload: the client" "$(cat "$WORK/forceload.out")" \
	"forceload: 0 failed CUPTI calls, 3 kernel records, 0 not on its clock"
expect "forceload: the shim's kernels" "$(jget "$WORK/forceload.json" .gpu.kernels)" 10

# A second session right after a stop, before any flush, lasting past the shim's wait for a
# flush: the shim stays yielded until the second session is collected.
client again
expect "again: the client" "$(cat "$WORK/again.out")" \
	"again: 0 failed CUPTI calls, 9 kernel records, 0 not on its clock"
expect "again: the shim's kernels" "$(jget "$WORK/again.json" .gpu.kernels)" 10
expect "again: launches left out" "$(jget "$WORK/again.json" .gpu.host_only_launches)" 9
expect "again: resumptions" "$(notes again cupti_on resumed | wc -l)" 1
t1=$(awk 'END {print $4}' "$WORK/again.err")
[ "$(notes again cupti_on resumed)" -gt $((t1 + 1300000000)) ] ||
	fail "again: resumed at $(notes again cupti_on resumed), the second session began at $t1"

# torch.profiler's schedule: three sessions, each yielded to and resumed after.
client cycles
expect "cycles: the client" "$(cat "$WORK/cycles.out")" \
	"cycles: 0 failed CUPTI calls, 9 kernel records, 0 not on its clock"
expect "cycles: the shim's kernels" "$(jget "$WORK/cycles.json" .gpu.kernels)" 20
expect "cycles: launches left out" "$(jget "$WORK/cycles.json" .gpu.host_only_launches)" 9
expect "cycles: yields" "$(notes cycles cupti_off yielded | wc -l)" 3
expect "cycles: resumptions" "$(notes cycles cupti_on resumed | wc -l)" 3
echo "ok: the application's CUPTI client held to the end, before CUDA, after a force load, restarted before collecting, on a schedule"
