"""float32 division and square root, correctly rounded, in 32-bit integer arithmetic.

Inside a Pallas kernel the samplers' correctly rounded primitives
(:mod:`jaxpmac._samplers._correctly_rounded`) cannot be used, and the backend's own float32
division and root are approximate on some (Triton compiles them to ``div.full.f32`` and
``sqrt.approx.f32``: on an H100, 2026-11-26, the kernel form of ``normal`` differed from the
CPU's in up to 13% of values by one ulp). These compute IEEE 754's round-to-nearest-even result
from the operands' bits with integer operations every backend has (``int32`` add, subtract,
shifts, comparisons, selects; no 64-bit type, no unsigned minimum, no count of leading zeros):
the significands' quotient or root digit by digit, as a long division by hand, then one
rounding. Each costs a few hundred integer operations per value, so they are the kernel form
only; outside kernels the platform's exact operations are used.

Special values follow IEEE 754: ``x / 0`` is a signed infinity for ``x != 0``, ``0 / 0``,
``inf / inf`` and ``sqrt`` of a negative number are NaN, NaN operands give NaN; subnormal
operands and results are exact (no flush to zero). A NaN result is the default quiet NaN
(``0x7FC00000``) or the first NaN operand quieted; which NaN a CPU returns is not fixed by IEEE
754, and samplers do not depend on it.

Example:
    >>> import numpy as np, jax.numpy as jnp
    >>> float(divide(jnp.float32(1), jnp.float32(3))) == float(np.float32(1) / np.float32(3))
    True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

# float32's layout (IEEE 754 binary32).
_FRACTION_BITS = 23
_EXPONENT_MASK = 0xFF
_FRACTION_MASK = (1 << _FRACTION_BITS) - 1
_HIDDEN_BIT = 1 << _FRACTION_BITS
_BIAS = 127
_INFINITY_BITS = 0x7F800000
_QUIET_BIT = 0x00400000
_DEFAULT_NAN_BITS = 0x7FC00000
_SIGN_BIT = -(1 << 31)                  # 0x80000000 as an int32
_MAGNITUDE_MASK = 0x7FFFFFFF


def _i32(value: int) -> np.int32:
    return np.int32(value)


def _fields(x: jax.Array):
    """The bits of float32 ``x`` as int32, and its biased exponent and fraction fields."""
    bits = lax.bitcast_convert_type(x, jnp.int32)
    exponent = (bits >> _i32(_FRACTION_BITS)) & _i32(_EXPONENT_MASK)
    return bits, exponent, bits & _i32(_FRACTION_MASK)


def _normalized(exponent: jax.Array, fraction: jax.Array):
    """The significand with its top bit at bit 23 and the unbiased exponent it then has, for a
    finite nonzero float32 (subnormals shifted up; zeros give garbage, masked by callers).

    The shift is found by halving (16, 8, 4, 2, 1) rather than a count of leading zeros, which
    not every kernel backend lowers."""
    significand = jnp.where(exponent > 0, fraction | _i32(_HIDDEN_BIT), fraction)
    scale = jnp.maximum(exponent, _i32(1)) - _i32(_BIAS)
    for step in (16, 8, 4, 2, 1):
        short = significand < _i32(1 << (_FRACTION_BITS + 1 - step))
        significand = jnp.where(short, significand << _i32(step), significand)
        scale = jnp.where(short, scale - _i32(step), scale)
    return significand, scale


def _quieted(bits: jax.Array) -> jax.Array:
    return bits | _i32(_QUIET_BIT)


def _rounded_significand(digits: jax.Array, shift: jax.Array, inexact: jax.Array) -> jax.Array:
    """``digits >> shift`` rounded to nearest, ties to even, where ``inexact`` says whether a
    nonzero remainder lies below ``digits``' last bit. ``1 <= shift <= 26``."""
    kept = digits >> shift
    guard = (digits >> (shift - _i32(1))) & _i32(1)
    below_guard = digits & ((_i32(1) << (shift - _i32(1))) - _i32(1))
    sticky = inexact | (below_guard != 0)
    return kept + (guard & (sticky.astype(jnp.int32) | (kept & _i32(1))))


