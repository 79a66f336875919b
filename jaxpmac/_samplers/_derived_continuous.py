"""Continuous samplers derived from the normal, exponential, uniform and gamma ones.

``t``, ``lognormal``, ``chisquare``, ``f``, ``loggamma``, ``pareto``, ``weibull_min``,
``rayleigh``, ``maxwell``, ``double_sided_maxwell``, ``generalized_normal``, ``wald`` and
``triangular``, each with the project's own algorithm (stated in its docstring), so their values
are fixed by jaxpmac, not by the installed jax.

Which stream words each one reads:

* one word per element (word ``i`` for element ``i``): ``lognormal`` (a normal), ``pareto``,
  ``weibull_min``, ``rayleigh`` (an exponential), ``triangular`` (a uniform through
  :func:`jaxpmac._samplers._unit.symmetric_unit`);
* two words per element (words ``2i`` and ``2i + 1``): ``maxwell``, ``double_sided_maxwell``
  (a normal and an exponential), ``wald`` (a normal and a uniform);
* gammas (:func:`jaxpmac._samplers._gamma_family.log_gamma_flat`, a rejection sampler with fixed
  stream positions per try): ``chisquare`` and ``loggamma`` on the state's own gamma streams, ``f``
  on those and on ``state.split_static(F_DENOMINATOR_LABEL)``'s, ``t`` and ``generalized_normal``
  on ``state.split_static(T_GAMMA_LABEL)`` / ``(GENERALIZED_NORMAL_GAMMA_LABEL)``'s, their
  normal or sign taking word ``i`` of the state's own stream.

Concrete parameters outside a distribution's domain are a ValueError
(``_sampler_args.DOMAINS``); traced ones
give NaN (documented per sampler), as ``gamma`` does for ``a < 0``: they cannot be checked when
traced, and NaN is visibly invalid. Half types compute
in float32 and round once at the end. Products that feed additions are rounded on their own
(``_fixed_math.rounded``), and ``exp`` is the project's own (:mod:`jaxpmac._samplers._fixed_math`).
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._lowering._draw_boundary import at_run_time
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _ndtri
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _unit
from jaxpmac._samplers._correctly_rounded import divide, sqrt
from jaxpmac._samplers._gamma_family import gamma_streams, log_gamma_flat
from jaxpmac._samplers._hashed import hashed
from jaxpmac._samplers._normal import standard_normal
from jaxpmac._samplers._registry import sampler
from jaxpmac._samplers._simple_continuous import exponential_of_word
from jaxpmac._samplers._simple_continuous import unit_transform

T_GAMMA_LABEL = "jaxpmac.t.gamma"
F_DENOMINATOR_LABEL = "jaxpmac.f.denominator"
GENERALIZED_NORMAL_GAMMA_LABEL = "jaxpmac.generalized_normal.gamma"


def _checked(name: str, state, dtype, shape, params: dict):
    """``(dtype, [parameter arrays in the computation dtype], shape)``, checked at trace time
    (:func:`jaxpmac._samplers._sampler_args.checked`: the domains are ``DOMAINS[name]`` there);
    errors name the sampler and the argument."""
    dtype, values, shape, _ = _sampler_args.checked(name, state, dtype, shape, params)
    # Constant parameters would be folded with XLA's own log and pow: see at_run_time.
    return dtype, list(at_run_time(*values)), shape


def _drawn(impl, shape, dtype, *operands) -> jax.Array:
    """``impl(*operands, shape=shape, dtype=dtype)``, or zeros for an empty ``shape``."""
    if math.prod(shape) == 0:
        return jnp.zeros(shape, dtype)
    return impl(*operands, shape=shape, dtype=dtype)


def _flat(param: jax.Array, shape) -> jax.Array:
    return jnp.broadcast_to(param, shape).reshape(-1)


def _valid_or_nan(valid: jax.Array, x: jax.Array) -> jax.Array:
    return jnp.where(valid, x, jnp.array(jnp.nan, x.dtype))


def _reciprocal(x: jax.Array) -> jax.Array:
    """``1 / x``, for products ``y * (1 / x)`` in place of ``y / x``: XLA rewrites a division
    by a broadcast scalar into such a product in some programs and not others, so the values
    would depend on the program."""
    return divide(np.array(1, x.dtype), x)


def _two_words(state, shape, dtype):
    """Words ``2i`` and ``2i + 1`` of a hashed state's stream, for element ``i`` of ``shape``."""
    words = _unit.words(state, math.prod(shape), 2, dtype)
    return words[:, 0], words[:, 1]


