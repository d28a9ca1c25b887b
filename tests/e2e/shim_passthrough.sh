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
# errno as the program set it, around every hooked call: on a fresh thread too, whose first call
# maps the shim's ring, and when that mapping fails (address space capped below a 1 GiB ring;
# not in sanitizer builds, whose runtimes reserve more than the cap at start).
run_plain "$WORK/errno.txt" errno
expect "errno without the shim" "$(cat "$WORK/errno.txt")" "errno: main 4242 4343, fresh thread 4242 4343"
run_shim "$WORK/errno-shim.txt" "$WORK/errno-%p.trace" errno
cmp "$WORK/errno.txt" "$WORK/errno-shim.txt" || fail "errno changed by the shim: $(cat "$WORK/errno-shim.txt")"
# No ring, no records: every call the normal run recorded is counted as lost, one warning.
if ! ldd "$FAKE_CLIENT" | grep -q 'lib[at]san'; then
	(ulimit -v 400000 && GPUSHIM_BUFFER_KB=1048576 run_shim "$WORK/errno-nomem.txt" \
		"$WORK/errno-nomem-%p.trace" errno 2>"$WORK/errno-nomem.err") ||
		fail "a ring the address space cannot hold: $(cat "$WORK/errno-nomem.err")"
	cmp "$WORK/errno.txt" "$WORK/errno-nomem.txt" ||
		fail "errno changed by a failed ring: $(cat "$WORK/errno-nomem.txt")"
	expect "warnings for rings not mapped" "$(grep -c 'cannot map a 1048576 KiB ring' "$WORK/errno-nomem.err")" 1
	"$GPUSHIM_BIN" info --format json "$(only_trace "$WORK/errno-[0-9]*.trace")" >"$WORK/en.json"
	"$GPUSHIM_BIN" info --format json "$(only_trace "$WORK/errno-nomem-*.trace")" >"$WORK/enm.json"
	expect "calls recorded without a ring" "$(jget "$WORK/enm.json" .calls)" 0
	expect "records lost without a ring" "$(jget "$WORK/enm.json" .lost_records)" \
		"$(jget "$WORK/en.json" .calls)"
fi
echo "ok: pass-through and silence; errno kept"
