# SPDX-License-Identifier: MIT
"""K training-style steps, each ending in loss.item() (a 4-byte device-to-host copy and a
stream synchronization), a cuBLAS matmul and aten elementwise kernels in every step, then a CUDA
graph captured once and replayed 5 times. Run with two K values: the trace's stream
synchronizations must differ by exactly the difference in K.

usage: torch_items.py K
"""
import sys

import torch


def main():
    k = int(sys.argv[1])
    torch.manual_seed(0)
    x = torch.randn(512, 512, device="cuda")
    w = torch.randn(512, 512, device="cuda")
    total = 0.0
    for _ in range(k):
        y = torch.relu(x @ w)
        total += (y * 0.5).sum().item()

    static_in = torch.randn(256, 512, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # warm up outside the capture, as PyTorch requires
            static_out = torch.tanh(static_in @ w) + 1.0
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = torch.tanh(static_in @ w) + 1.0
    for _ in range(5):
        static_in.copy_(torch.randn(256, 512, device="cuda"))
        graph.replay()
    torch.cuda.synchronize()
    print(f"torch_items: total {total:.3f} out {static_out.sum().item():.3f}")
    print(f"expect: items={k} replays=5")


if __name__ == "__main__":
    main()
