"""Pure-Python oracle for Hail's jdistlib-based random functions (Hail 0.2.139, jdistlib 0.4.5).

Hail 0.2.139 draws ``rand_pois``, ``rand_gamma``, ``rand_beta`` and ``rand_hyper`` by handing its
``ThreefryRandomEngine`` (``reference_oracle.HailEngine`` here) to jdistlib's static samplers,
which are Java ports of R's nmath:

* ``Poisson.random(mu)``: R's ``rpois`` (Ahrens & Dieter 1982, "Computer generation of Poisson
  deviates from modified normal distributions", ACM TOMS 8: table inversion for ``mu < 10``,
  a normal deviate with exponential "hat" tests above);
* ``Gamma.random(shape, scale)``: R's ``rgamma`` (Ahrens & Dieter 1974 GS for ``shape < 1``,
  Ahrens & Dieter 1982 GD, "Generating gamma variates by a modified rejection technique",
  CACM 25, for ``shape >= 1``);
* ``Beta.random(a, b)``: R's ``rbeta`` (Cheng 1978, "Generating beta variates with nonintegral
  shape parameters", CACM 21: BB when both exceed 1, BC otherwise);
* ``HyperGeometric.random(n1, n2, k)``: R's ``rhyper`` (Kachitvichyanukul & Schmeiser 1985,
  "Computer generation of hypergeometric random variates", JSCS 22: HIN inversion when the
  mode is within 10 of the smallest value, H2PE otherwise);
* the normal deviates they use: ``Normal.random_standard`` = R's ``norm_rand`` by inversion,
  ``qnorm((floor(2**27 u1) + u2) / 2**27)`` with Wichura's AS 241 (PPND16) ``qnorm``;
* the exponential ones: ``Exponential.random_standard`` = R's ``exp_rand`` (Ahrens & Dieter
  1972 "SA", from uniforms with no transcendental function at all).

Everything here is written from those sources' algorithms with Python floats (IEEE float64,
every operation correctly rounded and none fused, as in Java), in Java's evaluation order
(``a * b * c`` is ``(a * b) * c``). jdistlib calls ``java.lang.Math``'s ``exp``, ``log``,
``pow``, ``sqrt`` and ``expm1``; :data:`MATH` says how this oracle computes them:

* ``"cr"`` (the default): all correctly rounded (``decimal`` to 60 digits, then the nearest
  float64), what ``jaxpmac._hail._cr_math`` computes (in double-double arithmetic), so that the
  JAX functions are checked bit for bit. On HotSpot (Hail's JVM) ``Math.exp``/``log``/``pow``
  are intrinsics from Intel's LIBM, correctly rounded in nearly all cases (not all: within
  0.51 ulp or so), and ``Math.expm1`` calls ``StrictMath.expm1`` (fdlibm's ``s_expm1.c``, within
  1 ulp; used only in ``rgamma``'s step-11 acceptance test). With this choice the oracle
  reproduces all 224 public records of these functions.
* ``"glibc"``: ``exp``, ``log``, ``pow`` as Python's ``math`` (the C library's: glibc's ``exp``
  is not correctly rounded on about 1 argument in 2000), ``expm1`` fdlibm's: also all 224.
* ``"fdlibm"``: fdlibm 5.3's ``e_exp.c``, ``e_log.c``, ``s_expm1.c`` for all of them (Java's
  ``StrictMath``): these differ from the correctly rounded values in the last bit on about 3%
  (log) and 10% (exp) of arguments, and the oracle then misses 11 of the 224 public records
  (``rand_gamma``, ``rand_beta``, ``rand_dirichlet``: values that pass ``exp``/``log``, e.g.
  ``rand_gamma(0.3, 1)``'s ``exp(log(p) / a)``). So Hail's ``Math`` is NOT fdlibm, and the JAX
  port computes ``exp`` and ``log`` correctly rounded.

``pow`` is only used as ``pow(mu, k)`` for an integer ``0 <= k <= 9`` in ``rpois``'s acceptance
test.

Public functions take Hail's ``(global_seed, seed, message)`` and the parameters named as in
Hail's Python signatures, and return what Hail returns: ``hail_rand_pois``,
``hail_rand_gamma``, ``hail_rand_beta``, ``hail_rand_dirichlet``, ``hail_rand_hyper``,
``hail_rand_multi_hyper``. The engine-level samplers (``rpois(mu, engine)`` and so on) take a
``reference_oracle.HailEngine``.
"""

from __future__ import annotations

import decimal
import math
import struct
from fractions import Fraction
from typing import Sequence

import reference_oracle as ro

__all__ = [
    "MATH",
    "norm_rand",
    "exp_rand",
    "rpois",
    "rgamma",
    "rbeta",
    "rhyper",
    "hail_rand_pois",
    "hail_rand_gamma",
    "hail_rand_beta",
    "hail_rand_dirichlet",
    "hail_rand_hyper",
    "hail_rand_multi_hyper",
    "java_int",
]

#: Which elementary functions the samplers use: "cr" (default), "glibc" or "fdlibm" (above).
MATH = "cr"

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1


# -- Java semantics ------------------------------------------------------------------------------

