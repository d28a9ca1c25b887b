# SPDX-License-Identifier: MIT
"""What "busy" means in three PyTorch loops that keep the GPU 100 % utilized, each for about
3.5 s (the hardware counters start 1 s after the first kernel):
  softmax    masked_fill then softmax over a 32 x 4096 x 4096 fp32 score tensor (2 GiB): the
             SMs are busy on exponentials, reductions and index arithmetic on the CUDA cores,
             not on the tensor cores; masked_fill also materializes a 2 GiB copy
  broadcast  (a[:, None] - b[None, :]).abs().sum() over 32768 x 32768: a broadcast kernel
             doing 64-bit index arithmetic per element, then abs over a 4 GiB intermediate
  matmul     bf16 8192 x 8192 matmuls: the tensor cores (the GPU used well)

usage: torch_pipes.py softmax|broadcast|matmul
"""
import sys
import time

import torch


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    dev = "cuda"
    torch.manual_seed(0)
    if mode == "softmax":
        x = torch.randn(32, 4096, 4096, device=dev)
        mask = torch.rand(4096, 4096, device=dev) > 0.5
        step = lambda: torch.softmax(x.masked_fill(mask, float("-inf")), dim=-1)
    elif mode == "broadcast":
        a = torch.randn(32768, device=dev)
        b = torch.randn(32768, device=dev)
        step = lambda: (a[:, None] - b[None, :]).abs().sum()
    elif mode == "matmul":
        a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        step = lambda: a @ b
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    steps = 0
    while time.perf_counter() - t0 < 3.5:
        for _ in range(4):
            y = step()
            steps += 1
        torch.cuda.synchronize()
    print(f"torch_pipes {mode}: {steps} steps in {time.perf_counter() - t0:.2f} s, "
          f"checksum {float(y.float().flatten()[:1024].sum()):.3f}")


if __name__ == "__main__":
    main()