def _log_relative_gamma(log_g: jax.Array, alpha: jax.Array) -> jax.Array:
    """``log(G / alpha)`` for ``G ~ Gamma(alpha)`` given ``log G``: 0 for ``alpha = inf``
    (``G / alpha -> 1``), NaN for ``alpha <= 0`` or NaN."""
    safe = jnp.where(alpha > 0, alpha, 1)
    relative = jnp.where(alpha == jnp.inf, 0, log_g - _fixed_math.log(safe))
    return _valid_or_nan(alpha > 0, relative)


# -- t, chisquare, f, loggamma: gammas ----------------------------------------------------------

@partial(jax.jit, static_argnames=("shape", "dtype"))
def _t_impl(state, streams, df, *, shape, dtype):
    cdtype = _unit.compute_dtype(dtype)
    z = standard_normal(state, shape, dtype).reshape(-1)
    half_df = _flat(df, shape) * np.array(0.5, cdtype)
    relative = _log_relative_gamma(log_gamma_flat(streams, half_df, dtype), half_df)
    x = z * _fixed_math.exp(relative * np.array(-0.5, cdtype))
    return x.reshape(shape).astype(dtype)


@sampler
def t(state, df, shape=None, dtype=None):
    """Student's t floats with ``df`` degrees of freedom, like ``jax.random.t``.

    Algorithm: ``Z / sqrt(G / (df/2))`` for a normal ``Z`` (word ``i`` of the state's stream,
    as :func:`jaxpmac.normal`) and ``G ~ Gamma(df/2)`` (:func:`jaxpmac.gamma`'s algorithm on
    ``state.split_static(T_GAMMA_LABEL)``), the scale taken in log space:
    ``Z * exp(-log(G / (df/2)) / 2)``, so tiny ``df`` neither overflows nor underflows early.
    ``df = inf`` gives ``Z``; ``df <= 0`` or NaN gives NaN.

    Args:
        state: an :class:`RNGState`.
        df: degrees of freedom, broadcastable to ``shape``.
        shape: output shape; None: ``df``'s shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jaxpmac as jp
        >>> jp.t(jp.key(0), 3.0, (4,)).shape
        (4,)
    """
    dtype, (df,), shape = _checked("t", state, dtype, shape, {"df": df})
    return _drawn(_t_impl, shape, dtype, hashed(state),
                  gamma_streams(state.split_static(T_GAMMA_LABEL)), df)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _chisquare_impl(streams, df, *, shape, dtype):
    half_df = _flat(df, shape) * np.array(0.5, _unit.compute_dtype(dtype))
    x = 2 * _fixed_math.exp(log_gamma_flat(streams, half_df, dtype))
    return x.reshape(shape).astype(dtype)


@sampler
def chisquare(state, df, shape=None, dtype=None):
    """Chi-square floats with ``df`` degrees of freedom, like ``jax.random.chisquare``.

    Algorithm: ``2 G`` for ``G ~ Gamma(df/2)``, :func:`jaxpmac.gamma`'s draw on the same state:
    ``chisquare(s, df) == 2 * gamma(s, df / 2)``. ``df = 0`` gives 0, ``df = inf`` gives inf,
    ``df < 0`` or NaN gives NaN (as ``gamma``).

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.chisquare(jp.key(0), 2.5, (4,)) > 0).all())
        True
    """
    dtype, (df,), shape = _checked("chisquare", state, dtype, shape, {"df": df})
    return _drawn(_chisquare_impl, shape, dtype, gamma_streams(state), df)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _f_impl(streams_num, streams_den, dfnum, dfden, *, shape, dtype):
    half = np.array(0.5, _unit.compute_dtype(dtype))
    half_num, half_den = _flat(dfnum, shape) * half, _flat(dfden, shape) * half
    relative_num = _log_relative_gamma(log_gamma_flat(streams_num, half_num, dtype), half_num)
    relative_den = _log_relative_gamma(log_gamma_flat(streams_den, half_den, dtype), half_den)
    return _fixed_math.exp(relative_num - relative_den).reshape(shape).astype(dtype)


