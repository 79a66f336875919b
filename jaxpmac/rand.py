"""Keyless samplers: ``jaxpmac.<sampler>`` without the state, for :func:`jaxpmac.randomized`.

Each function takes the explicit sampler's arguments after ``state`` and works only while a
``randomized`` function is traced (elsewhere: RuntimeError). ``randomized`` gives each call site
its own state; see :func:`jaxpmac.draw_sites` for the explicit equivalent of each site.

Example:
    >>> import jax.numpy as jnp, jaxpmac as jp
    >>> model = jp.randomized(lambda x: x + jp.rand.normal(x.shape))
    >>> model(jp.key(0), jnp.zeros(2)).shape
    (2,)
"""

from __future__ import annotations

from jaxpmac._implicit_draw import draw as _draw

__all__ = [
    "ball", "bernoulli", "beta", "binomial", "bits", "categorical", "cauchy", "chisquare",
    "choice", "dirichlet", "double_sided_maxwell", "exponential", "f", "gamma",
    "generalized_normal", "geometric", "gumbel", "hail_rand_bool", "hail_rand_int32",
    "hail_rand_int64", "hail_rand_norm", "hail_rand_unif", "laplace", "loggamma", "logistic",
    "lognormal", "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal",
    "pareto", "permutation", "poisson", "rademacher", "randint", "rayleigh", "t", "triangular",
    "truncated_normal", "uniform", "wald", "weibull_min",
]


def uniform(shape=(), dtype=None, minval=0.0, maxval=1.0, *, precise=False):
    """Keyless :func:`jaxpmac.uniform`."""
    return _draw("uniform", shape=shape, dtype=dtype, minval=minval, maxval=maxval,
                 precise=precise)


def normal(shape=(), dtype=None):
    """Keyless :func:`jaxpmac.normal`."""
    return _draw("normal", shape=shape, dtype=dtype)


def bernoulli(p=0.5, shape=None, mode="low"):
    """Keyless :func:`jaxpmac.bernoulli`."""
    return _draw("bernoulli", p=p, shape=shape, mode=mode)


def randint(shape, minval, maxval, dtype=None):
    """Keyless :func:`jaxpmac.randint`."""
    return _draw("randint", shape=shape, minval=minval, maxval=maxval, dtype=dtype)


def bits(shape=(), dtype=None, *, offset=0):
    """Keyless :func:`jaxpmac.bits` (default dtype uint32)."""
    kwargs = dict(shape=shape, offset=offset)
    if dtype is not None:
        kwargs["dtype"] = dtype
    return _draw("bits", **kwargs)


def exponential(shape=(), dtype=None):
    """Keyless :func:`jaxpmac.exponential`."""
    return _draw("exponential", shape=shape, dtype=dtype)


def gumbel(shape=(), dtype=None, mode=None):
    """Keyless :func:`jaxpmac.gumbel`."""
    return _draw("gumbel", shape=shape, dtype=dtype, mode=mode)


def laplace(shape=(), dtype=None):
    """Keyless :func:`jaxpmac.laplace`."""
    return _draw("laplace", shape=shape, dtype=dtype)


def logistic(shape=(), dtype=None):
    """Keyless :func:`jaxpmac.logistic`."""
    return _draw("logistic", shape=shape, dtype=dtype)


def cauchy(shape=(), dtype=None):
    """Keyless :func:`jaxpmac.cauchy`."""
    return _draw("cauchy", shape=shape, dtype=dtype)


