"""NumPyro with a pmac key vs jax.random's default key: NUTS (eight schools) and an SVI step.

Run: ``python -m benchmarks.frameworks [--repeats 5] [--warmup 200 --samples 200]``

Both keys run in the same process, interleaved repeat by repeat (the order alternates), and the
ratios printed are medians of the pmac time over the default (threefry) time of the same repeat:
below 1.0 pmac is faster. Measured per contender:

- NUTS: what ``MCMC(NUTS(eight_schools), num_warmup, num_samples).run(key)`` runs, timed in
  parts: ``NUTS.init(key, num_warmup)``, then ``compile`` is
  ``jax.jit(kernel.sample).lower(state).compile()`` (one step, warmup adaptation included) and
  ``per step`` a jitted ``lax.fori_loop`` of ``num_warmup + num_samples`` ``kernel.sample``
  steps (``MCMC.run``'s loop without a progress bar) over the number of steps. NUTS builds
  trees whose size depends on the draws, so ``per leapfrog`` (the loop's time over its sum of
  ``num_steps``) is printed too: the cost per gradient evaluation, free of how long one key's
  trajectories happened to be.
- SVI: ``SVI(eight_schools, AutoNormal, Adam, Trace_ELBO)``; ``compile`` is
  ``jax.jit(svi.update).lower(state).compile()``, ``per step`` a ``lax.fori_loop`` of
  ``--svi-steps`` jitted ``update`` calls over the number of steps.

Skipped with a message where numpyro is not installed.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxpmac as jp  # noqa: F401  (registers impl "pmac")

IMPLS = ("pmac", "threefry2x32")
J = 8
Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], np.float32)
SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], np.float32)


def _model():
    import numpyro
    import numpyro.distributions as dist

    def eight_schools(sigma, y=None):   # docs/recipes/numpyro_nuts.py's model
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
        with numpyro.plate("J", J):
            theta = numpyro.sample("theta", dist.Normal(mu, tau))
            numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)

    return eight_schools


def nuts_once(impl: str, seed: int, warmup: int, samples: int) -> dict:
    from numpyro.infer import NUTS
    kernel = NUTS(_model())
    args, kwargs = (SIGMA,), {"y": Y}
    state = kernel.init(jax.random.key(seed, impl=impl), warmup, model_args=args,
                        model_kwargs=kwargs)
    n = warmup + samples

    def step(state):
        return kernel.sample(state, args, kwargs)

    def body(i, carry):       # MCMC.run's loop (fori_collect), counting leapfrog steps
        state, leapfrogs = carry
        state = step(state)
        return state, leapfrogs + state.num_steps

    t0 = time.perf_counter()
    jax.jit(step).lower(state).compile()
    compile_s = time.perf_counter() - t0
    loop = jax.jit(lambda s: jax.lax.fori_loop(0, n, body, (s, jnp.int32(0))))
    jax.block_until_ready(loop(state))        # compile the loop, untimed
    t0 = time.perf_counter()
    _, leapfrogs = jax.block_until_ready(loop(state))
    run_s = time.perf_counter() - t0
    return {"per step": run_s / n, "compile": compile_s, "per leapfrog": run_s / int(leapfrogs)}


def svi_once(impl: str, seed: int, steps: int) -> dict:
    import numpyro.optim
    from numpyro.infer import SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal
    model = _model()
    svi = SVI(model, AutoNormal(model), numpyro.optim.Adam(1e-2), Trace_ELBO())
    state = svi.init(jax.random.key(seed, impl=impl), SIGMA, y=Y)

    def update(state):
        return svi.update(state, SIGMA, y=Y)[0]

    t0 = time.perf_counter()
    jax.jit(update).lower(state).compile()
    compile_s = time.perf_counter() - t0
    loop = jax.jit(lambda s: jax.lax.fori_loop(0, steps, lambda i, s: update(s), s))
    jax.block_until_ready(loop(state))        # compile the loop, untimed
    t0 = time.perf_counter()
    jax.block_until_ready(loop(state))
    return {"per step": (time.perf_counter() - t0) / steps, "compile": compile_s}


def _interleaved(fn, repeats: int) -> dict:
    """``{impl: {measure: [values per repeat]}}``, the impls' order alternating by repeat."""
    out = {impl: {} for impl in IMPLS}
    for r in range(repeats):
        for impl in (IMPLS if r % 2 == 0 else IMPLS[::-1]):
            for name, value in fn(impl, r).items():
                out[impl].setdefault(name, []).append(value)
    return out


def _report(title: str, result: dict) -> dict:
    pmac, base = result["pmac"], result["threefry2x32"]
    ratios = {}
    print(f"\n{title}")
    print(f"  {'measure':14s} {'pmac (median)':>16s} {'threefry (median)':>18s} "
          f"{'ratio pmac/threefry':>20s}  per-repeat ratios")
    for name in pmac:
        per_repeat = np.array(pmac[name]) / np.array(base[name])
        ratios[name] = float(np.median(per_repeat))
        unit, scale = ("ms", 1e3) if np.median(base[name]) < 1 else ("s", 1)
        print(f"  {name:14s} {np.median(pmac[name]) * scale:13.4g} {unit:2s} "
              f"{np.median(base[name]) * scale:15.4g} {unit:2s} {ratios[name]:19.3f}x  "
              + " ".join(f"{x:.2f}" for x in per_repeat))
    return ratios


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--svi-steps", type=int, default=2000)
    parser.add_argument("--only", choices=("nuts", "svi"), default=None)
    args = parser.parse_args(argv)
    try:
        import numpyro
    except ImportError:
        print("benchmarks.frameworks: numpyro is not installed; skipped "
              "(pip install numpyro)")
        return 0
    from benchmarks import _host
    print(f"jax {jax.__version__}, numpyro {numpyro.__version__}, {_host.host_cpu()}, "
          f"{jax.devices()[0].platform}, x64={jax.config.jax_enable_x64}, "
          f"repeats={args.repeats}")
    if args.only in (None, "nuts"):
        _report(f"NUTS eight schools, {args.warmup} warmup + {args.samples} samples",
                _interleaved(lambda impl, r: nuts_once(impl, 10 * r, args.warmup, args.samples),
                             args.repeats))
    if args.only in (None, "svi"):
        _report(f"SVI eight schools (AutoNormal, Adam), {args.svi_steps} steps",
                _interleaved(lambda impl, r: svi_once(impl, r, args.svi_steps), args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
