"""Pure-Python reference oracle for the jaxpmac stream (see docs/spec.md).

This module is written straight from the specification text, using only plain
Python ints (no numpy, no jax), so that it can serve as an independent check of
the JAX implementation.  Section references (``SPEC §n``) point at section n
of docs/spec.md.

Public API
----------
- ``MASK64``, ``GENERATOR_KEY``
- ``threefish256(key, tweak, block, rounds=20)``               -- SPEC §1
- ``to_word(v)``, ``label_words(label)``                        -- SPEC preamble, §2
- ``message_hash(nonce, static_words, dynamic_words)``          -- SPEC §2
- ``stream_block``, ``stream64``, ``stream32``, ``stream16``, ``stream8`` -- SPEC §2
- ``HailEngine`` and ``hail_rand_unif``, ``hail_rand_norm``,
  ``hail_rand_int32``, ``hail_rand_int64``, ``hail_rand_bool``  -- SPEC §3
- ``hail_state(global_seed, seed, message)``: Hail's (G, S, u) -> oracle state.

Erratum to an earlier text of SPEC §3: Hail's nextInt returns the HIGH half of a
word first (that text said low first); the Hail conformance vectors
(tests/data/conformance/hail_public.json) require Hail's order, which this
oracle follows and docs/spec.md states. See ``HailEngine``.
"""

from __future__ import annotations

import math
import operator
import struct
from typing import Iterable, Optional, Sequence

__all__ = [
    "MASK64",
    "MASK32",
    "KEY_PARITY_CONSTANT",
    "ROTATIONS",
    "GENERATOR_KEY",
    "STATIC_TWEAK_WORD",
    "FINAL_TWEAK_FULL",
    "FINAL_TWEAK_PADDED",
    "STR_LABEL_TAG",
    "threefish256",
    "to_word",
    "to_signed64",
    "label_words",
    "static_sum",
    "dynamic_sum",
    "final_block",
    "message_hash",
    "stream_block",
    "stream64",
    "stream32",
    "stream16",
    "stream8",
    "HailEngine",
    "hail_state",
    "hail_rand_unif",
    "hail_rand_norm",
    "hail_rand_int32",
    "hail_rand_int64",
    "hail_rand_bool",
    "hail_rand_unif_nd",
    "hail_rand_norm_nd",
    "hail_rand_norm2d",
    "hail_rand_int32_range",
    "hail_rand_int64_bounded",
    "hail_rand_int64_range",
    "hail_rand_cat",
    "hail_shuffle",
]

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1

# ---------------------------------------------------------------------------
# SPEC §1: Threefish-256
# ---------------------------------------------------------------------------

#: C in "k4 = C ^ k0 ^ k1 ^ k2 ^ k3" (SPEC §1).
KEY_PARITY_CONSTANT = 0x1BD11BDAA9FC1A22

#: Rotation constants R[d % 8] = (r for (v0, v1), r for (v2, v3)) (SPEC §1).
ROTATIONS = (
    (14, 16),
    (52, 57),
    (23, 40),
    (5, 37),
    (25, 33),
    (46, 12),
    (58, 22),
    (32, 32),
)

#: The generator's fixed key K (SPEC §1). Users vary the nonce, not the key.
GENERATOR_KEY = (
    0x215D6DFDB7DFDF6B,
    0x045CFA043329C49F,
    0x9EC75A93692444DD,
    0x1284681663220F1C,
)


def _rotl64(x: int, r: int) -> int:
    """64-bit left rotation."""
    return ((x << r) | (x >> (64 - r))) & MASK64


def _words(values: Iterable[int], count: int, what: str) -> list[int]:
    """Convert exactly ``count`` values to words (SPEC preamble)."""
    out = [to_word(v) for v in values]
    if len(out) != count:
        raise ValueError(f"{what} must have {count} words, got {len(out)}")
    return out


