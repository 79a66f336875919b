"""Correctly rounded float64 ``exp`` and ``log`` (and ``expm1``, ``pow(x, k)``) for the Hail
ports of jdistlib's samplers, in double-double arithmetic.

Hail runs jdistlib on HotSpot, whose ``Math.exp``, ``Math.log`` and ``Math.pow`` are intrinsics
(Intel's LIBM) that are correctly rounded in nearly all cases: fdlibm's algorithms (Java's
``StrictMath``, :mod:`jaxpmac._samplers._fixed_math`) differ from them in the last bit on about
3% (``log``) and 10% (``exp``) of arguments, which changes Hail's values where a value passes
through them (``rand_gamma`` below shape 1, ``rand_beta``; tests/reference_jdistlib.py,
``MATH``). So these are computed to about 100 bits in double-double arithmetic (a value as an
unevaluated sum ``hi + lo`` of two float64s; Dekker 1971, "A floating-point technique for
extending the available precision", Numer. Math. 18) and rounded once: the nearest float64,
except where the exact value lies within about ``2**-100`` (relative) of a midpoint between two
floats, which no argument of these samplers has been seen to reach.

Every product that meets an addition passes :func:`~jaxpmac._samplers._fixed_math.rounded`
(no compiler fuses it into a multiply-add) and every sum whose rounding error is taken back
(``(a + b) - a``) too (no simplifier folds it away); divisions go through :func:`divide_exact`
(XLA's CPU compiler turns a division by a constant or a broadcast into a multiplication by the
reciprocal, rounding twice). So the values are the same with and without ``jit``, under
``vmap``, on every instruction set. float64 only (``jax_enable_x64``).
"""

from __future__ import annotations

from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._samplers._fixed_math import rounded

F64 = np.float64

#: Veltkamp's splitting constant 2**27 + 1: splits a float64 into two 26-bit halves.
SPLITTER = F64(134217729.0)


def _dd_constant(value: Fraction) -> tuple[np.float64, np.float64]:
    """The double-double nearest ``value``: ``hi`` its nearest float64, ``lo`` the rest's."""
    hi = F64(float(value))
    lo = F64(float(value - Fraction(float(hi))))
    return hi, lo


# ln 2 to 160 bits (its binary expansion, from the series 2 atanh(1/3)), in three parts: the
# first with 32 significant bits (fdlibm's ln2_hi: k ln2_hi is exact for |k| < 2**21).
def _ln2_fraction(bits: int = 160) -> Fraction:
    third = Fraction(1, 3)
    total, term, n = Fraction(0), third, 0
    while term > Fraction(1, 2 ** (bits + 8)):
        total += term / (2 * n + 1)
        term *= Fraction(1, 9)
        n += 1
    return 2 * total


_LN2 = _ln2_fraction()
LN2_HI = F64(float(Fraction(int(_LN2 * 2 ** 32), 2 ** 32)))      # 32 significant bits
LN2_MID, LN2_LO = _dd_constant(_LN2 - Fraction(float(LN2_HI)))
INV_LN2 = F64(float(1 / _LN2))

#: exp(r) = sum r**n / n!: terms 0..EXP_DD_TERMS-1 in double-double, the rest (to EXP_TERMS)
#: in float64 (|r| <= ln2 / 2: r**11 / 11! < 2**-42, so its float64 rounding is below 2**-94).
EXP_TERMS = 25
EXP_DD_TERMS = 11
_FACTORIALS = [1]
for _n in range(1, EXP_TERMS):
    _FACTORIALS.append(_FACTORIALS[-1] * _n)
EXP_COEFFICIENTS = tuple(_dd_constant(Fraction(1, f)) for f in _FACTORIALS)

#: log(m) = 2 atanh(s) = 2 s sum z**n / (2n + 1), z = s**2 <= 0.0295: terms 0..5 in
#: double-double, 6..LOG_TERMS-1 in float64 (z**6 / 13 < 2**-33: rounding below 2**-85).
LOG_TERMS = 24
LOG_DD_TERMS = 6
LOG_COEFFICIENTS = tuple(_dd_constant(Fraction(1, 2 * n + 1)) for n in range(LOG_TERMS))

#: exp's argument clamp (NaN passes): overflow above 709.78, 0 below -745.13 either way.
EXP_CLAMP = 800.0
F64_TINY = F64(np.finfo(np.float64).tiny)
#: expm1 below this magnitude: its Taylor series (x**5 / 120 is below 2**-80 of x there).
EXPM1_SMALL = 2.0 ** -20


# -- exact operations ----------------------------------------------------------------------------

