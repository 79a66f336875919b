"""``orthogonal`` and ``ball``: uniform (Haar) orthogonal matrices and uniform points of a p-ball.

Both are written out in a fixed order of operations, with every product that feeds an addition
rounded on its own (``_fixed_math.rounded``), so their values do not depend on the installed
jax: ``orthogonal`` is the project's own Gram-Schmidt QR (not LAPACK's), ``ball`` normalises in
log space with the project's own ``exp`` and a sum added first to last.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._lowering._draw_boundary import at_run_time
from jaxpmac._message import _inputs
from jaxpmac._samplers import _discrete_multivariate
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _gamma_family
from jaxpmac._samplers import _normal
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _unit
from jaxpmac._samplers._correctly_rounded import divide, sqrt
from jaxpmac._samplers._hashed import hashed, hashed_static
from jaxpmac._samplers._registry import sampler

BALL_GAMMA_LABEL = "jaxpmac.ball.gamma"
BALL_SIGN_LABEL = "jaxpmac.ball.sign"


def _static_int(value, *, name: str, what: str) -> int:
    """A concrete non-negative int (it fixes the output shape)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, np.integer, np.ndarray, jax.Array)):
        raise TypeError(_sampler_args.rejected(name, f"a non-negative int ({what})",
                                               _inputs.describe(value)))
    if isinstance(value, (np.ndarray, jax.Array)):
        if _inputs.is_traced(value):
            raise TypeError(f"{name} must be a concrete int (it fixes the output shape), but "
                            f"was given {_inputs.describe(value)}")
        if value.ndim != 0 or not jnp.issubdtype(value.dtype, jnp.integer):
            raise TypeError(_sampler_args.rejected(name, f"a non-negative int ({what})",
                                                   _inputs.describe(value)))
    value = int(value)
    if value < 0:
        raise ValueError(_sampler_args.rejected(name, f"a non-negative int ({what})",
                                                str(value)))
    return value


# -- orthogonal -------------------------------------------------------------------------------

def _ordered_dot(a: jax.Array, b: jax.Array, axis: int) -> jax.Array:
    """``sum_r a[r] * b[r]`` along ``axis`` (static slices), each product rounded on its own and
    the terms added first to last."""
    size = a.shape[axis]

    def term(r):
        x = lax.index_in_dim(a, r, axis, keepdims=False)
        y = lax.index_in_dim(b, r, axis, keepdims=False)
        return _fixed_math.rounded(x * y)

    total = term(0)
    for r in range(1, size):
        total = total + term(r)
    return total


def _subtract_projections(q: jax.Array, v: jax.Array) -> jax.Array:
    """One classical Gram-Schmidt pass: ``v - Q (Q^T v)`` for ``q`` ``[..., rows, cols]`` and
    ``v`` ``[..., rows]``, written out: ``c = Q^T v`` by :func:`_ordered_dot` over the rows,
    then ``c_i Q[:, i]`` (rounded) subtracted from ``v`` for ``i = 0, 1, ...`` in order. Columns
    of ``q`` not yet computed are 0 and change nothing."""
    coefficients = _ordered_dot(q, v[..., :, None], axis=-2)               # [..., cols]
    for i in range(q.shape[-1]):
        v = v - _fixed_math.rounded(q[..., :, i] * coefficients[..., i, None])
    return v


def gram_schmidt(z: jax.Array) -> jax.Array:
    """The ``Q`` of ``z = Q R`` (``[..., rows, cols]``, ``rows >= cols``) with ``R``'s diagonal
    positive: column ``j`` is ``z[:, j]`` less its projections on columns ``0 .. j-1``, removed
    twice (classical Gram-Schmidt with one reorthogonalisation, "twice is enough": columns
    orthonormal to a few ulp, whatever the conditioning of ``z`` short of singular), divided by
    its norm ``sqrt(sum_r v[r]**2)`` (added first to last)."""
    cols = z.shape[-1]

    def column(j, q):
        v = lax.dynamic_index_in_dim(z, j, axis=-1, keepdims=False)
        v = _subtract_projections(q, _subtract_projections(q, v))
        norm = sqrt(_ordered_dot(v, v, axis=-1))
        # The norm is hidden behind an addition of -0: XLA rewrites ``1 / sqrt(s)`` as
        # ``rsqrt(s)``, whose rounding is its own, in some programs (it moved columns by a few
        # ulp under jit). Multiplied by the reciprocal, as XLA computes a division by a
        # broadcast anyway.
        inverse = divide(1, _fixed_math.rounded(norm))
        return lax.dynamic_update_index_in_dim(q, (v * inverse[..., None])[..., None], j,
                                               axis=-1)

    return lax.fori_loop(0, cols, column, jnp.zeros_like(z))


