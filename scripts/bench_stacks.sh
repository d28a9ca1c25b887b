#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What capturing call stacks costs (shim/stacks.c), on the fake driver: the calling thread's
# CPU ns a call under the shim with GPUSHIM_STACKS=1 against GPUSHIM_STACKS=0, in alternating
# rounds (median, and the rounds' spread); the difference is a capture's cost. Cases:
#   - a C program's stream synchronizations from 1 and 20 nested frames (stack_client bench:
#     about 6 and 24 native frames kept; every call captured);
#   - a Python program's, through ctypes, from 1, 10 and 30 nested Python frames (about 5, 14
#     and 24 kept), holding the GIL (Python frames read through the C API), and from 10 and 30
#     without it (CPython 3.11 - 3.13: the frames read from the interpreter's structures, as for
#     PyTorch's operators; older: native only);
#   - kernel launches (stack_client launchbench): one in GPUSHIM_STACK_SAMPLE (1000) captured.
# Rings are big enough that no record is dropped (a dropped call is no capture: cheaper).
# Usage: scripts/bench_stacks.sh [BUILD_DIR]   (BENCH_QUICK=1: fewer, shorter rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(cd "${1:-build}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpushim-bench-stacks.XXXXXX")
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$B/tests
client=$B/tests/stack_client
py=tests/bench/py_stack_bench.py
n=200000 rounds=7
if [ -n "${BENCH_QUICK:-}" ]; then
	n=50000 rounds=3
fi

echo "# call stack capture, CPU ns of the calling thread a call; $(date -u +%Y-%m-%d), $(nproc) cores"
echo "# build: $B ($(git rev-parse --short HEAD 2>/dev/null || echo ?)); $rounds alternating rounds of $n calls"

# one STACKS CMD...: "CPU_NS" of one run under the shim (its trace checked for losses)
one() {
	local stacks=$1 out lost
	shift
	out=$(LD_PRELOAD=$B/shim/libgpushim.so GPUSHIM_STACKS=$stacks GPUSHIM_BUFFER_KB=131072 \
		GPUSHIM_OUTPUT="$work/b.trace" "$@" 2>/dev/null | sed -n 's/^bench: //p')
	lost=$("$B/analyzer/gpushim" info --format json "$work/b.trace" | jq '.lost_records // 0')
	rm -f "$work/b.trace"
	[ "$lost" = 0 ] || echo "  (a round lost $lost records)" >&2
	echo "${out%% *}"
}

# median VALUES...
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# case NAME CMD...: the median of each setting and their difference
case_() {
	local name=$1 on=() off=() a b
	shift
	for _ in $(seq "$rounds"); do
		off+=("$(one 0 "$@")")
		on+=("$(one 1 "$@")")
	done
	a=$(median "${on[@]}") b=$(median "${off[@]}")
	printf '%-44s stacks %8.1f  no stacks %8.1f  capture %8.1f ns  (on: %s .. %s)\n' "$name" \
		"$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a - b }')" "$(printf '%s\n' "${on[@]}" | sort -g | head -1)" \
		"$(printf '%s\n' "${on[@]}" | sort -g | tail -1)"
}

case_ "C sync, 1 frame (6 native kept)" "$client" bench "$n" 1
case_ "C sync, 20 frames (24 native kept)" "$client" bench "$n" 20
if command -v python3 >/dev/null; then
	case_ "Python sync, GIL held, 1 frame" python3 "$py" "$B/tests/libcuda.so.1" "$n" 1 gil
	case_ "Python sync, GIL held, 10 frames" python3 "$py" "$B/tests/libcuda.so.1" "$n" 10 gil
	case_ "Python sync, GIL held, 30 frames" python3 "$py" "$B/tests/libcuda.so.1" "$n" 30 gil
	case_ "Python sync, GIL released, 10 frames" python3 "$py" "$B/tests/libcuda.so.1" "$n" 10 nogil
	case_ "Python sync, GIL released, 30 frames" python3 "$py" "$B/tests/libcuda.so.1" "$n" 30 nogil
fi
case_ "C launch, sampled 1 in 1000" "$client" launchbench "$n" 1