def java_int(x: float) -> int:
    """Java's ``(int) x`` for a double: toward zero, NaN -> 0, saturating at the int range."""
    if x != x:
        return 0
    if x >= INT_MAX:
        return INT_MAX
    if x <= INT_MIN:
        return INT_MIN
    return int(x)


def _wrap32(n: int) -> int:
    """Java int arithmetic: the result modulo 2**32, as a signed int."""
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n >= (1 << 31) else n


def _signum(x: float) -> float:
    """Java's ``Math.signum``: -1.0, 0.0 (the zero itself), 1.0, NaN."""
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return x


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b & ro.MASK64))[0]


def _high(x: float) -> int:
    """fdlibm's __HI(x) as a signed 32-bit int."""
    return _wrap32(_bits(x) >> 32)


def _low(x: float) -> int:
    return _bits(x) & 0xFFFFFFFF


def _with_high(x: float, hi: int) -> float:
    return _from_bits(((hi & 0xFFFFFFFF) << 32) | _low(x))


# -- fdlibm 5.3 (Sun Microsystems, 1993-2004), as Java's StrictMath specifies ---------------------

_LN2_HI = _from_bits(0x3FE62E42FEE00000)    # 6.93147180369123816490e-01
_LN2_LO = _from_bits(0x3DEA39EF35793C76)    # 1.90821492927058770002e-10
_TWO54 = 1.80143985094819840000e+16
_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
       2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
       1.479819860511658591e-01)


def fdlibm_log(x: float) -> float:
    """fdlibm's ``e_log.c``."""
    hx = _high(x)
    lx = _low(x)
    k = 0
    if hx < 0x00100000:                       # x < 2**-1022
        if ((hx & 0x7FFFFFFF) | lx) == 0:
            return -math.inf
        if hx < 0:
            return math.nan
        k -= 54
        x *= _TWO54
        hx = _high(x)
    if hx >= 0x7FF00000:
        return x + x
    k += (hx >> 20) - 1023
    hx &= 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    x = _with_high(x, hx | (i ^ 0x3FF00000))  # normalize x or x/2
    k += i >> 20
    f = x - 1.0
    if (0x000FFFFF & (2 + hx)) < 3:           # |f| < 2**-20
        if f == 0.0:
            if k == 0:
                return 0.0
            dk = float(k)
            return dk * _LN2_HI + dk * _LN2_LO
        r = f * f * (0.5 - 0.33333333333333333 * f)
        if k == 0:
            return f - r
        dk = float(k)
        return dk * _LN2_HI - ((r - dk * _LN2_LO) - f)
    s = f / (2.0 + f)
    dk = float(k)
    z = s * s
    i = hx - 0x6147A
    w = z * z
    j = 0x6B851 - hx
    t1 = w * (_LG[1] + w * (_LG[3] + w * _LG[5]))
    t2 = z * (_LG[0] + w * (_LG[2] + w * (_LG[4] + w * _LG[6])))
    i |= j
    r = t2 + t1
    if i > 0:
        hfsq = 0.5 * f * f
        if k == 0:
            return f - (hfsq - s * (hfsq + r))
        return dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    if k == 0:
        return f - s * (f - r)
    return dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f)


_EXP_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
          -1.65339022054652515390e-06, 4.13813679705723846039e-08)
_INV_LN2 = 1.44269504088896338700e+00
_O_THRESHOLD = 7.09782712893383973096e+02
_U_THRESHOLD = -7.45133219101941108420e+02


def fdlibm_exp(x: float) -> float:
    """fdlibm's ``e_exp.c``."""
    hx = _high(x)
    xsb = (hx >> 31) & 1
    hx &= 0x7FFFFFFF
    hi = lo = 0.0
    k = 0
    if hx >= 0x40862E42:                      # |x| >= 709.78...
        if hx >= 0x7FF00000:
            if ((hx & 0xFFFFF) | _low(x)) != 0:
                return x + x                  # NaN
            return x if xsb == 0 else 0.0
        if x > _O_THRESHOLD:
            return math.inf
        if x < _U_THRESHOLD:
            return 0.0
    if hx > 0x3FD62E42:                       # |x| > 0.5 ln2
        if hx < 0x3FF0A2B2:                   # and |x| < 1.5 ln2
            hi = x - (_LN2_HI if xsb == 0 else -_LN2_HI)
            lo = _LN2_LO if xsb == 0 else -_LN2_LO
            k = 1 - xsb - xsb
        else:
            k = int(_INV_LN2 * x + (0.5 if xsb == 0 else -0.5))
            t = float(k)
            hi = x - t * _LN2_HI
            lo = t * _LN2_LO
        x = hi - lo
    elif hx < 0x3E300000:                     # |x| < 2**-28
        if 1.0e300 + x > 1.0:
            return 1.0 + x
    else:
        k = 0
    t = x * x
    c = x - t * (_EXP_P[0] + t * (_EXP_P[1] + t * (_EXP_P[2] + t * (_EXP_P[3] + t * _EXP_P[4]))))
    if k == 0:
        return 1.0 - ((x * c) / (c - 2.0) - x)
    y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi)
    if k >= -1021:
        return _with_high(y, _high(y) + (k << 20))
    return _with_high(y, _high(y) + ((k + 1000) << 20)) * 2.0 ** -1000   # subnormal result


