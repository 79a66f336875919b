"""The normal CDF and its inverse, the project's own: ``ndtr``, ``ndtri``, the lower-half
``lower_half_ndtri`` and normals from stream words.

``ndtri`` and ``ndtr`` transcribe the implementations of jax 0.10.2's ``jax.scipy.special``
(``ndtri``: the cephes library's rational approximations; ``ndtr``: from ``erf``/``erfc``),
with this project's polynomial evaluation (each product rounded on its own), ``log``
(:mod:`jaxpmac._samplers._fixed_math`), ``erf`` and ``erfc`` (:mod:`._fixed_erf`): XLA's own
functions change with the jax version and the instruction set, and the values here do not.

``lower_half_ndtri(p)`` equals ``ndtri(p)`` bit for bit for every ``p`` in ``[p_min, 1/2]``
(checked for all ``2**31`` float32 inputs of :func:`normal_of_word` and on random float64
ones), at about two thirds of the cost for float32. Why it
can be cheaper: ``ndtri`` serves all of ``[0, 1]``, so it computes the complement, the zero and
infinity cases and all three rational approximations for every element; a normal from
``_unit.symmetric_unit`` only ever asks for ``p`` in ``[2**-(W+1), 1/2]``, where no complement
or infinity occurs and, for float32 (``W = 32``), the far tail ``p < exp(-32)`` is out of reach.
The arithmetic on the branches that remain is ``ndtri``'s own, in the same order, so the
values do not change; its ``log``s skip their edge cases (every argument is a positive normal
float). On accelerators, from :data:`ONE_RATIO_MIN_SIZE` elements, each element then evaluates
one rational function, its own branch's (checked, as above, for all ``2**31`` float32 inputs),
in fewer instructions than every branch's; CPUs, where that form is the slower one, and smaller
draws, which compile faster with the branches, keep them (benchmarks/README.md).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._lowering import _platform
from jaxpmac._samplers import _fixed_erf
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _unit
from jaxpmac._samplers._correctly_rounded import divide, sqrt

# Coefficients of the cephes library's ndtri (Stephen L. Moshier, ndtri.c), as jax 0.10.2's
# jax.scipy.special.ndtri used them: x = w + w**3 P0(w**2)/Q0(w**2) around the centre (p > exp(-2)),
# x = z - log(z)/z - P(1/z)/Q(1/z)/z with z = sqrt(-2 log p) in the tail: P1/Q1 while
# z < 8, P2/Q2 beyond (p < exp(-32)).
CENTRE_P = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
            1.39312609387279679503E1, -1.23916583867381258016E0)
CENTRE_Q = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
            -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
            1.59056225126211695515E1, -1.18331621121330003142E0)
TAIL_P = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
          4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
          -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
TAIL_Q = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
          1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
          -3.80806407691578277194E-2, -9.33259480895457427372E-4)
FAR_TAIL_P = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
              1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
              3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
FAR_TAIL_Q = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
              2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
              2.89247864745380683936E-6, 6.79019408009981274425E-9)
# The branch points, correctly rounded, written out: numpy's ``exp`` is its own SIMD code on
# some CPUs (AVX-512), not the C library's, so a computed constant could move with the machine.
CENTRE_BELOW = float.fromhex("0x1.152aaa3bf81ccp-3")    # exp(-2): the centre serves p > it
FAR_TAIL_BELOW = float.fromhex("0x1.c8464f7616468p-47")  # exp(-32): the far tail p < it (z >= 8)
CENTRE_ABOVE = 1.0 - CENTRE_BELOW                         # 1 - exp(-2), exact


def _tail_terms(p: jax.Array, *, positive_normal: bool = False) -> tuple[jax.Array, jax.Array]:
    """``z = sqrt(-2 log p)`` and the tail's first terms ``z - log(z) / z``, with ``log z``
    written as ``log(z**2) / 2``: XLA's algebraic simplifier rewrites ``log(sqrt(m))`` into
    ``0.5 * log(m)`` in a compiled program, so only this form gives the compiled values when
    the operations run one by one (``jax.disable_jit``). ``positive_normal``: every ``p`` is a
    positive normal float below 1 (so is ``z**2`` then), and the ``log``s skip their edge cases."""
    dtype = p.dtype.type
    z_squared = dtype(-2.0) * _fixed_math.log(p, positive_normal=positive_normal)
    z = sqrt(z_squared)
    log_z_squared = _fixed_math.log(z_squared, positive_normal=positive_normal)
    return z, z - divide(log_z_squared * dtype(0.5), z)


def _tail_ratio(numerator, denominator, z: jax.Array) -> jax.Array:
    """``P(1/z) / Q(1/z) / z``, written as ``P / (Q z)``: the form XLA's algebraic simplifier
    gives ``(a / b) / c`` in a compiled program, so the values are the same op by op."""
    inverse = divide(1, z)
    return divide(_fixed_math.horner(numerator, inverse),
                  _fixed_math.horner(denominator, inverse) * z)


#: The smallest ``lower_half_ndtri`` (elements) that takes the accelerators' one rational
#: function per element there. Smaller ones, such as a model's many small draws, keep every
#: branch: XLA's TPU and GPU compilers split the one-ratio form into more kernels and compile
#: it more slowly, which many draw sites add up (benchmarks/README.md,
#: "The elementwise lowering").
ONE_RATIO_MIN_SIZE = 1 << 16


def _branch_horner(branches, x: jax.Array) -> jax.Array:
    """Horner's rule as :func:`_fixed_math.horner` (each product rounded on its own) with
    each element's coefficients taken from its branch: ``branches`` is ``[(mask, c), ...,
    (None, c)]``, the first whose mask holds (the last one otherwise). One evaluation per
    element instead of one per branch; each element's value is its branch's polynomial's,
    bit for bit (``x`` finite).

    A branch with fewer coefficients is as if padded with leading zeros, without a select per
    padded step: its elements follow the other branches' coefficients there and are set to
    ``+0`` once, where their own coefficients begin. Leading zeros would have left ``+-0`` at
    that point (``0 * x + 0``, ``x`` finite), and ``+-0 * x + c = c`` either way."""
    dtype = x.dtype.type
    length = max(len(c) for _, c in branches)
    starts = [length - len(c) for _, c in branches]      # each branch's first step

    def own(k):
        """Where branch ``k`` is the element's own: the first whose mask holds (the last
        branch's mask is None: where no other holds)."""
        mask = branches[k][0]
        held = [~earlier for earlier, _ in branches[:k]] + ([] if mask is None else [mask])
        return functools.reduce(jnp.logical_and, held)

    def coefficient(i):
        live = [(mask, c[i - start]) for (mask, c), start in zip(branches, starts)
                if start <= i]
        value = jnp.full_like(x, dtype(live[-1][1]))
        for mask, c in live[-2::-1]:
            value = jnp.where(mask, dtype(c), value)
        return value

    y = coefficient(0)
    for i in range(1, length):
        beginning = [own(k) for k, start in enumerate(starts) if start == i]
        if beginning:
            y = jnp.where(functools.reduce(jnp.logical_or, beginning), dtype(0), y)
        y = _fixed_math.unfused(y * x) + coefficient(i)
    return y


