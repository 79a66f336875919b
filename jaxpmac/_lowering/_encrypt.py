"""Threefish-256 of traced words, in the form each lowering compiles best.

:func:`encrypt_words` picks the form per platform when the program is lowered (a message's
traced blocks); :func:`encrypt_as` computes one form, named as the lowerings are
(``_platform.LOWERINGS``), for callers that choose it themselves (a stream's chunks and
lanes on a CPU, Hail's engine, the self-check). Every form has the bits of
``jaxpmac._cipher._threefish.encrypt``, and all-static words are encrypted in Python by it.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering import _tpu_kernel
from jaxpmac._lowering._platform import LOWERINGS, by_platform, dynamic_part, with_dynamic
from jaxpmac._lowering._rolled import encrypt_rolled


def encrypt_words(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word], *,
                  native: bool, rounds: int = _threefish.ROUNDS) -> tuple[w.Word, ...]:
    """:func:`encrypt_as` with the lowering of the platform the program runs on
    (``by_platform``); all-static input is encrypted in Python, with no platform choice.

    Only the dynamic words cross the platform choice; static ones stay Python ints, folded
    into each branch.
    """
    words = (*tweak, *block)
    if all(w.is_static(x) for x in words):
        return _threefish.encrypt(key, tweak, block, rounds=rounds)

    def lowered(lowering):
        def encrypt_dynamic(dynamic):
            here = with_dynamic(words, dynamic)
            return encrypt_as(lowering, key, here[:len(tweak)], here[len(tweak):],
                              native=native, rounds=rounds)
        return encrypt_dynamic

    shape = w.broadcast_shape(words)

    def in_tpu_kernel(dynamic):
        # One block of scalars on a TPU: a small kernel, which compiles in a fraction of the
        # time of XLA's scalar operations (``_tpu_kernel.encrypt_block``).
        here = with_dynamic(words, dynamic)
        out = _tpu_kernel.encrypt_block(key, here[:len(tweak)], here[len(tweak):], rounds=rounds)
        return tuple(w.to_u64(x) if native else x for x in out)

    word = (jax.ShapeDtypeStruct(shape, jnp.uint64) if native
            else w.Pair(*[jax.ShapeDtypeStruct(shape, jnp.uint32)] * 2))
    return by_platform(dynamic_part(words), rolled=lowered("rolled"),
                       elementwise=lowered("elementwise"),
                       elementwise_pairs=(in_tpu_kernel if shape == ()
                                          else lowered("elementwise_pairs")),
                       kernel=lowered("elementwise_pairs"),
                       result=(word,) * len(block))


def encrypt_as(lowering: str, key: Sequence[int], tweak: Sequence[w.Word],
               block: Sequence[w.Word], *, native: bool,
               rounds: int = _threefish.ROUNDS) -> tuple[w.Word, ...]:
    """Threefish-256 of static or dynamic words in the form of ``lowering``; all-static input
    is encrypted in Python.

    Dynamic output words are ``uint64`` arrays if ``native`` else ``Pair``s, all of one shape.
    The forms: ``"rolled"``, :func:`._rolled.encrypt_rolled` (a loop over rounds, on
    ``uint64`` words); ``"elementwise"``, the unrolled cipher on ``uint64`` words even when
    ``native`` is False (x64 off); ``"elementwise_pairs"``, the unrolled cipher on the words'
    own representation.
    """
    if lowering not in LOWERINGS:
        raise ValueError(f"lowering must be one of {LOWERINGS}, got {lowering!r}")
    if all(w.is_static(x) for x in (*tweak, *block)):
        return _threefish.encrypt(key, tweak, block, rounds=rounds)
    if all(w.is_static(t) for t in tweak):
        shape = w.broadcast_shape(block)
        return _encrypt_shared(tuple(_as_dynamic(x, shape, native=native) for x in block),
                               key=tuple(key), tweak=tuple(tweak), rounds=rounds,
                               native=native, lowering=lowering)
    return _encrypt_dynamic(key, tweak, block, rounds=rounds, native=native, lowering=lowering)


def _as_dynamic(word: w.Word, shape, *, native: bool) -> w.Word:
    return jnp.broadcast_to(w.to_u64(word), shape) if native else w.to_pair(word, shape)


def _encrypt_dynamic(key, tweak, block, *, rounds: int, native: bool,
                     lowering: str) -> tuple[w.Word, ...]:
    if lowering == "rolled":
        return encrypt_rolled(key, tweak, block, rounds=rounds, native=native)
    return _encrypt_unrolled(key, tweak, block, rounds=rounds, native=native,
                             wide=lowering == "elementwise")


@partial(jax.jit, static_argnames=("key", "tweak", "rounds", "native", "lowering"))
def _encrypt_shared(block, *, key: tuple[int, ...], tweak: tuple[int, ...], rounds: int,
                    native: bool, lowering: str) -> tuple[w.Word, ...]:
    """The cipher of a dynamic block under a static key and tweak, as one jitted function: the
    message hash's encryptions (a traced nonce in block 0 next to static labels, a full block
    of dynamic words) of every draw site with the same tweak share one trace and one lowered
    function. Why: traced separately, each site's cipher added its own tracing and lowering
    time, which dominated before XLA started on programs of many draw sites
    (benchmarks/README.md, "Constants of the CPU lowering"). Static block words arrive as
    constants and XLA folds them after inlining the call."""
    return _encrypt_dynamic(key, tweak, block, rounds=rounds, native=native, lowering=lowering)


def _encrypt_unrolled(key, tweak, block, *, rounds: int, native: bool,
                      wide: bool) -> tuple[w.Word, ...]:
    """``_threefish.encrypt`` of dynamic words as ``uint64`` arrays if ``native`` else
    ``Pair``s; ``wide``: computed on ``uint64`` words even when ``native`` is False."""
    shape = w.broadcast_shape((*tweak, *block))
    if wide and shape == ():
        with jax.enable_x64(True):
            return _block_on_lanes(key, tweak, block, rounds=rounds, native=native)
    if wide and not native:
        # Computed on uint64 words (x64 on for this trace only), returned as Pairs: the same
        # bits; for GPU compilers a quarter of the program (docs/lowering.md).
        with jax.enable_x64(True):
            out = _threefish.encrypt(key, [x if w.is_static(x) else w.to_u64(x) for x in tweak],
                                     [x if w.is_static(x) else w.to_u64(x) for x in block],
                                     rounds=rounds)
            return tuple(w.to_pair(x, shape) for x in out)
    return tuple(_as_dynamic(x, shape, native=native)
                 for x in _threefish.encrypt(key, tweak, block, rounds=rounds))


#: The lanes a block's cipher is computed on (:func:`words_on_lanes`): one per word.
BLOCK_LANES = 4


def words_on_lanes(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word], *,
                   rounds: int = _threefish.ROUNDS) -> jax.Array:
    """Threefish-256 of a few blocks of dynamic words as one ``uint64`` array of their shape
    plus a last axis of :data:`BLOCK_LANES`, lane ``j`` holding word ``j`` (each lane computes
    the whole block's cipher and keeps its word). Call with x64 on.

    Why, on GPUs: XLA's GPU backend splits a cipher of few blocks among kernels, each repeating
    the rounds its output words need, and where the words' halves are concatenated (a key's
    layout) its emitter computes the cipher once per element of the concatenation, in code of
    thousands of lines that LLVM takes minutes to optimise (benchmarks/README.md, "A
    framework's key operations on accelerators" and "H100 ALU per value"). On lanes it is one
    kernel of one cipher. The lanes differ only by a zero made from
    the lane index, so every lane computes the same bits; were they equal, XLA's simplifier
    would compute the rounds on the words' own shape again.
    """
    shape = w.broadcast_shape((*tweak, *block))
    lane = lax.broadcasted_iota(jnp.uint64, (*shape, BLOCK_LANES), len(shape))
    zero = lane >> np.uint64(BLOCK_LANES.bit_length())   # 0 in every lane, not a constant

    def on_lanes(words):
        return [x if w.is_static(x) else zero + w.to_u64(x)[..., None] for x in words]

    out = _threefish.encrypt(key, on_lanes(tweak), on_lanes(block), rounds=rounds)
    lanes = jnp.broadcast_to(out[-1], lane.shape)
    for j in range(len(out) - 2, -1, -1):
        lanes = jnp.where(lane == j, out[j], lanes)
    return lanes


def _block_on_lanes(key, tweak, block, *, rounds: int, native: bool) -> tuple[w.Word, ...]:
    """The cipher of one block of scalar words (a message hash's) by :func:`words_on_lanes`,
    as four ``uint64`` scalars if ``native``, else as ``Pair``s. Call with x64 on.

    The ``Pair``s' halves are a bit cast of the lanes, not shifts of each word: XLA computed
    those shifts, and a stream's first operations on the words, in a small kernel of their
    own between the hash's and the stream's; from a bit cast the stream's kernel reads them
    (see :func:`jaxpmac._lowering._elementwise._varying_by_element`)."""
    lanes = words_on_lanes(key, tweak, block, rounds=rounds)
    if native:
        return tuple(lanes[j] for j in range(BLOCK_LANES))
    halves = lax.bitcast_convert_type(lanes, jnp.uint32)          # [lane, 2], low half first
    return tuple(w.Pair(halves[j, 1], halves[j, 0]) for j in range(BLOCK_LANES))
