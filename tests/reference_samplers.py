"""Pure-Python reference samplers: jaxpmac's documented algorithms on the oracle's stream.

Written from the algorithms the sampler docstrings state (jaxpmac/_samplers/_unit.py, _normal.py,
_simple_continuous.py, _gamma_family.py, _counts.py, _integers.py, _uniform.py, _retry.py),
on top of :mod:`reference_oracle` -- never by calling jaxpmac. Plain Python ints and floats and
the ``math`` module; ``numpy`` only to round to float32 (``np.float32``).

Only the float32 computation (x64 off: every sampler computes in float32, half types too) is
modelled. Every float32 operation is emulated as "compute in double, round to float32", which
gives the correctly rounded float32 result for ``+ - * / sqrt`` (double has more than twice
float32's precision). Transcendental functions (``log``, ``ndtri``, ...) are evaluated in
double on the float32 argument and rounded: the *correctly rounded* value, which XLA's float32
approximations match only to a few ulp. Tests therefore compare floats within stated ulp
tolerances, and decisions (rejection tests, inverse-CDF searches, argmax) exactly, except where
the reference finds its own statistic within a stated margin of the decision boundary: such
cases are reported (``ambiguous``) so the tests can set them aside explicitly.

A :class:`Message` is the oracle's view of a state: ``key(nonce).split_static(*labels)
.split(*message)``; :meth:`Message.static_child` and :meth:`Message.child` mirror
``split_static`` and ``split``.
"""

from __future__ import annotations

import math
import statistics

import numpy as np

import reference_oracle as ro

EPS32 = 2.0 ** -23                        # float32 machine epsilon
TINY32 = 2.0 ** -126                      # smallest normal float32

# Labels of the sub-streams (the constants documented in the sampler modules).
PRECISE_LABEL = "jaxpmac.uniform.precise"
GAMMA_RETRY_LABEL = "jaxpmac.gamma.retry"
GAMMA_BOOST_LABEL = "jaxpmac.gamma.boost"
BETA_B_LABEL = "jaxpmac.beta.b"
POISSON_RETRY_LABEL = "jaxpmac.poisson.retry"
BINOMIAL_RETRY_LABEL = "jaxpmac.binomial.retry"
SMALL_MEAN = 10.0

_NORMAL = statistics.NormalDist()


def f32(x) -> float:
    """``x`` rounded to float32 (round to nearest even), as a Python float."""
    return float(np.float32(x))


def flush32(x: float) -> float:
    """A float32 parameter as jaxpmac reads it: subnormals as zero (``_sampler_args``)."""
    return 0.0 if abs(x) < np.finfo(np.float32).tiny else x


def nextafter32(x: float, toward: float) -> float:
    return float(np.nextafter(np.float32(x), np.float32(toward)))


# -- messages and streams ---------------------------------------------------------------------

class Message:
    """``(nonce, static words, dynamic words)`` of a state, with the oracle's streams."""

    def __init__(self, nonce, label_list=(), message=()):
        self.nonce = ro.to_word(nonce)
        self.static = [w for label in label_list for w in ro.label_words(label)]
        self.dynamic = [ro.to_word(m) for m in message]

    def static_child(self, label) -> "Message":
        child = Message(self.nonce)
        child.static = self.static + ro.label_words(label)
        child.dynamic = list(self.dynamic)
        return child

    def child(self, uid) -> "Message":
        child = Message(self.nonce)
        child.static = list(self.static)
        child.dynamic = self.dynamic + [ro.to_word(uid)]
        return child

    def words32(self, n: int) -> list[int]:
        return ro.stream32(self.nonce, self.static, self.dynamic, n)

    def words64(self, n: int) -> list[int]:
        return ro.stream64(self.nonce, self.static, self.dynamic, n)


# -- unit-interval primitives (jaxpmac/_samplers/_unit.py) -----------------------------------------

def fast_unit(word: int) -> float:
    """float32 fast uniform: the top 23 bits as the mantissa of ``[1, 2)``, minus 1."""
    return (word >> 9) * 2.0 ** -23


def symmetric_unit(word: int) -> tuple[bool, float]:
    """``(upper, p)``: top bit, and ``p = (float32(k) + 1/2) * 2**-32`` rounded in float32."""
    k = word & 0x7FFFFFFF
    return bool(word >> 31), f32(f32(float(k)) + 0.5) * 2.0 ** -32