_EXPM1_Q = (-3.33333333333331316428e-02, 1.58730158725481460165e-03,
            -7.93650757867487942473e-05, 4.00821782732936239552e-06,
            -2.01099218183624371326e-07)


def fdlibm_expm1(x: float) -> float:
    """fdlibm's ``s_expm1.c``."""
    hx = _high(x)
    xsb = hx & 0x80000000
    y = x
    hx &= 0x7FFFFFFF
    c = 0.0
    k = 0
    if hx >= 0x4043687A:                      # |x| >= 56 ln2
        if hx >= 0x40862E42:
            if hx >= 0x7FF00000:
                if ((hx & 0xFFFFF) | _low(x)) != 0:
                    return x + x
                return x if xsb == 0 else -1.0
            if x > _O_THRESHOLD:
                return math.inf
        if xsb != 0:
            return -1.0
    if hx > 0x3FD62E42:                       # |x| > 0.5 ln2
        if hx < 0x3FF0A2B2:
            if xsb == 0:
                hi, lo, k = x - _LN2_HI, _LN2_LO, 1
            else:
                hi, lo, k = x + _LN2_HI, -_LN2_LO, -1
        else:
            k = int(_INV_LN2 * x + (0.5 if xsb == 0 else -0.5))
            t = float(k)
            hi = x - t * _LN2_HI
            lo = t * _LN2_LO
        x = hi - lo
        c = (hi - x) - lo
    elif hx < 0x3C900000:                     # |x| < 2**-54
        return x
    else:
        k = 0
    hfx = 0.5 * x
    hxs = x * hfx
    r1 = 1.0 + hxs * (_EXPM1_Q[0] + hxs * (_EXPM1_Q[1] + hxs * (_EXPM1_Q[2] + hxs * (
        _EXPM1_Q[3] + hxs * _EXPM1_Q[4]))))
    t = 3.0 - r1 * hfx
    e = hxs * ((r1 - t) / (6.0 - x * t))
    if k == 0:
        return x - (x * e - hxs)
    e = (x * (e - c) - c)
    e -= hxs
    if k == -1:
        return 0.5 * (x - e) - 0.5
    if k == 1:
        if x < -0.25:
            return -2.0 * (e - (x + 0.5))
        return 1.0 + 2.0 * (x - e)
    if k <= -2 or k > 56:
        y = 1.0 - (e - x)
        y = _with_high(y, _high(y) + (k << 20))
        return y - 1.0
    if k < 20:
        t = _from_bits((_wrap32(0x3FF00000 - (0x200000 >> k)) & 0xFFFFFFFF) << 32)  # 1 - 2**-k
        y = t - (e - x)
        return _with_high(y, _high(y) + (k << 20))
    t = _from_bits(((0x3FF - k) << 20) << 32)  # 2**-k
    y = x - (e + t)
    y += 1.0
    return _with_high(y, _high(y) + (k << 20))


def _cr(method: str, x: float) -> float:
    """``exp``/``ln`` of ``x`` correctly rounded: decimal's, to 60 digits, then to float64."""
    with decimal.localcontext() as context:
        context.prec = 60
        return float(getattr(decimal.Decimal(x), method)())


def _exp(x: float) -> float:
    if MATH == "fdlibm":
        return fdlibm_exp(x)
    if MATH == "cr":
        if x != x:
            return x
        if x > 709.79:
            return math.inf
        if x < -745.2:
            return 0.0
        return _cr("exp", x)
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _log(x: float) -> float:
    if MATH == "fdlibm":
        return fdlibm_log(x)
    if x != x or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    if x == math.inf:
        return x
    return _cr("ln", x) if MATH == "cr" else math.log(x)


def _expm1(x: float) -> float:
    if MATH == "cr":
        if x != x or x > 709.79:
            return x if x != x else math.inf
        with decimal.localcontext() as context:
            context.prec = 60
            return float(decimal.Decimal(x).exp() - 1)
    return fdlibm_expm1(x)      # Math.expm1 is StrictMath.expm1 on HotSpot


def _pow(x: float, k: float) -> float:
    if MATH == "cr":
        return float(Fraction(x) ** int(k))
    return math.pow(x, k)


_sqrt = math.sqrt      # correctly rounded in Java and Python alike


# -- the normal and exponential deviates ---------------------------------------------------------

#: norm_rand's inversion resolution: 2**27 (R's BIG in snorm.c, INVERSION).
BIG = 134217728

# Wichura's AS 241 PPND16 coefficients (Applied Statistics 37, 1988), as in R's qnorm.c.
_Q_CENTRAL_NUM = (2509.0809287301226727, 33430.575583588128105, 67265.770927008700853,
                  45921.953931549871457, 13731.693765509461125, 1971.5909503065514427,
                  133.14166789178437745, 3.387132872796366608)
_Q_CENTRAL_DEN = (5226.495278852854561, 28729.085735721942674, 39307.89580009271061,
                  21213.794301586595867, 5394.1960214247511077, 687.1870074920579083,
                  42.313330701600911252, 1.0)
