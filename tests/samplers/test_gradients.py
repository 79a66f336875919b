"""Derivatives of the samplers with respect to their parameters (``docs/gradients.md``).

Each derivative is checked, element by element, against central finite differences in float64
with the same state: of the sample itself where it is a smooth function of the parameter
(``uniform``, ``truncated_normal``, ``multivariate_normal``), and for the rejection samplers
(``gamma``, and ``beta``/``dirichlet`` through their gammas) of the CDF at the drawn value,
``dx/da = -(F(x; a+e) - F(x; a-e)) / (2e f(x; a))``: implicit reparameterisation, the rule
``jax.random`` uses. Every check runs forward (``jvp``) and reverse (``grad``), with and without
``jit`` and under ``vmap``. Means of the derivatives over many draws are checked against the
derivative of the distribution's mean, and the custom rules are checked to leave the values
bit for bit equal to the golden values.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st
from conftest import param, slow_except

import jaxpmac as jp
from golden_values import CASES, GOLDEN_FILE, N, ROOT
from jaxpmac._samplers._gamma_family import BETA_B_LABEL

CASES_BY_NAME = {case.name: case for case in CASES}
MODES = ("jvp", "jvp_jit", "grad", "grad_jit", "vmap_jvp", "vmap_grad")
# Forward and reverse mode, without jit, with jit and under vmap. By default forward mode and
# reverse mode under jit (the custom rules are jvp rules; reverse mode transposes them); the
# rest, how jax composes the same rules without jit and under vmap, in the slow run.
DEFAULT_MODES = ("jvp", "grad_jit")


def modes(names=MODES, default=DEFAULT_MODES):
    """``names`` as parameters, those outside ``default`` marked slow."""
    return [param(name, slow=name not in default) for name in names]


def _every_mode_for_one(firsts, first_in_every_mode, names=MODES, default=DEFAULT_MODES):
    """``(first, mode)`` parameters: every ``first`` in forward mode, ``first_in_every_mode`` in
    the default modes as well, and the others in the slow run (the rules are one code path
    whatever the parameters; the modes differ in how jax composes them)."""
    return [(first, mode) if mode == names[0] or (first == first_in_every_mode
                                                 and mode in default)
            else pytest.param(first, mode, marks=pytest.mark.slow)
            for first in firsts for mode in names]


F64 = jnp.float64


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _state(name):
    return jp.key(20261124).split_static("gradients", name)


def elementwise_derivative(draw, param, mode):
    """``(values, d values[i] / d param[i])`` of an elementwise ``draw(param)`` (element ``i``
    of the output depends on ``param[i]`` alone), computed by ``mode``. The ``vmap`` modes map
    over two lanes, ``param`` and ``param`` shifted, and return the lane of ``param`` after
    checking the other against an unbatched call."""
    ones = jnp.ones_like(param)
    if mode in ("jvp", "jvp_jit"):
        jvp = lambda p: jax.jvp(draw, (p,), (ones,))
        return (jax.jit(jvp) if mode == "jvp_jit" else jvp)(param)
    if mode in ("grad", "grad_jit"):
        grad = jax.value_and_grad(lambda p: draw(p).sum(), has_aux=False)
        values = draw(param)
        _, derivative = (jax.jit(grad) if mode == "grad_jit" else grad)(param)
        return values, derivative
    shifted = param * 1.0625
    lanes = jnp.stack([param, shifted])
    if mode == "vmap_jvp":
        values, tangents = jax.vmap(lambda p: jax.jvp(draw, (p,), (ones,)))(lanes)
    else:
        values = jax.vmap(draw)(lanes)
        tangents = jax.vmap(jax.grad(lambda p: draw(p).sum()))(lanes)
    alone_values, alone_tangents = jax.jvp(draw, (shifted,), (ones,))
    np.testing.assert_array_equal(values[1], alone_values)
    np.testing.assert_allclose(tangents[1], alone_tangents, rtol=1e-12, atol=1e-300)
    return values[0], tangents[0]


def central_difference(draw, param, eps):
    return (np.asarray(draw(param + eps)) - np.asarray(draw(param - eps))) / (2 * eps)


# -- uniform -------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_uniform_bounds_derivatives_match_finite_differences(mode):
    state = _state("uniform")
    low = jnp.linspace(-3.0, 1.0, 64)
    high = jnp.linspace(2.0, 40.0, 64)
    for which in ("minval", "maxval"):
        if which == "minval":
            draw = lambda p: jp.uniform(state, (64,), F64, p, high)
            param = low
        else:
            draw = lambda p: jp.uniform(state, (64,), F64, low, p)
            param = high
        values, derivative = elementwise_derivative(draw, param, mode)
        np.testing.assert_array_equal(values, jp.uniform(state, (64,), F64, low, high))
        fd = central_difference(draw, param, 1e-6)
        np.testing.assert_allclose(derivative, fd, rtol=1e-7, atol=1e-7)
        # The affine map's derivative: 1 - u for minval, u for maxval.
        u = (np.asarray(values) - np.asarray(low)) / (np.asarray(high) - np.asarray(low))
        want = 1 - u if which == "minval" else u
        np.testing.assert_allclose(derivative, want, rtol=1e-12, atol=1e-12)


def test_uniform_precise_and_half_bounds_are_differentiable():
    state = _state("uniform other")
    draw = lambda hi: jp.uniform(state, (32,), F64, -1.0, hi, precise=True)
    values, derivative = jax.jvp(draw, (jnp.array(2.0),), (jnp.array(1.0),))
    np.testing.assert_allclose(derivative, (np.asarray(values) + 1) / 3, rtol=1e-12)
    for dtype in (jnp.float16, jnp.bfloat16):
        hi = jnp.asarray(3.0, dtype)
        grad = jax.grad(lambda h: jp.uniform(state, (32,), dtype, 1.0, h).astype(F64).sum())(hi)
        u = (jp.uniform(state, (32,), dtype, 1.0, hi).astype(F64) - 1) / 2
        np.testing.assert_allclose(float(grad), float(u.sum()), rtol=2e-2)


# -- truncated_normal ------------------------------------------------------------------------------

# NumPy float64 here (module constants are made with x64 off); jnp arrays inside the tests.
TRUNCATED_BOUNDS = {
    "around 0": (np.linspace(-2.0, -0.2, 64), np.linspace(0.3, 3.0, 64)),
    "upper tail (mirrored)": (np.linspace(2.5, 3.5, 64), np.linspace(3.6, 6.0, 64)),
    "lower tail": (np.linspace(-6.0, -3.6, 64), np.linspace(-3.5, -2.5, 64)),
    "narrow": (np.linspace(0.4, 0.6, 64), np.linspace(0.41, 0.61, 64)),
}


@pytest.mark.parametrize("bounds, mode", _every_mode_for_one(sorted(TRUNCATED_BOUNDS),
                                                            "upper tail (mirrored)"))
def test_truncated_normal_bounds_derivatives_match_finite_differences(mode, bounds):
    state = _state("truncated_normal")
    lower, upper = (jnp.asarray(b) for b in TRUNCATED_BOUNDS[bounds])
    for which in ("lower", "upper"):
        # The other bound is made from the parameter (+ 0 p, the same value), so that it is no
        # constant of a jitted program: XLA folds float64 Phi of a constant bound with other
        # last bits than it computes them (a known gap, docs/gradients.md).
        if which == "lower":
            draw = lambda p: jp.truncated_normal(state, p, upper + 0 * p, None, F64)
            param = lower
        else:
            draw = lambda p: jp.truncated_normal(state, lower + 0 * p, p, None, F64)
            param = upper
        values, derivative = elementwise_derivative(draw, param, mode)
        np.testing.assert_array_equal(values, jp.truncated_normal(state, lower, upper, None, F64))
        fd = central_difference(draw, param, 1e-6)
        np.testing.assert_allclose(derivative, fd, rtol=1e-6, atol=1e-9)


def test_truncated_normal_infinite_and_degenerate_bounds():
    state = _state("truncated_normal edges")
    upper = jnp.linspace(-1.0, 2.0, 16)
    # An infinite bound does not move the draw; a finite one does.
    d_lower, d_upper = jax.grad(
        lambda lo, hi: jp.truncated_normal(state, lo, hi, (16,), F64).sum(), (0, 1))(
            -jnp.inf, upper)
    assert float(d_lower) == 0.0
    np.testing.assert_allclose(d_upper, central_difference(
        lambda p: jp.truncated_normal(state, -jnp.inf, p, (16,), F64), upper, 1e-6), rtol=1e-6)
    # A degenerate interval moves with its point: the two derivatives sum to 1.
    point = jnp.full(16, 0.7)
    d_lower, d_upper = jax.jacfwd(
        lambda lo, hi: jp.truncated_normal(state, lo, hi, None, F64), (0, 1))(point, point)
    np.testing.assert_allclose(np.diag(d_lower) + np.diag(d_upper), 1.0, rtol=1e-12)
    assert (np.diag(d_lower) > 0).all() and (np.diag(d_upper) > 0).all()


# -- gamma, beta, dirichlet ------------------------------------------------------------------------

GAMMA_A = np.array([0.01, 0.05, 0.3, 0.9, 1.0, 2.5, 30.0, 300.0] * 8)


def gamma_derivative_by_cdf(x, a, eps_rel=1e-6):
    """``dx/da = -(F(x; a+e) - F(x; a-e)) / (2e f(x; a))`` with SciPy's regularised incomplete
    gamma function ``F`` and density ``f``."""
    x, a = np.asarray(x, np.float64), np.asarray(a, np.float64)
    eps = eps_rel * a
    return -(sc.gammainc(a + eps, x) - sc.gammainc(a - eps, x)) / (2 * eps * st.gamma.pdf(x, a))


@pytest.mark.parametrize("mode", modes())
def test_gamma_derivative_is_implicit_reparameterisation(mode):
    state = _state("gamma")
    draw = lambda a: jp.gamma(state, a, None, F64)
    values, derivative = elementwise_derivative(draw, jnp.asarray(GAMMA_A), mode)
    np.testing.assert_array_equal(values, draw(jnp.asarray(GAMMA_A)))
    # Tiny a (boosted, a < 1) includes draws far below 1e-20 (the series branch).
    assert np.asarray(values).min() < 1e-30
    want = gamma_derivative_by_cdf(values, GAMMA_A)
    np.testing.assert_allclose(derivative, want, rtol=1e-7)


# float32 by default; the half types (gamma and its rule computed in float32, as here, then
# rounded: about 16 s of compiling) in the slow run. uniform's half types run by default above.
@pytest.mark.parametrize("dtype, rtol", [
    pytest.param(jnp.float32, 1e-4, id="float32"),
    pytest.param(jnp.bfloat16, 2e-2, id="bfloat16", marks=pytest.mark.slow),
    pytest.param(jnp.float16, 2e-2, id="float16", marks=pytest.mark.slow)])
def test_gamma_derivative_in_float32_and_half_types(dtype, rtol):
    state = _state("gamma narrow")
    a = jnp.array([0.05, 0.3, 0.9, 1.0, 2.5, 30.0, 300.0] * 4)
    param = a.astype(jnp.float32)
    values, derivative = jax.jvp(lambda p: jp.gamma(state, p, None, dtype), (param,),
                                 (jnp.ones_like(param),))
    values = np.asarray(values.astype(F64))
    finite = values > 1e-30          # scipy's density overflows at draws that underflow
    want = gamma_derivative_by_cdf(values, a)
    np.testing.assert_allclose(np.asarray(derivative.astype(F64))[finite], want[finite],
                               rtol=rtol)


def test_gamma_invalid_shapes_give_nan_derivatives():
    state = _state("gamma invalid")
    a = jnp.array([0.0, -1.0, jnp.nan, 2.0])
    derivative = jax.grad(lambda p: jp.gamma(state, p, None, F64).sum())(a)
    assert np.isnan(np.asarray(derivative)[:3]).all() and np.isfinite(float(derivative[3]))


# A composition of two gammas, in every mode in the slow run (24 s of the default run in forward
# mode): its rules are the gammas' (checked above in the default modes), exp's and logaddexp's
# (whose docstring example checks its derivative), and beta's golden values below check under
# jvp and vjp that they leave the values alone; dirichlet's derivatives, the other composition
# of gammas, run by default.
@pytest.mark.slow
@pytest.mark.parametrize("mode", modes(default=("jvp",)))
def test_beta_derivatives_follow_the_gammas(mode):
    state = _state("beta")
    a = jnp.linspace(0.2, 5.0, 48)
    b = jnp.linspace(4.0, 0.3, 48)
    x_gamma = np.asarray(jp.gamma(state, a, None, F64))
    y_gamma = np.asarray(jp.gamma(state.split_static(BETA_B_LABEL), b, None, F64))
    total = x_gamma + y_gamma
    values = np.asarray(jp.beta(state, a, b, None, F64))
    np.testing.assert_allclose(values, x_gamma / total, rtol=1e-13)
    dx_da = gamma_derivative_by_cdf(x_gamma, a) * y_gamma / total ** 2
    dx_db = -gamma_derivative_by_cdf(y_gamma, b) * x_gamma / total ** 2
    for draw, param, want in ((lambda p: jp.beta(state, p, b, None, F64), a, dx_da),
                              (lambda p: jp.beta(state, a, p, None, F64), b, dx_db)):
        got_values, derivative = elementwise_derivative(draw, param, mode)
        np.testing.assert_array_equal(got_values, values)
        np.testing.assert_allclose(derivative, want, rtol=1e-6, atol=1e-12)


# Forward mode by default; the other modes, reverse mode under jit among them (5 s: a transpose
# of the same rules, as gamma's, which runs by default above), in the slow run.
@pytest.mark.parametrize("mode", modes(("jvp", "jvp_jit", "grad", "grad_jit", "vmap"),
                                       default=("jvp",)))
def test_dirichlet_derivatives_follow_the_gammas(mode):
    state = _state("dirichlet")
    alpha = jnp.array([0.4, 1.0, 3.5])
    rows = 16
    full = jnp.broadcast_to(alpha, (rows, 3))
    g = np.asarray(jp.gamma(state, full.reshape(-1), None, F64)).reshape(rows, 3)
    dg = gamma_derivative_by_cdf(g, np.asarray(full))
    total = g.sum(-1, keepdims=True)
    x = g / total
    # Jacobian J[r, i, j] = d x[r, i] / d alpha[j] (alpha shared by the rows).
    want = (np.eye(3)[None] * dg[:, None, :] - x[:, :, None] * dg[:, None, :]) / total[:, :, None]
    draw = lambda p: jp.dirichlet(state, p, (rows,), F64)
    np.testing.assert_allclose(draw(alpha), x, rtol=1e-13)
    if mode in ("jvp", "jvp_jit"):
        jac = jax.jacfwd(draw)
        got = (jax.jit(jac) if mode == "jvp_jit" else jac)(alpha)
    elif mode in ("grad", "grad_jit"):
        jac = jax.jacrev(draw)
        got = (jax.jit(jac) if mode == "grad_jit" else jac)(alpha)
    else:     # two lanes of alpha, the second checked against its unbatched Jacobian
        lanes = jnp.stack([alpha, alpha * 1.5])
        both = jax.vmap(jax.jacrev(draw))(lanes)
        np.testing.assert_allclose(both[1], jax.jacfwd(draw)(lanes[1]), rtol=1e-12)
        got = both[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)


# -- multivariate_normal --------------------------------------------------------------------------

COVARIANCE = np.array([[2.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 0.5]])


# svd's factor is eigh's eigendecomposition (the Jacobi method's derivative rule) sorted by |w|,
# so svd runs in the slow run in every mode (its forward mode took 8 s); cholesky's and eigh's
# forward mode stay by default.
@pytest.mark.parametrize("method, mode", [
    param if param != ("svd", "jvp") else pytest.param(*param, marks=pytest.mark.slow)
    for param in _every_mode_for_one(("cholesky", "eigh", "svd"), "cholesky",
                                     names=("jvp", "grad_jit", "vmap"))])
def test_multivariate_normal_derivatives_match_finite_differences(method, mode):
    state = _state("multivariate_normal")
    mean = jnp.array([1.0, -1.0, 0.5])
    direction = jnp.array([[0.3, -0.2, 0.1], [0.5, 0.2, -0.4], [0.0, 0.6, 0.25]])
    weights = jnp.linspace(-1.0, 2.0, 24).reshape(8, 3)
    covariance = jnp.asarray(COVARIANCE)

    def draw(cov):
        return jp.multivariate_normal(state, mean, cov, (8,), F64, method)

    fd = central_difference(lambda t: draw(covariance + t * direction), 0.0, 1e-6)
    if mode == "jvp":
        tangent = jax.jvp(draw, (covariance,), (direction,))[1]
    elif mode == "grad_jit":
        # <grad of sum(w x), direction> is the derivative of sum(w x) along direction.
        cotangent = jax.jit(jax.grad(lambda c: (weights * draw(c)).sum()))(covariance)
        assert np.isclose(float((cotangent * direction).sum()), float((weights * fd).sum()),
                          rtol=1e-6)
        tangent = jax.jvp(draw, (covariance,), (direction,))[1]
    else:
        covs = jnp.stack([covariance, covariance + 0.25 * jnp.eye(3)])
        tangents = jax.vmap(lambda c: jax.jvp(draw, (c,), (direction,))[1])(covs)
        np.testing.assert_allclose(tangents[1], jax.jvp(draw, (covs[1],), (direction,))[1],
                                   rtol=1e-10, atol=1e-12)
        tangent = tangents[0]
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)
    # The mean enters additively.
    d_mean = jax.jacrev(lambda m: jp.multivariate_normal(state, m, covariance, (8,), F64,
                                                         method))(mean)
    np.testing.assert_array_equal(d_mean, np.broadcast_to(np.eye(3), (8, 3, 3)))


# -- means of the derivatives: the derivative of the distribution's mean -------------------------
# Statistical (20,000 float64 draws each): in the slow run; the derivatives are checked draw by
# draw above (against the CDFs and finite differences).

def _mean_close(derivatives, want, sigmas=5.0):
    derivatives = np.asarray(derivatives, np.float64)
    standard_error = derivatives.std() / np.sqrt(derivatives.size)
    assert abs(derivatives.mean() - want) < sigmas * standard_error, (
        derivatives.mean(), want, standard_error)


@pytest.mark.slow
@pytest.mark.parametrize("a", [0.3, 2.5])
def test_gamma_mean_derivative_is_one(a):
    """E[x] = a for Gamma(a, 1), so E[dx/da] = 1."""
    derivative = jax.grad(lambda p: jp.gamma(_state("gamma mean"), p, (20_000,), F64).sum())
    # grad of the sum w.r.t. a scalar a is the sum of the elements' derivatives.
    per_element = jax.jvp(lambda p: jp.gamma(_state("gamma mean"), p, (20_000,), F64),
                          (jnp.array(a),), (jnp.array(1.0),))[1]
    np.testing.assert_allclose(float(derivative(a)), float(per_element.sum()), rtol=1e-10)
    _mean_close(per_element, 1.0)


@pytest.mark.slow
def test_beta_and_dirichlet_mean_derivatives():
    a, b = 0.7, 2.5
    da, db = jax.jvp(lambda p, q: jp.beta(_state("beta mean"), p, q, (20_000,), F64),
                     (jnp.array(a), jnp.array(b)), (jnp.array(1.0), jnp.array(0.0)))[1], \
        jax.jvp(lambda p, q: jp.beta(_state("beta mean"), p, q, (20_000,), F64),
                (jnp.array(a), jnp.array(b)), (jnp.array(0.0), jnp.array(1.0)))[1]
    _mean_close(da, b / (a + b) ** 2)          # d/da of a / (a + b)
    _mean_close(db, -a / (a + b) ** 2)
    alpha = jnp.array([0.5, 1.0, 3.0])
    jac = jax.jacfwd(lambda p: jp.dirichlet(_state("dirichlet mean"), p, (10_000,), F64))(alpha)
    total = float(alpha.sum())
    _mean_close(jac[:, 0, 0], (total - 0.5) / total ** 2)
    _mean_close(jac[:, 2, 0], -3.0 / total ** 2)


@pytest.mark.slow
def test_truncated_normal_mean_derivative():
    lower, upper = -0.5, 1.5

    def mean(lo, hi):
        return st.truncnorm(lo, hi).mean()

    draws = lambda lo, hi: jp.truncated_normal(_state("tn mean"), lo, hi, (20_000,), F64)
    d_lower = jax.jvp(lambda lo: draws(lo, upper), (jnp.array(lower),), (jnp.array(1.0),))[1]
    d_upper = jax.jvp(lambda hi: draws(lower, hi), (jnp.array(upper),), (jnp.array(1.0),))[1]
    eps = 1e-5
    _mean_close(d_lower, (mean(lower + eps, upper) - mean(lower - eps, upper)) / (2 * eps))
    _mean_close(d_upper, (mean(lower, upper + eps) - mean(lower, upper - eps)) / (2 * eps))


# -- the values under the custom rules: the golden values, bit for bit -----------------------------

GOLDEN_DRAWS = {
    "uniform/float32": (lambda s, p: jp.uniform(s, (N,), jnp.float32, p[0], p[1]), [-2.0, 3.0]),
    "uniform/float64": (lambda s, p: jp.uniform(s, (N,), F64, p[0], p[1]), [-2.0, 3.0]),
    "truncated_normal/float32": (
        lambda s, p: jp.truncated_normal(s, p[0], p[1], (N,), jnp.float32), [-1.5, 2.0]),
    "truncated_normal/float64": (
        lambda s, p: jp.truncated_normal(s, p[0], p[1], (N,), F64), [-1.5, 2.0]),
    "truncated_normal_tail/float32": (
        lambda s, p: jp.truncated_normal(s, p[0], p[1], (N,), jnp.float32), [3.0, 6.0]),
    "truncated_normal_tail/float64": (
        lambda s, p: jp.truncated_normal(s, p[0], p[1], (N,), F64), [3.0, 6.0]),
    "gamma/a=0.3/float32": (lambda s, p: jp.gamma(s, p[0], (N,), jnp.float32), [0.3]),
    "gamma/a=4.5/float64": (lambda s, p: jp.gamma(s, p[0], (N,), F64), [4.5]),
    "beta/float32": (lambda s, p: jp.beta(s, p[0], p[1], (N,), jnp.float32), [0.7, 2.5]),
    "beta/float64": (lambda s, p: jp.beta(s, p[0], p[1], (N,), F64), [0.7, 2.5]),
    "dirichlet/float32": (lambda s, p: jp.dirichlet(s, p, (N // 4,), jnp.float32),
                          [0.5, 1.0, 3.0]),
    "dirichlet/float64": (lambda s, p: jp.dirichlet(s, p, (N // 4,), F64), [0.5, 1.0, 3.0]),
    "multivariate_normal_cholesky/float64": (
        lambda s, p: jp.multivariate_normal(s, jnp.array([1.0, -1.0, 0.5], F64),
                                            p.reshape(3, 3), (N // 4,), F64, "cholesky"),
        [2.0, 0.6, -0.3, 0.6, 1.0, 0.2, -0.3, 0.2, 0.5]),
}


# By default uniform's (1 s) and the rules whose values no test above checks under jvp: beta's
# (which are the gammas' rule, exp's and logaddexp's), dirichlet's (softmax) and the
# multivariate normal's (float64, its only case). In the slow run: the float64 twins (the custom
# rules' code does not depend on the width), gamma's own cases (32 s; its rules are beta's
# first ones) and the truncated normal's (10 s): the derivative tests above check gamma's and
# the truncated normal's values under jvp bit for bit (the latter at four intervals).
GOLDEN_DRAWS_IN_DEFAULT_RUN = ("uniform/float32", "beta/float32", "dirichlet/float32",
                               "multivariate_normal_cholesky/float64")


@pytest.mark.parametrize("name", slow_except(sorted(GOLDEN_DRAWS),
                                             keep=GOLDEN_DRAWS_IN_DEFAULT_RUN))
def test_values_under_jvp_and_vjp_are_the_golden_values(name):
    """The golden case's values, drawn with its parameters traced (the differentiable path)
    under ``jvp`` (jitted) and ``vjp``: the stored values, bit for bit."""
    case = CASES_BY_NAME[name]
    draw, params = GOLDEN_DRAWS[name]
    state = ROOT.split_static(name)
    with np.load(GOLDEN_FILE) as stored:
        golden = stored[name]
    with jax.enable_x64(case.x64):
        params = jnp.asarray(params, jnp.float64 if case.x64 else jnp.float32)
        primal_jvp, _ = jax.jit(lambda p: jax.jvp(lambda q: draw(state, q), (p,),
                                                  (jnp.ones_like(p),)))(params)
        primal_vjp, _ = jax.vjp(lambda q: draw(state, q), params)
    for values in (primal_jvp, primal_vjp):
        differ = np.count_nonzero(np.asarray(values).view(golden.dtype) != golden)
        assert differ == 0, f"{name}: {differ} values differ"


# In the slow run (9 s): derivatives through jp.randomized are checked by default in
# tests/implicit/test_custom_derivatives.py, and gamma's derivative above.
@pytest.mark.slow
def test_randomized_draws_differentiate_like_their_explicit_samplers():
    """A keyless draw is the explicit sampler at its site's state, derivative included."""
    def model(a):
        return jp.rand.gamma(a, (16,), F64).sum()

    root = _state("randomized")
    (site,) = jp.draw_sites(model, jnp.asarray(2.5))
    explicit = lambda a: jp.gamma(site.state(root), a, (16,), F64).sum()
    got = jax.grad(jp.randomized(model), argnums=1)(root, jnp.asarray(2.5))
    want = jax.grad(explicit)(jnp.asarray(2.5))
    assert float(got) == float(want) and np.isfinite(float(got))
