# SPDX-License-Identifier: MIT
"""One known cause at a known line, for the report's code locations (scripts/gpu_check.py
"where"). Each mode runs STEPS training-style steps whose time goes mostly to one cause, made at
one line of this file; it prints "where: FILE LINE[,LINE]" - the line (or lines) the cause's top
site must name - then "expect: ..." for the cause.

  item      a per-step loss.item() after a matmul that fills the SMs: host_sync at the .item()
            line
  pageable  a per-step .to("cuda") of a batch in pageable memory: memcpy at that line
  alloc     allocations with the caching allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1, set by
            the caller): allocation at the torch.empty line or the del line that frees it
  cpu       CPU-bound preprocessing between steps: cpu_bound, placed between the call before
            (the .item() line) and the call after it (the matmul's launch line)

usage: torch_where.py MODE [STEPS]
"""
import sys
import time

import torch


def line_after(delta=1):
    """The line @delta lines below the caller's current one."""
    return sys._getframe(1).f_lineno + delta


def item_steps(steps, x, w):
    total = 0.0
    xb = x.repeat(4, 1)                          # 4096 rows: the matmul fills the SMs
    lines = [line_after(3)]
    for _ in range(steps):
        y = torch.relu(xb @ w)
        total += (y * 0.5).sum().item()
    return lines, total


def pageable_steps(steps, x, w):
    batch = torch.randn(64, 1024, 1024)          # 256 MiB in pageable host memory
    total = torch.zeros((), device="cuda")
    lines = [line_after(2)]
    for _ in range(steps):
        xb = batch.to("cuda")
        total += (xb[:8, :512, :512] @ w[:512, :512]).sum()
    return lines, float(total.item())


def alloc_steps(steps, x, w):
    total = torch.zeros((), device="cuda")
    lines = [line_after(3), line_after(5)]
    for _ in range(steps):
        for _ in range(50):
            t = torch.empty(4 << 20, device="cuda")
            t.fill_(1.0)
            del t
        total += (x @ w).sum()
    return lines, float(total.item())


def preprocess(ms):
    """CPU-bound work of @ms milliseconds, as a data pipeline's decoding would be."""
    end = time.perf_counter() + ms / 1000.0
    acc = 0
    while time.perf_counter() < end:
        acc += 1
    return acc


def cpu_steps(steps, x, w):
    total = 0.0
    lines = [line_after(3), line_after(4)]
    for _ in range(steps):
        preprocess(5.0)
        y = torch.relu(x @ w)
        total += y.sum().item()
    return lines, total


MODES = {
    "item": (item_steps, "host_sync"),
    "pageable": (pageable_steps, "memcpy"),
    "alloc": (alloc_steps, "allocation"),
    "cpu": (cpu_steps, "cpu_bound"),
}


def main():
    mode = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    fn, cause = MODES[mode]
    torch.manual_seed(0)
    x = torch.randn(1024, 1024, device="cuda")
    w = torch.randn(1024, 1024, device="cuda")
    lines, total = fn(steps, x, w)
    torch.cuda.synchronize()
    print(f"torch_where {mode}: total {total:.3f}")
    print(f"where: {__file__} {','.join(str(n) for n in lines)}")
    print(f"expect: cause={cause}")


if __name__ == "__main__":
    main()
