"""``poisson`` and ``binomial``: inversion for small means, transformed rejection for large."""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _retry
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _unit
from jaxpmac._samplers._correctly_rounded import divide, sqrt
from jaxpmac._samplers._hashed import family_static, hashed
from jaxpmac._samplers._registry import sampler

POISSON_RETRY_LABEL = "jaxpmac.poisson.retry"
BINOMIAL_RETRY_LABEL = "jaxpmac.binomial.retry"
SMALL_MEAN = 10.0


def _inversion(u, first_pmf, next_ratio, limit):
    """The smallest ``k`` with ``u <= P(0) + ... + P(k)``, by sequential search from 0.

    ``next_ratio(k)`` is ``P(k+1) / P(k)``. The search also stops at ``limit`` or once a term
    no longer changes the running sum (float rounding), so the far tail beyond about
    ``eps``-sized probabilities is merged into the last reachable value.
    """
    eps = np.array(jnp.finfo(u.dtype).eps, u.dtype)

    def searching(carry):
        k, pmf, cdf = carry
        return (u > cdf) & (k < limit) & (pmf > eps * cdf)

    def cond(carry):
        return jnp.any(searching(carry))

    def body(carry):
        k, pmf, cdf = carry
        go = searching(carry)
        # Rounded on its own: fused into ``cdf + next_pmf`` in some programs and not others,
        # it would move the search's stopping point.
        next_pmf = _fixed_math.rounded(pmf * next_ratio(k))
        return (jnp.where(go, k + 1, k), jnp.where(go, next_pmf, pmf),
                jnp.where(go, cdf + next_pmf, cdf))

    k0 = jnp.zeros_like(u)
    first_pmf = jnp.broadcast_to(first_pmf, u.shape)
    k, _, _ = lax.while_loop(cond, body, (k0, first_pmf, first_pmf))
    return k


def _open_uniform_pair(words, cdtype):
    return _unit.open_unit(words[:, 0], cdtype), _unit.open_unit(words[:, 1], cdtype)


def _poisson_flat(state, retries, lam, cdtype, *, n):
    small = lam < SMALL_MEAN
    valid = lam >= 0
    lam_small = jnp.where(small & valid, lam, 0)
    lam_big = jnp.where(small | ~valid | (lam == jnp.inf), SMALL_MEAN, lam)
    log_lam = _fixed_math.log(lam_big)
    # Every product that feeds an addition is rounded on its own (``_fixed_math.rounded``), in
    # the parameters, the proposal and the acceptance test, as in the gamma family: XLA fuses
    # ``a * b + c`` into one multiply-add in some programs and not others (and never op by op,
    # under ``jax.disable_jit``), and an acceptance decided by that ulp picks another candidate.
    b = 0.931 + _fixed_math.rounded(2.53 * sqrt(lam_big))
    a = -0.059 + _fixed_math.rounded(0.02483 * b)
    inv_alpha = 1.1239 + divide(1.1328, b - 3.4)
    v_r = 0.9277 - divide(3.6224, b - 2)

    def propose(words, first):
        u, v = _open_uniform_pair(words, cdtype)
        # PTRS (Hormann 1993), transformed rejection with squeeze.
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        k = jnp.floor(_fixed_math.rounded((divide(2 * a, us) + b) * u) + lam_big + 0.43)
        accept_fast = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        s = _fixed_math.log(divide(v * inv_alpha, divide(a, us * us) + b))
        t = -lam_big + _fixed_math.rounded(k * log_lam) - _fixed_math.lgamma(k + 1)
        accepted = accept_fast | (~reject & (s <= t)) | small | ~valid
        if first:
            # Inversion for small means uses the try's first uniform.
            k_small = _inversion(u + 0.5, _fixed_math.exp(-lam_small),
                                 lambda k: divide(lam_small, k + 1), 1000)
            k = jnp.where(small, k_small, k)
        return k, accepted

    k = _retry.until_accepted(state, retries, propose, n=n,
                              words_per_try=2, dtype=cdtype)
    return k, valid


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _poisson_impl(state, retries, lam, *, shape, dtype):
    # A scalar mean stays a scalar. Broadcast, every parameter derived from it was an array of
    # the draw's size: 18.8x the output's memory at the peak, against 9.3x now (jax.random's
    # poisson: 10x).
    flat = lam if lam.ndim == 0 else jnp.broadcast_to(lam, shape).reshape(-1)
    k, valid = _poisson_flat(state, retries, flat, lam.dtype, n=math.prod(shape))
    top = jnp.iinfo(dtype).max
    k = jnp.where(flat == jnp.inf, top, jnp.minimum(k, top))
    return jnp.where(valid, k, -1).astype(dtype).reshape(shape)


