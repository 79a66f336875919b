"""64-bit words in three representations, with one set of operations over all of them.

A word is one of:

* a Python ``int`` in ``[0, 2**64)`` -- *static*: known at trace time, computed in Python;
* a :class:`Pair` of ``uint32`` arrays ``(hi, lo)`` -- *dynamic*, for x64 off and where
  ``uint64`` is emulated;
* a ``uint64`` array -- *dynamic*, the native path when ``jax_enable_x64`` is on.

The operations (:func:`add`, :func:`xor`, :func:`rotl`) dispatch on their operands:
static op static stays static (folded in Python); static op dynamic becomes dynamic, with the
static operand turned into a constant of the dynamic representation. So the same cipher code
encrypts a fully concrete block in Python at trace time and a traced block in the compiled
program, and the two can never disagree.
"""

from __future__ import annotations

from typing import NamedTuple, Union

import jax
import jax.numpy as jnp
import numpy as np

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1


def x64_enabled() -> bool:
    """Whether ``jax_enable_x64`` is on: the one place jaxpmac reads the flag."""
    return bool(jax.config.jax_enable_x64)


class Pair(NamedTuple):
    """A 64-bit word carried as two ``uint32`` arrays of the same shape: ``hi << 32 | lo``."""

    hi: jax.Array
    lo: jax.Array


Word = Union[int, Pair, jax.Array]


def is_static(word: Word) -> bool:
    return isinstance(word, int)


def is_traced(value) -> bool:
    """Whether ``value`` is a tracer: known only when the program runs. The one test of
    tracedness in jaxpmac (``tests/test_package_structure.py``)."""
    return isinstance(value, jax.core.Tracer)


def pair_const(value: int) -> Pair:
    """A static word as a constant :class:`Pair` (scalar ``uint32`` constants)."""
    return Pair(np.uint32(value >> 32), np.uint32(value & MASK32))


def u64_const(value: int):
    return np.uint64(value)


def _is_static_zero(word: Word) -> bool:
    return isinstance(word, int) and word == 0


def _promote(a: Word, b: Word):
    """Brings a static operand to the representation of the dynamic one."""
    if isinstance(a, int):
        return (pair_const(a) if isinstance(b, Pair) else u64_const(a)), b
    if isinstance(b, int):
        return a, (pair_const(b) if isinstance(a, Pair) else u64_const(b))
    return a, b


def add(a: Word, b: Word) -> Word:
    """``(a + b) mod 2**64``."""
    if isinstance(a, int) and isinstance(b, int):
        return (a + b) & MASK64
    if _is_static_zero(a) or _is_static_zero(b):  # keep no-op additions out of programs
        return b if _is_static_zero(a) else a
    a, b = _promote(a, b)
    if isinstance(a, Pair):
        lo = a.lo + b.lo
        carry = (lo < a.lo).astype(jnp.uint32)
        return Pair(a.hi + b.hi + carry, lo)
    return a + b


def xor(a: Word, b: Word) -> Word:
    if isinstance(a, int) and isinstance(b, int):
        return a ^ b
    if _is_static_zero(a) or _is_static_zero(b):
        return b if _is_static_zero(a) else a
    a, b = _promote(a, b)
    if isinstance(a, Pair):
        return Pair(a.hi ^ b.hi, a.lo ^ b.lo)
    return a ^ b


def rotl(a: Word, r: int) -> Word:
    """Rotates left by a static amount ``r`` in ``[0, 64)``."""
    if not 0 <= r < 64:
        raise ValueError(f"rotation must be in [0, 64), got {r}")
    if isinstance(a, int):
        return ((a << r) | (a >> (64 - r))) & MASK64 if r else a
    if isinstance(a, Pair):
        hi, lo = (a.lo, a.hi) if r >= 32 else (a.hi, a.lo)  # rotating by 32 swaps halves
        r %= 32
        if r == 0:
            return Pair(hi, lo)
        s, t = np.uint32(r), np.uint32(32 - r)
        return Pair((hi << s) | (lo >> t), (lo << s) | (hi >> t))
    if r == 0:
        return a
    return (a << np.uint64(r)) | (a >> np.uint64(64 - r))


def shape_of(word: Word) -> tuple[int, ...]:
    if isinstance(word, int):
        return ()
    if isinstance(word, Pair):
        return jnp.broadcast_shapes(jnp.shape(word.hi), jnp.shape(word.lo))
    return jnp.shape(word)


def broadcast_shape(words) -> tuple[int, ...]:
    """The shape that all of ``words`` broadcast to (``()`` for static ones)."""
    return jnp.broadcast_shapes(*[shape_of(x) for x in words])


def to_pair(word: Word, shape=None) -> Pair:
    """Any word as a :class:`Pair` of ``uint32`` arrays, broadcast to ``shape`` (default: the
    word's own shape)."""
    if isinstance(word, int):
        word = pair_const(word)
    elif not isinstance(word, Pair):
        word = Pair((word >> np.uint64(32)).astype(jnp.uint32), word.astype(jnp.uint32))
    shape = shape_of(word) if shape is None else shape
    return Pair(jnp.broadcast_to(jnp.asarray(word.hi, jnp.uint32), shape),
                jnp.broadcast_to(jnp.asarray(word.lo, jnp.uint32), shape))


def to_u64(word: Word) -> jax.Array:
    """Any word as a ``uint64`` array (needs x64)."""
    if isinstance(word, int):
        return jnp.asarray(np.uint64(word))
    if isinstance(word, Pair):
        hi = jnp.asarray(word.hi).astype(jnp.uint64)
        return (hi << np.uint64(32)) | jnp.asarray(word.lo).astype(jnp.uint64)
    return word


def zeros_varying_with(words, shape, dtype) -> jax.Array:
    """Zeros of ``shape`` and ``dtype`` that vary over the manual mesh axes of every dynamic
    word in ``words`` (static ints are skipped, a ``Pair`` counts by its ``lo`` half).

    Why: under ``shard_map`` (``check_vma``) a loop carry that starts device-invariant but is
    written with device-varying values inside the loop does not type-check. ``zeros_like``
    carries its argument's varying axes (and is cheap to trace); XLA folds the sum of
    zeros away.
    """
    zero = jnp.zeros((), dtype)
    for word in words:
        if not is_static(word):
            array = word.lo if isinstance(word, Pair) else word
            zero = zero + jnp.zeros_like(array, shape=(), dtype=dtype)
    return jnp.broadcast_to(zero, shape)
