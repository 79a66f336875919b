"""NumPyro, blackjax and Flax with a pmac key vs jax.random's default key.

Run: ``python -m benchmarks.frameworks [--repeats 5] [--warmup 200 --samples 200]
[--only nuts|svi|blackjax|flax]``

Both keys run in the same process, interleaved repeat by repeat (the order alternates), and the
ratios printed are medians of the pmac time over the default (threefry) time of the same repeat:
below 1.0 pmac is faster. In each repeat a loop's time is the median of ``LOOP_RUNS`` runs of it,
compiled before. Measured per contender:

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
- blackjax: ``blackjax.nuts`` on eight schools' non-centred log density (fixed step size and
  mass matrix, no adaptation), as ``docs/recipes/blackjax_nuts.py`` runs it: ``compile`` is
  ``jax.jit(kernel.step).lower(key, state).compile()``, ``per step`` a jitted ``lax.scan`` of
  ``--blackjax-steps`` steps over ``jax.random.split(key, steps)``, and ``per leapfrog`` the
  scan's time over its sum of ``num_integration_steps``.
- Flax: an ``nnx`` MLP (784-512-512-10, ``nnx.Dropout(0.5)`` after each hidden layer, batch
  128) trained with SGD, its dropout keys from ``nnx.Rngs`` as in ``docs/recipes/flax_nnx.py``
  (each call folds the stream's count into the key, then draws a 128x512 mask): ``compile`` is
  one training step's ``lower`` + ``compile``, ``per step`` a jitted ``lax.fori_loop`` of
  ``--flax-steps`` steps over the number of steps.

A framework that is not installed is skipped with a message.
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


#: Runs of a compiled loop timed in each repeat, of which the median is kept: a loop of NUTS
#: steps takes a few milliseconds, so one run is at the mercy of one scheduler hiccup.
LOOP_RUNS = 5


def _timed(step, step_args, loop, loop_args):
    """``(compile s, run s, output)``: ``jax.jit(step).lower(*step_args).compile()``'s time, the
    median time of :data:`LOOP_RUNS` runs of ``jax.jit(loop)(*loop_args)`` (compiled before,
    untimed), and the loop's output."""
    t0 = time.perf_counter()
    jax.jit(step).lower(*step_args).compile()
    compile_s = time.perf_counter() - t0
    loop = jax.jit(loop)
    out = jax.block_until_ready(loop(*loop_args))
    runs = []
    for _ in range(LOOP_RUNS):
        t0 = time.perf_counter()
        jax.block_until_ready(loop(*loop_args))
        runs.append(time.perf_counter() - t0)
    return compile_s, float(np.median(runs)), out


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


def _nuts_init(key, warmup: int):
    """Eight schools' ``NUTS`` kernel and its state from ``NUTS.init(key, warmup)``."""
    from numpyro.infer import NUTS
    kernel = NUTS(_model())
    return kernel, kernel.init(key, warmup, model_args=(SIGMA,), model_kwargs={"y": Y})


def _svi_init(key):
    """Eight schools' SVI (``AutoNormal`` guide, ``Adam(1e-2)``, ``Trace_ELBO``) and its state
    from ``svi.init(key, ...)``."""
    import numpyro.optim
    from numpyro.infer import SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal
    model = _model()
    svi = SVI(model, AutoNormal(model), numpyro.optim.Adam(1e-2), Trace_ELBO())
    return svi, svi.init(key, SIGMA, y=Y)


def nuts_once(impl: str, seed: int, warmup: int, samples: int) -> dict:
    kernel, state = _nuts_init(jax.random.key(seed, impl=impl), warmup)
    args, kwargs = (SIGMA,), {"y": Y}
    n = warmup + samples

    def step(state):
        return kernel.sample(state, args, kwargs)

    def body(i, carry):       # MCMC.run's loop (fori_collect), counting leapfrog steps
        state, leapfrogs = carry
        state = step(state)
        return state, leapfrogs + state.num_steps

    compile_s, run_s, (_, leapfrogs) = _timed(
        step, (state,), lambda s: jax.lax.fori_loop(0, n, body, (s, jnp.int32(0))), (state,))
    return {"per step": run_s / n, "compile": compile_s, "per leapfrog": run_s / int(leapfrogs)}


def nuts_init_and_step(seed, *, impl: str):
    """``NUTS.init`` from ``jax.random.key(seed, impl=impl)`` and one ``kernel.sample``: the
    program ``python -m benchmarks.deviceless --programs numpyro_nuts`` compiles."""
    kernel, state = _nuts_init(jax.random.key(seed, impl=impl), 200)
    return kernel.sample(state, (SIGMA,), {"y": Y}).z


def svi_init_and_update(seed, *, impl: str):
    """``svi_once``'s SVI initialised from ``jax.random.key(seed, impl=impl)`` and one update's
    loss: the program ``python -m benchmarks.deviceless --programs numpyro_svi`` compiles."""
    svi, state = _svi_init(jax.random.key(seed, impl=impl))
    return svi.update(state, SIGMA, y=Y)[1]


def svi_once(impl: str, seed: int, steps: int) -> dict:
    svi, state = _svi_init(jax.random.key(seed, impl=impl))

    def update(state):
        return svi.update(state, SIGMA, y=Y)[0]

    compile_s, run_s, _ = _timed(
        update, (state,), lambda s: jax.lax.fori_loop(0, steps, lambda i, s: update(s), s),
        (state,))
    return {"per step": run_s / steps, "compile": compile_s}


