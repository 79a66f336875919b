"""Goodness of fit of every sampler against scipy.stats, with fixed seeds.

Continuous samplers: a chi-square test on 32 equiprobable bins whose edges are representable in
the output dtype, with expected masses taken at the rounding midpoints (so half-precision
rounding is part of the null hypothesis). Discrete samplers: chi-square on counts, tails merged
to keep expected counts >= 5. A correct generator fails a p > 1e-4 threshold once in 10**4
runs; the seeds are fixed, so these tests are deterministic.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

import jaxpmac as jp

N = 20_000
THRESHOLD = 1e-4
LOW_PRECISION = [jnp.float16, jnp.bfloat16]


def _state(name: str):
    return jp.key(20240611).split_static("statistics", name)


def _chi2_p(observed, expected) -> float:
    observed = np.asarray(observed, np.float64)
    expected = np.asarray(expected, np.float64)
    expected = expected / expected.sum() * observed.sum()
    return st.chisquare(observed, expected).pvalue


def _continuous_p(samples, dist, dtype) -> float:
    """Chi-square of ``samples`` (in ``dtype``) against scipy ``dist`` rounded to ``dtype``."""
    quantiles = dist.ppf(np.linspace(0, 1, 33)[1:-1])
    edges = np.unique(np.asarray(jnp.asarray(quantiles, dtype).astype(jnp.float32),
                                 np.float64))
    upward = np.asarray(jnp.nextafter(jnp.asarray(edges, dtype),
                                      jnp.asarray(np.inf, dtype)).astype(jnp.float32),
                        np.float64)
    if jnp.dtype(dtype) in (jnp.dtype(jnp.float32), jnp.dtype(jnp.float64)):
        cuts = edges
    else:
        cuts = (edges + upward) / 2        # x rounds to <= edge iff it lies below the midpoint
    x = np.asarray(jnp.asarray(samples).astype(jnp.float32), np.float64)
    assert np.isfinite(x).all()
    observed = np.bincount(np.searchsorted(edges, x, side="left"), minlength=len(edges) + 1)
    cdf = np.concatenate([[0.0], dist.cdf(cuts), [1.0]])
    return _chi2_p(observed, np.diff(cdf))


def _discrete_p(samples, pmf, support_max: int) -> float:
    x = np.asarray(samples).astype(np.int64)
    counts = np.bincount(x, minlength=support_max + 1)[:support_max + 1].astype(np.float64)
    counts[-1] += np.sum(x > support_max)
    expected = pmf(np.arange(support_max + 1)) * len(x)
    expected[-1] += (1 - pmf(np.arange(support_max + 1)).sum()) * len(x)
    # Merge bins with small expectations into their neighbours.
    obs_m, exp_m, o, e = [], [], 0.0, 0.0
    for oi, ei in zip(counts, expected):
        o, e = o + oi, e + ei
        if e >= 5:
            obs_m.append(o), exp_m.append(e)
            o, e = 0.0, 0.0
    obs_m[-1] += o
    exp_m[-1] += e
    return _chi2_p(obs_m, exp_m)


FLOAT_DTYPES = [jnp.float32] + LOW_PRECISION


class _DoubleSidedMaxwell:
    """``loc + scale * S * M`` for a Maxwell ``M`` and a random sign ``S`` (scipy has none):
    the CDF and quantiles the tests need, from ``scipy.stats.maxwell``'s."""

    def __init__(self, loc, scale):
        self.loc, self.scale = loc, scale

    def cdf(self, x):
        z = (np.asarray(x, np.float64) - self.loc) / self.scale
        return 0.5 + np.sign(z) * st.maxwell.cdf(np.abs(z)) / 2

    def ppf(self, q):
        q = np.asarray(q, np.float64)
        return self.loc + self.scale * np.sign(q - 0.5) * st.maxwell.ppf(np.abs(2 * q - 1))