def log_unit_pair(word: int) -> tuple[float, float]:
    """``(log u, log(1 - u))`` through ``p``: ``log(p)`` and ``log1p(-p)``."""
    upper, p = symmetric_unit(word)
    log_p, log_q = f32(math.log(p)), f32(math.log1p(-p))
    return (log_q, log_p) if upper else (log_p, log_q)


def open_unit(word: int) -> float:
    """float32 uniform in ``(0, 1)``: ``(top 23 bits + 1/2) * 2**-23`` (exact in float32)."""
    return ((word >> 9) + 0.5) * 2.0 ** -23


def ndtri(p: float) -> float:
    """The standard normal quantile, in double."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def ndtr(x: float) -> float:
    """The standard normal CDF, in double (via erfc: relative precision in the lower tail)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def log1p(x: float) -> float:
    """``log1p`` extended like IEEE: ``-inf`` at -1, NaN below."""
    if x <= -1.0:
        return -math.inf if x == -1.0 else math.nan
    return math.log1p(x)


def normal_pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


# -- uniform (jaxpmac/_samplers/_uniform.py) -------------------------------------------------------

def _trailing_zeros(x: int, width: int) -> int:
    return width if x == 0 else (x & -x).bit_length() - 1


def precise_unit32(msg: Message, n: int) -> list[float]:
    """float32 ``uniform(precise=True)`` in ``[0, 1)``: element ``i`` reads 64-bit word ``i``
    (32-bit elements ``2i`` low, ``2i+1`` high): mantissa from the top 23 bits, the binade from
    the trailing zeros of the other 41 bits, continued on ``split_static(PRECISE_LABEL)
    .split(t)`` while all counting bits were zero and ``zeros < 126``."""
    words = msg.words32(2 * n)
    out = []
    for i in range(n):
        lo, hi = words[2 * i], words[2 * i + 1]
        mantissa = hi >> 9
        hi_rest = hi & 0x1FF
        zeros = _trailing_zeros(lo, 32) if lo else 32 + _trailing_zeros(hi_rest, 9)
        exhausted = lo == 0 and hi_rest == 0
        t = 1
        while exhausted and zeros < 126:
            more = msg.static_child(PRECISE_LABEL).child(t).words32(2 * n)
            mlo, mhi = more[2 * i], more[2 * i + 1]
            zeros += _trailing_zeros(mlo, 32) if mlo else 32 + _trailing_zeros(mhi, 32)
            exhausted = mlo == 0 and mhi == 0
            t += 1
        bits = (max(126 - zeros, 0) << 23) | mantissa
        out.append(float(np.array(bits, np.uint32).view(np.float32)))
    return out


def scale(unit: float, minval: float, maxval: float) -> float:
    """``unit * (maxval - minval) + minval`` in float32, the product rounded on its own (never
    fused into the addition), clamped to ``[minval, nextafter(maxval, -inf)]``."""
    width = f32(maxval - minval)
    value = f32(f32(unit * width) + minval)
    return max(minval, min(value, nextafter32(maxval, -math.inf)))


def normal(msg: Message, n: int) -> list[float]:
    """Standard normals: ``-+ndtri(p)`` of word ``i`` (sign from the top bit)."""
    out = []
    for word in msg.words32(n):
        upper, p = symmetric_unit(word)
        x = f32(ndtri(p))
        out.append(-x if upper else x)
    return out


def exponential_of(word: int) -> float:
    return -log_unit_pair(word)[1]


def gumbel_of(word: int) -> float:
    return -f32(math.log(-log_unit_pair(word)[0]))


def logistic_of(word: int) -> float:
    log_u, log_q = log_unit_pair(word)
    return f32(log_u - log_q)


def laplace_of(word: int) -> float:
    upper, p = symmetric_unit(word)
    magnitude = -f32(math.log(2.0 * p))
    return magnitude if upper else -magnitude


def cauchy_of(word: int) -> float:
    upper, p = symmetric_unit(word)
    magnitude = f32(1.0 / f32(math.tan(f32(f32(math.pi) * p))))
    return magnitude if upper else -magnitude


TRANSFORMS = {"exponential": exponential_of, "gumbel": gumbel_of, "logistic": logistic_of,
              "laplace": laplace_of, "cauchy": cauchy_of}


def unit_transform(msg: Message, n: int, kind: str) -> list[float]:
    return [TRANSFORMS[kind](word) for word in msg.words32(n)]


