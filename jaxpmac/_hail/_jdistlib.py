"""jdistlib 0.4.5's samplers as Hail 0.2.139 runs them, over the JAX Hail engine, bit for bit.

Hail draws ``rand_pois``, ``rand_gamma``, ``rand_beta`` and ``rand_hyper`` (and with them
``rand_dirichlet`` and ``rand_multi_hyper``) by handing its ``ThreefryRandomEngine`` to
jdistlib's static samplers, Java ports of R's nmath (docs/hail_distributions.md):

* :func:`rpois`: R's ``rpois`` (Ahrens & Dieter 1982): table inversion below ``mu = 10``, a
  normal deviate with squeeze, quotient and Laplace-hat tests above;
* :func:`rgamma`: R's ``rgamma``: Ahrens & Dieter's GS below shape 1, GD from 1;
* :func:`rbeta`: R's ``rbeta``: Cheng's BC (``min(a, b) <= 1``) and BB;
* :func:`rhyper`: R's ``rhyper``: HIN inversion or H2PE (Kachitvichyanukul & Schmeiser 1985),
  with a fresh state per call (Hail passes none);
* :func:`norm_rand` (inversion of two ``nextDouble`` with Wichura's AS 241) and
  :func:`exp_rand` (Ahrens & Dieter 1972's SA) underneath.

Each takes a :class:`~jaxpmac._hail._engine.Engine` and returns ``(engine, value)``; every
rejection loop is a ``lax.while_loop`` (any number of rejections is reproduced), draws that
Java makes only on some paths are made under ``lax.cond`` (a select of both under ``vmap``),
and the regimes that depend on a parameter (``mu < 10``, ``shape < 1``, ``min(a, b) <= 1``)
are both computed and selected, each loop masked to its own lanes, so that everything is
vmappable over states and parameters alike.

The arithmetic is Java's, operation for operation, in float64 (``jax_enable_x64`` is required):
every product that meets an addition passes ``_fixed_math.rounded`` (Java never fuses), every
division ``_cr_math.divide_exact`` (XLA would multiply by a constant's reciprocal), ``sqrt`` is
correctly rounded, and ``exp``/``log``/``pow`` are correctly rounded (``_cr_math``), as
HotSpot's intrinsics nearly always are; ``expm1`` too, where Java has fdlibm's (within an ulp;
it only enters GD's step-11 acceptance test).

The constants are jdistlib's (= R's), named with the papers they come from; the same names and
values are in tests/reference_jdistlib.py, the pure-Python oracle these are checked against.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._hail import _cr_math as cr
from jaxpmac._hail import _engine as engine
from jaxpmac._lowering._encrypt import encrypt_as
from jaxpmac._samplers._correctly_rounded import sqrt
from jaxpmac._samplers._fixed_math import horner, rounded

F64 = np.float64
I32 = jnp.int32
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1

R = rounded
div = cr.divide_exact


def _f(x) -> jax.Array:
    return jnp.asarray(x, F64)


def java_int(x) -> jax.Array:
    """Java's ``(int) x``: toward zero, NaN -> 0, saturating at the int32 range."""
    x = _f(x)
    t = jnp.clip(jnp.trunc(x), F64(INT_MIN), F64(INT_MAX))
    return jnp.where(jnp.isnan(x), F64(0), t).astype(I32)


def _batched(function, *xs):
    """``function`` of each of ``xs``, in ONE call on their stack: a double-double ``log`` or
    ``exp`` compiles to about a thousand operations, so a sampler calls each once per step."""
    xs = jnp.broadcast_arrays(*(_f(x) for x in xs))
    ys = function(jnp.stack(xs, axis=-1))
    return tuple(ys[..., i] for i in range(len(xs)))


def _signum(x):
    return jnp.where(x > 0, F64(1), jnp.where(x < 0, F64(-1), x))


# -- a compact reader of the engine ---------------------------------------------------------------
#
# Each ``engine.next_double`` site compiles three unrolled ciphers (about 2.5 s of XLA's CPU
# compile time each on a loaded machine), and these samplers have a dozen sites. The reader
# here draws the same doubles from the same :class:`~jaxpmac._hail._engine.Engine` with one
# rolled cipher per site and one ``nextLong`` site per double (a ``while_loop`` over words).

def _fill(eng):
    counter = w.Pair(jnp.zeros_like(eng.block_index), eng.block_index)
    words = encrypt_as("rolled", _threefish.GENERATOR_KEY, (eng.final_tweak, counter), eng.h,
                       native=False)
    return eng.replace(block=tuple(w.to_pair(x) for x in words),
                       block_index=eng.block_index + np.uint32(1),
                       used_ints=jnp.zeros_like(eng.used_ints))


def next_long(eng):
    """Hail's ``nextLong()`` (as ``engine.next_long``, with a rolled cipher)."""
    used = eng.used_ints
    used = used + (used & 1)                     # a pending low half is skipped
    eng = eng.replace(used_ints=used)
    eng = lax.cond(used >= engine.INTS_PER_BLOCK, _fill, lambda e: e, eng)
    used = eng.used_ints
    word = engine._word_at(eng.block, jnp.minimum(used >> 1, engine.WORDS_PER_BLOCK - 1))
    return eng.replace(used_ints=used + 2), word


#: nextDouble's phases: reading the exponent word(s), reading the significand word, done.
_EXPONENT, _SIGNIFICAND, _DONE = 0, 1, 2