CONTINUOUS = {
    "normal": (lambda s, d: jp.normal(s, (N,), d), st.norm()),
    "exponential": (lambda s, d: jp.exponential(s, (N,), d), st.expon()),
    "gumbel": (lambda s, d: jp.gumbel(s, (N,), d), st.gumbel_r()),
    "laplace": (lambda s, d: jp.laplace(s, (N,), d), st.laplace()),
    "logistic": (lambda s, d: jp.logistic(s, (N,), d), st.logistic()),
    "cauchy": (lambda s, d: jp.cauchy(s, (N,), d), st.cauchy()),
    "truncated_normal": (lambda s, d: jp.truncated_normal(s, -0.5, 2.0, (N,), d),
                         st.truncnorm(-0.5, 2.0)),
    "truncated_normal_tail": (lambda s, d: jp.truncated_normal(s, 3.0, 5.0, (N,), d),
                              st.truncnorm(3.0, 5.0)),
    "gamma_small": (lambda s, d: jp.gamma(s, 0.3, (N,), d), st.gamma(0.3)),
    "gamma": (lambda s, d: jp.gamma(s, 4.5, (N,), d), st.gamma(4.5)),
    "beta": (lambda s, d: jp.beta(s, 0.7, 2.5, (N,), d), st.beta(0.7, 2.5)),
    # jaxpmac/_samplers/_derived_continuous.py
    "t": (lambda s, d: jp.t(s, 3.5, (N,), d), st.t(3.5)),
    "t_heavy": (lambda s, d: jp.t(s, 1.5, (N,), d), st.t(1.5)),
    "lognormal": (lambda s, d: jp.lognormal(s, 0.7, (N,), d), st.lognorm(0.7)),
    "chisquare": (lambda s, d: jp.chisquare(s, 3.0, (N,), d), st.chi2(3.0)),
    "chisquare_small": (lambda s, d: jp.chisquare(s, 0.6, (N,), d), st.chi2(0.6)),
    "f": (lambda s, d: jp.f(s, 4.0, 9.0, (N,), d), st.f(4.0, 9.0)),
    "loggamma": (lambda s, d: jp.loggamma(s, 2.5, (N,), d), st.loggamma(2.5)),
    "loggamma_small": (lambda s, d: jp.loggamma(s, 0.05, (N,), d), st.loggamma(0.05)),
    "pareto": (lambda s, d: jp.pareto(s, 2.5, (N,), d), st.pareto(2.5)),
    "weibull_min": (lambda s, d: jp.weibull_min(s, 2.0, 1.7, (N,), d),
                    st.weibull_min(1.7, scale=2.0)),
    "rayleigh": (lambda s, d: jp.rayleigh(s, 1.5, (N,), d), st.rayleigh(scale=1.5)),
    "maxwell": (lambda s, d: jp.maxwell(s, (N,), d), st.maxwell()),
    "double_sided_maxwell": (lambda s, d: jp.double_sided_maxwell(s, 1.0, 2.0, (N,), d),
                             _DoubleSidedMaxwell(1.0, 2.0)),
    "generalized_normal": (lambda s, d: jp.generalized_normal(s, 1.5, (N,), d),
                           st.gennorm(1.5)),
    "generalized_normal_small_p": (lambda s, d: jp.generalized_normal(s, 0.4, (N,), d),
                                   st.gennorm(0.4)),
    "wald": (lambda s, d: jp.wald(s, 2.0, (N,), d), st.invgauss(2.0)),
    "wald_large_mean": (lambda s, d: jp.wald(s, 20.0, (N,), d), st.invgauss(20.0)),
    "triangular": (lambda s, d: jp.triangular(s, -1.0, 0.5, 3.0, (N,), d),
                   st.triang(0.375, loc=-1.0, scale=4.0)),
}
# Half precision is checked by default for the normal and exponential (the shared code paths:
# symmetric-unit words, float32 computation, one rounding); the rest are slow tests.
FAST_IN_HALF = {"normal", "exponential"}
# The derived samplers but wald and triangular (which run by default) in the slow run (26 s):
# they are fixed functions of samplers fitted here (normal, exponential, gamma), and the default
# run checks each against its documented function (test_sampler_oracle_float.py: the maps of
# normal and exponential words, t, f and generalized_normal against their gammas; chisquare and
# loggamma are gamma's own program, 2 exp(log x) and log x).
FITTED_THROUGH_THEIR_PARTS = {
    "t", "t_heavy", "lognormal", "chisquare", "chisquare_small", "f", "loggamma",
    "loggamma_small", "pareto", "weibull_min", "rayleigh", "maxwell", "double_sided_maxwell",
    "generalized_normal", "generalized_normal_small_p"}