def threefish256(
    key: Sequence[int],
    tweak: Sequence[int],
    block: Sequence[int],
    rounds: int = 20,
) -> tuple[int, int, int, int]:
    """Threefish-256 encryption ``E(key, tweak, block)`` (SPEC §1).

    ``key`` is 4 words, ``tweak`` 2 words, ``block`` 4 words. ``rounds`` must be
    a positive multiple of 4 (the spec's generator uses 20); a subkey is added
    before every group of 4 rounds and once more after the last round.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int):
        raise TypeError("rounds must be an int")
    if rounds <= 0 or rounds % 4 != 0:
        raise ValueError(f"rounds must be a positive multiple of 4, got {rounds}")

    k = _words(key, 4, "key")
    k.append(KEY_PARITY_CONSTANT ^ k[0] ^ k[1] ^ k[2] ^ k[3])  # k4
    t = _words(tweak, 2, "tweak")
    t.append(t[0] ^ t[1])  # t2
    v = _words(block, 4, "block")

    def add_subkey(s: int) -> None:
        # SPEC §1: v0 += k[s%5]; v1 += k[(s+1)%5] + t[s%3];
        #          v2 += k[(s+2)%5] + t[(s+1)%3]; v3 += k[(s+3)%5] + s.
        v[0] = (v[0] + k[s % 5]) & MASK64
        v[1] = (v[1] + k[(s + 1) % 5] + t[s % 3]) & MASK64
        v[2] = (v[2] + k[(s + 2) % 5] + t[(s + 1) % 3]) & MASK64
        v[3] = (v[3] + k[(s + 3) % 5] + s) & MASK64

    for d in range(rounds):
        if d % 4 == 0:
            add_subkey(d // 4)
        r01, r23 = ROTATIONS[d % 8]
        # mix(a, b, r): a += b; b = rotl64(b, r); b ^= a.
        v[0] = (v[0] + v[1]) & MASK64
        v[1] = _rotl64(v[1], r01) ^ v[0]
        v[2] = (v[2] + v[3]) & MASK64
        v[3] = _rotl64(v[3], r23) ^ v[2]
        # Then swap v1 and v3.
        v[1], v[3] = v[3], v[1]
    add_subkey(rounds // 4)
    return (v[0], v[1], v[2], v[3])


# ---------------------------------------------------------------------------
# SPEC preamble: words
# ---------------------------------------------------------------------------


def to_word(v) -> int:
    """An integer v in [-2^63, 2^64) as the 64-bit word v mod 2^64 (SPEC preamble).

    bools and floats are not words (TypeError); integers outside the range raise
    ValueError. Integer-like scalars (anything with ``__index__``, e.g. numpy
    integer scalars) are accepted by value, so signed types sign-extend.
    """
    if isinstance(v, bool) or isinstance(v, float):
        raise TypeError(f"{type(v).__name__} is not a word")
    if type(v).__name__ in ("bool_", "bool"):  # numpy.bool_ and friends
        raise TypeError(f"{type(v).__name__} is not a word")
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"{type(v).__name__} is not a word") from None
    if not (-(1 << 63) <= i < (1 << 64)):
        raise ValueError(f"{i} is outside [-2**63, 2**64)")
    return i & MASK64


def to_signed64(w: int) -> int:
    """The word w read as a two's complement signed 64-bit value."""
    w &= MASK64
    return w - (1 << 64) if w >> 63 else w


#: First word of a str label: STR_LABEL_TAG + UTF-8 byte length (SPEC §2).
STR_LABEL_TAG = 0xFFFFFFFF00000000


def label_words(label) -> list[int]:
    """The static words of a static label (SPEC §2, last paragraph).

    An int label is one word. A str label is its UTF-8 bytes: first the word
    0xFFFFFFFF00000000 + byte length, then the bytes packed 8 per word,
    little-endian, zero-padded.
    """
    if isinstance(label, str):
        data = label.encode("utf-8")
        words = [(STR_LABEL_TAG + len(data)) & MASK64]
        for i in range(0, len(data), 8):
            chunk = data[i : i + 8].ljust(8, b"\x00")
            words.append(int.from_bytes(chunk, "little"))
        return words
    return [to_word(label)]


# ---------------------------------------------------------------------------
# SPEC §2: the message and its hash (PMAC)
# ---------------------------------------------------------------------------

