#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ways out of a process: quick_exit() (no destructors run) still flushes a complete trace and
# keeps the program's exit code and output; exec of a CUDA-using program (same pid) finishes the
# old program's trace and gives the new program its own (NAME-1.trace), never overwriting it; a
# failed exec changes nothing.
. "$(dirname "$0")/lib.sh"
cd "$WORK"

run_plain plain_q.txt quickexit && rc=0 || rc=$?
expect "quick_exit: exit code, plain" "$rc" 3
run_shim shim_q.txt "$WORK/q-%p.trace" quickexit && rc=0 || rc=$?
expect "quick_exit: exit code under the shim" "$rc" 3
cmp plain_q.txt shim_q.txt || fail "quick_exit: output changed"
t=$(only_trace "$WORK/q-*.trace")
"$GPUSHIM_BIN" report --format json "$t" >q.json
expect "quick_exit: complete" "$(jget q.json .trace.complete)" true
expect "quick_exit: launches" "$(jget q.json .counts.launches)" 2

# exec replaces the image without destructors: the shim writes the first program's records
# and an END (reason exec) before the real exec. GPUSHIM_FLUSH_MS=60000: nothing reaches the
# file otherwise. The new program, same pid, finds the name taken and writes NAME-1.trace.
GPUSHIM_FLUSH_MS=60000 run_shim shim_e.txt "$WORK/e-%p.trace" exec
set -- "$WORK"/e-*-1.trace
[ -f "$1" ] || fail "exec: no NAME-1.trace: $(ls "$WORK")"
"$GPUSHIM_BIN" report --format json "$1" >e1.json
expect "exec: the new program's trace" "$(jget e1.json '"\(.trace.complete) \(.trace.end_reason) \(.counts.launches)"')" "true exit 14"
first=${1%-1.trace}.trace
"$GPUSHIM_BIN" report --format json "$first" >e0.json
expect "exec: the first program's trace" "$(jget e0.json '"\(.trace.complete) \(.trace.end_reason) \(.trace.end_detail) \(.counts.launches)"')" "true exec /proc/self/exe 2"

# exec that fails, in every form: errno and output as without the shim, the END taken back,
# recording goes on in the same file, every attempt noted.
run_plain plain_x.txt execfail
GPUSHIM_FLUSH_MS=60000 run_shim shim_x.txt "$WORK/x-%p.trace" execfail
cmp plain_x.txt shim_x.txt || fail "execfail: output changed: $(cat shim_x.txt)"
t=$(only_trace "$WORK/x-*.trace")
"$GPUSHIM_BIN" report --format json "$t" >x.json
expect "execfail: trace" "$(jget x.json '"\(.trace.complete) \(.trace.end_reason) \(.counts.launches)"')" "true exit 4"
"$GPUSHIM_BIN" info --format json "$t" >xi.json
expect "execfail: exec notes" "$(jget xi.json '[.notes[] | select(.kind == "exec")] | length')" 8
echo "ok: quick_exit, exec, failed exec"