def _continuous_cases():
    for name in CONTINUOUS:
        for dtype in FLOAT_DTYPES:
            slow = ((dtype != jnp.float32 and name not in FAST_IN_HALF)
                    or name in FITTED_THROUGH_THEIR_PARTS)
            marks = [pytest.mark.slow] if slow else []
            yield pytest.param(name, dtype, id=f"{name}-{jnp.dtype(dtype).name}", marks=marks)


@pytest.mark.parametrize("name,dtype", list(_continuous_cases()))
def test_continuous_fit(name, dtype):
    sample, dist = CONTINUOUS[name]
    x = sample(_state(name), dtype)
    assert x.dtype == jnp.dtype(dtype) and x.shape == (N,)
    assert _continuous_p(x, dist, dtype) > THRESHOLD


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: jnp.dtype(d).name)
@pytest.mark.parametrize("precise", [False, True])
def test_uniform_fit(dtype, precise):
    # Edges k/16 are exact in every dtype, and both modes give each such bin mass exactly 1/16.
    x = jp.uniform(_state("uniform"), (N,), dtype, precise=precise)
    assert x.dtype == jnp.dtype(dtype)
    x = np.asarray(x.astype(jnp.float32), np.float64)
    assert ((0 <= x) & (x < 1)).all()
    observed = np.bincount(np.floor(x * 16).astype(int), minlength=16)
    assert _chi2_p(observed, np.ones(16)) > THRESHOLD


def test_uniform_range_fit():
    x = jp.uniform(_state("uniform-range"), (N,), jnp.float32, -3.0, 5.0)
    assert _continuous_p(x, st.uniform(-3, 8), jnp.float32) > THRESHOLD


def test_precise_uniform_small_values():
    # Precise uniforms resolve [0, 2**-10) (fast ones give only 0 there): its share of 1M
    # draws is about 977, and conditionally it is uniform again.
    x = np.asarray(jp.uniform(_state("precise-small"), (2 ** 20,), jnp.float32, precise=True))
    small = x[x < 2.0 ** -10] * 2.0 ** 10
    assert abs(len(small) - 1024) < 5 * 32
    assert st.kstest(small, "uniform").pvalue > THRESHOLD


