"""Where a float sampler's GPU values leave the CPU's: ``generalized_normal`` and ``ball`` in
float32 (the two golden cases that differed on an H100 and an H200, 2026-11-26), whole and stage
by stage, on the GPU and on the same machine's CPU, bit for bit.

    python -m benchmarks.gpu_float_stages          # on a machine with a GPU (and its CPU)

Prints one line per comparison: how many of its float32 values differ between the two devices.
Every computation runs under ``jax.default_device`` of its device: a draw whose state and
parameters are all static has no array argument to place, so ``jax.device_put`` of its
arguments would leave it on the default device (the GPU) both times -- the mistake of this
script's first version, whose every count was 0 on an H200.

What is known (H200, jax 0.11.2, 2026-11-26): with the GPU's own lowering the two samplers give
other values than the CPU's golden ones (226 of 1024 and 235 of 768); under
``jp.force_lowering("rolled")``, which also puts the parameters and results behind an
``optimization_barrier`` (``_draw_boundary.at_run_time``, ``ends_draw``), the GPU gives the golden
values; the PTX has only correctly rounded float instructions (``deviceless_ptx_audit.py``). So
the next question is which part of the program XLA's GPU pipeline rewrites: the comparisons
below separate the parameter as a compile-time constant from the parameter as an argument, and
each lowering. Each stage takes its inputs from the CPU's previous stage, so a difference is that
stage's own. On a machine with one backend it compares that backend with itself (every count
0), which is how it is tested here.

Found on an H200 (jax 0.11.2, 2026-11-28, results/gpu/h200-run3/float_stages.txt): only the
gamma stage with ``alpha`` a compile-time constant differed (408 and 513 values; 0 with
``alpha`` an argument). XLA's GPU compiler folds functions of a constant parameter, so
``at_run_time`` now puts parameters behind a barrier on every platform, not only on a CPU, as
the samplers are given them (before any broadcast); ``log_gamma_flat`` takes ``alpha`` as its
callers pass it, so its "alpha a constant" stage shows the folding that the samplers avoid.
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


def _on(device, fn, *args, lowering=None):
    """``fn(*args)`` compiled for and run on ``device`` (its default device while traced and
    run, its arguments placed there), under ``jp.force_lowering(lowering)``."""
    with jax.default_device(device), jp.force_lowering(lowering):
        args = jax.device_put(args, device)
        return np.asarray(jax.jit(fn)(*args))


class Differing(int):
    """How many float32 values differ (an int), with ``detail``: the largest distance in ulps
    and the first differing value on each side (whether a last bit or a whole value moved)."""
    detail = ""


def _differing(a: np.ndarray, b: np.ndarray) -> Differing:
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    both_nan = np.isnan(a) & np.isnan(b)
    differ = (a.view(np.uint32) != b.view(np.uint32)) & ~both_nan
    count = Differing(int(differ.sum()))
    if count:
        # Ordered integers: adjacent floats are adjacent integers, across zero too.
        def ordered(x):
            bits = x.view(np.int32).astype(np.int64)
            return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
        ulps = np.abs(ordered(a) - ordered(b))[differ]
        first = np.flatnonzero(differ)[0]
        count.detail = (f"  (up to {int(ulps.max())} ulp; value {first}: cpu {a.flat[first]!r}, "
                        f"other {b.flat[first]!r})")
    return count


def stages():
    """Yields (comparison, values differing between the default device and the CPU), in order:
    each sampler whole (its parameter a constant or an argument, under the GPU's own lowering
    and under ``rolled``), then stage by stage."""
    cpu, other = _devices()

    def compare(name, fn, *args, lowering=None):
        """The CPU's values under its own lowering against ``other``'s under ``lowering``."""
        here, there = _on(cpu, fn, *args), _on(other, fn, *args, lowering=lowering)
        return here, (name, _differing(here, there))

    for case, p, label in (("generalized_normal/float32", 1.5, GENERALIZED_NORMAL_GAMMA_LABEL),
                           ("ball_p0.6/float32", 0.6, BALL_GAMMA_LABEL)):
        state = ROOT.split_static(case)
        streams_state = state.split_static(label)
        n = N if case.startswith("generalized") else (N // 4) * 3
        if case.startswith("generalized"):
            def sampler(q):
                return jp.generalized_normal(state, q, (N,), jnp.float32)
        else:
            def sampler(q):
                return jp.ball(state, 3, q, (N // 4,), jnp.float32)
        for lowering in (None, "rolled"):
            named = f"{lowering or 'its own'} lowering"
            yield compare(f"{case}: the sampler, p a constant, {named}",
                          lambda: sampler(p), lowering=lowering)[1]
            yield compare(f"{case}: the sampler, p an argument, {named}",
                          sampler, np.float32(p), lowering=lowering)[1]
        p_array = np.full((n,), p, np.float32)
        inverse, row = compare(f"{case}: 1 / p (p an argument)",
                               lambda q: divide(jnp.float32(1), q), p_array)
        yield row
        yield compare(f"{case}: 1 / p (p a constant)",
                      lambda: divide(jnp.float32(1), jnp.full((n,), p, jnp.float32)))[1]
        log_g, row = compare(f"{case}: log Gamma(alpha) (alpha an argument)",
                             lambda a: _gamma_family.log_gamma_flat(
                                 _gamma_family.gamma_streams(streams_state), a, jnp.float32),
                             inverse)
        yield row
        yield compare(f"{case}: log Gamma(alpha) (alpha a constant)",
                      lambda: _gamma_family.log_gamma_flat(
                          _gamma_family.gamma_streams(streams_state), jnp.asarray(inverse),
                          jnp.float32))[1]
        product, row = compare(f"{case}: log G * (1 / p)",
                               lambda g, i: _fixed_math.rounded(g * i), log_g, inverse)
        yield row
        yield compare(f"{case}: exp", _fixed_math.exp, product)[1]
        yield compare(f"{case}: log", _fixed_math.log, np.abs(product) + np.float32(0.5))[1]


def main() -> int:
    cpu, other = _devices()
    print(f"{other.device_kind} ({other.platform}) against {cpu.device_kind} (cpu), "
          f"jax {jax.__version__}")
    for name, count in stages():
        print(f"{count:6d} differ  {name}{count.detail}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
