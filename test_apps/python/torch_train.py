# SPDX-License-Identifier: MIT
"""A small MLP trained for 300 steps on random data, logging loss.item() after every step -
the common habit that makes the host wait for the GPU each step.
Expected: host_sync reported with the time it costs.
"""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
        torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
        torch.nn.Linear(2048, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 1024, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    losses = []
    for _ in range(300):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print(f"torch_train: loss {losses[0]:.3f} -> {losses[-1]:.3f}")


if __name__ == "__main__":
    main()
