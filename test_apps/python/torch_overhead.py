# SPDX-License-Identifier: MIT
"""What a recording tool costs a PyTorch loop, in steady state (BENCHMARKS.md "Recording
modes side by side"; scripts/bench_modes.sh runs it plain, under each GPUSHIM_MODE and under
torch.profiler, alternating).

Three loops, one after the other in one process, each warmed up for --warm seconds and then
measured for --seconds (whole blocks of 600 operations, the GPU synchronized at each block's
end):
  eager  a 256-element tanh chain: launch-bound, the host's cost per launch is the step time
  graph  the same chain captured as a CUDA graph of 600 kernels, replayed
  gpu    4096 x 4096 bf16 matmuls: GPU-bound

Prints one JSON line per loop: mean and median microseconds per operation over the measured
blocks (the mean is the figure for a sampled mode, whose cost comes in windows), and at the
end one line with the shim's threads' CPU seconds (from /proc/self/task) and the process's
age. With --profile, each loop's measured stretch runs under torch.profiler (CPU and CUDA
activities) and the line also gives the seconds its stop took (Kineto's processing).

--repeat N measures the loops N times over (a long run: each line also gives the process's
resident memory, rss_kb).

--blocks FILE appends each measured block as a JSON line {"loop", "t0", "t1", "ops"} (t0 and t1
CLOCK_MONOTONIC nanoseconds, the clock of the shim's trace), written after each loop:
scripts/window_cost.py sets them against a sampled trace's windows (the cost before CUPTI is
first attached, inside the windows and between them, in one process).

usage: torch_overhead.py [--seconds S] [--warm S] [--profile] [--loops eager,graph,gpu]
                         [--repeat N] [--blocks FILE]
"""
import argparse
import json
import os
import statistics
import time

import torch

OPS = 600


def eager_block(x):
    for _ in range(OPS):
        x = torch.tanh(x)
    return x


def make_loops(names):
    """The loops named; the graph is captured only when its loop runs (a process that never
    makes a CUDA graph call is what GPUSHIM_CUPTI_DETACH detaches between windows)."""
    x = torch.randn(256, device="cuda")
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    g = None
    if "graph" in names:
        gx = torch.randn(256, device="cuda")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                eager_block(gx)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            gy = eager_block(gx)
        del gy

    def eager():
        eager_block(x)

    def graph():
        g.replay()

    def gpu():
        for _ in range(OPS // 60):
            a @ b
    # ops per block: the matmul loop runs 10 (each ~0.1 ms)
    return {"eager": (eager, OPS), "graph": (graph, OPS), "gpu": (gpu, OPS // 60)}


def measure(fn, ops, seconds, spans=None):
    """Whole blocks for `seconds`; each block's CLOCK_MONOTONIC start and end go to `spans`."""
    times = []
    end = time.monotonic_ns() + int(seconds * 1e9)
    while True:
        t0 = time.monotonic_ns()
        if t0 >= end:
            break
        fn()
        torch.cuda.synchronize()
        t1 = time.monotonic_ns()
        times.append(t1 - t0)
        if spans is not None:
            spans.append((t0, t1))
    per_op = [t / (1e3 * ops) for t in times]
    return {
        "blocks": len(times),
        "mean_us": sum(times) / (1e3 * len(times) * ops),
        "median_us": statistics.median(per_op),
    }


def shim_cpu():
    """CPU seconds of the shim's threads (by name) and the process's age in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if name.startswith("gpushim"):
            out[name] = out.get(name, 0) + (int(fields[11]) + int(fields[12])) / tick
    with open("/proc/self/stat") as f:
        start = int(f.read().rsplit(")", 1)[1].split()[19]) / tick
    with open("/proc/uptime") as f:
        age = float(f.read().split()[0]) - start
    return out, age


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--warm", type=float, default=1.0)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--loops", default="eager,graph,gpu")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--blocks", metavar="FILE")
    args = ap.parse_args()
    loops = make_loops(args.loops.split(","))
    for name in args.loops.split(",") * args.repeat:
        fn, ops = loops[name]
        measure(fn, ops, args.warm)
        if args.profile:
            from torch.profiler import ProfilerActivity, profile
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
            prof.__enter__()
            r = measure(fn, ops, args.seconds)
            t = time.perf_counter()
            prof.__exit__(None, None, None)
            r["stop_s"] = time.perf_counter() - t
            t = time.perf_counter()
            n = len(prof.events())
            r["events"] = n
            r["events_s"] = time.perf_counter() - t
            del prof
        else:
            spans = [] if args.blocks else None
            r = measure(fn, ops, args.seconds, spans)
            if spans:
                with open(args.blocks, "a") as f:
                    for t0, t1 in spans:
                        f.write(json.dumps({"loop": name, "t0": t0, "t1": t1, "ops": ops}) + "\n")
        r["loop"] = name
        with open("/proc/self/status") as f:
            r["rss_kb"] = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        print(json.dumps(r), flush=True)
    cpu, age = shim_cpu()
    print(json.dumps({"shim_cpu_s": cpu, "age_s": age}), flush=True)


if __name__ == "__main__":
    main()