def lower_half_ndtri(p: jax.Array, *, p_min: float) -> jax.Array:
    """:func:`ndtri` (``<= 0``) for ``p`` in ``[p_min, 1/2]``, bit for bit.

    Two forms with the same values: each branch (central, tail, far tail) evaluated and one
    selected, as :func:`ndtri` does, on CPUs and below :data:`ONE_RATIO_MIN_SIZE` elements;
    from that size on accelerators, chosen when the program is lowered
    (:func:`jaxpmac._lowering._platform.by_platform`), one rational function per element with
    its branch's coefficients (:func:`_one_ratio_per_element`), which a GPU or TPU runs in
    fewer instructions and a CPU more slowly (benchmarks/README.md).

    Args:
        p: float array, every element in ``[p_min, 1/2]`` (not checked: the caller's
            construction guarantees it).
        p_min: a static lower bound of ``p``, a positive normal float; the far-tail branch is
            traced only if ``p_min < exp(-32)``.

    Example:
        >>> import jax.numpy as jnp
        >>> p = jnp.array([2.0 ** -33, 0.01, 0.3, 0.5], jnp.float32)
        >>> bool((lower_half_ndtri(p, p_min=2.0 ** -33) == ndtri(p)).all())
        True
    """
    far_tail = p_min < FAR_TAIL_BELOW
    branch_by_branch = functools.partial(_branch_by_branch, far_tail=far_tail)
    if p.size < ONE_RATIO_MIN_SIZE:
        return branch_by_branch(p)
    return _platform.by_platform(
        p, rolled=branch_by_branch,
        elementwise=functools.partial(_one_ratio_per_element, far_tail=far_tail),
        result=jax.ShapeDtypeStruct(p.shape, p.dtype))