@sampler
def f(state, dfnum, dfden, shape=None, dtype=None):
    """F (Fisher--Snedecor) floats, like ``jax.random.f``.

    Algorithm: ``(X / dfnum) / (Y / dfden)`` for chi-squares ``X = 2 G``, ``Y = 2 H``, i.e.
    ``exp(log(G / (dfnum/2)) - log(H / (dfden/2)))`` in log space, with ``G ~ Gamma(dfnum/2)``
    on the state's gamma streams (as :func:`jaxpmac.gamma`) and ``H ~ Gamma(dfden/2)`` on
    ``state.split_static(F_DENOMINATOR_LABEL)``'s. An infinite ``dfnum`` or ``dfden`` takes
    its limit (that ratio is 1); ``<= 0`` or NaN gives NaN.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.f(jp.key(0), 3.0, 7.0, (4,)) > 0).all())
        True
    """
    dtype, (dfnum, dfden), shape = _checked("f", state, dtype, shape,
                                            {"dfnum": dfnum, "dfden": dfden})
    return _drawn(_f_impl, shape, dtype, gamma_streams(state),
                  gamma_streams(state.split_static(F_DENOMINATOR_LABEL)), dfnum, dfden)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _loggamma_impl(streams, a, *, shape, dtype):
    return log_gamma_flat(streams, _flat(a, shape), dtype).reshape(shape).astype(dtype)


@sampler
def loggamma(state, a, shape=None, dtype=None):
    """Logarithms of Gamma(``a``, 1) draws, like ``jax.random.loggamma``.

    Algorithm: :func:`jaxpmac.gamma`'s draw on the same state, kept in log space throughout
    (:func:`jaxpmac._samplers._gamma_family.log_gamma_flat`): Marsaglia--Tsang for ``a >= 1``, and
    for ``a < 1`` ``log(Gamma(a + 1)) + log(U) / a``, so small ``a`` gives accurate, very negative
    logs rather than ``log(0)``: ``exp(loggamma(s, a)) == gamma(s, a)``. ``a = 0`` gives
    ``-inf``, ``a = inf`` gives ``inf``, ``a < 0`` or NaN gives NaN.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.loggamma(jp.key(0), 0.01, (4,)) < 0).all())
        True
    """
    dtype, (a,), shape = _checked("loggamma", state, dtype, shape, {"a": a})
    return _drawn(_loggamma_impl, shape, dtype, gamma_streams(state), a)


# -- lognormal, pareto, weibull_min, rayleigh: one word per element ------------------------------

@partial(jax.jit, static_argnames=("shape", "dtype"))
def _lognormal_impl(state, sigma, *, shape, dtype):
    z = standard_normal(state, shape, dtype)
    # Rounded on its own: XLA would fuse it into float64 exp's first multiply-add.
    return _fixed_math.exp(_fixed_math.rounded(jnp.broadcast_to(sigma, shape) * z)).astype(
        dtype)


@sampler
def lognormal(state, sigma=1.0, shape=None, dtype=None):
    """Log-normal floats ``exp(sigma Z)``, like ``jax.random.lognormal``.

    Algorithm: ``exp(sigma * Z)`` for the normal ``Z`` of :func:`jaxpmac.normal` on the same
    state (word ``i`` for element ``i``). ``sigma < 0`` or NaN gives NaN.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.lognormal(jp.key(0), 0.5, (4,)) > 0).all())
        True
    """
    dtype, (sigma,), shape = _checked("lognormal", state, dtype, shape, {"sigma": sigma})
    return _drawn(_lognormal_impl, shape, dtype, hashed(state),
                  _valid_or_nan(sigma >= 0, sigma))


@partial(jax.jit, static_argnames=("shape", "dtype", "kind"))
def _of_exponential_impl(state, params, *, shape, dtype, kind):
    cdtype = _unit.compute_dtype(dtype)
    e = unit_transform(state, shape, dtype, "exponential")
    params = [jnp.broadcast_to(p, shape) for p in params]
    if kind == "pareto":
        (b,) = params
        x = _valid_or_nan(b > 0, _fixed_math.exp(e * _reciprocal(b)))
    elif kind == "weibull_min":
        scale, concentration = params
        x = scale * _fixed_math.exp(_fixed_math.log(e) * _reciprocal(concentration))
        x = _valid_or_nan((scale >= 0) & (concentration > 0), x)
    else:       # rayleigh
        (scale,) = params
        x = _valid_or_nan(scale >= 0, scale * sqrt(np.array(2, cdtype) * e))
    return x.astype(dtype)


