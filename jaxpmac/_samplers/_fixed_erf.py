"""``erf`` and ``erfc`` whose bits do not depend on the instruction set or the device (issue 29).

XLA's own ``erf`` and ``erfc`` are polynomials whose multiply-adds LLVM contracts into fused
multiply-adds where the target has them (x86 with FMA, GPUs) and not elsewhere, so their last
bits follow ``--xla_cpu_max_isa`` (XLA's float64 ``erfc`` differed on 29% of arguments in
``[-6, 6]`` between SSE4.2 and AVX2). These are built from IEEE correctly rounded operations
only (``+ - * /``, ``floor``, comparisons, selects) and :func:`_fixed_math.exp`, with every
product that feeds an addition rounded on its own (:func:`_fixed_math.rounded`,
:func:`_fixed_math.horner`), which fixes their values whether the compiler fuses or not:

* float32: Cephes ``erff`` (``ndtrf.c``): ``x T(x**2)`` for ``|x| <= 1``, otherwise
  ``1 - erfc(|x|)`` with the sign of ``x``; ``erfc`` is :func:`_fixed_math.erfc_f32` (Cephes
  ``erfcf``). Within 2.6 ulp (``erf``); ``erfc`` within 3 ulp below ``|x| = 1/2``, 10 below 1,
  then up to about ``x**2`` ulp (``erfcf`` takes ``exp`` of a rounded ``x**2``).
* float64: Cephes ``erf`` and ``erfc`` (``ndtr.c``): ``x T(x**2) / U(x**2)`` for ``|x| <= 1``
  (``erfc = 1 -`` that below 1); otherwise ``erfc(|x|) = exp(-x**2) P(|x|) / Q(|x|)`` below 8
  and ``exp(-x**2) R(|x|) / S(|x|)`` above (``erf = 1 -`` that, with the sign of ``x``), with
  ``exp(-x**2)`` computed as Cephes' ``expx2`` does (``x**2`` split into an exact part and a
  small one, two exponentials): one rounding of ``x**2`` alone would cost up to 700 ulp near
  ``x = 26`` (scipy's ``erfc``, without it, is 500 ulp off there). Measured: ``erf`` within
  2.8 ulp; ``erfc`` within 3.1 ulp below ``|x| = 1/2``, 11 below 1 (``1 - erf(x)`` loses what
  ``erf`` has lost of 0.84 relative to 0.16), 10 above.

Subnormal arguments count as zeros and subnormal results are 0, explicitly, as XLA's CPU makes
them (it flushes subnormal numbers to zero), so that a GPU, which would not, gives the same
values.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._samplers import _fixed_math

# Cephes ndtrf.c (Moshier), erff's T: erf(x) = x T(x**2) for 0 <= x <= 1, float32.
_ERFF_T = (7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3,
           -2.685381193529856e-2, 1.128358514861418e-1, -3.761262582423300e-1,
           1.128379165726710e0)

# Cephes ndtr.c (Moshier), erf's T and U: erf(x) = x T(x**2) / U(x**2) for 0 <= x <= 1 (U's
# leading coefficient, 1, is written out here; Cephes leaves it to p1evl).
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
          7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
          2.26290000613890934246e4, 4.92673942608635921086e4)
# Cephes ndtr.c, erfc's P and Q: erfc(x) = exp(-x**2) P(x) / Q(x) for 1 <= x < 8.
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)
# Cephes ndtr.c, erfc's R and S: erfc(x) = exp(-x**2) R(x) / S(x) for x >= 8.
_ERFC_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
           6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
           1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
_ERFC_SPLIT = 8.0                   # Cephes ndtr.c: P/Q below, R/S from here on

# Cephes expx2.c: x = m + f with m a multiple of 1/128, so that m**2 is exact (m < 2**7 needs
# at most 2 * (7 + 7) = 28 significant bits) and f small: x**2 = m**2 + (2 m f + f**2).
_EXPX2_SCALE = 128.0
# erfc(x) below the smallest normal number (x > 26.543) is returned as 0, as XLA's CPU flushes
# it (with its flush-to-zero mode) and a GPU would not. Past this |x| it is not even computed:
# below it exp(-m**2) and exp(-x**2) stay normal (m**2 <= (26.6 + 1/256)**2 < 707.8 <
# -log(2**-1022) = 708.4), whatever exp does with subnormal results. (Cephes returns 0 from
# x**2 > log(DBL_MAX) = 709.78 on, and subnormal numbers below.)
_ERFC_ZERO_X = 26.6


def _check_dtype(x: jax.Array) -> None:
    """Refuses the dtypes with no algorithm here (float16 and bfloat16 among them)."""
    if x.dtype not in (jnp.float32, jnp.float64):
        raise TypeError(f"erf and erfc take float32 or float64, not {x.dtype}")


def _flush_subnormal(x: jax.Array) -> jax.Array:
    """``x`` with subnormal values made zeros of their sign, on every platform: XLA's CPU reads
    them as zeros (denormals-are-zero), a GPU would not (``erf`` of one is ``1.128 x``, which can
    be normal)."""
    tiny = x.dtype.type(np.finfo(x.dtype).tiny)
    return jnp.where(lax.abs(x) < tiny, x * x.dtype.type(0), x)


def _erf_near_f32(x: jax.Array) -> jax.Array:
    """``erf(x)`` for ``|x| <= 1`` (Cephes ``erff``): ``x T(x**2)``. ``x * x`` only feeds
    multiplications (horner rounds each of its products)."""
    return x * _fixed_math.horner(_ERFF_T, x * x)


def _erf_f32(x: jax.Array) -> jax.Array:
    f32 = np.float32
    x = _flush_subnormal(x)
    abs_x = lax.abs(x)
    far = f32(1) - _fixed_math.erfc_f32(abs_x)
    far = jnp.where(x < f32(0), -far, far)
    return jnp.where(abs_x <= f32(1), _erf_near_f32(x), far)


def _erf_near_f64(x: jax.Array) -> jax.Array:
    """``erf(x)`` for ``|x| <= 1`` (Cephes ``ndtr.c``): ``(x T(z)) / U(z)``, ``z = x**2``."""
    z = x * x
    return (x * _fixed_math.horner(_ERF_T, z)) / _fixed_math.horner(_ERF_U, z)


def _erfc_far_f64(abs_x: jax.Array) -> jax.Array:
    """``erfc(|x|)`` for ``|x| >= 1`` (Cephes ``ndtr.c``), 0 where it is below the smallest
    normal number (``+inf`` included), NaN for NaN."""
    f64 = np.float64
    inside = abs_x < f64(_ERFC_ZERO_X)
    # A finite stand-in outside (selected away at the end), so that no lane computes with inf:
    # inf - inf in f = a - m below would be NaN, as would an inf * 0 inside rounded().
    a = jnp.where(inside, abs_x, f64(1))
    # Cephes expx2(a, -1): exp(-a**2) = exp(-m**2) exp(-(2 m f + f**2)). a * 128 is exact, so
    # no rounding is lost if the compiler fuses it with the + 1/2.
    m = jnp.floor(a * f64(_EXPX2_SCALE) + f64(0.5)) * f64(1 / _EXPX2_SCALE)
    f = a - m                                       # exact: |f| <= 1/256, m and a close
    u = m * m                                       # exact (see _EXPX2_SCALE)
    u1 = _fixed_math.unfused((m + m) * f) + _fixed_math.unfused(f * f)
    z = _fixed_math.exp(-u) * _fixed_math.exp(-u1)
    low = a < f64(_ERFC_SPLIT)
    p = jnp.where(low, _fixed_math.horner(_ERFC_P, a), _fixed_math.horner(_ERFC_R, a))
    q = jnp.where(low, _fixed_math.horner(_ERFC_Q, a), _fixed_math.horner(_ERFC_S, a))
    y = (z * p) / q
    y = jnp.where(y < f64(np.finfo(np.float64).tiny), f64(0), y)       # see _ERFC_ZERO_X
    beyond = jnp.where(jnp.isnan(abs_x), abs_x, f64(0))
    return jnp.where(inside, y, beyond)


def _erf_f64(x: jax.Array) -> jax.Array:
    f64 = np.float64
    x = _flush_subnormal(x)
    abs_x = lax.abs(x)
    far = f64(1) - _erfc_far_f64(abs_x)
    far = jnp.where(x < f64(0), -far, far)
    return jnp.where(abs_x <= f64(1), _erf_near_f64(x), far)


def _erfc_f64(x: jax.Array) -> jax.Array:
    f64 = np.float64
    x = _flush_subnormal(x)
    abs_x = lax.abs(x)
    far = _erfc_far_f64(abs_x)
    # Cephes' reflection erfc(-x) = 2 - erfc(x).
    far = jnp.where(x < f64(0), f64(2) - far, far)
    return jnp.where(abs_x < f64(1), f64(1) - _erf_near_f64(x), far)


def erf(x: jax.Array) -> jax.Array:
    """The error function ``2/sqrt(pi) * integral of exp(-t**2) from 0 to x``, with the same
    bits on every instruction set and device: float32 by Cephes ``erff``, float64 by Cephes
    ``erf`` (``ndtr.c``), every product that feeds an addition rounded on its own (see the
    module's docstring). ``erf(+-inf) = +-1``, NaN gives NaN.

    Args:
        x: a float32 or float64 array (or anything ``jnp.asarray`` makes one of).

    Returns:
        ``erf(x)``, of ``x``'s shape and dtype.

    Raises:
        TypeError: for any other dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> erf(jnp.array([0.0, 0.5, -2.0], jnp.float32)).tolist()
        [0.0, 0.5204998254776001, -0.9953222870826721]
    """
    x = jnp.asarray(x)
    _check_dtype(x)
    result = _erf_f32(x) if x.dtype == jnp.float32 else _erf_f64(x)
    # NaN passes with its bits: NaNs made by arithmetic have a sign that varies by program.
    return jnp.where(jnp.isnan(x), x, result)


def erfc(x: jax.Array) -> jax.Array:
    """The complementary error function ``1 - erf(x)``, accurate where it is small, with the
    same bits on every instruction set and device: float32 by :func:`_fixed_math.erfc_f32` (Cephes
    ``erfcf``), float64 by Cephes ``erfc`` (``ndtr.c``, with ``expx2``), every product that feeds
    an addition rounded on its own. Values below the smallest normal number are 0 (float64:
    ``x > 26.5433``; float32: ``x > 9.1945``), ``erfc(-inf) = 2``, NaN gives NaN.

    Args:
        x: a float32 or float64 array (or anything ``jnp.asarray`` makes one of).

    Returns:
        ``erfc(x)``, of ``x``'s shape and dtype.

    Raises:
        TypeError: for any other dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> erfc(jnp.array([0.0, 0.5, -2.0], jnp.float32)).tolist()
        [1.0, 0.4795001745223999, 1.9953222274780273]
    """
    x = jnp.asarray(x)
    _check_dtype(x)
    if x.dtype == jnp.float32:
        result = _fixed_math.erfc_f32(x)
        # Its last product, exp(-x**2) / x times a polynomial, is subnormal for x in about
        # (9.1945, 9.42): 0 on XLA's CPU (flush to zero), not on a GPU.
        result = jnp.where(result < np.float32(np.finfo(np.float32).tiny), np.float32(0), result)
    else:
        result = _erfc_f64(x)
    # NaN passes with its bits: NaNs made by arithmetic have a sign that varies by program.
    return jnp.where(jnp.isnan(x), x, result)
