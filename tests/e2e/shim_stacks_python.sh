#!/bin/sh
# SPDX-License-Identifier: MIT
# Python frames in the shim's call stacks: tests/python/stack_steps.py calls the fake driver's
# cuStreamSynchronize through ctypes from known lines, holding the GIL and not. The call made
# holding it must carry its innermost Python frames, file, line and function exactly; the call
# made without it carries native frames only, flagged NO_GIL, and is counted in NOTE STACKS; the
# references the capture takes are all given back. Skipped (77) only where python3 is absent.
. "$(dirname "$0")/lib.sh"
cd "$WORK"
command -v python3 >/dev/null 2>&1 || {
	echo "no python3: skipped"
	exit 77
}
script="$SOURCE_ROOT/tests/python/stack_steps.py"
lib="$FAKE_LIBDIR/libcuda.so.1"
calls=500

python3 "$script" "$lib" "$calls" >plain.txt || fail "stack_steps.py failed alone"
LD_PRELOAD="$GPUSHIM_SHIM" GPUSHIM_OUTPUT="$WORK/py.trace" python3 "$script" "$lib" "$calls" \
	>shim.txt 2>err.txt || fail "stack_steps.py failed under the shim: $(cat err.txt shim.txt)"
cmp plain.txt shim.txt || fail "output changed by the shim: $(cat shim.txt)"
grep -q "^refs ok" shim.txt || fail "no reference check: $(cat shim.txt)"
"$GPUSHIM_BIN" dump --format jsonl py.trace >py.jsonl || fail "dump failed"

# The Python frames of the Nth capture of cuStreamSynchronize, innermost two, as the script
# prints them: "FILE LINE FUNC / FILE LINE FUNC".
frames() {
	jq -rs --argjson n "$1" '([.[] | select(.type == "stack")] | INDEX(.id)) as $st |
		[.[] | select(.type == "call_stack" and .api == "cuStreamSynchronize")][$n].stack |
		tostring as $id | $st[$id].python[0:2] |
		map("\(.file) \(.line) \(.func)") | join(" / ")' py.jsonl
}
flags() {
	jq -rs --argjson n "$1" '([.[] | select(.type == "stack")] | INDEX(.id)) as $st |
		[.[] | select(.type == "call_stack" and .api == "cuStreamSynchronize")][$n].stack |
		tostring as $id | $st[$id].flags' py.jsonl
}

want_gil=$(sed -n 's/^gil //p' shim.txt)
want_nogil=$(sed -n 's/^nogil //p' shim.txt)
[ -n "$want_gil" ] && [ -n "$want_nogil" ] || fail "the script printed no call sites"
expect "with the GIL: python frames" "$(frames 0)" "$want_gil"
expect "with the GIL: flags (PYTHON)" "$(flags 0)" 0x4
expect "without the GIL: python frames" "$(frames 1)" ""
expect "without the GIL: flags (NO_GIL)" "$(flags 1)" 0x8
# the without-GIL call's native frames: through ctypes, never the shim's own
jq -es '[.[] | select(.type == "stack" and .flags == "0x8") | .native | length > 1] | all' \
	py.jsonl >/dev/null || fail "without the GIL: no native frames"
# 1 + calls + 1 with the GIL (one stack for each of the two loops), 1 without
expect "captures" "$(jq -rs '[.[] | select(.type == "call_stack")] | length' py.jsonl)" \
	$((calls + 3))
expect "loops: a stack each" "$(jq -rs '[.[] | select(.type == "call_stack")][2:-1] |
	map(.stack) | unique | length' py.jsonl)" 2
note=$(jq -rs '.[] | select(.type == "note" and .kind == 13) | .text_str' py.jsonl)
case $note in
*"captured $((calls + 3)), python $((calls + 2)), no GIL 1, failed 0 "*) ;;
*) fail "note: $note" ;;
esac
echo "ok: python frames ($note)"