def next_double(eng):
    """Hail's ``nextDouble()`` as float64 (as ``engine.next_double``): the first nonzero
    word's trailing zeros lower the exponent (64 per zero word), its top 52 bits are the
    significand unless it has 12 or more trailing zeros, then the next word's are."""
    def body(carry):
        eng, exponent, phase, bits = carry
        eng, word = next_long(eng)
        zero = engine.is_zero(word)
        zeros = engine.trailing_zeros(word)
        reading_exponent = phase == _EXPONENT
        exponent = jnp.where(reading_exponent,
                             exponent - jnp.where(zero, engine.WORD_BITS, zeros), exponent)
        complete = (reading_exponent & ~zero & (zeros < engine.SIGNIFICAND_DROP)) | (
            phase == _SIGNIFICAND)
        new_bits = engine.double_bits(exponent, engine.significand(word))
        bits = engine.select(complete, new_bits, bits)
        phase = jnp.where(complete, _DONE,
                          jnp.where(reading_exponent & ~zero, _SIGNIFICAND, phase))
        return eng, exponent, phase, bits

    zero_word = w.Pair(jnp.zeros_like(eng.block_index), jnp.zeros_like(eng.block_index))
    init = (eng, jnp.full(eng.used_ints.shape, engine.UNIT_EXPONENT, I32),
            jnp.zeros(eng.used_ints.shape, I32), zero_word)
    eng, _, _, bits = lax.while_loop(lambda c: c[2] != _DONE, body, init)
    return eng, engine.bits_to_float64(bits)


def next_doubles(eng, n: int):
    """``n`` consecutive ``nextDouble()`` as a float64 array of shape ``(n,)`` (one site)."""
    def body(i, carry):
        eng, out = carry
        eng, u = next_double(eng)
        return eng, out.at[i].set(u)

    return lax.fori_loop(0, n, body, (eng, jnp.zeros(eng.used_ints.shape + (n,), F64)))


def _maybe(take, draw, eng, *args):
    """``draw(eng, *args)`` where ``take``, else ``(eng, 0.0)``: a draw Java makes only on some
    paths (``lax.cond``; under ``vmap`` both are computed and selected per lane)."""
    def skip(eng, *_):
        return eng, jnp.zeros(jnp.shape(take), F64)
    return lax.cond(take, draw, skip, eng, *args)


# -- the normal and exponential deviates ---------------------------------------------------------

#: norm_rand's inversion resolution 2**27 (R's snorm.c, BIG).
BIG = F64(134217728.0)
BIG_INVERSE = F64(2.0 ** -27)
# Wichura's AS 241 (PPND16) rational functions (Applied Statistics 37, 1988), as R's qnorm.c.
Q_CENTRAL_NUM = (2509.0809287301226727, 33430.575583588128105, 67265.770927008700853,
                 45921.953931549871457, 13731.693765509461125, 1971.5909503065514427,
                 133.14166789178437745, 3.387132872796366608)
Q_CENTRAL_DEN = (5226.495278852854561, 28729.085735721942674, 39307.89580009271061,
                 21213.794301586595867, 5394.1960214247511077, 687.1870074920579083,
                 42.313330701600911252, 1.0)
Q_INTER_NUM = (7.7454501427834140764e-4, .0227238449892691845833, .24178072517745061177,
               1.27045825245236838258, 3.64784832476320460504, 5.7694972214606914055,
               4.6303378461565452959, 1.42343711074968357734)
Q_INTER_DEN = (1.05075007164441684324e-9, 5.475938084995344946e-4, .0151986665636164571966,
               .14810397642748007459, .68976733498510000455, 1.6763848301838038494,
               2.05319162663775882187, 1.0)
Q_TAIL_NUM = (2.01033439929228813265e-7, 2.71155556874348757815e-5, .0012426609473880784386,
              .026532189526576123093, .29656057182850489123, 1.7848265399172913358,
              5.4637849111641143699, 6.6579046435011037772)
Q_TAIL_DEN = (2.04426310338993978564e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5,
              7.868691311456132591e-4, .0148753612908506148525, .13692988092273580531,
              .59983220655588793769, 1.0)
Q_CENTRAL = 0.425            # |p - 1/2| <= 0.425: the central rational function
Q_CENTRAL_R = 0.180625       # 0.425 ** 2
Q_TAIL_R = 5.0               # r = sqrt(-log(min(p, 1 - p))) above 5: the far tail
Q_INTER_SHIFT = 1.6
Q_TAIL_SHIFT = 5.0


def qnorm(p) -> jax.Array:
    """R's ``qnorm(p, 0, 1)`` (AS 241) for ``0 < p < 1``, in Java's order of operations."""
    p = _f(p)
    q = p - F64(0.5)
    r = F64(Q_CENTRAL_R) - R(q * q)
    central = div(R(q * horner(Q_CENTRAL_NUM, r)), horner(Q_CENTRAL_DEN, r))
    rt = jnp.where(q > 0, (F64(0.5) - p) + F64(0.5), p)
    rt = sqrt(-cr.log(rt))
    r1 = rt + F64(-Q_INTER_SHIFT)
    r2 = rt + F64(-Q_TAIL_SHIFT)
    tail = jnp.where(rt <= F64(Q_TAIL_R),
                     div(horner(Q_INTER_NUM, r1), horner(Q_INTER_DEN, r1)),
                     div(horner(Q_TAIL_NUM, r2), horner(Q_TAIL_DEN, r2)))
    tail = jnp.where(q < 0, -tail, tail)
    return F64(0) + jnp.where(jnp.abs(q) <= F64(Q_CENTRAL), central, tail)


def norm_rand(eng):
    """jdistlib's ``Normal.random_standard``: ``qnorm((floor(2**27 u1) + u2) / 2**27)``."""
    eng, u = next_doubles(eng, 2)
    u = java_int(BIG * u[..., 0]).astype(F64) + u[..., 1]
    return eng, qnorm(u * BIG_INVERSE)          # exact: a power of two


#: exp_rand's q[k-1] = sum_{i<=k} log(2)**i / i! (Ahrens & Dieter 1972, algorithm SA).
EXP_Q = (0.6931471805599453, 0.9333736875190459, 0.9888777961838675, 0.9984959252914960,
         0.9998292811061389, 0.9999833164100727, 0.9999985691438767, 0.9999998906925558,
         0.9999999924734159, 0.9999999995283275, 0.9999999999728814, 0.9999999999985598,
         0.9999999999999289, 0.9999999999999968, 0.9999999999999999, 1.0000000000000000)


