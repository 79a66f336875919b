"""Threefish-256 (Threefish-4x64) with a checked round count, over any word representation.

docs/spec.md section 1; Random123's ``threefry.h`` computes the same cipher with a zero tweak
(Threefry-4x64-R): :data:`ROTATIONS` are its ``R_64x4_*`` constants, :data:`KEY_PARITY` its
``SKEIN_KS_PARITY64``, :func:`key_schedule` and :func:`subkey` its ``ks[]`` array and the
injection after every four rounds (here with the tweak's words added), :func:`mix_rounds` its
rounds (with the swap of ``v1`` and ``v3`` that ``threefry.h`` folds into its indices written
out). The same function encrypts static blocks in Python at trace time and dynamic blocks in
the compiled program (see ``_words``), so trace-time folding cannot drift from the run-time
cipher. The forms the compiled program takes (unrolled, or a loop over rounds) are
``jaxpmac._lowering``'s (``_encrypt``, ``_rolled``), with these bits.
"""

from __future__ import annotations

from typing import Sequence

from jaxpmac._cipher import _words as w

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


def subkey_tweak_indices(s: int) -> tuple[int, int]:
    """Which words of the tweak schedule subkey ``s`` adds to its words 1 and 2."""
    return s % 3, (s + 1) % 3


def subkey(ks, ts, s: int) -> tuple[w.Word, ...]:
    """Subkey ``s`` of SPEC section 1, for a static injection number ``s``."""
    on_word_1, on_word_2 = subkey_tweak_indices(s)
    return (ks[s % 5],
            w.add(ks[(s + 1) % 5], ts[on_word_1]),
            w.add(ks[(s + 2) % 5], ts[on_word_2]),
            w.add(ks[(s + 3) % 5], s))


def inject(v, sub):
    return [w.add(x, k) for x, k in zip(v, sub)]


def mix_rounds(v, rotations, rotl=w.rotl):
    """Rounds with the given ``(r01, r23)`` rotation amounts: two MIXes each, then the v1/v3
    swap. ``rotl`` rotates by an amount (static ints by default)."""
    v0, v1, v2, v3 = v
    for r01, r23 in rotations:
        v0 = w.add(v0, v1)
        v1 = w.xor(rotl(v1, r01), v0)
        v2 = w.add(v2, v3)
        v3 = w.xor(rotl(v3, r23), v2)
        v1, v3 = v3, v1
    return [v0, v1, v2, v3]


def four_rounds(v, first_round: int):
    """Rounds ``first_round .. first_round + 3``."""
    return mix_rounds(v, [ROTATIONS[d % 8] for d in range(first_round,
                                                          first_round + ROUNDS_PER_INJECTION)])


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
