"""jaxpmac: reproducible, splittable, counter-based random numbers for JAX.

Every draw is a pure function of a message -- a seed (nonce), static labels and dynamic uids --
hashed with PMAC over 20-round Threefish-256, the design of the Hail genetics library, bit for
bit (see docs/spec.md). Distinct messages give independent streams; the same message gives the same
numbers under ``jit``, ``vmap``, ``scan``, remat and sharding alike.
"""

from jaxpmac._checks._streams import StreamFinding, check_streams
from jaxpmac._implicit._randomized import DrawSite, draw_sites, randomized
from jaxpmac._interop._jax_keys import as_jax_key, fold_in_uids, prng_impl
from jaxpmac._interop._key_states import state_of
from jaxpmac._lowering import force_lowering
from jaxpmac._message._state import RNGState, key
from jaxpmac._samplers._bits import bits
from jaxpmac._samplers._counts import binomial, poisson
from jaxpmac._samplers._derived_continuous import (
    chisquare, double_sided_maxwell, f, generalized_normal, loggamma, lognormal, maxwell, pareto,
    rayleigh, t, triangular, wald, weibull_min)
from jaxpmac._samplers._discrete_multivariate import geometric, multinomial, rademacher
from jaxpmac._samplers._gamma_family import beta, dirichlet, gamma
from jaxpmac._samplers._integers import categorical, choice, permutation, randint
from jaxpmac._samplers._normal import multivariate_normal, normal, truncated_normal
from jaxpmac._samplers._random_geometry import ball, orthogonal
from jaxpmac._samplers._simple_continuous import cauchy, exponential, gumbel, laplace, logistic
from jaxpmac._samplers._uniform import bernoulli, uniform

# Last: the keyless samplers of jaxpmac.rand are made from every sampler registered above.
from jaxpmac import hail, rand  # noqa: E402  isort: skip

__version__ = "0.1.0"

__all__ = [
    "DrawSite",
    "RNGState",
    "StreamFinding",
    "as_jax_key",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "check_streams",
    "chisquare",
    "choice",
    "dirichlet",
    "double_sided_maxwell",
    "draw_sites",
    "exponential",
    "f",
    "fold_in_uids",
    "force_lowering",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "hail",
    "key",
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
    "prng_impl",
    "rademacher",
    "rand",
    "randint",
    "randomized",
    "rayleigh",
    "state_of",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
]
