"""``uniform`` (fast and precise) and ``bernoulli``."""

from __future__ import annotations

import dataclasses
import fractions
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _limbs
from jaxpmac._lowering import _platform
from jaxpmac._message import _inputs
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers import _gradients
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers import _unit
from jaxpmac._samplers._hashed import family_static, hashed
from jaxpmac._samplers._registry import sampler

PRECISE_LABEL = "jaxpmac.uniform.precise"


def _rounded_to(value, dtype):
    """A float32 ``value`` rounded to the narrow ``dtype`` (float16, bfloat16), kept float32:
    ``reduce_precision`` is a rounding XLA keeps (a convert there and back, it may drop)."""
    finfo = jnp.finfo(dtype)
    return lax.reduce_precision(value, exponent_bits=finfo.nexp, mantissa_bits=finfo.nmant)


def _scale(unit, minval, maxval):
    """``unit * (maxval - minval) + minval`` kept inside ``[minval, maxval)`` (rounding to
    nearest could reach ``maxval``); ``minval == maxval`` gives ``minval`` like jax.random.

    Each operation rounds to ``unit``'s dtype, the product on its own before the addition
    (float16 and bfloat16 computed in float32, see below): the same bits with and without
    ``jit``, in any program, on any target."""
    dtype = unit.dtype
    below_max = _fixed_math.next_after(maxval, jnp.full_like(maxval, -jnp.inf))
    if jnp.finfo(dtype).bits >= 32:
        value = _fixed_math.rounded(unit * (maxval - minval)) + minval
        return jnp.maximum(minval, jnp.minimum(value, below_max)).astype(dtype)
    # float16/bfloat16: in float32, each operation rounded to dtype on its own. Arithmetic in
    # the narrow type would round once per operation on a target that has it (AVX512-FP16, a
    # GPU) and fuse u * w + minval there; elsewhere XLA computes in float32 and may skip the
    # roundings in between. The product of two narrow values is exact in float32; the last
    # rounding is the conversion to dtype (which, unlike reduce_precision, keeps subnormals).
    f32 = jnp.float32
    width = _rounded_to(maxval.astype(f32) - minval.astype(f32), dtype)
    product = _rounded_to(unit.astype(f32) * width, dtype)
    value = (product + minval.astype(f32)).astype(dtype)
    return jnp.maximum(minval, jnp.minimum(value, below_max))


@jax.custom_jvp
def _scale_differentiable(unit, minval, maxval):
    """:func:`_scale` with the derivative of the affine map, ``(1 - u) dminval + u dmaxval``
    (``dminval`` where ``minval > maxval``, which gives ``minval``): the clamp into
    ``[minval, maxval)`` moves a value by an ulp at most and is left out of the derivative
    (its ``nextafter`` has no derivative rule). ``unit`` comes from stream bits: its tangent is
    zero."""
    return _scale(unit, minval, maxval)


@_scale_differentiable.defjvp
def _scale_jvp(primals, tangents):
    (unit, minval, maxval), (_, d_minval, d_maxval) = primals, tangents
    value = _gradients.primal(_scale_differentiable(unit, minval, maxval))
    tangent = d_minval + unit * (d_maxval - d_minval)
    return value, jnp.where(minval > maxval, d_minval, tangent).astype(value.dtype)


