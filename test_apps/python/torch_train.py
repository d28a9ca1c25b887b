# SPDX-License-Identifier: MIT
"""A 4-layer MLP trained for 300 steps; after every step the loss is read back with .item()
(the common habit) and the host spends 300 us preparing the next batch. Each step's 1 ms of GPU
work cannot hide that host time any more: the read-back drained the queue.
Expected: host_sync reported with the time it costs.
"""
import time

import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(2048, 4096), torch.nn.ReLU(),
        torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
        torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
        torch.nn.Linear(4096, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(512, 2048, device="cuda")
    y = torch.randint(0, 10, (512,), device="cuda")
    losses = []
    for _ in range(300):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        end = time.perf_counter() + 300e-6  # the host prepares the next batch
        while time.perf_counter() < end:
            pass
    print(f"torch_train: loss {losses[0]:.3f} -> {losses[-1]:.3f}")


if __name__ == "__main__":
    main()
