# SPDX-License-Identifier: MIT
"""A training loop whose NVTX ranges each hold one known cause, for the range table
(`gpushim report --by-range`): after a start-up of a second, STEPS steps, each a "step" range
(torch.cuda.nvtx, the default domain) around
  "data"       8 ms of host work (a spin: tokenizing, augmenting) while the GPU has nothing
               queued: idle inside, cpu_bound (the sync before drained the queue, which held
               far less than 8 ms of work: its share is the sync's, the rest the host's)
  "forward"    the model's forward pass (an MLP, 3 layers of 2048)
  "backward"   loss.backward()
  "optimizer"  opt.step()
  "log"        loss.item(): the host waits for the step's kernels (a synchronization)
With --emit the loop also runs under torch.autograd.profiler.emit_nvtx(): a range per operator
(aten::addmm, ...) nested inside those, which must not be taken for the steps.
Expected (scripts/gpu_check.py, part ranges): the steps are the "step" ranges, exactly STEPS;
in the range table "data" has cpu_bound as the cause of most idle time and idle time at least
half its host time, "forward", "backward" and "optimizer" each launch kernels, every step range
launches the same number of kernels as the others.

usage: torch_ranges.py [--emit] [--steps N]
"""
import argparse
import contextlib
import time

import torch


def spin(seconds):
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds:
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emit", action="store_true")
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    spin(1.0)
    torch.manual_seed(0)
    layers = []
    for _ in range(3):
        layers += [torch.nn.Linear(2048, 2048), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(512, 2048, device="cuda")
    nvtx = torch.cuda.nvtx
    emit = torch.autograd.profiler.emit_nvtx() if args.emit else contextlib.nullcontext()
    losses = []
    t_steady = None
    with emit:
        for i in range(args.steps):
            if i == 10:
                t_steady = time.perf_counter()
            nvtx.range_push("step")
            nvtx.range_push("data")
            spin(0.008)
            nvtx.range_pop()
            nvtx.range_push("forward")
            loss = model(x).square().mean()
            nvtx.range_pop()
            nvtx.range_push("backward")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nvtx.range_pop()
            nvtx.range_push("optimizer")
            opt.step()
            nvtx.range_pop()
            nvtx.range_push("log")
            losses.append(loss.item())
            nvtx.range_pop()
            nvtx.range_pop()
    rate = (args.steps - 10) / (time.perf_counter() - t_steady)
    print(f"torch_ranges: steps {args.steps} steady_steps_per_s {rate:.2f} loss {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