def test_bernoulli_fit():
    p = np.array([0.0, 0.05, 0.3, 0.5, 0.9, 1.0], np.float32)
    x = np.asarray(jp.bernoulli(_state("bernoulli"), p, (N // 6 + 1, 6)))
    assert not x[:, 0].any() and x[:, -1].all()
    for j in range(1, 5):
        assert st.binomtest(int(x[:, j].sum()), len(x), p[j]).pvalue > THRESHOLD


@pytest.mark.parametrize("minval,maxval,dtype", [
    (0, 7, jnp.int32), (-3, 3, jnp.int8), (0, 2 ** 16, jnp.uint16),
    (-2 ** 31, 2 ** 31, jnp.int32), (0, 3 * 2 ** 30, jnp.uint32)])
def test_randint_uniform(minval, maxval, dtype):
    x = np.asarray(jp.randint(_state("randint"), (N,), minval, maxval, dtype)).astype(np.int64)
    assert x.min() >= minval and x.max() < maxval
    bins = min(maxval - minval, 32)
    observed = np.bincount((x - minval) * bins // (maxval - minval), minlength=bins)
    # Bins of equal width up to rounding of (maxval - minval) / bins.
    widths = np.diff([-(-(k * (maxval - minval)) // bins) for k in range(bins + 1)])
    assert _chi2_p(observed, widths) > THRESHOLD


def test_randint_wide_int64_range():
    with jax.enable_x64(True):
        span = 3 * 2 ** 61
        x = np.asarray(jp.randint(_state("randint64"), (N,), -2 ** 62, -2 ** 62 + span,
                                  jnp.int64))
    assert x.dtype == np.int64
    bins = (x.astype(object) + 2 ** 62) * 24 // span
    observed = np.bincount(np.asarray(bins, np.int64), minlength=24)
    assert len(observed) == 24
    assert _chi2_p(observed, np.ones(24)) > THRESHOLD
    # The low bits are uniform too (a wide multiply that dropped bits would fail this).
    assert _chi2_p(np.bincount(x & 15, minlength=16), np.ones(16)) > THRESHOLD


def test_categorical_fit():
    probs = np.array([0.05, 0.15, 0.3, 0.5])
    x = jp.categorical(_state("categorical"), jnp.log(jnp.asarray(probs)), shape=(N,))
    assert _chi2_p(np.bincount(np.asarray(x), minlength=4), probs) > THRESHOLD


def test_choice_with_p_fit():
    probs = np.array([0.1, 0.0, 0.6, 0.3])
    x = np.asarray(jp.choice(_state("choice-p"), 4, (N,), p=jnp.asarray(probs)))
    counts = np.bincount(x, minlength=4)
    assert counts[1] == 0
    assert _chi2_p(counts[[0, 2, 3]], probs[[0, 2, 3]]) > THRESHOLD


def test_choice_uniform_fit():
    x = np.asarray(jp.choice(_state("choice"), 10, (N,)))
    assert _chi2_p(np.bincount(x, minlength=10), np.ones(10)) > THRESHOLD


def test_permutation_positions_uniform():
    # Where element 0 lands over many independent permutations of 8.
    states = jax.vmap(lambda i: _state("permutation").split(i))(jnp.arange(4000))
    perms = np.asarray(jax.vmap(lambda s: jp.permutation(s, 8))(states))
    assert (np.sort(perms, axis=1) == np.arange(8)).all()
    where_zero = np.argmax(perms == 0, axis=1)
    assert _chi2_p(np.bincount(where_zero, minlength=8), np.ones(8)) > THRESHOLD


def test_choice_without_replacement_with_p():
    # First pick of choice without replacement is proportional to p.
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    states = jax.vmap(lambda i: _state("choice-noreplace").split(i))(jnp.arange(4000))
    x = np.asarray(jax.vmap(lambda s: jp.choice(s, 4, (2,), replace=False,
                                                p=jnp.asarray(probs)))(states))
    assert (x[:, 0] != x[:, 1]).all()
    assert _chi2_p(np.bincount(x[:, 0], minlength=4), probs) > THRESHOLD


@pytest.mark.parametrize("lam", [0.7, 40.0, pytest.param(6.0, marks=pytest.mark.slow),
                                 pytest.param(2000.0, marks=pytest.mark.slow)])
def test_poisson_fit(lam):
    x = jp.poisson(_state("poisson"), lam, (N,))
    top = int(lam + 8 * np.sqrt(lam) + 10)
    assert _discrete_p(x, st.poisson(lam).pmf, top) > THRESHOLD


@pytest.mark.parametrize("n,p", [(12, 0.3), (1000, 0.93),
                                 pytest.param(200, 0.45, marks=pytest.mark.slow),
                                 pytest.param(5, 0.99, marks=pytest.mark.slow)])
def test_binomial_fit(n, p):
    x = jp.binomial(_state("binomial"), n, p, (N,))
    assert ((x >= 0) & (x <= n)).all()
    assert _discrete_p(x, st.binom(n, p).pmf, n) > THRESHOLD


def test_rademacher_fit():
    x = np.asarray(jp.rademacher(_state("rademacher"), (N,))).astype(np.int64)
    assert set(np.unique(x).tolist()) == {-1, 1}
    assert st.binomtest(int((x == 1).sum()), N, 0.5).pvalue > THRESHOLD
    # Neighbours (bit i and i + 1, across word boundaries too) are independent: 4 equal cells.
    pairs = (x[:-1] > 0) * 2 + (x[1:] > 0)
    assert _chi2_p(np.bincount(pairs, minlength=4), np.ones(4)) > THRESHOLD
    # The same bit of successive words (i and i + 32).
    lagged = (x[:-32] > 0) * 2 + (x[32:] > 0)
    assert _chi2_p(np.bincount(lagged, minlength=4), np.ones(4)) > THRESHOLD


@pytest.mark.parametrize("p", [0.3, 0.02, 0.95])
def test_geometric_fit(p):
    x = np.asarray(jp.geometric(_state("geometric"), p, (N,)))
    assert x.min() >= 1
    top = int(np.ceil(12 / p)) + 2
    assert _discrete_p(x, st.geom(p).pmf, top) > THRESHOLD


# In the slow run, as the other x64 forms: float64 geometric is the float32 one's formula in
# float64 (its values are golden values by default), and test_geometric_fit fits three p.
@pytest.mark.slow
def test_geometric_fit_float64():
    with jax.enable_x64(True):
        x = np.asarray(jp.geometric(_state("geometric64"), 0.1, (N,)))
        assert x.dtype == np.int64
    assert _discrete_p(x, st.geom(0.1).pmf, 150) > THRESHOLD


def test_multinomial_joint_fit():
    # Every outcome of Multinomial(4, p) over 3 categories (15 of them), counted jointly.
    p = np.array([0.2, 0.5, 0.3])
    x = np.asarray(jp.multinomial(_state("multinomial"), 4, jnp.asarray(p), shape=(N,)))
    outcomes = [(a, b, 4 - a - b) for a in range(5) for b in range(5 - a)]
    index = {o: i for i, o in enumerate(outcomes)}
    observed = np.bincount([index[tuple(int(c) for c in row)] for row in x],
                           minlength=len(outcomes))
    expected = [st.multinomial(4, p).pmf(o) for o in outcomes]
    assert _chi2_p(observed, expected) > THRESHOLD


# In the slow run (5 s): multinomial's categories are binomials, and test_binomial_fit fits
# BTRS (n = 1000) by default; test_multinomial_joint_fit fits multinomial itself.
@pytest.mark.slow
def test_multinomial_large_n_marginals():
    # Category j of Multinomial(n, p) is Binomial(n, p_j); these n p_j take BTRS.
    p = np.array([0.1, 0.25, 0.05, 0.6])
    n = 2000
    x = np.asarray(jp.multinomial(_state("multinomial-large"), n, jnp.asarray(p), shape=(N,)))
    np.testing.assert_array_equal(x.sum(-1), n)
    for j in range(4):
        dist = st.binom(n, p[j])
        low, high = int(dist.ppf(1e-6)), int(dist.ppf(1 - 1e-6))
        shifted = np.clip(x[:, j].astype(np.int64) - low, 0, None)
        assert _discrete_p(shifted, lambda k, d=dist, lo=low: d.pmf(k + lo), high - low) > THRESHOLD
    # Categories are negatively correlated: cov(j, l) = -n p_j p_l.
    np.testing.assert_allclose(np.cov(x[:, 0], x[:, 3])[0, 1], -n * p[0] * p[3], rtol=0.1)


def _haar_states(name, count):
    return jax.vmap(lambda i: _state(name).split(i))(jnp.arange(count))


# Square by default; the tall Stiefel form (6, 2), orthogonal's second form, in the slow run.
@pytest.mark.parametrize("n,m", [(4, 4), pytest.param(6, 2, marks=pytest.mark.slow)])
def test_orthogonal_is_haar(n, m):
    """Each entry of a Haar orthogonal (or Stiefel) matrix is a coordinate of a uniform point
    on the sphere S^(n-1): ``(q + 1) / 2 ~ Beta((n-1)/2, (n-1)/2)``. A fixed row or column
    ordering choice (Gram-Schmidt goes column by column) must not show: the first and last
    columns, and an off-diagonal entry, are tested. For square matrices the determinant is +-1
    with probability 1/2 each, and the trace has mean 0 and variance 1 (Diaconis-Shahshahani)."""
    count = 6000
    q = np.asarray(jp.orthogonal(_state(f"orthogonal{n}x{m}"), n, (count,), m=m), np.float64)
    beta = st.beta((n - 1) / 2, (n - 1) / 2)
    for i, j in [(0, 0), (n - 1, m - 1), (1, 0), (0, m - 1)]:
        assert st.kstest((q[:, i, j] + 1) / 2, beta.cdf).pvalue > THRESHOLD, (i, j)
    if n == m:
        det = np.linalg.det(q)
        np.testing.assert_allclose(np.abs(det), 1, atol=1e-5)
        assert st.binomtest(int((det > 0).sum()), count, 0.5).pvalue > THRESHOLD
        trace = np.trace(q, axis1=-2, axis2=-1)
        assert abs(trace.mean()) < 5 / np.sqrt(count)
        assert abs((trace ** 2).mean() - 1) < 5 * np.sqrt(2 / count)


# A Euclidean ball by default, the other three in the slow run: for p <= 1 the coordinates are
# gamma's plain draws, for p > 1 its boosted ones (both fitted above as gamma and gamma_small),
# and test_multivariate_samplers.py checks that p < 1 points lie in the ball.
@pytest.mark.parametrize("d,p", [(3, 2.0)] + [
    pytest.param(d, p, marks=pytest.mark.slow) for d, p in [(5, 0.7), (2, 1.0), (4, 4.0)]])
def test_ball_is_uniform(d, p):
    """Uniform in the unit p-ball: the p-norm to the power d is U(0, 1) (the volume inside
    radius r is r**d); the signs are fair. Marginals with a closed form: for p = 2, d = 3 a
    coordinate is ``(x + 1)/2 ~ Beta(2, 2)`` (density 3/4 (1 - x**2)); for p = 1, d = 2 the
    absolute coordinate is Beta(1, 2)."""
    x = np.asarray(jp.ball(_state(f"ball{d},{p}"), d, p, (N,)), np.float64)
    radius_d = ((np.abs(x) ** p).sum(-1)) ** (d / p)
    assert (radius_d <= 1 + 1e-5).all()
    assert st.kstest(np.minimum(radius_d, 1), "uniform").pvalue > THRESHOLD
    assert st.binomtest(int((x[:, 0] > 0).sum()), N, 0.5).pvalue > THRESHOLD
    if (d, p) == (3, 2.0):
        assert st.kstest((x[:, 1] + 1) / 2, st.beta(2, 2).cdf).pvalue > THRESHOLD
    if (d, p) == (2, 1.0):
        assert st.kstest(np.abs(x[:, 0]), st.beta(1, 2).cdf).pvalue > THRESHOLD
    # Exchangeable coordinates: the first and last have one distribution.
    assert st.ks_2samp(x[:, 0], x[:, -1]).pvalue > THRESHOLD


# In the slow run (5 s): dirichlet is the normalised gammas (test_gradients.py checks so by
# default), and gamma and beta, its margins, are fitted above.
@pytest.mark.slow
def test_dirichlet_moments():
    alpha = np.array([0.5, 1.0, 2.5])
    x = np.asarray(jp.dirichlet(_state("dirichlet"), jnp.asarray(alpha), (N,)))
    np.testing.assert_allclose(x.sum(-1), 1, atol=1e-5)
    # Each margin is Beta(alpha_j, sum - alpha_j).
    for j in range(3):
        dist = st.beta(alpha[j], alpha.sum() - alpha[j])
        assert st.kstest(x[:, j], dist.cdf).pvalue > THRESHOLD


def test_multivariate_normal_moments():
    mean = np.array([1.0, -2.0, 0.5])
    root = np.array([[1.0, 0.0, 0.0], [0.5, 1.2, 0.0], [-0.3, 0.4, 0.7]])
    cov = root @ root.T
    for method in ["cholesky", "eigh", "svd"]:
        x = np.asarray(jp.multivariate_normal(_state("mvn"), jnp.asarray(mean),
                                              jnp.asarray(cov), (N,), method=method))
        assert (np.abs(x.mean(0) - mean) < 4.5 * np.sqrt(cov.diagonal() / N)).all()
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONTINUOUS))
def test_continuous_fit_float64(name):
    with jax.enable_x64(True):
        sample, dist = CONTINUOUS[name]
        x = sample(_state(name + "64"), jnp.float64)
        assert x.dtype == jnp.float64
        assert st.kstest(np.asarray(x), dist.cdf).pvalue > THRESHOLD


def test_normal_and_uniform_float64():
    with jax.enable_x64(True):
        x = np.asarray(jp.normal(_state("normal64"), (N,), jnp.float64))
        assert x.dtype == np.float64
        assert st.kstest(x, "norm").pvalue > THRESHOLD
        for precise in [False, True]:
            u = np.asarray(jp.uniform(_state("uniform64"), (N,), jnp.float64, precise=precise))
            assert u.dtype == np.float64
            assert st.kstest(u, "uniform").pvalue > THRESHOLD
