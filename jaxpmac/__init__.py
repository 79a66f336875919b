"""jaxpmac: reproducible, splittable, counter-based random numbers for JAX.

Every draw is a pure function of a message -- a seed (nonce), static labels and dynamic uids --
hashed with PMAC over 20-round Threefish-256, the design of the Hail genetics library, bit for
bit (see docs/spec.md). Distinct messages give independent streams; the same message gives the same
numbers under ``jit``, ``vmap``, ``scan``, remat and sharding alike.
"""

from jaxpmac import hail, rand
from jaxpmac._bits import bits
from jaxpmac._counts import binomial, poisson
from jaxpmac._discrete_multivariate import geometric, multinomial, rademacher
from jaxpmac._gamma_family import beta, dirichlet, gamma
from jaxpmac._implicit import DrawSite, draw_sites, randomized
from jaxpmac._integers import categorical, choice, permutation, randint
from jaxpmac._jax_interop import as_jax_key, fold_in_uids, prng_impl
from jaxpmac._lowering import force_lowering
from jaxpmac._normal import multivariate_normal, normal, truncated_normal
from jaxpmac._random_geometry import ball, orthogonal
from jaxpmac._simple_continuous import cauchy, exponential, gumbel, laplace, logistic
from jaxpmac._state import RNGState, key
from jaxpmac._uniform import bernoulli, uniform

__version__ = "0.1.0"

__all__ = [
    "DrawSite",
    "RNGState",
    "as_jax_key",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "choice",
    "dirichlet",
    "draw_sites",
    "exponential",
    "fold_in_uids",
    "force_lowering",
    "gamma",
    "geometric",
    "gumbel",
    "hail",
    "key",
    "laplace",
    "logistic",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "permutation",
    "poisson",
    "prng_impl",
    "rademacher",
    "rand",
    "randint",
    "randomized",
    "truncated_normal",
    "uniform",
]