_Q_INTER_NUM = (7.7454501427834140764e-4, .0227238449892691845833, .24178072517745061177,
                1.27045825245236838258, 3.64784832476320460504, 5.7694972214606914055,
                4.6303378461565452959, 1.42343711074968357734)
_Q_INTER_DEN = (1.05075007164441684324e-9, 5.475938084995344946e-4, .0151986665636164571966,
                .14810397642748007459, .68976733498510000455, 1.6763848301838038494,
                2.05319162663775882187, 1.0)
_Q_TAIL_NUM = (2.01033439929228813265e-7, 2.71155556874348757815e-5, .0012426609473880784386,
               .026532189526576123093, .29656057182850489123, 1.7848265399172913358,
               5.4637849111641143699, 6.6579046435011037772)
_Q_TAIL_DEN = (2.04426310338993978564e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5,
               7.868691311456132591e-4, .0148753612908506148525, .13692988092273580531,
               .59983220655588793769, 1.0)
Q_CENTRAL = 0.425            # |p - 1/2| <= 0.425: the central rational function
Q_CENTRAL_R = 0.180625       # 0.425 ** 2
Q_TAIL_R = 5.0               # r = sqrt(-log(min(p, 1 - p))) above 5: the far tail
Q_INTER_SHIFT = 1.6
Q_TAIL_SHIFT = 5.0


def _horner(coefficients, x: float) -> float:
    """``(((c0 x + c1) x + c2) ...)``: AS 241's evaluation order."""
    y = coefficients[0]
    for c in coefficients[1:]:
        y = y * x + c
    return y


def qnorm(p: float) -> float:
    """R's ``qnorm(p, 0, 1)`` (AS 241), for ``0 < p < 1``."""
    q = p - 0.5
    if abs(q) <= Q_CENTRAL:
        r = Q_CENTRAL_R - q * q
        return q * _horner(_Q_CENTRAL_NUM, r) / _horner(_Q_CENTRAL_DEN, r)
    r = (0.5 - p + 0.5) if q > 0 else p
    r = _sqrt(-_log(r))
    if r <= Q_TAIL_R:
        r += -Q_INTER_SHIFT
        val = _horner(_Q_INTER_NUM, r) / _horner(_Q_INTER_DEN, r)
    else:
        r += -Q_TAIL_SHIFT
        val = _horner(_Q_TAIL_NUM, r) / _horner(_Q_TAIL_DEN, r)
    return -val if q < 0.0 else val


def norm_rand(engine) -> float:
    """jdistlib's ``Normal.random_standard`` (R's norm_rand, INVERSION): two nextDouble."""
    u1 = engine.next_double()
    u1 = java_int(BIG * u1) + engine.next_double()
    return 0.0 + qnorm(u1 / BIG)     # qnorm returns mu + sigma * val with mu = 0, sigma = 1


#: exp_rand's q[k-1] = sum_{i<=k} log(2)**i / i! (Ahrens & Dieter 1972, algorithm SA).
EXP_Q = (0.6931471805599453, 0.9333736875190459, 0.9888777961838675, 0.9984959252914960,
         0.9998292811061389, 0.9999833164100727, 0.9999985691438767, 0.9999998906925558,
         0.9999999924734159, 0.9999999995283275, 0.9999999999728814, 0.9999999999985598,
         0.9999999999999289, 0.9999999999999968, 0.9999999999999999, 1.0000000000000000)


def exp_rand(engine) -> float:
    """jdistlib's ``Exponential.random_standard`` (R's exp_rand)."""
    a = 0.0
    u = engine.next_double()
    while u <= 0.0 or u >= 1.0:
        u = engine.next_double()
    while True:
        u += u
        if u > 1.0:
            break
        a += EXP_Q[0]
    u -= 1.0
    if u <= EXP_Q[0]:
        return a + u
    i = 0
    ustar = engine.next_double()
    umin = ustar
    while True:
        ustar = engine.next_double()
        if umin > ustar:
            umin = ustar
        i += 1
        if not u > EXP_Q[i]:
            break
    return a + umin * EXP_Q[0]


# -- rpois ---------------------------------------------------------------------------------------

#: Ahrens & Dieter (1982) constants, as in R's rpois.c: a0..a7 approximate
#: log(1 + v) - v over v**2 (Step F), 1/7, 1/12, 1/24; the table of 0! .. 9!.
POIS_A = (-0.5, 0.3333333, -0.2500068, 0.2000118, -0.1661269, 0.1421878, -0.1384794, 0.1250060)
ONE_7 = 0.1428571428571428571
ONE_12 = 0.0833333333333333333
ONE_24 = 0.0416666666666666667
FACT = (1., 1., 2., 6., 24., 120., 720., 5040., 40320., 362880.)
POIS_BIG_MU = 10.0           # table inversion below, normal + hat tests from here
POIS_TABLE_SIZE = 35         # the cumulative table pp[1..35]
POIS_TABLE_HALF = 0.458      # ~ pp[9] for mu = 10: start the table search at m above it
POIS_L_SHIFT = 1.1484        # big_l = floor(mu - 1.1484) bounds the mode m(mu) for mu >= 10
POIS_T_MIN = -0.6744         # Step E: t <= -0.6744 rejected (pk < fk there)
POIS_LAPLACE_SHIFT = 1.8     # the Laplace hat's centre
POIS_HAT_C = 0.1069          # c = 0.1069 / mu majorizes
POIS_DEL_C = 4.8
M_1_SQRT_2PI = 0.398942280401432677939946059934   # 1 / sqrt(2 pi)


