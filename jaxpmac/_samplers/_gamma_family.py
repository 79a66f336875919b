"""``gamma``, ``beta`` and ``dirichlet``: Marsaglia--Tsang gammas, kept in log space."""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._lowering._draw_boundary import at_run_time
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _gradients
from jaxpmac._samplers import _ndtri
from jaxpmac._samplers import _retry
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _unit
from jaxpmac._samplers._correctly_rounded import divide, sqrt
from jaxpmac._samplers._hashed import family_static, hashed, hashed_static
from jaxpmac._samplers._registry import sampler

RETRY_LABEL = "jaxpmac.gamma.retry"
BOOST_LABEL = "jaxpmac.gamma.boost"
BETA_B_LABEL = "jaxpmac.beta.b"


def gamma_streams(state):
    """The hashed streams :func:`log_gamma_flat` reads."""
    return (hashed(state), family_static(state, RETRY_LABEL), hashed_static(state, BOOST_LABEL))


def log_gamma_flat(streams, alpha: jax.Array, dtype) -> jax.Array:
    """``log`` of ``[n]`` Gamma(``alpha``, 1) draws in ``compute_dtype(dtype)``.

    Marsaglia & Tsang (2000): with ``a = alpha`` (or ``alpha + 1`` when ``alpha < 1``),
    ``d = a - 1/3``, ``c = 1 / sqrt(9 d)``, a try takes a normal ``x`` and a uniform ``u``,
    ``v = (1 + c x)**3``, and accepts ``d v`` when ``v > 0`` and
    ``log u < x**2 / 2 + d - d v + d log v`` (acceptance >= 95%). Try ``t`` of element ``i``
    reads two fixed stream words (see :mod:`jaxpmac._samplers._retry`): the normal by inverse CDF as
    in :func:`jaxpmac.normal`, the uniform with an accurate logarithm. For ``alpha < 1`` the
    result is multiplied by ``U**(1/alpha)`` (word ``i`` of ``state.split_static(BOOST_LABEL)``),
    added in log space so tiny ``alpha`` does not underflow: ``log U * (1 / alpha)``. Every product
    that feeds an addition, in the proposal, the acceptance test and the boost, is rounded on
    its own (``_fixed_math.rounded``): XLA fuses multiply-adds in some programs and not others,
    and an acceptance decided by such an ulp would pick another candidate.
    ``alpha = 0`` gives ``-inf`` (a 0 draw), ``alpha = inf`` gives ``inf``, negative or NaN
    ``alpha`` gives NaN. The uniform's ``log1p`` and the callers' ``exp`` are the project's
    own (:mod:`jaxpmac._samplers._fixed_math`), since jax's moved between releases.

    Differentiable in ``alpha`` by implicit reparameterisation
    (:func:`jaxpmac._samplers._gradients.implicit_log_gamma`, with the original ``alpha`` and the
    boosted draw for ``alpha < 1``): the draw itself is made with ``alpha`` held constant, so the
    rejection loop is never differentiated and the values are those of the plain draw.
    """
    # A constant alpha would be folded by XLA (d, c and log d too), on a CPU and a GPU alike:
    # callers pass one behind at_run_time, put on the parameters as given, before they are
    # broadcast (a barrier on the broadcast array would hold it in memory). Rounded here, as a
    # caller may compute it (f's ``dfnum * 0.5``), so that no product fuses into ``alpha + 1``.
    alpha = _fixed_math.rounded(alpha.astype(_unit.compute_dtype(dtype)))
    log_x = _log_gamma_draw(streams, lax.stop_gradient(alpha), dtype)
    return _gradients.implicit_log_gamma(log_x, alpha)


def _log_gamma_draw(streams, alpha: jax.Array, dtype) -> jax.Array:
    """The draw of :func:`log_gamma_flat` (``alpha`` in the computation dtype)."""
    state, retries, boost = streams
    cdtype = alpha.dtype
    valid = (alpha > 0) & (alpha < jnp.inf)
    boosted = alpha < 1
    a = jnp.where(valid, jnp.where(boosted, alpha + 1, alpha), 1)
    d = a - np.array(1 / 3, cdtype)
    # 1 / sqrt (both correctly rounded), not XLA's rsqrt, whose value depends on the target:
    # rounded() keeps XLA's simplifier from rewriting the one as the other.
    c = divide(1, _fixed_math.rounded(sqrt(np.array(9, cdtype) * d)))

    def propose(words, first):
        del first
        x = _ndtri.normal_of_word(words[:, 0], cdtype)
        log_u = _unit.log_unit_pair(words[:, 1], cdtype)[0]
        v = (1 + _fixed_math.rounded(c * x)) ** 3
        positive = v > 0
        log_v = _fixed_math.log(jnp.where(positive, v, 1))
        half_x2 = _fixed_math.rounded(np.array(0.5, cdtype) * x * x)
        bound = (half_x2 + d - _fixed_math.rounded(d * v)
                 + _fixed_math.rounded(d * log_v))
        accepted = positive & (log_u < bound)
        return log_v, accepted | ~valid

    log_v = _retry.until_accepted(state, retries, propose, n=alpha.shape[0],
                                  words_per_try=2, dtype=dtype)
    boost_word = _unit.words(boost, alpha.shape[0], 1, dtype)[:, 0]
    log_boost = _unit.log_unit_pair(boost_word, cdtype)[0]
    safe_alpha = jnp.where(valid, alpha, 1)
    # A product with 1 / alpha, as XLA's simplifier writes a division by a broadcast scalar in
    # a compiled program: so a scalar alpha, an array alpha and a draw op by op (disable_jit)
    # all round the same.
    log_boost = _fixed_math.rounded(log_boost * divide(np.array(1, cdtype), safe_alpha))
    log_x = _fixed_math.log(d) + log_v + jnp.where(boosted, log_boost, 0)
    invalid = jnp.where(alpha == 0, -jnp.inf, jnp.where(alpha == jnp.inf, jnp.inf, jnp.nan))
    return jnp.where(valid, log_x, invalid.astype(cdtype))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _gamma_impl(streams, alpha, *, shape, dtype):
    alpha = jnp.broadcast_to(alpha, shape).reshape(-1)
    log_x = log_gamma_flat(streams, alpha, dtype)
    return _gradients.exp(log_x).reshape(shape).astype(dtype)


