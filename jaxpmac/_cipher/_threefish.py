"""Threefish-256 (Threefish-4x64) with a checked round count, over any word representation.

docs/spec.md section 1. The same function encrypts static blocks in Python at trace time and dynamic
blocks in the compiled program (see ``_words``), so trace-time folding cannot drift from the
run-time cipher.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

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


def subkey(ks, ts, s: int) -> tuple[w.Word, ...]:
    """Subkey ``s`` of SPEC section 1, for a static injection number ``s``."""
    return (ks[s % 5],
            w.add(ks[(s + 1) % 5], ts[s % 3]),
            w.add(ks[(s + 2) % 5], ts[(s + 1) % 3]),
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



def _dynamic_shape(words: Sequence[w.Word]) -> tuple[int, ...]:
    return jnp.broadcast_shapes(*[w.shape_of(x) for x in words])


def _as_dynamic(word: w.Word, shape, *, native: bool) -> w.Word:
    return jnp.broadcast_to(w.to_u64(word), shape) if native else w.to_pair(word, shape)


# Rounds per step of the rolled loop, by the number of blocks encrypted at once. At most 8
# blocks: one round. XLA's CPU backend compiles a while loop whose carried state is under 1 kB
# as one kernel (its "small while loop" hoisting), so the number of steps costs nothing there,
# and a one-round body is the smallest program. At most 512 blocks (4096 uint32 values: the
# draw sites of a model): two rounds, which compile faster than four for a little more run
# time (one round costs much more run time). Larger inputs, and the chunks of long streams
# (``_chunks.CPU_CHUNK_BLOCKS``): a whole key-injection group of four rounds, the fastest to
# run (benchmarks/README.md, "Constants of the CPU lowering").
ONE_ROUND_STEP_MAX_BLOCKS = 8
TWO_ROUND_STEP_MAX_BLOCKS = 512


def _rounds_per_step(n_blocks: int) -> int:
    if n_blocks <= ONE_ROUND_STEP_MAX_BLOCKS:
        return 1
    return 2 if n_blocks <= TWO_ROUND_STEP_MAX_BLOCKS else ROUNDS_PER_INJECTION


def _rotl_u64(x: jax.Array, r: jax.Array) -> jax.Array:
    """Rotation of ``uint64`` words by a traced amount in ``[1, 64)``.

    Why the masks: XLA defines shifts by 64 or more as 0 and guards variable shifts with a
    select; amounts masked to ``[0, 64)`` let LLVM drop the guard and emit one rotate
    instruction, as fast as a static rotation.
    """
    r = r & np.uint64(63)
    return (x << r) | (x >> ((np.uint64(64) - r) & np.uint64(63)))


def _rolled_u64(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word],
                rounds: int) -> tuple[jax.Array, ...]:
    """:func:`encrypt_rolled` on ``uint64`` words (x64 enabled by the caller)."""
    shape = _dynamic_shape((*tweak, *block))
    per_step = _rounds_per_step(math.prod(shape))
    ks, ts = key_schedule(tuple(key)), tweak_schedule(tuple(tweak))
    # Every static term of a step's subkey is summed at trace time into its table row; the
    # dynamic tweak-schedule words are picked by index (0: none). The step recomputes them
    # from the dynamic tweak words, so those are the loop's only invariants: carried
    # precomputed, zero and t0 ^ t1 were two more block-sized arrays and kernels per loop.
    static_ts = [t if w.is_static(t) else 0 for t in ts]
    dynamic_ts = [i for i, t in enumerate(ts) if not w.is_static(t)]
    pick_of = {i: k + 1 for k, i in enumerate(dynamic_ts)}
    tweak_words = [t if w.is_static(t) else jnp.broadcast_to(w.to_u64(t), shape) for t in tweak]
    steps = rounds // per_step
    subkeys = np.zeros((steps, 4), np.uint64)      # zero on steps that end without an injection
    tweak_picks = np.zeros((steps, 2), np.int32)   # dynamic tweak word added to words 1 and 2
    rotations = np.zeros((steps, per_step, 2), np.uint64)
    for step in range(steps):
        first, end = step * per_step, (step + 1) * per_step
        rotations[step] = [ROTATIONS[(first + i) % 8] for i in range(per_step)]
        if end % ROUNDS_PER_INJECTION == 0:
            s = end // ROUNDS_PER_INJECTION
            subkeys[step] = subkey(ks, static_ts, s)
            tweak_picks[step] = (pick_of.get(s % 3, 0), pick_of.get((s + 1) % 3, 0))

    def one_step(v, step_constants):
        sub, picks, rotation = step_constants
        v0, v1, v2, v3 = inject(mix_rounds(v, rotation, rotl=_rotl_u64), sub)
        if dynamic_ts:
            schedule = tweak_schedule(tweak_words)
            choices = [jnp.zeros_like(v1), *(schedule[i] for i in dynamic_ts)]
            v1 = v1 + lax.select_n(picks[0], *choices)
            v2 = v2 + lax.select_n(picks[1], *choices)
        return (v0, v1, v2, v3), None

    # Subkey 0 is added before the loop and each step ends with the injection after its last
    # round, so the loop's output is the ciphertext. Why: whatever follows the loop fuses into
    # the caller's kernels, and XLA's CPU emitter passes every operand of a fusion to every
    # one of its sub-functions; four final additions per draw, fused into a consumer of many
    # draws, made that kernel's code grow with the square of the number of draws
    # (benchmarks/README.md, "Constants of the CPU lowering").
    # Under shard_map the loop's words must vary over the mesh axes like its inputs.
    zero = w.zeros_varying_with((*tweak, *block), shape, jnp.uint64)
    v = inject([jnp.broadcast_to(w.to_u64(x), shape) ^ zero for x in block], subkey(ks, ts, 0))
    v, _ = lax.scan(one_step, tuple(w.to_u64(x) for x in v), (subkeys, tweak_picks, rotations))
    return v


def encrypt_rolled(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word],
                   *, rounds: int = ROUNDS, native: bool = False) -> tuple[w.Word, ...]:
    """Threefish-256 as a ``lax.scan`` over steps of rounds, computed on ``uint64`` words.

    The lowering for XLA's CPU backend, which emits a long unrolled chain of word operations as
    fusions that recompute shared subexpressions, far slower than a loop. Each step runs one,
    two or four rounds (``_rounds_per_step``) and then adds the subkey due after them (zero
    between injections); the rotation amounts and subkey rows are per-step tables, so the body
    is one straight chain with no ``cond``, a smaller program than a body with a branch per
    group parity (benchmarks/README.md, "Constants of the CPU lowering"). The key is static (it
    is always the generator key); tweak and block words may be static or dynamic.

    It computes on ``uint64`` even when ``native`` is False (x64 off): a pair add is five
    32-bit ops and a rotation six, against one each on uint64 lanes, and XLA's CPU backend has
    them. Enabling x64 for this trace only changes the element type inside the compiled
    program; inputs and outputs stay ``Pair`` words, with the pair path's bits.
    """
    check_rounds(rounds)
    if native:
        return _rolled_u64(key, tweak, block, rounds)
    shape = _dynamic_shape((*tweak, *block))
    with jax.enable_x64(True):
        wide = _rolled_u64(key, [x if w.is_static(x) else w.to_u64(x) for x in tweak],
                           [x if w.is_static(x) else w.to_u64(x) for x in block], rounds)
        return tuple(w.to_pair(x, shape) for x in wide)


def encrypt_words(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word],
                  *, native: bool, rolled: bool, wide: bool = False,
                  rounds: int = ROUNDS) -> tuple[w.Word, ...]:
    """Threefish-256 of static or dynamic words; all-static input is encrypted in Python.

    Dynamic output words are ``uint64`` arrays if ``native`` else ``Pair``s, all of one shape.
    ``rolled`` picks the form of the program: ``True`` is :func:`encrypt_rolled` (right for
    XLA's CPU backend), ``False`` fully unrolled (right for GPU/TPU compilers); the choice per
    platform is ``_lowering.encrypt_words``. ``wide``: the unrolled cipher computes on
    ``uint64`` words even when ``native`` is False (x64 off).
    """
    if all(w.is_static(x) for x in (*tweak, *block)):
        return encrypt(key, tweak, block, rounds=rounds)
    wide = wide and not rolled   # the rolled cipher has one form: one cache entry
    if all(w.is_static(t) for t in tweak):
        shape = _dynamic_shape(block)
        return _encrypt_shared(tuple(_as_dynamic(x, shape, native=native) for x in block),
                               key=tuple(key), tweak=tuple(tweak), rounds=rounds,
                               native=native, rolled=rolled, wide=wide)
    return _encrypt_dynamic(key, tweak, block, rounds=rounds, native=native, rolled=rolled,
                            wide=wide)


def _encrypt_dynamic(key, tweak, block, *, rounds: int, native: bool, rolled: bool,
                     wide: bool) -> tuple[w.Word, ...]:
    if rolled:
        return encrypt_rolled(key, tweak, block, rounds=rounds, native=native)
    return _encrypt_unrolled(key, tweak, block, rounds=rounds, native=native, wide=wide)


@partial(jax.jit, static_argnames=("key", "tweak", "rounds", "native", "rolled", "wide"))
def _encrypt_shared(block, *, key: tuple[int, ...], tweak: tuple[int, ...], rounds: int,
                    native: bool, rolled: bool, wide: bool) -> tuple[w.Word, ...]:
    """The cipher of a dynamic block under a static key and tweak, as one jitted function: the
    message hash's encryptions (a traced nonce in block 0 next to static labels, a full block
    of dynamic words) of every draw site with the same tweak share one trace and one lowered
    function. Why: traced separately, each site's cipher added its own tracing and lowering
    time, which dominated before XLA started on programs of many draw sites
    (benchmarks/README.md, "Constants of the CPU lowering"). Static block words arrive as
    constants and XLA folds them after inlining the call."""
    return _encrypt_dynamic(key, tweak, block, rounds=rounds, native=native, rolled=rolled,
                            wide=wide)


def _encrypt_unrolled(key, tweak, block, *, rounds: int, native: bool,
                      wide: bool) -> tuple[w.Word, ...]:
    """:func:`encrypt` of dynamic words as ``uint64`` arrays if ``native`` else ``Pair``s."""
    shape = _dynamic_shape((*tweak, *block))
    if wide and not native:
        # Computed on uint64 words (x64 on for this trace only), returned as Pairs: the same
        # bits; for GPU compilers a quarter of the program (docs/lowering.md).
        with jax.enable_x64(True):
            out = encrypt(key, [x if w.is_static(x) else w.to_u64(x) for x in tweak],
                          [x if w.is_static(x) else w.to_u64(x) for x in block], rounds=rounds)
            return tuple(w.to_pair(x, shape) for x in out)
    return tuple(_as_dynamic(x, shape, native=native)
                 for x in encrypt(key, tweak, block, rounds=rounds))