#: t0 of every static block's tweak (2^64 - 1, i.e. -1) (SPEC §2).
STATIC_TWEAK_WORD = MASK64
#: Final tweak word f when the last block holds 4 words (2^64 - 2, i.e. -2).
FINAL_TWEAK_FULL = (1 << 64) - 2
#: Final tweak word f when the last block is padded with 1, 0, ... (2^64 - 3).
FINAL_TWEAK_PADDED = (1 << 64) - 3


def _xor4(a: Sequence[int], b: Sequence[int]) -> tuple[int, int, int, int]:
    return (a[0] ^ b[0], a[1] ^ b[1], a[2] ^ b[2], a[3] ^ b[3])


def static_sum(nonce, static_words: Sequence) -> tuple[int, int, int, int]:
    """StaticSum (SPEC §2, static part).

    The static message [nonce, s_1, ..., s_k] is cut into 4-word blocks, the
    last zero-padded; block j is encrypted under tweak
    (2^64-1, j + 2^32 * ((k-1) mod 2^32)); StaticSum is the XOR of those.
    """
    message = [to_word(nonce)] + [to_word(s) for s in static_words]
    k = len(static_words)
    high = ((k - 1) % (1 << 32)) << 32
    total = (0, 0, 0, 0)
    for j, start in enumerate(range(0, len(message), 4)):
        block = message[start : start + 4]
        block = block + [0] * (4 - len(block))
        tweak = (STATIC_TWEAK_WORD, (j + high) & MASK64)
        total = _xor4(total, threefish256(GENERATOR_KEY, tweak, block))
    return total


def _split_dynamic(dynamic_words: Sequence[int]) -> tuple[list[list[int]], list[int]]:
    """Split d_0..d_{n-1} into (full blocks D_0, D_1, ..., last block) (SPEC §2).

    If n == 0 the last block is empty; otherwise it holds the final
    ((n-1) % 4) + 1 words and the words before it form the full blocks.
    """
    n = len(dynamic_words)
    if n == 0:
        return [], []
    last_len = ((n - 1) % 4) + 1
    full = dynamic_words[: n - last_len]
    blocks = [list(full[i : i + 4]) for i in range(0, len(full), 4)]
    return blocks, list(dynamic_words[n - last_len :])


def dynamic_sum(dynamic_words: Sequence) -> tuple[int, int, int, int]:
    """DynSum: XOR of E(K, (b, 0), D_b) over the full dynamic blocks (SPEC §2).

    The tweak is the block index b (0, 1, 2, ...), not the word offset.
    """
    words = [to_word(d) for d in dynamic_words]
    full_blocks, _ = _split_dynamic(words)
    total = (0, 0, 0, 0)
    for b, block in enumerate(full_blocks):
        total = _xor4(total, threefish256(GENERATOR_KEY, (b, 0), block))
    return total


def final_block(dynamic_words: Sequence) -> tuple[int, tuple[int, int, int, int]]:
    """The final block B and final tweak word f (SPEC §2).

    A 4-word last block is B itself with f = 2^64-2; otherwise B is the last
    block's words, then a word 1, then zeros up to 4 words, with f = 2^64-3.
    """
    words = [to_word(d) for d in dynamic_words]
    _, last = _split_dynamic(words)
    if len(last) == 4:
        return FINAL_TWEAK_FULL, tuple(last)
    padded = last + [1] + [0] * (3 - len(last))
    return FINAL_TWEAK_PADDED, tuple(padded)


def message_hash(
    nonce, static_words: Sequence, dynamic_words: Sequence
) -> tuple[int, tuple[int, int, int, int]]:
    """Return (f, H) with H = StaticSum ^ DynSum ^ B (SPEC §2, "Hash")."""
    f, b = final_block(dynamic_words)
    h = _xor4(_xor4(static_sum(nonce, static_words), dynamic_sum(dynamic_words)), b)
    return f, h


