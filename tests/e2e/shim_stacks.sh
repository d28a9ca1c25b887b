#!/bin/sh
# SPDX-License-Identifier: MIT
# Call stacks (shim/stacks.c, trace format 1.9) of a program whose calls come from known
# functions (tests/fake_cuda/stack_client.c, exported with -rdynamic): the frames `gpushim dump`
# shows at each captured call, one STACK for repeated and cross-thread identical stacks, each
# CALL_STACK right after its call, the PC records, first and sampled launches
# (GPUSHIM_STACK_SAMPLE), the depth (GPUSHIM_STACK_DEPTH), the off switch (GPUSHIM_STACKS=0),
# the NOTE STACKS counts, and exit() inside dlopen (forks while the writer symbolizes:
# shim_fork.sh). The program's output never changes.
. "$(dirname "$0")/lib.sh"
# The first CUDA call waits for the call stacks' thread until it is ready (on a loaded machine
# it took longer than the default 50 ms, and the first captures this test checks were not made)
export GPUSHIM_STACK_READY_MS=60000
cd "$WORK"

# run_stacks NAME ARGS...: the client alone and under the shim (trace NAME.trace, its dump
# NAME.jsonl); outputs must match. Extra environment comes from the caller.
run_stacks() {
	name=$1
	shift
	"$STACK_CLIENT" "$@" >"$name.plain" 2>&1 || fail "$name: the client failed alone"
	LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/$name.trace" "$STACK_CLIENT" "$@" \
		>"$name.out" 2>"$name.err" || fail "$name: the client failed under the shim"
	cmp "$name.plain" "$name.out" || fail "$name: output changed by the shim"
	"$GPUSHIM_BIN" dump --format jsonl "$name.trace" >"$name.jsonl" || fail "$name: dump failed"
}

# q NAME FILTER: a jq filter over all of NAME's records at once.
q() {
	jq -rs "$2" "$1.jsonl"
}

# The native frames' symbols of the stack of the calls of entry point API, innermost first.
SYMS='def syms(api): [.[] | select(.type == "call_stack" and .api == api) | .stack] as $ids |
	[.[] | select(.type == "stack" and (.id | IN($ids[])))] |
	map([.native[] | .symbol // "?"] | join(" "));'

# ---- Syncs and allocations from known functions ----
run_stacks sync sync
expect "sync frames" "$(q sync "$SYMS"' syms("cuStreamSynchronize") | unique | join(",")')" \
	"stack_inner stack_outer main ? __libc_start_main _start"
expect "sync captures" "$(q sync '[.[] | select(.type == "call_stack" and .api == "cuStreamSynchronize")] | length')" 3
expect "alloc frames" "$(q sync "$SYMS"' syms("cuMemAlloc_v2") | map(split(" ")[0:2] | join(" ")) | join(",")')" \
	"stack_alloc main"
expect "free frames" "$(q sync "$SYMS"' syms("cuMemFree_v2") | map(split(" ")[0]) | join(",")')" \
	"stack_alloc"
# one STACK each: the module load, the three syncs (one stack), the allocation, the free
expect "stacks interned" "$(q sync '[.[] | select(.type == "stack")] | length')" 4
expect "stack ids" "$(q sync '[.[] | select(.type == "stack") | .id] | join(",")')" "1,2,3,4"
# every CALL_STACK follows its call in its thread's records: same start time and entry point
expect "calls joined" "$(q sync '[[.[] | select(has("thread"))] | group_by(.tid)[] as $t |
	range(1; $t | length) as $i | $t[$i] as $c | select($c.type == "call_stack") |
	$t[$i - 1] | select(.ts_ns == $c.ts_ns and .api == $c.api)] | length')" 6
expect "call_stack count" "$(q sync '[.[] | select(.type == "call_stack")] | length')" 6
# each STACK's addresses are described before it, once
expect "pcs before stacks" "$(q sync 'reduce .[] as $r ({seen: {}, bad: 0};
	if $r.type == "pc" then .seen[$r.pc] = 1 elif $r.type == "stack" then . as $s |
	.bad += ([$r.native[].pc | select($s.seen[.] == null)] | length) else . end) | .bad')" 0
expect "pcs once" "$(q sync '[.[] | select(.type == "pc") | .pc] | (length == (unique | length))')" true
expect "module of stack_inner" "$(q sync '[.[] | select(.type == "pc" and .symbol_str ==
	"stack_inner") | (.module_str | endswith("/stack_client")) and (.build_id_str |
	test("^[0-9a-f]{40}$"))] | unique | join(",")')" true
expect "offset" "$(q sync '[.[] | select(.type == "pc" and .symbol_str == "stack_inner") |
	(.offset | ltrimstr("0x") | length > 0) and .sym_offset != "0x0"] | join(",")')" true