@sampler
def poisson(state, lam, shape=None, dtype=None):
    """Poisson(``lam``) integers, like ``jax.random.poisson``.

    Algorithms (computed in float32, or float64 with x64): ``lam < 10``: inversion by
    sequential search with one uniform (stream word ``2i``), merging the tail beyond
    float-epsilon probabilities; ``lam >= 10``: Hormann's PTRS transformed rejection, two
    uniforms per try at fixed stream positions (:mod:`jaxpmac._samplers._retry`). The acceptance
    test uses ``lgamma`` (the project's own, :mod:`jaxpmac._samplers._fixed_math`, so the same
    candidates are accepted under every jax); in float32 it is accurate for ``lam`` up to about
    ``1e5``. The small-mean search starts from ``exp(-lam)``, also the project's own. Every product
    that feeds an addition is rounded on its own, so an acceptance is never decided by a fused
    multiply-add (the same values in every program, and under ``jax.disable_jit``). Edge values as
    ``jax.random.poisson``: ``lam = 0`` gives 0, negative or NaN ``lam`` gives -1, ``inf``
    gives the dtype's maximum.

    Args:
        state: an :class:`RNGState`.
        lam: rate(s), broadcastable to ``shape``.
        shape: output shape; None: ``lam``'s shape.
        dtype: an integer dtype; default JAX's default int.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.poisson(jp.key(0), 3.0, (4,)) >= 0).all())
        True
    """
    dtype, (lam,), shape, _ = _sampler_args.checked(
        "poisson", state, dtype, shape, {"lam": lam}, output=_sampler_args.INT,
        compute=_sampler_args.widest_float())
    if math.prod(shape) == 0:
        return jnp.zeros(shape, dtype)
    return _poisson_impl(hashed(state), family_static(state, POISSON_RETRY_LABEL), lam,
                         shape=shape, dtype=dtype)


def _stirling_tail(k):
    """``log k! - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2]`` (Hormann's ``f_c``)."""
    table = jnp.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                      0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                      0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                      0.00833056343336287], k.dtype)
    kp1_sq = (k + 1) * (k + 1)
    series = divide(1.0 / 12 - divide(1.0 / 360 - divide(1.0 / 1260, kp1_sq), kp1_sq), k + 1)
    return jnp.where(k <= 9, table[jnp.clip(k, 0, 9).astype(jnp.int32)], series)


