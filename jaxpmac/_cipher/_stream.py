"""Counter-mode output streams of a hashed message (docs/spec.md section 2, "Output").

Output block ``c`` is ``T_c = E(K, (f, c), H)``; the 64-bit stream is ``T_0[0..3], T_1[0..3], ...``
and narrower streams split each 64-bit word low part first, i.e. the little-endian bytes of the
64-bit stream. Element ``i`` of a draw is stream element ``i``, so any piece of a stream can be
generated on its own (``first_block``) and agrees with the whole. This module is the stream's
definition: the block counters, the order of the elements and their count per block. How a
window of it is computed, in the form each compiler runs best, is ``jaxpmac._lowering``'s
(``_window.stream_window``).
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _words as w

STREAM_DTYPES = (jnp.uint8, jnp.uint16, jnp.uint32, jnp.uint64)
BLOCK_BITS = 256


def elements_per_block(dtype) -> int:
    return BLOCK_BITS // jnp.dtype(dtype).itemsize // 8


def counters(first_block: w.Word, n_blocks: int, *, native: bool) -> w.Word:
    """The counters ``c`` of blocks ``first_block .. first_block + n_blocks - 1`` (the tweak's
    second word), ``[n_blocks]``: ``uint64`` if ``native`` else a ``Pair``."""
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

    Half-words interleaved, not stacked ``uint64`` words split by a bitcast: no slower for
    uint32 and faster for uint8/uint16 (benchmarks/README.md, on ``blocks_to_stream``).
    """
    dtype = jnp.dtype(dtype)
    if dtype == jnp.uint64:
        return jnp.stack([w.to_u64(x) for x in words], axis=-1).reshape(-1)
    halves = [half for x in words for half in _halves(x)]
    stream32 = jnp.stack(halves, axis=-1).reshape(-1)
    return stream32 if dtype == jnp.uint32 else _narrow(stream32, dtype)