def stream_block(
    nonce, static_words: Sequence, dynamic_words: Sequence, c: int
) -> tuple[int, int, int, int]:
    """Output block T_c = E(K, (f, c), H) (SPEC §2, "Output")."""
    if isinstance(c, bool) or not isinstance(c, int) or c < 0:
        raise ValueError("block index c must be a non-negative int")
    f, h = message_hash(nonce, static_words, dynamic_words)
    return threefish256(GENERATOR_KEY, (f, c & MASK64), h)


def _check_count(n: int, start: int) -> None:
    for name, val in (("n", n), ("start", start)):
        if isinstance(val, bool) or not isinstance(val, int) or val < 0:
            raise ValueError(f"{name} must be a non-negative int")


def stream64(
    nonce, static_words: Sequence, dynamic_words: Sequence, n: int, start: int = 0
) -> list[int]:
    """64-bit stream words start .. start+n-1: T_0[0..3], T_1[0..3], ... (SPEC §2)."""
    _check_count(n, start)
    if n == 0:
        return []
    f, h = message_hash(nonce, static_words, dynamic_words)
    out = []
    for c in range(start // 4, (start + n - 1) // 4 + 1):
        out.extend(threefish256(GENERATOR_KEY, (f, c), h))
    offset = start - 4 * (start // 4)
    return out[offset : offset + n]


def stream32(
    nonce, static_words: Sequence, dynamic_words: Sequence, n: int, start: int = 0
) -> list[int]:
    """32-bit stream: each 64-bit word split low half first, then high (SPEC §2)."""
    _check_count(n, start)
    if n == 0:
        return []
    first64 = start // 2
    count64 = (start + n - 1) // 2 - first64 + 1
    halves = []
    for w in stream64(nonce, static_words, dynamic_words, count64, first64):
        halves.append(w & MASK32)
        halves.append(w >> 32)
    offset = start - 2 * first64
    return halves[offset : offset + n]


def _narrow_stream(nonce, static_words, dynamic_words, n, start, bits):
    """Split 32-bit stream words into ``bits``-wide pieces, low first (SPEC §2)."""
    _check_count(n, start)
    if n == 0:
        return []
    per32 = 32 // bits
    mask = (1 << bits) - 1
    first32 = start // per32
    count32 = (start + n - 1) // per32 - first32 + 1
    pieces = []
    for w in stream32(nonce, static_words, dynamic_words, count32, first32):
        for i in range(per32):
            pieces.append((w >> (bits * i)) & mask)
    offset = start - per32 * first32
    return pieces[offset : offset + n]


def stream16(
    nonce, static_words: Sequence, dynamic_words: Sequence, n: int, start: int = 0
) -> list[int]:
    """16-bit stream: the 32-bit stream's half-words, low first (SPEC §2)."""
    return _narrow_stream(nonce, static_words, dynamic_words, n, start, 16)


def stream8(
    nonce, static_words: Sequence, dynamic_words: Sequence, n: int, start: int = 0
) -> list[int]:
    """8-bit stream: the 32-bit stream's bytes, low first (SPEC §2)."""
    return _narrow_stream(nonce, static_words, dynamic_words, n, start, 8)


# ---------------------------------------------------------------------------
# SPEC §3: Hail conformance
# ---------------------------------------------------------------------------


def _float64_from_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits & MASK64))[0]


def _trailing_zeros(x: int) -> int:
    """Trailing zero bits of a nonzero word."""
    return (x & -x).bit_length() - 1


def hail_state(global_seed: int, seed: int, message: Sequence) -> tuple[int, list[int], list[int]]:
    """Map Hail's (global_seed G, seed S, message u) to (nonce, static_words, dynamic_words).

    SPEC §3: nonce = G, one static word s_1 = -S - 1, dynamic words = u.
    """
    return to_word(global_seed), [to_word(-seed - 1)], [to_word(m) for m in message]


