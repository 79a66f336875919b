"""``gumbel``, ``exponential``, ``laplace``, ``logistic``, ``cauchy``: closed-form inverse CDFs.

Each reads one stream word per element (word ``i`` for element ``i``) as a uniform ``u`` in
``(0, 1)`` held as its half and its distance ``p`` from the nearer end (see
:func:`jaxpmac._samplers._unit.symmetric_unit`), so ``log(u)`` and ``log(1 - u)`` are both accurate
and both tails are right out to ``p = 2**-33`` (float16/bfloat16/float32, computed in float32) or
``2**-65`` (float64). Half types round once at the end.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _unit
from jaxpmac._samplers._hashed import hashed
from jaxpmac._samplers._registry import sampler


def exponential_of_word(word, cdtype):
    """An exponential variate of each stream word (also the derived samplers' source)."""
    _, log_q = _unit.log_unit_pair(word, cdtype)
    return -log_q


def _gumbel(word, cdtype):
    log_u, _ = _unit.log_unit_pair(word, cdtype)
    return -_fixed_math.log(-log_u)


def _logistic(word, cdtype):
    log_u, log_q = _unit.log_unit_pair(word, cdtype)
    return log_u - log_q


def _laplace(word, cdtype):
    upper, p = _unit.symmetric_unit(word, cdtype)
    magnitude = -_fixed_math.log(np.array(2.0, cdtype) * p)   # 2p is uniform on (0, 1]
    return jnp.where(upper, magnitude, -magnitude)


def _cauchy(word, cdtype):
    # tan(pi (u - 1/2)) = +-cot(pi p): accurate far into both tails, and the project's own
    # (XLA's tan changes with the instruction set).
    upper, p = _unit.symmetric_unit(word, cdtype)
    # The sign as a factor (exact): a select between the quotient and its negation would read
    # it twice, and XLA would not fuse a division into two readers (the words stayed in memory).
    return _fixed_math.cot_pi(p) * jnp.where(upper, np.array(1, cdtype), np.array(-1, cdtype))


_TRANSFORMS = {"exponential": exponential_of_word, "gumbel": _gumbel, "logistic": _logistic,
               "laplace": _laplace, "cauchy": _cauchy}


def unit_transform(state, shape: tuple[int, ...], dtype, kind: str) -> jax.Array:
    """Draws of ``kind`` of ``shape`` in the computation dtype (for use by other samplers)."""
    return _unit.mapped_words(state, shape, dtype, _TRANSFORMS[kind], _unit.compute_dtype(dtype))


@partial(jax.jit, static_argnames=("shape", "dtype", "kind"))
def _impl(state, *, shape, dtype, kind):
    return unit_transform(state, shape, dtype, kind).astype(dtype)


def _sample(kind, state, shape, dtype, offset):
    dtype, _, shape, offset = _sampler_args.checked(kind, state, dtype, shape, offset=offset)
    return _impl(hashed(state, offset), shape=shape, dtype=dtype, kind=kind)


@sampler
def exponential(state, shape=(), dtype=None, *, offset=0):
    """Standard exponential floats (rate 1), like ``jax.random.exponential``.

    Algorithm: ``-log(1 - u)``, with ``log(1 - u)`` evaluated as ``log1p(-p)`` or ``log(p)``
    (see the module docstring): no 0 is ever returned, the largest value is
    ``-log(2**-33) ~ 22.9`` (float32) or ``~ 45`` (float64).

    Args:
        state: an :class:`RNGState`.
        shape: output shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.
        offset: keyword-only; element ``i`` of the flattened output is element ``offset + i``
            of the same draw with a larger shape, so a tile, a shard or a later call can draw
            its own slice (a Python int or an integer scalar array; traced is fine).

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.exponential(jp.key(0), (4,)) > 0).all())
        True
    """
    return _sample("exponential", state, shape, dtype, offset)


@sampler
def gumbel(state, shape=(), dtype=None, mode=None, *, offset=0):
    """Standard Gumbel floats, like ``jax.random.gumbel``.

    Algorithm: ``-log(-log(u))`` with ``log(u)`` accurate in both tails (module docstring);
    values lie in about ``[-3.1, 22.9]`` (float32) or ``[-3.8, 45]`` (float64). ``mode`` is
    accepted for compatibility ("low", "high" or None all draw the same). Other arguments as
    :func:`exponential`'s.

    Example:
        >>> import jaxpmac as jp
        >>> jp.gumbel(jp.key(0), (2, 2)).shape
        (2, 2)
    """
    _sampler_args.check_mode(mode, name="gumbel")
    return _sample("gumbel", state, shape, dtype, offset)


@sampler
def laplace(state, shape=(), dtype=None, *, offset=0):
    """Standard Laplace floats, like ``jax.random.laplace``.

    Algorithm: the word's top bit is the sign, the magnitude ``-log(2p)`` is exponential.
    Arguments as :func:`exponential`'s.

    Example:
        >>> import jaxpmac as jp
        >>> jp.laplace(jp.key(0), (3,)).shape
        (3,)
    """
    return _sample("laplace", state, shape, dtype, offset)


@sampler
def logistic(state, shape=(), dtype=None, *, offset=0):
    """Standard logistic floats, like ``jax.random.logistic``.

    Algorithm: ``log(u) - log(1 - u)``, both logarithms accurate (module docstring).
    Arguments as :func:`exponential`'s.

    Example:
        >>> import jaxpmac as jp
        >>> jp.logistic(jp.key(0), (3,)).shape
        (3,)
    """
    return _sample("logistic", state, shape, dtype, offset)


@sampler
def cauchy(state, shape=(), dtype=None, *, offset=0):
    """Standard Cauchy floats, like ``jax.random.cauchy``.

    Algorithm: ``tan(pi (u - 1/2))`` evaluated as ``+-1 / tan(pi p)`` (module docstring), so
    the tails reach ``|x| ~ 2.7e9`` (float32) with full relative accuracy. Arguments as
    :func:`exponential`'s.

    Example:
        >>> import jaxpmac as jp
        >>> jp.cauchy(jp.key(0), (3,)).shape
        (3,)
    """
    return _sample("cauchy", state, shape, dtype, offset)
