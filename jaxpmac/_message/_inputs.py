"""User input to message words (docs/spec.md section 2), validated at trace time.

Concrete values (Python ints, numpy values, jax arrays that are not being traced) become static
``int`` words; traced integer arrays become dynamic :class:`~jaxpmac._cipher._words.Pair` words. The
value, never the tracedness, decides the bits: ``-1``, ``int32(-1)`` and ``2**64 - 1`` are one word.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher import _words as w
from jaxpmac._cipher._words import is_traced  # also read from here by the samplers

WORD_RANGE = "a Python int in [-2**63, 2**64)"
STR_LABEL_TAG = 0xFFFFFFFF00000000


def describe(value) -> str:
    """A short description of a bad input for error messages."""
    if isinstance(value, (jax.Array, np.ndarray, np.generic)):
        kind = "traced array" if is_traced(value) else "array"
        return f"{kind} of dtype {value.dtype} and shape {tuple(value.shape)}"
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '...' if len(text) > 60 else text}"


def int_word(value: int, *, name: str) -> int:
    """A Python int as a word; ``name`` is the argument named in errors."""
    if not -(1 << 63) <= value < (1 << 64):
        raise ValueError(f"{name} must be {WORD_RANGE}, but was given {value}")
    return value & w.MASK64


def _check_int_dtype(value, *, name: str, accepts: str) -> None:
    dtype = jnp.result_type(value) if not hasattr(value, "dtype") else value.dtype
    if not jnp.issubdtype(dtype, jnp.integer):
        raise TypeError(f"{name} accepts {accepts}, but was given {describe(value)}")


def _traced_scalar_word(value: jax.Array) -> w.Pair:
    """A traced integer scalar as a Pair: signed dtypes sign-extend, unsigned ones zero-extend."""
    if value.dtype.itemsize == 8:
        as_u64 = value.astype(jnp.uint64)
        return w.Pair((as_u64 >> np.uint64(32)).astype(jnp.uint32), as_u64.astype(jnp.uint32))
    lo = value.astype(jnp.uint32)
    if jnp.issubdtype(value.dtype, jnp.signedinteger):
        hi = jnp.where(value < 0, np.uint32(w.MASK32), np.uint32(0))
    else:
        hi = jnp.zeros_like(lo)
    return w.Pair(hi, lo)


def words_of(value, *, name: str, allow_vector: bool, accepts: str) -> list[w.Word]:
    """Words of one argument: a scalar gives one word, a 1-D array (if allowed) one per element."""
    if isinstance(value, (bool, np.bool_)) or isinstance(value, (float, complex, str, bytes)):
        raise TypeError(f"{name} accepts {accepts}, but was given {describe(value)}")
    if isinstance(value, int):
        return [int_word(value, name=name)]
    if not isinstance(value, (jax.Array, np.ndarray, np.generic)):
        raise TypeError(f"{name} accepts {accepts}, but was given {describe(value)}")
    _check_int_dtype(value, name=name, accepts=accepts)
    if value.ndim > (1 if allow_vector else 0):
        raise ValueError(f"{name} accepts {accepts}, but was given {describe(value)}")
    if is_traced(value):
        if value.ndim == 0:
            return [_traced_scalar_word(value)]
        return [_traced_scalar_word(value[i]) for i in range(value.shape[0])]
    return [int(x) & w.MASK64 for x in np.atleast_1d(np.asarray(value))]


def label_words(label, *, name: str = "label") -> list[int]:
    """Static label words (SPEC section 2): an int is one word; a str is a length-tagged word
    followed by its UTF-8 bytes packed 8 per word, little-endian, zero-padded."""
    accepts = "ints in [-2**63, 2**64) and strs (use split() for traced values)"
    if isinstance(label, str):
        data = label.encode("utf-8")
        return [STR_LABEL_TAG + len(data)] + [
            int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8)]
    if is_traced(label):
        raise TypeError(f"split_static {name} must be concrete, but was given {describe(label)}; "
                        f"pass traced values to split() instead")
    return words_of(label, name=name, allow_vector=False, accepts=accepts)
