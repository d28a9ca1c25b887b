#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shim's column encoder (shim/gpucols.c) on real GPU records: every H200 trace recorded in
# format 1.2 (tests/traces/h200_1.2: launches, GPU_KERNEL and GPU_API records in full) is
# rewritten through it by build/tests/recode the writer's way, and the analyzer must read back
# the same records - every field of every record, as `gpushim dump` shows them, in any order -
# and give the same report. Every trace must come out with runs, and smaller.
. "$(dirname "$0")/lib.sh"
cd "$SOURCE_ROOT"
n=0 runs=0
for trace in tests/traces/h200_1.2/*.trace; do
	name=$(basename "$trace" .trace)
	minor=$("$GPUSHIM_BIN" info --format json "$trace" | jq -r '.format_version | split(".")[1]')
	[ "$minor" -lt 3 ] || continue
	"$RECODE" "$trace" "$WORK/$name.trace" >"$WORK/recode.out" || fail "$name: recode failed"
	"$GPUSHIM_BIN" dump --format jsonl "$trace" | sed 1d | sort >"$WORK/a.dump"
	"$GPUSHIM_BIN" dump --format jsonl "$WORK/$name.trace" | sed 1d | sort >"$WORK/b.dump"
	cmp -s "$WORK/a.dump" "$WORK/b.dump" ||
		fail "$name: records differ after recoding: $(diff "$WORK/a.dump" "$WORK/b.dump" | head -5)"
	"$GPUSHIM_BIN" report --format json "$trace" | jq -S 'del(.trace.path, .trace.format_version)' \
		>"$WORK/a.json"
	"$GPUSHIM_BIN" report --format json "$WORK/$name.trace" |
		jq -S 'del(.trace.path, .trace.format_version)' >"$WORK/b.json"
	cmp -s "$WORK/a.json" "$WORK/b.json" ||
		fail "$name: report differs after recoding: $(diff "$WORK/a.json" "$WORK/b.json" | head -5)"
	# "IN: N records in M runs, ..."
	[ "$(sed -n 's/.* in \([0-9]*\) runs,.*/\1/p' "$WORK/recode.out")" -gt 0 ] && runs=$((runs + 1))
	[ "$(stat -c %s "$WORK/$name.trace")" -lt "$(stat -c %s "$trace")" ] ||
		fail "$name: $(stat -c %s "$WORK/$name.trace") bytes recoded, $(stat -c %s "$trace") before"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no trace older than format 1.3 to recode"
[ "$runs" -eq "$n" ] || fail "$((n - runs)) of $n traces came out without runs"
echo "gpucols_recode: $n traces recoded, same records and reports, all with runs and smaller"
