# SPDX-License-Identifier: MIT
"""Robustness under the shim: a DataLoader whose workers fork after CUDA is initialized, the
caching allocator's alternative backends (run with PYTORCH_CUDA_ALLOC_CONF set), and a CUDA
graph whose result must be bit-identical with and without the shim (the hash printed last),
and ways out that run no destructor: death by SIGTERM or SIGSEGV left at their defaults (after
100 matmuls, synchronized), exec of another CUDA program (this script in alloc mode) and
os._exit(3); and one rank of a torchrun job (ranked).

usage: torch_workers.py dataloader|alloc|graph|term|segv|exec|osexit|ranked
"""
import ctypes
import hashlib
import os
import signal
import sys

import torch
import torch.utils.data as tud


class Random(tud.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(256, 256, generator=g)


def dataloader():
    torch.manual_seed(7)
    w = torch.randn(256, 256, device="cuda")  # CUDA is up before the workers fork
    loader = tud.DataLoader(Random(), batch_size=8, num_workers=2, pin_memory=True)
    total = 0.0
    for batch in loader:
        total += (batch.cuda(non_blocking=True) @ w).sum().item()
    print(f"dataloader: {total:.3f}")


def alloc():
    xs = []
    for i in range(50):
        xs.append(torch.randn(1 << (10 + i % 12), device="cuda"))
        if i % 7 == 6:
            xs = xs[-2:]
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    print(f"alloc: {sum(x.numel() for x in xs)}")


def graph():
    torch.manual_seed(123)
    w = torch.randn(512, 512, device="cuda")
    inp = torch.randn(128, 512, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = torch.tanh(inp @ w) * 3.0 + inp
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = torch.tanh(inp @ w) * 3.0 + inp
    results = []
    for i in range(5):
        inp.copy_(torch.full((128, 512), 0.01 * i, device="cuda"))
        g.replay()
        results.append(out.clone())
    torch.cuda.synchronize()
    digest = hashlib.sha256(torch.cat(results).cpu().numpy().tobytes()).hexdigest()
    print(f"graph_sha256={digest}")


def hundred_matmuls():
    a = torch.randn(512, 512, device="cuda")
    for _ in range(100):
        a = torch.tanh(a @ a)
    torch.cuda.synchronize()
    print("100 matmuls", flush=True)


def term():
    hundred_matmuls()
    os.kill(os.getpid(), signal.SIGTERM)


def segv():
    hundred_matmuls()
    ctypes.string_at(0)


def execv():
    hundred_matmuls()
    os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), "alloc"])


def osexit():
    hundred_matmuls()
    os._exit(3)


def ranked():
    """One rank of a torchrun job (no process group: each rank computes on its own)."""
    hundred_matmuls()
    print(f"rank {os.environ.get('RANK')}", flush=True)


if __name__ == "__main__":
    {"dataloader": dataloader, "alloc": alloc, "graph": graph, "term": term, "segv": segv,
     "exec": execv, "osexit": osexit, "ranked": ranked}[sys.argv[1]]()
