#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fatal signal the program leaves at its default (a real SIGSEGV, abort, SIGTERM, SIGINT)
# finishes the trace before the default action: every launch is there, the trace is complete and
# says which signal ended it, and the program dies exactly as it would without the shim (same
# status, same output). GPUSHIM_FLUSH_MS=60000 means nothing reaches the file unless the shim
# writes it on the way out. Handlers and SIG_IGN the program set are kept, and
# GPUSHIM_SIGNALS=0 installs nothing. With CUPTI, its buffers are flushed on the way out too.
. "$(dirname "$0")/lib.sh"
cd "$WORK"
export GPUSHIM_FLUSH_MS=60000
# In the sanitizer build ASan would catch the SIGSEGV itself: leave it at the default.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0"

for case in "segv SIGSEGV (11)" "abort SIGABRT (6)" "term SIGTERM (15)" "int SIGINT (2)"; do
	how=${case%% *}
	want=${case#* }
	run_plain "p_$how.txt" die 1000 "$how" 2>/dev/null && prc=0 || prc=$?
	run_shim "s_$how.txt" "$WORK/$how.trace" die 1000 "$how" 2>/dev/null && src=0 || src=$?
	[ "$prc" -gt 128 ] || fail "$how: the plain program did not die of a signal ($prc)"
	echo "$prc" >"$how.status"
	expect "$how: exit status under the shim" "$src" "$prc"
	cmp "p_$how.txt" "s_$how.txt" || fail "$how: output changed"
	"$GPUSHIM_BIN" report --format json "$how.trace" >"$how.json" 2>"$how.err" ||
		fail "$how: report failed: $(cat "$how.err")"
	expect "$how: complete" "$(jget "$how.json" .trace.complete)" true
	expect "$how: ended by" "$(jget "$how.json" .trace.end_reason)" signal
	expect "$how: signal" "$(jget "$how.json" .trace.end_detail)" "$want"
	expect "$how: launches" "$(jget "$how.json" .counts.launches)" 1000
	"$GPUSHIM_BIN" info "$how.trace" | grep -q "state       complete, ended by signal: $want" ||
		fail "$how: info does not say the signal"
done

# Off: the trace ends where the last chunk did (here: before any launch).
GPUSHIM_SIGNALS=0 run_shim off.txt "$WORK/off.trace" die 1000 term 2>/dev/null && rc=0 || rc=$?
expect "GPUSHIM_SIGNALS=0: exit status" "$rc" 143
# (No file at all when the process died before the writer thread opened it; an empty one when
# it died between creating the file and writing its header: the reader says so.)
if [ -s off.trace ]; then
	"$GPUSHIM_BIN" report --format json off.trace >off.json 2>off.err ||
		fail "GPUSHIM_SIGNALS=0: report failed: $(cat off.err)"
	expect "GPUSHIM_SIGNALS=0: complete" "$(jget off.json .trace.complete)" false
elif [ -f off.trace ]; then
	! "$GPUSHIM_BIN" report off.trace 2>off.err >/dev/null ||
		fail "GPUSHIM_SIGNALS=0: an empty trace reported"
	grep -q "not a gpushim trace (0 bytes" off.err ||
		fail "GPUSHIM_SIGNALS=0: an empty trace: $(cat off.err)"
fi

# The program's own dispositions: its SIGTERM handler runs, SIGINT stays ignored.
run_plain p_own.txt ownsig
run_shim s_own.txt "$WORK/own.trace" ownsig
cmp p_own.txt s_own.txt || fail "ownsig: output changed: $(cat s_own.txt)"
grep -q "SIGTERM handler kept: 1" s_own.txt || fail "ownsig: handler replaced"
grep -q "SIGINT ignore kept: 1" s_own.txt || fail "ownsig: SIG_IGN replaced"
grep -q "handled SIGTERM: 1" s_own.txt || fail "ownsig: handler did not run"
"$GPUSHIM_BIN" report --format json own.trace >own.json
expect "ownsig: ended by" "$(jget own.json .trace.end_reason)" exit
expect "ownsig: launches" "$(jget own.json .counts.launches)" 4

# With CUPTI (the fake's, tests/fake_cuda/fake_cupti.c): the way out flushes CUPTI's buffers too,
# so every kernel before the fault is there with its GPU record, joined.
run_shim_cupti s_cupti.txt "$WORK/cupti.trace" die 1000 segv 2>/dev/null && src=0 || src=$?
expect "segv with CUPTI: exit status" "$src" "$(cat segv.status)"
"$GPUSHIM_BIN" report --format json cupti.trace >cupti.json
expect "segv with CUPTI: ended by" "$(jget cupti.json .trace.end_reason)" signal
expect "segv with CUPTI: kernels" "$(jget cupti.json .gpu.kernels)" 1000
expect "segv with CUPTI: unjoined" "$(jget cupti.json .gpu.unjoined)" 0
echo "ok: SIGSEGV, SIGABRT, SIGTERM, SIGINT finish the trace, CUPTI's records too; own handlers kept"
