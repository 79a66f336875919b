"""Cost of drawing through jax.random with jaxpmac.prng_impl vs jaxpmac's native calls (CPU).

Run: python benchmarks/bench_jax_interop.py   (prints compile and run times, median of repeats)
"""
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxpmac as jp


def timed(name, fn, *args, repeats=7):
    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    first = time.perf_counter() - t0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        runs.append(time.perf_counter() - t0)
    print(f"{name:58s} first call {first * 1e3:8.1f} ms   run {np.median(runs) * 1e3:8.2f} ms")
    return np.median(runs)


def main():
    s = jp.key(1).split_static("bench")
    k = jp.as_jax_key(s)
    n = 1 << 20
    print(f"jax {jax.__version__}, {jax.devices()}, x64={jax.config.jax_enable_x64}")
    timed("bits 2**20 u32: jp.bits, static state", jax.jit(lambda: jp.bits(s, (n,))))
    timed("bits 2**20 u32: jp.bits, traced uid", jax.jit(lambda u: jp.bits(s.split(u), (n,))),
          jnp.uint32(3))
    timed("bits 2**20 u32: jax.random.bits(as_jax_key(s))",
          jax.jit(lambda k: jax.random.bits(k, (n,), jnp.uint32)), k)
    timed("bits 2**20 u32: jax.random.bits(fold_in(k, u))",
          jax.jit(lambda k, u: jax.random.bits(jax.random.fold_in(k, u), (n,), jnp.uint32)),
          k, jnp.uint32(3))
    timed("normal 2**20 f32: jax.random.normal(k)",
          jax.jit(lambda k: jax.random.normal(k, (n,))), k)
    timed("normal 2**20 f32: threefry default key",
          jax.jit(lambda k: jax.random.normal(k, (n,))), jax.random.key(1))

    for length in (4, 16, 64):
        uids = jnp.arange(length, dtype=jnp.uint32)
        timed(f"chain of {length} traced words + 8 u32: state.split",
              jax.jit(lambda u: jp.bits(s.split(u), (8,))), uids)
        timed(f"chain of {length} traced words + 8 u32: jax.random.fold_in",
              jax.jit(lambda k, u: jax.random.bits(
                  jax.lax.fori_loop(0, length, lambda i, k: jax.random.fold_in(k, u[i]), k),
                  (8,), jnp.uint32)), k, uids)
    m = 4096
    ids = jnp.arange(m, dtype=jnp.uint32)
    timed(f"per-example noise, vmap {m} x 8 u32: state.split(i)",
          jax.jit(jax.vmap(lambda i: jp.bits(s.split(i), (8,)))), ids)
    timed(f"per-example noise, vmap {m} x 8 u32: fold_in(k, i)",
          jax.jit(jax.vmap(lambda k, i: jax.random.bits(jax.random.fold_in(k, i), (8,), jnp.uint32),
                           in_axes=(None, 0))), k, ids)
    timed(f"per-example noise, split(k, {m}) then bits",
          jax.jit(lambda k: jax.vmap(lambda kk: jax.random.bits(kk, (8,), jnp.uint32))(
              jax.random.split(k, m))), k)


if __name__ == "__main__":
    main()