@sampler
def gamma(state, a, shape=None, dtype=None):
    """Gamma(``a``, 1) floats, like ``jax.random.gamma``.

    Algorithm: Marsaglia--Tsang rejection with fixed stream positions per try, boosted for
    ``a < 1`` (see :func:`log_gamma_flat`); computed in float32 for half types. Edge values as
    ``jax.random.gamma``: ``a = 0`` gives 0, ``a = inf`` gives inf, ``a < 0`` or NaN gives NaN.
    Differentiable in ``a`` by implicit reparameterisation, like ``jax.random.gamma``
    (``docs/gradients.md``); ``beta`` and ``dirichlet`` by the chain rule through their gammas.

    Args:
        state: an :class:`RNGState`.
        a: shape parameter(s), broadcastable to ``shape``.
        shape: output shape; None: ``a``'s shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jaxpmac as jp
        >>> bool((jp.gamma(jp.key(0), 2.0, (4,)) > 0).all())
        True
    """
    dtype, (a,), shape, _ = _sampler_args.checked("gamma", state, dtype, shape, {"a": a})
    if math.prod(shape) == 0:
        return jnp.zeros(shape, dtype)
    (a,) = at_run_time(a)
    return _gamma_impl(gamma_streams(state), a, shape=shape, dtype=dtype)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _beta_impl(streams_a, streams_b, a, b, *, shape, dtype):
    a = jnp.broadcast_to(a, shape).reshape(-1)
    b = jnp.broadcast_to(b, shape).reshape(-1)
    log_a = log_gamma_flat(streams_a, a, dtype)
    log_b = log_gamma_flat(streams_b, b, dtype)
    log_x = log_a - _gradients.logaddexp(log_a, log_b)
    return _gradients.exp(log_x).reshape(shape).astype(dtype)


@sampler
def beta(state, a, b, shape=None, dtype=None):
    """Beta(``a``, ``b``) floats, like ``jax.random.beta``.

    Algorithm: ``X / (X + Y)`` for gammas ``X ~ Gamma(a)`` (the state's stream) and
    ``Y ~ Gamma(b)`` (``state.split_static(BETA_B_LABEL)``), combined in log space, so tiny
    ``a``, ``b`` give 0s and 1s in the right proportions rather than NaN.

    Example:
        >>> import jaxpmac as jp
        >>> x = jp.beta(jp.key(0), 2.0, 3.0, (4,))
        >>> bool(((0 <= x) & (x <= 1)).all())
        True
    """
    dtype, (a, b), shape, _ = _sampler_args.checked("beta", state, dtype, shape,
                                                    {"a": a, "b": b})
    if math.prod(shape) == 0:
        return jnp.zeros(shape, dtype)
    a, b = at_run_time(a, b)
    return _beta_impl(gamma_streams(state), gamma_streams(state.split_static(BETA_B_LABEL)),
                      a, b, shape=shape, dtype=dtype)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _dirichlet_impl(streams, alpha, *, shape, dtype):
    full = shape + alpha.shape[-1:]
    alpha = jnp.broadcast_to(alpha, full).reshape(-1)
    log_x = log_gamma_flat(streams, alpha, dtype).reshape(full)
    return _gradients.softmax(log_x, -1).astype(dtype)


@sampler
def dirichlet(state, alpha, shape=None, dtype=None):
    """Dirichlet(``alpha``) vectors, like ``jax.random.dirichlet``.

    Algorithm: independent log-gammas (element ``j`` of the flattened ``shape + (k,)`` array is
    gamma element ``j`` of the state's stream) normalised by a softmax, i.e. in log space
    (with the project's own ``exp``, :mod:`jaxpmac._samplers._fixed_math`).

    Args:
        state: an :class:`RNGState`.
        alpha: ``[..., k]`` concentrations.
        shape: batch shape; output ``shape + (k,)``; ``alpha.shape[:-1]`` must broadcast to
            it. None: ``alpha.shape[:-1]``.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.

    Example:
        >>> import jax.numpy as jnp, jaxpmac as jp
        >>> x = jp.dirichlet(jp.key(0), jnp.ones(3), (2,))
        >>> x.shape
        (2, 3)
    """
    _sampler_args.check_state(state, name="dirichlet")
    _sampler_args.check_domain("dirichlet", alpha=alpha)
    dtype = _sampler_args.output_dtype(dtype, _sampler_args.FLOAT, name="dirichlet")
    alpha = _sampler_args.real_param(alpha, name="dirichlet alpha",
                                     dtype=_unit.compute_dtype(dtype))
    if alpha.ndim < 1:
        raise ValueError("dirichlet alpha must have at least one dimension, but was given a "
                         "scalar")
    shape = _sampler_args.output_shape(shape, [_sampler_args.batch_of(alpha, 1)],
                                       name="dirichlet")
    if math.prod(shape) * alpha.shape[-1] == 0:
        return jnp.zeros(shape + alpha.shape[-1:], dtype)
    (alpha,) = at_run_time(alpha)
    return _dirichlet_impl(gamma_streams(state), alpha, shape=shape, dtype=dtype)