def _precise_unit(state, more, n: int, dtype) -> jax.Array:
    """``[n]`` uniforms in ``[0, 1)``: an infinite-precision uniform rounded down to ``dtype``.

    The leading zero bits ``z`` of the infinite binary fraction are geometric; the value is
    ``2**-(z+1) * (1 + M / 2**m)`` with fresh mantissa bits ``M`` (``m`` of them), or the
    subnormal ``M * 2**-(E+m)`` once ``z >= E`` (``2**-E`` the smallest normal). ``z`` is
    counted as trailing zeros of stream words, as many words as needed: float16/bfloat16/float32
    element ``i`` reads 64-bit word ``i`` (mantissa from its top ``m`` bits, ``z`` from the rest);
    float64 reads words ``2i`` (mantissa) and ``2i+1`` (``z``). If all counting bits are zero
    (probability ``2**-41`` or less), word ``i`` of ``state.split_static(PRECISE_LABEL)
    .split(t)`` continues the count, ``t = 1, 2, ...``, until a one bit or ``z >= E``.
    """
    dtype = jnp.dtype(dtype)
    nmant = jnp.finfo(dtype).nmant
    min_exp = -int(jnp.finfo(dtype).minexp)      # E: 2**-E is the smallest normal
    if dtype == jnp.float64:
        words = state.stream(2 * n, jnp.uint64, per_element=2).reshape(n, 2)
        mantissa = words[:, 0] >> np.uint64(64 - nmant)
        count_word = words[:, 1]
    else:
        words = state.stream(2 * n, jnp.uint32, per_element=2).reshape(n, 2)
        lo, hi = words[:, 0], words[:, 1]
        mantissa = hi >> np.uint32(32 - nmant)
        hi_rest = hi & np.uint32((1 << (32 - nmant)) - 1)
        # Trailing zeros of the 64 - m counting bits (hi_rest, lo).
        count_word = (hi_rest, lo)
    if dtype == jnp.float64:
        zeros = _limbs.trailing_zeros((count_word,))
        exhausted = count_word == 0
    else:
        hi_rest, lo = count_word
        zeros = jnp.minimum(_limbs.trailing_zeros((lo, hi_rest)), 64 - nmant)
        exhausted = (lo == 0) & (hi_rest == 0)

    def needs_more(carry):
        _, zeros, exhausted = carry
        return jnp.any(exhausted & (zeros < min_exp))

    def count_more(carry):
        t, zeros, exhausted = carry
        pair = more.member(t).stream(2 * n, jnp.uint32, per_element=2).reshape(n, 2)
        lo, hi = pair[:, 0], pair[:, 1]
        extra = _limbs.trailing_zeros((lo, hi))
        zeros = jnp.where(exhausted, zeros + extra, zeros)
        exhausted = exhausted & (lo == 0) & (hi == 0)
        return t + 1, zeros, exhausted

    _, zeros, _ = lax.while_loop(needs_more, count_more, (jnp.uint32(1), zeros, exhausted))
    return _assemble(zeros, mantissa, dtype)


def _assemble(zeros, mantissa, dtype):
    """The float with exponent field ``max(E - zeros, 0)`` and mantissa ``mantissa``."""
    nmant = jnp.finfo(dtype).nmant
    min_exp = -int(jnp.finfo(dtype).minexp)
    udtype = _unit.unsigned_of(dtype)
    exponent = jnp.maximum(min_exp - zeros, 0).astype(udtype)
    bits = (exponent << np.array(nmant, udtype)) | mantissa.astype(udtype)
    return lax.bitcast_convert_type(bits, dtype)


@dataclasses.dataclass(frozen=True)
class _ScaledFastUnit:
    """``_scale(fast_unit(word), minval, maxval)`` with bounds fixed at trace time: a
    ``_unit.WordMap`` function, so that the default ``uniform`` (concrete scalar bounds) is
    made by the stream itself and its stream words never exist next to its output (peak
    memory ~1.1x the output instead of 2x, and one pass over memory less; traced bounds get
    that only where the map runs after the chunk loop, in place). The bounds are the
    ``dtype`` values of the checked parameters, so the arithmetic, and every bit, is that of
    the general path."""

    minval: float
    maxval: float

    def __call__(self, word, dtype):
        unit = _unit.fast_unit(word, dtype)
        if self.maxval == 1.0 and self.minval == 0.0 and math.copysign(1.0, self.minval) > 0:
            # The scaling is the identity here: u * 1 + 0 is exact, and u <= 1 - 2**-m lies
            # inside the clamp (not for a minval of -0.0, where the clamp may give -0.0).
            # Skipped, bfloat16 draws run ~10% faster (XLA's CPU backend computes each
            # bfloat16 operation in float32 and rounds it back); the same bits.
            return unit
        return _scale(unit, np.array(self.minval, dtype), np.array(self.maxval, dtype))


def _static_scalar(param):
    """The Python float of a concrete, finite, scalar checked parameter, else None."""
    if _inputs.is_traced(param) or np.ndim(param) != 0:
        return None
    scalar = np.asarray(param)
    return float(scalar) if np.isfinite(scalar) else None


@partial(jax.jit, static_argnames=("shape", "dtype", "bounds"))
def _uniform_static_bounds_impl(state, *, shape, dtype, bounds):
    return _unit.mapped_words(state, shape, dtype, bounds, dtype)