def divide(a: jax.Array, b: jax.Array) -> jax.Array:
    """``a / b`` for float32 arrays of one shape, correctly rounded (see the module).

    Example:
        >>> import jax.numpy as jnp
        >>> divide(jnp.float32(1), jnp.float32(0)).tolist()
        inf
    """
    a_bits, a_exponent, a_fraction = _fields(a)
    b_bits, b_exponent, b_fraction = _fields(b)
    sign = (a_bits ^ b_bits) & _i32(_SIGN_BIT)
    a_magnitude, b_magnitude = a_bits & _i32(_MAGNITUDE_MASK), b_bits & _i32(_MAGNITUDE_MASK)
    a_nan, b_nan = a_magnitude > _i32(_INFINITY_BITS), b_magnitude > _i32(_INFINITY_BITS)
    a_inf, b_inf = a_magnitude == _i32(_INFINITY_BITS), b_magnitude == _i32(_INFINITY_BITS)
    a_zero, b_zero = a_magnitude == 0, b_magnitude == 0

    a_significand, a_scale = _normalized(a_exponent, a_fraction)
    b_significand, b_scale = _normalized(b_exponent, b_fraction)
    # Both significands in [2**23, 2**24); doubling the dividend where it is the smaller puts
    # their quotient in [1, 2), with ``exponent`` the quotient's biased exponent.
    smaller = a_significand < b_significand
    remainder = jnp.where(smaller, a_significand << _i32(1), a_significand)
    exponent = a_scale - b_scale + _i32(_BIAS) - smaller.astype(jnp.int32)
    # Long division: 25 quotient bits (24 significant and a guard), the remainder below 2**26.
    quotient = jnp.zeros_like(remainder)
    for _ in range(_FRACTION_BITS + 2):
        digit = remainder >= b_significand
        remainder = jnp.where(digit, remainder - b_significand, remainder) << _i32(1)
        quotient = (quotient << _i32(1)) | digit.astype(jnp.int32)
    # A normal result drops the guard bit; a subnormal one 1 - exponent bits more (at most
    # every bit: 26 leaves 0 and a guard of 0).
    shift = jnp.where(exponent >= 1, _i32(1), jnp.minimum(_i32(2) - exponent, _i32(26)))
    significand = _rounded_significand(quotient, shift, remainder != 0)
    # The hidden bit of a normal result adds 1 to the exponent field, so the field written is
    # exponent - 1; a rounding carry out of the significand moves into the exponent as it
    # should (and up to infinity).
    field = jnp.where(exponent >= 1, exponent - _i32(1), _i32(0))
    magnitude = jnp.where(exponent >= _i32(_EXPONENT_MASK), _i32(_INFINITY_BITS),
                          (jnp.minimum(field, _i32(_EXPONENT_MASK)) << _i32(_FRACTION_BITS))
                          + significand)
    magnitude = jnp.minimum(magnitude, _i32(_INFINITY_BITS))
    magnitude = jnp.where(a_zero | b_inf, _i32(0), magnitude)
    magnitude = jnp.where(a_inf | b_zero, _i32(_INFINITY_BITS), magnitude)
    bits = sign | magnitude
    invalid = (a_zero & b_zero) | (a_inf & b_inf)
    bits = jnp.where(invalid, _i32(_DEFAULT_NAN_BITS), bits)
    bits = jnp.where(b_nan, _quieted(b_bits), bits)
    bits = jnp.where(a_nan, _quieted(a_bits), bits)
    return lax.bitcast_convert_type(bits, jnp.float32)


def sqrt(x: jax.Array) -> jax.Array:
    """``sqrt(x)`` for a float32 array, correctly rounded (see the module).

    Example:
        >>> import jax.numpy as jnp
        >>> sqrt(jnp.float32(2)).tolist() == float(jnp.sqrt(jnp.float32(2)))
        True
    """
    bits, exponent, fraction = _fields(x)
    magnitude = bits & _i32(_MAGNITUDE_MASK)
    significand, scale = _normalized(exponent, fraction)
    # x = significand * 2**(scale - 23): make scale - 23 even (its half is the root's scale).
    odd = ((scale - _i32(_FRACTION_BITS)) & _i32(1)) == 1
    significand = jnp.where(odd, significand << _i32(1), significand)
    scale = jnp.where(odd, scale - _i32(1), scale)
    # The root of significand * 2**26 (below 2**51), digit by digit: the radicand's 26 bits two
    # at a time, then 13 pairs of zeros; 26 root bits, the remainder at most 2 * root < 2**27.
    root = jnp.zeros_like(significand)
    remainder = jnp.zeros_like(significand)
    for pair in range(26):
        position = 24 - 2 * pair
        incoming = (significand >> _i32(position)) & _i32(3) if position >= 0 else _i32(0)
        remainder = (remainder << _i32(2)) | incoming
        trial = (root << _i32(2)) | _i32(1)
        digit = remainder >= trial
        remainder = jnp.where(digit, remainder - trial, remainder)
        root = (root << _i32(1)) | digit.astype(jnp.int32)
    # root * 2**((scale - 23) / 2 - 13) with root in [2**24, 2**26): 25 or 26 bits, of which
    # the top 24 are kept.
    long = root >= _i32(1 << 25)
    shift = jnp.where(long, _i32(2), _i32(1))
    result_significand = _rounded_significand(root, shift, remainder != 0)
    result_scale = ((scale - _i32(_FRACTION_BITS)) >> _i32(1)) + _i32(11) + long.astype(jnp.int32)
    # The hidden bit adds 1 to the field (a rounding carry too); a root is never subnormal.
    result = ((result_scale + _i32(_BIAS - 1)) << _i32(_FRACTION_BITS)) + result_significand
    negative = bits < 0
    result = jnp.where(magnitude == 0, bits, result)                       # +-0
    result = jnp.where(magnitude == _i32(_INFINITY_BITS), bits, result)    # +inf (-inf below)
    result = jnp.where(negative & (magnitude != 0), _i32(_DEFAULT_NAN_BITS), result)
    result = jnp.where(magnitude > _i32(_INFINITY_BITS), _quieted(bits), result)
    return lax.bitcast_convert_type(result, jnp.float32)