def divide_exact(a, b) -> jax.Array:
    """``a / b`` correctly rounded under every transformation: each operand is made to depend
    on the other (a NaN in one becomes the other, which changes no quotient), so that XLA never
    sees a division by a constant or a broadcast, which it would replace by a multiplication by
    the reciprocal."""
    a, b = jnp.asarray(a, F64), jnp.asarray(b, F64)
    a2 = jnp.where(jnp.isnan(b), b, a)
    b2 = jnp.where(jnp.isnan(a), a, b)
    return lax.div(a2, b2)


def two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth)."""
    # Operands rounded on their own: a caller's product must not fuse into these sums.
    a, b = rounded(a), rounded(b)
    s = rounded(a + b)
    bb = rounded(s - a)
    return s, (a - rounded(s - bb)) + (b - bb)


def quick_two_sum(a, b):
    """:func:`two_sum` for ``|a| >= |b|`` (Dekker's Fast2Sum)."""
    s = rounded(a + b)
    return s, b - rounded(s - a)


def _split(a):
    t = rounded(SPLITTER * a)
    hi = rounded(t - rounded(t - a))
    return hi, a - hi


def two_prod(a, b):
    """``(p, e)`` with ``p = fl(a b)`` and ``p + e = a b`` exactly (Dekker; |a b| < 2**996)."""
    p = rounded(a * b)
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((rounded(ah * bh) - p) + rounded(ah * bl) + rounded(al * bh)) + rounded(al * bl)
    return p, e


def dd_add(x, y):
    """Double-double ``x + y`` (the accurate form: both parts' errors kept)."""
    s, e = two_sum(x[0], y[0])
    t, f = two_sum(x[1], y[1])
    s, e = quick_two_sum(s, e + t)
    return quick_two_sum(s, e + f)


def dd_mul(x, y):
    p, e = two_prod(x[0], y[0])
    return quick_two_sum(p, e + (rounded(x[0] * y[1]) + rounded(x[1] * y[0])))


def dd_mul_d(x, d):
    p, e = two_prod(x[0], d)
    return quick_two_sum(p, e + rounded(x[1] * d))


def dd_div(x, y):
    """Double-double ``x / y`` (three quotient digits)."""
    q1 = divide_exact(x[0], y[0])
    r = dd_add(x, _neg(dd_mul_d(y, q1)))
    q2 = divide_exact(r[0], y[0])
    r = dd_add(r, _neg(dd_mul_d(y, q2)))
    q3 = divide_exact(r[0], y[0])
    q = quick_two_sum(q1, q2)
    return dd_add(q, (q3, jnp.zeros_like(q3)))


def _neg(x):
    return -x[0], -x[1]


def _dd_horner(coefficients, z, dd_terms: int):
    """``sum c[n] z**n`` for a double-double ``z``: the terms from ``dd_terms`` on in float64
    (Horner in ``z``'s high part), the rest in double-double. Both are rolled loops
    (``fori_loop`` over the coefficient tables), which keeps the compiled programs small."""
    zh = z[0]
    tail_c = jnp.asarray([c[0] for c in coefficients[dd_terms:]][::-1], F64)
    dd_hi = jnp.asarray([c[0] for c in coefficients[:dd_terms]][::-1], F64)
    dd_lo = jnp.asarray([c[1] for c in coefficients[:dd_terms]][::-1], F64)

    def tail_step(i, y):
        return rounded(y * zh) + tail_c[i]

    tail = lax.fori_loop(1, tail_c.shape[0], tail_step, jnp.full_like(zh, tail_c[0]))

    def dd_step(i, acc):
        return dd_add(dd_mul(acc, z), (jnp.full_like(zh, dd_hi[i]), jnp.full_like(zh, dd_lo[i])))

    return lax.fori_loop(0, dd_terms, dd_step, (tail, jnp.zeros_like(zh)))


# -- the functions -------------------------------------------------------------------------------

def exp_dd(x):
    """``exp(x)`` as a double-double ``(hi, lo)`` for ``|x| <= 709`` (before scaling by
    ``2**k``: returns ``(k, y)`` with ``exp(x) = 2**k (y_hi + y_lo)``)."""
    x = jnp.asarray(x, F64)
    k = jnp.floor(rounded(x * INV_LN2) + F64(0.5))
    # r = x - k ln2: k LN2_HI is exact and x - k LN2_HI exact (Sterbenz; fdlibm's reduction),
    # then the rest of k ln2 in double-double.
    hi = x - rounded(k * LN2_HI)
    mid = two_prod(k, LN2_MID)
    r = dd_add((hi, jnp.zeros_like(hi)), _neg(dd_add(mid, (rounded(k * LN2_LO),
                                                           jnp.zeros_like(hi)))))
    return k, _dd_horner(EXP_COEFFICIENTS, r, EXP_DD_TERMS)


def _scale(y, k):
    """``y 2**k`` for a float64 ``y`` in [0.7, 1.5] and an integral float ``k`` in [-1160,
    1160]: two normal powers of two, so the first product is exact, the second rounds once."""
    k = k.astype(jnp.int64)
    k1 = k >> 1
    s1 = lax.bitcast_convert_type((k1 + 1023) << 52, jnp.float64)
    s2 = lax.bitcast_convert_type((k - k1 + 1023) << 52, jnp.float64)
    return (y * s1) * s2


def exp(x) -> jax.Array:
    """Correctly rounded ``exp(x)`` (float64). Results below the smallest normal float64 are
    0 (XLA's CPU flushes subnormals; Java keeps them), above the largest ``inf``."""
    x = jnp.asarray(x, F64)
    clamped = jnp.clip(x, -EXP_CLAMP, EXP_CLAMP)       # NaN passes
    k, y = exp_dd(clamped)
    result = _scale(y[0] + y[1], k)
    return jnp.where(result < F64_TINY, F64(0), result)


def expm1(x) -> jax.Array:
    """``exp(x) - 1``, correctly rounded, for ``|x| <= 700`` (double-double ``exp`` minus 1)."""
    x = jnp.asarray(x, F64)
    clamped = jnp.clip(x, -EXP_CLAMP, EXP_CLAMP)
    k, y = exp_dd(clamped)
    # 2**k (y_hi + y_lo) - 1: scaling a double-double by 2**k is exact (in range).
    scaled = (_scale(y[0], k), _scale(y[1], k))
    total = dd_add(scaled, (jnp.full_like(x, F64(-1)), jnp.zeros_like(x)))
    result = total[0] + total[1]
    # Small |x|: the double-double's absolute error (2**-104) is too large relative to x, so
    # x + x**2 (1/2 + x (1/6 + x / 24)): that sum's rounding is within 2**-74 of x (|x| < 2**-20).
    cubic = F64(0.5) + rounded(x * (F64(1 / 6) + rounded(x * F64(1 / 24))))
    small = x + rounded(rounded(x * x) * cubic)
    return jnp.where(jnp.abs(x) < F64(EXPM1_SMALL), small, result)


def log_dd(x):
    """``log(x)`` for a positive normal float64 ``x`` as a double-double."""
    x = jnp.asarray(x, F64)
    bits = lax.bitcast_convert_type(x, jnp.int64)
    high = (bits >> 32) & 0x000FFFFF
    # fdlibm's reduction: m in [sqrt(2)/2, sqrt(2)), x = 2**k m.
    i = (high + 0x95F64) & 0x100000
    m = lax.bitcast_convert_type((bits & 0x000FFFFFFFFFFFFF) | ((i ^ 0x3FF00000) << 32),
                                 jnp.float64)
    k = (((bits >> 52) & 0x7FF) - 1023 + (i >> 20)).astype(jnp.float64)
    f = m - F64(1)                                    # exact
    zero = jnp.zeros_like(f)
    # log(m) = 2 atanh(s), s = f / (2 + f)
    s = dd_div((f, zero), two_sum(F64(2), f))
    z = dd_mul(s, s)
    series = _dd_horner(LOG_COEFFICIENTS, z, LOG_DD_TERMS)
    log_m = dd_mul(dd_mul_d(s, F64(2)), series)
    k_ln2 = dd_add(two_prod(k, LN2_HI), dd_add(two_prod(k, LN2_MID), (rounded(k * LN2_LO),
                                                                       zero)))
    return dd_add(k_ln2, log_m)


def log(x) -> jax.Array:
    """Correctly rounded ``log(x)`` (float64): ``log(0) = -inf`` (subnormals count as 0, as
    XLA's CPU flushes them), ``log(inf) = inf``, NaN for negative and NaN arguments."""
    x = jnp.asarray(x, F64)
    safe = jnp.where((x > F64_TINY) & (x < F64(np.inf)), x, F64(1))
    y = log_dd(safe)
    result = y[0] + y[1]
    result = jnp.where(x < F64_TINY, F64(-np.inf), result)
    result = jnp.where(x < F64(0), F64(np.nan), result)
    result = jnp.where(x == F64(np.inf), x, result)
    return jnp.where(jnp.isnan(x), x, result)


def pow_int(x, k, max_k: int) -> jax.Array:
    """``x**k`` correctly rounded (nearly always) for an integer ``0 <= k <= max_k`` (a traced
    int or float): the product accumulated in double-double, rounded once."""
    x = jnp.asarray(x, F64)
    k = jnp.asarray(k)
    def step(i, acc):
        nxt = dd_mul_d(acc, x)
        take = i < k
        return jnp.where(take, nxt[0], acc[0]), jnp.where(take, nxt[1], acc[1])

    acc = lax.fori_loop(0, max_k, step, (jnp.ones_like(x), jnp.zeros_like(x)))
    return acc[0] + acc[1]
