# SPDX-License-Identifier: MIT
"""Memory pressure in PyTorch's caching allocator: 2 GiB tensors made until the device refuses
one (the allocator empties its empty cache, retries, and raises OutOfMemoryError: two refusals),
half of them dropped (back to the allocator's cache, still held from the driver), then one
8 GiB tensor, which no cached block fits: cudaMalloc is refused, the allocator frees its cached
blocks (cudaFree) and retries, which succeeds — a reclaim the program never sees.

usage: torch_oom_retry.py
"""
import torch


def main():
    blocks = []
    try:
        while True:
            blocks.append(torch.empty(2 << 30, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError:
        pass
    n = len(blocks)
    del blocks[n // 2:]
    big = torch.empty(8 << 30, dtype=torch.uint8, device="cuda")
    big.fill_(1)
    total = int(big[:1024].sum().item())
    print(f"torch_oom_retry: {n} tensors of 2 GiB before the refusal, 8 GiB made after, "
          f"checksum {total}")


if __name__ == "__main__":
    main()
