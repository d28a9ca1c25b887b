#!/bin/sh
# SPDX-License-Identifier: MIT
# A process that forks after CUDA use: parent and child each write their own trace, each with
# only its own launches; the child's is marked as forked and names its parent.
. "$(dirname "$0")/lib.sh"

run_plain "$WORK/plain.txt" fork
run_shim "$WORK/shim.txt" "$WORK/f-%p.trace" fork
cmp "$WORK/plain.txt" "$WORK/shim.txt" || fail "output changed by the shim"
set -- "$WORK"/f-*.trace
[ $# -eq 2 ] || fail "expected 2 traces, found $#"
for t in "$@"; do
	"$GPUSHIM_BIN" info --format json "$t" >"$t.info"
	"$GPUSHIM_BIN" report --format json "$t" >"$t.report"
	expect "$t complete" "$(jget "$t.report" .trace.complete)" true
	expect "$t launches" "$(jget "$t.report" .counts.launches)" 5
done
parent=$(jq -r 'select(.forked == false) | .pid' "$1.info" "$2.info")
child_parent=$(jq -r 'select(.forked == true) | .ppid' "$1.info" "$2.info")
[ -n "$parent" ] || fail "no parent trace"
expect "child's parent" "$child_parent" "$parent"
echo "ok: fork gives two traces"
