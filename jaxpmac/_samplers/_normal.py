"""``normal``, ``truncated_normal`` and ``multivariate_normal``: inverse-CDF normals."""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._lowering import _platform
from jaxpmac._message import _inputs
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _gradients
from jaxpmac._samplers import _jacobi
from jaxpmac._samplers import _ndtri
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _unit
from jaxpmac._samplers._correctly_rounded import divide, sqrt
from jaxpmac._samplers._hashed import hashed
from jaxpmac._samplers._registry import sampler


def standard_normal(state, shape: tuple[int, ...], dtype) -> jax.Array:
    """Standard normals of ``shape`` in ``compute_dtype(dtype)``; element ``i`` (row-major)
    reads word ``i``.

    Inverse CDF by halves: the word's top bit picks the sign, its other bits give
    ``p = (k + 1/2) * 2**-W`` in ``(0, 1/2]``, and the value is ``-+ndtri(p)``. ``p`` keeps full
    relative precision near 0, so both tails are as accurate as ``ndtri`` (a few ulp) out to
    the truncation point ``|x| = -ndtri(2**-33) ~ 6.23`` for float16/bfloat16/float32 (mass
    beyond it: ``2**-32``) and ``-ndtri(2**-65) ~ 8.9`` for float64. ``ndtri`` is the project's
    own (:mod:`jaxpmac._samplers._ndtri`: jax 0.10.2's algorithm), evaluated on the lower half only.
    """
    return _unit.mapped_words(state, shape, dtype, _ndtri.normal_of_word,
                              _unit.compute_dtype(dtype))


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _normal_impl(state, *, shape, dtype):
    return standard_normal(state, shape, dtype).astype(dtype)


@sampler
def normal(state, shape=(), dtype=None, *, offset=0):
    """Standard normal floats, like ``jax.random.normal``.

    Algorithm: inverse CDF, one stream word per element (see :func:`standard_normal`):
    accurate in both tails to the precision of ``ndtri`` (a few ulp), truncated at
    ``|x| ~ 6.23`` (float16/bfloat16/float32, computed in float32) or ``~ 8.9`` (float64).

    Args:
        state: an :class:`RNGState`.
        shape: output shape.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.
        offset: keyword-only; element ``i`` of the flattened output is element ``offset + i``
            of the same draw with a larger shape, so a tile, a shard or a later call can draw
            its own slice (a Python int or an integer scalar array; traced is fine).

    Example:
        >>> import jaxpmac as jp
        >>> jp.normal(jp.key(0), (2, 3)).shape
        (2, 3)
        >>> bool((jp.normal(jp.key(0), (4,), offset=2) == jp.normal(jp.key(0), (6,))[2:]).all())
        True
    """
    dtype, _, shape, offset = _sampler_args.checked("normal", state, dtype, shape,
                                                    offset=offset)
    return _normal_impl(hashed(state, offset), shape=shape, dtype=dtype)


@partial(jax.jit, static_argnames=("shape", "dtype"))
def _truncated_normal_impl(state, lower, upper, *, shape, dtype):
    cdtype = _unit.compute_dtype(dtype)
    # The bounds keep their own shape (they broadcast against u): Phi(bounds) is computed once
    # per bound, so a constant bound is folded by XLA exactly as a traced one is computed,
    # where its broadcast would have let XLA's simplifier rewrite ndtr's divisions by it.
    lower, upper = lower.astype(cdtype), upper.astype(cdtype)
    u = _unit.open_unit(_unit.words(state, math.prod(shape), 1, dtype)[:, 0], cdtype)
    return _truncated_of_unit(u.reshape(shape), lower, upper).astype(dtype)


@jax.custom_jvp
def _truncated_of_unit(u, lower, upper):
    """The truncated normal at probability position ``u`` in ``(0, 1)`` of ``(lower, upper)``
    (arrays that broadcast against ``u``), by :func:`truncated_normal`'s algorithm.

    Derivative (the tangent of ``u``, made from stream bits, is zero): ``x`` is the point
    where the truncated CDF ``(Phi(x) - Phi(lower)) / (Phi(upper) - Phi(lower))`` equals ``v``
    (``u``, or ``1 - u`` where the mirror image is sampled), so ``dx = (1 - v) phi(lower) /
    phi(x) dlower + v phi(upper) / phi(x) dupper``, the ratios of densities taken as
    ``exp((x - b)(x + b) / 2)``; a degenerate interval moves with its point,
    ``(1 - v) dlower + v dupper``. ``nextafter`` (the clip into the open interval) has no
    derivative rule, and the derivative of the polynomial approximations of ``Phi`` and its
    inverse would be less accurate than this."""
    return _truncated_values(u, lower, upper)