# -- closed forms of derived samplers (jaxpmac/_samplers/_derived_continuous.py) -------------------

def normal_of(word: int) -> float:
    """The standard normal of one word: ``-+ndtri(p)``."""
    upper, p = symmetric_unit(word)
    x = f32(ndtri(p))
    return -x if upper else x


def exp32(x: float) -> float:
    """float32 ``exp``, results below the smallest normal float32 flushed to 0 (as XLA on CPU
    does, and as jaxpmac's own float32 ``exp`` gives below ``2**-127``)."""
    y = f32(math.exp(x)) if x < 89 else math.inf
    return 0.0 if y < TINY32 else y


def pareto_of(word: int, b: float) -> float:
    """``exp(E * (1 / b))`` for the exponential ``E`` of the word."""
    return exp32(f32(exponential_of(word) * f32(1.0 / b)))


def weibull_of(word: int, scale: float, concentration: float) -> float:
    """``scale * exp(log(E) * (1 / concentration))``."""
    log_e = f32(math.log(exponential_of(word)))
    x = f32(scale * exp32(f32(log_e * f32(1.0 / concentration))))
    return 0.0 if x < TINY32 else x


def rayleigh_of(word: int, scale: float) -> float:
    """``scale * sqrt(2 E)``."""
    return f32(scale * f32(math.sqrt(f32(2.0 * exponential_of(word)))))


def signed_maxwell_of(normal_word: int, exponential_word: int) -> float:
    """``sign(Z) sqrt(Z**2 + 2E)``: ``Z`` of word ``2i``, ``E`` of word ``2i + 1``."""
    z = normal_of(normal_word)
    magnitude = f32(math.sqrt(f32(f32(z * z) + f32(2.0 * exponential_of(exponential_word)))))
    return -magnitude if z < 0 else magnitude


def wald_of(normal_word: int, uniform_word: int, mean: float, margin: float
            ) -> tuple[float, bool]:
    """Michael--Schucany--Haas with ``r = 1 / (1 + w + sqrt(w (w + 2)))``,
    ``w = mean Z**2 / 2``: ``(value, ambiguous)``, ambiguous when ``u (1 + r)`` lies within
    ``margin`` of 1 (the decision)."""
    z = normal_of(normal_word)
    u = open_unit(uniform_word)
    y = f32(z * z)
    w = f32(mean * f32(0.5 * y))
    r = f32(1.0 / f32(f32(1.0 + w) + f32(math.sqrt(f32(w * f32(w + 2.0))))))
    statistic = f32(u * f32(1.0 + r))
    value = f32(mean * r) if statistic <= 1.0 else f32(mean / r)
    return value, abs(u * (1.0 + r) - 1.0) < margin


def triangular_of(word: int, left: float, mode: float, right: float) -> float:
    """The inverse CDF at ``u`` of the word (``u`` and ``1 - u`` from ``symmetric_unit``)."""
    upper, p = symmetric_unit(word)
    u, q = (f32(1.0 - p), p) if upper else (p, f32(1.0 - p))
    width = f32(right - left)
    below = f32(left + f32(math.sqrt(f32(u * f32(width * f32(mode - left))))))
    above = f32(right - f32(math.sqrt(f32(q * f32(width * f32(right - mode))))))
    x = below if u < f32(f32(mode - left) / width) else above
    return min(max(x, left), right)


def truncated_normal(msg: Message, lower: list[float], upper: list[float]) -> list[dict]:
    """Per element: ``value`` and ``abs_err`` (the error a few-ulp ``ndtr``/``ndtri`` causes,
    at ``ulp_ndtr`` ulp of ``Phi`` and 8 ulp of ``x``; the caller scales it).

    ``ndtri(Phi(a) + u (Phi(b) - Phi(a)))`` on the mirror image when ``lower > 0``, clipped
    into ``(nextafter(lower, inf), nextafter(upper, -inf))``."""
    out = []
    for word, lo, hi in zip(msg.words32(len(lower)), map(flush32, lower), map(flush32, upper)):
        flip = lo > 0
        a, b = (-hi, -lo) if flip else (lo, hi)
        cdf_a, cdf_b = f32(ndtr(a)), f32(ndtr(b))
        u = open_unit(word)
        c = f32(cdf_a + f32(u * f32(cdf_b - cdf_a)))
        x = f32(ndtri(c))
        # The error of c (relative to the larger CDF value) moves x by dc / pdf(x).
        pdf = normal_pdf(x) if math.isfinite(x) else 0.0
        phi_err = max(cdf_a, cdf_b) / pdf if pdf > 0 else math.inf
        x = -x if flip else x
        x = min(max(x, nextafter32(lo, math.inf)), nextafter32(hi, -math.inf))
        out.append(dict(value=x, phi_err=phi_err))
    return out


