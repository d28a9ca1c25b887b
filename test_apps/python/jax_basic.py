# SPDX-License-Identifier: MIT
"""JAX reaches the driver through dlsym on the libcuda handle (XLA's DSO stubs), not through
cuGetProcAddress: 50 jitted steps must appear as launches in the shim's trace.
"""
import jax
import jax.numpy as jnp


@jax.jit
def step(x, w):
    return jnp.tanh(x @ w) * 0.5 + x


def main():
    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (1024, 1024))
    w = jax.random.normal(key, (1024, 1024)) * 1e-2
    for _ in range(50):
        x = step(x, w)
    x.block_until_ready()
    print(f"jax_basic: {float(jnp.abs(x).mean()):.4f} on {jax.devices()[0].device_kind}")


if __name__ == "__main__":
    main()
