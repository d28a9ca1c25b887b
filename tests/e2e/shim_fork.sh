#!/bin/sh
# SPDX-License-Identifier: MIT
# A process that forks after CUDA use: parent and child each write their own trace, each with
# only its own launches; the child's is marked as forked and names its parent. With CUPTI the
# parent's GPU records are its own and the child's trace is host-only. Children forked while the
# writer symbolizes call stacks (inside the loader) each leave a complete trace too.
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

# With CUPTI (the fake's, tests/fake_cuda/fake_cupti.c): the parent's kernels come with their GPU
# records, all joined; CUPTI does not follow a fork, so the child's trace is host-only.
mkdir "$WORK/cupti"
run_shim_cupti "$WORK/cupti.txt" "$WORK/cupti/f-%p.trace" fork
cmp "$WORK/plain.txt" "$WORK/cupti.txt" || fail "with CUPTI: output changed by the shim"
set -- "$WORK"/cupti/f-*.trace
[ $# -eq 2 ] || fail "with CUPTI: expected 2 traces, found $#"
for t in "$@"; do
	"$GPUSHIM_BIN" info --format json "$t" >"$t.info"
	"$GPUSHIM_BIN" report --format json "$t" >"$t.report"
	if [ "$(jget "$t.info" .forked)" = true ]; then
		expect "with CUPTI: the child's source" "$(jget "$t.report" .gpu.source)" host
	else
		expect "with CUPTI: the parent's kernels" "$(jget "$t.report" .gpu.kernels)" 5
		expect "with CUPTI: the parent's unjoined" "$(jget "$t.report" .gpu.unjoined)" 0
	fi
done

# The hooks' clock: a child forked after the parent's writer fitted the TSC (20-ms launches)
# says in its own trace which clock its hooks read — the parent's.
mkdir "$WORK/clock"
FAKE_CUDA_LAUNCH_NS=20000000 run_shim "$WORK/clock.txt" "$WORK/clock/f-%p.trace" fork
set -- "$WORK"/clock/f-*.trace
[ $# -eq 2 ] || fail "clock: expected 2 traces, found $#"
for t in "$@"; do
	clock_note "$t" >"$t.clock"
	[ -n "$(cat "$t.clock")" ] || fail "clock: no clock note in $t"
done
cmp -s "$1.clock" "$2.clock" || fail "clock: parent and child differ: $(cat "$1.clock" "$2.clock")"

echo "ok: fork gives two traces, with CUPTI too; both say the hooks read $(cat "$1.clock")"

# A fork-based worker pool whose workers end by _exit (Python's multiprocessing, os._exit):
# every worker's trace is complete with all its launches (before: 3 of 4 were empty).
cd "$WORK"
"$EXIT_CLIENT" pool 4 2000 >plain_pool.out
GPUSHIM_OUTPUT="$WORK/pool-%p.trace" LD_PRELOAD="$GPUSHIM_SHIM" \
	timeout -s KILL 30 "$EXIT_CLIENT" pool 4 2000 >pool.out && rc=0 || rc=$?
expect "worker pool: exit code" "$rc" 0
cmp plain_pool.out pool.out || fail "worker pool: output changed: $(cat pool.out)"
set -- "$WORK"/pool-*.trace
expect "worker pool: traces" "$#" 5
workers=0
for t in "$@"; do
	"$GPUSHIM_BIN" report --format json "$t" >p.json
	expect "worker pool: $t complete" "$(jget p.json .trace.complete)" true
	[ "$(jget p.json .counts.launches)" = 2000 ] && workers=$((workers + 1))
done
expect "worker pool: workers with all 2000 launches" "$workers" 4
echo "ok: a worker pool ending in _exit"

# Call stacks: forks while the shim symbolizes addresses (shim/stacks.c).
# tests/fake_cuda/slow_phdr.c keeps the shim inside dl_iterate_phdr (glibc's lock held) while
# it describes each new address; a child forked then must still capture, describe its own
# stacks' addresses and leave a complete trace (before: such a child's writer hung there, and
# it had no trace).
cd "$WORK"
mkdir forks
"$STACK_CLIENT" forks 12 >forks.plain
LD_PRELOAD="$GPUSHIM_SHIM $SLOW_PHDR_LIB" GPUSHIM_OUTPUT="$WORK/forks/f-%p.trace" \
	timeout -s KILL 120 "$STACK_CLIENT" forks 12 >forks.out 2>forks.err ||
	fail "forks: the client failed: $(cat forks.out forks.err)"
cmp forks.plain forks.out || fail "forks: output changed: $(cat forks.out)"
set -- "$WORK"/forks/f-*.trace
expect "forks: traces" "$#" 13
children=0
for t in "$@"; do
	expect "forks: $(basename "$t") complete" \
		"$("$GPUSHIM_BIN" info --format json "$t" | jq -r .complete)" true
	# each child's own stack symbolized in its trace: the loader usable there
	"$GPUSHIM_BIN" info --format json "$t" | jq -e .forked >/dev/null || continue
	"$GPUSHIM_BIN" dump --format jsonl "$t" >f.jsonl
	expect "forks: $(basename "$t") symbolized" "$(jq -rs '[.[] | select(.type == "pc" and
		.symbol_str == "stack_inner")] | length' f.jsonl)" 1
	children=$((children + 1))
done
expect "forks: children" "$children" 12
echo "ok: 12 forks while the shim symbolized stacks, a complete and symbolized trace each"