# -- gamma, beta, dirichlet (jaxpmac/_samplers/_gamma_family.py) -----------------------------------

def log_gamma(msg: Message, alphas: list[float], margin: float) -> tuple[list[dict], bool]:
    """``log`` of Gamma(alpha) draws by Marsaglia--Tsang, per element a dict with ``value``
    (log x in float32 arithmetic) and ``scale`` (sum of magnitudes entering ``log x``, for an
    error bound); and ``ambiguous``: some accept/reject decision or the sign of ``1 + c x``
    lay within ``margin`` (relative to the magnitudes of its terms) of its boundary.

    Try 0 of element ``i`` reads 32-bit words ``2i`` (normal), ``2i+1`` (uniform); try ``t``
    the same words of ``split_static(GAMMA_RETRY_LABEL).split(t)``; ``alpha < 1`` adds
    ``log(U) / alpha`` with ``U`` from word ``i`` of ``split_static(GAMMA_BOOST_LABEL)``.
    """
    n = len(alphas)
    tries = {0: msg.words32(2 * n)}
    boost_words = msg.static_child(GAMMA_BOOST_LABEL).words32(n)
    retries = msg.static_child(GAMMA_RETRY_LABEL)
    out, ambiguous = [], False
    for i, alpha in enumerate(alphas):
        alpha = f32(alpha)
        if not (0 < alpha < math.inf):
            value = -math.inf if alpha == 0 else (math.inf if alpha == math.inf else math.nan)
            out.append(dict(value=value, scale=0.0))
            continue
        boosted = alpha < 1
        a = f32(alpha + 1) if boosted else alpha
        d = f32(a - f32(1 / 3))
        c = f32(1 / math.sqrt(f32(9 * d)))
        t = 0
        while True:
            if t not in tries:
                tries[t] = retries.child(t).words32(2 * n)
            w0, w1 = tries[t][2 * i], tries[t][2 * i + 1]
            upper, p = symmetric_unit(w0)
            x = f32(ndtri(p))
            x = -x if upper else x
            log_u = log_unit_pair(w1)[0]
            y = f32(1 + f32(c * x))
            v = f32(f32(y * y) * y)
            if abs(y) <= margin * (1 + abs(c * x)):
                ambiguous = True
            if v > 0:
                log_v = f32(math.log(v))
                stat = f32(f32(f32(f32(f32(0.5 * x) * x) + d) - f32(d * v)) + f32(d * log_v))
                scale = 0.5 * x * x + d + abs(d * v) + abs(d * log_v) + abs(log_u)
                if abs(log_u - stat) <= margin * scale:
                    ambiguous = True
                if log_u < stat:
                    break
            t += 1
        log_d = f32(math.log(d))
        boost = f32(log_unit_pair(boost_words[i])[0] / alpha) if boosted else 0.0
        value = f32(f32(log_d + log_v) + boost)
        # log_v moves by 3 c dx / y for an error dx ~ |x| ulp in x.
        scale = 1 + abs(log_d) + abs(log_v) + abs(boost) + abs(value) + 3 * abs(c * x / y)
        out.append(dict(value=value, scale=scale))
    return out, ambiguous


# -- poisson, binomial (jaxpmac/_samplers/_counts.py) ----------------------------------------------

def _inversion(u, first_pmf, ratio, limit, margin, slack):
    """Smallest ``k`` with ``u <= cdf(k)`` by sequential float32 search, stopping at ``limit``
    or once ``pmf <= eps * cdf``; ``ambiguous`` when a comparison was within ``margin * (slack
    + k + 1)`` relative of its boundary (the pmf/cdf values carry the error of ``first_pmf``
    and one rounding per step)."""
    k, pmf, cdf = 0.0, first_pmf, first_pmf
    ambiguous = False
    while True:
        tol = margin * (slack + k + 1)
        if abs(u - cdf) <= tol * cdf or abs(pmf - EPS32 * cdf) <= tol * pmf:
            ambiguous = True
        if not (u > cdf and k < limit and pmf > EPS32 * cdf):
            return k, ambiguous
        pmf = f32(pmf * ratio(k))
        k += 1
        cdf = f32(cdf + pmf)


