# SPDX-License-Identifier: MIT
"""The issue's first example, as a new user writes it: a GPT-2 (Hugging Face transformers, 6
layers, built on the CPU), bf16 autocast, AdamW, STEPS steps, the loss read back every step.
Start-up (importing transformers, building the model on the CPU) takes seconds; the program
measures its own steady rate from step WARM to the end.

usage: hf_gpt2_steps.py [--steps N]
Prints: "hf_gpt2_steps: steps N steady_steps_per_s X loss A -> B".
"""
import argparse
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

WARM = 10


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=6, n_head=12, n_embd=768, n_positions=512, vocab_size=50257)
    model = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    x = torch.randint(0, cfg.vocab_size, (8, 512), device="cuda")
    losses = []
    t_warm = None
    for i in range(args.steps):
        if i == WARM:
            torch.cuda.synchronize()
            t_warm = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    torch.cuda.synchronize()
    rate = (args.steps - WARM) / (time.perf_counter() - t_warm)
    print(f"hf_gpt2_steps: steps {args.steps} steady_steps_per_s {rate:.3f} "
          f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")


if __name__ == "__main__":
    main()