def _truncated_values(u, lower, upper, *, within=None):
    """:func:`_truncated_of_unit`'s values; ``within``: static bounds of the positions given to
    ``ndtri`` (its ``within``), where the caller knows them."""
    # Work in the lower half, where ndtr keeps relative precision: an interval above 0 is
    # sampled as its mirror image and negated.
    flip = lower > 0
    a = jnp.where(flip, -upper, lower)
    b = jnp.where(flip, -lower, upper)
    cdf_a, cdf_b = _ndtri.ndtr(a), _ndtri.ndtr(b)
    # The product rounded on its own: XLA fuses it into the addition in some programs only.
    x = _ndtri.ndtri(cdf_a + _fixed_math.unfused(u * (cdf_b - cdf_a)), within=within)
    x = jnp.where(flip, -x, x)
    # Keep inside the open interval (lower, upper) like jax.random.truncated_normal.
    x = jnp.clip(x, _fixed_math.next_after(lower, jnp.full_like(lower, jnp.inf)),
                 _fixed_math.next_after(upper, jnp.full_like(upper, -jnp.inf)))
    # A degenerate interval gives its point; an empty one (only reachable with traced
    # bounds: concrete ones are checked) gives NaN rather than jax.random's -0.
    x = jnp.where(lower == upper, lower, x)
    return jnp.where(lower > upper, jnp.nan, x)


@_truncated_of_unit.defjvp
def _truncated_of_unit_jvp(primals, tangents):
    (u, lower, upper), (_, d_lower, d_upper) = primals, tangents
    x = _gradients.primal(_truncated_of_unit(u, lower, upper))
    flip = lower > 0
    v, one_minus_v = jnp.where(flip, 1 - u, u), jnp.where(flip, u, 1 - u)   # both exact
    half = np.array(0.5, x.dtype)
    # phi(b) / phi(x); an infinite bound has density 0 (its tangent does not matter).
    to_lower = jnp.where(jnp.isinf(lower), 0, _fixed_math.exp((x - lower) * (x + lower) * half))
    to_upper = jnp.where(jnp.isinf(upper), 0, _fixed_math.exp((x - upper) * (x + upper) * half))
    degenerate = lower == upper
    c_lower = one_minus_v * jnp.where(degenerate, 1, to_lower)
    c_upper = v * jnp.where(degenerate, 1, to_upper)
    return x, c_lower * d_lower + c_upper * d_upper


def _check_concrete_bounds(lower, upper, cdtype) -> None:
    """ValueError when concrete bounds have ``lower > upper`` somewhere (after broadcasting,
    compared in the computation dtype ``cdtype``), naming the first such pair. The bounds as
    given are checked on the host, so closed-over constants are checked under ``jit`` too."""
    if _inputs.is_traced(lower) or _inputs.is_traced(upper):
        return
    lower, upper = np.broadcast_arrays(np.asarray(lower).astype(cdtype),
                                       np.asarray(upper).astype(cdtype))
    empty = lower > upper
    if empty.any():
        index = tuple(int(i) for i in np.unravel_index(np.argmax(empty), empty.shape))
        where = f" (at broadcast index {index})" if lower.ndim else ""
        raise ValueError(_sampler_args.rejected(
            "truncated_normal", "bounds with lower <= upper",
            f"lower {lower[index]} and upper {upper[index]}{where}"))


