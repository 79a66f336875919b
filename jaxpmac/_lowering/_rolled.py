"""Threefish-256 as a loop over rounds: the cipher's form for XLA's CPU backend.

XLA's CPU backend emits a long unrolled chain of word operations as fusions that recompute
shared subexpressions, far slower than a loop. Two loops compute the cipher of
``jaxpmac._cipher._threefish`` here, with its bits:

* :func:`encrypt_rolled`, the cipher of the stream and the message: static or dynamic tweak
  and block words, a ``lax.scan`` over steps of one, two or four rounds on four separate
  ``uint64`` words (:func:`rounds_per_step`);
* :func:`encrypt_few_blocks`, the cipher of a ``jax.random`` key's flush and small draws
  (``_interop._jax_keys``): one dynamic block under tweaks ``(t0, c)`` for a few counters
  ``c``, five steps of four rounds over the blocks as one ``uint64[2, 2, n]`` array. For a few
  blocks its step is one kernel where :func:`encrypt_rolled`'s one-round step is about five, so
  a key's ``split`` takes about two thirds of the time and ``split`` with a scalar draw less
  than half (benchmarks/README.md, "NumPyro with a pmac key").

Both compute on ``uint64`` words with x64 on; the callers turn words to and from ``Pair``s.
"""

from __future__ import annotations

import math
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _stream
from jaxpmac._cipher import _words as w
from jaxpmac._cipher._threefish import (GENERATOR_KEY, ROTATIONS, ROUNDS, ROUNDS_PER_INJECTION,
                                        check_rounds, inject, key_schedule, mix_rounds, subkey,
                                        subkey_tweak_indices, tweak_schedule)
from jaxpmac._lowering._cpu_plan import rounds_per_step

def _rotl_u64(x: jax.Array, r: jax.Array) -> jax.Array:
    """Rotation of ``uint64`` words by a traced amount in ``[1, 64)``.

    Why the masks: XLA defines shifts by 64 or more as 0 and guards variable shifts with a
    select; amounts masked to ``[0, 64)`` let LLVM drop the guard and emit one rotate
    instruction, as fast as a static rotation.
    """
    r = r & np.uint64(63)
    return (x << r) | (x >> ((np.uint64(64) - r) & np.uint64(63)))


def _step_schedule(rounds: int, per_step: int) -> tuple[np.ndarray, list[int | None]]:
    """For a loop over steps of ``per_step`` rounds: each step's rotation amounts,
    ``uint64[steps, per_step, 2]``, and the number of the subkey injected after it (None for a
    step that ends between injections)."""
    steps = rounds // per_step
    rotations = np.array([[ROTATIONS[(step * per_step + i) % 8] for i in range(per_step)]
                          for step in range(steps)], np.uint64)
    injections = [end // ROUNDS_PER_INJECTION if end % ROUNDS_PER_INJECTION == 0 else None
                  for end in ((step + 1) * per_step for step in range(steps))]
    return rotations, injections