def _poly_v(v: float) -> float:
    a0, a1, a2, a3, a4, a5, a6, a7 = POIS_A
    return ((((((a7 * v + a6) * v + a5) * v + a4) * v + a3) * v + a2) * v + a1) * v + a0


def rpois(mu: float, engine) -> float:
    """jdistlib's ``Poisson.random(mu, engine, state)`` with a fresh state (see module doc)."""
    if math.isinf(mu) or mu != mu or mu < 0:
        return math.nan
    if mu <= 0.0:
        return 0.0
    if mu < POIS_BIG_MU:
        m = max(1, java_int(mu))
        p0 = p = q = _exp(-mu)
        pp = [0.0] * (POIS_TABLE_SIZE + 1)
        table_end = 0
        while True:
            u = engine.next_double()
            if u <= p0:
                return 0.0
            if table_end != 0:
                start = 1 if u <= POIS_TABLE_HALF else min(table_end, m)
                for k in range(start, table_end + 1):
                    if u <= pp[k]:
                        return float(k)
                if table_end == POIS_TABLE_SIZE:
                    continue
            table_end += 1
            for k in range(table_end, POIS_TABLE_SIZE + 1):
                p *= mu / k
                q += p
                pp[k] = q
                if u <= q:
                    return float(k)
            table_end = POIS_TABLE_SIZE
    s = _sqrt(mu)
    d = 6.0 * mu * mu
    big_l = float(math.floor(mu - POIS_L_SHIFT))
    g = mu + s * norm_rand(engine)
    pois = -1.0
    if g >= 0.0:
        pois = float(math.floor(g))
        if pois >= big_l:
            return pois
        fk = pois
        difmuk = mu - fk
        u = engine.next_double()
        if d * u >= difmuk * difmuk * difmuk:
            return pois
    omega = M_1_SQRT_2PI / s
    b1 = ONE_24 / mu
    b2 = 0.3 * b1 * b1
    c3 = ONE_7 * b1 * b2
    c2 = b2 - 15. * c3
    c1 = b1 - 6. * b2 + 45. * c3
    c0 = 1. - b1 + 3. * b2 - 15. * c3
    c = POIS_HAT_C / mu
    kflag = False
    step_f = g >= 0.0
    e = 0.0
    while True:
        if not step_f:
            e = exp_rand(engine)
            u = 2 * engine.next_double() - 1.0
            t = POIS_LAPLACE_SHIFT + abs(e) * _signum(u)
            if t <= POIS_T_MIN:
                continue
            pois = float(math.floor(mu + s * t))
            fk = pois
            difmuk = mu - fk
            kflag = True
        step_f = False
        if pois < 10:
            px = -mu
            py = _pow(mu, pois) / FACT[java_int(pois)]
        else:
            dl = ONE_12 / fk
            dl = dl * (1. - POIS_DEL_C * dl * dl)
            v = difmuk / fk
            if abs(v) <= 0.25:
                px = fk * v * v * _poly_v(v) - dl
            else:
                px = fk * _log(1. + v) - difmuk - dl
            py = M_1_SQRT_2PI / _sqrt(fk)
        x = (0.5 - difmuk) / s
        x *= x
        fx = -0.5 * x
        fy = omega * (((c3 * x + c2) * x + c1) * x + c0)
        if kflag:
            if c * abs(u) <= py * _exp(px + e) - fy * _exp(fx + e):
                break
        elif fy - u * fy <= py * _exp(px - fx):
            break
    return pois


# -- rgamma --------------------------------------------------------------------------------------

#: Ahrens & Dieter (1974, 1982) constants, as in R's rgamma.c.
SQRT32 = 5.656854
EXP_M1 = 0.36787944117144232159          # exp(-1)
GAMMA_Q = (0.04166669, 0.02083148, 0.00801191, 0.00144121, -7.388e-5, 2.4511e-4, 2.424e-4)
GAMMA_A = (0.3333333, -0.250003, 0.2000062, -0.1662921, 0.1423657, -0.1367177, 0.1233795)
GAMMA_TAU1 = -0.71874483771719            # Step 9: t < tau(1) rejected


def _gamma_q(t: float, v: float, s: float, s2: float, q0: float) -> float:
    if abs(v) <= 0.25:
        a1, a2, a3, a4, a5, a6, a7 = GAMMA_A
        return q0 + 0.5 * t * t * ((((((a7 * v + a6) * v + a5) * v + a4) * v + a3) * v + a2)
                                   * v + a1) * v
    return q0 - s * t + 0.25 * t * t + (s2 + s2) * _log(1.0 + v)