def _central(w: jax.Array, ww: jax.Array, ratio: jax.Array) -> jax.Array:
    """The central approximation's value from ``w = p - 1/2``, ``w**2`` and ``P(w**2) /
    Q(w**2)``. ndtri multiplies by -sqrt(2 pi) and negates below 1/2: the same value,
    exactly."""
    dtype = w.dtype.type
    return (w + _fixed_math.unfused(w * ww * ratio)) * dtype(np.sqrt(2.0 * np.pi))


def _branch_by_branch(p: jax.Array, *, far_tail: bool) -> jax.Array:
    """:func:`lower_half_ndtri` with every branch evaluated (``far_tail``: that one too)."""
    dtype = p.dtype.type
    polynomial = _fixed_math.horner
    w = p - dtype(0.5)
    ww = lax.square(w)
    centre = _central(w, ww, divide(polynomial(CENTRE_P, ww), polynomial(CENTRE_Q, ww)))
    z, first_term = _tail_terms(p, positive_normal=True)
    tail = first_term - _tail_ratio(TAIL_P, TAIL_Q, z)
    if far_tail:
        far = first_term - _tail_ratio(FAR_TAIL_P, FAR_TAIL_Q, z)
        tail = jnp.where(z >= dtype(8.0), far, tail)
    return jnp.where(p > dtype(CENTRE_BELOW), centre, -tail)


def _one_ratio_per_element(p: jax.Array, *, far_tail: bool) -> jax.Array:
    """:func:`lower_half_ndtri` with one rational function per element: its branch's
    coefficients are selected (:func:`_branch_horner`), and the centre's ``P / Q`` and the
    tails' ``P / (Q z)`` are one division by ``Q s``, ``s`` 1 at the centre and ``z`` in the
    tails (``Q * 1`` is exact). The arithmetic each element keeps is its branch's in
    :func:`_branch_by_branch`, operation for operation, so the values are the same."""
    dtype = p.dtype.type
    w = p - dtype(0.5)
    ww = lax.square(w)
    z, first_term = _tail_terms(p, positive_normal=True)
    centre = p > dtype(CENTRE_BELOW)
    numerators, denominators = [(centre, CENTRE_P)], [(centre, CENTRE_Q)]
    if far_tail:
        far = z >= dtype(8.0)
        numerators.append((far, FAR_TAIL_P))
        denominators.append((far, FAR_TAIL_Q))
    numerators.append((None, TAIL_P))
    denominators.append((None, TAIL_Q))
    # The centre's polynomials are in w**2, the tails' in 1/z.
    x = jnp.where(centre, ww, divide(1, z))
    ratio = divide(_branch_horner(numerators, x),
                   _branch_horner(denominators, x) * jnp.where(centre, dtype(1.0), z))
    return jnp.where(centre, _central(w, ww, ratio), ratio - first_term)


def normal_of_word(word: jax.Array, dtype) -> jax.Array:
    """The standard normal ``-+ndtri(p)`` of stream words: the top bit picks the sign and the
    other bits give ``p`` (see ``_unit.symmetric_unit``), computed in ``dtype``."""
    upper, p = _unit.symmetric_unit(word, dtype)
    lower_tail = lower_half_ndtri(p, p_min=2.0 ** -(word.dtype.itemsize * 8 + 1))
    return jnp.where(upper, -lower_tail, lower_tail)


