"""``normal``, ``truncated_normal`` and ``multivariate_normal``: inverse-CDF normals."""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac import _bits
from jaxpmac import _ndtri
from jaxpmac import _sampler_args as args
from jaxpmac import _unit
from jaxpmac._lowering._draw_boundary import ends_draw
from jaxpmac._hashed import hashed


def standard_normal(state, shape: tuple[int, ...], dtype) -> jax.Array:
    """Standard normals of ``shape`` in ``compute_dtype(dtype)``; element ``i`` (row-major)
    reads word ``i``.

    Inverse CDF by halves: the word's top bit picks the sign, its other bits give
    ``p = (k + 1/2) * 2**-W`` in ``(0, 1/2]``, and the value is ``-+ndtri(p)``. ``p`` keeps full
    relative precision near 0, so both tails are as accurate as ``ndtri`` (a few ulp) out to
    the truncation point ``|x| = -ndtri(2**-33) ~ 6.23`` for float16/bfloat16/float32 (mass
    beyond it: ``2**-32``) and ``-ndtri(2**-65) ~ 8.9`` for float64. ``ndtri`` is the project's
    own (:mod:`jaxpmac._ndtri`: jax 0.10.2's algorithm), evaluated on the lower half only.
    """
    return _unit.mapped_words(state, shape, dtype, _ndtri.normal_of_word,
                              _unit.compute_dtype(dtype))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _normal_impl(state, *, shape, dtype):
    return standard_normal(state, shape, dtype).astype(dtype)


@ends_draw
def normal(state, shape=(), dtype=None):
    """Standard normal floats, like ``jax.random.normal``.

    Algorithm: inverse CDF, one stream word per element (see :func:`standard_normal`):
    accurate in both tails to the precision of ``ndtri`` (a few ulp), truncated at
    ``|x| ~ 6.23`` (float16/bfloat16/float32, computed in float32) or ``~ 8.9`` (float64).

    Args:
        state: an :class:`RNGState`.
        shape: output shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jaxpmac as jp
        >>> jp.normal(jp.key(0), (2, 3)).shape
        (2, 3)
    """
    _bits.check_state(state, name="normal")
    dtype = args.float_dtype(dtype, name="normal")
    shape = _bits.check_shape(shape, name="normal")
    return _normal_impl(hashed(state), shape=shape, dtype=dtype)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _truncated_normal_impl(state, lower, upper, *, shape, dtype):
    cdtype = _unit.compute_dtype(dtype)
    lower = jnp.broadcast_to(lower.astype(cdtype), shape)
    upper = jnp.broadcast_to(upper.astype(cdtype), shape)
    # Work in the lower half, where ndtr keeps relative precision: an interval above 0 is
    # sampled as its mirror image and negated.
    flip = lower > 0
    a = jnp.where(flip, -upper, lower)
    b = jnp.where(flip, -lower, upper)
    cdf_a, cdf_b = _ndtri.ndtr(a), _ndtri.ndtr(b)
    u = _unit.open_unit(_unit.words(state, math.prod(shape), 1, dtype)[:, 0], cdtype)
    x = _ndtri.ndtri(cdf_a + u.reshape(shape) * (cdf_b - cdf_a))
    x = jnp.where(flip, -x, x)
    # Keep inside the open interval (lower, upper) like jax.random.truncated_normal.
    x = jnp.clip(x, lax.nextafter(lower, jnp.full_like(lower, jnp.inf)),
                 lax.nextafter(upper, jnp.full_like(upper, -jnp.inf)))
    # A degenerate interval gives its point; an empty one (only reachable with traced
    # bounds: concrete ones are checked) gives NaN rather than jax.random's -0.
    x = jnp.where(lower == upper, lower, x)
    x = jnp.where(lower > upper, jnp.nan, x)
    return x.astype(dtype)


def _check_concrete_bounds(lower, upper, cdtype) -> None:
    """ValueError when concrete bounds have ``lower > upper`` somewhere (after broadcasting,
    compared in the computation dtype ``cdtype``), naming the first such pair. The bounds as
    given are checked on the host, so closed-over constants are checked under ``jit`` too."""
    if isinstance(lower, jax.core.Tracer) or isinstance(upper, jax.core.Tracer):
        return
    lower, upper = np.broadcast_arrays(np.asarray(lower).astype(cdtype),
                                       np.asarray(upper).astype(cdtype))
    empty = lower > upper
    if empty.any():
        index = tuple(int(i) for i in np.unravel_index(np.argmax(empty), empty.shape))
        where = f" (at broadcast index {index})" if lower.ndim else ""
        raise ValueError(f"truncated_normal accepts bounds with lower <= upper, but was given "
                         f"lower {lower[index]} and upper {upper[index]}{where}")


