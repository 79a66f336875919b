"""``rademacher``, ``geometric`` and ``multinomial``: discrete draws on jaxpmac's own stream.

``rademacher`` reads one stream *bit* per element, ``geometric`` one stream word per element
(inversion with an accurate ``log(u)``), and ``multinomial`` one :func:`jaxpmac.binomial` draw per
category but the last, each from its own sub-state, in category order.
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
from jaxpmac._samplers import _counts
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _unit
from jaxpmac._samplers._correctly_rounded import divide
from jaxpmac._samplers._hashed import family_static, hashed
from jaxpmac._samplers._registry import sampler

MULTINOMIAL_LABEL = "jaxpmac.multinomial.category"
BITS_PER_WORD = 32


# -- rademacher -----------------------------------------------------------------------------

def stream_bits(source, n: int) -> jax.Array:
    """``[n]`` booleans: element ``i`` is bit ``i mod 32`` (0 = least significant) of 32-bit
    stream element ``i // 32`` of ``source`` (a :class:`~jaxpmac._samplers._hashed.HashedState`)."""
    words = source.stream(-(-n // BITS_PER_WORD), jnp.uint32)
    shifts = jnp.arange(BITS_PER_WORD, dtype=jnp.uint32)
    bits = (words[:, None] >> shifts) & np.uint32(1)
    return bits.reshape(-1)[:n].astype(jnp.bool_)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _rademacher_impl(state, *, shape, dtype):
    bits = stream_bits(state, math.prod(shape)).reshape(shape)
    return jnp.where(bits, np.array(1, dtype), np.array(-1, dtype))


@sampler
def rademacher(state, shape=(), dtype=None):
    """Rademacher values, -1 or +1 with probability 1/2 each, like ``jax.random.rademacher``.

    Algorithm: one stream bit per element: element ``i`` (row-major) is bit ``i mod 32``
    (counting from the least significant bit) of 32-bit stream element ``i // 32`` (the
    element :func:`jaxpmac.bits` returns at index ``i // 32``); a 1 bit gives +1, a 0 bit -1.

    Args:
        state: an :class:`RNGState`.
        shape: output shape.
        dtype: a signed integer or float dtype; default JAX's default int.

    Example:
        >>> import jaxpmac as jp
        >>> x = jp.rademacher(jp.key(0), (6,))
        >>> sorted(set(x.tolist()) | {-1, 1})
        [-1, 1]
    """
    dtype, _, shape, _ = _sampler_args.checked("rademacher", state, dtype, shape,
                                               output=_sampler_args.SIGNED)
    return _rademacher_impl(hashed(state), shape=shape, dtype=dtype)


# -- geometric ------------------------------------------------------------------------------

def _log_u(word, cdtype):
    return _unit.log_unit_pair(word, cdtype)[0]


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _geometric_impl(state, p, *, shape, dtype):
    cdtype = p.dtype
    log_u = _unit.mapped_words(state, shape, cdtype, _log_u, cdtype)
    log_q = _fixed_math.log1p(-p)
    # p = 1: log_q = -inf and the ratio is +0, so every draw is 1. Times the reciprocal: p is
    # a broadcast, and XLA's CPU compiler computes a division by one so (``divide``).
    k = jnp.floor(log_u * divide(1, log_q)) + np.array(1, cdtype)
    top = jnp.iinfo(dtype).max
    # Compared in float: float(top) may round up past the int range (2**31 in float32).
    too_big = k >= np.array(float(top) + 1.0, cdtype)
    k = jnp.where(too_big, np.array(1, cdtype), k).astype(dtype)
    k = jnp.where(too_big, np.array(top, dtype), k)
    k = jnp.where(p == 0, np.array(top, dtype), k)
    valid = (p >= 0) & (p <= 1)
    return jnp.where(valid, k, np.array(-1).astype(dtype))


@sampler
def geometric(state, p, shape=None, dtype=None):
    """Geometric(``p``) integers: the number of Bernoulli(``p``) trials up to and including the
    first success (values 1, 2, ...), like ``jax.random.geometric``.

    Algorithm: inversion, ``floor(log(u) / log1p(-p)) + 1`` for a uniform ``u`` in ``(0, 1)``
    from stream word ``i`` (32-bit; 64-bit with x64) for element ``i``, computed in float32
    (float64 with x64). ``log(u)`` is accurate in both tails (``u`` held as its distance from
    the nearer end, :func:`jaxpmac._samplers._unit.log_unit_pair`) and ``log1p`` is the project's
    own (:mod:`jaxpmac._samplers._fixed_math`), so the values do not depend on the installed jax.
    The quotient is exact in the integers up to ``2**24`` (float32; ``2**53`` float64).

    Edge values: ``p = 1`` gives 1; ``p = 0`` (never a success) and results above the
    dtype's maximum give the dtype's maximum; ``p < 0``, ``p > 1`` or NaN give -1 (which an
    unsigned dtype holds as its maximum). ``jax.random.geometric`` gives 0 or negative
    numbers there.

    Args:
        state: an :class:`RNGState`.
        p: success probabilities, broadcastable to ``shape``.
        shape: output shape; None: ``p``'s shape.
        dtype: an integer dtype; default JAX's default int.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.geometric(jp.key(0), 0.3, (5,)) >= 1).all())
        True
    """
    dtype, (p,), shape, _ = _sampler_args.checked(
        "geometric", state, dtype, shape, {"p": p}, output=_sampler_args.INT,
        compute=_sampler_args.widest_float())
    if math.prod(shape) == 0:
        return jnp.zeros(shape, dtype)
    (p,) = at_run_time(p)
    return _geometric_impl(hashed(state), jnp.broadcast_to(p, shape), shape=shape, dtype=dtype)


# -- multinomial ----------------------------------------------------------------------------

def _suffix_sums(p: jax.Array) -> jax.Array:
    """``s[..., j] = p[..., j] + (p[..., j+1] + (... + p[..., k-1]))``, added last to first
    (a fixed order; XLA's cumsum picks its own)."""
    parts = [p[..., -1]]
    for j in range(p.shape[-1] - 2, -1, -1):
        parts.append(p[..., j] + parts[-1])
    return jnp.stack(parts[::-1], axis=-1)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _multinomial_impl(base, n, p, *, shape, dtype):
    k = p.shape[-1]
    cdtype = p.dtype
    n = jnp.broadcast_to(n, shape).reshape(-1)
    p = jnp.broadcast_to(p, shape + (k,)).reshape(-1, k)
    valid = ((n >= 0) & (n < jnp.inf) & jnp.all((p >= 0) & (p < jnp.inf), axis=-1)
             & jnp.any(p > 0, axis=-1))
    n = jnp.where(valid, n, 0)
    p = jnp.where(valid[:, None], p, 1)
    suffix = _suffix_sums(p)
    # Category j takes Binomial(remainder, p_j / (p_j + ... + p_{k-1})) of what is left; the
    # last category takes the remainder, so the counts add up to n exactly.
    ratios = jnp.clip(divide(p, jnp.where(suffix == 0, 1, suffix)), 0, 1)

    def category(remainder, j_ratio):
        j, ratio = j_ratio
        sub = base.split(j)
        count = _counts.binomial_of_hashed(
            hashed(sub), family_static(sub, _counts.BINOMIAL_RETRY_LABEL), remainder, ratio,
            shape=(remainder.shape[0],), dtype=cdtype)
        return remainder - count, count

    remainder, counts = lax.scan(category, n, (jnp.arange(k - 1, dtype=jnp.uint32),
                                               ratios[:, :-1].T))
    counts = jnp.concatenate([counts.T, remainder[:, None]], axis=-1)
    counts = jnp.where(valid[:, None], counts, jnp.nan)
    return counts.reshape(shape + (k,)).astype(dtype)


@sampler
def multinomial(state, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(``n``, ``p``) counts as floats, like ``jax.random.multinomial``.

    Algorithm: conditional binomials in category order: category ``j < k - 1`` takes
    ``Binomial(r_j, p_j / (p_j + ... + p_{k-1}))`` of the ``r_j`` trials left by the categories
    before it (``r_0 = n``), drawn by :func:`jaxpmac.binomial` from the sub-state
    ``state.split_static("jaxpmac.multinomial.category").split(j)`` (batch element ``i``, row-major,
    is that binomial's element ``i``); the last category takes the rest, so the counts add up
    to ``n`` exactly. Computed in float32 (float64 with x64): counts are exact integers up to
    ``2**24``. The suffix sums of ``p`` are added in a fixed order (last to first). ``p`` need not
    sum to 1 (it is normalised). A row with a negative, NaN or infinite weight, only zero
    weights, or a negative, NaN or infinite ``n`` gives NaN counts (``jax.random`` gives
    arbitrary-looking counts there).

    Args:
        state: an :class:`RNGState`.
        n: trial counts, broadcastable to the batch shape.
        p: ``[..., k]`` category weights (categories along the last axis).
        shape: keyword-only; the batch shape: the output is ``shape + (k,)``, and ``n`` and
            ``p.shape[:-1]`` must broadcast to it (as in jax 0.12; jax 0.10.2 read ``shape`` as
            the whole output shape). None: the broadcast shape of ``n`` and ``p.shape[:-1]``.
        dtype: keyword-only; float16, bfloat16, float32 or float64 (x64); default JAX's default
            float.
        unroll: keyword-only; accepted for compatibility with ``jax.random`` (an int or bool);
            the draws do not depend on it.

    Example:
        >>> import jax.numpy as jnp, jaxpmac as jp
        >>> x = jp.multinomial(jp.key(0), 10, jnp.array([0.2, 0.3, 0.5]), shape=(4,))
        >>> x.shape, x.sum(-1).tolist()
        ((4, 3), [10.0, 10.0, 10.0, 10.0])
    """
    _sampler_args.check_state(state, name="multinomial")
    _sampler_args.check_domain("multinomial", n=n, p=p)
    dtype = _sampler_args.output_dtype(dtype, _sampler_args.FLOAT, name="multinomial")
    if not isinstance(unroll, (int, np.integer)):
        raise TypeError(_sampler_args.rejected("multinomial unroll", "an int or a bool",
                                               _inputs.describe(unroll)))
    cdtype = _sampler_args.widest_float()
    n = _sampler_args.real_param(n, name="multinomial n", dtype=cdtype)
    p = _sampler_args.real_param(p, name="multinomial p", dtype=cdtype)
    if p.ndim < 1:
        raise ValueError("multinomial p must have at least one dimension (the categories), but "
                         "was given a scalar")
    shape = _sampler_args.output_shape(shape, [n, _sampler_args.batch_of(p, 1)],
                                       name="multinomial")
    k = p.shape[-1]
    if math.prod(shape) * k == 0:
        return jnp.zeros(shape + (k,), dtype)
    n, p = at_run_time(n, p)
    return _multinomial_impl(state.split_static(MULTINOMIAL_LABEL), n, p, shape=shape,
                             dtype=dtype)
