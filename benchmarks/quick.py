"""Quick A/B of jaxpmac against jax.random: compile time and interleaved run time, one process.

    python -m benchmarks.quick                      # every workload
    python -m benchmarks.quick model20,scan,bits20  # a few

Fifteen repeats of each pair of compiled programs, alternated, medians; the ratio is
jax.random's time over jaxpmac's (above 1: jaxpmac is faster). A minutes-long check for
lowering changes; ``benchmarks.run`` is the full, recorded benchmark.
"""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jaxpmac as jp

REPEATS = 15


def _model(bits, key, fold, sites=20, shape=(64, 64)):
    """20 draw sites of 64x64, each its own label, summed (a model-sized program)."""
    def draw(seed):
        k, total = key(seed), jnp.zeros(shape, jnp.float32)
        for j in range(sites):
            x = bits(fold(k, j), shape)
            total = total + (x >> np.uint32(8)).astype(jnp.float32) * np.float32(j + 1)
        return total
    return draw


def _scan(bits, key, fold):
    def draw(seed):
        k = key(seed)
        return lax.scan(lambda c, i: (c, bits(fold(k, i), (256,))), None,
                        jnp.arange(4096, dtype=jnp.uint32))[1]
    return draw


def _vmap(bits, key, fold):
    def draw(seed):
        k = key(seed)
        return jax.vmap(lambda i: bits(fold(k, i), (1024,)))(jnp.arange(4096, dtype=jnp.uint32))
    return draw


JAXPMAC = dict(bits=jp.bits, key=jp.key, fold=lambda k, j: k.split(j))
JAX = dict(bits=lambda k, shape: jax.random.bits(k, shape, jnp.uint32), key=jax.random.key,
           fold=jax.random.fold_in)
WORKLOADS = {
    "model20": (_model(**dict(JAXPMAC, fold=lambda k, j: k.split_static(j))), _model(**JAX)),
    "scan": (_scan(**JAXPMAC), _scan(**JAX)),
    "vmap": (_vmap(**JAXPMAC), _vmap(**JAX)),
}
for _log2 in (16, 20, 22):
    _n = 1 << _log2
    for _name, _ours, _theirs in (("bits", jp.bits, JAX["bits"]),
                                  ("unif", jp.uniform, jax.random.uniform),
                                  ("norm", jp.normal, jax.random.normal)):
        WORKLOADS[f"{_name}{_log2}"] = (
            (lambda f, n: lambda s: f(jp.key(s), (n,)))(_ours, _n),
            (lambda f, n: lambda s: f(jax.random.key(s), (n,)))(_theirs, _n))


def compare(name: str) -> str:
    compiled, compile_s = [], []
    for fn in WORKLOADS[name]:
        lowered = jax.jit(fn).lower(jnp.uint32(7))
        start = time.perf_counter()
        compiled.append(lowered.compile())
        compile_s.append(time.perf_counter() - start)
        jax.block_until_ready(compiled[-1](jnp.uint32(1)))
    times = [[], []]
    for r in range(REPEATS):
        for i, c in enumerate(compiled):
            start = time.perf_counter()
            jax.block_until_ready(c(jnp.uint32(r)))
            times[i].append(time.perf_counter() - start)
    ours, theirs = np.median(times[0]), np.median(times[1])
    return (f"{name:8s} jaxpmac {ours * 1e3:7.2f} ms (compile {compile_s[0]:.2f} s)  "
            f"jax.random {theirs * 1e3:7.2f} ms (compile {compile_s[1]:.2f} s)  "
            f"ratio {theirs / ours:.2f}x")


if __name__ == "__main__":
    for workload in (sys.argv[1].split(",") if len(sys.argv) > 1 else WORKLOADS):
        print(compare(workload), flush=True)