def t(df, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.t`."""
    return _draw("t", df=df, shape=shape, dtype=dtype)


def lognormal(sigma=1.0, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.lognormal`."""
    return _draw("lognormal", sigma=sigma, shape=shape, dtype=dtype)


def chisquare(df, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.chisquare`."""
    return _draw("chisquare", df=df, shape=shape, dtype=dtype)


def f(dfnum, dfden, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.f`."""
    return _draw("f", dfnum=dfnum, dfden=dfden, shape=shape, dtype=dtype)


def loggamma(a, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.loggamma`."""
    return _draw("loggamma", a=a, shape=shape, dtype=dtype)


def pareto(b, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.pareto`."""
    return _draw("pareto", b=b, shape=shape, dtype=dtype)


def weibull_min(scale, concentration, shape=(), dtype=None):
    """Keyless :func:`jaxpmac.weibull_min`."""
    return _draw("weibull_min", scale=scale, concentration=concentration, shape=shape,
                 dtype=dtype)


def rayleigh(scale, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.rayleigh`."""
    return _draw("rayleigh", scale=scale, shape=shape, dtype=dtype)


def maxwell(shape=(), dtype=None):
    """Keyless :func:`jaxpmac.maxwell`."""
    return _draw("maxwell", shape=shape, dtype=dtype)


def double_sided_maxwell(loc, scale, shape=(), dtype=None):
    """Keyless :func:`jaxpmac.double_sided_maxwell`."""
    return _draw("double_sided_maxwell", loc=loc, scale=scale, shape=shape, dtype=dtype)


def generalized_normal(p, shape=(), dtype=None):
    """Keyless :func:`jaxpmac.generalized_normal`."""
    return _draw("generalized_normal", p=p, shape=shape, dtype=dtype)


def wald(mean, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.wald`."""
    return _draw("wald", mean=mean, shape=shape, dtype=dtype)


def triangular(left, mode, right, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.triangular`."""
    return _draw("triangular", left=left, mode=mode, right=right, shape=shape, dtype=dtype)


def categorical(logits, axis=-1, shape=None, replace=True, mode=None):
    """Keyless :func:`jaxpmac.categorical`."""
    return _draw("categorical", logits=logits, axis=axis, shape=shape, replace=replace,
                 mode=mode)


def truncated_normal(lower, upper, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.truncated_normal`."""
    return _draw("truncated_normal", lower=lower, upper=upper, shape=shape, dtype=dtype)


def multivariate_normal(mean, cov, shape=None, dtype=None, method="cholesky"):
    """Keyless :func:`jaxpmac.multivariate_normal`."""
    return _draw("multivariate_normal", mean=mean, cov=cov, shape=shape, dtype=dtype,
                 method=method)


def poisson(lam, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.poisson`."""
    return _draw("poisson", lam=lam, shape=shape, dtype=dtype)


def binomial(n, p, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.binomial`."""
    return _draw("binomial", n=n, p=p, shape=shape, dtype=dtype)


def gamma(a, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.gamma`."""
    return _draw("gamma", a=a, shape=shape, dtype=dtype)


def beta(a, b, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.beta`."""
    return _draw("beta", a=a, b=b, shape=shape, dtype=dtype)


def dirichlet(alpha, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.dirichlet`."""
    return _draw("dirichlet", alpha=alpha, shape=shape, dtype=dtype)


def rademacher(shape=(), dtype=None):
    """Keyless :func:`jaxpmac.rademacher`."""
    return _draw("rademacher", shape=shape, dtype=dtype)


def geometric(p, shape=None, dtype=None):
    """Keyless :func:`jaxpmac.geometric`."""
    return _draw("geometric", p=p, shape=shape, dtype=dtype)


def multinomial(n, p, *, shape=None, dtype=None, unroll=1):
    """Keyless :func:`jaxpmac.multinomial`."""
    return _draw("multinomial", n=n, p=p, shape=shape, dtype=dtype, unroll=unroll)


def orthogonal(n, shape=(), dtype=None, m=None):
    """Keyless :func:`jaxpmac.orthogonal`."""
    return _draw("orthogonal", n=n, shape=shape, dtype=dtype, m=m)


def ball(d, p=2, shape=(), dtype=None):
    """Keyless :func:`jaxpmac.ball`."""
    return _draw("ball", d=d, p=p, shape=shape, dtype=dtype)


def choice(a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Keyless :func:`jaxpmac.choice`."""
    return _draw("choice", a=a, shape=shape, replace=replace, p=p, axis=axis, mode=mode)


def permutation(x, axis=0, independent=False):
    """Keyless :func:`jaxpmac.permutation`."""
    return _draw("permutation", x=x, axis=axis, independent=independent)


def hail_rand_unif(lower=0.0, upper=1.0):
    """Keyless :func:`jaxpmac.hail.rand_unif`."""
    return _draw("hail_rand_unif", lower=lower, upper=upper)


def hail_rand_norm(mean=0.0, sd=1.0):
    """Keyless :func:`jaxpmac.hail.rand_norm`."""
    return _draw("hail_rand_norm", mean=mean, sd=sd)


def hail_rand_int32(n):
    """Keyless :func:`jaxpmac.hail.rand_int32`."""
    return _draw("hail_rand_int32", n=n)


def hail_rand_int64():
    """Keyless :func:`jaxpmac.hail.rand_int64` (needs x64)."""
    return _draw("hail_rand_int64")


def hail_rand_bool(p):
    """Keyless :func:`jaxpmac.hail.rand_bool`."""
    return _draw("hail_rand_bool", p=p)