def exp_rand(eng):
    """jdistlib's ``Exponential.random_standard`` (R's ``exp_rand``): no transcendental
    function; ``a`` grows by ``log 2`` per halving of ``u``, as Java adds it (not a product).

    (Java first redraws while ``u <= 0 or u >= 1``; Hail's ``nextDouble`` is in ``(0, 1)``.)
    """
    eng, u = next_double(eng)
    q0 = F64(EXP_Q[0])

    def halving(carry):
        u, a = carry
        return u + u, a + q0

    u, a = lax.while_loop(lambda c: c[0] + c[0] <= F64(1), halving, (u, jnp.zeros_like(u)))
    u = (u + u) - F64(1)
    needs = u > q0
    table = jnp.asarray(EXP_Q, F64)

    def more(carry):
        n = carry[2]
        return needs & ((n < 2) | (u > table[jnp.clip(n - 1, 0, 15)]))

    def draw(carry):
        eng, umin, n = carry
        eng, ustar = next_double(eng)
        umin = jnp.where(n == 0, ustar, jnp.minimum(umin, ustar))
        return eng, umin, n + 1

    eng, umin, _ = lax.while_loop(more, draw, (eng, jnp.zeros_like(u), jnp.zeros(u.shape, I32)))
    return eng, jnp.where(needs, a + R(umin * q0), a + u)


# -- rpois ---------------------------------------------------------------------------------------

#: Ahrens & Dieter (1982), "Computer generation of Poisson deviates from modified normal
#: distributions", ACM TOMS 8 (R's rpois.c): a0..a7 approximate (log(1 + v) - v) / v**2 in
#: Step F; 1/7, 1/12, 1/24; 0! .. 9!.
POIS_A = (-0.5, 0.3333333, -0.2500068, 0.2000118, -0.1661269, 0.1421878, -0.1384794, 0.1250060)
ONE_7 = 0.1428571428571428571
ONE_12 = 0.0833333333333333333
ONE_24 = 0.0416666666666666667
FACT = (1., 1., 2., 6., 24., 120., 720., 5040., 40320., 362880.)
POIS_BIG_MU = 10.0           # table inversion below, normal + hat tests from here
POIS_TABLE_SIZE = 35         # the cumulative table pp[1..35]
POIS_L_SHIFT = 1.1484        # big_l = floor(mu - 1.1484) bounds the mode for mu >= 10
POIS_T_MIN = -0.6744         # Step E: t <= -0.6744 rejected (pk < fk there)
POIS_LAPLACE_SHIFT = 1.8     # the Laplace hat's centre
POIS_HAT_C = 0.1069          # c = 0.1069 / mu majorizes
POIS_DEL_C = 4.8
M_1_SQRT_2PI = 0.398942280401432677939946059934   # 1 / sqrt(2 pi)


def _rpois_table(eng, mu, active):
    """``mu < 10``: the smallest ``k`` with ``u <= pp[k]`` (0 when ``u <= pp[0] = e**-mu``),
    redrawing ``u`` when ``u > pp[35]``. R searches from the mode when ``u > 0.458``, which finds
    the same ``k`` (``pp[m - 1] < 0.458`` for every ``mu < 10``; tests/hail)."""
    p = jnp.where(active, cr.exp(-mu), F64(1))
    q = p
    table = [q]
    for k in range(1, POIS_TABLE_SIZE + 1):
        p = R(p * div(mu, F64(k)))          # Java rounds it before q + p
        q = q + p
        table.append(q)
    pp = jnp.stack(table, axis=-1)

    def draw(carry):
        eng, _, _ = carry
        eng, u = next_double(eng)
        k = jnp.sum(pp < u[..., None], axis=-1, dtype=I32)      # pp is nondecreasing
        return eng, k, k <= POIS_TABLE_SIZE

    zero = jnp.zeros(mu.shape, I32)
    eng, k, _ = lax.while_loop(lambda c: active & ~c[2], draw, (eng, zero, ~active))
    return eng, k.astype(F64)


def _pois_poly(v):
    return horner(POIS_A[::-1], v)