@sampler
def truncated_normal(state, lower, upper, shape=None, dtype=None, *, offset=0):
    """Standard normals conditioned on ``lower < x < upper``, like
    ``jax.random.truncated_normal``.

    Algorithm: inverse CDF, ``ndtri(Phi(a) + u * (Phi(b) - Phi(a)))`` with ``u`` in ``(0, 1)``
    from stream word ``i``, evaluated on the mirror image ``(-upper, -lower)`` when
    ``lower > 0`` so that ``Phi`` is taken in the lower tail where it has relative precision.
    ``Phi`` and ``ndtri`` are the project's own (:mod:`jaxpmac._samplers._ndtri`, jax 0.10.2's
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

    Differentiable in ``lower`` and ``upper``, pathwise through the inverse CDF (see
    ``docs/gradients.md``); the values under ``grad`` are those of the plain draw.

    Args:
        state: an :class:`RNGState`.
        lower, upper: bounds, scalars or arrays broadcastable to ``shape``.
        shape: output shape; None: the broadcast shape of the bounds.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.
        offset: keyword-only; element ``i`` of the flattened output is element ``offset + i``
            of the same draw with a larger shape, so a tile, a shard or a later call can draw
            its own slice (a Python int or an integer scalar array; traced is fine).

    Example:
        >>> import jaxpmac as jp
        >>> x = jp.truncated_normal(jp.key(0), -1.0, 2.0, (5,))
        >>> bool(((-1 < x) & (x < 2)).all())
        True
    """
    lower_given, upper_given = lower, upper
    dtype, (lower, upper), shape, _ = _sampler_args.checked(
        "truncated_normal", state, dtype, shape, {"lower": lower, "upper": upper})
    _check_concrete_bounds(lower_given, upper_given, _unit.compute_dtype(dtype))
    offset = _sampler_args.check_offset(offset, name="truncated_normal")
    if _platform.in_kernel():
        known = [_sampler_args.known_scalar(bound, dtype=_unit.compute_dtype(dtype))
                 for bound in (lower_given, upper_given)]
        if all(bound is not None for bound in known):
            return _truncated_normal_of_scalars(hashed(state, offset), *known, shape=shape,
                                                dtype=dtype)
    lower, upper = _sampler_args.kernel_operands(shape, lower, upper)
    return _truncated_normal_impl(hashed(state, offset), lower, upper, shape=shape, dtype=dtype)


def _position_range(lower: float, upper: float, *, flip: bool) -> tuple[float, float]:
    """``Phi`` of the (mirrored) bounds in Python floats: the range of the positions ``p`` that
    :func:`_truncated_normal_of_scalars` gives ``ndtri``, within far less than the margins of
    ``ndtri``'s ``within``."""
    a, b = (-upper, -lower) if flip else (lower, upper)
    return tuple(0.5 * math.erfc(-x / math.sqrt(2.0)) for x in (a, b))


def _truncated_normal_of_scalars(state, lower, upper, *, shape, dtype):
    """:func:`_truncated_normal_impl` for concrete scalar bounds (numpy scalars of the
    computation dtype), inside a kernel: the same arithmetic (:func:`_truncated_values`, on the
    bounds broadcast in the kernel), with ``ndtri`` tracing only the branches of positions in
    ``[Phi(a), Phi(b)]``, a range known here to far better than its margins, so the kernel is
    smaller on every backend."""
    within = _position_range(float(lower), float(upper), flip=bool(lower > 0))
    cdtype = lower.dtype
    lower, upper = (jnp.full(shape, bound, cdtype) for bound in (lower, upper))
    u = _unit.open_unit(_unit.words(state, math.prod(shape), 1, dtype)[:, 0], cdtype)
    return _truncated_values(u.reshape(shape), lower, upper, within=within).astype(dtype)


_FACTOR_METHODS = ("cholesky", "eigh", "svd")

# Partial sums of F z: four for float32 (and the half types), one for float64 (see _product).
_PRODUCT_LANES = {4: 4, 8: 1}


def _column(m: jax.Array, k) -> jax.Array:
    """``m[..., :, k]`` for a static or traced ``k``."""
    return lax.dynamic_index_in_dim(m, k, axis=-1, keepdims=False)


