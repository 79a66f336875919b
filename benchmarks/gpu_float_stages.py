"""Where a float sampler's GPU values leave the CPU's: each stage of ``generalized_normal`` and
``ball`` (the two golden float32 cases that differed on an H100, 2026-11-26) computed on the
GPU and on the same machine's CPU, bit for bit.

    python -m benchmarks.gpu_float_stages          # on a machine with a GPU (and its CPU)

Prints one line per stage: how many of its float32 values differ between the two devices. The
first stage that differs is where to look. Each stage takes its inputs from the CPU's previous
stage, so a difference is that stage's own. On a machine with one backend it compares that
backend with itself (every count 0), which is how it is tested here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxpmac as jp
from jaxpmac._samplers import _fixed_math, _gamma_family
from jaxpmac._samplers._correctly_rounded import divide
from jaxpmac._samplers._derived_continuous import GENERALIZED_NORMAL_GAMMA_LABEL
from jaxpmac._samplers._random_geometry import BALL_GAMMA_LABEL

N = 1024
# As tests/golden_values.py names the two cases' states.
ROOT = jp.key(2026).split_static("golden values")


def _devices():
    cpu = jax.devices("cpu")[0]
    other = jax.devices()[0]
    return cpu, other


def _on(device, fn, *args):
    """``fn(*args)`` compiled for ``device``, its arguments placed there."""
    args = jax.device_put(args, device)
    return np.asarray(jax.jit(fn)(*args))


def _differing(a: np.ndarray, b: np.ndarray) -> int:
    a, b = np.asarray(a), np.asarray(b)
    both_nan = np.isnan(a) & np.isnan(b) if a.dtype.kind == "f" else False
    return int(((a.view(np.uint32) != b.view(np.uint32)) & ~both_nan).sum())


def stages() -> list[tuple[str, int]]:
    """(stage, values differing between the default device and the CPU), in order."""
    cpu, other = _devices()
    rows = []

    def compare(name, fn, *args):
        here, there = _on(cpu, fn, *args), _on(other, fn, *args)
        rows.append((name, _differing(here, there)))
        return here

    for case, p, label in (("generalized_normal/float32", 1.5, GENERALIZED_NORMAL_GAMMA_LABEL),
                           ("ball_p0.6/float32", 0.6, BALL_GAMMA_LABEL)):
        state = ROOT.split_static(case)
        streams_state = state.split_static(label)
        n = N if case.startswith("generalized") else (N // 4) * 3
        p_array = np.full((n,), p, np.float32)
        inverse = compare(f"{case}: 1 / p (p an argument)",
                          lambda q: divide(jnp.float32(1), q), p_array)
        compare(f"{case}: 1 / p (p a constant)",
                lambda: divide(jnp.float32(1), jnp.full((n,), p, jnp.float32)))
        log_g = compare(f"{case}: log Gamma(alpha) (alpha an argument)",
                        lambda a: _gamma_family.log_gamma_flat(
                            _gamma_family.gamma_streams(streams_state), a, jnp.float32), inverse)
        compare(f"{case}: log Gamma(alpha) (alpha a constant)",
                lambda: _gamma_family.log_gamma_flat(
                    _gamma_family.gamma_streams(streams_state), jnp.asarray(inverse), jnp.float32))
        product = compare(f"{case}: log G * (1 / p)",
                          lambda g, i: _fixed_math.rounded(g * i), log_g, inverse)
        compare(f"{case}: exp", _fixed_math.exp, product)
        compare(f"{case}: log", _fixed_math.log, np.abs(product) + np.float32(0.5))
        if case.startswith("generalized"):
            compare(f"{case}: the sampler",
                    lambda: jp.generalized_normal(state, p, (N,), jnp.float32))
        else:
            compare(f"{case}: the sampler", lambda: jp.ball(state, 3, p, (N // 4,), jnp.float32))
    return rows


def main() -> int:
    cpu, other = _devices()
    print(f"{other.device_kind} ({other.platform}) against {cpu.device_kind} (cpu), "
          f"jax {jax.__version__}")
    for name, count in stages():
        print(f"{count:6d} differ  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