def _binomial_flat(state, retries, count, prob, cdtype, *, n_draws):
    flip = prob > 0.5
    q = jnp.where(flip, 1 - prob, prob)
    valid = (count >= 0) & (q >= 0) & (q <= 0.5) & (count < jnp.inf)
    small = count * q < SMALL_MEAN
    n = jnp.where(valid, count, 0)
    p = jnp.where(valid, q, 0)
    n_small = jnp.where(small, n, 0)
    p_small = jnp.where(small, p, 0)
    # BTRS parameters (Hormann 1993), on harmless values where unused.
    n_big = jnp.where(small, 100.0, n)
    p_big = jnp.where(small, 0.25, p)
    spq = sqrt(n_big * p_big * (1 - p_big))
    # Products that feed additions rounded on their own, as in poisson (see there).
    b = 1.15 + _fixed_math.rounded(2.53 * spq)
    a = (-0.0873 + _fixed_math.rounded(0.0248 * b)) + _fixed_math.rounded(0.01 * p_big)
    c = _fixed_math.rounded(n_big * p_big) + 0.5
    v_r = 0.92 - divide(4.2, b)
    alpha = (2.83 + divide(5.1, b)) * spq
    m = jnp.floor((n_big + 1) * p_big)
    p_n2 = _fixed_math.rounded(p_big * (n_big + 2))

    def propose(words, first):
        u, v = _open_uniform_pair(words, cdtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        k = jnp.floor(_fixed_math.rounded((divide(2 * a, us) + b) * u) + c)
        accept_fast = (us >= 0.07) & (v <= v_r)
        in_range = (k >= 0) & (k <= n_big)
        kk = jnp.clip(k, 0, n_big)
        log_v = _fixed_math.log(divide(v * alpha, divide(a, us * us) + b))
        # Hormann's bound, with the logs of near-1 ratios written as log1p for accuracy.
        log_m = _fixed_math.log1p(divide(m + 1 - p_n2, p_big * (n_big - m + 1)))
        log_k = _fixed_math.log1p(divide(kk - m, n_big - kk + 1))
        log_p = _fixed_math.log1p(divide(p_n2 - kk - 1, (1 - p_big) * (kk + 1)))
        bound = (_fixed_math.rounded((m + 0.5) * log_m)
                 + _fixed_math.rounded((n_big + 1) * log_k)
                 + _fixed_math.rounded((kk + 0.5) * log_p)
                 + _stirling_tail(m) + _stirling_tail(n_big - m)
                 - _stirling_tail(kk) - _stirling_tail(n_big - kk))
        accepted = accept_fast | (in_range & (log_v <= bound)) | small | ~valid
        k = kk
        if first:
            # P(0) = (1 - p)**n as exp(n log1p(-p)), with this project's functions (XLA's
            # ``pow`` differs by instruction set).
            log_q = _fixed_math.log1p(-p_small)
            p0 = _fixed_math.exp(_fixed_math.rounded(n_small * log_q))
            k_small = _inversion(u + 0.5, p0,
                                 lambda j: divide(divide(n_small - j, j + 1) * p_small, 1 - p_small),
                                 n_small)
            k = jnp.where(small, k_small, k)
        return k, accepted

    k = _retry.until_accepted(state, retries, propose, n=n_draws,
                              words_per_try=2, dtype=cdtype)
    k = jnp.where(flip, n - k, k)
    nan = jnp.array(jnp.nan, cdtype)
    edge = jnp.where((count == jnp.inf) & (prob > 0) & (prob <= 1), jnp.inf, nan)
    return jnp.where(valid, k, edge)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def binomial_of_hashed(state, retries, count, prob, *, shape, dtype):
    """``binomial`` of a hashed state and its retry family (``_hashed``), with validated
    parameters: the jitted body of :func:`binomial`, and each step of ``multinomial``."""
    # Scalar parameters stay scalars, as in poisson: broadcast, every parameter derived from
    # them was an array of the draw's size (25.8x the output's memory at the peak, against 10x
    # for jax.random's binomial).
    count, prob = (x if x.ndim == 0 else jnp.broadcast_to(x, shape).reshape(-1)
                   for x in (count, prob))
    k = _binomial_flat(state, retries, count, prob, count.dtype, n_draws=math.prod(shape))
    return k.astype(dtype).reshape(shape)


@sampler
def binomial(state, n, p, shape=None, dtype=None):
    """Binomial(``n``, ``p``) counts as floats, like ``jax.random.binomial``.

    Algorithms (computed in float32, or float64 with x64; ``p > 1/2`` is drawn as
    ``n - Binomial(n, 1 - p)``): ``n p < 10``: inversion by sequential search with one uniform
    (stream word ``2i``); otherwise Hormann's BTRS transformed rejection, two uniforms per try
    at fixed stream positions (:mod:`jaxpmac._samplers._retry`), with the acceptance bound's
    logarithms of near-1 ratios taken by ``log1p`` (the project's own,
    :mod:`jaxpmac._samplers._fixed_math`) and every product that feeds an addition rounded on its
    own, as in :func:`poisson`. Counts are exact integers up to ``2**24`` (float32).
    Edge values as ``jax.random.binomial``: ``n = 0`` or ``p = 0`` gives 0, ``p = 1`` gives
    ``n``, ``n = inf`` gives inf, negative or NaN ``n``/``p`` (and ``p > 1``) give NaN.

    Args:
        state: an :class:`RNGState`.
        n: trial counts (floats or ints), broadcastable to ``shape``.
        p: success probabilities, broadcastable to ``shape``.
        shape: output shape; None: the broadcast shape of ``n`` and ``p``.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jaxpmac as jp
        >>> x = jp.binomial(jp.key(0), 10, 0.5, (4,))
        >>> bool(((0 <= x) & (x <= 10)).all())
        True
    """
    dtype, (n, p), shape, _ = _sampler_args.checked(
        "binomial", state, dtype, shape, {"n": n, "p": p}, compute=_sampler_args.widest_float())
    if math.prod(shape) == 0:
        return jnp.zeros(shape, dtype)
    return binomial_of_hashed(hashed(state), family_static(state, BINOMIAL_RETRY_LABEL), n, p,
                          shape=shape, dtype=dtype)
