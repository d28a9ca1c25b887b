#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What sampled mode costs between its windows, measured inside one process (BENCHMARKS.md
"Recording modes side by side").

Processes of one launch-bound loop differ from each other by ±20 % on the H200, more than the
cost to be measured. A sampled run is its own control instead: before its first window
CUPTI's kinds have never been on (kept attached, the default: its callbacks are registered and
the counters run from the start; detaching: CUPTI is not attached at all), inside a window it
records, and between windows it is attached with its kinds off (or detached). torch_overhead.py --blocks writes each measured
block's CLOCK_MONOTONIC start and end; the trace's window notes (the same clock) say which
stretch each block ran in. A run without windows (plain, host) gets the windows of a sampled
run of the same round, at the same offsets from its first block: how much a process's loop
drifts by itself over the same stretch, the figure to hold the sampled ratio against.

For each run: the median µs an operation of the blocks before the first window ("pre"),
inside windows ("in": the blocks overlapping one, widened by the attach's own time the note
gives), and between windows after the first ("between"), blocks within MARGIN of a window's
edges left out; then "between / pre" and "in / pre". Then per configuration the median of the
rounds' ratios (least..most). The ratios are each run's own; the windowless runs' are printed
beside them, not divided out. With GPUSHIM_CUPTI_DETACH=1 the detach (a few ms at the first
CUDA call after a window's end) falls in the margin after the window: counted in neither.

usage: window_cost.py [--gpushim BIN] [--margin-ms M] [--loop eager] [--json OUT] DIR
  DIR holds CFG-ROUND.blocks (and CFG-ROUND.trace for runs under the shim), as
  scripts/bench_modes.sh writes them.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

RUN = re.compile(r"^(?P<cfg>.+)-(?P<round>\d+)\.blocks$")
WINDOW = re.compile(r"^sampled window (\d+)(?: \((.*)\))?$")
ATTACH = re.compile(r"attached (?:again )?in ([0-9.]+) ms")
WINDOW_END = re.compile(r"^sampled window (\d+) ends$")
NOTE_ON, NOTE_OFF = 2, 3


def windows_of(gpushim, trace):
    """[(start_ns, end_ns)] of the trace's sampled windows, in order; [] when it has none,
    None when there is no trace or it could not be read. A window starts where its attach
    began (the note's time less the attach's duration)."""
    if not os.path.exists(trace):
        return None
    p = subprocess.run([gpushim, "dump", "--format", "jsonl", trace], capture_output=True,
                       text=True)
    if p.returncode != 0:
        print(f"window_cost: {trace}: gpushim dump exit {p.returncode}: "
              f"{p.stderr.strip()[:300]} (run left out)", file=sys.stderr)
        return None
    opened = {}
    out = []
    for line in p.stdout.splitlines():
        if '"note"' not in line:
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        text = r.get("text_str") or ""
        if r.get("kind") == NOTE_ON:
            m = WINDOW.match(text)
            if m:
                a = ATTACH.search(m.group(2) or "")
                attach = float(a.group(1)) if a else 0.0
                opened[m.group(1)] = r["ts_ns"] - int(attach * 1e6)
        elif r.get("kind") == NOTE_OFF:
            m = WINDOW_END.match(text)
            if m and m.group(1) in opened:
                out.append((opened.pop(m.group(1)), r["ts_ns"]))
    # a window still open at the end (the process exited inside it) runs to the end
    for start in opened.values():
        out.append((start, 1 << 62))
    return sorted(out)


def classify(blocks, wins, margin):
    """Blocks' µs an operation by stretch: pre, in, between (edges left out)."""
    cls = {"pre": [], "in": [], "between": []}
    if not wins:
        return cls
    first_on, first_off = wins[0]
    for b in blocks:
        t0, t1 = b["t0"], b["t1"]
        us = (t1 - t0) / (1e3 * b["ops"])
        if any(t0 < off and t1 > on for on, off in wins):
            cls["in"].append(us)
        elif t1 < first_on - margin:
            cls["pre"].append(us)
        elif t0 > first_off + margin and not any(
                t0 < off + margin and t1 > on - margin for on, off in wins):
            cls["between"].append(us)
    return cls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--gpushim", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                      "analyzer", "gpushim"))
    ap.add_argument("--margin-ms", type=float, default=50.0)
    ap.add_argument("--loop", default="eager")
    ap.add_argument("--json")
    args = ap.parse_args()
    margin = int(args.margin_ms * 1e6)

    runs = {}
    for name in sorted(os.listdir(args.dir)):
        m = RUN.match(name)
        if not m:
            continue
        blocks = []
        with open(os.path.join(args.dir, name)) as f:
            for line in f:
                try:
                    b = json.loads(line)
                except ValueError:
                    continue
                if isinstance(b, dict) and b.get("loop") == args.loop and b.get("ops") and b["t1"] > b["t0"]:
                    blocks.append(b)
        if not blocks:
            continue
        trace = os.path.join(args.dir, name[:-len(".blocks")] + ".trace")
        wins = windows_of(args.gpushim, trace)
        if wins is None and os.path.exists(trace):
            continue	# a trace that could not be read: not read as a run without windows
        runs[(m["cfg"], int(m["round"]))] = {"blocks": blocks, "windows": wins or []}
    if not runs:
        sys.exit(f"window_cost: no CFG-ROUND.blocks with loop {args.loop!r} in {args.dir}")

    # runs without windows borrow a windowed run's of the same round, by offset from the first
    # block
    rows = []
    for (cfg, rnd), run in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        wins, borrowed = run["windows"], None
        if not wins:
            for (c2, r2), other in sorted(runs.items()):
                if r2 == rnd and other["windows"]:
                    base = other["blocks"][0]["t0"]
                    shift = run["blocks"][0]["t0"] - base
                    wins = [(on + shift, off + shift) for on, off in other["windows"]]
                    borrowed = c2
                    break
        cls = classify(run["blocks"], wins, margin)
        row = {"config": cfg, "round": rnd, "windows": len(run["windows"]),
               "windows_of": borrowed}
        for k, v in cls.items():
            row[k + "_blocks"] = len(v)
            row[k + "_us"] = statistics.median(v) if v else None
        for k in ("between", "in"):
            row[k + "_ratio"] = (row[k + "_us"] / row["pre_us"]
                                 if row[k + "_us"] and row["pre_us"] else None)
        rows.append(row)

    def f(v, fmt="{:.3f}"):
        return fmt.format(v) if v is not None else "-"
    print(f"{args.loop} loop, µs an operation (median of the blocks) before the first window, "
          "inside windows, between them; ratios to 'pre' in the same process")
    print(f"{'config':<16} {'round':>5} {'wins':>4} {'pre':>14} {'in':>14} {'between':>14} "
          f"{'between/pre':>11} {'in/pre':>7}")
    for r in rows:
        tag = r["config"] + (f" ({r['windows_of']}'s)" if r["windows_of"] else "")
        print(f"{tag:<16} {r['round']:>5} {r['windows']:>4} "
              f"{f(r['pre_us']):>7} ({r['pre_blocks']:>4}) {f(r['in_us']):>7} ({r['in_blocks']:>4}) "
              f"{f(r['between_us']):>7} ({r['between_blocks']:>4}) "
              f"{f(r['between_ratio'], '{:.4f}'):>11} {f(r['in_ratio']):>7}")
    print("median of the rounds' ratios (least..most):")
    summary = {}
    for cfg in dict.fromkeys(r["config"] for r in rows):
        s = {}
        for k in ("between_ratio", "in_ratio"):
            v = sorted(r[k] for r in rows if r["config"] == cfg and r[k] is not None)
            s[k] = {"median": statistics.median(v), "min": v[0], "max": v[-1], "n": len(v)} \
                if v else None
        summary[cfg] = s
        parts = []
        for k, label in (("between_ratio", "between/pre"), ("in_ratio", "in/pre")):
            if s[k]:
                parts.append(f"{label} {s[k]['median']:.4f} ({s[k]['min']:.4f}..{s[k]['max']:.4f}, "
                             f"{s[k]['n']} rounds)")
        print(f"  {cfg:<14} " + ("; ".join(parts) if parts else "no stretch on both sides"))
    if args.json:
        with open(args.json, "w") as fj:
            json.dump({"loop": args.loop, "margin_ms": args.margin_ms, "runs": rows,
                       "summary": summary}, fj, indent=1)


if __name__ == "__main__":
    main()