def _rpois_normal(eng, mu, active):
    """``mu >= 10``: Steps N, I, S, then P, E, F, H/Q (Ahrens & Dieter 1982)."""
    mu = jnp.where(active, mu, F64(POIS_BIG_MU))
    s = sqrt(mu)
    d = R(F64(6) * mu) * mu
    big_l = jnp.floor(mu - F64(POIS_L_SHIFT))
    eng, n = norm_rand(eng)
    g = mu + R(s * n)
    positive = g >= 0
    pois = jnp.floor(g)
    immediate = positive & (pois >= big_l)
    difmuk = mu - pois
    eng, u = _maybe(positive & ~immediate, lambda e: next_double(e), eng)
    squeezed = positive & ~immediate & (R(d * u) >= R(R(difmuk * difmuk) * difmuk))
    done = ~active | immediate | squeezed
    omega = div(F64(M_1_SQRT_2PI), s)
    b1 = div(F64(ONE_24), mu)
    b2 = R(R(F64(0.3) * b1) * b1)
    c3 = R(R(F64(ONE_7) * b1) * b2)
    c2 = b2 - R(F64(15) * c3)
    c1 = (b1 - R(F64(6) * b2)) + R(F64(45) * c3)
    c0 = ((F64(1) - b1) + R(F64(3) * b2)) - R(F64(15) * c3)
    c = div(F64(POIS_HAT_C), mu)

    def step_f(pois, difmuk, u, e, kflag):
        small = pois < 10
        index = jnp.clip(pois, 0, 9).astype(I32)
        py_small = div(cr.pow_int(mu, index, 9), jnp.asarray(FACT, F64)[index])
        fk = jnp.where(small, F64(10), pois)
        dl = div(F64(ONE_12), fk)
        dl = R(dl * (F64(1) - R(R(F64(POIS_DEL_C) * dl) * dl)))
        v = div(difmuk, fk)
        px_poly = R(R(R(fk * v) * v) * _pois_poly(v)) - dl
        px_log = (R(fk * cr.log(F64(1) + v)) - difmuk) - dl
        px = jnp.where(small, -mu, jnp.where(jnp.abs(v) <= F64(0.25), px_poly, px_log))
        py = jnp.where(small, py_small, div(F64(M_1_SQRT_2PI), sqrt(fk)))
        x = div(F64(0.5) - difmuk, s)
        x = R(x * x)
        fx = R(F64(-0.5) * x)
        fy = R(omega * _cubic(c3, c2, c1, c0, x))
        exp_px_e, exp_fx_e, exp_px_fx = _batched(cr.exp, px + e, fx + e, px - fx)
        hat = R(c * jnp.abs(u)) <= R(py * exp_px_e) - R(fy * exp_fx_e)
        quotient = fy - R(u * fy) <= R(py * exp_px_fx)
        return jnp.where(kflag, hat, quotient)

    def body(carry):
        eng, pois, difmuk, u, e, kflag, at_f, done = carry

        def step_e(eng):
            eng, e = exp_rand(eng)
            eng, u = next_double(eng)
            return eng, e, F64(2) * u - F64(1)

        def keep(eng):
            return eng, e, u

        eng, e2, u2 = lax.cond(~at_f & ~done, step_e, keep, eng)
        t = F64(POIS_LAPLACE_SHIFT) + R(jnp.abs(e2) * _signum(u2))
        fresh = ~at_f & ~done
        rejected_t = fresh & (t <= F64(POIS_T_MIN))
        pois_t = jnp.floor(mu + R(s * t))
        pois2 = jnp.where(fresh, pois_t, pois)
        difmuk2 = jnp.where(fresh, mu - pois_t, difmuk)
        kflag2 = jnp.where(fresh, True, kflag)
        accept = ~done & ~rejected_t & step_f(pois2, difmuk2, u2, e2, kflag2)
        return (eng, pois2, difmuk2, u2, e2, kflag2, jnp.zeros_like(at_f), done | accept)

    init = (eng, pois, difmuk, u, jnp.zeros_like(mu), jnp.zeros(mu.shape, jnp.bool_),
            positive & ~done, done)
    eng, pois, *_ = lax.while_loop(lambda c: ~c[-1], body, init)
    return eng, pois


def _cubic(c3, c2, c1, c0, x):
    """``((c3 x + c2) x + c1) x + c0``, each product rounded before its addition (Java's)."""
    y = R(c3 * x) + c2
    y = R(y * x) + c1
    return R(y * x) + c0


def rpois(eng, mu):
    """jdistlib's ``Poisson.random(mu)``: a float (an integer value), NaN for ``mu < 0``,
    infinite or NaN, 0 for ``mu == 0``."""
    mu = _f(mu)
    valid = jnp.isfinite(mu) & (mu > 0)
    small = valid & (mu < F64(POIS_BIG_MU))
    big = valid & ~small
    eng, k_small = _rpois_table(eng, jnp.where(small, mu, F64(1)), small)
    eng, k_big = _rpois_normal(eng, mu, big)
    value = jnp.where(small, k_small, k_big)
    value = jnp.where(valid, value, jnp.where(mu == 0, F64(0), F64(np.nan)))
    return eng, value


# -- rgamma --------------------------------------------------------------------------------------

#: Ahrens & Dieter (1974) GS and (1982) GD, "Generating gamma variates by a modified rejection
#: technique", CACM 25 (R's rgamma.c): q1..q7 for q0 = sum q_k a**-k, a1..a7 for the quotient
#: q = q0 + (t**2 / 2) sum a_k v**k; sqrt(32); exp(-1); tau(1).
SQRT32 = 5.656854
EXP_M1 = 0.36787944117144232159
GAMMA_Q = (0.04166669, 0.02083148, 0.00801191, 0.00144121, -7.388e-5, 2.4511e-4, 2.424e-4)
GAMMA_A = (0.3333333, -0.250003, 0.2000062, -0.1662921, 0.1423657, -0.1367177, 0.1233795)
GAMMA_TAU1 = -0.71874483771719


def _gamma_gs(eng, a, active):
    """GS (``a < 1``): ``p = e u``; ``x = -log((e - p) / a)`` or ``exp(log(p) / a)``; accept on
    an exponential deviate (each candidate takes one nextDouble and one exp_rand)."""
    a = jnp.where(active, a, F64(0.5))
    e = F64(1) + R(F64(EXP_M1) * a)

    def body(carry):
        eng, _, _ = carry
        eng, u = next_double(eng)
        p = R(e * u)
        log_ratio, log_p = _batched(cr.log, div(e - p, a), p)
        x_high = -log_ratio
        x_low = cr.exp(div(log_p, a))
        eng, ex = exp_rand(eng)
        high = p >= F64(1)
        accept = jnp.where(high, ex >= R((F64(1) - a) * cr.log(x_high)), ex >= x_low)
        return eng, jnp.where(high, x_high, x_low), accept

    eng, x, _ = lax.while_loop(lambda c: ~c[2], body, (eng, jnp.zeros_like(a), ~active))
    return eng, x


def _gamma_quotient(t, v, s, s2, q0, log_1_v):
    a1, a2, a3, a4, a5, a6, a7 = GAMMA_A
    poly = horner((a7, a6, a5, a4, a3, a2, a1), v)
    small = q0 + R(R(R(R(F64(0.5) * t) * t) * poly) * v)
    large = ((q0 - R(s * t)) + R(R(F64(0.25) * t) * t)) + R((s2 + s2) * log_1_v)
    return jnp.where(jnp.abs(v) <= F64(0.25), small, large)