def _of_exponential(kind, state, params: dict, shape, dtype):
    dtype, values, shape = _checked(kind, state, dtype, shape, params)
    return _drawn(partial(_of_exponential_impl, kind=kind), shape, dtype, hashed(state),
                  values)


@sampler
def pareto(state, b, shape=None, dtype=None):
    """Pareto floats (scale 1, shape ``b``; support ``x >= 1``), like ``jax.random.pareto``.

    Algorithm: ``exp(E * (1 / b))`` for the exponential ``E`` of :func:`jaxpmac.exponential`
    on the same state (``-log(1 - u)`` of word ``i``, accurate in both tails). ``b <= 0`` or NaN
    gives NaN.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.pareto(jp.key(0), 2.0, (4,)) >= 1).all())
        True
    """
    return _of_exponential("pareto", state, {"b": b}, shape, dtype)


@sampler
def weibull_min(state, scale, concentration, shape=(), dtype=None):
    """Weibull floats, like ``jax.random.weibull_min``.

    Algorithm: ``scale * E**(1 / concentration)`` for the exponential ``E`` of
    :func:`jaxpmac.exponential` on the same state, the power taken as
    ``exp(log(E) * (1 / concentration))``. ``scale < 0``, ``concentration <= 0`` or NaN gives
    NaN.

    Args:
        state: an :class:`RNGState`.
        scale, concentration: broadcastable to ``shape``.
        shape: output shape (default ``()``, as ``jax.random``); None: the parameters'
            broadcast shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.weibull_min(jp.key(0), 2.0, 1.5, (4,)) > 0).all())
        True
    """
    return _of_exponential("weibull_min", state,
                           {"scale": scale, "concentration": concentration}, shape, dtype)


@sampler
def rayleigh(state, scale, shape=None, dtype=None):
    """Rayleigh floats, like ``jax.random.rayleigh``.

    Algorithm: ``scale * sqrt(2 E)`` for the exponential ``E`` of :func:`jaxpmac.exponential`
    on the same state (``sqrt(-2 log(1 - u))``). ``scale < 0`` or NaN gives NaN.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.rayleigh(jp.key(0), 1.0, (4,)) > 0).all())
        True
    """
    return _of_exponential("rayleigh", state, {"scale": scale}, shape, dtype)


# -- maxwell, double_sided_maxwell, wald: two words per element -----------------------------------

def _signed_maxwell(state, shape, dtype) -> jax.Array:
    """``sign(Z) sqrt(Z**2 + 2E)``, flat, in the computation dtype: ``Z`` normal (word
    ``2i``), ``E`` exponential (word ``2i + 1``)."""
    cdtype = _unit.compute_dtype(dtype)
    normal_word, exponential_word = _two_words(state, shape, dtype)
    z = _ndtri.normal_of_word(normal_word, cdtype)
    e = exponential_of_word(exponential_word, cdtype)
    magnitude = sqrt(_fixed_math.rounded(z * z) + np.array(2, cdtype) * e)
    return jnp.where(z < 0, -magnitude, magnitude)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _maxwell_impl(state, *, shape, dtype):
    return jnp.abs(_signed_maxwell(state, shape, dtype)).reshape(shape).astype(dtype)


@sampler
def maxwell(state, shape=(), dtype=None):
    """Maxwell (Maxwell--Boltzmann) floats, like ``jax.random.maxwell``.

    Algorithm: the chi distribution with 3 degrees of freedom as ``sqrt(Z**2 + 2E)``
    (``chi2(3) = chi2(1) + chi2(2)``, ``chi2(2) = 2E``) for a normal ``Z`` (word ``2i``, as
    :func:`jaxpmac.normal`) and an exponential ``E`` (word ``2i + 1``, as
    :func:`jaxpmac.exponential`): two words per element rather than three normals.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.maxwell(jp.key(0), (4,)) > 0).all())
        True
    """
    dtype, _, shape, _ = _sampler_args.checked("maxwell", state, dtype, shape)
    return _drawn(_maxwell_impl, shape, dtype, hashed(state))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _double_sided_maxwell_impl(state, loc, scale, *, shape, dtype):
    d = _signed_maxwell(state, shape, dtype)
    loc, scale = _flat(loc, shape), _flat(scale, shape)
    x = loc + _fixed_math.rounded(scale * d)
    return _valid_or_nan(scale >= 0, x).reshape(shape).astype(dtype)


