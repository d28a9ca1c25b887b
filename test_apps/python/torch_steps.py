# SPDX-License-Identifier: MIT
"""A training loop behind a slow start-up, to check the report's steps and phases: a few seconds
of CPU work before the first step (a synthetic dataset made and normalized on the CPU, the model
built there), then STEPS steps of a 6-layer MLP with AdamW, the loss read back every step.
The program measures its own steady rate: steps/s from step WARM to the end, between two
synchronizations, and prints it with the step count.

  --nvtx       each step in an NVTX range "train_step" (torch.cuda.nvtx)
  --compile    the model through torch.compile (the first step compiles: a long warm-up)

usage: torch_steps.py [--nvtx] [--compile] [--steps N] [--startup SECONDS]
Prints: "torch_steps: steps N steady_steps_per_s X loss A -> B".
"""
import argparse
import time

import torch

WARM = 10


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvtx", action="store_true")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--startup", type=float, default=3.0)
    args = ap.parse_args()

    torch.manual_seed(0)
    # Start-up: a dataset made and normalized on the CPU for about --startup seconds.
    t_end = time.perf_counter() + args.startup
    chunks = []
    while time.perf_counter() < t_end:
        c = torch.randn(256, 1024)
        chunks.append((c - c.mean(0)) / (c.std(0) + 1e-6))
    data = torch.cat(chunks[-64:])
    model = torch.nn.Sequential(*[m for _ in range(6)
                                  for m in (torch.nn.Linear(1024, 1024), torch.nn.GELU())],
                                torch.nn.Linear(1024, 16))
    model = model.cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    step_fn = torch.compile(model) if args.compile else model
    x = data[:512].cuda()
    y = torch.randint(0, 16, (512,), device="cuda")

    losses = []
    t_warm = None
    for i in range(args.steps):
        if i == WARM:
            torch.cuda.synchronize()
            t_warm = time.perf_counter()
        if args.nvtx:
            torch.cuda.nvtx.range_push("train_step")
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(step_fn(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if args.nvtx:
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    rate = (args.steps - WARM) / (time.perf_counter() - t_warm)
    print(f"torch_steps: steps {args.steps} steady_steps_per_s {rate:.3f} "
          f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")


if __name__ == "__main__":
    main()
