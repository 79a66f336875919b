"""Elementary functions whose values this project fixes, rather than the installed ``jax``.

XLA's CPU implementations of a few functions changed between jax 0.10.2 and jax 0.12.0.1, and
with them the values of samplers built on them (issue 21):

* float32 ``exp``: 1 ulp on about 3e-5 of arguments (none below ``|x| = 2.7``);
* float32 ``erfc``: through its ``exp``, for ``x`` in about ``[2.7, 9.1]``;
* float32 ``lgamma``: most arguments, by up to 0.03 absolute near ``x = 1e5``;
* float64 ``log1p``: every argument in ``(1 - sqrt 2, sqrt(1/2) - 1)``, by up to 128 ulp.

Each function here is built from operations whose values did not move (``+ - * /``, ``floor``,
comparisons, selects and bit casts, and float32/float64 ``log``, float32 ``log1p``, float64
``exp``, ``sin``) and follows the algorithm jax 0.10.2's XLA used on CPU (read from its
optimised HLO and LLVM IR). XLA fuses ``a * b + c`` into one fused multiply-add in some fusions
and not others, so the products of the polynomials (:func:`horner`) and of the float32 ``exp``
are rounded on their own (:func:`rounded`): their values do not depend on the program around
them, and differ from jax 0.10.2's own functions in the last bit where its compiler fused.

Kept on purpose: 0.10.2's float64 ``log1p`` used its rational approximation for all
``|x| < sqrt 2 - 1``, including ``(1 - sqrt 2, sqrt(1/2) - 1)`` where it is accurate only to
about 128 ulp (3e-14 relative; 0.12 switched to ``log(1 + x)`` there, within 2 ulp). Keeping it
keeps the float64 values of every sampler that takes ``log(1 - u)`` unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def horner(coefficients, x: jax.Array) -> jax.Array:
    """``c[0] x**(n-1) + ... + c[n-1]`` by Horner's rule, ``y = y * x + c`` from ``y = c[0]``,
    each product rounded before its addition (:func:`rounded`): XLA fuses a multiply-add into
    one fused multiply-add in some fusions and not others (it depended on the output's shape
    under jax 0.12), so only written-out roundings give the same values in every program, with
    and without ``jit``, on every jax. ``x`` must be finite where the result matters."""
    dtype = x.dtype.type
    y = jnp.full_like(x, dtype(coefficients[0]))
    for c in coefficients[1:]:
        y = rounded(y * x, x) + dtype(c)
    return y


def rounded(product: jax.Array, finite: jax.Array) -> jax.Array:
    """``product`` (an expression ``a * b``) rounded to its dtype on its own, so that XLA cannot
    fuse it into a following addition as one fused multiply-add, whichever operand of that
    addition its code generator picks: adds ``-0``, made from ``finite`` (an array that is finite
    wherever the result matters) so that no compiler can see it is zero. ``a * b + (-0)`` is
    ``a * b`` rounded once, fused or not."""
    negative_zero = -(lax.abs(finite) * finite.dtype.type(0))
    return product + negative_zero


def _f32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(np.float32)[()]


# Cephes-style expf, as XLA 0.10.2 emitted it for float32 on CPU: x = n ln 2 + r with
# n = floor(x log2(e) + 1/2) clamped to [-127, 127] and ln 2 split in two (C1 + C2), then
# 1 + r + r**2 P(r) times 2**n built from the exponent bits (so results below 2**-127 are 0).
_EXP_LOW, _EXP_HIGH = np.float32(-87.8), np.float32(88.8)
_EXP_LOG2E = _f32(0x3FB8AA3B)
_EXP_C1, _EXP_C2 = _f32(0x3F318000), _f32(0xB95E8083)          # 0.693359375, -2.12194440e-4
_EXP_P = tuple(_f32(b) for b in (0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA))


def _exp_f32(x: jax.Array) -> jax.Array:
    f32 = np.float32
    x = jnp.where(x < _EXP_LOW, _EXP_LOW, x)        # NaN passes through both clamps
    x = jnp.where(x > _EXP_HIGH, _EXP_HIGH, x)
    # x is finite (or NaN) now; if it is a product (exp(-x**2) in erfc), keep XLA from fusing
    # that product into ``x - n * C1`` below, as it does in scalar code but not in vector code.
    x = rounded(x, x)
    n = jnp.floor(rounded(x * _EXP_LOG2E, x) + f32(0.5))
    n = jnp.where(n < f32(-127), f32(-127), n)
    n = jnp.where(n > f32(127), f32(127), n)
    r = x - n * _EXP_C1
    r = r - rounded(n * _EXP_C2, n)
    y = horner(_EXP_P + (f32(0.5),), r)
    y = f32(1) + (r + rounded(y * (r * r), r))
    scale_bits = (n.astype(jnp.int32) + np.int32(127)) << np.int32(23)
    return y * lax.bitcast_convert_type(scale_bits, jnp.float32)


def exp(x: jax.Array) -> jax.Array:
    """``exp(x)``: float32 by the algorithm of jax 0.10.2's XLA (above), float64 by XLA's
    ``exp`` (whose values did not move)."""
    if x.dtype == jnp.float32:
        return _exp_f32(x)
    return lax.exp(x)


# Cephes log1p's rational approximation (Moshier, unity.c), as XLA 0.10.2 used it for float64:
# log1p(x) = x - x**2/2 + x**3 P(x)/Q(x) for |x| < sqrt(2) - 1, log(1 + x) otherwise.
_LOG1P_P = (4.5270000862445199635e-5, 4.9854102823193375972e-1, 6.5787325942061044846e0,
            2.9911919328553073277e1, 6.0949667980987787057e1, 5.7112963590585538103e1,
            2.0039553499201281259e1)
_LOG1P_Q = (1.0, 1.5062909083469192198e1, 8.3047565967967209469e1, 2.2176239823732856465e2,
            3.0909872225312059774e2, 2.1642788614495947685e2, 6.0118660497603843919e1)
_LOG1P_SMALL = 0.41421356237309504880    # sqrt(2) - 1, rounded as XLA rounded it


def _log1p_f64(x: jax.Array) -> jax.Array:
    f64 = np.float64
    large = lax.log(x + f64(1))
    x2 = x * x
    ratio = horner(_LOG1P_P, x) / horner(_LOG1P_Q, x)
    # -x**2/2 is exact; XLA 0.10.2 rounded x**3 P/Q before adding it.
    small = x + (x2 * f64(-0.5) + rounded((x * x2) * ratio, x))
    return jnp.where(lax.abs(x) < f64(_LOG1P_SMALL), small, large)


def log1p(x: jax.Array) -> jax.Array:
    """``log(1 + x)``: float64 by the algorithm of jax 0.10.2's XLA (above), float32 by XLA's
    ``log1p`` (whose values did not move)."""
    if x.dtype == jnp.float64:
        return _log1p_f64(x)
    return lax.log1p(x)


# Lanczos's approximation (g = 7, nine coefficients), as XLA 0.10.2 expanded lgamma, with the
# reflection formula below 1/2.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def lgamma(x: jax.Array) -> jax.Array:
    """``log |Gamma(x)|`` by the algorithm of jax 0.10.2's XLA (float32 and float64): with
    ``z = x - 1`` (``-x`` below 1/2), ``t = z + g + 1/2``,
    ``(z + 1/2 - t / log t) log t + log(2 pi)/2 + log(c0 + sum c_i / (z + i))``, where
    ``log t = log1p(z / (g + 1/2)) + log(g + 1/2)``; below 1/2 by reflection. ``+-inf`` gives
    ``inf``. The same values under jax 0.10.2 and 0.12.0.1 for ``x >= 1/2`` (poisson only asks
    for ``k + 1 >= 1``); below 1/2 a few arguments (tiny ``x``) differ by some ulp."""
    dtype = x.dtype.type
    half, one = dtype(0.5), dtype(1)
    abs_x = lax.abs(x)
    reflect = x < half
    # Reflection: log(pi) - log|sin(pi x)| - lgamma(1 - x), with the fraction of |x| folded
    # into [0, 1/2] first.
    frac = abs_x - jnp.floor(abs_x)
    frac = jnp.where(half < frac, one - frac, frac)
    log_sin = lax.log(lax.sin(frac * dtype(np.pi)))
    # The select keeps z + i from being simplified to x + (i - 1).
    z = jnp.where(reflect, -x, x + dtype(-1))
    t = z + dtype(_LANCZOS_G + 0.5)
    # Products rounded on their own before the additions that follow them (see :func:`rounded`).
    log_t = (log1p(rounded(z * dtype(1 / (_LANCZOS_G + 0.5)), z))
             + dtype(np.log(_LANCZOS_G + 0.5)))
    head = rounded((z + half - t / log_t) * log_t, log_t) + dtype(0.5 * np.log(2 * np.pi))
    series = dtype(_LANCZOS[1]) / (z + one) + dtype(_LANCZOS[0])
    for i, c in enumerate(_LANCZOS[2:], start=2):
        series = series + dtype(c) / (z + dtype(i))
    result = head + lax.log(series)
    reflected = jnp.where(jnp.isfinite(log_sin),
                          (dtype(np.log(np.pi)) - log_sin) - result, -log_sin)
    result = jnp.where(reflect, reflected, result)
    return jnp.where(abs_x == dtype(np.inf), dtype(np.inf), result)


# Cephes erfcf, as XLA 0.10.2 expanded float32 erfc: 1 - x P(x**2) for |x| < 1, otherwise
# exp(-x**2) / |x| times a polynomial in 1/x**2 (R below |x| = 2, S above), 0 past exp's range,
# reflected to 2 - erfc(|x|) for x < 0.
_ERFC_P = (7.85386146e-05, -0.000801019371, 0.00518832775, -0.0268538129, 0.112835854,
           -0.37612626, 1.12837911)
_ERFC_R = (0.0232682, -0.138703942, 0.368742466, -0.582473278, 0.621000469, -0.494451523,
           0.340488, -0.274112701, 0.563825965)
_ERFC_S = (-10.477664, 12.9772, -7.49551868, 2.92101908, -1.01526523, 0.42184633,
           -0.282076746, 0.564189494)


def _erfc_f32(x: jax.Array) -> jax.Array:
    f32 = np.float32
    abs_x = lax.abs(x)
    x2 = x * x
    near = f32(1) - x * horner(_ERFC_P, x2)
    minus_x2 = -x2
    scaled = _exp_f32(minus_x2) * (f32(1) / abs_x)
    w = f32(1) / x2
    far = scaled * jnp.where(abs_x < f32(2), horner(_ERFC_R, w), horner(_ERFC_S, w))
    far = jnp.where(minus_x2 < f32(-88.7228394), f32(0), far)
    far = jnp.where(x < f32(0), f32(2) - far, far)
    return jnp.where(abs_x < f32(1), near, far)


def erfc(x: jax.Array) -> jax.Array:
    """``1 - erf(x)``: float32 by the algorithm of jax 0.10.2's XLA (above), float64 by XLA's
    ``erfc`` (whose values did not move)."""
    if x.dtype == jnp.float32:
        return _erfc_f32(x)
    return lax.erfc(x)


def logaddexp(a: jax.Array, b: jax.Array) -> jax.Array:
    """``log(exp(a) + exp(b))`` as jax 0.10.2's ``jnp.logaddexp`` computed it for real floats,
    with this module's ``exp`` and ``log1p``."""
    amax = jnp.maximum(a, b)
    delta = a - b
    # Adding -0 (rounded) keeps XLA from rewriting log1p's x * x of exp(-|delta|) as
    # exp(-2 |delta|) (jax 0.10.2 called log1p as one operation, which hid its insides from that
    # rewrite), without a barrier, which would stop a draw from fusing into its consumer.
    small = exp(-lax.abs(delta))
    small = rounded(small, small)
    return jnp.where(jnp.isnan(delta), a + b, amax + log1p(small))


