"""Keyless samplers: ``jaxpmac.<sampler>`` without the state, for :func:`jaxpmac.randomized`.

Each function takes the explicit sampler's arguments after ``state`` and works only while a
``randomized`` function is traced (elsewhere: RuntimeError). ``randomized`` gives each call site
its own state; see :func:`jaxpmac.draw_sites` for the explicit equivalent of each site. A site
numbered by its place in the program moves when draws are added before it; a keyword-only
``name=`` pins it instead, as Hail's ``seed=`` does: ``rand.normal(shape, name="dropout1")``
draws from ``state.split_static("jaxpmac.rand.name", "dropout1")`` (then its vmap lanes and
loop indices, as every site), whatever other draws the function makes; two draws of one name
are an error. Inside ``with keyed_by(example_id):`` draws are keyed by the uid instead of the
lanes and loop indices it varies over (:func:`keyed_by`).

Example:
    >>> import jax.numpy as jnp, jaxpmac as jp
    >>> model = jp.randomized(lambda x: x + jp.rand.normal(x.shape))
    >>> model(jp.key(0), jnp.zeros(2)).shape
    (2,)
"""

from __future__ import annotations

import inspect
from typing import Callable

from jaxpmac._implicit._draw import draw as _draw
from jaxpmac._implicit._draw import keyed_by
from jaxpmac._samplers._registry import SAMPLERS as _SAMPLERS


def _keyless(sampler: str) -> Callable:
    """The keyless twin of the registered sampler ``sampler``: the same parameters after
    ``state``, bound as it binds them, and a keyword-only ``name``, drawn by
    :func:`jaxpmac._implicit._draw.draw`."""
    signature = inspect.signature(_SAMPLERS[sampler])
    parameters = list(signature.parameters.values())[1:]
    sampler_signature = signature.replace(parameters=parameters)
    signature = signature.replace(parameters=[*parameters, inspect.Parameter(
        "name", inspect.Parameter.KEYWORD_ONLY, default=None)])

    def keyless(*args, name=None, **kwargs):
        bound = sampler_signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return _draw(sampler, name, **bound.arguments)

    public = (f"jaxpmac.hail.{sampler[len('hail_'):]}" if sampler.startswith("hail_")
              else f"jaxpmac.{sampler}")
    keyless.__name__ = keyless.__qualname__ = sampler
    keyless.__module__ = __name__
    keyless.__signature__ = signature
    keyless.__doc__ = (f"Keyless :func:`{public}`: the same arguments, without the state; "
                       "``name=`` pins the draw's site (module docstring).")
    return keyless


# One keyless function per registered sampler (jaxpmac/__init__.py imports every sampler module
# before this one, so the registry is full). tests/test_rand_names.py checks this block against
# the registry; `python tests/test_rand_names.py` rewrites it.
# BEGIN keyless samplers
__all__ = [
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "hail_rand_beta",
    "hail_rand_bool",
    "hail_rand_cat",
    "hail_rand_dirichlet",
    "hail_rand_gamma",
    "hail_rand_hyper",
    "hail_rand_int32",
    "hail_rand_int64",
    "hail_rand_multi_hyper",
    "hail_rand_norm",
    "hail_rand_norm2d",
    "hail_rand_pois",
    "hail_rand_unif",
    "hail_shuffle",
    "keyed_by",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "rayleigh",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
]

ball = _keyless("ball")
bernoulli = _keyless("bernoulli")
beta = _keyless("beta")
binomial = _keyless("binomial")
bits = _keyless("bits")
categorical = _keyless("categorical")
cauchy = _keyless("cauchy")
chisquare = _keyless("chisquare")
choice = _keyless("choice")
dirichlet = _keyless("dirichlet")
double_sided_maxwell = _keyless("double_sided_maxwell")
exponential = _keyless("exponential")
f = _keyless("f")
gamma = _keyless("gamma")
generalized_normal = _keyless("generalized_normal")
geometric = _keyless("geometric")
gumbel = _keyless("gumbel")
hail_rand_beta = _keyless("hail_rand_beta")
hail_rand_bool = _keyless("hail_rand_bool")
hail_rand_cat = _keyless("hail_rand_cat")
hail_rand_dirichlet = _keyless("hail_rand_dirichlet")
hail_rand_gamma = _keyless("hail_rand_gamma")
hail_rand_hyper = _keyless("hail_rand_hyper")
hail_rand_int32 = _keyless("hail_rand_int32")
hail_rand_int64 = _keyless("hail_rand_int64")
hail_rand_multi_hyper = _keyless("hail_rand_multi_hyper")
hail_rand_norm = _keyless("hail_rand_norm")
hail_rand_norm2d = _keyless("hail_rand_norm2d")
hail_rand_pois = _keyless("hail_rand_pois")
hail_rand_unif = _keyless("hail_rand_unif")
hail_shuffle = _keyless("hail_shuffle")
laplace = _keyless("laplace")
loggamma = _keyless("loggamma")
logistic = _keyless("logistic")
lognormal = _keyless("lognormal")
maxwell = _keyless("maxwell")
multinomial = _keyless("multinomial")
multivariate_normal = _keyless("multivariate_normal")
normal = _keyless("normal")
orthogonal = _keyless("orthogonal")
pareto = _keyless("pareto")
permutation = _keyless("permutation")
poisson = _keyless("poisson")
rademacher = _keyless("rademacher")
randint = _keyless("randint")
rayleigh = _keyless("rayleigh")
t = _keyless("t")
triangular = _keyless("triangular")
truncated_normal = _keyless("truncated_normal")
uniform = _keyless("uniform")
wald = _keyless("wald")
weibull_min = _keyless("weibull_min")
# END keyless samplers
