#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One trace recorded on the H200 (tests/traces/h200/NAME.trace): every command reads it, the
# report's primary cause is the one its test app was built for (test_apps/expected/NAME.findings,
# the same rules scripts/gpu_check.py applies on the GPU), and the key figures pinned in
# NAME.pins hold. Each pin is a jq expression that must be true of `report --format json`;
# kernel(RE) is the kernels whose name, demangled or as recorded (mangled), RE matches.
# DIR (default tests/traces/h200) may name another set, such as tests/traces/h200_1.2.
# Usage: h200_trace.sh NAME [DIR]
. "$(dirname "$0")/lib.sh"
name=$1
dir=$SOURCE_ROOT/${2:-tests/traces/h200}
trace=$dir/$name.trace
[ -f "$trace" ] || fail "no trace $trace"

"$GPUSHIM_BIN" info "$trace" >"$WORK/info" || fail "info exited $?"
"$GPUSHIM_BIN" dump --format jsonl "$trace" >"$WORK/dump" || fail "dump exited $?"
"$GPUSHIM_BIN" report "$trace" >"$WORK/report.txt" || fail "report exited $?"
"$GPUSHIM_BIN" report --format json "$trace" >"$WORK/report.json" || fail "report --format json exited $?"
jq -e . "$WORK/report.json" >/dev/null || fail "report JSON does not parse"
expect "complete" "$(jget "$WORK/report.json" .trace.complete)" true
expect "lost records" "$(jget "$WORK/report.json" .trace.lost_records)" 0
# Every trace but the one recorded without CUPTI on purpose (GPUSHIM_MODE=host).
if [ "$(jget "$WORK/report.json" .sampling.mode)" = host ]; then
	expect "GPU source" "$(jget "$WORK/report.json" .gpu.source)" host
else
	expect "GPU source" "$(jget "$WORK/report.json" .gpu.source)" cupti
fi
# The dump holds every record the report counted.
expect "dump records" "$(wc -l <"$WORK/dump")" "$(jget "$WORK/report.json" .trace.records)"
# Every GPU record the shim converted from CUPTI (its last GPU_INFO) is read back, whatever
# the format wrote it as (1.3: rows of GPU_KERNEL_RUN / GPU_API_RUN).
"$GPUSHIM_BIN" info --format json "$trace" >"$WORK/info.json" || fail "info --format json exited $?"
expect "GPU records read back" \
	"$(jget "$WORK/info.json" '[.record_types | (.gpu_kernel, .gpu_memcpy, .gpu_memset, .gpu_corr, .gpu_api) // 0] | add')" \
	"$(jget "$WORK/info.json" .gpu_records_converted)"
grep -q "^verdict: " "$WORK/report.txt" || fail "text report has no verdict line"

defs='def cause(c): (.attribution[] | select(.cause == c));
def share(c): ([.attribution[] | select(.cause == c) | .share_pct // 0] | add // 0);
def kernel(re): (.kernels[] | select((.name | test(re)) or (.mangled | test(re))));
def api(n): ([.api[] | select(.name == n) | .calls] | add // 0);'

checked=0
check() {
	local what=$1 expr=$2
	jq -e "$defs $expr" "$WORK/report.json" >/dev/null 2>"$WORK/jq.err" ||
		fail "$name: $what: $expr ($(head -c 300 "$WORK/jq.err"))"
	checked=$((checked + 1))
}

expected=$SOURCE_ROOT/test_apps/expected/$name.findings
if [ -f "$expected" ]; then
	while read -r rule arg op val _; do
		case $rule in
		primary) check "primary cause" ".verdict.primary == \"$arg\"" ;;
		flagged) check "cause reported" "[.attribution[] | select(.status == \"measured\" or .status == \"signal\") | .cause] | index(\"$arg\") != null" ;;
		counter) check "counter mean" ".counters.mean.$arg $op $val" ;;
		saves) check "saving of the cause's fix (replay)" "cause(\"$arg\").saving_pct >= $op" ;;
		class) check "busy-time class and its unit" "cause(\"$arg\") | .status == \"measured\" and .share_pct >= 20 and (if \"$op\" == \"copies\" then .evidence.device_copy_ns > 0 else ((.evidence.pipe // .evidence.level // \"-\") == \"$op\") end)" ;;
		used_well) check "compute_bound used well" "cause(\"compute_bound\").evidence.used_well == $arg" ;;
		kernel) check "a kernel's own class" "first(.kernels[] | select(.name | contains(\"$arg\"))) | .bound == \"$op\" and (.bound_by // \"-\") == \"$val\"" ;;
		host_below) check "host-side causes" "[share(\"host_sync\"), share(\"launch_overhead\"), share(\"cpu_bound\"), share(\"memcpy\"), share(\"allocation\")] | max < $arg" ;;
		""|\#*) ;;
		*) fail "unknown rule '$rule' in $expected" ;;
		esac
	done <"$expected"
fi
# The report's replay: as recorded it gives the span back (2 %), and a saving is a share.
check "replay error" ".replay.done == false or (.replay.error_pct | fabs) <= 2"
# Advice in the program's terms: no PyTorch words for a CUDA or JAX program.
check "advice fits the program" '(.verdict.framework != "pytorch") as $other | [.attribution[].advice] | all(($other and test("torch|DataLoader|[.]item[(]")) | not)'
check "savings are shares" "[.attribution[] | .saving_pct // 0] | all(. >= -2 and . <= 100)"
while IFS= read -r pin; do
	case $pin in
	""|\#*) continue ;;
	esac
	check "pin" "$pin"
done <"$dir/$name.pins"
[ "$checked" -gt 0 ] || fail "$name: nothing checked"
echo "$name: $checked checks"