def softmax(x: jax.Array, axis: int = -1) -> jax.Array:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``, as ``jax.nn.softmax`` computes it,
    with this module's ``exp``."""
    unnormalized = exp(x - jnp.max(x, axis, keepdims=True))
    return unnormalized / ordered_sum(unnormalized, axis)


def ordered_sum(x: jax.Array, axis: int = -1) -> jax.Array:
    """The sum along ``axis`` (kept, of size 1), added first to last: XLA's reductions pick
    their own order of additions, which changes with the jax version and the program."""
    parts = jnp.split(x, x.shape[axis], axis)
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


# Cephes logf (Moshier): log(x) = log(m) + e log(2) for x = m 2**e, m in [sqrt(1/2), sqrt(2)),
# log(1 + z) = z - z**2/2 + z**3 P(z) with z = m - 1, log(2) split in two (C1 + C2).
_LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
          3.3333331174e-1)
_LOG_C1, _LOG_C2 = np.float32(0.693359375), np.float32(-2.12194440e-4)


def log(x: jax.Array) -> jax.Array:
    """``log(x)`` for positive normal ``x``: float32 by Cephes' ``logf`` (above) with every
    product rounded on its own (within about 1 ulp), float64 by XLA's ``log``. XLA's float32
    ``log`` and ``log1p`` gave other values under jax 0.12 than under 0.10.2 in some programs
    (``ball``'s and ``f``'s, by an ulp here and there).

    Example:
        >>> import jax.numpy as jnp
        >>> float(log(jnp.float32(1.0)))
        0.0
    """
    if x.dtype != jnp.float32:
        return lax.log(x)
    f32 = np.float32
    bits = lax.bitcast_convert_type(x, jnp.int32)
    exponent = ((bits >> 23) - 126).astype(jnp.float32)
    m = lax.bitcast_convert_type((bits & 0x007FFFFF) | 0x3F000000, jnp.float32)   # [1/2, 1)
    low = m < f32(np.sqrt(0.5))
    exponent = jnp.where(low, exponent - f32(1), exponent)
    z = jnp.where(low, m + m, m) - f32(1)                   # exact: m - 1 in [-0.293, 0.414)
    z2 = rounded(z * z, z)
    y = rounded(rounded(z * z2, z) * horner(_LOG_P, z), z)
    y = y + rounded(exponent * _LOG_C2, z)
    y = y + rounded(f32(-0.5) * z2, z)
    return (z + y) + rounded(exponent * _LOG_C1, z)