def _eight_schools_logdensity(params):
    """Eight schools, non-centred: ``theta = mu + tau * theta_tilde``, ``tau = exp(log_tau)``."""
    mu, log_tau, theta_tilde = params["mu"], params["log_tau"], params["theta_tilde"]
    tau = jnp.exp(log_tau)
    norm = jax.scipy.stats.norm
    log_prior = (norm.logpdf(mu, 0.0, 5.0) + jax.scipy.stats.cauchy.logpdf(tau, 0.0, 5.0)
                 + log_tau + norm.logpdf(theta_tilde).sum())    # + log_tau: the Jacobian
    return log_prior + norm.logpdf(Y, mu + tau * theta_tilde, SIGMA).sum()


def blackjax_once(impl: str, seed: int, steps: int) -> dict:
    import blackjax
    position = {"mu": jnp.float32(0.0), "log_tau": jnp.float32(0.0),
                "theta_tilde": jnp.zeros(J, jnp.float32)}
    kernel = blackjax.nuts(_eight_schools_logdensity, step_size=0.5,
                           inverse_mass_matrix=jnp.ones(J + 2))
    state = kernel.init(position)
    key = jax.random.key(seed, impl=impl)

    def run(state, key):
        def one_step(carry, key):
            state, leapfrogs = carry
            state, info = kernel.step(key, state)
            return (state, leapfrogs + info.num_integration_steps), None
        return jax.lax.scan(one_step, (state, jnp.int32(0)),
                            jax.random.split(key, steps))[0]

    compile_s, run_s, (_, leapfrogs) = _timed(kernel.step, (key, state), run, (state, key))
    return {"per step": run_s / steps, "compile": compile_s,
            "per leapfrog": run_s / int(leapfrogs)}


def flax_once(impl: str, seed: int, steps: int) -> dict:
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.layers = nnx.List([nnx.Linear(784, 512, rngs=rngs),
                                    nnx.Linear(512, 512, rngs=rngs),
                                    nnx.Linear(512, 10, rngs=rngs)])
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x):
            for layer in self.layers[:-1]:
                x = self.dropout(nnx.relu(layer(x)))
            return self.layers[-1](x)

    root = jax.random.key(seed, impl=impl)
    params_key, dropout_key = jax.random.split(root)
    graphdef, state = nnx.split(MLP(nnx.Rngs(params=params_key, dropout=dropout_key)))
    x = jnp.asarray(np.random.default_rng(seed).normal(size=(128, 784)), jnp.float32)
    labels = jnp.arange(128) % 10

    def step(state):
        model = nnx.merge(graphdef, state)

        def loss(model):
            logits = model(x)
            return -jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1).mean()

        grads = nnx.grad(loss)(model)
        params = nnx.state(model, nnx.Param)
        nnx.update(model, jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads))
        return nnx.state(model)

    compile_s, run_s, _ = _timed(
        step, (state,), lambda s: jax.lax.fori_loop(0, steps, lambda i, s: step(s), s), (state,))
    return {"per step": run_s / steps, "compile": compile_s}


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


def _installed(module: str) -> str | None:
    """The module's version, or None (with a message) where it is not installed."""
    try:
        return __import__(module).__version__
    except ImportError:
        print(f"benchmarks.frameworks: {module} is not installed; skipped (pip install {module})")
        return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--svi-steps", type=int, default=2000)
    parser.add_argument("--blackjax-steps", type=int, default=400)
    parser.add_argument("--flax-steps", type=int, default=50)
    parser.add_argument("--only", choices=("nuts", "svi", "blackjax", "flax"), default=None)
    args = parser.parse_args(argv)
    from benchmarks import _host
    print(f"jax {jax.__version__}, {_host.host_cpu()}, {jax.devices()[0].platform}, "
          f"x64={jax.config.jax_enable_x64}, repeats={args.repeats}")
    wanted = {"nuts", "svi", "blackjax", "flax"} if args.only is None else {args.only}
    if wanted & {"nuts", "svi"} and (version := _installed("numpyro")):
        if "nuts" in wanted:
            _report(f"NumPyro NUTS eight schools (numpyro {version}), "
                    f"{args.warmup} warmup + {args.samples} samples",
                    _interleaved(lambda impl, r: nuts_once(impl, 10 * r, args.warmup,
                                                           args.samples), args.repeats))
        if "svi" in wanted:
            _report(f"NumPyro SVI eight schools (AutoNormal, Adam), {args.svi_steps} steps",
                    _interleaved(lambda impl, r: svi_once(impl, r, args.svi_steps),
                                 args.repeats))
    if "blackjax" in wanted and (version := _installed("blackjax")):
        _report(f"blackjax NUTS eight schools (blackjax {version}), {args.blackjax_steps} steps",
                _interleaved(lambda impl, r: blackjax_once(impl, r, args.blackjax_steps),
                             args.repeats))
    if "flax" in wanted and (version := _installed("flax")):
        _report(f"Flax NNX MLP with dropout (flax {version}), {args.flax_steps} SGD steps",
                _interleaved(lambda impl, r: flax_once(impl, r, args.flax_steps), args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
