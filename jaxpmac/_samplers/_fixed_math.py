"""Elementary functions whose values this project fixes, rather than the installed ``jax`` or
the instruction set XLA compiles for.

XLA's CPU implementations of a few functions changed between jax 0.10.2 and jax 0.12.0.1, and
with them the values of samplers built on them (issue 21):

* float32 ``exp``: 1 ulp on about 3e-5 of arguments (none below ``|x| = 2.7``);
* float32 ``erfc``: through its ``exp``, for ``x`` in about ``[2.7, 9.1]``;
* float32 ``lgamma``: most arguments, by up to 0.03 absolute near ``x = 1e5``;
* float64 ``log1p``: every argument in ``(1 - sqrt 2, sqrt(1/2) - 1)``, by up to 128 ulp.

XLA's own approximations also give other values under other instruction sets
(``--xla_cpu_max_isa``) and on GPUs (issue 29): it emits their polynomials in LLVM IR, and LLVM
contracts ``a * b + c`` into one fused multiply-add where the target has one (AVX2, AVX-512,
GPUs) but not on SSE4.2 or AVX. Only correctly rounded operations (``+ - * /``, ``sqrt``,
``floor``, comparisons, selects, bit casts, conversions) give the same values everywhere, and
only where no product meets an addition unrounded.

So each function here is built from those operations alone, with every product that feeds an
addition rounded on its own (:func:`unfused`, :func:`horner`), or exact by construction (and
rounded all the same): its values do not depend on the program around it, the instruction set
or ``jit``. The guard that keeps a product from fusing costs two integer operations; XLA's CUDA
backend never fuses, so its programs go without (:data:`NO_CONTRACTION_PLATFORMS`), and a sum
that XLA's simplifier must not merge keeps :func:`rounded` on every platform.

float32 ``exp``, float64 ``log1p`` (for ``|x| < sqrt 2 - 1``), ``lgamma`` and float32
``erfc`` follow the algorithms jax 0.10.2's XLA used on CPU (read from its optimised HLO and
LLVM IR), and differ from its own functions in the last bit where its compiler fused; ``log``
and float64 ``exp`` are fdlibm's and Cephes', float32 ``log1p`` this module's ``log`` with a
correction, :func:`sin_quarter`, :func:`cot_pi` and :func:`tan_of_unit` Cephes' polynomials
(``erf`` and ``erfc``: :mod:`jaxpmac._samplers._fixed_erf`).

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
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from jaxpmac._lowering import _platform
from jaxpmac._samplers._correctly_rounded import divide, identity_caps


def horner(coefficients, x: jax.Array) -> jax.Array:
    """``c[0] x**(n-1) + ... + c[n-1]`` by Horner's rule, ``y = y * x + c`` from ``y = c[0]``,
    each product rounded before its addition (:func:`unfused`): XLA fuses a multiply-add into
    one fused multiply-add in some fusions and not others (it depended on the output's shape
    under jax 0.12), so only written-out roundings give the same values in every program, with
    and without ``jit``, on every jax and instruction set. A coefficient may be an array
    (each element's own coefficient, as ``x``'s shape)."""
    dtype = x.dtype.type

    def coefficient(c):
        return c if isinstance(c, jax.Array) else dtype(c)

    y = jnp.broadcast_to(coefficient(coefficients[0]), x.shape).astype(x.dtype)
    for c in coefficients[1:]:
        y = unfused(y * x) + coefficient(c)
    return y


def rounded(value: jax.Array) -> jax.Array:
    """``value`` as computed here, rounded to its dtype, with no compiler able to look through
    it: a product is not fused into the addition that consumes it (one fused multiply-add,
    rounding once, where the target has one: x86 with FMA, every GPU), and a sum is not merged
    with another (XLA's simplifier rewrites ``(x + 1) - 1`` as ``x``).

    The identity on every value: its bits capped twice at a quiet NaN's, as a signed integer
    (at +NaN's) and as an unsigned one (at -NaN's). Only NaNs lie above either cap, and they
    stay NaNs. A compiler that knows the value's sign can drop one cap, never both: a positive
    value is below the unsigned cap, a negative one below the signed cap. (The earlier form,
    adding a ``-0`` made from data, was dropped by LLVM where it could prove that data finite.)

    Example:
        >>> import jax.numpy as jnp
        >>> x = jnp.array([1.5, -0.0, jnp.inf, -jnp.nan], jnp.float32)
        >>> bool((rounded(x).view(jnp.uint32) == x.view(jnp.uint32)).all())
        True
    """
    if _platform.in_kernel():
        return _rounded(value)
    # Outside kernels one jitted function: a program calls ``rounded`` thousands of times, and
    # jax traces (and, under ``vmap``, batches) a custom derivative anew at every call, but a
    # jitted function once per shape and dtype (a vmapped Hail draw traced 2.7x faster).
    return _rounded_jitted(value)


@jax.custom_jvp
def _rounded(value: jax.Array) -> jax.Array:
    width = value.dtype.itemsize * 8
    signed, unsigned = jnp.dtype(f"int{width}"), jnp.dtype(f"uint{width}")
    signed_cap, unsigned_cap = identity_caps(value.dtype)
    bits = lax.bitcast_convert_type(value, signed)
    bits = jnp.minimum(bits, np.array(signed_cap, signed))
    if _platform.in_kernel():
        # Mosaic (TPU kernels) has no unsigned vector minimum: the signed minimum of the
        # values with their top bit flipped is the same.
        top = np.array(1 << (width - 1), unsigned).view(signed)
        bits = jnp.minimum(bits ^ top, np.array(unsigned_cap, unsigned).view(signed) ^ top) ^ top
        return lax.bitcast_convert_type(bits, value.dtype)
    bits = jnp.minimum(lax.bitcast_convert_type(bits, unsigned), np.array(unsigned_cap, unsigned))
    return lax.bitcast_convert_type(bits, value.dtype)


@_rounded.defjvp
def _rounded_jvp(primals, tangents):
    # The identity's derivative (a bit cast has none of its own).
    return _rounded(primals[0]), tangents[0]


_rounded_jitted = jax.jit(_rounded)


#: Platforms whose XLA backend never fuses a multiply into an addition: there a product that
#: feeds an addition is rounded on its own without a guard (:func:`unfused`). XLA's CUDA
#: backend emits every float32 and float64 multiply and add with an explicit rounding
#: (``mul.rn``, ``add.rn``), which ptxas does not contract (checked in the PTX of every golden
#: program by ``benchmarks/deviceless_ptx_audit.py``, and by the deviceless tests). Not ROCm:
#: its compiler is not checked here.
NO_CONTRACTION_PLATFORMS = ("cuda",)


def unfused(product: jax.Array) -> jax.Array:
    """``product`` (a product that feeds an addition) rounded on its own before that addition,
    never fused with it into one fused multiply-add: :func:`rounded` where a compiler could fuse
    them (CPUs, Pallas kernels, any platform not in :data:`NO_CONTRACTION_PLATFORMS`), and the
    product itself in XLA's programs for a platform that never fuses, where :func:`rounded`'s
    caps would cost two integer operations per product and no value (the choice is made per
    platform when the program is lowered). Not for a sum that XLA's simplifier must not merge
    with another: that takes :func:`rounded` everywhere.

    Example:
        >>> import jax.numpy as jnp
        >>> x = jnp.float32(1 + 2 ** -12)
        >>> bool(unfused(x * x) - jnp.float32(1) == jnp.float32(2 ** -11))
        True
    """
    if _platform.in_kernel():
        return _rounded(product)
    return unfused_p.bind(product)


unfused_p = Primitive("jaxpmac_unfused")
unfused_p.def_abstract_eval(lambda aval: jax.core.ShapedArray(aval.shape, aval.dtype))
_platform.def_compiled_impl(unfused_p)
mlir.register_lowering(unfused_p, mlir.lower_fun(_rounded, multiple_results=False))
for _platform_name in NO_CONTRACTION_PLATFORMS:
    mlir.register_lowering(unfused_p, lambda ctx, product: [product], platform=_platform_name)
batching.defvectorized(unfused_p)
# The identity's derivative, as :func:`rounded`'s.
ad.defjvp(unfused_p, lambda tangent, product: tangent)


def floor(x: jax.Array) -> jax.Array:
    """``jnp.floor(x)``, bit for bit; inside a kernel (``force_lowering("kernel")``) made of a
    conversion to integers, comparisons and selects, since Mosaic GPU has no ``floor``.

    Example:
        >>> import jax.numpy as jnp
        >>> floor(jnp.array([-1.5, -0.0, 0.5, 2.0], jnp.float32)).tolist()
        [-2.0, -0.0, 0.0, 2.0]
    """
    if not _platform.in_kernel():
        return jnp.floor(x)
    dtype = x.dtype
    integral_from = np.array(2.0 ** jnp.finfo(dtype).nmant, dtype)  # every float above: whole
    small = lax.abs(x) < integral_from              # False for NaN and infinities
    toward_zero = jnp.where(small, x, np.array(0, dtype)).astype(
        jnp.dtype(f"int{dtype.itemsize * 8}")).astype(dtype)
    below = jnp.where(toward_zero > x, toward_zero - np.array(1, dtype), toward_zero)
    # A whole x (-0.0 included) is its own floor; so are NaN, infinities and |x| >= 2**m. A
    # subnormal x that compares equal to 0 (a platform that flushes them, as XLA's CPU does)
    # floors to the zero of its sign, as the platform's floor gives.
    floored = jnp.where(small & (toward_zero != x), below, x)
    return jnp.where(x == np.array(0, dtype), x * np.array(0, dtype), floored)


def next_after(x: jax.Array, y: jax.Array) -> jax.Array:
    """``lax.nextafter(x, y)``, bit for bit; inside a kernel written out on the bits, as XLA
    computes it (Mosaic GPU has no ``nextafter``): the neighbour of ``x`` toward ``y``, ``y``
    where they are equal, the smallest subnormal of ``y``'s sign from a zero, NaN from a NaN.

    Example:
        >>> import jax.numpy as jnp
        >>> float(next_after(jnp.float32(1), jnp.float32(2))) == 1 + 2.0 ** -23
        True
    """
    if not _platform.in_kernel():
        return lax.nextafter(x, y)
    x, y = jnp.broadcast_arrays(x, y)
    dtype = x.dtype
    ints = jnp.dtype(f"int{dtype.itemsize * 8}")
    sign_bit = np.array(1 << (dtype.itemsize * 8 - 1), jnp.dtype(f"uint{dtype.itemsize * 8}"))
    sign = sign_bit.view(ints)
    x_bits, y_bits = lax.bitcast_convert_type(x, ints), lax.bitcast_convert_type(y, ints)
    x_abs, y_abs = x_bits & ~sign, y_bits & ~sign
    zero, one = np.array(0, ints), np.array(1, ints)
    smaller = (x_abs > y_abs) | ((x_bits & sign) != (y_bits & sign))
    bits = x_bits + jnp.where(smaller, -one, one)
    from_zero = jnp.where(y_abs == zero, y_bits, (y_bits & sign) | one)
    bits = jnp.where(x_abs == zero, from_zero, bits)
    bits = jnp.where(x == y, y_bits, bits)
    result = lax.bitcast_convert_type(bits, dtype)
    return jnp.where((x != x) | (y != y), np.array(np.nan, dtype), result)


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
    x = rounded(x)
    n = floor(unfused(x * _EXP_LOG2E) + f32(0.5))
    n = jnp.where(n < f32(-127), f32(-127), n)
    n = jnp.where(n > f32(127), f32(127), n)
    # n * C1 is exact (n an integer of at most 7 bits, C1 of 9 significant bits), so rounding it
    # changes no value; it only shows that no product meets an addition unrounded.
    r = x - unfused(n * _EXP_C1)
    r = r - unfused(n * _EXP_C2)
    y = horner(_EXP_P + (f32(0.5),), r)
    y = f32(1) + (r + unfused(y * (r * r)))
    scale_bits = (n.astype(jnp.int32) + np.int32(127)) << np.int32(23)
    result = y * lax.bitcast_convert_type(scale_bits, jnp.float32)
    # Results below the smallest normal are 0: XLA's CPU flushes them (and a GPU might not).
    # The select also ends the product, which an addition after exp could otherwise fuse with.
    return jnp.where(result < f32(np.finfo(np.float32).tiny), f32(0), result)


def _f64(bits: int) -> np.float64:
    return np.array(bits, np.uint64).view(np.float64)[()]


# fdlibm's e_exp.c (Sun Microsystems, 1993-2004): x = k ln2 + r with k = round(x / ln2),
# ln 2 split in two (ln2HI has 32 significant bits, so k ln2HI is exact for |k| < 2**11), then
# exp(r) = 1 + r + r c / (2 - c) with c = r - r**2 P(r**2), times 2**k.
_EXP64_LN2_HI = _f64(0x3FE62E42FEE00000)          # 6.93147180369123816490e-01
_EXP64_LN2_LO = _f64(0x3DEA39EF35793C76)          # 1.90821492927058770002e-10
_EXP64_INV_LN2 = _f64(0x3FF71547652B82FE)         # 1.44269504088896338700e+00
_EXP64_P = tuple(_f64(b) for b in (               # P5 ... P1, highest power first (horner)
    0x3E66376972BEA4D0,                           # P5 =  4.13813679705723846039e-08
    0xBEBBBD41C5D26BF1,                           # P4 = -1.65339022054652515390e-06
    0x3F11566AAF25DE2C,                           # P3 =  6.61375632143793436117e-05
    0xBF66C16C16BEBD93,                           # P2 = -2.77777777770155933842e-03
    0x3FC555555555553E))                          # P1 =  1.66666666666666019037e-01
# Arguments are clamped to [-800, 800] first (NaN passes): exp overflows above 709.78 and is
# below the smallest normal under -708.4 either way, and |k| <= 1155 keeps k ln2HI exact and
# both halves of 2**k (below) normal numbers.
_EXP64_CLAMP = 800.0


def _exp_f64(x: jax.Array) -> jax.Array:
    f64 = np.float64
    x = jnp.where(x < f64(-_EXP64_CLAMP), f64(-_EXP64_CLAMP), x)    # NaN passes both clamps
    x = jnp.where(x > f64(_EXP64_CLAMP), f64(_EXP64_CLAMP), x)
    # k = round(x / ln2), halves away from zero, as fdlibm's (int)(invln2 x + halF[sign]) (which
    # also gives k = 0 for |x| < ln2 / 2 and k = +-1 below 1.5 ln2, as its special cases do).
    half = jnp.where(x < f64(0), f64(-0.5), f64(0.5))
    k = (unfused(x * _EXP64_INV_LN2) + half).astype(jnp.int64)   # truncates toward zero
    t = k.astype(jnp.float64)
    # hi is exact: t ln2HI is exact (above) and x is within a factor 2 of it (Sterbenz); rounding
    # that product changes no value, it shows that no product meets an addition unrounded.
    hi = x - unfused(t * _EXP64_LN2_HI)
    lo = unfused(t * _EXP64_LN2_LO)
    r = hi - lo
    r2 = r * r
    c = r - unfused(r2 * horner(_EXP64_P, r2))
    # (r c) is divided, not added: no fused multiply-add can take it.
    y = f64(1) - ((lo - (r * c) / (f64(2) - c)) - hi)
    # y is in [0.70, 1.42]; 2**k as 2**(k // 2) * 2**(k - k // 2), two normal numbers, so that
    # the first product is exact and the second rounds once, down to the smallest normal.
    k1 = k >> 1
    scale1 = lax.bitcast_convert_type((k1 + 1023) << 52, jnp.float64)
    scale2 = lax.bitcast_convert_type((k - k1 + 1023) << 52, jnp.float64)
    result = (y * scale1) * scale2
    # Below the smallest normal: 0, on every platform (XLA's CPU flushes subnormals; a GPU would
    # not). The select also ends the product, which an addition after exp could fuse with.
    return jnp.where(result < f64(np.finfo(np.float64).tiny), f64(0), result)


def exp(x: jax.Array) -> jax.Array:
    """``exp(x)``: float32 by the algorithm of jax 0.10.2's XLA (above), float64 by fdlibm's
    ``e_exp.c`` (within 1 ulp), both built from correctly rounded operations only (the same
    values on every instruction set). Results below the smallest normal are 0, above the largest
    float ``inf``; NaN gives NaN. Other dtypes: XLA's ``exp``."""
    if x.dtype == jnp.float32:
        return _exp_f32(x)
    if x.dtype == jnp.float64:
        return _exp_f64(x)
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
    large = log(x + f64(1))
    x2 = x * x
    ratio = horner(_LOG1P_P, x) / horner(_LOG1P_Q, x)
    # -x**2/2 is exact; XLA 0.10.2 rounded x**3 P/Q before adding it.
    small = x + (x2 * f64(-0.5) + rounded((x * x2) * ratio))
    return jnp.where(lax.abs(x) < f64(_LOG1P_SMALL), small, large)


def _log1p_f32(x: jax.Array) -> jax.Array:
    # u = 1 + x rounded, and c = (1 + x) - u, its rounding error, exact (Fast2Sum, the larger
    # of 1 and x first); then log(1 + x) = log(u) + log(1 + c / u) = log(u) + c / u to within
    # (c / u)**2 / 2 (|c / u| <= 2**-24; the next term changed no result measured): the
    # correction of fdlibm's s_log1p.c, here with this module's log. Within 1.5 ulp, where
    # Goldberg's log(u) x / (u - 1) reached 2.4 ulp.
    f32 = np.float32
    u = rounded(x + f32(1))                    # else XLA simplifies (x + 1) - 1 to x
    c = jnp.where(x < f32(1), x - (u - f32(1)), f32(1) - (u - x))
    y = log(u) + divide(c, u)
    # u = 1 for x in [-2**-25, 2**-24], where log(u) + c / u is x already; the select keeps -0.
    y = jnp.where(u == f32(1), x, y)
    # x = -1: log(0) = -inf (c / u is 0 / 0 there); inf: inf (c is NaN there); below -1 the
    # log of a negative number gives NaN.
    y = jnp.where(x == f32(-1), f32(-np.inf), y)
    return jnp.where(x == f32(np.inf), x, y)


def log1p(x: jax.Array) -> jax.Array:
    """``log(1 + x)``: float64 by the algorithm of jax 0.10.2's XLA (above, with this module's
    ``log``), float32 with this module's ``log`` and a correction for the rounding of
    ``1 + x`` (within 1.5 ulp): both built from correctly rounded operations only (the same
    values on every instruction set). ``-1`` gives ``-inf``, below it NaN. Other dtypes: XLA's
    ``log1p``."""
    if x.dtype == jnp.float64:
        return _log1p_f64(x)
    if x.dtype == jnp.float32:
        return _log1p_f32(x)
    return lax.log1p(x)


# Lanczos's approximation (g = 7, nine coefficients), as XLA 0.10.2 expanded lgamma, with the
# reflection formula below 1/2.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
# log(g + 1/2), log(2 pi) / 2 and log(pi) of the float64 numbers, correctly rounded, written
# out: numpy's ``log`` is its own SIMD code on some CPUs (AVX-512), not the C library's.
_LOG_LANCZOS_G_HALF = float.fromhex("0x1.01e85798eb9a3p+1")
_HALF_LOG_2PI = 0.5 * float.fromhex("0x1.d67f1c864beb4p+0")
_LOG_PI = float.fromhex("0x1.250d048e7a1bdp+0")


def lgamma(x: jax.Array) -> jax.Array:
    """``log |Gamma(x)|`` by the algorithm of jax 0.10.2's XLA (float32 and float64): with
    ``z = x - 1`` (``-x`` below 1/2), ``t = z + g + 1/2``,
    ``(z + 1/2 - t / log t) log t + log(2 pi)/2 + log(c0 + sum c_i / (z + i))``, where
    ``log t = log1p(z / (g + 1/2)) + log(g + 1/2)``; below 1/2 by reflection. ``+-inf`` and
    the poles (``0, -1, -2, ...``) give ``inf``. With this module's ``log``, ``log1p`` and
    :func:`sin_quarter` for XLA's (issue 29): the same values on every instruction set, and
    as accurate as jax 0.10.2's (within about 3e-6 of ``max(1, |lgamma|)`` in float32, 5e-15 in
    float64), from which they differ in the last bits of a few percent of arguments."""
    dtype = x.dtype.type
    half, one = dtype(0.5), dtype(1)
    abs_x = lax.abs(x)
    reflect = x < half
    # Reflection: log(pi) - log|sin(pi x)| - lgamma(1 - x), with the fraction of |x| folded
    # into [0, 1/2] first.
    frac = abs_x - jnp.floor(abs_x)
    frac = jnp.where(half < frac, one - frac, frac)
    log_sin = log(sin_quarter(rounded(frac * dtype(np.pi))))     # pi frac in [0, pi/2]
    # The select keeps z + i from being simplified to x + (i - 1).
    z = jnp.where(reflect, -x, x + dtype(-1))
    t = z + dtype(_LANCZOS_G + 0.5)
    # Products rounded on their own before the additions that follow them (see :func:`rounded`).
    log_t = (log1p(rounded(z * dtype(1 / (_LANCZOS_G + 0.5))))
             + dtype(_LOG_LANCZOS_G_HALF))
    head = rounded((z + half - divide(t, log_t)) * log_t) + dtype(_HALF_LOG_2PI)
    series = divide(dtype(_LANCZOS[1]), z + one) + dtype(_LANCZOS[0])
    for i, c in enumerate(_LANCZOS[2:], start=2):
        series = series + divide(dtype(c), z + dtype(i))
    result = head + log(series)
    reflected = jnp.where(jnp.isfinite(log_sin),
                          (dtype(_LOG_PI) - log_sin) - result, -log_sin)
    result = jnp.where(reflect, reflected, result)
    return jnp.where(abs_x == dtype(np.inf), dtype(np.inf), result)


# Cephes sin/cos (Moshier, sin.c) for float64 and sinf/cosf (sinf.c) for float32, on
# [0, pi/4]: sin(w) = w + w**3 S(w**2), cos(w) = 1 - w**2/2 + w**4 C(w**2). Highest power first.
_SIN64_S = (1.58962301576546568060e-10, -2.50507477628578072866e-8, 2.75573136213857245213e-6,
            -1.98412698295895385996e-4, 8.33333333332211858878e-3, -1.66666666666666307295e-1)
_SIN64_C = (-1.13585365213876817300e-11, 2.08757008419747316778e-9, -2.75573141792967388112e-7,
            2.48015872888517045348e-5, -1.38888888888730564116e-3, 4.16666666666665929218e-2)
_SIN32_S = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
_SIN32_C = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
# pi/2 as the nearest float plus the rest, rounded: fdlibm's pio2_hi and pio2_lo (e_asin.c)
# for float64; for float32 the rest, pi/2 - float32(pi/2), is computed in float64 (exact
# enough: float32 keeps 24 of its 53 bits).
_PIO2_64_HI = _f64(0x3FF921FB54442D18)            # 1.57079632679489655800e+00
_PIO2_64_LO = _f64(0x3C91A62633145C07)            # 6.12323399573676603587e-17
_PIO2_32_HI = np.float32(np.pi / 2)
_PIO2_32_LO = np.float32(np.pi / 2 - np.float64(_PIO2_32_HI))


def sin_quarter(x: jax.Array) -> jax.Array:
    """``sin(x)`` for ``x`` in ``[0, pi/2]`` (float32 or float64), by Cephes' polynomials
    (within 2 ulp), every product rounded on its own: the same values on every instruction
    set, unlike XLA's ``sin``. Above ``pi/4``: ``cos(pi/2 - x)``, with ``pi/2`` in two parts
    so that ``pi/2 - x`` keeps its digits.

    Args:
        x: a float32 or float64 array with values in ``[0, pi/2]`` (``[-pi/4, pi/2]`` works).

    Returns:
        ``sin(x)``, of ``x``'s dtype.
    """
    dtype = x.dtype.type
    sines, cosines = ((_SIN32_S, _SIN32_C) if x.dtype == jnp.float32
                      else (_SIN64_S, _SIN64_C))
    pio2_hi, pio2_lo = ((_PIO2_32_HI, _PIO2_32_LO) if x.dtype == jnp.float32
                        else (_PIO2_64_HI, _PIO2_64_LO))
    near = x <= dtype(np.pi / 4)
    # pio2_hi - x is exact for x in [pi/4, pi/2] (Sterbenz: within a factor 2 of each other);
    # unfolded, else XLA adds the two constants first (and pio2_lo is lost in pio2_hi).
    w = jnp.where(near, x, rounded(pio2_hi - x) + pio2_lo)
    z = rounded(w * w)
    sin_w = w + rounded(rounded(w * z) * horner(sines, z))
    # z / 2 is exact (a power of two); z**2 C(z) is rounded before its addition.
    if x.dtype == jnp.float32:            # sinf.c's order: z**2 C(z) - z/2 + 1
        cos_w = (rounded(rounded(z * z) * horner(cosines, z)) - dtype(0.5) * z) + dtype(1)
    else:                                 # sin.c's order: (1 - z/2) + z**2 C(z)
        cos_w = (dtype(1) - dtype(0.5) * z) + rounded(rounded(z * z) * horner(cosines, z))
    return jnp.where(near, sin_w, cos_w)


def tan_of_unit(u: jax.Array) -> jax.Array:
    """``tan(pi (u - 1/2))`` for ``u`` in ``[0, 1)`` (float32 or float64), accurate (within a few
    ulp) up to the poles: with ``a = |u - 1/2|`` and ``b = 1/2 - a`` (the distance to the
    nearer pole, ``u`` or ``1 - u``, exact), ``+-sin(pi a) / sin(pi b)`` by :func:`sin_quarter`
    (``cos(pi a) = sin(pi b)``). Built from correctly rounded operations only: the same values on
    every instruction set. ``u = 0`` gives ``-inf`` (``sin(0) = 0`` below the division), the
    limit at the pole, not the finite ``tan(-pi/2)`` of a rounded ``pi``; ``u = 1/2`` gives 0.

    Args:
        u: a float32 or float64 array with values in ``[0, 1)`` (``1`` gives ``inf``).

    Returns:
        ``tan(pi (u - 1/2))``, of ``u``'s dtype: the inverse CDF of the standard Cauchy
        distribution at ``u``.
    """
    dtype = u.dtype.type
    upper = u >= dtype(0.5)
    # Exact for u in [1/2, 1]: 1 - u.
    cotangent = cot_pi(jnp.where(upper, dtype(1) - u, u))
    return jnp.where(upper, cotangent, -cotangent)


def cot_pi(p: jax.Array) -> jax.Array:
    """``cot(pi p)`` for ``p`` in ``[0, 1/2]`` (float32 or float64), accurate (within a few ulp)
    down to ``p = 0``: ``sin(pi (1/2 - p)) / sin(pi p)`` by :func:`sin_quarter`, both arguments
    in ``[0, pi/2]``; ``p = 0`` gives ``inf``. ``1/2 - p`` is exact for ``p`` in ``[1/4, 1/2]``
    (Sterbenz); below, it is rounded where ``sin`` is flat enough that this costs at most an
    ulp. The standard Cauchy distribution's inverse CDF is ``-cot(pi u)``.

    Example:
        >>> import jax.numpy as jnp
        >>> [round(float(c), 6) for c in cot_pi(jnp.array([0.25, 0.5], jnp.float32))]
        [1.0, 0.0]
    """
    dtype = p.dtype.type
    pi = dtype(np.pi)
    return divide(sin_quarter(rounded(pi * (dtype(0.5) - p))), sin_quarter(rounded(pi * p)))


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
    near = f32(1) - rounded(x * horner(_ERFC_P, x2))
    minus_x2 = -x2
    scaled = _exp_f32(minus_x2) * divide(f32(1), abs_x)
    w = divide(f32(1), x2)
    far = scaled * jnp.where(abs_x < f32(2), horner(_ERFC_R, w), horner(_ERFC_S, w))
    far = jnp.where(minus_x2 < f32(-88.7228394), f32(0), far)
    far = jnp.where(x < f32(0), f32(2) - far, far)
    return jnp.where(abs_x < f32(1), near, far)


def erfc_f32(x: jax.Array) -> jax.Array:
    """float32 ``1 - erf(x)`` by the algorithm of jax 0.10.2's XLA (above);
    :func:`jaxpmac._samplers._fixed_erf.erfc` serves both widths."""
    return _erfc_f32(x)


def logaddexp(a: jax.Array, b: jax.Array) -> jax.Array:
    """``log(exp(a) + exp(b))`` as jax 0.10.2's ``jnp.logaddexp`` computed it for real floats,
    with this module's ``exp`` and ``log1p``."""
    amax = jnp.maximum(a, b)
    delta = a - b
    # Adding -0 (rounded) keeps XLA from rewriting log1p's x * x of exp(-|delta|) as
    # exp(-2 |delta|) (jax 0.10.2 called log1p as one operation, which hid its insides from that
    # rewrite), without a barrier, which would stop a draw from fusing into its consumer.
    small = exp(-lax.abs(delta))
    small = rounded(small)
    return jnp.where(jnp.isnan(delta), a + b, amax + log1p(small))


def softmax(x: jax.Array, axis: int = -1) -> jax.Array:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``, as ``jax.nn.softmax`` computes it,
    with this module's ``exp``."""
    unnormalized = exp(x - jnp.max(x, axis, keepdims=True))
    return divide(unnormalized, ordered_sum(unnormalized, axis))


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


def _log_f32(x: jax.Array) -> jax.Array:
    f32 = np.float32
    bits = lax.bitcast_convert_type(x, jnp.int32)
    exponent = ((bits >> 23) - 126).astype(jnp.float32)
    m = lax.bitcast_convert_type((bits & 0x007FFFFF) | 0x3F000000, jnp.float32)   # [1/2, 1)
    low = m < f32(np.sqrt(0.5))
    exponent = jnp.where(low, exponent - f32(1), exponent)
    z = jnp.where(low, m + m, m) - f32(1)                   # exact: m - 1 in [-0.293, 0.414)
    z2 = unfused(z * z)
    y = unfused(unfused(z * z2) * horner(_LOG_P, z))
    y = y + unfused(exponent * _LOG_C2)
    y = y + unfused(f32(-0.5) * z2)
    return (z + y) + unfused(exponent * _LOG_C1)


# fdlibm's e_log.c (Sun Microsystems, 1993): x = 2**k m with m in [sqrt(2)/2, sqrt(2)),
# f = m - 1 (exact), s = f / (2 + f), log(1 + f) = 2 atanh(s) = f - s (f - R) with
# R = s**2 (Lg1 + Lg2 s**2 + ... + Lg7 s**12), split in even and odd powers of s**4; plus
# k ln2 with ln 2 split in two (ln2_hi has 32 significant bits: k ln2_hi is exact).
_LOG64_LN2_HI = _f64(0x3FE62E42FEE00000)          # 6.93147180369123816490e-01
_LOG64_LN2_LO = _f64(0x3DEA39EF35793C76)          # 1.90821492927058770002e-10
_LOG64_LG = tuple(_f64(b) for b in (
    0x3FE5555555555593,                           # Lg1 = 6.666666666666735130e-01
    0x3FD999999997FA04,                           # Lg2 = 3.999999999940941908e-01
    0x3FD2492494229359,                           # Lg3 = 2.857142874366239149e-01
    0x3FCC71C51D8E78AF,                           # Lg4 = 2.222219843214978396e-01
    0x3FC7466496CB03DE,                           # Lg5 = 1.818357216161805012e-01
    0x3FC39A09D078C69F,                           # Lg6 = 1.531383769920937332e-01
    0x3FC2F112DF3E5244))                          # Lg7 = 1.479819860511658591e-01


def _log_f64(x: jax.Array) -> jax.Array:
    f64 = np.float64
    bits = lax.bitcast_convert_type(x, jnp.int64)
    high = (bits >> 32) & 0x000FFFFF                # the high word's 20 bits of mantissa
    # i = 2**20 where the mantissa is at least sqrt(2) (high + 0x95f64 carries into bit 20):
    # there m is x's mantissa halved, in [sqrt(2)/2, 1), and k one more.
    i = (high + 0x95F64) & 0x100000
    m = lax.bitcast_convert_type((bits & 0x000FFFFFFFFFFFFF) | ((i ^ 0x3FF00000) << 32),
                                 jnp.float64)
    k = ((bits >> 52) & 0x7FF) - 1023 + (i >> 20)
    dk = k.astype(jnp.float64)
    f = m - f64(1)                                  # exact: m in [0.707, 1.414)
    s = f / (f64(2) + f)
    z = s * s
    w = z * z
    t1 = unfused(w * horner(_LOG64_LG[5::-2], w))           # w (Lg2 + w (Lg4 + w Lg6))
    t2 = unfused(z * horner(_LOG64_LG[6::-2], w))           # z (Lg1 + w (Lg3 + ...))
    big_r = t2 + t1
    # k ln2_hi is exact (|k| < 2**11, ln2_hi 32 significant bits), rounded all the same.
    k_hi = unfused(dk * _LOG64_LN2_HI)
    k_lo = unfused(dk * _LOG64_LN2_LO)
    # fdlibm's two forms: with f**2 / 2 taken out where the mantissa is in [1.38, 1.42)
    # (its high word's bits in [0x6147a, 0x6b851]: |f| about 0.29..0.42), the other elsewhere.
    half_f2 = unfused((f64(0.5) * f) * f)        # 0.5 f is exact
    with_square = k_hi - ((half_f2 - (unfused(s * (half_f2 + big_r)) + k_lo)) - f)
    without = k_hi - ((unfused(s * (f - big_r)) - k_lo) - f)
    return jnp.where(((high - 0x6147A) | (0x6B851 - high)) > 0, with_square, without)


def _log_edges(x, result, bits, exponent_mask):
    """``result`` (``log`` of a positive normal ``x``) with ``lax.log``'s values elsewhere:
    ``log(+-0) = -inf``, ``log(inf) = inf``, ``log(negative) = log(NaN) = NaN``. Subnormal ``x``
    counts as 0 (read from its bits, on every platform), as XLA's CPU flushes it to 0."""
    dtype = x.dtype.type
    result = jnp.where(x < dtype(0), dtype(np.nan), result)
    result = jnp.where((bits & exponent_mask) == 0, dtype(-np.inf), result)
    result = jnp.where(x == dtype(np.inf), x, result)
    return jnp.where(jnp.isnan(x), x, result)


def log(x: jax.Array, *, positive_normal: bool = False) -> jax.Array:
    """``log(x)``: float32 by Cephes' ``logf`` (above, within about 1 ulp), float64 by fdlibm's
    ``e_log.c`` (within 1 ulp), both with every product rounded on its own (the same values on
    every instruction set and program). ``log(0) = -inf`` (subnormals count as 0),
    ``log(inf) = inf``, negative and NaN arguments give NaN. XLA's own ``log`` differs by
    instruction set (it fuses multiply-adds where the target has FMA), and its float32 ``log``
    changed between jax 0.10.2 and 0.12. Other dtypes: XLA's ``log``.

    Args:
        x: the argument.
        positive_normal: the caller's promise (not checked) that every element is a positive
            normal float, finite: the selects of the cases above are then left out, which
            changes no value of such an ``x`` (about 9 of a float32 ``log``'s ~70 GPU
            instructions).

    Example:
        >>> import jax.numpy as jnp
        >>> float(log(jnp.float32(1.0)))
        0.0
        >>> float(log(jnp.float32(2.0), positive_normal=True)) == float(log(jnp.float32(2.0)))
        True
    """
    if x.dtype == jnp.float32:
        core, bits_dtype, exponent_mask = _log_f32, jnp.int32, np.int32(0x7F800000)
    elif x.dtype == jnp.float64:
        core, bits_dtype, exponent_mask = _log_f64, jnp.int64, np.int64(0x7FF0000000000000)
    else:
        return lax.log(x)
    if positive_normal:
        return core(x)
    return _log_edges(x, core(x), lax.bitcast_convert_type(x, bits_dtype), exponent_mask)
