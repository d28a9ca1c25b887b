# SPDX-License-Identifier: MIT
"""A training loop annotated with torch.cuda.nvtx: a start-up of a few seconds (host work, then
the model built) in a "startup" range pushed before CUDA is touched, then STEPS steps, each a
"step" range (range_push/range_pop) around forward, backward and the optimizer; a mark at the
end. The shim records the ranges through NVTX's injection interface (torch's NVTX calls reach it
once NVTX_INJECTION64_PATH names the shim, which its constructor sees to).
Expected (scripts/gpu_check.py, part nvtx): exactly STEPS "step" pushes in NVTX's default domain,
every range balanced, the start-up range before the first CUDA call.

usage: torch_nvtx_steps.py [STEPS]   (default 50)
"""
import sys
import time

import torch


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    torch.cuda.nvtx.range_push("startup")
    t0 = time.time()
    spins = 0
    while time.time() - t0 < 3.0:  # data loading, tokenizing, ...: host work before CUDA
        spins += 1
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = torch.randn(512, 1024, device="cuda")
    torch.cuda.nvtx.range_pop()
    for _ in range(steps):
        torch.cuda.nvtx.range_push("step")
        loss = model(data).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.nvtx.mark("done")
    print(f"torch_nvtx_steps: {steps} steps, loss {loss.item():.4f}")
    print(f"expect: nvtx_steps={steps}")


if __name__ == "__main__":
    main()