def rgamma(a: float, scale: float, engine) -> float:
    """jdistlib's ``Gamma.random(a, scale, engine)``."""
    if a <= 0.0 or scale <= 0.0:
        if scale == 0.0 or a == 0.0:
            return 0.0
        return math.nan
    if math.isinf(a) or math.isinf(scale) or a != a or scale != scale:
        return math.inf          # jdistlib's isInfinite is true for NaN too
    if a < 1.0:                  # GS
        e = 1.0 + EXP_M1 * a
        while True:
            p = e * engine.next_double()
            if p >= 1.0:
                x = -_log((e - p) / a)
                if exp_rand(engine) >= (1.0 - a) * _log(x):
                    break
            else:
                x = _exp(_log(p) / a)
                if exp_rand(engine) >= x:
                    break
        return scale * x
    s2 = a - 0.5                 # GD
    s = _sqrt(s2)
    d = SQRT32 - s * 12.0
    t = norm_rand(engine)
    x = s + 0.5 * t
    ret_val = x * x
    if t >= 0.0:
        return scale * ret_val
    u = engine.next_double()
    if d * u <= t * t * t:
        return scale * ret_val
    r = 1.0 / a
    q1, q2, q3, q4, q5, q6, q7 = GAMMA_Q
    q0 = ((((((q7 * r + q6) * r + q5) * r + q4) * r + q3) * r + q2) * r + q1) * r
    if a <= 3.686:
        b = 0.463 + s + 0.178 * s2
        si = 1.235
        c = 0.195 / s - 0.079 + 0.16 * s
    elif a <= 13.022:
        b = 1.654 + 0.0076 * s2
        si = 1.68 / s + 0.275
        c = 0.062 / s + 0.024
    else:
        b = 1.77
        si = 0.75
        c = 0.1515 / s
    if x > 0.0:
        v = t / (s + s)
        q = _gamma_q(t, v, s, s2, q0)
        if _log(1.0 - u) <= q:
            return scale * ret_val
    while True:
        e = exp_rand(engine)
        u = engine.next_double()
        u = u + u - 1.0
        t = b - si * e if u < 0.0 else b + si * e
        if t >= GAMMA_TAU1:
            v = t / (s + s)
            q = _gamma_q(t, v, s, s2, q0)
            if q > 0.0:
                w = _expm1(q)
                if c * abs(u) <= w * _exp(e - 0.5 * t * t):
                    break
    x = s + 0.5 * t
    return scale * x * x


# -- rbeta ---------------------------------------------------------------------------------------

DBL_MAX = 1.7976931348623157e308
EXPMAX = 1024 * 0.693147180559945309417232121458   # DBL_MAX_EXP * M_LN2
BETA_LOG4 = 1.3862944                              # log(4), as Cheng rounds it
BETA_1_PLUS_LOG5 = 2.609438                        # 1 + log(5)


def rbeta(aa: float, bb: float, engine) -> float:
    """jdistlib's ``Beta.random(aa, bb, engine)`` (Cheng's BB and BC)."""
    def inf_or_nan(x):
        return math.isinf(x) or x != x
    if aa <= 0. or bb <= 0. or (inf_or_nan(aa) and inf_or_nan(bb)):
        return math.nan
    if inf_or_nan(aa):
        return 1.0
    if inf_or_nan(bb):
        return 0.0
    a = min(aa, bb)
    b = max(aa, bb)
    alpha = a + b

    def v_w(u1, beta, scale):
        v = beta * _log(u1 / (1.0 - u1))
        if v <= EXPMAX:
            w = scale * _exp(v)
            if math.isinf(w):
                w = DBL_MAX
        else:
            w = DBL_MAX
        return v, w

    if a <= 1.0:                 # BC
        beta = 1.0 / a
        delta = 1.0 + b - a
        k1 = delta * (0.0138889 + 0.0416667 * a) / (b * beta - 0.777778)
        k2 = 0.25 + (0.5 + 0.25 / delta) * a
        while True:
            u1 = engine.next_double()
            u2 = engine.next_double()
            if u1 < 0.5:
                y = u1 * u2
                z = u1 * y
                if 0.25 * u2 + z - y >= k1:
                    continue
            else:
                z = u1 * u1 * u2
                if z <= 0.25:
                    v, w = v_w(u1, beta, b)
                    break
                if z >= k2:
                    continue
            v, w = v_w(u1, beta, b)
            if alpha * (_log(alpha / (a + w)) + v) - BETA_LOG4 >= _log(z):
                break
        return a / (a + w) if aa == a else w / (a + w)
    beta = _sqrt((alpha - 2.0) / (2.0 * a * b - alpha))   # BB
    gamma = a + 1.0 / beta
    while True:
        u1 = engine.next_double()
        u2 = engine.next_double()
        v, w = v_w(u1, beta, a)
        z = u1 * u1 * u2
        r = gamma * v - BETA_LOG4
        s = a + r - w
        if s + BETA_1_PLUS_LOG5 >= 5.0 * z:
            break
        t = _log(z)
        if s > t:
            break
        if not r + alpha * _log(alpha / (b + w)) < t:
            break
    return b / (b + w) if aa != a else w / (b + w)


# -- rhyper --------------------------------------------------------------------------------------

#: log(i!) for i = 0..7 (R's rhyper.c afc's table; Stirling's formula above).
AFC_TABLE = (0.0, 0.0, 0.69314718055994530941723212145817, 1.79175946922805500081247735838070,
             3.17805383034794561964694160129705, 4.78749174278204599424770093452324,
             6.57925121201010099506017829290394, 8.52516136106541430016553103634712)
