# SPDX-License-Identifier: MIT
"""A JAX training loop (an MLP, SGD, the loss read back every step), jitted: the first step
compiles. Checks that the report finds the steps of a JAX loop and its rate. The program
measures its own steady rate from step WARM to the end.

usage: jax_steps.py [--steps N]
Prints: "jax_steps: steps N steady_steps_per_s X loss A -> B".
"""
import argparse
import time

import jax
import jax.numpy as jnp

WARM = 10


def loss_fn(params, x, y):
    h = x
    for w in params[:-1]:
        h = jax.nn.gelu(h @ w)
    logits = h @ params[-1]
    return jnp.mean((logits - y) ** 2)


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return [p - 1e-3 * g for p, g in zip(params, grads)], loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    key = jax.random.PRNGKey(0)
    keys = jax.random.split(key, 8)
    params = [jax.random.normal(keys[i], (1024, 1024)) * 0.03 for i in range(6)]
    params.append(jax.random.normal(keys[6], (1024, 16)) * 0.03)
    x = jax.random.normal(keys[7], (512, 1024))
    y = jnp.zeros((512, 16))
    losses = []
    t_warm = None
    for i in range(args.steps):
        if i == WARM:
            t_warm = time.perf_counter()
        params, loss = train_step(params, x, y)
        losses.append(float(loss))
    rate = (args.steps - WARM) / (time.perf_counter() - t_warm)
    print(f"jax_steps: steps {args.steps} steady_steps_per_s {rate:.3f} "
          f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
