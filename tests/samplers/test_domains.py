"""Parameter domains (``DOMAINS`` in ``jaxpmac/_samplers/_sampler_args.py``): a concrete
parameter outside its sampler's domain is a ValueError at trace time naming the sampler and
argument -- eagerly, and under ``jit`` where the value is a Python number or a closed-over
constant -- while a traced one gives the output the sampler documents, and the domain's edge
values still draw.

One row per sampler and parameter: ``(sampler, argument, draw(value), bad value, traced
result check, edge values that must draw)``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp

S = jp.key(0).split_static("domains")
NAN, INF = math.nan, math.inf


def is_nan(x):
    return bool(np.isnan(np.asarray(x, np.float64)).all())


def is_minus_one(x):
    return bool((np.asarray(x) == -1).all())


def equals(value):
    return lambda x: bool((np.asarray(x) == value).all())


# (sampler, the argument, draw with that argument, a bad value, the traced result, edge values)
ROWS = [
    ("uniform", "minval, maxval", lambda v: jp.uniform(S, (3,), minval=v, maxval=1.0), 2.0,
     equals(2.0), [1.0, -INF]),
    ("randint", "minval, maxval", lambda v: jp.randint(S, (3,), v, 2), 5, equals(5), [1]),
    ("randint", "minval, maxval", lambda v: jp.randint(S, (3,), v, 2), 2, equals(2), [1]),
    ("bernoulli", "p", lambda v: jp.bernoulli(S, v, (3,)), 1.5, equals(True), [0.0, 1.0]),
    ("bernoulli", "p", lambda v: jp.bernoulli(S, v, (3,)), -0.5, equals(False), [0.0]),
    ("bernoulli", "p", lambda v: jp.bernoulli(S, v, (3,)), NAN, equals(False), [0.5]),
    ("geometric", "p", lambda v: jp.geometric(S, v, (3,)), 1.5, is_minus_one, [0.0, 1.0]),
    ("poisson", "lam", lambda v: jp.poisson(S, v, (3,)), -1.0, is_minus_one, [0.0, NAN]),
    ("binomial", "n", lambda v: jp.binomial(S, v, 0.5, (3,)), -1.0, is_nan, [0.0, INF]),
    ("binomial", "p", lambda v: jp.binomial(S, 5.0, v, (3,)), 1.5, is_nan, [0.0, 1.0]),
    ("gamma", "a", lambda v: jp.gamma(S, v, (3,)), -1.0, is_nan, [0.0, INF, NAN]),
    ("beta", "a", lambda v: jp.beta(S, v, 2.0, (3,)), -1.0, is_nan, [0.0]),
    ("beta", "b", lambda v: jp.beta(S, 2.0, v, (3,)), -1.0, is_nan, [0.0]),
    ("dirichlet", "alpha", lambda v: jp.dirichlet(S, np.array([1.0, 1.0]) * v, (3,)), -1.0,
     is_nan, [0.5]),
    ("loggamma", "a", lambda v: jp.loggamma(S, v, (3,)), -1.0, is_nan, [0.0]),
    ("chisquare", "df", lambda v: jp.chisquare(S, v, (3,)), -1.0, is_nan, [0.0]),
    ("t", "df", lambda v: jp.t(S, v, (3,)), 0.0, is_nan, [INF, 1e-3]),
    ("f", "dfnum", lambda v: jp.f(S, v, 2.0, (3,)), 0.0, is_nan, [INF]),
    ("f", "dfden", lambda v: jp.f(S, 2.0, v, (3,)), -1.0, is_nan, [INF]),
    ("lognormal", "sigma", lambda v: jp.lognormal(S, v, (3,)), -1.0, is_nan, [0.0]),
    ("pareto", "b", lambda v: jp.pareto(S, v, (3,)), 0.0, is_nan, [1e-3]),
    ("weibull_min", "scale", lambda v: jp.weibull_min(S, v, 1.0, (3,)), -1.0, is_nan, [0.0]),
    ("weibull_min", "concentration", lambda v: jp.weibull_min(S, 1.0, v, (3,)), 0.0, is_nan,
     [1e-2]),
    ("rayleigh", "scale", lambda v: jp.rayleigh(S, v, (3,)), -1.0, is_nan, [0.0]),
    ("double_sided_maxwell", "scale", lambda v: jp.double_sided_maxwell(S, 0.0, v, (3,)), -1.0,
     is_nan, [0.0]),
    ("wald", "mean", lambda v: jp.wald(S, v, (3,)), 0.0, is_nan, [INF]),
    ("generalized_normal", "p", lambda v: jp.generalized_normal(S, v, (3,)), 0.0, is_nan,
     [0.5]),
    ("generalized_normal", "p", lambda v: jp.generalized_normal(S, v, (3,)), INF, is_nan,
     [100.0]),
    ("triangular", "left, mode, right", lambda v: jp.triangular(S, 0.0, v, 1.0, (3,)), 2.0,
     is_nan, [0.0, 1.0]),
    ("ball", "p", lambda v: jp.ball(S, 3, v, (3,)), 0.0, is_nan, [0.5]),
    ("ball", "p", lambda v: jp.ball(S, 3, v, (3,)), INF, is_nan, [1.0]),
    ("multinomial", "n", lambda v: jp.multinomial(S, v, jnp.array([0.5, 0.5]), shape=(3,)),
     -1.0, is_nan, [0.0]),
    ("multinomial", "p", lambda v: jp.multinomial(S, 4.0, np.array([0.5, 1.0]) * v,
                                                  shape=(3,)), -1.0, is_nan, [0.0]),
]
IDS = [f"{row[0]} {row[1]}={row[3]}" for row in ROWS]

# Drawing compiles each sampler: the default run draws (traced bad values, edge values) for the
# issue's three samplers and one of each other kind of output; every row with -m slow.
DEFAULT_DRAWS = {"uniform", "randint", "bernoulli", "poisson", "gamma", "triangular"}
DRAW_ROWS = [row if row[0] in DEFAULT_DRAWS else pytest.param(row, marks=pytest.mark.slow)
             for row in ROWS]


def _message(sampler, argument):
    verb = "accept" if "," in argument else "accepts"
    return f"{sampler} {argument} {verb} "


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_concrete_bad_value_is_a_value_error(row):
    sampler, argument, draw, bad, _, _ = row
    with pytest.raises(ValueError, match=f"^{_message(sampler, argument)}.*but was given"):
        draw(bad)
    # Under jit a Python number is still concrete: the error comes at trace time.
    with pytest.raises(ValueError, match=f"^{_message(sampler, argument)}"):
        jax.jit(lambda: draw(bad))()


@pytest.mark.parametrize("row", DRAW_ROWS, ids=IDS)
def test_traced_bad_value_gives_the_documented_output(row):
    _, _, draw, bad, documented, _ = row
    assert documented(jax.jit(draw)(bad))


@pytest.mark.parametrize("row", DRAW_ROWS, ids=IDS)
def test_edge_values_still_draw(row):
    _, _, draw, _, _, edges = row
    for value in edges:
        draw(value)


def test_an_array_names_the_first_element_outside():
    with pytest.raises(ValueError, match=r"gamma a accepts values >= 0 \(or NaN, which gives "
                                         r"NaN\), but was given array of dtype float32 and "
                                         r"shape \(3,\) holding -0.5 at index \(1,\)"):
        jp.gamma(S, jnp.array([1.0, -0.5, -2.0]))
    with pytest.raises(ValueError, match=r"uniform minval, maxval accept minval <= maxval "
                                         r"\(elementwise, after broadcasting\), but was given "
                                         r"minval 3.0 and maxval 1.0 at index \(1,\)"):
        jp.uniform(S, (2,), minval=np.array([0.0, 3.0]), maxval=1.0)
    # A concrete jax array closed over under jit is checked too.
    bad = jnp.array([0.5, 2.0])
    with pytest.raises(ValueError, match="bernoulli p accepts values in"):
        jax.jit(lambda: jp.bernoulli(S, bad))()


def test_the_issues_examples():
    with pytest.raises(ValueError, match="randint minval, maxval accept minval < maxval"):
        jp.randint(S, (3,), 5, 2)
    with pytest.raises(ValueError, match="bernoulli p accepts values in"):
        jp.bernoulli(S, p=1.5)
    with pytest.raises(ValueError, match="uniform minval, maxval accept minval <= maxval"):
        jp.uniform(S, minval=2, maxval=1)
    np.testing.assert_array_equal(jp.uniform(S, (2,), minval=1.0, maxval=1.0), 1.0)


def test_bad_types_are_still_type_errors():
    with pytest.raises(TypeError, match="gamma a accepts real numbers"):
        jp.gamma(S, "1.0")
    with pytest.raises(TypeError, match="bernoulli p accepts real numbers"):
        jp.bernoulli(S, True)


def test_keyless_draws_check_their_concrete_parameters():
    @jp.randomized
    def model():
        return jp.rand.bernoulli(1.5, (2,))

    with pytest.raises(ValueError, match="bernoulli p accepts values in"):
        model(jp.key(0))