def poisson(msg: Message, lams: list[float], margin: float) -> tuple[list[int], bool]:
    """Poisson draws (int32): inversion on word ``2i`` for ``lam < 10``, else PTRS (Hormann
    1993) with uniforms from words ``2i``, ``2i+1`` of try ``t`` (``t >= 1``:
    ``split_static(POISSON_RETRY_LABEL).split(t)``). ``ambiguous`` as in :func:`log_gamma`."""
    n = len(lams)
    tries = {0: msg.words32(2 * n)}
    retries = msg.static_child(POISSON_RETRY_LABEL)
    out, ambiguous = [], False
    top = 2 ** 31 - 1
    for i, lam in enumerate(lams):
        lam = f32(lam)
        if not lam >= 0:
            out.append(-1)
            continue
        if lam == math.inf:
            out.append(top)
            continue
        if lam < SMALL_MEAN:
            u = open_unit(tries[0][2 * i])
            k, amb = _inversion(u, f32(math.exp(-lam)), lambda k: f32(lam / f32(k + 1)),
                                1000, margin, 1)
            ambiguous |= amb
            out.append(int(k))
            continue
        log_lam = f32(math.log(lam))
        b = f32(f32(0.931) + f32(f32(2.53) * f32(math.sqrt(lam))))
        a = f32(f32(-0.059) + f32(f32(0.02483) * b))
        inv_alpha = f32(f32(1.1239) + f32(f32(1.1328) / f32(b - f32(3.4))))
        v_r = f32(f32(0.9277) - f32(f32(3.6224) / f32(b - 2)))
        t = 0
        while True:
            if t not in tries:
                tries[t] = retries.child(t).words32(2 * n)
            u, v = open_unit(tries[t][2 * i]) - 0.5, open_unit(tries[t][2 * i + 1])
            us = 0.5 - abs(u)
            slope = f32(f32(2 * a) / us)
            k_real = f32(f32(f32(f32(slope + b) * u) + lam) + f32(0.43))
            k = math.floor(k_real)
            if abs(k_real - round(k_real)) <= margin * (abs(slope * u) + abs(b * u) + lam + 1):
                ambiguous = True
            if abs(v - v_r) <= margin:
                ambiguous = True
            accept_fast = us >= f32(0.07) and v <= v_r
            reject = k < 0 or (us < f32(0.013) and v > us)
            s = f32(math.log(f32(f32(v * inv_alpha) / f32(f32(a / f32(us * us)) + b))))
            lgam = f32(math.lgamma(k + 1)) if k >= 0 else math.nan
            t_stat = f32(f32(-lam + f32(k * log_lam)) - lgam) if k >= 0 else math.nan
            if not accept_fast and not reject:
                scale = abs(s) + lam + abs(k * log_lam) + abs(lgam) + 1
                if abs(s - t_stat) <= margin * scale:
                    ambiguous = True
            if accept_fast or (not reject and s <= t_stat):
                break
            t += 1
        out.append(min(k, top))
    return out, ambiguous


_STIRLING = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
             0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
             0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
             0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return f32(_STIRLING[int(min(max(k, 0), 9))])
    kp1 = f32(k + 1)
    kp1_sq = f32(kp1 * kp1)
    inner = f32(f32(1.0 / 360) - f32(f32(1.0 / 1260) / kp1_sq))
    return f32(f32(f32(1.0 / 12) - f32(inner / kp1_sq)) / kp1)


