"""Threefish-256 (Threefish-4x64) with a checked round count, over any word representation.

SPEC.md section 1. The same function encrypts static blocks in Python at trace time and dynamic
blocks in the compiled program (see ``_words``), so trace-time folding cannot drift from the
run-time cipher.
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac import _words as w

# Rotation constants R[d % 8] for the two MIX functions of round d: Threefish-256 from the Skein
# 1.3 specification (Table 4), the same table as Random123's threefry.h R_64x4_* constants.
ROTATIONS = ((14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32))

# Key-schedule parity constant C240 of Skein 1.3 (Random123's SKEIN_KS_PARITY64).
KEY_PARITY = 0x1BD11BDAA9FC1A22

# The generator's fixed key (SPEC section 1): users vary the nonce, never the key.
GENERATOR_KEY = (0x215D6DFDB7DFDF6B, 0x045CFA043329C49F, 0x9EC75A93692444DD, 0x1284681663220F1C)

ROUNDS = 20
ROUNDS_PER_INJECTION = 4
# Threefish-256 is defined up to 72 rounds; fewer than 4 would skip the key schedule entirely.
MAX_ROUNDS = 72


def check_rounds(rounds: int) -> int:
    if (not isinstance(rounds, int) or isinstance(rounds, bool) or rounds <= 0
            or rounds > MAX_ROUNDS or rounds % ROUNDS_PER_INJECTION):
        raise ValueError(
            f"rounds must be a positive multiple of {ROUNDS_PER_INJECTION} up to {MAX_ROUNDS}, "
            f"got {rounds!r}")
    return rounds


def key_schedule(key: Sequence[w.Word]) -> tuple[w.Word, ...]:
    """``k0..k3`` and the parity word ``k4 = C ^ k0 ^ k1 ^ k2 ^ k3``."""
    parity = KEY_PARITY
    for word in key:
        parity = w.xor(parity, word)
    return (*key, parity)


def tweak_schedule(tweak: Sequence[w.Word]) -> tuple[w.Word, w.Word, w.Word]:
    return (tweak[0], tweak[1], w.xor(tweak[0], tweak[1]))


def subkey(ks, ts, s: int) -> tuple[w.Word, ...]:
    """Subkey ``s`` of SPEC section 1, for a static injection number ``s``."""
    return (ks[s % 5],
            w.add(ks[(s + 1) % 5], ts[s % 3]),
            w.add(ks[(s + 2) % 5], ts[(s + 1) % 3]),
            w.add(ks[(s + 3) % 5], s))


def inject(v, sub):
    return [w.add(x, k) for x, k in zip(v, sub)]


def four_rounds(v, first_round: int):
    """Rounds ``first_round .. first_round + 3``: two MIXes each, then the v1/v3 swap."""
    v0, v1, v2, v3 = v
    for d in range(first_round, first_round + ROUNDS_PER_INJECTION):
        r01, r23 = ROTATIONS[d % 8]
        v0 = w.add(v0, v1)
        v1 = w.xor(w.rotl(v1, r01), v0)
        v2 = w.add(v2, v3)
        v3 = w.xor(w.rotl(v3, r23), v2)
        v1, v3 = v3, v1
    return [v0, v1, v2, v3]


def encrypt(key: Sequence[w.Word], tweak: Sequence[w.Word], block: Sequence[w.Word],
            *, rounds: int = ROUNDS) -> tuple[w.Word, ...]:
    """Threefish-256 of ``block`` under ``key`` and ``tweak``, fully unrolled.

    Words may be static ints, ``Pair`` or ``uint64`` arrays, mixed freely; an all-static call
    runs in plain Python.

    Example:
        >>> hex(encrypt((0,) * 4, (0, 0), (0,) * 4)[0])
        '0x9218ebde6c85537'
    """
    check_rounds(rounds)
    ks, ts = key_schedule(key), tweak_schedule(tweak)
    v = list(block)
    for s in range(rounds // ROUNDS_PER_INJECTION):
        v = four_rounds(inject(v, subkey(ks, ts, s)), ROUNDS_PER_INJECTION * s)
    return tuple(inject(v, subkey(ks, ts, rounds // ROUNDS_PER_INJECTION)))



def _dynamic_shape(words: Sequence[w.Word]) -> tuple[int, ...]:
    return jnp.broadcast_shapes(*[w.shape_of(x) for x in words])


def _as_dynamic(word: w.Word, shape, *, native: bool) -> w.Word:
    return jnp.broadcast_to(w.to_u64(word), shape) if native else w.to_pair(word, shape)


def _select(index, words: Sequence[w.Word], shape, *, native: bool) -> w.Word:
    """``words[index]`` for a traced ``index``."""
    if native:
        return lax.select_n(index, *[_as_dynamic(x, shape, native=True) for x in words])
    pairs = [w.to_pair(x, shape) for x in words]
    return w.Pair(lax.select_n(index, *[p.hi for p in pairs]),
                  lax.select_n(index, *[p.lo for p in pairs]))


def _zero_depending_on(words: Sequence[w.Word], shape, *, native: bool):
    """A zero word that depends on every dynamic word in ``words``.

    Why: under ``shard_map`` (``check_vma``) a loop carry that starts from static or
    device-invariant words but turns device-varying inside the loop does not type-check. A word
    xored with this zero carries the varying axes of all the cipher's inputs from the start;
    XLA folds the zero away.
    """
    zero = jnp.zeros(shape, jnp.uint32)
    for word in words:
        if not w.is_static(word):
            zero = zero | (w.to_pair(word).lo & np.uint32(0))
    return zero.astype(jnp.uint64) if native else w.Pair(zero, zero)


def encrypt_rolled(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word],
                   *, rounds: int = ROUNDS, native: bool = False) -> tuple[w.Word, ...]:
    """Threefish-256 as a ``fori_loop`` over key-injection groups, four rounds unrolled inside.

    Why: XLA's CPU backend emits a long unrolled chain of these word operations as one fusion
    whose code recomputes shared subexpressions (a 20-round unrolled stream ran ~100x slower
    than this loop, and so did one with an ``optimization_barrier`` after every group). Looping over injection groups bounds each fusion to four rounds; a
    ``cond`` on the group's parity keeps the rotation amounts static. The key is static (it is
    always the generator key); tweak and block words may be static or dynamic.
    """
    check_rounds(rounds)
    shape = _dynamic_shape((*tweak, *block))
    ks, ts = key_schedule(tuple(key)), tweak_schedule(tuple(tweak))
    injections = rounds // ROUNDS_PER_INJECTION
    # Every static term of every subkey, summed at trace time into one table row per injection,
    # so the loop body reads a row instead of computing indices mod 5 and mod 3 (each scalar op
    # is its own XLA kernel, and kernels are what a CPU compile spends its time on).
    static_ts = [t if w.is_static(t) else 0 for t in ts]
    table = [subkey(ks, static_ts, s) for s in range(injections)]
    table_hi = np.array([[k >> 32 for k in row] for row in table], np.uint32)
    table_lo = np.array([[k & w.MASK32 for k in row] for row in table], np.uint32)
    dynamic_ts = [None if w.is_static(t) else t for t in ts]

    def dynamic_tweak_term(index):
        """``ts[index]`` where it is dynamic, else None (already in the table)."""
        if all(t is None for t in dynamic_ts):
            return None
        return _select(index, [0 if t is None else t for t in dynamic_ts], shape, native=native)

    def dynamic_subkey(s):
        row = w.Pair(jnp.asarray(table_hi)[s], jnp.asarray(table_lo)[s])
        row = [w.Pair(row.hi[i], row.lo[i]) for i in range(4)]
        if native:
            row = [w.to_u64(x) for x in row]
        for word, index in ((1, s % 3), (2, (s + 1) % 3)):
            term = dynamic_tweak_term(index)
            if term is not None:
                row[word] = w.add(row[word], term)
        return row

    def even_group(v):
        return tuple(four_rounds(list(v), 0))

    def odd_group(v):
        return tuple(four_rounds(list(v), ROUNDS_PER_INJECTION))

    def group(s, v):
        v = tuple(inject(list(v), dynamic_subkey(s)))
        return lax.cond(s % 2 == 0, even_group, odd_group, v)

    zero = _zero_depending_on((*tweak, *block), shape, native=native)
    v = lax.fori_loop(0, injections, group,
                      tuple(w.xor(_as_dynamic(x, shape, native=native), zero) for x in block))
    return tuple(inject(list(v), subkey(ks, ts, injections)))


# Whether the rolled (CPU) lowering of pair words may compute on uint64 (see encrypt_words).
ROLLED_ON_UINT64 = hasattr(jax, "enable_x64")


def prefer_rolled() -> bool:
    """Whether to trace the rolled lowering: when the default backend is a CPU.

    Why at trace time: ``lax.platform_dependent`` lowers both versions into every program
    (measured: about +70% compile time for a draw on a CPU). The choice only affects speed,
    never a bit, so a program lowered for another platform (``jax.export``) is still correct.
    """
    return jax.default_backend() == "cpu"


def encrypt_words(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word],
                  *, native: bool, rolled: bool | None = None,
                  rounds: int = ROUNDS) -> tuple[w.Word, ...]:
    """Threefish-256 of static or dynamic words; all-static input is encrypted in Python.

    Dynamic output words are ``uint64`` arrays if ``native`` else ``Pair``s, all of one shape.
    ``rolled`` picks the lowering: ``True`` is :func:`encrypt_rolled` (right for XLA's CPU
    backend), ``False`` fully unrolled (right for GPU/TPU compilers), ``None`` picks by
    :func:`prefer_rolled`.
    """
    if all(w.is_static(x) for x in (*tweak, *block)):
        return encrypt(key, tweak, block, rounds=rounds)
    shape = _dynamic_shape((*tweak, *block))

    def unrolled():
        out = encrypt(key, tweak, block, rounds=rounds)
        return tuple(_as_dynamic(x, shape, native=native) for x in out)

    def loop():
        if native or not ROLLED_ON_UINT64:
            return encrypt_rolled(key, tweak, block, rounds=rounds, native=native)
        # Pair words compile to ~2x the XLA kernels of uint64 ones and run ~3x slower (a 64-bit
        # add is five 32-bit ops, a rotation six), so the CPU lowering computes on uint64 even
        # with x64 off: enabling x64 for this trace only changes the element type inside the
        # compiled program. Inputs and outputs stay uint32 pairs and the bits are those of the
        # pair path (one cipher function over both representations), so nothing outside can tell.
        with jax.enable_x64(True):
            wide = encrypt_rolled(key, [x if w.is_static(x) else w.to_u64(x) for x in tweak],
                                  [x if w.is_static(x) else w.to_u64(x) for x in block],
                                  rounds=rounds, native=True)
            return tuple(w.to_pair(x, shape) for x in wide)

    rolled = prefer_rolled() if rolled is None else rolled
    return loop() if rolled else unrolled()