def ndtri(p: jax.Array, *, within: tuple[float, float] | None = None) -> jax.Array:
    """The inverse of the standard normal CDF on ``[0, 1]`` (``-inf`` at 0, ``inf`` at 1), by
    the algorithm of jax 0.10.2's ``jax.scipy.special.ndtri``, every product rounded on its own: the
    lower of ``p`` and ``1 - p`` (for ``p > 1 - exp(-2)``) goes through the central
    (``> exp(-2)``), tail or far-tail (``z >= 8``) approximation, and the sign is restored.

    ``within``: static bounds ``(lo, hi)`` of every ``p`` (not checked: the caller's
    construction guarantees them, to within a few ulp). Only the branches that some ``p`` in
    that range takes are traced, so a kernel that knows its range is smaller; the values are
    the same, since the branches left out are those no element selects (each test below keeps
    a margin far wider than an ulp).

    Example:
        >>> import jax.numpy as jnp
        >>> [round(float(v), 6) for v in ndtri(jnp.array([0.025, 0.5, 0.975]))]
        [-1.959964, 0.0, 1.959964]
        >>> p = jnp.array([0.2, 0.5, 0.7], jnp.float32)
        >>> bool((ndtri(p, within=(0.2, 0.7)) == ndtri(p)).all())
        True
    """
    dtype = p.dtype.type
    lo, hi = (0.0, 1.0) if within is None else (float(within[0]), float(within[1]))
    eps = float(jnp.finfo(p.dtype).eps)
    complement_above = dtype(CENTRE_ABOVE)
    # Which branches some p in [lo, hi] takes, each decided with a wide margin.
    # p == 0 or p == 1: a subnormal p is 0 where the platform flushes it, and so can be a
    # position just above a small lo, so lo's margin is a whole mantissa of tiny numbers.
    ends = lo < 4 * float(jnp.finfo(p.dtype).tiny) / eps or hi >= 1.0 - 4 * eps
    needs_complement = hi > 0.99 * float(complement_above)
    centre_taken = hi > 0.99 * CENTRE_BELOW and lo < 1.01 * float(complement_above)
    tail_taken = lo < 1.01 * CENTRE_BELOW or hi > 0.99 * float(complement_above)
    far_tail_taken = min(lo, 1.0 - hi) < 4 * FAR_TAIL_BELOW
    polynomial = _fixed_math.horner
    complement = jnp.where(p > complement_above, dtype(1) - p, p) if needs_complement else p
    # 0 (p = 0 or 1) is replaced by any harmless value; those elements are set at the end.
    q = jnp.where(complement == dtype(0), dtype(0.5), complement) if ends else complement
    if not (needs_complement or ends):
        # Where neither select above is traced, ``q - 1/2`` would meet the sum that made ``p``,
        # and XLA's simplifier can reassociate ``(c + r) - 1/2`` for a constant ``c``.
        q = _fixed_math.rounded(q)
    if centre_taken:
        w = q - dtype(0.5)
        ww = lax.square(w)
        centre = w + _fixed_math.unfused(
            w * ww * divide(polynomial(CENTRE_P, ww), polynomial(CENTRE_Q, ww)))
        centre = centre * -dtype(np.sqrt(2.0 * np.pi))
    if tail_taken:
        z, first_term = _tail_terms(q)
        tail = first_term - _tail_ratio(TAIL_P, TAIL_Q, z)
        if far_tail_taken:
            far_tail = first_term - _tail_ratio(FAR_TAIL_P, FAR_TAIL_Q, z)
            tail = jnp.where(z >= dtype(8.0), far_tail, tail)
    if centre_taken and tail_taken:
        x = jnp.where(q > dtype(CENTRE_BELOW), centre, tail)
    else:
        x = centre if centre_taken else tail
    x = jnp.where(p > dtype(CENTRE_ABOVE), x, -x)
    if not ends:
        return x
    infinity = jnp.full_like(p, np.inf)
    return jnp.where(p == dtype(0), -infinity, jnp.where(p == dtype(1), infinity, x))


def ndtr(x: jax.Array) -> jax.Array:
    """The standard normal CDF, by the algorithm of jax 0.10.2's ``jax.scipy.special.ndtr``:
    ``(1 + erf(x / sqrt 2)) / 2`` near 0 (``|x| < 1``), ``erfc(|x| / sqrt 2) / 2`` or
    ``1 -`` that beyond, with this project's ``erf`` and ``erfc`` (:mod:`._fixed_erf`).

    Example:
        >>> import jax.numpy as jnp
        >>> [round(float(v), 6) for v in ndtr(jnp.array([-1.959964, 0.0, 1.959964]))]
        [0.025, 0.5, 0.975]
    """
    dtype = x.dtype.type
    half_sqrt_2 = dtype(0.5) * np.sqrt(2.0, dtype=dtype)
    # Beyond |x| = 40 the CDF is 0 or 1 in float64 as in float32; clamped, x is finite (or
    # NaN), so x / sqrt(2) can be rounded on its own (not fused into erfc's first steps, as
    # XLA 0.10.2 did in scalar code only).
    x = jnp.clip(x, dtype(-40), dtype(40))
    w = _fixed_math.rounded(x * half_sqrt_2)
    z = lax.abs(w)
    y = jnp.where(z < half_sqrt_2, dtype(1.0) + _fixed_erf.erf(w),
                  jnp.where(w > dtype(0.0), dtype(2.0) - _fixed_erf.erfc(z),
                            _fixed_erf.erfc(z)))
    return dtype(0.5) * y
