#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shim's column encoder (shim/gpucols.c) on real GPU records: every H200 trace recorded
# before format 1.3 (full GPU_KERNEL and GPU_API records) is rewritten through it by
# build/tests/recode, and the analyzer must read back the same records - every field of every
# record, as `gpushim dump` shows them, in any order - and give the same report. At least one
# trace must come out with kernels and API records in runs, and smaller.
. "$(dirname "$0")/lib.sh"
cd "$SOURCE_ROOT"
n=0 runs=0 smaller=0
for trace in tests/traces/h200/*.trace; do
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
	# "IN: N GPU records in M runs, ..."
	[ "$(sed -n 's/.* in \([0-9]*\) runs,.*/\1/p' "$WORK/recode.out")" -gt 0 ] && runs=$((runs + 1))
	[ "$(stat -c %s "$WORK/$name.trace")" -lt "$(stat -c %s "$trace")" ] && smaller=$((smaller + 1))
	n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no trace older than format 1.3 to recode"
[ "$runs" -gt 0 ] || fail "no trace came out with GPU runs"
echo "gpucols_recode: $n traces recoded, same records and reports; $runs with GPU runs, $smaller smaller"
