#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The hooks' clock (shim/clock.c) end to end: with GPUSHIM_TSC=0 a CLOCK note says clock_gettime
# was read; by default, where the kernel keeps time by an invariant TSC, the note says the TSC
# was fitted, and calls timed on it agree with clock_gettime: every fake launch (a 2-us spin on
# clock_gettime inside the fake driver) lasts 2 us or more, and no call starts before its
# predecessor on the thread returned (100 ns allowed each, for the switch from clock_gettime to
# the first line).
. "$(dirname "$0")/lib.sh"
export FAKE_CUDA_LAUNCH_NS=2000

GPUSHIM_TSC=0 run_shim "$WORK/off.out" "$WORK/off.trace" steps 1000 0
expect "the clock note with GPUSHIM_TSC=0" "$(clock_note "$WORK/off.trace")" \
	"clock_gettime: GPUSHIM_TSC=0"

n=150000	# about 330 ms: the first line is fitted after 20 ms
run_shim "$WORK/on.out" "$WORK/on.trace" steps $n 0
note=$(clock_note "$WORK/on.trace")
case "$note" in
"TSC at "*" GHz, fitted to CLOCK_MONOTONIC") ;;
"clock_gettime: "*) echo "shim_clock: the TSC is not read here ($note); timing checked on clock_gettime" ;;
*) fail "the clock note: '$note'" ;;
esac
read -r launches short back <<<"$("$GPUSHIM_BIN" dump --format jsonl "$WORK/on.trace" |
	jq -r 'select((.type | startswith("launch")) and .dur != null) | "\(.ts_ns) \(.dur)"' |
	awk '{ short += $2 < 1900; back += NR > 1 && $1 < end - 100; end = $1 + $2 }
	     END { print NR, short + 0, back + 0 }')"
expect "launches read back" "$launches" "$n"
expect "launches shorter than the fake's 2 us" "$short" 0
expect "calls starting before their predecessor returned" "$back" 0
echo "shim_clock: $note; $n launches of 2 us, none shorter, none overlapping its predecessor"
