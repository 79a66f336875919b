"""Eigenvalues and eigenvectors of real symmetric matrices whose bits do not depend on the
instruction set, the machine or ``jit`` (issue 29).

``jnp.linalg.eigh`` and ``jnp.linalg.svd`` call LAPACK (through SciPy's OpenBLAS), whose kernels
are chosen by CPU model and whose last bits, and so the draws of
``multivariate_normal(method="eigh" | "svd")``, differ between machines. :func:`symmetric_eigen`
is the cyclic Jacobi method written from IEEE correctly rounded operations only (``+ - * /``,
``sqrt``, comparisons, selects), every product that feeds an addition rounded on its own
(:func:`_fixed_math.rounded`, so that no compiler fuses it into a fused multiply-add), and no
float reduction (whose order of additions follows the vector width): each rotation touches two
rows and two columns elementwise.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers._correctly_rounded import divide, sqrt

# Sweeps over all d (d - 1) / 2 pairs: a * ceil(log2 d) + b, (a, b) by itemsize. Cyclic Jacobi
# converges quadratically once the off-diagonal is below the gaps between eigenvalues, but
# slowly (about a decade a sweep) before that, for long, where many eigenvalues are tiny and
# close: an ill-conditioned or singular covariance. Measured on random symmetric matrices, PSD
# ones of every rank, spectra logarithmically spaced over 6 to 30 decades (of both signs, and
# with a null space), clustered, repeated and graded ones, 6 to 16 of each per d: the diagonal
# (the eigenvalues) stopped changing, to the bit, after at most (float32 / float64) 4 / 5 sweeps
# for d <= 4, 7 / 8 for d <= 8, 9 / 11 for d <= 16, 13 / 15 for d <= 32, 14 / 19 for d <= 64
# and 15 / 24 for d <= 128 (condition number 1e16); the off-diagonal fell below eps times the
# matrix's norm two or three sweeps earlier. These counts leave 2 to 5 sweeps to spare (1 in
# float64 for 64 < d <= 128): a sweep more costs time, never accuracy.
_SWEEP_RULE = {4: (2, 5), 8: (3, 4)}


def sweep_count(dtype, d: int) -> int:
    """The number of sweeps :func:`symmetric_eigen` takes for ``d x d`` matrices of ``dtype``:
    ``2 ceil(log2 d) + 5`` in float32 (17 for ``d = 64``), ``3 ceil(log2 d) + 4`` in float64
    (22 for ``d = 64``), 0 for ``d = 1``."""
    if d < 2:
        return 0
    slope, offset = _SWEEP_RULE[jnp.dtype(dtype).itemsize]
    return slope * (d - 1).bit_length() + offset


def _pair_tables(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(p, q)``, ``p < q``, in row-cyclic order: (0, 1), (0, 2), ..., (1, 2), ..."""
    p, q = np.triu_indices(d, k=1)
    return p.astype(np.int32), q.astype(np.int32)


def _rotation(a_pp, a_qq, a_pq):
    """``t = tan(phi)``, ``c = cos(phi)``, ``s = sin(phi)`` of the rotation that zeroes
    ``a_pq``, by the stable formulas (Rutishauser's; Numerical Recipes' ``jacobi``), and the
    identity where ``|a_pq|`` is below the smallest normal: XLA's CPU reads subnormals as 0, a
    GPU would not, and a rotation by a subnormal angle changes nothing that matters. A NaN
    ``a_pq`` rotates by NaN: NaN spreads through the whole matrix, as it should."""
    dtype = a_pp.dtype.type
    finfo = np.finfo(a_pp.dtype)
    skip = lax.abs(a_pq) < dtype(finfo.tiny)
    theta = divide(a_qq - a_pp, jnp.where(skip, dtype(1), dtype(2) * a_pq))
    # Beyond 2**(nmant + 1) theta**2 + 1 rounds to theta**2 and t to 1 / (2 theta), which is
    # taken directly so that theta**2 cannot overflow (theta itself may be inf: t = 0).
    huge = lax.abs(theta) > dtype(2.0 ** (finfo.nmant + 1))
    safe = jnp.where(huge, dtype(1), theta)
    root = sqrt(_fixed_math.rounded(safe * safe) + dtype(1))
    # The sign of theta, +1 at theta = +-0 (a 45 degree rotation either way; this one fixed).
    sign = jnp.where(safe < dtype(0), dtype(-1), dtype(1))
    t = jnp.where(huge, divide(dtype(0.5), theta), divide(sign, lax.abs(safe) + root))
    t = jnp.where(skip, dtype(0), t)
    # The square root rounded on its own: XLA's simplifier rewrites ``1 / sqrt(x)`` as its own
    # ``rsqrt``, an approximation whose code differs by instruction set.
    c = divide(dtype(1), _fixed_math.rounded(sqrt(_fixed_math.rounded(t * t) + dtype(1))))
    return t, c, t * c


