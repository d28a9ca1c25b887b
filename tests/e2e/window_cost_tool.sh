#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/window_cost.py, the in-process cost of sampled mode's stretches, on real sampled
# traces of the fake driver and CUPTI (CUPTI kept attached; and detached between windows,
# each window attaching it again, an attach made to take 15 ms): blocks made up around each
# trace's own windows (a window starting where its attach began), slower by known factors
# inside windows and between them, come back as those factors, each stretch with exactly its
# blocks (those at a window's edge left out); a run without windows borrows a sampled run's of
# the same round, at the same offsets from its first block (its own speeds by stretch come
# back too); another loop's blocks are apart; a run whose trace cannot be read is left out; a
# directory without blocks is an error.
. "$(dirname "$0")/lib.sh"

use_fake_cupti
export GPUSHIM_MODE=sampled GPUSHIM_WINDOW_MS=20 GPUSHIM_WINDOW_EVERY_MS=80
unset GPUSHIM_PM GPUSHIM_CUPTI_DETACH
D=$WORK/d
mkdir -p "$D"
run_shim "$WORK/out" "$D/s-0.trace" paced 500 1000 0
GPUSHIM_CUPTI_DETACH=1 FAKE_CUPTI_ATTACH_MS=15 run_shim "$WORK/out" "$D/d-0.trace" paced 500 1000 0 \
	2>/dev/null
for c in s d; do
	"$GPUSHIM_BIN" info --format json "$D/$c-0.trace" >"$WORK/$c.json"
done
# the attaches' times (ms) as the notes give them: at least the 15 ms asked for
jq -r '.notes[].text' "$WORK/d.json" | sed -n 's/^sampled window 1 (CUPTI attached in \([0-9.]*\) ms.*/\1/p' >"$WORK/a1"
jq -r '.notes[].text' "$WORK/d.json" | sed -n 's/.*attached again in \([0-9.]*\) ms.*/\1/p' >"$WORK/a2"
awk 'END { exit !(NR == 1 && $1 >= 15) }' "$WORK/a1" ||
	fail "window_cost: window 1's note has no slow attach: $(cat "$WORK/a1")"
awk '$1 < 15 { bad = 1 } END { exit !(NR >= 1 && !bad) }' "$WORK/a2" ||
	fail "window_cost: the detaching run attached nothing again, or not slowly: $(cat "$WORK/a2")"

# Blocks of 0.924 ms (a whole number of operations at every cost below, so a block ends where
# it was classified): 4.0 us an op before window 1, 6.0 inside windows, 4.4 between (d: 4.2);
# the plain run's, 7 s later, 3.0 before, 6.0 inside and 3.3 between d's windows as they fall
# on its own timeline. Edge blocks (within 3 ms of a window) at 92.4 us an op; the count of
# each stretch's blocks goes to CFG.count.
gen() {	# CONFIG BETWEEN_US
	python3 - "$WORK/$1.json" "$D" "$1" "$2" <<'PY'
import json, re, sys
notes = json.load(open(sys.argv[1]))["notes"]
d, cfg, between = sys.argv[2], sys.argv[3], float(sys.argv[4])
MS_ = 1_000_000
on, wins = {}, []
for n in notes:
    m = re.match(r"sampled window (\d+)(?: \((.*)\))?$", n["text"])
    if n["kind"] == "cupti_on" and m:
        a = re.search(r"attached (?:again )?in ([0-9.]+) ms", m.group(2) or "")
        on[m.group(1)] = n["ts_ns"] - (int(float(a.group(1)) * 1e6) if a else 0)
    m = re.match(r"sampled window (\d+) ends$", n["text"])
    if n["kind"] == "cupti_off" and m and m.group(1) in on:
        wins.append((on.pop(m.group(1)), n["ts_ns"]))
end = max(off for a, off in wins) + 40 * MS_
wins = sorted(wins + [(a, 1 << 62) for a in on.values()])	# open at the exit: to the end
MS, EDGE = 924_000, 3_000_000
t = wins[0][0] - 60 * MS
s = open(f"{d}/{cfg}-0.blocks", "w")
p = open(f"{d}/plain-0.blocks", "a") if cfg == "d" else None
s.write("not json\n")
count = {"pre": 0, "in": 0, "between": 0, "windows": len(wins)}
while t + MS <= end:
    t1 = t + MS
    if any(t < off and t1 > a for a, off in wins):
        us, pus, k = 6.0, 6.0, "in"
    elif any(t < off + EDGE and t1 > a - EDGE for a, off in wins):
        us, pus, k = 92.4, 92.4, None
    elif t1 < wins[0][0]:
        us, pus, k = 4.0, 3.0, "pre"
    else:
        us, pus, k = between, 3.3, "between"
    if k:
        count[k] += 1
    s.write(json.dumps({"loop": "eager", "t0": t, "t1": t1, "ops": round(MS / (1e3 * us))}) + "\n")
    if p:
        tt = t + 7_000_000_000
        p.write(json.dumps({"loop": "eager", "t0": tt, "t1": tt + MS,
                            "ops": round(MS / (1e3 * pus))}) + "\n")
    s.write(json.dumps({"loop": "graph", "t0": t, "t1": t + MS, "ops": 1}) + "\n")
    t += MS + 10_000
json.dump(count, open(f"{d}/../{cfg}.count", "w"))
PY
}
gen s 4.4
gen d 4.2
python3 "$SOURCE_ROOT/scripts/window_cost.py" --gpushim "$GPUSHIM_BIN" --margin-ms 3 \
	--json "$WORK/wc.json" "$D" >"$WORK/wc.txt" || fail "window_cost: exit $? ($(cat "$WORK/wc.txt"))"
