"""Hail's random functions over a state's output blocks (docs/spec.md section 3), bit for bit.

Hail 0.2.139 draws from the 64-bit stream ``T_0[0], T_0[1], ...`` of a state in two ways:

* ``rand_unif`` and ``rand_bool`` read the four words of ``T_0`` at once (``_rand_unif``);
* everything else goes through ``ThreefryRandomEngine``: ``nextLong`` returns the next word,
  ``nextInt`` the next word's HIGH half and then its LOW half (as Hail's code and its
  published outputs have it, though one text of the specification says low first),
  ``nextDouble`` one word, or two when the first has twelve or more trailing zeros (or more,
  after all-zero words).

All of it is exact integer arithmetic on the ``uint32`` halves of 64-bit words (``Pair``), so the
same code runs with ``jax_enable_x64`` off and on. Only the last step -- an IEEE float64 bit
pattern to a float -- differs: a bitcast when x64 is on, a correctly rounded float32 when off.

The functions here take the hashed message ``h`` (four dynamic ``Pair`` words) and the static
final tweak, so that draws from many states share one compiled program; ``jaxpmac.hail``
validates user input and calls them.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _limbs as limbs
from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering._encrypt import encrypt_as
from jaxpmac._lowering._platform import cpu_barrier
from jaxpmac._message._state import RNGState
from jaxpmac._samplers import _fixed_math
from jaxpmac._samplers._correctly_rounded import divide, sqrt

U32 = jnp.uint32
I32 = jnp.int32

# IEEE float64 layout, as seen from the high uint32 half of its bits.
F64_EXPONENT_SHIFT = 20          # the 11 exponent bits sit above 20 significand bits
F64_HIGH_SIGNIFICAND_MASK = (1 << F64_EXPONENT_SHIFT) - 1
F64_IMPLICIT_BIT = 1 << F64_EXPONENT_SHIFT
F64_INFINITY_HIGH = 0x7FF00000

# nextDouble: a word's trailing zeros are the leading zeros of a binary fraction; the 52 bits
# above the first 12 make the significand, and the exponent starts at that of [0.5, 1).
UNIT_EXPONENT = 1022
SIGNIFICAND_DROP = 12
WORD_BITS = 64

# Float64 bits -> float32: the significand loses 53 - 24 = 29 bits for a normal float32
# result; below float32's smallest normal, 2**-126 (float64 biased exponent 897), one more bit
# per binade. Past a shift of 55 every 53-bit significand rounds to zero.
F32_NORMAL_DROP = 29
F32_MAX_DROP = 55
F32_LOWEST_NORMAL_F64_EXPONENT = 897     # 2**-126
F32_EXPONENT_SHIFT = 23

# Float32 bits -> float64 bits: 1023 - 127 rebiases a normal exponent; a subnormal float32
# m * 2**-149 with leading bit at position k has float64 biased exponent k - 149 + 1023.
F32_TO_F64_BIAS = 1023 - 127
F32_SUBNORMAL_TO_F64_BIAS = 1023 - 149
F32_FRACTION_BITS = 23
F64_FRACTION_BITS = 52


def state_hash(state: RNGState) -> tuple[int, tuple[w.Pair, ...]]:
    """``(f, h)`` of SPEC section 2 with ``h`` as dynamic ``Pair`` words (jit arguments)."""
    final_tweak, h = state.message_hash()
    return final_tweak, tuple(w.to_pair(word) for word in h)


def output_block(h, final_tweak: int, index) -> tuple[w.Pair, ...]:
    """Output block ``T_index = E(K, (f, index), h)`` as four ``Pair`` words.

    ``index`` is a static int or a ``uint32`` scalar array (2**32 blocks is 2**40 bits, far more
    than any of Hail's functions reads from one state).
    """
    counter = index if isinstance(index, int) else w.Pair(jnp.zeros_like(index), index)
    # Unrolled on every backend: for one block per state it compiles faster than the rolled
    # CPU lowering and runs as fast (benchmarks/README.md, "Constants of the CPU lowering").
    words = encrypt_as("elementwise_pairs", _threefish.GENERATOR_KEY, (final_tweak, counter), h,
                       native=False)
    return tuple(w.to_pair(word) for word in words)


# -- 64-bit words as uint32 pairs --------------------------------------------------------------

def is_zero(word: w.Pair) -> jax.Array:
    return (word.hi | word.lo) == 0


def select(pred, on_true: w.Pair, on_false: w.Pair) -> w.Pair:
    return w.Pair(jnp.where(pred, on_true.hi, on_false.hi),
                  jnp.where(pred, on_true.lo, on_false.lo))


def trailing_zeros(word: w.Pair) -> jax.Array:
    """Java's ``Long.numberOfTrailingZeros``: 64 for a zero word (Hail relies on that)."""
    return limbs.trailing_zeros((word.lo, word.hi))


def shift_right(word: w.Pair, k: jax.Array) -> w.Pair:
    """``word >> k`` for a dynamic ``k`` in ``[0, 63]`` (no shift by 32 or more is emitted)."""
    k = k.astype(U32)
    small = k & np.uint32(31)
    carried = jnp.where(small == 0, np.uint32(0), word.hi << ((np.uint32(32) - small) & 31))
    big = k >= 32
    return w.Pair(jnp.where(big, np.uint32(0), word.hi >> small),
                  jnp.where(big, word.hi >> small, (word.lo >> small) | carried))


def low_bits_nonzero(word: w.Pair, k: jax.Array) -> jax.Array:
    """Whether any of the ``k`` lowest bits of ``word`` is set, for ``k`` in ``[0, 63]``."""
    k = k.astype(U32)
    below = (np.uint32(1) << (k & 31)) - np.uint32(1)   # the low (k mod 32) bits
    big = k >= 32
    lo_mask = jnp.where(big, np.uint32(w.MASK32), below)
    hi_mask = jnp.where(big, below, np.uint32(0))
    return ((word.lo & lo_mask) | (word.hi & hi_mask)) != 0


def less(a: w.Pair, b: w.Pair) -> jax.Array:
    """Unsigned 64-bit ``a < b``."""
    return (a.hi < b.hi) | ((a.hi == b.hi) & (a.lo < b.lo))


# -- IEEE bit patterns --------------------------------------------------------------------------

def significand(word: w.Pair) -> w.Pair:
    """``word >>> 12``: the 52 significand bits nextDouble takes from a word."""
    return w.Pair(word.hi >> SIGNIFICAND_DROP,
                  (word.hi << (32 - SIGNIFICAND_DROP)) | (word.lo >> SIGNIFICAND_DROP))


def double_bits(exponent: jax.Array, fraction: w.Pair) -> w.Pair:
    """Float64 bits ``(exponent << 52) | fraction`` (``fraction`` below 2**52)."""
    return w.Pair((exponent.astype(U32) << F64_EXPONENT_SHIFT) | fraction.hi, fraction.lo)


def bits_to_float64(bits: w.Pair) -> jax.Array:
    """The float64 with these bits (needs x64)."""
    return lax.bitcast_convert_type(w.to_u64(bits), jnp.float64)


def bits_to_float32(bits: w.Pair) -> jax.Array:
    """The positive float64 with these bits, rounded to the nearest float32 (ties to even).

    Exact for every positive double below 2**128, float32 subnormal results included: the
    53-bit significand is shifted right with round-to-nearest-even in integer arithmetic, so
    there is one rounding, never two.
    """
    exponent = (bits.hi >> F64_EXPONENT_SHIFT).astype(I32)
    mantissa = w.Pair((bits.hi & np.uint32(F64_HIGH_SIGNIFICAND_MASK))
                      | np.uint32(F64_IMPLICIT_BIT), bits.lo)
    # Normal float32 results keep 24 bits; each binade below 2**-126 keeps one fewer.
    drop = jnp.clip(F32_LOWEST_NORMAL_F64_EXPONENT + F32_NORMAL_DROP - exponent,
                    F32_NORMAL_DROP, F32_MAX_DROP)
    # The implicit bit of the kept 24 adds one to this exponent field (none when subnormal).
    exponent_field = (jnp.maximum(exponent - F32_LOWEST_NORMAL_F64_EXPONENT, 0).astype(U32)
                      << F32_EXPONENT_SHIFT)
    kept_and_round_bit = shift_right(mantissa, drop - 1).lo
    kept = kept_and_round_bit >> 1
    sticky = low_bits_nonzero(mantissa, drop - 1)
    round_up = ((kept_and_round_bit & 1) == 1) & (sticky | ((kept & 1) == 1))
    # A carry out of the significand correctly bumps the exponent field (or reaches inf).
    result = exponent_field + kept + round_up.astype(U32)
    return lax.bitcast_convert_type(result, jnp.float32)


def positive_float32_as_double_bits(p: jax.Array) -> w.Pair:
    """Float64 bits of a float32 ``p`` when ``p > 0`` (exact, subnormals included), else 0.

    For comparisons ``u < p`` with a positive double ``u`` as unsigned 64-bit bit patterns:
    ``p <= 0`` and NaN map to 0, which no positive ``u`` is below; +inf maps to +inf's bits.
    """
    b = lax.bitcast_convert_type(p.astype(jnp.float32), U32)
    sign, biased, mantissa = b >> 31, (b >> F32_FRACTION_BITS) & 0xFF, b & 0x7FFFFF
    subnormal = biased == 0
    # Position of the leading significand bit: 23 (the implicit one) unless subnormal.
    lead = jnp.where(subnormal, 31 - lax.clz(mantissa).astype(I32), F32_FRACTION_BITS)
    exponent = jnp.where(subnormal, lead + F32_SUBNORMAL_TO_F64_BIAS,
                         biased.astype(I32) + F32_TO_F64_BIAS)
    fraction = mantissa & ~(np.uint32(1) << lead.astype(U32))   # drop the leading bit
    shift = (F64_FRACTION_BITS - lead).astype(U32)              # in [29, 52]
    high_shift = shift >= 32
    fraction_hi = jnp.where(high_shift, fraction << ((shift - 32) & 31),
                            fraction >> ((np.uint32(32) - shift) & 31))
    fraction_lo = jnp.where(high_shift, np.uint32(0), fraction << (shift & 31))
    bits = double_bits(exponent, w.Pair(fraction_hi, fraction_lo))
    infinite = biased == 0xFF
    bits = select(infinite, w.Pair(np.uint32(F64_INFINITY_HIGH), np.uint32(0)), bits)
    positive = (sign == 0) & (b != 0) & ~(infinite & (mantissa != 0))
    return select(positive, bits, w.Pair(np.uint32(0), np.uint32(0)))


def positive_double_bits_static(p: float) -> tuple[int, int]:
    """The same mapping as :func:`positive_float32_as_double_bits` for a concrete float64."""
    if not p > 0:   # also NaN
        return 0, 0
    word = int(np.asarray(p, np.float64).view(np.uint64))
    return word >> 32, word & w.MASK32


def float_dtype():
    return jnp.float64 if w.x64_enabled() else jnp.float32


def bits_to_float(bits: w.Pair) -> jax.Array:
    return bits_to_float64(bits) if w.x64_enabled() else bits_to_float32(bits)


# -- Hail's functions ---------------------------------------------------------------------------

def unit_uniform_bits(block0: tuple[w.Pair, ...]) -> w.Pair:
    """Float64 bits of Hail's ``_rand_unif(T_0[0], ..., T_0[3])``, exactly.

    The exponent comes from the trailing zeros of ``T_0[3]`` (then ``T_0[2]``, ... while zero),
    the significand from ``T_0[0] >>> 12``.

    Hail lowers the exponent by 64 per zero word, then by the trailing zeros of the first
    nonzero one (64 if all are zero): that is the trailing zeros of the 256-bit number with
    ``T_0[3]`` as its lowest word, counted without a ``select`` (see
    :func:`jaxpmac._cipher._limbs.trailing_zeros` for why).
    """
    w0, w1, w2, w3 = block0
    zeros = limbs.trailing_zeros((w3.lo, w3.hi, w2.lo, w2.hi, w1.lo, w1.hi, w0.lo, w0.hi))
    # Java's numberOfTrailingZeros(0) is 64, so four zero words give exponent 1022 - 256.
    return double_bits(jnp.int32(UNIT_EXPONENT) - zeros, significand(w0))


@partial(jax.jit, static_argnames=("final_tweak",))
def uniform(h, lower, upper, *, final_tweak: int) -> jax.Array:
    """``u * (upper - lower) + lower`` with Hail's ``u`` (float64 with x64, else float32)."""
    u = bits_to_float(unit_uniform_bits(output_block(h, final_tweak, 0)))
    # On a CPU, ``u`` passes a barrier: vmapped, jax 0.12's XLA (LLVM's loop vectorizer) takes
    # 80-100 s to compile the cipher and ``rounded``'s integer minimums in one loop, and 0.5 s
    # with them apart (benchmarks/README.md, "Compile time of vmapped Hail draws").
    u = cpu_barrier(u)
    dtype = float_dtype()
    lower, upper = jnp.asarray(lower, dtype), jnp.asarray(upper, dtype)
    # Hail (Java) rounds every product; a fused multiply-add would round once.
    return _fixed_math.rounded(u * (upper - lower)) + lower


@partial(jax.jit, static_argnames=("final_tweak",))
def bernoulli_exact(h, p_bits: w.Pair, *, final_tweak: int) -> jax.Array:
    """``u < p`` for Hail's float64 ``u``, compared as bit patterns (``p_bits``: see
    :func:`positive_float32_as_double_bits`), so no float64 is needed."""
    return less(unit_uniform_bits(output_block(h, final_tweak, 0)), p_bits)


@partial(jax.jit, static_argnames=("final_tweak",))
def bernoulli_x64(h, p, *, final_tweak: int) -> jax.Array:
    u = bits_to_float64(unit_uniform_bits(output_block(h, final_tweak, 0)))
    return u < jnp.asarray(p, jnp.float64)


@partial(jax.jit, static_argnames=("final_tweak",))
def word0_int64(h, *, final_tweak: int) -> jax.Array:
    """nextLong() of a fresh engine, ``T_0[0]``, as int64 (needs x64)."""
    word = output_block(h, final_tweak, 0)[0]
    return lax.bitcast_convert_type(w.to_u64(word), jnp.int64)


@partial(jax.jit, static_argnames=("final_tweak",))
def bounded_int32(h, n, *, final_tweak: int) -> jax.Array:
    """Hail's ``nextInt(n)`` on a fresh engine (Swift's nearly divisionless method).

    Its three possible nextInt calls read ``T_0[0]``'s high half, ``T_0[0]``'s low half and
    ``T_0[1]``'s high half, so both paths are computed from ``T_0`` and selected per lane: no
    loop is needed. For ``n <= 0`` (which Hail does not reject) this returns what Hail returns:
    the high word of the signed product ``n * x``.
    """
    w0, w1 = output_block(h, final_tweak, 0)[:2]
    n = jnp.asarray(n).astype(I32)
    n_bits = lax.bitcast_convert_type(n, U32)
    x, low_extra, high_extra = w0.hi, w0.lo, w1.hi
    product = w.Pair(*limbs.mul32(n_bits, x))
    result, fraction = product.hi, product.lo
    early = fraction < (np.uint32(0) - n_bits)        # fraction < 2**32 - n
    # multHigh = ((n * lowExtra) >>> 32 + n * highExtra) >>> 32, in 64-bit arithmetic.
    carried = limbs.mul32(n_bits, low_extra)[0]
    extra = w.Pair(*limbs.mul32(n_bits, high_extra))
    extra_lo = extra.lo + carried
    mult_high = extra.hi + (extra_lo < carried).astype(U32)
    carry = ((fraction + mult_high) < fraction).astype(U32)
    positive = jnp.where(early, result, result + carry)
    # n <= 0: Java's signed n * x has high word hi(n_bits * x) - x; the early return is taken.
    nonpositive = result - jnp.where(n < 0, x, np.uint32(0))
    return lax.bitcast_convert_type(jnp.where(n > 0, positive, nonpositive), I32)


class _PolarState(NamedTuple):
    """Per-lane progress of Marsaglia's polar method through the engine's words."""

    block_index: jax.Array    # uint32: the output block the next iteration reads
    awaiting_fraction: jax.Array  # bool: nextDouble read its exponent word, needs another word
    exponent: jax.Array       # int32: the exponent of the double being built
    have_v1: jax.Array        # bool: v1 of the current pair is drawn
    v1: jax.Array
    s: jax.Array
    done: jax.Array           # bool: a pair with 0 < s < 1 was found


def _polar_step(state: _PolarState, word: w.Pair) -> _PolarState:
    """Feeds one 64-bit word of the engine to nextDouble and, per double, to the polar loop."""
    active = ~state.done
    exponent_word = active & ~state.awaiting_fraction
    zero = is_zero(word)
    zeros = trailing_zeros(word)
    # nextDouble: each all-zero word lowers the exponent by 64; the first nonzero one by its
    # trailing zeros, and gives the significand too unless 12 or more of its bits are zeros.
    exponent = jnp.where(exponent_word, state.exponent - jnp.where(zero, WORD_BITS, zeros),
                         state.exponent)
    wants_fraction = exponent_word & ~zero & (zeros >= SIGNIFICAND_DROP)
    finished = (active & state.awaiting_fraction) | (exponent_word & ~zero & ~wants_fraction)
    d = bits_to_float(double_bits(exponent, significand(word)))
    v = 2 * d - 1   # 2 * d is exact, so even a fused multiply-add rounds like Java here
    # The second double of a pair completes it: accept when 0 < s < 1 (Hail: while s >= 1 or
    # s == 0, draw again). The accepted pair's v1 and s stay in the state.
    completes_pair = finished & state.have_v1
    square_sum = (_fixed_math.rounded(state.v1 * state.v1)
                  + _fixed_math.rounded(v * v))     # Java rounds each product
    s = jnp.where(completes_pair, square_sum, state.s)
    accepted = completes_pair & (s > 0) & (s < 1)
    return _PolarState(
        block_index=state.block_index,
        awaiting_fraction=jnp.where(finished, False, state.awaiting_fraction | wants_fraction),
        exponent=jnp.where(finished, jnp.int32(UNIT_EXPONENT), exponent),
        have_v1=jnp.where(finished, ~state.have_v1, state.have_v1),
        v1=jnp.where(finished & ~state.have_v1, v, state.v1),
        s=s,
        done=state.done | accepted,
    )


@partial(jax.jit, static_argnames=("final_tweak",))
def normal(h, mean, sd, *, final_tweak: int) -> jax.Array:
    """Hail's ``mean + sd * nextGaussian()`` on a fresh engine (Marsaglia's polar method).

    A ``while_loop`` reads one output block (four words) per iteration, lazily, until the lane's
    pair is accepted: any number of rejections is handled, and under ``vmap`` all lanes share
    the loop, done lanes unchanged. With x64 off the doubles are rounded to float32 and the
    rest runs in float32 (see ``jaxpmac.hail.rand_norm``).
    """
    dtype = float_dtype()
    zero = jnp.zeros((), dtype)
    init = _PolarState(block_index=jnp.uint32(0), awaiting_fraction=jnp.bool_(False),
                       exponent=jnp.int32(UNIT_EXPONENT), have_v1=jnp.bool_(False),
                       v1=zero, s=zero, done=jnp.bool_(False))

    def read_block(state: _PolarState) -> _PolarState:
        for word in output_block(h, final_tweak, state.block_index):
            state = _polar_step(state, word)
        return state._replace(block_index=state.block_index + np.uint32(1))

    state = lax.while_loop(lambda state: ~state.done, read_block, init)
    # StrictMath.sqrt(-2 * StrictMath.log(s) / s) in Hail; sqrt is correctly rounded everywhere,
    # and the log is this project's (float64: fdlibm's algorithm, StrictMath's; XLA's log
    # changes with the instruction set).
    multiplier = sqrt(divide(-2 * _fixed_math.log(state.s), state.s))
    z = state.v1 * multiplier
    return jnp.asarray(mean, dtype) + _fixed_math.rounded(jnp.asarray(sd, dtype) * z)


# -- Hail's sequential engine ---------------------------------------------------------------------
#
# ``ThreefryRandomEngine`` as a pure JAX value: every ``next_*`` takes an :class:`Engine` and
# returns the advanced engine with its draw, so a sampler threads it through ``lax.while_loop`` /
# ``lax.fori_loop`` bodies and ``vmap`` batches it like any other pytree.

WORDS_PER_BLOCK = 4
INTS_PER_BLOCK = 2 * WORDS_PER_BLOCK   # Hail's ``usedInts`` when the buffer is used up


@jax.tree_util.register_pytree_node_class
class Engine:
    """Hail's ``ThreefryRandomEngine`` for one state, as a pytree of arrays.

    Fields (all of them ``uint32``/``int32``/``bool``/float arrays, the leaves of the tree):

    * ``h``: the hashed message, four ``Pair`` words (the cipher's plaintext);
    * ``final_tweak``: the state's final tweak word ``f`` as a ``Pair`` (an array, not static:
      states of both message-length classes share one compiled program);
    * ``block_index``: ``uint32``, the index ``c`` of the next output block ``T_c`` to compute
      (Hail's ``counter``);
    * ``block``: the current block's four ``Pair`` words (Hail's ``buffer``);
    * ``used_ints``: ``int32``, Hail's ``usedInts``: the 32-bit halves of ``block`` consumed,
      in ``[0, 8]``; ``8`` means the buffer is empty. The read position is ``used_ints // 2``
      and an odd value means a ``next_int`` left the word's LOW half pending (a ``next_long``
      skips it, as Hail's does);
    * ``gaussian``, ``has_gaussian``: ``nextGaussian``'s buffered second normal of a polar
      pair (float64 with x64 on, float32 off) and whether it is pending.
    """

    __slots__ = ("h", "final_tweak", "block_index", "block", "used_ints", "gaussian",
                 "has_gaussian")

    def __init__(self, h, final_tweak, block_index, block, used_ints, gaussian, has_gaussian):
        self.h = tuple(h)
        self.final_tweak = final_tweak
        self.block_index = block_index
        self.block = tuple(block)
        self.used_ints = used_ints
        self.gaussian = gaussian
        self.has_gaussian = has_gaussian

    def tree_flatten(self):
        children = (self.h, self.final_tweak, self.block_index, self.block, self.used_ints,
                    self.gaussian, self.has_gaussian)
        return children, None

    @classmethod
    def tree_unflatten(cls, _, children):
        return cls(*children)

    def replace(self, **changes) -> "Engine":
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return Engine(**fields)

    def __repr__(self):
        return f"Engine(block_index={self.block_index}, used_ints={self.used_ints})"


def tweak_pair(final_tweak) -> w.Pair:
    """The final tweak word as a ``Pair`` of ``uint32`` arrays (from a Python int or a Pair)."""
    if isinstance(final_tweak, int):
        final_tweak = w.pair_const(final_tweak)
    return w.Pair(jnp.asarray(final_tweak.hi, U32), jnp.asarray(final_tweak.lo, U32))


def engine_from_hash(h, final_tweak) -> Engine:
    """A fresh engine (nothing drawn yet) for the hashed message ``h`` (four ``Pair`` words)
    with final tweak ``f`` (a Python int, as ``state_hash`` gives it, or a ``Pair``)."""
    h = tuple(w.Pair(jnp.asarray(word.hi, U32), jnp.asarray(word.lo, U32)) for word in h)
    zero = jnp.zeros_like(h[0].hi)
    return Engine(h=h, final_tweak=tweak_pair(final_tweak), block_index=zero,
                  block=(w.Pair(zero, zero),) * WORDS_PER_BLOCK,
                  used_ints=jnp.full(zero.shape, INTS_PER_BLOCK, I32),
                  gaussian=jnp.zeros(zero.shape, float_dtype()),
                  has_gaussian=jnp.zeros(zero.shape, jnp.bool_))


def engine_from_state(state: RNGState) -> Engine:
    """Hail's engine for ``state`` (``ThreefryRandomEngine(nonce, staticID, message)``)."""
    final_tweak, h = state_hash(state)
    return engine_from_hash(h, final_tweak)


def _fill_if_empty(eng: Engine, take) -> Engine:
    """Computes the next block when a word is to be taken and the buffer is empty.

    A ``lax.cond``, not an arithmetic select: where the predicate is not batched (unbatched
    ``used_ints``: every lane has drawn the same sequence of word counts, e.g. ``nextLong`` /
    ``nextInt`` in a fixed pattern, or no ``vmap`` at all) it stays a real branch and the
    cipher runs once per four words; where ``vmap`` batches the predicate, JAX turns the cond
    into a select of both branches, which costs what an arithmetic select would. So the cond
    is never more expensive and often four times cheaper.
    """
    refill = take & (eng.used_ints >= INTS_PER_BLOCK)

    def fill(eng):
        block = output_block(eng.h, eng.final_tweak, eng.block_index)
        return eng.replace(block=block, block_index=eng.block_index + np.uint32(1),
                           used_ints=jnp.zeros_like(eng.used_ints))

    return lax.cond(refill, fill, lambda eng: eng, eng)


def _word_at(block, index) -> w.Pair:
    """``block[index]`` for a dynamic ``index`` in ``[0, 3]`` (elementwise: vmap-friendly)."""
    return w.Pair(lax.select_n(index, *(word.hi for word in block)),
                  lax.select_n(index, *(word.lo for word in block)))


def _next_long_if(eng: Engine, take) -> tuple[Engine, w.Pair]:
    """``nextLong()`` where ``take`` (a bool, per lane), else the engine unchanged.

    The word returned where ``take`` is False is meaningless.
    """
    used = eng.used_ints
    used = jnp.where(take, used + (used & 1), used)    # round up: skip a pending low half
    eng = _fill_if_empty(eng.replace(used_ints=used), take)
    used = eng.used_ints
    word = _word_at(eng.block, jnp.minimum(used >> 1, WORDS_PER_BLOCK - 1))
    return eng.replace(used_ints=jnp.where(take, used + 2, used)), word


def next_long(eng: Engine) -> tuple[Engine, w.Pair]:
    """Hail's ``nextLong()``: the next 64-bit stream word, as a ``Pair`` (unsigned)."""
    return _next_long_if(eng, jnp.bool_(True))


def next_int(eng: Engine) -> tuple[Engine, jax.Array]:
    """Hail's ``nextInt()`` as ``uint32``: a new word's HIGH half, then that word's LOW half."""
    eng = _fill_if_empty(eng, jnp.bool_(True))
    used = eng.used_ints
    word = _word_at(eng.block, used >> 1)
    half = jnp.where((used & 1) == 1, word.lo, word.hi)
    return eng.replace(used_ints=used + 1), half


def next_double_bits(eng: Engine) -> tuple[Engine, w.Pair]:
    """Float64 bit pattern of Hail's ``nextDouble()``: a uniform double in ``(0, 1)``.

    ``exponent = 1022 - (64 per all-zero word) - trailing zeros`` of the first nonzero word;
    the significand is that word's top 52 bits, or the next word's when it has 12 or more
    trailing zeros. One ``while_loop`` takes one word per iteration (one iteration but for
    about one call in 4096), so the program holds one copy of the cipher, not three.
    """
    def take_word(carry):
        eng, exponent, found, _, _ = carry
        eng, word = next_long(eng)
        zero, zeros = is_zero(word), trailing_zeros(word)
        # Before the first nonzero word, each word lowers the exponent: by 64 while zero, by
        # its trailing zeros once not; the word after one with >= 12 trailing zeros is the
        # significand's.
        exponent = jnp.where(found, exponent, exponent - jnp.where(zero, WORD_BITS, zeros))
        done = found | (~zero & (zeros < SIGNIFICAND_DROP))
        return eng, exponent, found | ~zero, word, done

    zero_word = w.Pair(jnp.zeros_like(eng.block[0].hi), jnp.zeros_like(eng.block[0].lo))
    init = (eng, jnp.full(eng.used_ints.shape, UNIT_EXPONENT, I32),
            jnp.zeros(eng.used_ints.shape, jnp.bool_), zero_word,
            jnp.zeros(eng.used_ints.shape, jnp.bool_))
    eng, exponent, _, word, _ = lax.while_loop(lambda carry: ~carry[4], take_word, init)
    return eng, double_bits(exponent, significand(word))


def next_double(eng: Engine) -> tuple[Engine, jax.Array]:
    """Hail's ``nextDouble()``: float64 exactly with x64 on; with x64 off, that double
    correctly rounded to float32 (one rounding)."""
    eng, bits = next_double_bits(eng)
    return eng, bits_to_float(bits)


def next_gaussian(eng: Engine) -> tuple[Engine, jax.Array]:
    """Hail's ``nextGaussian()``: Marsaglia's polar method, the pair's second normal buffered.

    Draws ``v = 2 * nextDouble() - 1`` pairs until ``0 < s = v1**2 + v2**2 < 1`` and returns
    ``v1 * m`` with ``m = sqrt(-2 log(s) / s)``, keeping ``v2 * m`` for the next call. With x64
    off the arithmetic is float32 (as ``normal``). One ``while_loop`` draws one double per
    iteration (one copy of ``next_double`` in the program).
    """
    dtype = float_dtype()

    def draw_double(carry):
        eng, have_v1, v1, _, _, _ = carry
        eng, d = next_double(eng)
        v = 2 * d - 1           # 2 * d is exact: no fused multiply-add to fear
        s = _fixed_math.rounded(v1 * v1) + _fixed_math.rounded(v * v)   # used with have_v1
        accepted = have_v1 & (s > 0) & (s < 1)
        return (eng, ~have_v1, jnp.where(have_v1, v1, v), v, s, accepted)

    def polar(eng):
        zero = jnp.zeros(eng.gaussian.shape, dtype)
        no = jnp.zeros(eng.gaussian.shape, jnp.bool_)
        eng, _, v1, v2, s, _ = lax.while_loop(lambda carry: ~carry[5], draw_double,
                                              (eng, no, zero, zero, zero, no))
        multiplier = sqrt(divide(-2 * _fixed_math.log(s), s))
        eng = eng.replace(gaussian=_fixed_math.rounded(v2 * multiplier),
                          has_gaussian=jnp.ones_like(eng.has_gaussian))
        return eng, _fixed_math.rounded(v1 * multiplier)

    def buffered(eng):
        return eng.replace(has_gaussian=jnp.zeros_like(eng.has_gaussian)), eng.gaussian

    return lax.cond(eng.has_gaussian, buffered, polar, eng)


# -- Functions on the sequential engine ----------------------------------------------------------

def _draw_sequence(eng: Engine, count: int, draw):
    """``count`` draws ``draw(eng) -> (eng, value)`` in order, by ``lax.scan``."""
    return lax.scan(lambda eng, _: draw(eng), eng, None, length=count)[1]


def uniform_sequence(h, lower, upper, *, final_tweak: int, count: int) -> jax.Array:
    """``count`` draws of Hail's ``runif``: ``lower + (upper - lower) * nextDouble()``, one
    engine (``rand_unif_nd``)."""
    return _parameterized_sequence(h, tweak_pair(final_tweak), lower, upper,
                                   next_value=next_double, value_of=_runif_value, count=count)


def normal_sequence(h, mean, sd, *, final_tweak: int, count: int) -> jax.Array:
    """``count`` draws of Hail's ``rnorm``: ``mean + sd * nextGaussian()``, one engine
    (``rand_norm_nd``: consecutive draws are the two normals of one polar pair)."""
    return _parameterized_sequence(h, tweak_pair(final_tweak), mean, sd,
                                   next_value=next_gaussian, value_of=_rnorm_value,
                                   count=count)


def _runif_value(d, lower, upper):
    return lower + _fixed_math.rounded((upper - lower) * d)   # Java rounds the product


def _rnorm_value(z, mean, sd):
    return mean + _fixed_math.rounded(sd * z)


@partial(jax.jit, static_argnames=("next_value", "value_of", "count"))
def _parameterized_sequence(h, final_tweak, a, b, *, next_value, value_of,
                            count: int) -> jax.Array:
    """``count`` values ``value_of(next_value(engine), a, b)`` of one engine, ``a`` and ``b``
    in the engine's float dtype."""
    dtype = float_dtype()
    a, b = jnp.asarray(a, dtype), jnp.asarray(b, dtype)

    def draw(eng):
        eng, x = next_value(eng)
        return eng, value_of(x, a, b)

    return _draw_sequence(engine_from_hash(h, final_tweak), count, draw)


def next_long_bounded(eng: Engine, n) -> tuple[Engine, jax.Array]:
    """Hail's ``nextLong(n)`` (Java's method, needs x64): ``x = nextLong() >>> 1``,
    ``r = x % n``, redrawn while ``x - r + (n - 1)`` overflows (is negative as int64)."""
    n = jnp.asarray(n, jnp.int64)

    def draw(eng):
        eng, word = next_long(eng)
        x = lax.bitcast_convert_type(w.to_u64(word) >> np.uint64(1), jnp.int64)
        return eng, x, lax.rem(x, n)

    def overflows(carry):
        _, x, r = carry
        return (x - r + (n - 1)) < 0

    eng, x, r = draw(eng)
    eng, _, r = lax.while_loop(overflows, lambda carry: draw(carry[0]), (eng, x, r))
    return eng, r


def bounded_int64(h, n, *, final_tweak: int) -> jax.Array:
    """Hail's ``rand_int64(n)``: ``nextLong(n)`` on a fresh engine (int64, needs x64)."""
    return _bounded_int64(h, tweak_pair(final_tweak), n)


@jax.jit
def _bounded_int64(h, final_tweak, n) -> jax.Array:
    return next_long_bounded(engine_from_hash(h, final_tweak), n)[1]


@partial(jax.jit, static_argnames=("final_tweak",))
def categorical(h, prob, *, final_tweak: int) -> jax.Array:
    """Hail's ``rand_cat(prob)``: ``r = u * sum(prob)`` with the block-0 uniform ``u`` and the
    sum taken left to right; then, from ``i = 0``, while ``r > prob[i]`` and ``i < len``:
    ``r -= prob[i]``, ``i += 1``. Returns ``i`` (int32; ``len(prob)`` if ``r`` outlasts every
    weight, as in Hail)."""
    dtype = float_dtype()
    prob = jnp.asarray(prob, dtype)
    # A CPU barrier on ``u``, as in :func:`uniform`: vmapped on jax 0.12, the cipher and the
    # map in one loop take XLA 3 minutes to compile.
    u = cpu_barrier(bits_to_float(unit_uniform_bits(output_block(h, final_tweak, 0))))
    total = lax.scan(lambda s, p: (s + p, None), jnp.zeros((), dtype), prob)[0]
    r = _fixed_math.rounded(u * total)

    def scan_step(carry, p):
        r, index, stopped = carry
        go_on = ~stopped & (r > p)
        return (jnp.where(go_on, r - p, r), index + go_on.astype(I32), stopped | ~go_on), None

    (_, index, _), _ = lax.scan(scan_step, (r, jnp.int32(0), jnp.bool_(False)), prob)
    return index


@jax.jit
def bivariate_normal(mean, cov, x0, x1) -> jax.Array:
    """``rand_norm2d``'s arithmetic, as Hail's Python writes it, every operation rounded once:
    ``[m1 + sqrt(s11) x0, m2 + (s12 / sqrt(s11)) x0 + sqrt(s22 - s12 s12 / s11) x1]``."""
    dtype = float_dtype()
    m1, m2 = (mean[i].astype(dtype) for i in range(2))
    s11, s12, s22 = (cov[i].astype(dtype) for i in range(3))
    root_s11 = sqrt(s11)
    first = m1 + _fixed_math.rounded(root_s11 * x0)
    conditional_sd = sqrt(s22 - divide(_fixed_math.rounded(s12 * s12), s11))
    second = (m2 + _fixed_math.rounded(divide(s12, root_s11) * x0)
              + _fixed_math.rounded(conditional_sd * x1))
    return jnp.stack([first, second])


@partial(jax.jit, static_argnames=("final_tweak",))
def uniform_key_bits(h, *, final_tweak: int) -> w.Pair:
    """Float64 bits of the block-0 uniform (``rand_unif(0, 1)``): ``shuffle``'s sort key."""
    return unit_uniform_bits(output_block(h, final_tweak, 0))


@jax.jit
def sort_by_keys(values, keys: w.Pair) -> jax.Array:
    """``values`` stably sorted by positive float64 keys given as bit patterns (unsigned order
    of the bits is the order of the values)."""
    index = jnp.arange(values.shape[0], dtype=I32)
    _, _, order = lax.sort((keys.hi, keys.lo, index), num_keys=2, is_stable=True)
    return values[order]