def _rows(x, p, q):
    return (lax.dynamic_index_in_dim(x, p, axis=-2, keepdims=False),
            lax.dynamic_index_in_dim(x, q, axis=-2, keepdims=False))


def _rotate(row_p, row_q, c, s):
    """``c x_p - s x_q`` and ``s x_p + c x_q`` for rows ``x_p``, ``x_q`` (``[..., d]``), each
    product rounded on its own."""
    c, s = c[..., None], s[..., None]
    return (_fixed_math.rounded(c * row_p) - _fixed_math.rounded(s * row_q),
            _fixed_math.rounded(s * row_p) + _fixed_math.rounded(c * row_q))


def _set_rows(x, p, q, new_p, new_q):
    x = lax.dynamic_update_index_in_dim(x, new_p[..., None, :], p, axis=-2)
    return lax.dynamic_update_index_in_dim(x, new_q[..., None, :], q, axis=-2)


def _diagonalise(a: jax.Array, vectors: jax.Array, sweeps: int) -> tuple[jax.Array, jax.Array]:
    """``J^T a J`` after ``sweeps`` cyclic sweeps, and ``J^T vectors`` (from the identity: rows
    are the eigenvectors, unsorted). ``a`` must be exactly symmetric: a rotation's new rows are
    written as its new columns too, so that the matrix stays exactly symmetric."""
    d = a.shape[-1]
    p_table, q_table = _pair_tables(d)
    pairs = len(p_table)
    index = lax.broadcasted_iota(jnp.int32, (d,), 0)

    def rotate(k, a, vectors):
        """Rotation ``k``: its pair and the new rows of ``a`` and ``vectors``, not written."""
        p = jnp.asarray(p_table)[k % pairs]
        q = jnp.asarray(q_table)[k % pairs]
        row_p, row_q = _rows(a, p, q)
        a_pp = lax.dynamic_index_in_dim(row_p, p, axis=-1, keepdims=False)
        a_pq = lax.dynamic_index_in_dim(row_p, q, axis=-1, keepdims=False)
        a_qq = lax.dynamic_index_in_dim(row_q, q, axis=-1, keepdims=False)
        t, c, s = _rotation(a_pp, a_qq, a_pq)
        new_p, new_q = _rotate(row_p, row_q, c, s)
        # The 2 x 2 block by the formulas that make a_pq exactly 0 (a_pp - t a_pq is more
        # accurate than its rotation c**2 a_pp - 2 c s a_pq + s**2 a_qq).
        shift = _fixed_math.rounded(t * a_pq)[..., None]
        new_p = jnp.where(index == p, row_p - shift, jnp.where(index == q, 0, new_p))
        new_q = jnp.where(index == q, row_q + shift, jnp.where(index == p, 0, new_q))
        return (p, q, new_p, new_q) + _rotate(*_rows(vectors, p, q), c, s)

    def write(a, vectors, rotated):
        p, q, new_p, new_q, vector_p, vector_q = rotated
        a = _set_rows(a, p, q, new_p, new_q)
        a = lax.dynamic_update_index_in_dim(a, new_p[..., :, None], p, axis=-1)
        a = lax.dynamic_update_index_in_dim(a, new_q[..., :, None], q, axis=-1)
        return a, _set_rows(vectors, p, q, vector_p, vector_q)

    def step(k, carry):
        # Rotation k - 1's rows are written first, from the loop's carry, then rotation k's
        # computed and carried: written in the iteration that computes them, XLA fuses their
        # computation (reading the old matrices) into the writes and copies both matrices
        # whole on every rotation to keep the old ones readable.
        a, vectors = write(*carry)
        return a, vectors, rotate(k, a, vectors)

    if pairs and sweeps:
        carry = lax.fori_loop(1, sweeps * pairs, step, (a, vectors, rotate(0, a, vectors)))
        a, vectors = write(*carry)
    return a, vectors