expect "note" "$(q sync '.[] | select(.type == "note" and .kind == 13) | .text_str')" \
	"depth 24, launches 1 in 1000; captured 6, python 0, no GIL 0, failed 0 (not ready 0, table full 0, names 0, lost 0); slow walks 0; python without the GIL 0"
"$GPUSHIM_BIN" info --format json sync.trace |
	jq -e '[.notes[] | select(.kind == "stacks")] | length == 1' >/dev/null ||
	fail "info shows no stacks note"
grep -q '^stack .* native=\[stack_inner+0x[0-9a-f]* stack_outer+0x[0-9a-f]* main+' \
	<<EOF || fail "text dump: no stack_inner < stack_outer < main"
$("$GPUSHIM_BIN" dump sync.trace)
EOF

# ---- The off switch ----
GPUSHIM_STACKS=0 run_stacks off sync
expect "off: stack records" "$(q off '[.[] | select(.type == "stack" or .type == "pc" or
	.type == "call_stack")] | length')" 0
expect "off: note" "$(q off '.[] | select(.type == "note" and .kind == 13) | .text_str')" off
expect "off: syncs still recorded" "$(q off '[.[] | select(.type == "sync")] | length')" 3

# ---- Launches: the first of a kernel, then one in N ----
GPUSHIM_STACK_SAMPLE=3 run_stacks sample3 launch 10
expect "sampled launches" "$(q sample3 '[.[] | select(.type == "call_stack" and .api ==
	"cuLaunchKernel") | "\(.seq)/\(.why)"] | join(",")')" "1/1,4/2,7/2,10/2"
expect "launch frames" "$(q sample3 "$SYMS"' syms("cuLaunchKernel") | map(split(" ")[0:2] |
	join(" ")) | unique | join(",")')" "stack_launcher main"
GPUSHIM_STACK_SAMPLE=0 run_stacks sample0 launch 10
expect "first launch only" "$(q sample0 '[.[] | select(.type == "call_stack" and .api ==
	"cuLaunchKernel") | "\(.seq)/\(.why)"] | join(",")')" "1/1"
run_stacks sample_default launch 10
expect "default: first launch only in 10" "$(q sample_default '[.[] | select(.type ==
	"call_stack" and .api == "cuLaunchKernel")] | length')" 1

# ---- Depth ----
GPUSHIM_STACK_DEPTH=2 run_stacks depth2 sync
expect "depth 2" "$(q depth2 '[.[] | select(.type == "stack" and .nr_native > 2)] | length')" 0
expect "depth 2 cut" "$(q depth2 "$SYMS"' syms("cuStreamSynchronize") | join(",")')" \
	"stack_inner stack_outer"
expect "depth 2 flag" "$(q depth2 '[.[] | select(.type == "stack") | .flags] | unique | join(",")')" "0x1"

# ---- Threads: the same stack on four threads at once is one STACK ----
run_stacks threads threads
expect "threads: captures" "$(q threads '[.[] | select(.type == "call_stack" and .api ==
	"cuStreamSynchronize")] | length')" 200
expect "threads: one stack" "$(q threads '[.[] | select(.type == "call_stack" and .api ==
	"cuStreamSynchronize") | .stack] | unique | length')" 1
expect "threads: four threads" "$(q threads '[.[] | select(.type == "call_stack" and .api ==
	"cuStreamSynchronize") | .tid] | unique | length')" 4
expect "threads: frames" "$(q threads "$SYMS"' syms("cuStreamSynchronize") | map(split(" ")[0:3] |
	join(" ")) | join(",")')" "stack_inner stack_outer stack_thread"

# ---- exit() inside dlopen: the loader's lock held for good ----
# A library's constructor syncs (a new stack) and calls exit(3) while dlopen holds the
# loader's lock, which describing that stack's addresses needs: the writer waits for it a
# bounded time and finishes the trace (before: it waited for good, and the trace had no END).
rc=0
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/ctor.trace" \
	timeout -s KILL 60 "$STACK_CLIENT" ctorexit "$STACK_CTOR_LIB" >ctor.out 2>ctor.err || rc=$?
expect "exit() in a constructor: exit code" "$rc" 3
"$GPUSHIM_BIN" dump --format jsonl ctor.trace >ctor.jsonl || fail "ctorexit: dump failed"
expect "exit() in a constructor: complete" \
	"$("$GPUSHIM_BIN" info --format json ctor.trace | jq -r .complete)" true
expect "exit() in a constructor: its sync captured" "$(q ctor '[.[] | select(.type ==
	"call_stack" and .api == "cuStreamSynchronize")] | length')" 2

echo "ok: call stacks"
