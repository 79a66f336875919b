"""Golden values: every sampler's and every Hail function's output for fixed states, stored in
``tests/data/golden_values.npz`` and checked on every supported jax (``test_golden_values.py``).

jaxpmac promises that a sampler's values are fixed by the project, not by the installed jax; the
stored arrays are that promise made checkable. Regenerate them only for a deliberate, documented
change of a sampler (never to make a test pass):

    python tests/golden_values.py --write

``--write-new`` stores a new sampler's cases and leaves every stored value as it is. ``--check`` compares instead (``XLA_FLAGS=--xla_cpu_max_isa=AVX python tests/golden_values.py
--check``: what ``test_golden_values_isa.py`` runs at each instruction-set level).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

import jaxpmac as jp

GOLDEN_FILE = pathlib.Path(__file__).resolve().parent / "data" / "golden_values.npz"
ROOT = jp.key(2026).split_static("golden values")
COVARIANCE = [[2.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 0.5]]
N = 1024


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    draw: Callable          # state -> array, jitted
    x64: bool = False


def _cases() -> list[Case]:
    cases = []

    def add(name, draw, *, x64=False):
        cases.append(Case(name, draw, x64))

    def floats(name, draw):
        """A float sampler ``draw(state, dtype)`` in float32 and, with x64, float64."""
        add(f"{name}/float32", lambda s: draw(s, jnp.float32))
        add(f"{name}/float64", lambda s: draw(s, jnp.float64), x64=True)

    add("bits/uint32", lambda s: jp.bits(s, (N,)))
    add("bits/uint64", lambda s: jp.bits(s, (N,), jnp.uint64), x64=True)
    floats("uniform", lambda s, d: jp.uniform(s, (N,), d, -2.0, 3.0))
    floats("uniform_precise", lambda s, d: jp.uniform(s, (N,), d, precise=True))
    add("uniform/bfloat16", lambda s: jp.uniform(s, (N,), jnp.bfloat16))
    add("uniform/float16", lambda s: jp.uniform(s, (N,), jnp.float16))
    for narrow in (jnp.bfloat16, jnp.float16):
        # Bounds folded into constants: XLA may skip a narrow rounding there unless told not to.
        add(f"uniform_bounds/{jnp.dtype(narrow).name}",
            lambda s, d=narrow: jp.uniform(s, (4 * N,), d, 0.1, 0.7))
    floats("normal", lambda s, d: jp.normal(s, (N,), d))
    add("normal/bfloat16", lambda s: jp.normal(s, (N,), jnp.bfloat16))
    # Another shape compiles other fusions: values must not depend on it.
    floats("normal_2d", lambda s, d: jp.normal(s, (N // 8, 8), d))
    floats("truncated_normal", lambda s, d: jp.truncated_normal(s, -1.5, 2.0, (N,), d))
    floats("truncated_normal_tail", lambda s, d: jp.truncated_normal(s, 3.0, 6.0, (N,), d))
    floats("multivariate_normal_d6", lambda s, d: jp.multivariate_normal(
        s, jnp.zeros(6, d), jnp.eye(6, dtype=d) + 0.5, (N // 8,), d))
    for method in ("cholesky", "eigh", "svd"):
        floats(f"multivariate_normal_{method}", lambda s, d, m=method: jp.multivariate_normal(
            s, jnp.array([1.0, -1.0, 0.5], d), jnp.array(COVARIANCE, d), (N // 4,), d, m))
    add("bernoulli", lambda s: jp.bernoulli(s, 0.3, (N,)))
    add("randint/int32", lambda s: jp.randint(s, (N,), -7, 1000))
    add("randint/int64", lambda s: jp.randint(s, (N,), -(2**62), 2**62 + 12345, jnp.int64),
        x64=True)
    add("categorical", lambda s: jp.categorical(s, jnp.array([0.1, -1.0, 2.0, 0.0, 0.5]),
                                                shape=(N,)))
    add("permutation", lambda s: jp.permutation(s, 100))
    add("choice/replace", lambda s: jp.choice(s, 50, (N,)))
    add("choice/no_replace_p", lambda s: jp.choice(s, 50, (20,), replace=False,
                                                   p=jnp.arange(1.0, 51.0)))
    for name in ("exponential", "gumbel", "laplace", "logistic", "cauchy"):
        floats(name, lambda s, d, f=getattr(jp, name): f(s, (N,), d))
    for a in (0.3, 1.0, 4.5, 100.0):
        floats(f"gamma/a={a}", lambda s, d, a=a: jp.gamma(s, a, (N,), d))
    floats("beta", lambda s, d: jp.beta(s, 0.7, 2.5, (N,), d))
    floats("dirichlet", lambda s, d: jp.dirichlet(s, jnp.array([0.5, 1.0, 3.0]), (N // 4,), d))
    # jaxpmac/_samplers/_derived_continuous.py
    floats("t", lambda s, d: jp.t(s, 3.5, (N,), d))
    floats("lognormal", lambda s, d: jp.lognormal(s, 0.7, (N,), d))
    floats("chisquare", lambda s, d: jp.chisquare(s, 3.0, (N,), d))
    floats("f", lambda s, d: jp.f(s, 4.0, 9.0, (N,), d))
    floats("loggamma", lambda s, d: jp.loggamma(s, 0.2, (N,), d))
    floats("pareto", lambda s, d: jp.pareto(s, 2.5, (N,), d))
    floats("weibull_min", lambda s, d: jp.weibull_min(s, 2.0, 1.7, (N,), d))
    floats("rayleigh", lambda s, d: jp.rayleigh(s, 1.5, (N,), d))
    floats("maxwell", lambda s, d: jp.maxwell(s, (N,), d))
    floats("double_sided_maxwell", lambda s, d: jp.double_sided_maxwell(s, 1.0, 2.0, (N,), d))
    floats("generalized_normal", lambda s, d: jp.generalized_normal(s, 1.5, (N,), d))
    floats("wald", lambda s, d: jp.wald(s, 2.0, (N,), d))
    floats("triangular", lambda s, d: jp.triangular(s, -1.0, 0.5, 3.0, (N,), d))
    for lam in (3.0, 12.0, 300.0, 1e4):
        add(f"poisson/lam={lam:g}", lambda s, lam=lam: jp.poisson(s, lam, (4 * N,)))
    for n, p in ((10, 0.3), (1000, 0.5), (50_000, 0.01)):
        add(f"binomial/n={n},p={p}", lambda s, n=n, p=p: jp.binomial(s, n, p, (N,)))

    add("rademacher", lambda s: jp.rademacher(s, (N,)))
    for p in (0.3, 0.004):
        add(f"geometric/p={p}", lambda s, p=p: jp.geometric(s, p, (N,)))
        add(f"geometric/p={p}/int64", lambda s, p=p: jp.geometric(s, p, (N,), jnp.int64),
            x64=True)
    floats("multinomial", lambda s, d: jp.multinomial(
        s, jnp.array([7.0, 3000.0], d), jnp.array([0.1, 0.0, 0.45, 0.3, 0.15], d),
        shape=(N // 16, 2), dtype=d))
    floats("orthogonal", lambda s, d: jp.orthogonal(s, 6, (N // 32,), d))
    floats("orthogonal_7x3", lambda s, d: jp.orthogonal(s, 7, (N // 32,), d, m=3))
    floats("orthogonal_3x7", lambda s, d: jp.orthogonal(s, 3, (N // 32,), d, m=7))
    floats("ball_p2", lambda s, d: jp.ball(s, 4, 2.0, (N // 4,), d))
    floats("ball_p0.6", lambda s, d: jp.ball(s, 3, 0.6, (N // 4,), d))

    # Hail's functions, one value per state: 256 rows, x64 on (Hail's float64/int64) and off.
    def hail(name, draw, *, x64):
        rows = lambda s: jax.vmap(lambda i: draw(s.split(i)))(jnp.arange(256))
        add(f"hail.{name}/{'x64' if x64 else 'x32'}", rows, x64=x64)

    for x64 in (True, False):
        hail("rand_unif", lambda s: jp.hail.rand_unif(s, -1.0, 2.0), x64=x64)
        hail("rand_norm", lambda s: jp.hail.rand_norm(s, 1.0, 3.0), x64=x64)
        hail("rand_int32", lambda s: jp.hail.rand_int32(s, 1000), x64=x64)
        hail("rand_bool", lambda s: jp.hail.rand_bool(s, 0.3), x64=x64)
    hail("rand_int64", jp.hail.rand_int64, x64=True)
    # Hail's engine-driven functions (size=, two states, bounds, Java's nextLong(n) redraws).
    for x64 in (True, False):
        hail("rand_unif_size", lambda s: jp.hail.rand_unif(s, -1.0, 2.0, size=(2, 3)), x64=x64)
        hail("rand_norm_size", lambda s: jp.hail.rand_norm(s, 1.0, 3.0, size=(3, 2)), x64=x64)
        hail("rand_norm2d", lambda s: jp.hail.rand_norm2d(s, [1.0, -2.0], [2.0, 0.5, 1.0]),
             x64=x64)
        hail("rand_int32_ab", lambda s: jp.hail.rand_int32(s, -1000, 1000), x64=x64)
        hail("rand_cat", lambda s: jp.hail.rand_cat(s, [0.1, 0.0, 5.0, 2.5, 0.001]), x64=x64)
    hail("rand_int64_n", lambda s: jp.hail.rand_int64(s, 2**62 + 2**61), x64=True)
    hail("rand_int64_ab", lambda s: jp.hail.rand_int64(s, -10**15, 10**15), x64=True)
    hail("shuffle", lambda s: jp.hail.shuffle(s, jnp.arange(12)), x64=False)
    # jdistlib's samplers (x64 only): each method of rpois and rgamma, a truncated beta.
    hail("rand_pois_table", lambda s: jp.hail.rand_pois(s, 3.0), x64=True)
    hail("rand_pois_normal", lambda s: jp.hail.rand_pois(s, 50.0), x64=True)
    hail("rand_gamma_gs", lambda s: jp.hail.rand_gamma(s, 0.3, 1.0), x64=True)
    hail("rand_gamma_gd", lambda s: jp.hail.rand_gamma(s, 2.5, 3.0), x64=True)
    hail("rand_beta_truncated", lambda s: jp.hail.rand_beta(s, 2.0, 5.0, 0.1, 0.4), x64=True)
    hail("rand_dirichlet", lambda s: jp.hail.rand_dirichlet(s, [0.5, 2.0, 0.0, 3.0]), x64=True)
    hail("rand_hyper", lambda s: jp.hail.rand_hyper(s, 5000, 1200, 800), x64=True)
    hail("rand_multi_hyper", lambda s: jp.hail.rand_multi_hyper(s, [1000, 10, 250, 3], 500),
         x64=True)
    return cases


CASES = _cases()


def compute(case: Case, *, compiled_text: list | None = None) -> np.ndarray:
    """The case's values, drawn under ``jit`` from its own state, as their bit patterns
    (unsigned integers of the values' width: exact, NaN-safe, and storable for bfloat16).
    ``compiled_text``: a list that receives the compiled program's optimised HLO."""
    state = ROOT.split_static(case.name)
    with jax.enable_x64(case.x64):
        compiled = jax.jit(case.draw).lower(state).compile()
        values = np.asarray(compiled(state))
    if compiled_text is not None:
        compiled_text.append(compiled.as_text())
    if values.dtype == np.bool_:
        return values.astype(np.uint8)
    return values.view(f"u{values.dtype.itemsize}")


def differences(shard: tuple[int, int] = (0, 1), *, x64: bool | None = None) -> dict[str, str]:
    """Each case whose values differ from the stored golden values (or that fails), with how:
    what ``--check`` prints, as JSON, for a test that runs it under another instruction set.
    ``shard``: ``(i, n)`` checks every n-th case from the i-th (processes in parallel);
    ``x64``: only the cases drawn with x64 on (True) or off (False), or all (None)."""
    with np.load(GOLDEN_FILE) as stored:
        golden = {name: stored[name] for name in stored.files}
    found = {}
    index, count = shard
    for case in [case for case in CASES if x64 is None or case.x64 == x64][index::count]:
        try:
            values = compute(case)
        except Exception as error:      # reported, with the XLA_FLAGS it ran under
            found[case.name] = f"failed: {type(error).__name__}: {str(error)[:300]}"
            continue
        want = golden[case.name]
        if (values != want).any():
            found[case.name] = f"{int((values != want).sum())} of {want.size} values differ"
    return found


def write(*, only_new: bool = False) -> None:
    """Stores every case's values; ``only_new``: computes only the cases not yet stored (a new
    sampler) and keeps every stored value as it is."""
    stored = {}
    if only_new and GOLDEN_FILE.exists():
        with np.load(GOLDEN_FILE) as existing:
            stored = {name: existing[name] for name in existing.files}
    arrays = {case.name: stored[case.name] if case.name in stored else compute(case)
              for case in CASES}
    GOLDEN_FILE.parent.mkdir(exist_ok=True)
    np.savez_compressed(GOLDEN_FILE, **arrays)
    print(f"wrote {len(arrays)} cases to {GOLDEN_FILE} ({len(arrays) - len(stored)} computed, "
          f"jax {jax.__version__})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="recompute and store every case")
    parser.add_argument("--write-new", action="store_true",
                        help="compute and store only the cases not yet stored (a new sampler)")
    parser.add_argument("--check", action="store_true",
                        help="print, as JSON, the cases that differ from the stored values")
    parser.add_argument("--shard", default="0/1", metavar="I/N",
                        help="with --check: every N-th case from the I-th (default 0/1: all)")
    parser.add_argument("--x64", choices=("on", "off", "both"), default="both",
                        help="with --check: only the cases drawn with x64 on, or off")
    args = parser.parse_args()
    if args.write or args.write_new:
        write(only_new=args.write_new)
    elif args.check:
        index, count = map(int, args.shard.split("/"))
        x64 = {"on": True, "off": False, "both": None}[args.x64]
        print(json.dumps(differences((index, count), x64=x64)))
    else:
        parser.print_help()