def symmetric_eigen(a, *, sweeps: int | None = None) -> tuple[jax.Array, jax.Array]:
    """Eigenvalues and eigenvectors of real symmetric matrices, with the same bits on every
    instruction set and machine, with or without ``jit`` and ``vmap``.

    The cyclic Jacobi method: ``a`` is symmetrised (``(a + a^T) / 2``, as ``jnp.linalg.eigh``
    does), then each sweep rotates every pair ``(p, q)``, ``p < q``, in row order
    ((0, 1), (0, 2), ..., (1, 2), ...) to zero ``a[p, q]``, with Rutishauser's stable
    formulas (``theta = (a_qq - a_pp) / (2 a_pq)``,
    ``t = sign(theta) / (|theta| + sqrt(theta**2 + 1))``, ``c = 1 / sqrt(t**2 + 1)``,
    ``s = t c``), accumulating the rotations; a pair whose ``|a[p, q]|`` is below the smallest
    normal number is left alone. A fixed number of sweeps, by dtype and ``d``
    (:func:`sweep_count`: 13 in float32 and 16 in float64 for ``d = 16``, 17 and 22 for
    ``d = 64``), enough for ill-conditioned and singular matrices with sweeps to spare, so
    that no test of convergence makes the work depend on the data. Each rotation is
    elementwise on two rows and two columns, from correctly rounded operations only, every
    product that feeds an addition rounded on its own (:func:`_fixed_math.rounded`). The
    eigenvalues are accurate to a small multiple of ``d eps ||a||`` (absolute). A NaN in
    ``a`` makes every eigenvalue and eigenvector NaN.

    Uniqueness: eigenvalues come in ascending order (ties by their place on the diagonal at the
    end), the eigenvectors as the matching columns, each with the sign that makes its
    largest-magnitude component positive (the first such component, on ties). Where an
    eigenvalue is repeated its eigenvectors are one basis of its eigenspace, fixed by the
    algorithm, not by the matrix alone.

    Args:
        a: ``[..., d, d]`` float32 or float64 matrices (only their symmetric part counts).
        sweeps: the number of sweeps; default :func:`sweep_count` of the dtype and ``d``.

    Returns:
        ``(w, v)``: eigenvalues ``[..., d]``, ascending, and eigenvectors ``[..., d, d]``, column
        ``v[..., :, i]`` for ``w[..., i]``, so that ``a ~ v diag(w) v^T``.

    Raises:
        TypeError: ``a`` is not float32 or float64.
        ValueError: ``a`` is not a batch of square matrices, or ``sweeps`` is negative.

    Example:
        >>> import jax.numpy as jnp, numpy as np
        >>> w, v = symmetric_eigen(jnp.array([[2.0, 1.0], [1.0, 2.0]]))
        >>> w.tolist()
        [1.0, 3.0]
        >>> print(np.asarray(v).round(4))
        [[ 0.7071  0.7071]
         [-0.7071  0.7071]]
    """
    a = jnp.asarray(a)
    if a.dtype not in (jnp.float32, jnp.float64):
        raise TypeError(f"symmetric_eigen takes float32 or float64, not {a.dtype}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"symmetric_eigen takes [..., d, d] matrices, not shape {a.shape}")
    d = a.shape[-1]
    sweeps = sweep_count(a.dtype, d) if sweeps is None else int(sweeps)
    if sweeps < 0:
        raise ValueError(f"symmetric_eigen takes sweeps >= 0, not {sweeps}")
    # The sum is commutative, so the result is exactly symmetric; the halving is exact (but
    # in the subnormal range, which XLA's CPU flushes anyway).
    return _eigen(a, sweeps)


@partial(jax.custom_jvp, nondiff_argnums=(1,))
def _eigen(a: jax.Array, sweeps: int) -> tuple[jax.Array, jax.Array]:
    d = a.shape[-1]
    a = (a + jnp.swapaxes(a, -1, -2)) * a.dtype.type(0.5)
    a, rows = _diagonalise(a, jnp.broadcast_to(jnp.eye(d, dtype=a.dtype), a.shape), sweeps)
    w = jnp.diagonal(a, axis1=-2, axis2=-1)
    # Comparisons only (a sort and a gather): no float arithmetic, the same order everywhere.
    order = jnp.argsort(w, axis=-1, stable=True)
    w = jnp.take_along_axis(w, order, axis=-1)
    rows = jnp.take_along_axis(rows, order[..., None], axis=-2)
    largest = jnp.argmax(lax.abs(rows), axis=-1, keepdims=True)    # the first, on ties
    negative = jnp.take_along_axis(rows, largest, axis=-1) < 0
    rows = jnp.where(negative, -rows, rows)
    return w, jnp.swapaxes(rows, -1, -2)


@_eigen.defjvp
def _eigen_jvp(sweeps, primals, tangents):
    """The derivative of an eigendecomposition (as ``jnp.linalg.eigh``'s): ``dw = diag(V^T dA
    V)``, ``dV = V (F * V^T dA V)`` with ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0
    on it. Differentiating the rotations themselves would pass through their guards (NaN)."""
    (a,), (da,) = primals, tangents
    w, v = _eigen(a, sweeps)
    da = (da + jnp.swapaxes(da, -1, -2)) * da.dtype.type(0.5)
    highest = lax.Precision.HIGHEST
    projected = jnp.matmul(jnp.swapaxes(v, -1, -2), jnp.matmul(da, v, precision=highest),
                           precision=highest)
    eye = jnp.eye(a.shape[-1], dtype=a.dtype)
    f = divide(1, eye + w[..., None, :] - w[..., :, None]) - eye
    dv = jnp.matmul(v, f * projected, precision=highest)
    return (w, v), (jnp.diagonal(projected, axis1=-2, axis2=-1), dv)