HYPER_SCALE = 1e25                       # HIN's scaling against underflow
HYPER_CON = 57.5646273248511421          # log(1e25)
HYPER_DELTAL = 0.0078
HYPER_DELTAU = 0.0034
HYPER_HIN_LIMIT = 10                     # HIN when the mode is within 10 of the minimum
HYPER_EXPLICIT_M = 100                   # H2PE: explicit evaluation when m < 100 or ix <= 50
HYPER_EXPLICIT_IX = 50


def afc(i: int) -> float:
    """log(i!) (R's rhyper.c)."""
    if i < 0:
        return -1.0
    if i <= 7:
        return AFC_TABLE[i]
    di = float(i)
    return ((di + 0.5) * _log(di) - di + 0.08333333333333 / di
            - 0.00277777777777 / di / di / di + 0.9189385332)


def _rint(x: float) -> float:
    """Java's ``Math.rint``: to the nearest integer, ties to even."""
    return float(round(x)) if math.isfinite(x) else x


def rhyper(nn1in: float, nn2in: float, kkin: float, engine) -> float:
    """jdistlib's ``HyperGeometric.random(nn1in, nn2in, kkin, engine)`` (a fresh state)."""
    if not (math.isfinite(nn1in) and math.isfinite(nn2in) and math.isfinite(kkin)):
        return math.nan
    nn1 = java_int(_rint(nn1in))
    nn2 = java_int(_rint(nn2in))
    kk = java_int(_rint(kkin))
    if nn1 < 0 or nn2 < 0 or kk < 0 or kk > _wrap32(nn1 + nn2):
        return math.nan
    tn = float(_wrap32(nn1 + nn2))
    n1, n2 = (nn1, nn2) if nn1 <= nn2 else (nn2, nn1)
    k = java_int(tn - kk) if _wrap32(kk + kk) >= tn else kk
    m = java_int((k + 1.0) * (n1 + 1.0) / (tn + 2.0))
    minjx = max(0, k - n2)
    maxjx = min(n1, k)
    if minjx == maxjx:
        ix = maxjx
    elif m - minjx < HYPER_HIN_LIMIT:     # HIN
        if k < n2:
            lw = afc(n2) + afc(n1 + n2 - k) - afc(n2 - k) - afc(n1 + n2)
        else:
            lw = afc(n1) + afc(k) - afc(k - n2) - afc(n1 + n2)
        w = _exp(lw + HYPER_CON)
        while True:
            p = w
            ix = minjx
            u = engine.next_double() * HYPER_SCALE
            restart = False
            while u > p:
                u -= p
                p *= _wrap32((n1 - ix) * (k - ix))
                ix += 1
                p = p / ix / (n2 - k + ix)
                if ix > maxjx:
                    restart = True
                    break
            if not restart:
                break
    else:                                  # H2PE
        s = _sqrt((tn - k) * k * n1 * n2 / (tn - 1) / tn / tn)
        d = java_int(1.5 * s) + .5
        xl = m - d + .5
        xr = m + d + .5
        a = afc(m) + afc(n1 - m) + afc(k - m) + afc(n2 - k + m)
        kl = _exp(a - afc(java_int(xl)) - afc(java_int(n1 - xl)) - afc(java_int(k - xl))
                  - afc(java_int(n2 - k + xl)))
        kr = _exp(a - afc(java_int(xr - 1)) - afc(java_int(n1 - xr + 1))
                  - afc(java_int(k - xr + 1)) - afc(java_int(n2 - k + xr - 1)))
        lamdl = -_log(xl * (n2 - k + xl) / (n1 - xl + 1) / (k - xl + 1))
        lamdr = -_log((n1 - xr + 1) * (k - xr + 1) / xr / (n2 - k + xr))
        p1 = d + d
        p2 = p1 + kl / lamdl
        p3 = p2 + kr / lamdr
        while True:
            u = engine.next_double() * p3
            v = engine.next_double()
            if u < p1:
                ix = java_int(xl + u)
            elif u <= p2:
                ix = java_int(xl + _log(v) / lamdl)
                if ix < minjx:
                    continue
                v = v * (u - p1) * lamdl
            else:
                ix = java_int(xr - _log(v) / lamdr)
                if ix > maxjx:
                    continue
                v = v * (u - p2) * lamdr
            if m < HYPER_EXPLICIT_M or ix <= HYPER_EXPLICIT_IX:
                f = 1.0
                if m < ix:
                    for i in range(m + 1, ix + 1):
                        f = f * (n1 - i + 1) * (k - i + 1) / (n2 - k + i) / i
                elif m > ix:
                    for i in range(ix + 1, m + 1):
                        f = f * i * (n2 - k + i) / (n1 - i + 1) / (k - i + 1)
                if v <= f:
                    break
                continue
            y = float(ix)
            y1 = y + 1.0
            ym = y - m
            yn = n1 - y + 1.0
            yk = k - y + 1.0
            nk = n2 - k + y1
            r = -ym / y1
            s = ym / yn
            t = ym / yk
            e = -ym / nk
            g = yn * yk / (y1 * nk) - 1.0
            dg = 1.0
            if g < 0.0:
                dg = 1.0 + g
            gu = g * (1.0 + g * (-0.5 + g / 3.0))
            gl = gu - .25 * (g * g * g * g) / dg
            xm = m + 0.5
            xn = n1 - m + 0.5
            xk = k - m + 0.5
            nm = n2 - k + xm
            ub = (y * gu - m * gl + HYPER_DELTAU
                  + xm * r * (1. + r * (-0.5 + r / 3.0))
                  + xn * s * (1. + s * (-0.5 + s / 3.0))
                  + xk * t * (1. + t * (-0.5 + t / 3.0))
                  + nm * e * (1. + e * (-0.5 + e / 3.0)))
            alv = _log(v)
            if alv > ub:
                continue
            dr = xm * (r * r * r * r)
            if r < 0.0:
                dr /= (1.0 + r)
            ds = xn * (s * s * s * s)
            if s < 0.0:
                ds /= (1.0 + s)
            dt = xk * (t * t * t * t)
            if t < 0.0:
                dt /= (1.0 + t)
            de = nm * (e * e * e * e)
            if e < 0.0:
                de /= (1.0 + e)
            if alv < ub - 0.25 * (dr + ds + dt + de) + (y + m) * (gl - gu) - HYPER_DELTAL:
                break
            if alv <= (a - afc(ix) - afc(n1 - ix) - afc(k - ix) - afc(n2 - k + ix)):
                break
    if _wrap32(kk + kk) >= tn:
        ix = _wrap32(kk - nn2 + ix) if nn1 > nn2 else _wrap32(nn1 - ix)
    elif nn1 > nn2:
        ix = _wrap32(kk - ix)
    return float(ix)