def _gamma_gd(eng, a, scale, active):
    """GD (``a >= 1``): Steps 1-11 of Ahrens & Dieter (1982). Returns ``scale * x**2`` as Java
    does (``scale * ret_val`` after steps 2, 3, 7; ``scale * x * x`` after the loop)."""
    a = jnp.where(active, a, F64(2))
    s2 = a - F64(0.5)
    s = sqrt(s2)
    d = F64(SQRT32) - R(s * F64(12))
    eng, t = norm_rand(eng)
    x = s + R(F64(0.5) * t)
    ret_val = x * x
    immediate = t >= 0
    eng, u = _maybe(active & ~immediate, lambda e: next_double(e), eng)
    squeeze = ~immediate & (R(d * u) <= R(R(t * t) * t))
    r = div(F64(1), a)
    q1, q2, q3, q4, q5, q6, q7 = GAMMA_Q
    q0 = R(horner((q7, q6, q5, q4, q3, q2, q1), r) * r)
    small_a = a <= F64(3.686)
    mid_a = a <= F64(13.022)
    b = jnp.where(small_a, (F64(0.463) + s) + R(F64(0.178) * s2),
                  jnp.where(mid_a, F64(1.654) + R(F64(0.0076) * s2), F64(1.77)))
    si = jnp.where(small_a, F64(1.235), jnp.where(mid_a, div(F64(1.68), s) + F64(0.275),
                                                  F64(0.75)))
    c = jnp.where(small_a, (div(F64(0.195), s) - F64(0.079)) + R(F64(0.16) * s),
                  jnp.where(mid_a, div(F64(0.062), s) + F64(0.024), div(F64(0.1515), s)))
    v = div(t, s + s)
    log_1_u, log_1_v = _batched(cr.log, F64(1) - u, F64(1) + v)
    quotient = (x > 0) & (log_1_u <= _gamma_quotient(t, v, s, s2, q0, log_1_v))
    early = immediate | squeeze | quotient
    done = ~active | early

    def body(carry):
        eng, _, _ = carry
        eng, e = exp_rand(eng)
        eng, u = next_double(eng)
        u = (u + u) - F64(1)
        t = jnp.where(u < 0, b - R(si * e), b + R(si * e))
        v = div(t, s + s)
        q = _gamma_quotient(t, v, s, s2, q0, cr.log(F64(1) + v))
        w = cr.expm1(q)
        hat = R(c * jnp.abs(u)) <= R(w * cr.exp(e - R(R(F64(0.5) * t) * t)))
        return eng, t, (t >= F64(GAMMA_TAU1)) & (q > 0) & hat

    eng, t_loop, _ = lax.while_loop(lambda c: ~c[2], body, (eng, t, done))
    x_loop = s + R(F64(0.5) * t_loop)
    value = jnp.where(early, scale * ret_val, R(scale * x_loop) * x_loop)
    return eng, value


def rgamma(eng, a, scale):
    """jdistlib's ``Gamma.random(a, scale)``: 0 where ``a`` or ``scale`` is 0, NaN for other
    non-positive values, +inf where either is infinite or NaN (jdistlib's ``isInfinite``)."""
    a, scale = _f(a), _f(scale)
    nonpositive = (a <= 0) | (scale <= 0)
    special = jnp.where(nonpositive, jnp.where((scale == 0) | (a == 0), F64(0), F64(np.nan)),
                        F64(np.inf))
    valid = ~nonpositive & jnp.isfinite(a) & jnp.isfinite(scale)
    low = valid & (a < F64(1))
    high = valid & ~low
    eng, x_gs = _gamma_gs(eng, a, low)
    eng, x_gd = _gamma_gd(eng, a, scale, high)
    value = jnp.where(low, scale * x_gs, x_gd)
    return eng, jnp.where(valid, value, special)


# -- rbeta ---------------------------------------------------------------------------------------

#: Cheng (1978), "Generating beta variates with nonintegral shape parameters", CACM 21 (R's
#: rbeta.c): log(4) and 1 + log(5) as rounded there; BC's k1, k2 coefficients; DBL_MAX_EXP ln 2.
BETA_LOG4 = 1.3862944
BETA_1_PLUS_LOG5 = 2.609438
EXPMAX = 1024 * 0.693147180559945309417232121458
DBL_MAX = 1.7976931348623157e308


def _w(v, exp_v, scale):
    """R's ``v_w_from__u1_bet``'s ``w = scale * exp(v)``, DBL_MAX past ``expmax`` or inf."""
    w = R(scale * exp_v)
    return jnp.where(jnp.isinf(w) | (v > F64(EXPMAX)), F64(DBL_MAX), w)