class HailEngine:
    """Hail's engine: reads the state's 64-bit stream sequentially (SPEC §3).

    nextLong returns the next word. nextInt returns the two 32-bit halves of
    the next word, and a nextLong after an odd number of nextInt calls skips
    the unused half.

    ERRATUM to SPEC §3 (half order): an earlier text of SPEC §3 said nextInt
    returns "the low then the high half". Hail 0.2.139
    (``ThreefryRandomEngine.nextInt``: ``usedInts += 1; shift = (usedInts & 1)
    << 5; result >>> shift``) returns the HIGH half first, then the LOW half,
    and ``tests/data/conformance/hail_public.json`` (field i32) is reproducible
    only with that order; with low-first, every public i32 case fails. This
    oracle follows Hail (the conformance data), so the half a nextLong skips
    after an odd number of nextInt calls is the unused LOW half. This affects
    only the Hail engine; the 32-bit stream of SPEC §2 (low half first) is
    unchanged.
    """

    def __init__(self, nonce, static_words: Sequence, dynamic_words: Sequence):
        self._f, self._h = message_hash(nonce, static_words, dynamic_words)
        self._block_index = 0  # c of the next output block T_c to produce
        self._buffer: list[int] = []  # unread 64-bit words of the current block
        self._pending_half: int | None = None  # unused (low) half after an odd nextInt
        self._buffered_gaussian: float | None = None  # nextGaussian's second normal

    def _next_word(self) -> int:
        if not self._buffer:
            block = threefish256(GENERATOR_KEY, (self._f, self._block_index), self._h)
            self._block_index += 1
            self._buffer = list(block)
        return self._buffer.pop(0)

    def next_long(self) -> int:
        """nextLong: the next 64-bit word (unsigned); drops a pending unused half."""
        self._pending_half = None
        return self._next_word()

    def next_int(self) -> int:
        """nextInt (unsigned 32-bit): the next word's HIGH half, then its LOW half.

        Hail's order; see the class docstring for the SPEC §3 erratum.
        """
        if self._pending_half is not None:
            low, self._pending_half = self._pending_half, None
            return low
        word = self._next_word()
        self._pending_half = word & MASK32
        return word >> 32

    def next_double(self) -> float:
        """nextDouble (SPEC §3): a uniform double in (0, 1) from one or two words."""
        bits = self.next_long()
        exponent = 1022
        while bits == 0:
            bits = self.next_long()
            exponent -= 64
        e = _trailing_zeros(bits)
        exponent -= e
        significand = (bits if e < 12 else self.next_long()) >> 12
        return _float64_from_bits((exponent << 52) | significand)

    def next_gaussian(self) -> float:
        """nextGaussian: Marsaglia's polar method; the pair's second normal is buffered and
        returned by the next call (Hail's ``hasBufferedGaussian``)."""
        if self._buffered_gaussian is not None:
            z, self._buffered_gaussian = self._buffered_gaussian, None
            return z
        while True:
            v1 = 2.0 * self.next_double() - 1.0
            v2 = 2.0 * self.next_double() - 1.0
            s = v1 * v1 + v2 * v2
            if 0.0 < s < 1.0:
                break
        multiplier = math.sqrt(-2.0 * math.log(s) / s)
        self._buffered_gaussian = v2 * multiplier
        return v1 * multiplier

    # Hail-style camelCase aliases.
    nextLong = next_long
    nextInt = next_int
    nextDouble = next_double
    nextGaussian = next_gaussian


def _hail_unit_uniform(block0: Sequence[int]) -> float:
    """rand_unif(0, 1) from T_0 alone (SPEC §3)."""
    bits = block0[3]
    exponent = 1022
    skipped = 0
    while bits == 0 and skipped < 3:
        skipped += 1
        bits = block0[3 - skipped]  # T_0[2], then T_0[1], then T_0[0]
        exponent -= 64
    if bits != 0:
        exponent -= _trailing_zeros(bits)
    # (If all four words are zero, trailing_zeros is undefined; we keep the
    # exponent as is. The probability is 2^-256.)
    return _float64_from_bits((exponent << 52) | (block0[0] >> 12))


def hail_rand_unif(
    nonce, static_words: Sequence, dynamic_words: Sequence, lower: float = 0.0, upper: float = 1.0
) -> float:
    """Hail's rand_unif(lower, upper) = u * (upper - lower) + lower (SPEC §3)."""
    u = _hail_unit_uniform(stream_block(nonce, static_words, dynamic_words, 0))
    return u * (upper - lower) + lower


