# SPDX-License-Identifier: MIT
"""torch.profiler holding CUPTI while the shim records: a launch-bound training loop (a small MLP,
batch 16: a few dozen short kernels a step) profiled with CPU and CUDA activities, three ways.

  whole     profile().start() right after CUDA is initialized (one tensor made), stop() after
            the last step: the profiler holds CUPTI for the whole run
  midloop   start() at step STEPS/3, stop() after the last step
  schedule  schedule(wait=5, warmup=5, active=10, repeat=2) and prof.step() every step: the
            profiler prepares, records and hands in two traces, then stays off

Then TAIL more steps with no profiler (the shim must have taken CUPTI back). Prints, with
CLOCK_MONOTONIC times in ns (the trace's clock), what the GPU check compares with the trace:
  start_call / start_return     around profile.start() (whole, midloop)
  stop_call / stop_return       around profile.stop()
  transition I A->B CALL RETURN around each prof.step() that changed the profiler's action
                                (schedule: NONE->WARMUP is where Kineto takes CUPTI)
  steps, tail, traces, profiler_kernels (kernel events in torch.profiler's own export(s))

usage: torch_profiler_held.py whole|midloop|schedule [--steps N] [--tail N] [--export DIR]
"""
import argparse
import json
import os
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule


def now():
    return time.monotonic_ns()


def kernels_in(path):
    with open(path) as f:
        return sum(1 for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("whole", "midloop", "schedule"))
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--tail", type=int, default=20)
    ap.add_argument("--export", default=None)
    args = ap.parse_args()
    out = args.export or tempfile.mkdtemp(prefix="torch_profiler_held.")
    os.makedirs(out, exist_ok=True)

    torch.manual_seed(0)
    x = torch.randn(16, 256, device="cuda")		# CUDA initialized here
    torch.cuda.synchronize()
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    traces = []

    def ready(p):
        path = os.path.join(out, f"trace_{len(traces)}.json")
        p.export_chrome_trace(path)
        traces.append(path)

    if args.mode == "schedule":
        prof = profile(activities=acts, on_trace_ready=ready,
                       schedule=schedule(wait=5, warmup=5, active=10, repeat=2))
    else:
        prof = profile(activities=acts)
    if args.mode in ("whole", "schedule"):
        t0 = now()
        prof.start()
        print(f"start_call={t0} start_return={now()}", flush=True)

    model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(256, 256),
                                                                torch.nn.ReLU())]).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        model(x).pow(2).mean().backward()
        opt.step()

    for i in range(args.steps):
        if args.mode == "midloop" and i == args.steps // 3:
            torch.cuda.synchronize()
            t0 = now()
            prof.start()
            print(f"start_call={t0} start_return={now()} start_step={i}", flush=True)
        step()
        if args.mode == "schedule":
            before, t0 = prof.current_action, now()
            prof.step()
            t1 = now()
            if prof.current_action != before:
                print(f"transition {i} {before.name}->{prof.current_action.name} {t0} {t1}",
                      flush=True)
    torch.cuda.synchronize()
    t0 = now()
    prof.stop()
    print(f"stop_call={t0} stop_return={now()}", flush=True)
    if args.mode != "schedule":
        ready(prof)
    for _ in range(args.tail):
        step()
    torch.cuda.synchronize()
    print(f"steps={args.steps} tail={args.tail} traces={len(traces)}")
    print(f"profiler_kernels={sum(kernels_in(p) for p in traces)}")


if __name__ == "__main__":
    main()