r() {	# CONFIG FIELD
	jq -r --arg c "$1" ".runs[] | select(.config == \$c) | .$2" "$WORK/wc.json"
}
near() {	# NAME GOT WANT
	awk -v g="$2" -v w="$3" 'BEGIN { exit !(g != "null" && g - w < 0.001 && w - g < 0.001) }' ||
		fail "$1: got $2, want $3"
}
for c in s d; do
	n=$(jget "$WORK/$c.count" .windows)
	[ "$n" -ge 4 ] || fail "window_cost: want at least 4 windows in run $c, got $n"
	expect "window_cost $c: windows read" "$(r $c windows)" "$n"
	near "window_cost $c: pre" "$(r $c pre_us)" 4.0
	near "window_cost $c: in / pre" "$(r $c in_ratio)" 1.5
	for k in pre in between; do
		[ "$(r $c ${k}_blocks)" -gt 0 ] || fail "window_cost $c: no $k blocks"
		expect "window_cost $c: $k blocks" "$(r $c ${k}_blocks)" "$(jget "$WORK/$c.count" ".$k")"
	done
done
near "window_cost s: between / pre" "$(r s between_ratio)" 1.1
near "window_cost d: between / pre" "$(r d between_ratio)" 1.05
expect "window_cost: plain borrows a sampled run's windows" "$(r plain windows_of)" d
near "window_cost: plain between / pre" "$(r plain between_ratio)" 1.1
near "window_cost: plain in / pre" "$(r plain in_ratio)" 2.0
for k in pre in between; do
	expect "window_cost: plain's $k blocks, at d's windows" "$(r plain ${k}_blocks)" \
		"$(jget "$WORK/d.count" ".$k")"
done
near "window_cost: summary" "$(jq -r '.summary.s.between_ratio.median' "$WORK/wc.json")" 1.1
grep -q "between/pre 1.1000" "$WORK/wc.txt" || fail "window_cost: text summary: $(tail -3 "$WORK/wc.txt")"
python3 "$SOURCE_ROOT/scripts/window_cost.py" --gpushim "$GPUSHIM_BIN" --margin-ms 3 \
	--loop graph --json "$WORK/g.json" "$D" >/dev/null || fail "window_cost: --loop graph"
expect "window_cost: graph runs" "$(jq -c '[.runs[].config]' "$WORK/g.json")" '["d","s"]'
# a trace that cannot be read: its run is left out, said on stderr, not read as windowless
cp "$D/s-0.blocks" "$D/x-0.blocks"
echo "not a trace" >"$D/x-0.trace"
python3 "$SOURCE_ROOT/scripts/window_cost.py" --gpushim "$GPUSHIM_BIN" --margin-ms 3 \
	--json "$WORK/x.json" "$D" >/dev/null 2>"$WORK/x.err" || fail "window_cost: damaged trace: exit $?"
grep -q "x-0.trace: gpushim dump exit" "$WORK/x.err" || fail "window_cost: damaged trace: $(cat "$WORK/x.err")"
expect "window_cost: damaged trace's run left out" "$(jq -c '[.runs[].config]' "$WORK/x.json")" \
	'["d","plain","s"]'
mkdir "$WORK/empty"
if python3 "$SOURCE_ROOT/scripts/window_cost.py" --gpushim "$GPUSHIM_BIN" "$WORK/empty" \
	>/dev/null 2>"$WORK/err"; then
	fail "window_cost: an empty directory passed"
fi
grep -q "no CFG-ROUND.blocks" "$WORK/err" || fail "window_cost: empty: $(cat "$WORK/err")"
echo "window_cost_tool: ok"