# -- Hail's functions ----------------------------------------------------------------------------

def _engine(global_seed: int, seed: int, message: Sequence[int]):
    return ro.HailEngine(*ro.hail_state(global_seed, seed, message))


def hail_rand_pois(global_seed, seed, message, lamb: float) -> float:
    """``hl.rand_pois(lamb, seed=seed)`` (a float, as Hail returns it)."""
    return rpois(float(lamb), _engine(global_seed, seed, message))


def hail_rand_gamma(global_seed, seed, message, shape: float, scale: float) -> float:
    """``hl.rand_gamma(shape, scale, seed=seed)``: jdistlib's ``Gamma.random(shape, scale)``."""
    return rgamma(float(shape), float(scale), _engine(global_seed, seed, message))


def hail_rand_beta(global_seed, seed, message, a: float, b: float, lower=None,
                   upper=None) -> float:
    """``hl.rand_beta(a, b[, lower, upper], seed=seed)``: redraws from the same engine until
    ``lower <= x <= upper`` (one of them alone defaults the other to 0 or 1, as Hail's Python
    does; Hail 0.2.139 itself fails on that form)."""
    engine = _engine(global_seed, seed, message)
    x = rbeta(float(a), float(b), engine)
    if lower is None and upper is None:
        return x
    lower = 0.0 if lower is None else float(lower)
    upper = 1.0 if upper is None else float(upper)
    while x < lower or x > upper:
        x = rbeta(float(a), float(b), engine)
    return x


def hail_rand_dirichlet(global_seed, seed, message, a: Sequence[float]) -> list[float]:
    """``hl.rand_dirichlet(a, seed=seed)``: ``g[j] = rand_gamma(a[j], 1)`` at ``message + [j]``
    (``0.0`` where ``a[j] == 0``), each divided by their sum (summed left to right from 0)."""
    g = [0.0 if float(aj) == 0.0 else hail_rand_gamma(global_seed, seed, [*message, j],
                                                       float(aj), 1.0)
         for j, aj in enumerate(a)]
    total = 0.0
    for x in g:
        total += x
    return [x / total for x in g]


def hail_rand_hyper(global_seed, seed, message, popsize: int, ngood: int, nsample: int) -> int:
    """``hl.rand_hyper(popsize, ngood, nsample, seed=seed)``:
    ``(int) rhyper(ngood, popsize - ngood, nsample)`` (NaN, for invalid arguments, gives 0)."""
    x = rhyper(float(ngood), float(_wrap32(popsize - ngood)), float(nsample),
               _engine(global_seed, seed, message))
    return java_int(x)


def hail_rand_multi_hyper(global_seed, seed, message, colors: Sequence[int],
                          nsample: int) -> list[int]:
    """``hl.rand_multi_hyper(colors, nsample, seed=seed)``: one engine; for each color ``n`` in
    order, ``remaining -= n``, ``drawn = (int) rhyper(n, remaining, to_sample)``,
    ``to_sample -= drawn`` (int32 arithmetic)."""
    engine = _engine(global_seed, seed, message)
    remaining = 0
    for n in colors:
        remaining = _wrap32(remaining + n)
    to_sample = nsample
    out = []
    for n in colors:
        remaining = _wrap32(remaining - n)
        drawn = java_int(rhyper(float(n), float(remaining), float(to_sample), engine))
        to_sample = _wrap32(to_sample - drawn)
        out.append(drawn)
    return out