@jax.custom_jvp
def _cholesky(cov: jax.Array) -> jax.Array:
    """The lower Cholesky factor of ``cov`` (symmetrised first, ``(cov + cov^T) / 2``, like
    ``jnp.linalg.cholesky``), NaN throughout a matrix that is not positive definite.

    The project's own, so that its values do not depend on the LAPACK of the installed jax or
    SciPy (the installations of jax 0.10.2 and 0.12.0.1 gave float64 factors an ulp apart here
    and there, for some ``d >= 16``). Column ``j`` is ``v = a[:, j] - sum_{k<j} L[:, k] L[j, k]``,
    the sum taken in order of ``k`` with each term after the first added by a fused multiply-add (as
    a compiled dot product is on CPU), then ``L[j, j] = sqrt(v[j])`` and
    ``L[i, j] = v[i] * (1 / L[j, j])`` below it: LAPACK's unblocked order, which gives the factors
    of jax 0.10.2 bit for bit up to ``d = 6`` and within a few ulp beyond. Differentiable
    (:func:`_cholesky_jvp`).
    """
    n = cov.shape[-1]
    a = (cov + jnp.swapaxes(cov, -1, -2)) * 0.5
    rows = lax.broadcasted_iota(jnp.int32, (n,), 0)

    def column(j, carry):
        factor, ok = carry
        row_j = lax.dynamic_index_in_dim(factor, j, axis=-2, keepdims=False)     # L[j, :]

        def term(k):
            return _column(factor, k) * lax.dynamic_index_in_dim(row_j, k, axis=-1)

        # Columns k >= j of the factor are still 0, so for j = 0 this is 0 and v = a[:, 0].
        first = _fixed_math.unfused(term(0))
        total = lax.fori_loop(1, jnp.maximum(j, 1),
                              lambda k, t: t + _fixed_math.unfused(term(k)), first)
        v = _column(a, j) - total
        pivot = lax.dynamic_index_in_dim(v, j, axis=-1, keepdims=False)
        diagonal = sqrt(pivot)
        below = v * divide(1, diagonal)[..., None]
        new = jnp.where(rows > j, below, jnp.where(rows == j, diagonal[..., None], 0))
        factor = lax.dynamic_update_index_in_dim(factor, new[..., None], j, axis=-1)
        return factor, ok & (pivot > 0)

    factor, ok = lax.fori_loop(0, n, column,
                               (jnp.zeros_like(a), jnp.ones(a.shape[:-2], jnp.bool_)))
    return jnp.where(ok[..., None, None], factor, jnp.nan)


@_cholesky.defjvp
def _cholesky_jvp(primals, tangents):
    """The derivative of the Cholesky factor (as ``jnp.linalg.cholesky``'s): with ``S`` the
    symmetrised tangent, ``dL = L Phi(L^-1 S L^-T)``, ``Phi`` the lower triangle with the
    diagonal halved. Written out because the factor's loop has a traced trip count, which
    reverse mode cannot differentiate."""
    (cov,), (d_cov,) = primals, tangents
    factor = _gradients.primal(_cholesky(cov))
    sym = (d_cov + jnp.swapaxes(d_cov, -1, -2)) * 0.5
    inner = lax.linalg.triangular_solve(factor, sym, left_side=True, lower=True)
    inner = lax.linalg.triangular_solve(factor, inner, left_side=False, lower=True,
                                        transpose_a=True)
    n = cov.shape[-1]
    lower_half = jnp.tril(jnp.ones((n, n), cov.dtype)) - jnp.eye(n, dtype=cov.dtype) * 0.5
    return factor, jnp.matmul(factor, inner * lower_half, precision=lax.Precision.HIGHEST)


def _factor(cov, method: str):
    if method == "cholesky":
        return _cholesky(cov)
    # The project's own eigendecomposition (LAPACK's factors differ between machines).
    eigenvalues, vectors = _jacobi.symmetric_eigen(cov)
    if method == "eigh":
        return vectors * sqrt(jnp.maximum(eigenvalues, 0))[..., None, :]
    # A symmetric matrix's singular values are its eigenvalues' magnitudes, in descending
    # order, with the same vectors up to sign: U sqrt(s), as an SVD would give.
    order = jnp.argsort(-jnp.abs(eigenvalues), axis=-1, stable=True)
    singular = jnp.take_along_axis(jnp.abs(eigenvalues), order, axis=-1)
    vectors = jnp.take_along_axis(vectors, order[..., None, :], axis=-1)
    return vectors * sqrt(singular)[..., None, :]