@partial(jax.jit, static_argnames=("n", "m", "shape", "dtype"))
def _orthogonal_impl(state, *, n, m, shape, dtype):
    rows, cols = max(n, m), min(n, m)
    z = _normal.standard_normal(state, shape + (rows, cols), dtype)
    q = gram_schmidt(z)
    if n < m:
        q = jnp.swapaxes(q, -1, -2)
    return q.astype(dtype)


@sampler
def orthogonal(state, n, shape=(), dtype=None, m=None):
    """Uniformly (Haar) distributed orthogonal matrices, like ``jax.random.orthogonal``.

    For ``n != m`` a semi-orthogonal matrix: orthonormal columns (``n > m``) or rows (``n < m``),
    uniform on its Stiefel manifold.

    Algorithm: a ``[max(n, m), min(n, m)]`` matrix ``Z`` of :func:`jaxpmac.normal` draws
    (element ``i`` of the flattened ``shape + (max, min)`` array reads stream word ``i``), then
    ``Q`` of ``Z = Q R`` with ``R``'s diagonal positive -- the sign correction that makes ``Q``
    Haar distributed (Mezzadri 2007) -- by the project's own Gram-Schmidt with one
    reorthogonalisation (:func:`gram_schmidt`), every dot product written out in a fixed order
    with each product rounded on its own, so neither LAPACK's QR nor XLA's dot order can move
    the values; transposed when ``n < m``. Computed in float32 for half types. ``jax.random``
    takes LAPACK's Householder QR and multiplies by the signs of ``R``'s diagonal: the same
    distribution.

    Args:
        state: an :class:`RNGState`.
        n: rows, a non-negative int.
        shape: batch shape; the output is ``shape + (n, m)``.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.
        m: columns, a non-negative int; default ``n``.

    Example:
        >>> import jax.numpy as jnp, jaxpmac as jp
        >>> q = jp.orthogonal(jp.key(0), 3)
        >>> bool(jnp.allclose(q.T @ q, jnp.eye(3), atol=1e-5))
        True
    """
    _sampler_args.check_state(state, name="orthogonal")
    dtype = _sampler_args.output_dtype(dtype, _sampler_args.FLOAT, name="orthogonal")
    n = _static_int(n, name="orthogonal n", what="the number of rows")
    m = n if m is None else _static_int(m, name="orthogonal m", what="the number of columns")
    shape = _sampler_args.check_shape(shape, name="orthogonal")
    if math.prod(shape) * n * m == 0:
        return jnp.zeros(shape + (n, m), dtype)
    return _orthogonal_impl(hashed(state), n=n, m=m, shape=shape, dtype=dtype)


# -- ball -------------------------------------------------------------------------------------

def _log_open_unit(word, cdtype):
    """``log(u)`` of :func:`jaxpmac._samplers._unit.open_unit`, by
    :func:`jaxpmac._samplers._fixed_math.log`."""
    return _fixed_math.log(_unit.open_unit(word, cdtype))


@partial(jax.jit, static_argnames=("d", "shape", "dtype"))
def _ball_impl(state, gamma_streams, signs, p, *, d, shape, dtype):
    cdtype = _unit.compute_dtype(dtype)
    n = math.prod(shape) * d
    p = jnp.broadcast_to(p.astype(cdtype), shape)[..., None]
    alpha = jnp.broadcast_to(divide(np.array(1, cdtype), p), shape + (d,)).reshape(-1)
    # |g_j|**p of generalized-normal coordinates are Gamma(1/p) draws, kept as logs; for
    # 1/p < 1, Gamma(1/p + 1) U**p, the boost taken here (see the docstring).
    boosted = alpha < 1
    log_g = _gamma_family.log_gamma_flat(gamma_streams, jnp.where(boosted, alpha + 1, alpha),
                                         dtype)
    log_boost = _log_open_unit(_unit.words(gamma_streams[2], n, 1, dtype)[:, 0], cdtype)
    p_flat = jnp.broadcast_to(p, shape + (d,)).reshape(-1)
    log_boost = _fixed_math.rounded(log_boost * p_flat)
    log_g = (log_g + jnp.where(boosted, log_boost, 0)).reshape(shape + (d,))
    top = jnp.max(log_g, axis=-1, keepdims=True)
    log_sum = top + _fixed_math.log(_fixed_math.ordered_sum(_fixed_math.exp(log_g - top), axis=-1))
    log_u = _unit.mapped_words(state, shape, cdtype, _log_open_unit, cdtype)
    # log|x_j| = (log|g_j|**p - log sum_i |g_i|**p) / p + log(u) / d, as products with the
    # reciprocals (XLA turns a division by a broadcast into one anyway), each rounded on its own.
    inverse_p = divide(1, p)
    radial = _fixed_math.rounded(log_u * np.array(1 / d, cdtype))[..., None]
    log_x = _fixed_math.rounded((log_g - log_sum) * inverse_p) + radial
    magnitude = _fixed_math.exp(log_x)
    sign = _discrete_multivariate.stream_bits(signs, math.prod(shape) * d).reshape(shape + (d,))
    x = jnp.where(sign, magnitude, -magnitude)
    valid = (p > 0) & (p < jnp.inf)
    return jnp.where(valid, x, jnp.nan).astype(dtype)


