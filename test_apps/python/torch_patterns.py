# SPDX-License-Identifier: MIT
"""PyTorch versions of the test apps, one bottleneck per mode (the verdict each must get is
in the mode's docstring and in test_apps/expected/).

usage: torch_patterns.py MODE
"""
import sys
import time

import torch


def launch_bound():
    """5000 in-place adds on a 32-element tensor: every kernel is shorter than its launch.
    Expected: primary launch_overhead."""
    x = torch.zeros(32, device="cuda")
    for _ in range(5000):
        x.add_(1.0)
    torch.cuda.synchronize()


def host_sync():
    """Each step queues ~0.4 ms of GPU work, reads a value back (.item()) and spends 150 us of
    Python on it: the read-back drains the queue and the host's work is exposed.
    Expected: primary host_sync."""
    x = torch.randn(1 << 26, device="cuda")
    for _ in range(200):
        x = x * 0.999 + 0.001
        v = x[:1024].sum().item()
        end = time.perf_counter() + 150e-6
        while time.perf_counter() < end:
            v = v * 1.0000001


def cpu_bound():
    """300 us of Python work between GPU steps that are launched without waiting.
    Expected: primary cpu_bound."""
    a = torch.randn(2048, 2048, device="cuda")
    for _ in range(150):
        end = time.perf_counter() + 300e-6
        acc = 0
        while time.perf_counter() < end:
            acc += 1
        a = torch.tanh(a @ a * 1e-3)
    torch.cuda.synchronize()


def memcpy():
    """A 128 MiB pageable host tensor copied to the device every step (.cuda()).
    Expected: primary memcpy."""
    h = torch.randn(32 << 20)
    for _ in range(20):
        d = h.cuda()
        d.add_(1.0)
    torch.cuda.synchronize()


def low_parallelism():
    """torch.cuda._sleep launches a single-thread kernel that spins for a number of cycles:
    60 of them back to back keep the GPU "busy" with one SM working.
    Expected: primary low_parallelism."""
    for _ in range(60):
        torch.cuda._sleep(2_000_000)
    torch.cuda.synchronize()


def memory_full():
    """Device memory filled to 93 %, then light work with host pauses.
    Expected: memory_capacity flagged, primary cpu_bound."""
    free, total = torch.cuda.mem_get_info()
    target = int(total * 0.93) - (total - free)
    blocks = []
    chunk = 4 << 30
    while target > 0 and chunk >= (64 << 20):
        try:
            blocks.append(torch.empty(min(chunk, target), dtype=torch.uint8, device="cuda"))
            target -= min(chunk, target)
        except torch.OutOfMemoryError:
            chunk //= 2
    x = torch.randn(4096, device="cuda")
    for _ in range(100):
        x = x * 0.5 + 1.0
        end = time.perf_counter() + 2e-3
        while time.perf_counter() < end:
            pass
    torch.cuda.synchronize()
    print(f"memory_full: {sum(b.numel() for b in blocks) / 2**30:.1f} GiB held")


def healthy():
    """Large bf16 matmuls back to back (about 2 s of GPU work), one synchronization.
    Expected: no host-side cause above 10 % of the span."""
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    c = a @ b
    for _ in range(1200):
        c = a @ b
    torch.cuda.synchronize()
    print(f"healthy: {c.float().abs().mean().item():.3f}")


MODES = {f.__name__: f for f in (launch_bound, host_sync, cpu_bound, memcpy, low_parallelism,
                                 memory_full, healthy)}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        sys.exit("usage: torch_patterns.py " + "|".join(MODES))
    torch.zeros(1, device="cuda")
    MODES[sys.argv[1]]()
    print(f"torch_patterns: {sys.argv[1]} done")
