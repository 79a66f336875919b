"""Derivatives of the samplers with respect to their parameters, with the values left alone.

A sampler's values are fixed by the project (its golden values), so every rule here is a
``jax.custom_jvp`` whose primal is the sampler's own computation, unchanged, and whose tangent is
the derivative of the distribution's transform (see ``docs/gradients.md``):

* :func:`exp`, :func:`logaddexp`, :func:`softmax`: the project's own functions
  (:mod:`jaxpmac._samplers._fixed_math`) with the exact derivatives of ``exp``, ``logaddexp`` and
  ``softmax`` (``y dx``, the softmax weights, ``y (dx - sum y dx)``), rather than the
  derivatives of their polynomial approximations;
* :func:`implicit_log_gamma`: ``log x`` of a Gamma(``alpha``) draw made by rejection with
  ``alpha`` held constant (``lax.stop_gradient``: a ``while_loop`` cannot be reverse-mode
  differentiated, and the candidate a rejection loop accepts is no smooth function of
  ``alpha``), given the tangent of implicit reparameterisation,
  ``dx/dalpha = -(dF(x; alpha)/dalpha) / f(x; alpha)``, as ``jax.random.gamma`` does.

The tangents use XLA's own ``digamma`` and ``random_gamma_grad`` (and the project's ``exp``):
derivatives are accurate, but not pinned bit for bit across jax versions or instruction sets as
the values are.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._lowering._platform import cpu_barrier
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers._correctly_rounded import divide


def primal(values):
    """A rule's primal ``values`` for its tangent to use, on a CPU behind an
    ``optimization_barrier`` (``cpu_barrier``): XLA's CPU backend evaluates its own ``log``,
    ``log1p`` and ``erf`` with other last bits in other fusions, so a tangent computed in the
    fusion of the values would change them.

    Example:
        >>> import jax.numpy as jnp
        >>> float(primal(jnp.float32(1.5)))
        1.5
    """
    return cpu_barrier(values)


@jax.custom_jvp
def exp(x: jax.Array) -> jax.Array:
    """:func:`jaxpmac._samplers._fixed_math.exp`, with derivative ``exp(x) dx``.

    Example:
        >>> import jax
        >>> float(jax.grad(exp)(1.0)) == float(exp(1.0))
        True
    """
    return _fixed_math.exp(x)


@exp.defjvp
def _exp_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    y = primal(exp(x))
    return y, y * dx


@jax.custom_jvp
def logaddexp(a: jax.Array, b: jax.Array) -> jax.Array:
    """:func:`jaxpmac._samplers._fixed_math.logaddexp`, with derivative
    ``exp(a - r) da + exp(b - r) db`` (``r`` the result).

    Example:
        >>> import jax
        >>> float(jax.grad(logaddexp)(0.0, 0.0))
        0.5
    """
    return _fixed_math.logaddexp(a, b)


@logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    (a, b), (da, db) = primals, tangents
    r = primal(logaddexp(a, b))
    # A weight of an argument that is -inf is 0, also when r is -inf too (both -inf).
    weight_a = jnp.where(a == -jnp.inf, 0, _fixed_math.exp(a - r))
    weight_b = jnp.where(b == -jnp.inf, 0, _fixed_math.exp(b - r))
    return r, weight_a * da + weight_b * db


@partial(jax.custom_jvp, nondiff_argnums=(1,))
def softmax(x: jax.Array, axis: int = -1) -> jax.Array:
    """:func:`jaxpmac._samplers._fixed_math.softmax`, with derivative ``y (dx - sum(y dx))``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> jax.jacfwd(softmax)(jnp.zeros(2)).tolist()
        [[0.25, -0.25], [-0.25, 0.25]]
    """
    return _fixed_math.softmax(x, axis)


@softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x,), (dx,) = primals, tangents
    y = primal(softmax(x, axis))
    y_dx = y * dx
    return y, y_dx - y * jnp.sum(y_dx, axis, keepdims=True)


# Below these values of log x, d log x / d alpha is taken from the leading term of the series of
# the regularised incomplete gamma function, F(x; a) = x**a / Gamma(a + 1) (1 + O(x)): relative
# error O(x), below the dtype's epsilon (and x itself may underflow there, for tiny alpha).
_SERIES_BELOW = {4: -20.0, 8: -40.0}


def log_gamma_derivative(log_x: jax.Array, alpha: jax.Array) -> jax.Array:
    """``d log x / d alpha`` of a Gamma(``alpha``, 1) draw ``x = exp(log_x)`` by implicit
    reparameterisation: ``random_gamma_grad(alpha, x) / x`` (what ``jax.random.gamma`` uses), or
    for tiny ``x`` the series limit ``(digamma(alpha + 1) - log x) / alpha`` (from
    ``log F = alpha log x - lgamma(alpha + 1)`` held fixed). NaN where ``alpha`` is not in
    ``(0, inf)`` (``jax.random.gamma`` gives NaN at 0 too).

    Example:
        >>> import jax.numpy as jnp
        >>> d = log_gamma_derivative(jnp.log(jnp.array([1.5])), jnp.array([2.0]))
        >>> bool(jnp.abs(d * 1.5 - 0.936639).max() < 1e-5)    # dx/da at x = 1.5, a = 2
        True
    """
    valid = (alpha > 0) & (alpha < jnp.inf)
    safe_alpha = jnp.where(valid, alpha, 1)
    general = log_x > _SERIES_BELOW[log_x.dtype.itemsize]
    x = _fixed_math.exp(jnp.where(general, log_x, 0))
    from_grad = divide(lax.random_gamma_grad(safe_alpha, x), x)
    series = divide(jax.scipy.special.digamma(safe_alpha + 1) - log_x, safe_alpha)
    return jnp.where(valid, jnp.where(general, from_grad, series), np.nan)


@jax.custom_jvp
def implicit_log_gamma(log_x: jax.Array, alpha: jax.Array) -> jax.Array:
    """``log_x`` (a Gamma(``alpha``) draw's log, computed with ``alpha`` held constant),
    unchanged, with the tangent ``log_gamma_derivative(log_x, alpha) dalpha``; the tangent of
    ``log_x`` itself is ignored (it is that of a draw at constant ``alpha``: zero).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> float(jax.grad(implicit_log_gamma, 1)(jnp.log(1.5), 2.0)) > 0
        True
    """
    del alpha
    return log_x


@implicit_log_gamma.defjvp
def _implicit_log_gamma_jvp(primals, tangents):
    (log_x, alpha), (_, d_alpha) = primals, tangents
    log_x = primal(log_x)
    return log_x, log_gamma_derivative(log_x, alpha) * d_alpha