def rbeta(eng, aa, bb, lower=None, upper=None):
    """jdistlib's ``Beta.random(aa, bb)``; with ``lower``/``upper``, Hail's redraw until
    ``lower <= x <= upper`` (each redraw a fresh ``Beta.random``, which keeps no state, so it
    is the same loop with a narrower acceptance)."""
    aa, bb = _f(aa), _f(bb)
    inf_a, inf_b = ~jnp.isfinite(aa), ~jnp.isfinite(bb)
    invalid = (aa <= 0) | (bb <= 0) | (inf_a & inf_b)
    special = jnp.where(invalid, F64(np.nan), jnp.where(inf_a, F64(1), F64(0)))
    valid = ~invalid & ~inf_a & ~inf_b
    a = jnp.where(valid, jnp.minimum(aa, bb), F64(0.5))
    b = jnp.where(valid, jnp.maximum(aa, bb), F64(0.5))
    alpha = a + b
    bc = a <= F64(1)
    # BC's constants (a <= 1)
    beta_c = div(F64(1), a)
    delta = (F64(1) + b) - a
    k1 = div(R(delta * (F64(0.0138889) + R(F64(0.0416667) * a))), R(b * beta_c) - F64(0.777778))
    k2 = F64(0.25) + R((F64(0.5) + div(F64(0.25), delta)) * a)
    # BB's (a > 1)
    safe_a = jnp.where(bc, F64(2), a)
    safe_b = jnp.where(bc, F64(2), b)
    beta_b = sqrt(div((safe_a + safe_b) - F64(2), R(R(F64(2) * safe_a) * safe_b)
                      - (safe_a + safe_b)))
    gamma = safe_a + div(F64(1), beta_b)
    lo = None if lower is None else _f(lower)
    hi = None if upper is None else _f(upper)

    def body(carry):
        eng, _, _ = carry
        eng, u12 = next_doubles(eng, 2)
        u1, u2 = u12[..., 0], u12[..., 1]
        # One log of u1 / (1 - u1) serves both BC's v and BB's (they differ by the factor).
        log_u = cr.log(div(u1, F64(1) - u1))
        v_c, v_b = R(beta_c * log_u), R(beta_b * log_u)
        exp_c, exp_b = _batched(cr.exp, v_c, v_b)
        w_c, w_b = _w(v_c, exp_c, b), _w(v_b, exp_b, safe_a)
        y = R(u1 * u2)
        z_low = R(u1 * y)
        z_high = R(u1 * u1) * u2
        # BC's z is u1 y below u1 = 1/2, u1**2 u2 above; BB's always u1**2 u2.
        z = jnp.where(bc & (u1 < F64(0.5)), z_low, z_high)
        log_c, log_z, log_b = _batched(cr.log, div(alpha, a + w_c), z,
                                       div(alpha, safe_b + w_b))
        # BC
        low_reject = (R(F64(0.25) * u2) + z_low) - y >= k1
        final = R(alpha * (log_c + v_c)) - F64(BETA_LOG4) >= log_z
        accept_c = jnp.where(u1 < F64(0.5), ~low_reject & final,
                             (z_high <= F64(0.25)) | ((z_high < k2) & final))
        x_c = jnp.where(aa == a, div(a, a + w_c), div(w_c, a + w_c))
        # BB (z is u1**2 u2 there too)
        rb = R(gamma * v_b) - F64(BETA_LOG4)
        sb = (safe_a + rb) - w_b
        accept_b = ((sb + F64(BETA_1_PLUS_LOG5) >= F64(5) * z_high) | (sb > log_z)
                    | ~(rb + R(alpha * log_b) < log_z))
        x_b = jnp.where(aa != a, div(safe_b, safe_b + w_b), div(w_b, safe_b + w_b))
        x = jnp.where(bc, x_c, x_b)
        accept = jnp.where(bc, accept_c, accept_b)
        if lo is not None:
            accept = accept & ~((x < lo) | (x > hi))
        return eng, x, accept

    eng, x, _ = lax.while_loop(lambda c: ~c[2], body, (eng, jnp.zeros_like(a), ~valid))
    return eng, jnp.where(valid, x, special)


# -- compiled draws from one state (jaxpmac.hail's functions call these) ------------------------

@partial(jax.jit, static_argnames=("final_tweak",))
def pois(h, lamb, *, final_tweak: int) -> jax.Array:
    """Hail's ``rand_pois(lamb)`` from the hashed message ``h`` (float64)."""
    return rpois(engine.engine_from_hash(h, final_tweak), lamb)[1]


@partial(jax.jit, static_argnames=("final_tweak",))
def gamma(h, shape, scale, *, final_tweak: int) -> jax.Array:
    """Hail's ``rand_gamma(shape, scale)`` (float64)."""
    return rgamma(engine.engine_from_hash(h, final_tweak), shape, scale)[1]


@partial(jax.jit, static_argnames=("final_tweak", "bounded"))
def beta(h, a, b, lower, upper, *, final_tweak: int, bounded: bool) -> jax.Array:
    """Hail's ``rand_beta(a, b)`` or, ``bounded``, ``rand_beta(a, b, lower, upper)``."""
    eng = engine.engine_from_hash(h, final_tweak)
    if bounded:
        return rbeta(eng, a, b, lower, upper)[1]
    return rbeta(eng, a, b)[1]


@partial(jax.jit, static_argnames=("final_tweak",))
def dirichlet(hs, a, *, final_tweak: int) -> jax.Array:
    """Hail's ``rand_dirichlet(a)``: ``hs`` stacks the hashed messages of ``message + [j]``
    (leading axis ``j``); ``g[j] = rand_gamma(a[j], 1)`` there (0 where ``a[j] == 0``), then
    ``g / sum(g)`` with the sum taken left to right from 0 (Hail's ``hl.sum`` over an array)."""
    a = _f(a)
    g = jax.vmap(lambda h, aj: gamma(h, aj, F64(1), final_tweak=final_tweak))(hs, a)
    g = jnp.where(a == 0, F64(0), g)
    total = lax.fori_loop(0, g.shape[0], lambda j, t: t + g[j], jnp.zeros((), F64))
    return div(g, jnp.broadcast_to(total, g.shape))


# -- rhyper --------------------------------------------------------------------------------------

#: Kachitvichyanukul & Schmeiser (1985), "Computer generation of hypergeometric random
#: variates", JSCS 22 (R's rhyper.c): log(i!) for i <= 7 (afc's table), HIN's scaling 1e25 and
#: its log, H2PE's squeeze constants deltal, deltau; HIN when the mode is within 10 of the
#: minimum; H2PE's explicit evaluation when m < 100 or ix <= 50.
AFC_TABLE = (0.0, 0.0, 0.69314718055994530941723212145817, 1.79175946922805500081247735838070,
             3.17805383034794561964694160129705, 4.78749174278204599424770093452324,
             6.57925121201010099506017829290394, 8.52516136106541430016553103634712)
