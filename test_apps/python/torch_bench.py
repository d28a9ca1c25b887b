# SPDX-License-Identifier: MIT
"""A PyTorch training loop for overhead and size measurements (BENCHMARKS.md): a small
transformer-style block (layer norms, attention-sized matmuls, GELU, residuals: about 60
kernels a step) trained for 200 steps (--steps N). Prints the mean step time of all steps but
the first 20; with --profile PATH it runs under torch.profiler (CPU + CUDA) and exports a
Chrome trace.
--small shrinks the block to width 64 and a batch of 4 x 16: the same kernels, each too small
to hide the host's cost of launching it, so the loop is launch-bound and every microsecond a
tool adds per launch shows in the step time.

--steps makes long runs: traces of millions of records for the analyzer's benchmark.

usage: torch_bench.py [--small] [--steps N] [--profile EXPORT.json]
"""
import argparse
import json
import os
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, d=1024):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1) @ v
        x = x + self.proj(att)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    torch.manual_seed(0)
    d = 64 if args.small else 1024
    model = torch.nn.Sequential(Block(d), Block(d)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(4, 16, d, device="cuda") if args.small else torch.randn(8, 256, d,
                                                                             device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()

    prof = None
    if args.profile:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.start()
    steps = max(args.steps, 21)
    for i in range(steps):
        if i == 20:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        step()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    print(f"step_ms={(t1 - t0) * 1000 / (steps - 20):.4f}")
    if prof:
        prof.stop()
        prof.export_chrome_trace(args.profile)
        with open(args.profile) as f:
            events = len(json.load(f)["traceEvents"])
        print(f"export_bytes={os.path.getsize(args.profile)} export_events={events}")


if __name__ == "__main__":
    main()
