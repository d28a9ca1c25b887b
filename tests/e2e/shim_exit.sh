#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ways out of a process: quick_exit() (no destructors run) still flushes a complete trace and
# keeps the program's exit code and output; exec of a CUDA-using program (same pid) gives the
# new program its own trace next to the old one's (NAME-1.trace), never overwriting it.
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

run_shim shim_e.txt "$WORK/e-%p.trace" exec
# The client waits until its trace file exists before exec; the new program, same pid, finds
# the name taken and writes NAME-1.trace. (Records of the first program since its last chunk
# are lost at exec: no destructor runs.)
set -- "$WORK"/e-*-1.trace
[ -f "$1" ] || fail "exec: no NAME-1.trace: $(ls "$WORK")"
found=0
for t in "$WORK"/e-*.trace; do
	[ -f "$t" ] || continue
	"$GPUSHIM_BIN" report --format json "$t" >e.json || fail "exec: $t unreadable"
	if [ "$(jget e.json '"\(.trace.complete) \(.counts.launches)"')" = "true 14" ]; then
		found=$((found + 1))
	else
		expect "exec: the other trace is the first program's" "$(jget e.json .counts.launches | sed 's/^[02]$/ok/')" ok
	fi
done
expect "exec: the new program's complete trace" "$found" 1
echo "ok: quick_exit, exec"