def _product(factor: jax.Array, z: jax.Array) -> jax.Array:
    """``F z`` (``[..., d, d]`` times ``[..., d]``) in a fixed order of operations, written out
    rather than left to XLA's dot, whose order of summation changed between jax 0.10.2 and
    0.12.0.1 (and depends on the shapes).

    The terms ``F[:, j] z[j]``, each rounded on its own (never fused into an addition), are
    summed in ``L`` interleaved partial sums (``L = 4`` in float32, 1 in float64): partial sum
    ``l`` takes the terms ``j = l, l + L, ...`` in order; the partial sums are combined pairwise
    (``(s0 + s1) + (s2 + s3)``) and the last ``d mod L`` terms are added one by one (the order
    of jax 0.10.2's XLA for float32 products with ``d <= 5`` and float64 ones). The caller adds
    the mean.
    """
    d = z.shape[-1]
    lanes = _PRODUCT_LANES[z.dtype.itemsize]

    def rounded_term(j):
        return _fixed_math.unfused(factor[..., :, j] * z[..., j, None])

    groups = d // lanes
    total = None
    if groups:
        # Written out term by term (static slices, one elementwise fusion): in a loop over
        # traced indices, XLA 0.12 fuses the multiply-adds for some elements and not others.
        partial = [rounded_term(l) for l in range(lanes)]
        for g in range(1, groups):
            partial = [s + rounded_term(g * lanes + l) for l, s in enumerate(partial)]
        while len(partial) > 1:
            partial = [partial[i] + partial[i + 1] for i in range(0, len(partial), 2)]
        total = partial[0]
    for j in range(groups * lanes, d):
        total = rounded_term(j) if total is None else total + rounded_term(j)
    return total


@partial(jax.jit, static_argnames=("shape", "dtype", "method"))
def _multivariate_normal_impl(state, mean, cov, *, shape, dtype, method):
    dim = mean.shape[-1]
    z = standard_normal(state, shape + (dim,), dtype)
    factor = _factor(cov, method)
    return (mean + _product(factor, z)).astype(dtype)


@sampler
def multivariate_normal(state, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normals ``mean + F z``, like ``jax.random.multivariate_normal``.

    ``z`` are :func:`normal` draws (element ``i`` of the flattened ``shape + (d,)`` array reads
    stream word ``i``); ``F`` is a factor with ``F F^T = cov``: the Cholesky factor
    (``method="cholesky"``), ``V sqrt(max(w, 0))`` from ``eigh``, or ``U sqrt(s)`` from ``svd``.
    A covariance that is not positive definite gives NaN with Cholesky, like ``jax.random``.
    Differentiable in ``mean`` and ``cov`` with every ``method`` (``docs/gradients.md``).

    Stability of the values: every factor and the product ``F z`` are the project's own (a
    fixed order of correctly rounded operations: :func:`_cholesky`, the Jacobi method of
    :func:`jaxpmac._samplers._jacobi.symmetric_eigen` for ``eigh`` and ``svd``, and
    :func:`_product`), so the values depend neither on the installed jax nor on the machine's
    LAPACK or instruction set. ``svd`` takes the eigenvectors in order of decreasing
    ``|w|`` with ``sqrt(|w|)``, which is what an SVD of a symmetric matrix gives.

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
    _sampler_args.check_state(state, name="multivariate_normal")
    dtype = _sampler_args.output_dtype(dtype, _sampler_args.FLOAT, name="multivariate_normal")
    if method not in _FACTOR_METHODS:
        raise ValueError(_sampler_args.rejected("multivariate_normal method",
                                                str(_FACTOR_METHODS), repr(method)))
    cdtype = _unit.compute_dtype(dtype)
    mean_given, cov_given = mean, cov
    mean = _sampler_args.real_param(mean, name="multivariate_normal mean", dtype=cdtype)
    cov = _sampler_args.real_param(cov, name="multivariate_normal cov", dtype=cdtype)
    _sampler_args.check_domain("multivariate_normal", mean=mean_given, cov=cov_given)
    if mean.ndim < 1 or cov.ndim < 2 or cov.shape[-2:] != (mean.shape[-1],) * 2:
        raise ValueError(_sampler_args.rejected(
            "multivariate_normal", "mean of shape [..., d] and cov of shape [..., d, d]",
            f"shapes {mean.shape} and {cov.shape}"))
    shape = _sampler_args.output_shape(
        shape, [_sampler_args.batch_of(mean, 1), _sampler_args.batch_of(cov, 2)],
        name="multivariate_normal")
    return _multivariate_normal_impl(hashed(state), mean, cov, shape=shape, dtype=dtype,
                                     method=method)