def hail_rand_norm(
    nonce, static_words: Sequence, dynamic_words: Sequence, mean: float = 0.0, sd: float = 1.0
) -> float:
    """Hail's rand_norm(mean, sd): Marsaglia polar method on nextDouble (SPEC §3)."""
    engine = HailEngine(nonce, static_words, dynamic_words)
    while True:
        v1 = 2.0 * engine.next_double() - 1.0
        v2 = 2.0 * engine.next_double() - 1.0
        s = v1 * v1 + v2 * v2
        if 0.0 < s < 1.0:
            break
    z = v1 * math.sqrt(-2.0 * math.log(s) / s)
    return z * sd + mean


def hail_rand_int32(nonce, static_words: Sequence, dynamic_words: Sequence, n: int) -> int:
    """Hail's rand_int32(n): Lemire's bounded integer in [0, n) (SPEC §3).

    The three possible nextInt draws come from the engine in Hail's half order
    (high half of word 0, low half of word 0, high half of word 1).
    """
    if isinstance(n, bool) or not isinstance(n, int) or not (0 < n < (1 << 31)):
        raise ValueError("n must be an int in [1, 2**31)")
    engine = HailEngine(nonce, static_words, dynamic_words)
    x = engine.next_int()
    m = n * x
    r = m >> 32
    frac = m & MASK32
    if frac < (1 << 32) - n:
        return r
    low_extra = engine.next_int()
    high_extra = engine.next_int()
    hi = (((n * low_extra) >> 32) + n * high_extra) >> 32
    return r + ((frac + hi) >> 32)


def hail_rand_int64(nonce, static_words: Sequence, dynamic_words: Sequence) -> int:
    """Hail's rand_int64() = nextLong() as a signed value (SPEC §3)."""
    return to_signed64(HailEngine(nonce, static_words, dynamic_words).next_long())


def hail_rand_bool(nonce, static_words: Sequence, dynamic_words: Sequence, p: float) -> bool:
    """Hail's rand_bool(p) = rand_unif(0, 1) < p (SPEC §3)."""
    return hail_rand_unif(nonce, static_words, dynamic_words) < p


# ---------------------------------------------------------------------------
# Hail 0.2.139's other random functions (issue 34), from Hail's sources:
# RandomSeededFunctions.scala (rand_unif_nd, rand_norm_nd, rand_int32/64 with a bound, rand_cat),
# Random.scala (ThreefryRandomEngine.nextLong(n), nextGaussian), functions.py (rand_norm2d,
# rand_int32(a, b), rand_int64(a, b), shuffle). Python floats are IEEE doubles and every
# operation below rounds as Java's does (no fused multiply-add).
# ---------------------------------------------------------------------------


def _to_signed32(x: int) -> int:
    x &= MASK32
    return x - (1 << 32) if x >> 31 else x


def _column_major(draws: list, nrows: int, ncols: int) -> list[list]:
    """Hail's ``size=`` ndarray as row-major nested lists: value [i][j] is draw j*nrows + i."""
    return [[draws[j * nrows + i] for j in range(ncols)] for i in range(nrows)]


def hail_rand_unif_nd(nonce, static_words: Sequence, dynamic_words: Sequence,
                      lower: float, upper: float, nrows: int, ncols: int) -> list[list[float]]:
    """Hail's rand_unif(lower, upper, size=(nrows, ncols)): ``runif`` per element,
    ``lower + (upper - lower) * nextDouble()``, from one engine, column-major."""
    engine = HailEngine(nonce, static_words, dynamic_words)
    draws = [lower + (upper - lower) * engine.next_double() for _ in range(nrows * ncols)]
    return _column_major(draws, nrows, ncols)