def binomial(msg: Message, counts: list[float], probs: list[float],
             margin: float) -> tuple[list[float], bool]:
    """Binomial draws (as floats): ``p > 1/2`` as ``n - Binomial(n, 1 - p)``; inversion on word
    ``2i`` for ``n p < 10``, else BTRS (Hormann 1993) with uniforms from words ``2i``, ``2i+1``
    of try ``t`` (``t >= 1``: ``split_static(BINOMIAL_RETRY_LABEL).split(t)``)."""
    n_el = len(counts)
    tries = {0: msg.words32(2 * n_el)}
    retries = msg.static_child(BINOMIAL_RETRY_LABEL)
    out, ambiguous = [], False
    for i, (count, prob) in enumerate(zip(counts, probs)):
        count, prob = f32(count), f32(prob)
        flip = prob > 0.5
        q = f32(1 - prob) if flip else prob
        if not (count >= 0 and 0 <= q <= 0.5 and count < math.inf):
            out.append(math.inf if count == math.inf and 0 < prob <= 1 else math.nan)
            continue
        n, p = count, q
        if f32(n * p) < SMALL_MEAN:
            u = open_unit(tries[0][2 * i])
            q1 = f32(1 - p)
            first = f32(q1 ** n)
            slack = 2 + abs(n * math.log(q1)) if q1 > 0 else 2
            k, amb = _inversion(
                u, first, lambda j: f32(f32(f32(f32(n - j) / f32(j + 1)) * p) / q1), n,
                margin, slack)
            ambiguous |= amb
        else:
            spq = f32(math.sqrt(f32(f32(n * p) * f32(1 - p))))
            b = f32(f32(1.15) + f32(f32(2.53) * spq))
            a = f32(f32(f32(-0.0873) + f32(f32(0.0248) * b)) + f32(f32(0.01) * p))
            c = f32(f32(n * p) + 0.5)
            v_r = f32(f32(0.92) - f32(f32(4.2) / b))
            alpha = f32(f32(f32(2.83) + f32(f32(5.1) / b)) * spq)
            m = float(math.floor(f32(f32(n + 1) * p)))
            t = 0
            while True:
                if t not in tries:
                    tries[t] = retries.child(t).words32(2 * n_el)
                u, v = open_unit(tries[t][2 * i]) - 0.5, open_unit(tries[t][2 * i + 1])
                us = 0.5 - abs(u)
                slope = f32(f32(2 * a) / us)
                k_real = f32(f32(f32(slope + b) * u) + c)
                k = float(math.floor(k_real))
                if abs(k_real - round(k_real)) <= margin * (abs(slope * u) + abs(b * u) + c):
                    ambiguous = True
                if abs(v - v_r) <= margin:
                    ambiguous = True
                accept_fast = us >= f32(0.07) and v <= v_r
                in_range = 0 <= k <= n
                kk = min(max(k, 0.0), n)
                log_v = f32(math.log(f32(f32(v * alpha) / f32(f32(a / f32(us * us)) + b))))
                ratio_m = f32(f32(f32(m + 1) - f32(p * f32(n + 2)))
                              / f32(p * f32(f32(n - m) + 1)))
                ratio_k = f32(f32(kk - m) / f32(f32(n - kk) + 1))
                ratio_p = f32(f32(f32(f32(p * f32(n + 2)) - kk) - 1)
                              / f32(f32(1 - p) * f32(kk + 1)))
                terms = [f32(f32(m + 0.5) * f32(log1p(ratio_m))),
                         f32(f32(n + 1) * f32(log1p(ratio_k))),
                         f32(f32(kk + 0.5) * f32(log1p(ratio_p))),
                         _stirling_tail(m), _stirling_tail(f32(n - m)),
                         -_stirling_tail(kk), -_stirling_tail(f32(n - kk))]
                bound = terms[0]
                for term in terms[1:]:
                    bound = f32(bound + term)
                if not accept_fast and in_range:
                    scale = abs(log_v) + sum(abs(x) for x in terms) + 1
                    if abs(log_v - bound) <= margin * scale:
                        ambiguous = True
                if accept_fast or (in_range and log_v <= bound):
                    break
                t += 1
        out.append(f32(n - k) if flip else k)
    return out, ambiguous


# -- integers (jaxpmac/_samplers/_integers.py) -----------------------------------------------------

def sort_order(msg: Message, n: int) -> list[int]:
    """``argsort`` of 64-bit keys (key ``j`` = 64-bit word ``j``), ties in index order."""
    keys = msg.words64(n)
    return sorted(range(n), key=lambda j: (keys[j], j))


def uniform_indices(msg: Message, n_draws: int, n: int) -> list[int]:
    """``floor(x * n / 2**64)`` for 64-bit word ``i``."""
    return [(x * n) >> 64 for x in msg.words64(n_draws)]


