"""Counter-mode output streams of a hashed message (docs/spec.md section 2, "Output").

Output block ``c`` is ``T_c = E(K, (f, c), H)``; the 64-bit stream is ``T_0[0..3], T_1[0..3], ...``
and narrower streams split each 64-bit word low part first, i.e. the little-endian bytes of the
64-bit stream. Element ``i`` of a draw is stream element ``i``, so any piece of a stream can be
generated on its own (``first_block``) and agrees with the whole. This module is the stream's
definition, the same on every platform; how a window of it is computed on each platform is in
``jaxpmac._lowering`` (``_window.stream_window``).
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w

STREAM_DTYPES = (jnp.uint8, jnp.uint16, jnp.uint32, jnp.uint64)
BLOCK_BITS = 256


def elements_per_block(dtype) -> int:
    return BLOCK_BITS // jnp.dtype(dtype).itemsize // 8


def _counters(first_block: w.Word, n_blocks: int, *, native: bool) -> w.Word:
    offsets = lax.iota(jnp.uint32, n_blocks)
    if native:
        return w.add(first_block, offsets.astype(jnp.uint64))
    return w.add(first_block, w.Pair(jnp.zeros_like(offsets), offsets))


def _halves(word: w.Word) -> tuple[jax.Array, jax.Array]:
    """``(lo, hi)`` uint32 halves of a dynamic word."""
    if isinstance(word, w.Pair):
        return word.lo, word.hi
    return word.astype(jnp.uint32), (word >> np.uint64(32)).astype(jnp.uint32)


def _narrow(stream32: jax.Array, dtype) -> jax.Array:
    """Splits a flat uint32 stream into its 16- or 8-bit parts, low part first."""
    bits = jnp.dtype(dtype).itemsize * 8
    parts = [(stream32 >> np.uint32(shift)).astype(dtype) for shift in range(0, 32, bits)]
    return jnp.stack(parts, axis=-1).reshape(-1)


def blocks_to_stream(words: Sequence[w.Word], dtype) -> jax.Array:
    """Four output words, each ``[n_blocks]``, as the flat stream of ``dtype`` elements.

    (Splitting stacked ``uint64`` words by a bitcast instead of this interleave of half-words
    was no faster for uint32 and slower for uint8/uint16: benchmarks/README.md, "Constants of
    the CPU lowering".)
    """
    dtype = jnp.dtype(dtype)
    if dtype == jnp.uint64:
        return jnp.stack([w.to_u64(x) for x in words], axis=-1).reshape(-1)
    halves = [half for x in words for half in _halves(x)]
    stream32 = jnp.stack(halves, axis=-1).reshape(-1)
    return stream32 if dtype == jnp.uint32 else _narrow(stream32, dtype)


def encrypt_blocks(h, final_tweak: int, first_block, n_blocks: int, dtype, *, native: bool,
                    rolled: bool) -> jax.Array:
    counters = _counters(first_block, n_blocks, native=native)
    words = _threefish.encrypt_words(_threefish.GENERATOR_KEY, (final_tweak, counters), h,
                                     native=native, rolled=rolled)
    return blocks_to_stream(words, dtype)


def map_words(word_map, words: jax.Array, *, x64: bool) -> jax.Array:
    """``word_map(words)`` (``None``: the words), traced with x64 as the caller had it: the CPU
    lowering enables x64 for its own uint64 words, and a sampler's arithmetic must not see it."""
    if word_map is None:
        return words
    with jax.enable_x64(x64):
        return word_map(words)


def mapped_dtype(word_map, dtype, *, x64: bool) -> np.dtype:
    if word_map is None:
        return jnp.dtype(dtype)
    with jax.enable_x64(x64):
        return jax.eval_shape(word_map, jax.ShapeDtypeStruct((1,), dtype)).dtype


def cut(flat: jax.Array, skip, n: int) -> jax.Array:
    """Elements ``skip .. skip + n - 1`` of ``flat`` (``skip`` a static int or int32 scalar)."""
    if isinstance(skip, int):
        return flat if (skip, n) == (0, flat.shape[0]) else flat[skip:skip + n]
    return lax.dynamic_slice_in_dim(flat, skip, n)
