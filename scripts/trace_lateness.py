#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How late a trace's events arrive, for work on a streaming analyzer (BENCHMARKS.md): in file
order, the frontier is the latest event time read so far (a call's start, a GPU operation's or
counter sample's start); an event behind it arrives that late, in nanoseconds and in events
read since the frontier first passed its time. The largest lateness is the reorder window a
streaming analyzer would hold to see every event in time order.

A call is written when it returns, so its lateness includes its own duration; CUPTI delivers
GPU records in buffers, so theirs include the delivery period.

usage: scripts/trace_lateness.py [--gpushim BIN] TRACE
"""
import argparse
import bisect
import json
import subprocess
import sys

META = {"string", "api_def", "block", "time", "lost", "end", "device", "func", "occupancy",
        "note", "gpu_info", "gpu_corr", "pm_config"}


def quantile(v, p):
    return v[min(len(v) - 1, int(p * len(v)))] if v else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpushim", default="build/analyzer/gpushim")
    ap.add_argument("trace")
    args = ap.parse_args()
    p = subprocess.Popen([args.gpushim, "dump", "--format", "jsonl", args.trace],
                         stdout=subprocess.PIPE, text=True)
    front, steps, at = 0, [], []	# the frontier's values and the event count at each
    late_ns, late_ev, by_type = [], [], {}
    n = 0
    for line in p.stdout:
        r = json.loads(line)
        t = r.get("ts_ns", r.get("start_ns"))
        if t is None or r["type"] in META:
            continue
        n += 1
        if t > front:
            front = t
            steps.append(t)
            at.append(n)
            late_ns.append(0)
            late_ev.append(0)
            continue
        k = bisect.bisect_right(steps, t)	# the first frontier value past t
        ev = n - at[k]
        late_ns.append(front - t)
        late_ev.append(ev)
        s = by_type.setdefault(r["type"], [0, 0, 0])
        s[0] += 1
        s[1] = max(s[1], front - t)
        s[2] = max(s[2], ev)
    if p.wait() != 0:
        sys.exit(f"trace_lateness: gpushim dump failed (exit {p.returncode})")
    late_ns.sort()
    late_ev.sort()
    print(f"{n} events with a time")
    for q in (0.5, 0.9, 0.99, 0.999, 1.0):
        print(f"  p{q * 100:g}: {quantile(late_ns, q) / 1e6:.1f} ms late, "
              f"{quantile(late_ev, q)} events")
    for name, (count, ns, ev) in sorted(by_type.items()):
        print(f"  {name}: {count} behind the frontier, at most {ns / 1e6:.1f} ms, {ev} events")


if __name__ == "__main__":
    main()
