# SPDX-License-Identifier: MIT
"""40 steps of matmul + relu; torch.profiler records steps 15-24 and exports a Chrome trace.
Under the shim, torch.profiler must still see CUDA kernels (the shim yields CUPTI to it), and
the shim's own trace must have GPU records before and after the profiled window.

usage: torch_profiler_window.py EXPORT.json
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def step(x, w):
    return torch.relu(x @ w).sum()


def main():
    export = sys.argv[1]
    x = torch.randn(1024, 1024, device="cuda")
    w = torch.randn(1024, 1024, device="cuda")
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    for i in range(40):
        if i == 15:
            prof.start()
        step(x, w)
        torch.cuda.synchronize()
        if i == 24:
            prof.stop()
    prof.export_chrome_trace(export)
    with open(export) as f:
        events = json.load(f)["traceEvents"]
    kernels = sum(1 for e in events if e.get("cat") == "kernel")
    print(f"profiler_kernels={kernels}")


if __name__ == "__main__":
    main()