def hail_rand_norm_nd(nonce, static_words: Sequence, dynamic_words: Sequence,
                      mean: float, sd: float, nrows: int, ncols: int) -> list[list[float]]:
    """Hail's rand_norm(mean, sd, size=(nrows, ncols)): ``mean + sd * nextGaussian()`` per
    element from one engine (both normals of each polar pair), column-major."""
    engine = HailEngine(nonce, static_words, dynamic_words)
    draws = [mean + sd * engine.next_gaussian() for _ in range(nrows * ncols)]
    return _column_major(draws, nrows, ncols)


def hail_rand_norm2d(nonce, static_words: Sequence, dynamic_words: Sequence,
                     mean: Sequence[float] = (0.0, 0.0),
                     cov: Sequence[float] = (1.0, 0.0, 1.0)) -> list[float]:
    """Hail's rand_norm2d(mean, cov): two scalar rand_norm(0, 1) at message + [0] and + [1]."""
    x0, x1 = (hail_rand_norm(nonce, static_words, list(dynamic_words) + [k]) for k in (0, 1))
    m1, m2 = mean
    s11, s12, s22 = cov
    root_s11 = math.sqrt(s11)
    return [m1 + root_s11 * x0,
            m2 + (s12 / root_s11) * x0 + math.sqrt(s22 - s12 * s12 / s11) * x1]


def hail_rand_int32_range(nonce, static_words: Sequence, dynamic_words: Sequence,
                          a: int, b: int) -> int:
    """Hail's rand_int32(a, b) = rand_int32(b - a) + a, in int32 arithmetic."""
    n = _to_signed32(b - a)
    return _to_signed32(hail_rand_int32(nonce, static_words, dynamic_words, n) + a)


def _java_long_bounded(engine: HailEngine, n: int) -> int:
    """ThreefryRandomEngine.nextLong(n), Java's method: x = nextLong() >>> 1, r = x % n,
    redrawn while x - r + (n - 1) overflows to a negative long."""
    if not 0 < n < (1 << 63):
        raise ValueError("n must be an int in [1, 2**63)")
    while True:
        x = engine.next_long() >> 1
        r = x % n                                 # x >= 0, n > 0: Java's % agrees
        if to_signed64(x - r + (n - 1)) >= 0:
            return r


def hail_rand_int64_bounded(nonce, static_words: Sequence, dynamic_words: Sequence,
                            n: int) -> int:
    """Hail's rand_int64(n): the engine's nextLong(n), in [0, n)."""
    return _java_long_bounded(HailEngine(nonce, static_words, dynamic_words), n)


def hail_rand_int64_range(nonce, static_words: Sequence, dynamic_words: Sequence,
                          a: int, b: int) -> int:
    """Hail's rand_int64(a, b) = rand_int64(b - a) + a, in int64 arithmetic."""
    n = to_signed64(b - a)
    return to_signed64(hail_rand_int64_bounded(nonce, static_words, dynamic_words, n) + a)


def hail_rand_cat(nonce, static_words: Sequence, dynamic_words: Sequence,
                  prob: Sequence[float]) -> int:
    """Hail's rand_cat(prob): r = u * sum(prob) (u: the block-0 uniform of rand_unif, the sum
    left to right), then the first i with not (r > prob[i]), subtracting prob[i] on the way;
    len(prob) if there is none."""
    u = _hail_unit_uniform(stream_block(nonce, static_words, dynamic_words, 0))
    total = 0.0
    for p in prob:
        total += p
    r = u * total
    i = 0
    while i < len(prob) and r > prob[i]:
        r -= prob[i]
        i += 1
    return i


def hail_shuffle(nonce, static_words: Sequence, dynamic_words: Sequence,
                 a: Sequence, uids: Optional[Sequence] = None) -> list:
    """Hail's shuffle(a): sorted by keys rand_unif(0, 1) drawn at message + [uids[j]] for
    element j, uids[j] = j by default (hl.range's elements: their values); ties, probability
    about n**2 / 2**54, kept in index order."""
    uids = range(len(a)) if uids is None else [u % 2**64 for u in uids]
    keys = [_hail_unit_uniform(stream_block(nonce, static_words, list(dynamic_words) + [u], 0))
            for u in uids]
    order = sorted(range(len(a)), key=lambda j: keys[j])
    return [a[j] for j in order]