@sampler
def double_sided_maxwell(state, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell floats ``loc + scale * (+-M)``, like
    ``jax.random.double_sided_maxwell``.

    Algorithm: :func:`maxwell`'s ``M = sqrt(Z**2 + 2E)`` (words ``2i``, ``2i + 1``) with the
    sign of ``Z``, which is independent of ``M`` (``M`` depends on ``|Z|`` only), so no third
    word is read: ``|double_sided_maxwell(s, 0, 1)| == maxwell(s)``. ``scale < 0`` or NaN
    gives NaN.

    Args:
        state: an :class:`RNGState`.
        loc, scale: broadcastable to ``shape``.
        shape: output shape (default ``()``, as ``jax.random``); None: the parameters'
            broadcast shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jaxpmac as jp
        >>> jp.double_sided_maxwell(jp.key(0), 1.0, 2.0, (4,)).shape
        (4,)
    """
    dtype, (loc, scale), shape = _checked("double_sided_maxwell", state, dtype, shape,
                                          {"loc": loc, "scale": scale})
    return _drawn(_double_sided_maxwell_impl, shape, dtype, hashed(state), loc, scale)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _wald_impl(state, mean, *, shape, dtype):
    cdtype = _unit.compute_dtype(dtype)
    normal_word, uniform_word = _two_words(state, shape, dtype)
    z = _ndtri.normal_of_word(normal_word, cdtype)
    u = _unit.open_unit(uniform_word, cdtype)
    mean = _flat(mean, shape)
    one = np.array(1, cdtype)
    y = z * z
    w = _fixed_math.rounded(mean * (np.array(0.5, cdtype) * y))
    # The smaller root over the mean, 1 + w - sqrt(w (w + 2)), without its cancellation.
    denominator = one + w + sqrt(w * (w + np.array(2, cdtype)))
    r = divide(one, denominator)
    # mean / r written as XLA's simplifier writes it in a compiled program (mean * denominator),
    # so that a draw op by op (jax.disable_jit) rounds the same.
    x = jnp.where(u * (one + r) <= one, mean * r, mean * denominator)
    x = jnp.where(mean == jnp.inf, divide(one, y), x)      # the limit: Levy, 1 / Z**2
    return _valid_or_nan(mean > 0, x).reshape(shape).astype(dtype)


@sampler
def wald(state, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian, shape 1) floats with mean ``mean``, like ``jax.random.wald``.

    Algorithm: Michael, Schucany & Haas (1976) with a normal ``Z`` (word ``2i``, as
    :func:`jaxpmac.normal`) and a uniform ``u`` in ``(0, 1)`` (word ``2i + 1``, its top
    mantissa bits plus 1/2): with ``w = mean Z**2 / 2`` the smaller root is
    ``x = mean * r``, ``r = 1 / (1 + w + sqrt(w (w + 2)))`` (the textbook
    ``mean + mean**2 Z**2 / 2 - ...`` without its cancellation); the draw is ``mean * r`` if
    ``u (1 + r) <= 1`` (i.e. ``u <= mean / (mean + x)``), else ``mean / r``. ``mean = inf``
    gives the limit ``1 / Z**2`` (Levy); ``mean <= 0`` or NaN gives NaN.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.wald(jp.key(0), 2.0, (4,)) > 0).all())
        True
    """
    dtype, (mean,), shape = _checked("wald", state, dtype, shape, {"mean": mean})
    return _drawn(_wald_impl, shape, dtype, hashed(state), mean)


# -- generalized_normal: a gamma and a sign -------------------------------------------------------

@partial(jax.jit, static_argnames=("shape", "dtype"))
def _generalized_normal_impl(state, streams, p, *, shape, dtype):
    cdtype = _unit.compute_dtype(dtype)
    p = _flat(p, shape)
    valid = (p > 0) & (p < jnp.inf)
    inverse_p = _reciprocal(jnp.where(valid, p, 1))
    log_g = log_gamma_flat(streams, inverse_p, dtype)
    magnitude = _fixed_math.exp(log_g * inverse_p)
    word = _unit.words(state, p.shape[0], 1, dtype)[:, 0]
    negative = (word >> np.array(word.dtype.itemsize * 8 - 1, word.dtype)).astype(jnp.bool_)
    x = jnp.where(negative, -magnitude, magnitude)
    return _valid_or_nan(valid, x).reshape(shape).astype(dtype)


@sampler
def generalized_normal(state, p, shape=(), dtype=None):
    """Generalized normal floats (density proportional to ``exp(-|x|**p)``), like
    ``jax.random.generalized_normal``.

    Algorithm: ``|x| = G**(1/p)`` for ``G ~ Gamma(1/p)`` (:func:`jaxpmac.gamma`'s algorithm on
    ``state.split_static(GENERALIZED_NORMAL_GAMMA_LABEL)``), taken in log space as
    ``exp(log(G) * (1 / p))``; the sign is the top bit of word ``i`` of the state's own stream
    (set: negative). ``p <= 0``, ``inf`` or NaN gives NaN.

    Args:
        state: an :class:`RNGState`.
        p: the exponent, broadcastable to ``shape``.
        shape: output shape (default ``()``, as ``jax.random``); None: ``p``'s shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jaxpmac as jp
        >>> jp.generalized_normal(jp.key(0), 1.5, (4,)).shape
        (4,)
    """
    dtype, (p,), shape = _checked("generalized_normal", state, dtype, shape, {"p": p})
    return _drawn(_generalized_normal_impl, shape, dtype, hashed(state),
                  gamma_streams(state.split_static(GENERALIZED_NORMAL_GAMMA_LABEL)), p)


# -- triangular: one word, inverse CDF -----------------------------------------------------------

@partial(jax.jit, static_argnames=("shape", "dtype"))
def _triangular_impl(state, left, mode, right, *, shape, dtype):
    cdtype = _unit.compute_dtype(dtype)
    word = _unit.words(state, math.prod(shape), 1, dtype)[:, 0]
    upper, p = _unit.symmetric_unit(word, cdtype)
    one = np.array(1, cdtype)
    # u and 1 - u, each exact where it is small: the branch near each end reads that one.
    u, q = jnp.where(upper, one - p, p), jnp.where(upper, p, one - p)
    a, c, b = _flat(left, shape), _flat(mode, shape), _flat(right, shape)
    width = b - a
    below = a + sqrt(u * (width * (c - a)))
    above = b - sqrt(q * (width * (b - c)))
    x = jnp.clip(jnp.where(u < divide(c - a, width), below, above), a, b)
    return _valid_or_nan((a <= c) & (c <= b), x).reshape(shape).astype(dtype)


@sampler
def triangular(state, left, mode, right, shape=None, dtype=None):
    """Triangular floats on ``[left, right]`` peaking at ``mode``, like
    ``jax.random.triangular``.

    Algorithm: the inverse CDF of ``u`` from word ``i``, held as its half and distance ``p``
    from the nearer end (:func:`jaxpmac._samplers._unit.symmetric_unit`), so both ``u`` and
    ``1 - u`` are exact where small: ``left + sqrt(u (right - left)(mode - left))`` when
    ``u < (mode - left) / (right - left)``, else ``right - sqrt((1 - u)(right - left)
    (right - mode))``, clipped into ``[left, right]``. Only ``+ - * /`` and ``sqrt``:
    correctly rounded everywhere. Unordered bounds (not ``left <= mode <= right``) or NaN
    give NaN; ``left == right`` gives that value.

    Example:
        >>> import jaxpmac as jp
        >>> x = jp.triangular(jp.key(0), 0.0, 1.0, 3.0, (4,))
        >>> bool(((0 <= x) & (x <= 3)).all())
        True
    """
    dtype, (left, mode, right), shape = _checked(
        "triangular", state, dtype, shape, {"left": left, "mode": mode, "right": right})
    return _drawn(_triangular_impl, shape, dtype, hashed(state), left, mode, right)
