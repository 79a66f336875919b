"""A sampler's map of stream words (``word_map``), traced in the caller's x64 mode.

The CPU lowering computes the stream on ``uint64`` words with x64 enabled for its own trace; a
sampler's arithmetic must not see that, so every lowering applies and types a map through
these two functions.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np


def map_words(word_map, words: jax.Array, *, x64: bool) -> jax.Array:
    """``word_map(words)`` (``None``: the words), traced with x64 as the caller had it."""
    if word_map is None:
        return words
    with jax.enable_x64(x64):
        return word_map(words)


def mapped_dtype(word_map, dtype, *, x64: bool) -> np.dtype:
    """The dtype of ``word_map``'s values for words of ``dtype`` (``None``: ``dtype``)."""
    if word_map is None:
        return jnp.dtype(dtype)
    return _traced_dtype(word_map, jnp.dtype(dtype), x64)


# Cached: a window's lowerings and the TPU kernel's primitive ask for it several times per
# draw, and each answer traces the whole map (``normal``'s: hundreds of operations). A map is
# a hashable ``_unit.WordMap`` of module-level functions.
@functools.lru_cache(maxsize=256)
def _traced_dtype(word_map, dtype: np.dtype, x64: bool) -> np.dtype:
    with jax.enable_x64(x64):
        return jax.eval_shape(word_map, jax.ShapeDtypeStruct((1,), dtype)).dtype