def _rolled_u64(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word],
                rounds: int) -> tuple[jax.Array, ...]:
    """:func:`encrypt_rolled` on ``uint64`` words (x64 enabled by the caller)."""
    shape = w.broadcast_shape((*tweak, *block))
    per_step = rounds_per_step(math.prod(shape))
    ks, ts = key_schedule(tuple(key)), tweak_schedule(tuple(tweak))
    # Every static term of a step's subkey is summed at trace time into its table row; the
    # dynamic tweak-schedule words are picked by index (0: none). The step recomputes them
    # from the dynamic tweak words, so those are the loop's only invariants: carried
    # precomputed, zero and t0 ^ t1 were two more block-sized arrays and kernels per loop.
    static_ts = [t if w.is_static(t) else 0 for t in ts]
    dynamic_ts = [i for i, t in enumerate(ts) if not w.is_static(t)]
    pick_of = {i: k + 1 for k, i in enumerate(dynamic_ts)}
    tweak_words = [t if w.is_static(t) else jnp.broadcast_to(w.to_u64(t), shape) for t in tweak]
    rotations, injections = _step_schedule(rounds, per_step)
    subkeys = np.zeros((len(injections), 4), np.uint64)   # zero on steps with no injection
    tweak_picks = np.zeros((len(injections), 2), np.int32)   # dynamic tweak word on words 1, 2
    for step, s in enumerate(injections):
        if s is not None:
            subkeys[step] = subkey(ks, static_ts, s)
            tweak_picks[step] = [pick_of.get(i, 0) for i in subkey_tweak_indices(s)]

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

    Each step runs one, two or four rounds (:func:`rounds_per_step`) and then adds the subkey
    due after them (zero between injections); the rotation amounts and subkey rows are
    per-step tables, so the body is one straight chain with no ``cond``, a smaller program
    than a body with a branch per group parity (benchmarks/README.md, "Constants of the CPU
    lowering"). The key is static (it is always the generator key); tweak and block words may
    be static or dynamic.

    It computes on ``uint64`` even when ``native`` is False (x64 off): a pair add is five
    32-bit ops and a rotation six, against one each on uint64 lanes, and XLA's CPU backend has
    them. Enabling x64 for this trace only changes the element type inside the compiled
    program; inputs and outputs stay ``Pair`` words, with the pair path's bits.
    """
    check_rounds(rounds)
    if native:
        return _rolled_u64(key, tweak, block, rounds)
    shape = w.broadcast_shape((*tweak, *block))
    with jax.enable_x64(True):
        wide = _rolled_u64(key, [x if w.is_static(x) else w.to_u64(x) for x in tweak],
                           [x if w.is_static(x) else w.to_u64(x) for x in block], rounds)
        return tuple(w.to_pair(x, shape) for x in wide)


def stream_blocks(h: Sequence[w.Word], final_tweak: w.Word, first_block: w.Word,
                  n_blocks: int, dtype) -> jax.Array:
    """Stream elements of blocks ``first_block .. first_block + n_blocks - 1`` of the hash
    ``h``, flat, by :func:`encrypt_rolled` on ``uint64`` words (x64 enabled by the caller)."""
    counters = _stream.counters(first_block, n_blocks, native=True)
    words = encrypt_rolled(GENERATOR_KEY, (final_tweak, counters), h, native=True)
    return _stream.blocks_to_stream(words, dtype)


def cut(flat: jax.Array, skip, n: int) -> jax.Array:
    """Elements ``skip .. skip + n - 1`` of ``flat`` (``skip`` a static int or int32 scalar)."""
    if isinstance(skip, int):
        return flat if (skip, n) == (0, flat.shape[0]) else flat[skip:skip + n]
    return lax.dynamic_slice_in_dim(flat, skip, n)


_KEY_SCHEDULE = key_schedule(GENERATOR_KEY)
#: Rounds per step of encrypt_few_blocks' loop (a divisor of ROUNDS_PER_INJECTION). Why four:
#: jax 0.12's CPU runtime made threefry's small draws about 4x faster and this loop's 2x, and
#: NumPyro's NUTS splits and draws once per leaf, so ten steps of two rounds ran it at 1.4x
#: threefry's time per step there, five of four at 0.75-0.93x (0.89x on jax 0.10.2). The price is
#: compile time: XLA's CPU compiler takes longer over a longer step (each round's stacked rows
#: are emitted again for every element the next round reads), 1.1-1.26x threefry's against
#: 1.03-1.17x; the unrolled cipher runs faster still on jax 0.12 but compiles in 2x, and takes
#: 37 us a draw on jax 0.10.2 (benchmarks/README.md, "NumPyro with a pmac key").
SMALL_STEP_ROUNDS = 4


def _laid_out_subkey(s: int) -> np.ndarray:
    """The static words of the generator key's subkey ``s`` (zero tweak), laid out as the
    blocks of :func:`encrypt_few_blocks`: ``uint64[2, 2, 1]``."""
    sub = subkey(_KEY_SCHEDULE, (0, 0, 0), s)
    return np.array([[sub[0], sub[2]], [sub[1], sub[3]]], np.uint64)[..., None]


def _small_step_tables():
    """Per step of :func:`encrypt_few_blocks`: its rotation amounts, the static words of the
    subkey due after it (zero between injections), and which tweak word (``t0``, ``t1``,
    ``t0 ^ t1``; 3: none) it adds to words 1 and 2."""
    rotations, injections = _step_schedule(ROUNDS, SMALL_STEP_ROUNDS)
    subkeys = np.zeros((len(injections), 2, 2, 1), np.uint64)
    tweaks = np.full((len(injections), 2), 3, np.int32)
    for step, s in enumerate(injections):
        if s is not None:
            subkeys[step] = _laid_out_subkey(s)
            tweaks[step] = subkey_tweak_indices(s)
    return rotations, subkeys, tweaks


_SMALL_STEP_ROTATIONS, _SMALL_STEP_SUBKEYS, _SMALL_STEP_TWEAKS = _small_step_tables()


def encrypt_few_blocks(t0: jax.Array, block: jax.Array, n_blocks: int) -> jax.Array:
    """``E(K, (t0, c), block)`` for ``c < n_blocks`` under the generator key, 20 rounds:
    ``t0`` one ``uint64`` word (shape ``()`` or ``(1,)``), ``block`` ``uint64[4]``, the result
    ``uint64[n_blocks, 4]`` (x64 enabled by the caller).

    A while loop of steps of :data:`SMALL_STEP_ROUNDS` rounds, each ending with the subkey due
    after it (zero between injections), over the blocks as one ``uint64[2, 2, n_blocks]`` array
    (rows: words 0 and 2, words 1 and 3), so that a step is one kernel. The loop carries the
    blocks alone: a step reads its subkey's static words and which tweak words it adds from
    tables.
    """
    t0 = jnp.broadcast_to(t0, (n_blocks,))
    t1 = jnp.arange(n_blocks, dtype=jnp.uint64)
    # The tweak schedule's words, and a zero for the steps with no injection.
    tweak_words = jnp.stack([t0, t1, t0 ^ t1, jnp.zeros_like(t0)])              # [4, n]

    def with_subkey(v, static_words, picks):
        term = jnp.stack([jnp.stack([tweak_words[3], tweak_words[picks[1]]]),
                          jnp.stack([tweak_words[picks[0]], tweak_words[3]])])
        return v + static_words + term

    def step(carry):
        s, v = carry
        rotations = jnp.asarray(_SMALL_STEP_ROTATIONS)[s][..., None]
        for i in range(SMALL_STEP_ROUNDS):
            x = v[0] + v[1]                        # v0 + v1, v2 + v3
            y = _rotl_u64(v[1], rotations[i]) ^ x
            v = jnp.stack([x, y[::-1]])            # the v1/v3 swap
        return s + 1, with_subkey(v, jnp.asarray(_SMALL_STEP_SUBKEYS)[s],
                                  jnp.asarray(_SMALL_STEP_TWEAKS)[s])

    v = with_subkey(jnp.stack([block[0::2], block[1::2]])[..., None], _laid_out_subkey(0),
                    np.array(subkey_tweak_indices(0), np.int32))
    # An int32 counter: fori_loop's scan would add an int64 one under x64.
    _, v = lax.while_loop(lambda carry: carry[0] < ROUNDS // SMALL_STEP_ROUNDS, step,
                          (np.int32(0), v))
    return jnp.stack([v[0, 0], v[1, 0], v[0, 1], v[1, 1]], axis=1)     # [n, 4]