@partial(jax.jit, static_argnames=("shape", "dtype", "precise"))
def _uniform_impl(state, more, minval, maxval, *, shape, dtype, precise):
    n = math.prod(shape)
    if precise:
        unit = _precise_unit(state, more, n, dtype)
    else:
        unit = _unit.mapped_words(state, shape, dtype, _unit.fast_unit, dtype)
    return _scale_differentiable(unit.reshape(shape), minval, maxval)


def _real_bound(value, *, name: str, dtype):
    if _inputs.is_traced(value):
        return _sampler_args.real_param(value, name=name, dtype=dtype)
    with jax.ensure_compile_time_eval():
        return _sampler_args.real_param(value, name=name, dtype=dtype)


@sampler
def uniform(state, shape=(), dtype=None, minval=0.0, maxval=1.0, *, precise=False, offset=0):
    """Uniform floats in ``[minval, maxval)``, like ``jax.random.uniform``.

    Algorithms (element ``i`` of the flattened output reads fixed stream words, see
    :mod:`jaxpmac._samplers._unit`):

    * default (fast): the top ``m`` bits of word ``i`` (``m`` = mantissa bits) fill the
      mantissa of a float in ``[1, 2)``, minus 1: a uniform on the grid ``k * 2**-m``, as in
      ``jax.random`` (so ``[0, 1)`` values below ``2**-m`` are 0).
    * ``precise=True``: an infinite-precision uniform rounded *down* to ``dtype`` as Hail's
      ``rand_unif`` does: the binade from the count of zero bits (as many stream words as
      needed), the mantissa from fresh bits. Every float in ``[0, 1)`` -- subnormals and 0
      included -- appears with exactly its probability (the width of the interval it
      represents). Element ``i`` reads 64-bit word ``i`` (float64: words ``2i``, ``2i+1``); the
      rare continuation (probability ``<= 2**-41``) comes from a labelled sub-stream.
      Backends that flush subnormals to zero (XLA's CPU backend does, in every compiled
      computation) return 0 for the subnormal results (total probability ``2**-126`` in
      float32, ``2**-1022`` in float64).

    The unit value ``u`` maps to ``u * (maxval - minval) + minval`` in ``dtype``, clamped to
    ``[minval, nextafter(maxval, -inf)]``; this affine map rounds to nearest, so outside
    ``[0, 1)`` exactness holds up to one rounding (it is exact when ``minval = 0`` and the width
    is a power of two). ``minval == maxval`` gives ``minval``; concrete bounds with
    ``minval > maxval`` are a ValueError, traced ones give ``minval``; NaN or infinite bounds
    give NaN or infinities as in ``jax.random.uniform``. The product is rounded on its own before the
    addition, so the values are the same with and without ``jit`` in any program.
    Differentiable in ``minval`` and ``maxval``: ``(1 - u) dminval + u dmaxval``
    (``docs/gradients.md``).

    Args:
        state: an :class:`RNGState`.
        shape: output shape; ``minval``/``maxval`` must broadcast to it.
        dtype: float16, bfloat16, float32 or float64 (x64); default JAX's default float.
        minval, maxval: bounds, scalars or arrays.
        precise: keyword-only; see above.
        offset: keyword-only; element ``i`` of the flattened output is element ``offset + i``
            of the same draw with a larger shape, so a tile, a shard or a later call can draw
            its own slice (a Python int or an integer scalar array; traced is fine).

    Example:
        >>> import jaxpmac as jp
        >>> x = jp.uniform(jp.key(0), (3,), minval=-1.0, maxval=1.0)
        >>> bool(((-1 <= x) & (x < 1)).all())
        True
    """
    _sampler_args.check_state(state, name="uniform")
    _sampler_args.check_domain("uniform", minval=minval, maxval=maxval)
    dtype = _sampler_args.output_dtype(dtype, _sampler_args.FLOAT, name="uniform")
    # Converted where concrete even under an outer jit, so concrete scalar bounds (the
    # default) can take the static-bounds path below. A traced bound is staged as it is: under
    # jit(shard_map) its conversion's constants must be cast to vary as it does, which JAX
    # cannot do while it evaluates constants eagerly.
    minval = _real_bound(minval, name="uniform minval", dtype=dtype)
    maxval = _real_bound(maxval, name="uniform maxval", dtype=dtype)
    shape = _sampler_args.output_shape(shape, [minval, maxval], name="uniform")
    precise = _sampler_args.check_flag(precise, name="uniform precise")
    offset = _sampler_args.check_offset(offset, name="uniform")
    low, high = _static_scalar(minval), _static_scalar(maxval)
    if not precise and low is not None and high is not None:
        return _uniform_static_bounds_impl(hashed(state, offset), shape=shape, dtype=dtype,
                                           bounds=_ScaledFastUnit(low, high))
    more = family_static(state, PRECISE_LABEL, offset) if precise else None
    return _uniform_impl(hashed(state, offset), more, minval, maxval, shape=shape, dtype=dtype,
                         precise=precise)


