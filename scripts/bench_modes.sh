#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Recording modes side by side on a GPU (BENCHMARKS.md "Recording modes side by side"):
# test_apps/python/torch_overhead.py plain, under GPUSHIM_MODE=host, sampled and full, and
# under torch.profiler, ROUNDS rounds with the order rotated each round (the machine drifts:
# alternate, report medians and spread). Each run is its own process; every line it prints is
# kept with its configuration, round, wall time and trace size in DIR/runs.jsonl, and a table
# of medians (spread: the rounds' least and most) is printed at the end.
# Usage: scripts/bench_modes.sh [DIR]   env: BUILD (build), ROUNDS (3), SECONDS_EACH (6),
#        PROFILE_SECONDS (1: torch.profiler's measured stretch; its stop grows with it),
#        CONFIGS ("plain host sampled full profiler"; NAME:VAR=VAL,VAR=VAL runs the shim with
#        those settings, e.g. "attached:GPUSHIM_MODE=sampled,GPUSHIM_CUPTI_DETACH=0" for
#        sampled mode with CUPTI kept attached between windows), LOOPS
#        (eager,graph,gpu), CPUS (a CPU list for taskset: every run on the same CPUs, which
#        the machine's scheduling otherwise varies from process to process); extra GPUSHIM_*
#        passed through. Each run's measured blocks go to DIR/CFG-ROUND.blocks, and
#        scripts/window_cost.py then gives the cost between windows inside each process.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
DIR=${1:-$(mktemp -d)}
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-6}
PROFILE_SECONDS=${PROFILE_SECONDS:-1}
read -r -a configs <<<"${CONFIGS:-plain host sampled full profiler}"
SHIM=$(realpath "$BUILD/shim/libgpushim.so")
mkdir -p "$DIR"
: >"$DIR/runs.jsonl"
rm -f "$DIR"/*.blocks "$DIR"/*.trace	# a reused DIR: no older run read with this one's

run_one() {		# CONFIG ROUND
	local cfg=${1%%:*} round=$2 trace t0 t1 size=0 kv
	local -a env=() args=(--seconds "$SECONDS_EACH" --loops "${LOOPS:-eager,graph,gpu}"
		--blocks "$DIR/$cfg-$round.blocks")
	trace="$DIR/$cfg-$round.trace"
	case $1 in
	plain) ;;
	profiler) args=(--seconds "$PROFILE_SECONDS" --profile --loops "${LOOPS:-eager,graph,gpu}") ;;
	*:*)
		env=(LD_PRELOAD="$SHIM" GPUSHIM_OUTPUT="$trace")
		IFS=, read -r -a kv <<<"${1#*:}"
		env+=("${kv[@]}")
		;;
	*) env=(LD_PRELOAD="$SHIM" GPUSHIM_OUTPUT="$trace" GPUSHIM_MODE="$cfg") ;;
	esac
	t0=$(date +%s%N)
	${CPUS:+taskset -c "$CPUS"} env "${env[@]}" python3 test_apps/python/torch_overhead.py "${args[@]}" >"$DIR/$cfg-$round.out" \
		2>"$DIR/$cfg-$round.err"
	t1=$(date +%s%N)
	[ -f "$trace" ] && size=$(stat -c %s "$trace")
	jq -c --arg cfg "$cfg" --argjson round "$round" --argjson wall "$(((t1 - t0) / 1000000))e-3" \
		--argjson bytes "$size" '. + {config: $cfg, round: $round, wall_s: $wall, trace_bytes: $bytes}' \
		"$DIR/$cfg-$round.out" >>"$DIR/runs.jsonl"
}

for ((r = 0; r < ROUNDS; r++)); do
	n=${#configs[@]}
	for ((i = 0; i < n; i++)); do
		run_one "${configs[$(((i + r) % n))]}" "$r"
	done
done

python3 - "$DIR/runs.jsonl" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
loops = [r for r in rows if "loop" in r]
cfgs = list(dict.fromkeys(r["config"] for r in rows))
def med(v):
    return statistics.median(v) if v else float("nan")
base = {}
names = list(dict.fromkeys(r["loop"] for r in loops))
for loop in names:
    v = [r["mean_us"] for r in loops if r["config"] == "plain" and r["loop"] == loop]
    base[loop] = med(v)
print("us per operation: mean over the measured blocks, median of the rounds (least..most); "
      "+% against plain's median")
for loop in names:
    cells = []
    for c in cfgs:
        v = sorted(r["mean_us"] for r in loops if r["config"] == c and r["loop"] == loop)
        if not v:
            continue
        m = med(v)
        cells.append(f"{c} {m:.2f} ({v[0]:.2f}..{v[-1]:.2f}) {100 * (m / base[loop] - 1):+.1f}%")
    print(f"  {loop:6s} " + " | ".join(cells))
print("paired: median over the rounds of each round's ratio to plain's run of that round "
      "(least..most)")
for loop in names:
    cells = []
    pl = {r["round"]: r["mean_us"] for r in loops if r["config"] == "plain" and r["loop"] == loop}
    for c in cfgs:
        if c == "plain":
            continue
        v = sorted(r["mean_us"] / pl[r["round"]] for r in loops
                   if r["config"] == c and r["loop"] == loop and pl.get(r["round"]))
        if v:
            cells.append(f"{c} {med(v):.3f} ({v[0]:.3f}..{v[-1]:.3f})")
    if cells:
        print(f"  {loop:6s} " + " | ".join(cells))
stops = [r["stop_s"] for r in loops if "stop_s" in r]
if stops:
    print("torch.profiler stop: " + ", ".join(f"{s:.2f}" for s in stops) + " s")
print("shim threads' CPU (s per s of the process) and trace MB per hour:")
for c in cfgs:
    ends = [r for r in rows if r["config"] == c and "shim_cpu_s" in r]
    if not ends or c in ("plain", "profiler"):
        continue
    w = [sum(r["shim_cpu_s"].get(k, 0) for k in r["shim_cpu_s"] if "writer" in k) / r["age_s"]
         for r in ends]
    p = [sum(r["shim_cpu_s"].get(k, 0) for k in r["shim_cpu_s"] if "pm" in k) / r["age_s"]
         for r in ends]
    sizes = [r["trace_bytes"] / r["age_s"] * 3600 / 1e6 for r in ends]
    print(f"  {c:8s} writer {med(w):.3f}  pm {med(p):.3f}  trace {med(sizes):.1f} MB/h")
EOF

# the cost between a sampled run's windows, inside each process (scripts/window_cost.py)
if ls "$DIR"/*.blocks >/dev/null 2>&1; then
	IFS=, read -r -a loopnames <<<"${LOOPS:-eager,graph,gpu}"
	for l in "${loopnames[@]}"; do
		python3 scripts/window_cost.py --gpushim "$BUILD/analyzer/gpushim" --loop "$l" \
			--json "$DIR/window_cost_$l.json" "$DIR" ||
			echo "bench_modes.sh: window_cost.py gave no figures for loop $l" >&2
	done
fi