def weighted_indices(msg: Message, n_draws: int, p: list[float],
                     margin: float) -> tuple[list[int], bool]:
    """Inverse CDF on float32 running sums: first ``j`` with ``cum[j] >= u * cum[-1]``, ``u``
    the open uniform of word ``i``; ``ambiguous`` if a running sum lies within ``margin *
    (j + 1) * total`` of the target (the summation order of XLA's cumsum may differ)."""
    cum, total = [], 0.0
    for x in p:
        total = f32(total + f32(x))
        cum.append(total)
    out, ambiguous = [], False
    for word in msg.words32(n_draws):
        target = f32(open_unit(word) * total)
        index = next((j for j, s in enumerate(cum) if s >= target), len(p))
        out.append(min(index, len(p) - 1))
        ambiguous |= any(abs(s - target) <= margin * (j + 1) * total
                         for j, s in enumerate(cum))
    return out, ambiguous


def top_indices(values: list[float], k: int, scales: list[float],
                margin: float) -> tuple[list[int], bool]:
    """Indices of the ``k`` largest ``values`` (largest first, ties to the lower index);
    ``ambiguous`` if two of the first ``k + 1`` lie within ``margin * scale`` of each other."""
    order = sorted(range(len(values)), key=lambda j: (-values[j], j))
    head = order[:k + 1]
    ambiguous = any(abs(values[x] - values[y]) <= margin * max(scales[x], scales[y])
                    for x, y in zip(head, head[1:]))
    return order[:k], ambiguous


# -- rademacher, geometric (jaxpmac/_samplers/_discrete_multivariate.py) ---------------------------

def rademacher(msg: Message, n: int) -> list[int]:
    """Element ``i`` is bit ``i mod 32`` (least significant first) of 32-bit word ``i // 32``:
    1 gives +1, 0 gives -1."""
    words = msg.words32(-(-n // 32))
    return [1 if (words[i // 32] >> (i % 32)) & 1 else -1 for i in range(n)]


def geometric(msg: Message, probs: list[float], margin: float) -> tuple[list[int], bool]:
    """int32 Geometric draws: ``floor(log(u) / log1p(-p)) + 1`` with ``log(u)`` of word ``i``
    (:func:`log_unit_pair`) and ``log1p(-p)`` correctly rounded to float32; ``p = 0`` and values
    past the int32 range give ``2**31 - 1``, ``p`` outside ``[0, 1]`` or NaN gives -1.
    ``ambiguous`` when the quotient lies within ``margin`` (relative) of an integer, where the
    few-ulp differences of XLA's ``log``/``log1p`` can move the floor."""
    top = 2 ** 31 - 1
    words = msg.words32(len(probs))
    out, ambiguous = [], False
    for word, p in zip(words, probs):
        p = f32(p)
        if not 0 <= p <= 1:
            out.append(-1)
            continue
        if p == 0:
            out.append(top)
            continue
        log_u = log_unit_pair(word)[0]
        log_q = f32(math.log1p(-p)) if p < 1 else -math.inf
        quotient = f32(log_u / log_q)
        if quotient != 0 and abs(quotient - round(quotient)) <= margin * max(1.0, quotient):
            ambiguous = True
        k = math.floor(quotient) + 1
        out.append(top if k > top else k)
    return out, ambiguous


# -- orthogonal (jaxpmac/_samplers/_random_geometry.py) --------------------------------------------

def gram_schmidt32(z: list[list[float]]) -> list[list[float]]:
    """``Q`` of ``z = Q R`` (rows >= columns), float32 op by op as documented: column ``j`` less
    its projections on columns ``0 .. j-1`` (coefficients ``sum_r Q[r, i] v[r]`` added first to
    last, then ``v -= c_i Q[:, i]`` for ``i`` in order, every product rounded), twice; then
    ``v * (1 / sqrt(sum_r v[r]**2))``."""
    rows, cols = len(z), len(z[0])
    q = [[0.0] * cols for _ in range(rows)]

    def dot(a, b):
        total = f32(a[0] * b[0])
        for x, y in zip(a[1:], b[1:]):
            total = f32(total + f32(x * y))
        return total

    for j in range(cols):
        v = [z[r][j] for r in range(rows)]
        for _ in range(2):
            coefficients = [dot([q[r][i] for r in range(rows)], v) for i in range(cols)]
            for i in range(cols):
                v = [f32(v[r] - f32(q[r][i] * coefficients[i])) for r in range(rows)]
        inverse = f32(1.0 / f32(math.sqrt(dot(v, v))))
        for r in range(rows):
            q[r][j] = f32(v[r] * inverse)
    return q
