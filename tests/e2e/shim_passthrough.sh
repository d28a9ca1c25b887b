#!/bin/sh
# SPDX-License-Identifier: MIT
# The shim leaves no trace where it should not: GPUSHIM_DISABLE=1 is a pure pass-through, a
# process that never touches CUDA writes nothing, and a non-CUDA program (a shell) is silent.
. "$(dirname "$0")/lib.sh"

run_plain "$WORK/plain.txt" direct
GPUSHIM_DISABLE=1 run_shim "$WORK/off.txt" "$WORK/off-%p.trace" direct
cmp "$WORK/plain.txt" "$WORK/off.txt" || fail "output changed with GPUSHIM_DISABLE=1"
ls "$WORK"/off-*.trace >/dev/null 2>&1 && fail "GPUSHIM_DISABLE=1 wrote a trace"

run_shim "$WORK/nocuda.txt" "$WORK/nocuda-%p.trace" nocuda
ls "$WORK"/nocuda-*.trace >/dev/null 2>&1 && fail "a process without CUDA wrote a trace"

cd "$WORK"
LD_PRELOAD="$GPUSHIM_SHIM" sh -c 'echo hello; ls /nonexistent 2>/dev/null; exit 3' >"$WORK/sh.out" 2>"$WORK/sh.err" && rc=0 || rc=$?
expect "shell exit code" "$rc" 3
expect "shell output" "$(cat "$WORK/sh.out")" hello
[ -s "$WORK/sh.err" ] && fail "the shim wrote to a non-CUDA program's stderr: $(cat "$WORK/sh.err")"
ls "$WORK"/gpushim-*.trace >/dev/null 2>&1 && fail "a shell wrote a trace"
echo "ok: pass-through and silence"
