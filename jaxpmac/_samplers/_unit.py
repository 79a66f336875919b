"""Stream words to unit-interval numbers: the primitives every sampler is built on.

A sampler of a float ``dtype`` reads one *word* per uniform it needs: a 32-bit stream element
for float16/bfloat16/float32, a 64-bit stream word (two 32-bit elements, low half first) for
float64. A sampler that needs ``k`` uniforms per output element reads words ``k*i .. k*i+k-1``
for element ``i`` (row-major), so element ``i`` of any draw is a fixed piece of the stream:
draws agree across shapes, in pieces and under sharding.

Half-precision samplers compute in float32 and round once at the end.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._samplers import _fixed_math


@dataclasses.dataclass(frozen=True)
class WordMap:
    """An elementwise function of stream words, ``fn(words, fn_dtype)``, that the stream
    applies itself, so the raw words of a long draw never exist next to its output (which
    would double the peak memory): chunk by chunk (or vmapped tile by tile) as they
    are made, or, on a CPU with one device, in one in-place pass after the chunk (or tile) loop
    that XLA spreads over all cores (``_cpu_plan.plan``). A static, hashable argument of the
    jitted stream: module-level functions, dtypes and shapes only.

    ``shape`` is the shape the caller gives the ``[n]`` values (None: they stay flat). The
    pass after the loop needs it to run in place: XLA fuses the caller's reshape into that
    pass, and reuses the loop's buffer only for a result of the buffer's own shape, so the loop
    keeps its buffer in this shape (``_cpu_plan.plan``; ``[lanes, *shape]`` under ``vmap``)."""

    fn: Callable
    fn_dtype: np.dtype
    shape: tuple[int, ...] | None = None

    def __call__(self, words: jax.Array) -> jax.Array:
        return self.fn(words, self.fn_dtype)



def word_dtype(dtype) -> np.dtype:
    """The stream element type read per uniform of a float ``dtype``."""
    return jnp.dtype(jnp.uint64 if jnp.dtype(dtype).itemsize == 8 else jnp.uint32)


def compute_dtype(dtype) -> np.dtype:
    """Half-precision samplers compute in float32."""
    dtype = jnp.dtype(dtype)
    return jnp.dtype(jnp.float32) if dtype.itemsize < 4 else dtype


def mapped_words(source, shape: tuple[int, ...], dtype, fn: Callable, fn_dtype) -> jax.Array:
    """Values ``fn(word_i, fn_dtype)`` of the stream words ``0 .. n - 1`` (``n`` elements of
    ``shape``, row-major) that float ``dtype`` reads (:func:`word_dtype`) from ``source``,
    computed where the words are made or in place after them (:class:`WordMap`): ``fn`` must be
    elementwise."""
    shape = tuple(shape)
    word_map = WordMap(fn, jnp.dtype(fn_dtype), shape)
    return source.stream(math.prod(shape), word_dtype(dtype), word_map=word_map,
                         shape=shape).reshape(shape)


def words(source, n: int, per_element: int, dtype) -> jax.Array:
    """``[n, per_element]`` stream words for float ``dtype`` of ``source`` (a
    :class:`~jaxpmac._samplers._hashed.HashedState`): row ``i`` holds words ``per_element*i ..``."""
    wdtype = word_dtype(dtype)
    flat = source.stream(n * per_element, wdtype, per_element=per_element)
    return flat.reshape(n, per_element)


def unsigned_of(dtype) -> np.dtype:
    return jnp.dtype(f"uint{jnp.dtype(dtype).itemsize * 8}")


def fast_unit(word: jax.Array, dtype) -> jax.Array:
    """A uniform in ``[0, 1)`` on the grid ``2**-m`` (``m`` = mantissa bits of ``dtype``): the
    word's top ``m`` bits under the exponent of 1.0, minus 1 (as ``jax.random`` does)."""
    dtype = jnp.dtype(dtype)
    nmant = jnp.finfo(dtype).nmant
    word_bits = word.dtype.itemsize * 8
    top = (word >> np.array(word_bits - nmant, word.dtype)).astype(unsigned_of(dtype))
    one_bits = np.array(1.0, dtype).view(unsigned_of(dtype))
    one_to_two = lax.bitcast_convert_type(top | one_bits, dtype)
    if dtype.itemsize >= 4:
        return one_to_two - np.array(1.0, dtype)
    # Exact either way; in float32 so that no float16/bfloat16 arithmetic reaches a compiler
    # (see jaxpmac/_samplers/_uniform.py, _scale).
    return (one_to_two.astype(jnp.float32) - np.float32(1)).astype(dtype)


def symmetric_unit(word: jax.Array, dtype) -> tuple[jax.Array, jax.Array]:
    """``(upper, p)``: a uniform ``u`` in ``(0, 1)`` as its half (``upper``: ``u > 1/2``, the top
    bit) and its distance ``p`` in ``(0, 1/2]`` from the nearer end: ``u = p`` or ``1 - p``.

    ``p = (k + 1/2) * 2**-W`` for the word's low ``W - 1`` bits ``k`` (``W`` = 32 or 64),
    computed in ``dtype`` (``k`` converted to ``dtype``, then ``+ 1/2``, each rounding to
    nearest; exact while ``k < 2**m``, ``m`` = mantissa bits), so
    ``p`` keeps full relative precision near 0: functions of ``u`` evaluated through ``p``
    (``log(u) = log(p)`` or ``log1p(-p)``) are accurate in *both* tails, down to
    ``p = 2**-33`` (float32 computation) or ``2**-65`` (float64).
    """
    word_bits = word.dtype.itemsize * 8
    # A comparison, not a conversion to bool: Mosaic GPU has no vector of 1-bit registers.
    upper = (word >> np.array(word_bits - 1, word.dtype)) != np.array(0, word.dtype)
    k = word & np.array((1 << (word_bits - 1)) - 1, word.dtype)
    p = (k.astype(dtype) + np.array(0.5, dtype)) * np.array(2.0 ** -word_bits, dtype)
    return upper, p


def log_unit_pair(word: jax.Array, dtype) -> tuple[jax.Array, jax.Array]:
    """``(log(u), log(1 - u))`` of the uniform of :func:`symmetric_unit`, both accurate."""
    upper, p = symmetric_unit(word, dtype)
    log_p, log_q = _fixed_math.log(p), _fixed_math.log1p(-p)
    return jnp.where(upper, log_q, log_p), jnp.where(upper, log_p, log_q)


def open_unit(word: jax.Array, dtype) -> jax.Array:
    """A uniform in the open interval ``(0, 1)``: ``(top m bits + 1/2) * 2**-m``, exact in
    ``dtype`` (``m`` = mantissa bits; with ``m + 1`` bits ``k + 1/2`` would round, to 1.0 at
    the top)."""
    nbits = jnp.finfo(dtype).nmant
    word_bits = word.dtype.itemsize * 8
    k = word >> np.array(word_bits - nbits, word.dtype)
    return (k.astype(dtype) + np.array(0.5, dtype)) * np.array(2.0 ** -nbits, dtype)