@sampler
def ball(state, d, p=2, shape=(), dtype=None):
    """Points uniformly distributed in the unit ``p``-ball of dimension ``d``
    (``sum_j |x_j|**p <= 1``), like ``jax.random.ball``.

    Algorithm (Barthe, Guedon, Mendelson & Naor 2005): ``d`` generalized-normal coordinates
    ``g_j`` (density proportional to ``exp(-|x|**p)``) scaled to the unit sphere of the
    ``p``-norm and by a radius ``u**(1/d)``: ``x_j = sign_j (G_j / sum_i G_i)**(1/p) u**(1/d)``,
    where ``G_j = |g_j|**p`` are Gamma(``1/p``) draws, ``sign_j`` is stream bit ``i * d + j`` of
    ``state.split_static("jaxpmac.ball.sign")`` (as :func:`jaxpmac.rademacher` reads bits) and
    ``u = (k + 1/2) 2**-m`` the uniform of :func:`jaxpmac._samplers._unit.open_unit` of word ``i``
    of the state's own stream (``k`` its top ``m`` = mantissa bits), for point ``i`` (row-major over
    ``shape``). ``G_j`` is element ``i * d + j`` of :func:`jaxpmac.gamma`'s Marsaglia-Tsang
    draws on ``state.split_static("jaxpmac.ball.gamma")``; for ``1/p < 1`` (``p > 1``) it is
    ``Gamma(1/p + 1) U**p`` with ``U`` the ``open_unit`` of the word ``gamma`` would take for its
    own boost. Computed in log space
    (``(log G_j - log sum_i G_i) * (1/p) + log(u) * (1/d)``, each product rounded on its own,
    the sum with the largest term factored out and added first to last, the project's own
    ``exp`` and, in float32, its own ``log`` (:func:`jaxpmac._samplers._fixed_math.log`: XLA's
    float32 ``log`` and ``log1p`` gave other values under jax 0.12 in this program), so no
    coordinate under- or overflows before the end. ``jax.random.ball`` uses Barthe et al.'s other
    form, ``g / (sum_j |g_j|**p + E)**(1/p)`` with ``E`` exponential: the same distribution. The
    ``p``-norm of a point is ``u**(1/d)`` up to rounding (a few ulp: points may lie that far
    outside the ball when ``u`` is within rounding of 1). ``p <= 0``, ``p = inf`` or NaN
    give NaN.

    Args:
        state: an :class:`RNGState`.
        d: the dimension, a non-negative int.
        p: the norm's exponent, positive; a scalar or an array broadcastable to ``shape``
            (one per point).
        shape: batch shape; the output is ``shape + (d,)``.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jax.numpy as jnp, jaxpmac as jp
        >>> x = jp.ball(jp.key(0), 3, shape=(5,))
        >>> bool((jnp.linalg.norm(x, axis=-1) < 1).all())
        True
    """
    _sampler_args.check_state(state, name="ball")
    _sampler_args.check_domain("ball", p=p)
    dtype = _sampler_args.output_dtype(dtype, _sampler_args.FLOAT, name="ball")
    d = _static_int(d, name="ball d", what="the dimension")
    p = _sampler_args.real_param(p, name="ball p", dtype=_unit.compute_dtype(dtype))
    # The batch shape is given (never None, which would be p's shape), p broadcasts to it.
    shape = _sampler_args.output_shape(_sampler_args.check_shape(shape, name="ball"), [p],
                                       name="ball")
    if math.prod(shape) * d == 0:
        return jnp.zeros(shape + (d,), dtype)
    (p,) = at_run_time(p)
    return _ball_impl(hashed(state),
                      _gamma_family.gamma_streams(state.split_static(BALL_GAMMA_LABEL)),
                      hashed_static(state, BALL_SIGN_LABEL), p, d=d, shape=shape, dtype=dtype)