HYPER_SCALE = 1e25
HYPER_CON = 57.5646273248511421
HYPER_DELTAL = 0.0078
HYPER_DELTAU = 0.0034
HYPER_HIN_LIMIT = 10
HYPER_EXPLICIT_M = 100
HYPER_EXPLICIT_IX = 50
AFC_C1, AFC_C2, AFC_C3 = 0.08333333333333, 0.00277777777777, 0.9189385332


def _afc_many(*ints):
    """R's ``afc(i)`` = log(i!) for each int32 ``i`` (table to 7, Stirling above; -1 for
    i < 0), with one batched ``log``."""
    di = [jnp.asarray(i, I32).astype(F64) for i in ints]
    logs = _batched(cr.log, *(jnp.where(d > 7, d, F64(8)) for d in di))
    table = jnp.asarray(AFC_TABLE, F64)
    out = []
    for i, d, lg in zip(ints, di, logs):
        i = jnp.asarray(i, I32)
        stirling = (((R((d + F64(0.5)) * lg) - d) + div(F64(AFC_C1), d))
                    - div(div(div(F64(AFC_C2), d), d), d)) + F64(AFC_C3)
        small = table[jnp.clip(i, 0, 7)]
        out.append(jnp.where(i < 0, F64(-1), jnp.where(i <= 7, small, stirling)))
    return out


def _wrap_mul(a, b):
    """Java's int32 ``a * b`` (wrapping)."""
    return (a.astype(jnp.uint32) * b.astype(jnp.uint32)).astype(I32)


def rhyper(eng, nn1, nn2, kk):
    """jdistlib's ``HyperGeometric.random(nn1, nn2, kk)`` (a fresh state per call) for int32
    arguments, as a float64 (NaN for invalid arguments: negative, or ``kk > nn1 + nn2``)."""
    nn1, nn2, kk = (jnp.asarray(x, I32) for x in (nn1, nn2, kk))
    total = nn1 + nn2
    valid = (nn1 >= 0) & (nn2 >= 0) & (kk >= 0) & (kk <= total)
    tn = total.astype(F64)
    n1, n2 = jnp.minimum(nn1, nn2), jnp.maximum(nn1, nn2)
    upper_half = (kk + kk).astype(F64) >= tn
    k = jnp.where(upper_half, java_int(tn - kk.astype(F64)), kk)
    n1f, n2f, kf = n1.astype(F64), n2.astype(F64), k.astype(F64)
    m = java_int(div(R((kf + F64(1)) * (n1f + F64(1))), tn + F64(2)))
    mf = m.astype(F64)
    minjx = jnp.maximum(0, k - n2)
    maxjx = jnp.minimum(n1, k)
    degenerate = ~valid | (minjx == maxjx)
    hin = ~degenerate & (m - minjx < HYPER_HIN_LIMIT)
    h2pe = ~degenerate & ~hin

    # HIN
    below = k < n2
    afc = _afc_many(jnp.where(below, n2, n1), jnp.where(below, n1 + n2 - k, k),
                    jnp.where(below, n2 - k, k - n2), n1 + n2)
    lw = ((afc[0] + afc[1]) - afc[2]) - afc[3]
    w = cr.exp(lw + F64(HYPER_CON))

    def hin_body(carry):
        eng, u, p, ix, fresh, done = carry

        def draw(eng):
            eng, u = next_double(eng)
            return eng, u * F64(HYPER_SCALE)

        eng, u_new = lax.cond(fresh & ~done, draw, lambda e: (e, u), eng)
        u = jnp.where(fresh, u_new, u)
        p = jnp.where(fresh, w, p)
        ix = jnp.where(fresh, minjx, ix)
        step = ~done & (u > p)
        u2 = u - p
        p2 = p * _wrap_mul(n1 - ix, k - ix).astype(F64)
        ix2 = ix + 1
        p2 = div(div(p2, ix2.astype(F64)), (n2 - k + ix2).astype(F64))
        restart = step & (ix2 > maxjx)
        return (eng, jnp.where(step, u2, u), jnp.where(step, p2, p),
                jnp.where(step, ix2, ix), restart, done | (~done & ~step))

    zero = jnp.zeros_like(tn)
    init = (eng, zero, zero, minjx, jnp.ones_like(hin), ~hin)
    eng, _, _, ix_hin, _, _ = lax.while_loop(lambda c: ~c[-1], hin_body, init)

    # H2PE setup
    s = sqrt(div(div(div(R(R(R((tn - kf) * kf) * n1f) * n2f), tn - F64(1)), tn), tn))
    d = java_int(F64(1.5) * s).astype(F64) + F64(0.5)
    xl = (mf - d) + F64(0.5)
    xr = (mf + d) + F64(0.5)
    afc = _afc_many(m, n1 - m, k - m, n2 - k + m,
                    java_int(xl), java_int(n1f - xl), java_int(kf - xl),
                    java_int((n2f - kf) + xl),
                    java_int(xr - F64(1)), java_int((n1f - xr) + F64(1)),
                    java_int((kf - xr) + F64(1)), java_int(((n2f - kf) + xr) - F64(1)))
    a = ((afc[0] + afc[1]) + afc[2]) + afc[3]
    kl, kr = _batched(cr.exp, (((a - afc[4]) - afc[5]) - afc[6]) - afc[7],
                      (((a - afc[8]) - afc[9]) - afc[10]) - afc[11])
    log_l, log_r = _batched(
        cr.log,
        div(div(R(xl * ((n2f - kf) + xl)), (n1f - xl) + F64(1)), (kf - xl) + F64(1)),
        div(div(R(((n1f - xr) + F64(1)) * ((kf - xr) + F64(1))), xr), (n2f - kf) + xr))
    lamdl, lamdr = -log_l, -log_r
    p1 = d + d
    p2 = p1 + div(kl, lamdl)
    p3 = p2 + div(kr, lamdr)

    def explicit_f(ix):
        """f = P(ix) / P(m) by the recurrence (R's explicit evaluation)."""
        up = m < ix
        lo_i = jnp.where(up, m + 1, ix + 1)
        hi_i = jnp.where(up, ix, m)

        def step(i, f):
            fi = i.astype(F64)
            f_up = div(div(R(f * ((n1f - fi) + F64(1))) * ((kf - fi) + F64(1)),
                           (n2f - kf) + fi), fi)
            f_down = div(div(R(f * fi) * ((n2f - kf) + fi), (n1f - fi) + F64(1)),
                         (kf - fi) + F64(1))
            return jnp.where(up, f_up, f_down)

        return lax.fori_loop(lo_i, hi_i + 1, step, jnp.ones_like(tn))

    def h2pe_body(carry):
        eng, _, done = carry
        eng, uv = next_doubles(eng, 2)
        u = R(uv[..., 0] * p3)           # rounded: Java's product, not fused into xl + u
        v = uv[..., 1]
        log_v = cr.log(v)
        rect = u < p1
        left = ~rect & (u <= p2)
        ix_rect = java_int(xl + u)
        ix_left = java_int(xl + div(log_v, lamdl))
        ix_right = java_int(xr - div(log_v, lamdr))
        ix = jnp.where(rect, ix_rect, jnp.where(left, ix_left, ix_right))
        out_of_range = (left & (ix_left < minjx)) | (~rect & ~left & (ix_right > maxjx))
        v = jnp.where(rect, v, jnp.where(left, R(v * (u - p1)) * lamdl,
                                         R(v * (u - p2)) * lamdr))
        explicit = (m < HYPER_EXPLICIT_M) | (ix <= HYPER_EXPLICIT_IX)
        accept_explicit = v <= lax.cond(jnp.any(explicit & ~done), explicit_f,
                                        lambda ix: jnp.ones_like(tn), ix)
        # squeeze
        y = ix.astype(F64)
        y1 = y + F64(1)
        ym = y - mf
        yn = (n1f - y) + F64(1)
        yk = (kf - y) + F64(1)
        nk = (n2f - kf) + y1
        r = div(-ym, y1)
        s_ = div(ym, yn)
        t = div(ym, yk)
        e = div(-ym, nk)
        g = div(R(yn * yk), R(y1 * nk)) - F64(1)
        dg = jnp.where(g < 0, F64(1) + g, F64(1))
        gu = R(g * (F64(1) + R(g * (F64(-0.5) + div(g, F64(3))))))
        gl = gu - div(R(F64(0.25) * R(R(R(g * g) * g) * g)), dg)
        xm = mf + F64(0.5)
        xn = (n1f - mf) + F64(0.5)
        xk = (kf - mf) + F64(0.5)
        nm = (n2f - kf) + xm

        def cube_term(c, z):
            return R(R(c * z) * (F64(1) + R(z * (F64(-0.5) + div(z, F64(3))))))

        ub = ((((((R(y * gu) - R(mf * gl)) + F64(HYPER_DELTAU)) + cube_term(xm, r))
                + cube_term(xn, s_)) + cube_term(xk, t)) + cube_term(nm, e))
        afc_ix = _afc_many(ix, n1 - ix, k - ix, n2 - k + ix)
        alv = cr.log(v)

        def fourth(c, z):
            q = R(c * R(R(R(z * z) * z) * z))
            return jnp.where(z < 0, div(q, F64(1) + z), q)

        lower = ((ub - R(F64(0.25) * (((fourth(xm, r) + fourth(xn, s_)) + fourth(xk, t))
                                      + fourth(nm, e))))
                 + R((y + mf) * (gl - gu))) - F64(HYPER_DELTAL)
        stirling = (((a - afc_ix[0]) - afc_ix[1]) - afc_ix[2]) - afc_ix[3]
        accept_squeeze = (alv <= ub) & ((alv < lower) | (alv <= stirling))
        accept = ~out_of_range & jnp.where(explicit, accept_explicit, accept_squeeze)
        return eng, jnp.where(done, carry[1], ix), done | accept

    eng, ix_h2pe, _ = lax.while_loop(lambda c: ~c[2], h2pe_body,
                                     (eng, jnp.zeros_like(minjx), ~h2pe))
    ix = jnp.where(hin, ix_hin, jnp.where(h2pe, ix_h2pe, maxjx))
    ix = jnp.where(upper_half, jnp.where(nn1 > nn2, kk - nn2 + ix, nn1 - ix),
                   jnp.where(nn1 > nn2, kk - ix, ix))
    return eng, jnp.where(valid, ix.astype(F64), F64(np.nan))