@ends_draw
def truncated_normal(state, lower, upper, shape=None, dtype=None):
    """Standard normals conditioned on ``lower < x < upper``, like
    ``jax.random.truncated_normal``.

    Algorithm: inverse CDF, ``ndtri(Phi(a) + u * (Phi(b) - Phi(a)))`` with ``u`` in ``(0, 1)``
    from stream word ``i``, evaluated on the mirror image ``(-upper, -lower)`` when
    ``lower > 0`` so that ``Phi`` is taken in the lower tail where it has relative precision.
    ``Phi`` and ``ndtri`` are the project's own (:mod:`jaxpmac._ndtri`, jax 0.10.2's
    algorithms), so the values do not depend on the installed jax.
    Results are clipped into the open interval. Accurate while ``Phi(a)`` and ``Phi(b)`` differ
    in the computation dtype (float32 for half types): intervals further out than about 13
    (float32) or 37 (float64) standard deviations collapse onto their nearer bound. NaN bounds
    give NaN. ``lower == upper`` gives that value exactly (the limit of shrinking intervals;
    ``jax.random`` gives the float just below it).

    ``lower > upper`` (an empty interval) is a ``ValueError`` when both bounds are concrete.
    Traced bounds (under ``jit``/``vmap``) cannot be checked at trace time, so the affected
    elements are NaN. This differs on purpose from ``jax.random.truncated_normal``, which
    returns ``-0.``, a value outside both bounds that looks valid.

    Args:
        state: an :class:`RNGState`.
        lower, upper: bounds, scalars or arrays broadcastable to ``shape``.
        shape: output shape; None: the broadcast shape of the bounds.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jaxpmac as jp
        >>> x = jp.truncated_normal(jp.key(0), -1.0, 2.0, (5,))
        >>> bool(((-1 < x) & (x < 2)).all())
        True
    """
    _bits.check_state(state, name="truncated_normal")
    dtype = args.float_dtype(dtype, name="truncated_normal")
    cdtype = _unit.compute_dtype(dtype)
    lower_given, upper_given = lower, upper
    lower = args.real_param(lower, name="truncated_normal lower", dtype=cdtype)
    upper = args.real_param(upper, name="truncated_normal upper", dtype=cdtype)
    shape = args.output_shape(shape, [lower, upper], name="truncated_normal")
    _check_concrete_bounds(lower_given, upper_given, cdtype)
    return _truncated_normal_impl(hashed(state), lower, upper, shape=shape, dtype=dtype)


_FACTOR_METHODS = ("cholesky", "eigh", "svd")


def _factor(cov, method: str):
    if method == "cholesky":
        return jnp.linalg.cholesky(cov)
    if method == "eigh":
        eigenvalues, vectors = jnp.linalg.eigh(cov)
        return vectors * jnp.sqrt(jnp.maximum(eigenvalues, 0))[..., None, :]
    u, s, _ = jnp.linalg.svd(cov)
    return u * jnp.sqrt(s)[..., None, :]


@partial(jax.jit, static_argnames=("shape", "dtype", "method"))
def _multivariate_normal_impl(state, mean, cov, *, shape, dtype, method):
    dim = mean.shape[-1]
    z = standard_normal(state, shape + (dim,), dtype)
    factor = _factor(cov, method)
    return (mean + jnp.einsum("...ij,...j->...i", factor, z)).astype(dtype)


@ends_draw
def multivariate_normal(state, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normals ``mean + F z``, like ``jax.random.multivariate_normal``.

    ``z`` are :func:`normal` draws (element ``i`` of the flattened ``shape + (d,)`` array reads
    stream word ``i``); ``F`` is a factor with ``F F^T = cov``: the Cholesky factor
    (``method="cholesky"``), ``V sqrt(max(w, 0))`` from ``eigh``, or ``U sqrt(s)`` from ``svd``.
    A covariance that is not positive definite gives NaN with Cholesky, like ``jax.random``.

    Args:
        state: an :class:`RNGState`.
        mean: ``[..., d]`` means.
        cov: ``[..., d, d]`` covariances.
        shape: batch shape (the output is ``shape + (d,)``); ``mean.shape[:-1]`` and
            ``cov.shape[:-2]`` must broadcast to it. None: their broadcast shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.
        method: "cholesky" (default), "eigh" or "svd".

    Example:
        >>> import jax.numpy as jnp, jaxpmac as jp
        >>> jp.multivariate_normal(jp.key(0), jnp.zeros(2), jnp.eye(2), (4,)).shape
        (4, 2)
    """
    _bits.check_state(state, name="multivariate_normal")
    dtype = args.float_dtype(dtype, name="multivariate_normal")
    if method not in _FACTOR_METHODS:
        raise ValueError(f"multivariate_normal method accepts {_FACTOR_METHODS}, but was given "
                         f"{method!r}")
    cdtype = _unit.compute_dtype(dtype)
    mean = args.real_param(mean, name="multivariate_normal mean", dtype=cdtype)
    cov = args.real_param(cov, name="multivariate_normal cov", dtype=cdtype)
    if mean.ndim < 1 or cov.ndim < 2 or cov.shape[-2:] != (mean.shape[-1],) * 2:
        raise ValueError(f"multivariate_normal accepts mean of shape [..., d] and cov of shape "
                         f"[..., d, d], but was given shapes {mean.shape} and {cov.shape}")
    shape = args.output_shape(shape, [np.empty(mean.shape[:-1], np.bool_),
                                      np.empty(cov.shape[:-2], np.bool_)],
                              name="multivariate_normal")
    return _multivariate_normal_impl(hashed(state), mean, cov, shape=shape, dtype=dtype,
                                     method=method)