def _bernoulli_of_scalar(state, p: float, *, shape):
    """``bernoulli`` of a concrete scalar ``p`` (subnormals already zero: ``real_param``), as
    one comparison of the word with ``ceil(p * 2**32)``, computed here exactly: for an integer
    ``word``, ``word * 2**-32 < p`` is the decision of ``_bernoulli_impl``'s thresholds. Inside
    a kernel, where Mosaic GPU's layout inference did not finish (over 6 minutes) on the
    thresholds' arithmetic and logic."""
    bound = math.ceil(fractions.Fraction(p) * 2 ** 32)
    if bound >= 2 ** 32:
        return jnp.full(shape, True)
    word = state.stream(math.prod(shape), jnp.uint32, shape=shape).reshape(shape)
    return word < np.uint32(bound)


@partial(jax.jit, static_argnames=("shape",))
def _bernoulli_impl(state, p, *, shape):
    word = state.stream(math.prod(shape), jnp.uint32).reshape(shape)
    # u = word * 2**-32 < p, decided exactly: split p * 2**24 into whole and fraction parts
    # (both exact) and compare the word's top 24 and low 8 bits with them.
    scaled = p * np.array(2.0 ** 24, p.dtype)
    whole = _fixed_math.floor(scaled)
    frac_256 = (scaled - whole) * np.array(256.0, p.dtype)
    top = (word >> np.uint32(8)).astype(p.dtype)
    low = (word & np.uint32(0xFF)).astype(p.dtype)
    return (top < whole) | ((top == whole) & (low < frac_256))


@sampler
def bernoulli(state, p=0.5, shape=None, mode="low", *, offset=0):
    """Booleans that are True with probability ``p``, like ``jax.random.bernoulli``.

    Element ``i`` reads 32-bit stream element ``i`` as ``u = k * 2**-32`` and returns
    ``u < p``, decided exactly in integer-exact float arithmetic: the probability is
    ``ceil(p * 2**32) / 2**32`` (error below ``2**-32``; exact for ``p = 0`` and ``p = 1``).
    A concrete ``p`` outside ``[0, 1]`` (or NaN) is a ValueError; a traced one clips, and NaN
    gives False (as ``jax.random.bernoulli``).

    Args:
        state: an :class:`RNGState`.
        p: probability of True, scalar or array (computed in float32, or float64 if ``p`` is
            a float64 array).
        shape: output shape (``p`` must broadcast to it); None: ``p``'s shape.
        mode: accepted for compatibility with ``jax.random``; "low" or "high" draw the same.
        offset: keyword-only; element ``i`` of the flattened output is element ``offset + i``
            of the same draw with a larger shape, so a tile, a shard or a later call can draw
            its own slice (a Python int or an integer scalar array; traced is fine).

    Example:
        >>> import jaxpmac as jp
        >>> jp.bernoulli(jp.key(0), 0.5, (4,)).dtype
        dtype('bool')
    """
    _sampler_args.check_state(state, name="bernoulli")
    _sampler_args.check_domain("bernoulli", p=p)
    _sampler_args.check_mode(mode, name="bernoulli", modes=("low", "high"))
    given = p
    p = _sampler_args.real_param(p, name="bernoulli p", dtype=_sampler_args.float_of(p))
    shape = _sampler_args.output_shape(shape, [p], name="bernoulli")
    offset = _sampler_args.check_offset(offset, name="bernoulli")
    if _platform.in_kernel():
        known = _sampler_args.known_scalar(given, dtype=p.dtype)
        if known is not None:
            return _bernoulli_of_scalar(hashed(state, offset), float(known), shape=shape)
    return _bernoulli_impl(hashed(state, offset), p, shape=shape)
