#!/bin/sh
# SPDX-License-Identifier: MIT
# A process killed with SIGKILL leaves a trace readable up to its last chunk (chunks are
# written at least every GPUSHIM_FLUSH_MS): report exits 0, says "complete": false, and has the
# launches flushed before the kill. While it runs, the shim's writer thread shows by its name
# (top -H, /proc/PID/task/TID/comm).
. "$(dirname "$0")/lib.sh"

LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/k.trace" "$FAKE_CLIENT" loop >"$WORK/out.txt" &
pid=$!
i=0
while ! grep -q running "$WORK/out.txt" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "client never started"
	sleep 0.05
done
sleep 1
cat /proc/$pid/task/*/comm >"$WORK/comm.txt" 2>/dev/null || true
kill -9 $pid
wait $pid 2>/dev/null || true
grep -qx gpushim-writer "$WORK/comm.txt" || fail "no thread named gpushim-writer: $(cat "$WORK/comm.txt")"
[ -s "$WORK/k.trace" ] || fail "no trace after SIGKILL"
"$GPUSHIM_BIN" report --format json "$WORK/k.trace" >"$WORK/r.json" 2>"$WORK/r.err" ||
	fail "report failed on a killed process's trace: $(cat "$WORK/r.err")"
expect complete "$(jget "$WORK/r.json" .trace.complete)" false
launches=$(jget "$WORK/r.json" .counts.launches)
[ "$launches" -gt 100 ] || fail "only $launches launches recovered"
grep -q truncated "$WORK/r.err" || fail "no truncation warning"
echo "ok: $launches launches recovered after SIGKILL"
