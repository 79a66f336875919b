"""Every public draw lowered for a CPU ends in an ``optimization_barrier`` (``_draw_boundary``),
so that XLA's reshape-mover cannot walk a sum of many draws one draw per simplification run;
lowered for a GPU or TPU its result passes none (a draw must fuse into its consumer there),
though its parameters pass one on every platform (``at_run_time``: XLA would fold functions of
a constant parameter); and the barrier changes no value."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from conftest import slow_except
from jaxpmac import hail

S = jp.key(3).split_static("boundary")
# name -> (public draw, its arguments after the state)
DRAWS = {
    "bits": (jp.bits, ((4, 3),)),
    "uniform": (jp.uniform, ((4, 3),)),
    "bernoulli": (jp.bernoulli, (0.3, (4, 3))),
    "normal": (jp.normal, ((4, 3),)),
    "truncated_normal": (jp.truncated_normal, (-1.0, 2.0, (4, 3))),
    "multivariate_normal": (jp.multivariate_normal, (jnp.zeros(2), jnp.eye(2), (3,))),
    "exponential": (jp.exponential, ((4, 3),)),
    "gumbel": (jp.gumbel, ((4, 3),)),
    "laplace": (jp.laplace, ((4, 3),)),
    "logistic": (jp.logistic, ((4, 3),)),
    "cauchy": (jp.cauchy, ((4, 3),)),
    "randint": (jp.randint, ((4, 3), 0, 10)),
    "permutation": (jp.permutation, (12,)),
    "choice": (jp.choice, (10, (4,))),
    "categorical": (jp.categorical, (jnp.zeros((4, 5)),)),
    "gamma": (jp.gamma, (2.0, (4, 3))),
    "beta": (jp.beta, (2.0, 3.0, (4, 3))),
    "dirichlet": (jp.dirichlet, (jnp.ones(3), (4,))),
    "poisson": (jp.poisson, (3.0, (4, 3))),
    "binomial": (jp.binomial, (10, 0.4, (4, 3))),
    "t": (jp.t, (3.0, (4, 3))),
    "lognormal": (jp.lognormal, (0.5, (4, 3))),
    "chisquare": (jp.chisquare, (3.0, (4, 3))),
    "f": (jp.f, (3.0, 5.0, (4, 3))),
    "loggamma": (jp.loggamma, (0.5, (4, 3))),
    "pareto": (jp.pareto, (2.0, (4, 3))),
    "weibull_min": (jp.weibull_min, (1.0, 1.5, (4, 3))),
    "rayleigh": (jp.rayleigh, (1.0, (4, 3))),
    "maxwell": (jp.maxwell, ((4, 3),)),
    "double_sided_maxwell": (jp.double_sided_maxwell, (0.0, 1.0, (4, 3))),
    "generalized_normal": (jp.generalized_normal, (1.5, (4, 3))),
    "wald": (jp.wald, (2.0, (4, 3))),
    "triangular": (jp.triangular, (0.0, 1.0, 3.0, (4, 3))),
    "rademacher": (jp.rademacher, ((4, 3),)),
    "geometric": (jp.geometric, (0.3, (4, 3))),
    "multinomial": (jp.multinomial, (10, jnp.ones((4, 3)))),
    "orthogonal": (jp.orthogonal, (3, (2,))),
    "ball": (jp.ball, (3, 1.5, (4,))),
    "hail.rand_unif": (hail.rand_unif, ()),
    "hail.rand_norm": (hail.rand_norm, ()),
    "hail.rand_int32": (hail.rand_int32, (100,)),
    "hail.rand_bool": (hail.rand_bool, (0.5,)),
    "hail.rand_norm2d": (hail.rand_norm2d, ([1.0, 0.0], [1.0, 0.5, 2.0])),
    "hail.rand_cat": (hail.rand_cat, ([1.0, 2.0, 0.5],)),
    "hail.shuffle": (hail.shuffle, (jnp.arange(5),)),
}


# One draw of each kind of program in the default run (stream words, a map of one word, a
# normal, integers, a rejection loop, a reduction over logits, linear algebra, Hail's engine
# loop and its sort); every other draw in the slow run: the barrier is put on by one
# decorator (``_registry.sampler``), so the others repeat these programs' checks.
DEFAULT_RUN = ("bits", "uniform", "normal", "randint", "gamma", "categorical",
               "multivariate_normal", "hail.rand_norm", "hail.shuffle")

def test_every_public_draw_is_listed():
    samplers = {name for name in jp.__all__ if name not in (
        "DrawSite", "RNGState", "StreamFinding", "as_jax_key", "check_streams", "draw_sites",
        "fold_in_uids", "force_lowering", "hail", "key", "prng_impl", "rand", "randomized",
        "state_of")}
    needs_x64 = {"rand_int64", "rand_pois", "rand_gamma", "rand_beta", "rand_dirichlet",
                 "rand_hyper", "rand_multi_hyper"}    # TypeError with x64 off
    hail_draws = {f"hail.{name}" for name in hail.__all__ if name not in needs_x64}
    assert samplers | hail_draws <= set(DRAWS)


def _exported_text(draw, args, platform: str) -> str:
    exported = jax.export.export(jax.jit(lambda s: draw(s, *args)), platforms=[platform])(S)
    return exported.mlir_module()


@pytest.mark.parametrize("name", slow_except(sorted(DRAWS), DEFAULT_RUN))
def test_a_draws_result_passes_a_barrier_on_a_cpu_only(name):
    """The CPU's program has more barriers than a GPU's or a TPU's: the one its result passes
    (and a few CPU-only ones inside Hail's engine). Those it shares are its parameters'
    (``at_run_time``), none in a draw without parameters."""
    draw, args = DRAWS[name]
    barriers = {platform: _exported_text(draw, args, platform).count(
        "stablehlo.optimization_barrier") for platform in ("cpu", "cuda", "tpu")}
    assert barriers["cuda"] == barriers["tpu"] < barriers["cpu"], barriers
    if not [arg for arg in args if not isinstance(arg, tuple)]:    # only a shape
        assert barriers["cuda"] == 0, barriers


def _jax_random_bits_text(platform: str | None) -> str:
    """``jax.random.bits`` of a jaxpmac key lowered for ``platform`` (None: the default
    backend's). A fresh function on every call: ``jax.jit`` caches a trace and its lowering by
    function, and the draw is traced when ``random_bits`` is lowered (so a forced lowering
    must be in effect then)."""
    traced = jax.jit(lambda s: jax.random.bits(jp.as_jax_key(s), (4, 3))).trace(S)
    platforms = None if platform is None else (platform,)
    return traced.lower(lowering_platforms=platforms).as_text()


def test_jax_random_on_a_jaxpmac_key_reaches_the_barrier():
    # jax.random calls the implementation inside its own random_bits primitive, so the
    # barrier is found in the program lowered for a CPU, and none in one for a GPU or TPU.
    # Platforms named: the default backend may be any of them.
    assert "optimization_barrier" in _jax_random_bits_text("cpu")
    for platform in ("cuda", "tpu"):
        assert "optimization_barrier" not in _jax_random_bits_text(platform), platform
    # On whatever backend this runs, the barrier follows the lowering forced through it.
    with jp.force_lowering("rolled"):
        assert "optimization_barrier" in _jax_random_bits_text(None)
    with jp.force_lowering("elementwise"):
        assert "optimization_barrier" not in _jax_random_bits_text(None)


# Values with and without the barrier: by default the kinds of program above but the rejection
# loop (gamma), Hail's engine loop and the linear algebra (each a long compile, twice), which
# the slow run adds: the barrier is one identity at the draw's end, whatever program it ends
# (test_a_draws_result_passes_a_barrier_on_a_cpu_only keeps them all).
DEFAULT_RUN_VALUES = ("bits", "uniform", "normal", "randint", "categorical", "hail.shuffle")


@pytest.mark.parametrize("name", slow_except(sorted(DRAWS), DEFAULT_RUN_VALUES))
def test_barrier_changes_no_value(name):
    """The same program with and without the barrier gives the same bits. (Against an eager
    draw, samplers that use ``log``/``exp`` may differ by an ulp or so: fusion into a larger
    program may round differently; see the README.)"""
    draw, args = DRAWS[name]
    with_barrier = jax.jit(lambda s: draw(s, *args))(S)
    without = jax.jit(lambda s: draw.__wrapped__(s, *args))(S)
    np.testing.assert_array_equal(np.asarray(with_barrier), np.asarray(without))