@partial(jax.jit, static_argnames=("final_tweak",))
def hyper(h, popsize, ngood, nsample, *, final_tweak: int) -> jax.Array:
    """Hail's ``rand_hyper``: ``(int) rhyper(ngood, popsize - ngood, nsample)`` (int32)."""
    popsize, ngood = jnp.asarray(popsize, I32), jnp.asarray(ngood, I32)
    x = rhyper(engine.engine_from_hash(h, final_tweak), ngood, popsize - ngood, nsample)[1]
    return java_int(x)


@partial(jax.jit, static_argnames=("final_tweak",))
def multi_hyper(h, colors, nsample, *, final_tweak: int) -> jax.Array:
    """Hail's ``rand_multi_hyper``: one engine; per color ``n`` in order, ``remaining -= n``,
    ``drawn = (int) rhyper(n, remaining, to_sample)``, ``to_sample -= drawn`` (int32)."""
    colors = jnp.asarray(colors, I32)
    remaining = lax.fori_loop(0, colors.shape[0], lambda j, t: t + colors[j], jnp.int32(0))

    def step(carry, n):
        eng, remaining, to_sample = carry
        remaining = remaining - n
        eng, x = rhyper(eng, n, remaining, to_sample)
        drawn = java_int(x)
        return (eng, remaining, to_sample - drawn), drawn

    init = (engine.engine_from_hash(h, final_tweak), remaining, jnp.asarray(nsample, I32))
    return lax.scan(step, init, colors)[1]
