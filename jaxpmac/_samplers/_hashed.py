"""Hashed states: what a jitted sampler needs of an :class:`RNGState`, as array arguments.

A sampler's jitted implementation takes the *hash* of each state it reads (SPEC section 2:
``(f, H)``) rather than the state: the concrete words of a state are static pytree data, so a
state argument would compile a new program for every seed, and hashing inside the program would
encrypt there. :class:`HashedState` carries ``H`` as ``uint32`` pairs (static ``f``), so one
compiled program serves every seed, and draws are bit-identical to :func:`jaxpmac.bits`.

:class:`HashedFamily` is the family ``state.split(t)`` for a traced ``t`` (retries of rejection
samplers): appending a word changes only one word of the padded final block, and the hash is
XOR-linear in that block, so ``H(t) = H(0) ^ (t at that word)``.

Both carry a draw's ``offset``: the index of its first output element (a static int or a traced
``Pair`` word), so that element ``i`` of a draw at ``offset`` is element ``offset + i`` of the
same draw made larger. A sampler that reads ``k`` stream elements per output element says so
(``stream(..., per_element=k)``), and reads from stream element ``k * offset``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxpmac._cipher import _words as w
from jaxpmac._message import _state
from jaxpmac._message._state import RNGState
from jaxpmac._samplers import _bits


def _pairs(h) -> tuple:
    return tuple(w.to_pair(x) for x in h)


@jax.tree_util.register_pytree_node_class
class HashedState:
    """The hash of one state and a draw's offset: ``stream(n, dtype)`` gives ``n`` stream
    elements from the draw's first."""

    def __init__(self, h, final_tweak: w.Word, offset: w.Word = 0):
        self.h = tuple(h)
        self.final_tweak = final_tweak   # static but for a state of a traced jax.random key
        self.offset = offset

    def tree_flatten(self):
        # Static words are aux data, dynamic ones leaves after the four of ``h``.
        dynamic = [x for x in (self.final_tweak, self.offset) if not w.is_static(x)]
        aux = tuple(x if w.is_static(x) else None for x in (self.final_tweak, self.offset))
        return (*self.h, *dynamic), aux

    @classmethod
    def tree_unflatten(cls, aux, children):
        h, rest = children[:4], list(children[4:])
        final_tweak, offset = (rest.pop(0) if x is None else x for x in aux)
        return cls(h, final_tweak, offset)

    def stream(self, n: int, dtype, *, per_element: int = 1, word_map=None,
               shape=None) -> jax.Array:
        """Stream elements ``k * offset .. k * offset + n - 1`` (``k = per_element``: the
        stream elements each output element reads)."""
        return _bits.hash_stream(self.h, self.final_tweak, n, dtype,
                                 offset=_elements_of(self.offset, per_element, n),
                                 word_map=word_map, shape=shape)

    def stream_halves(self, n: int, *, per_element: int, part: int) -> tuple:
        """The low and high uint32 halves of 64-bit stream word ``part`` of each of ``n``
        output elements that read ``per_element`` words each: 32-bit stream elements ``2 k``
        and ``2 k + 1`` of that word ``k``, from one cipher per value, without 64-bit types
        or a strided slice, which a kernel has not (kernel lowering only)."""
        first = w.add(_elements_of(self.offset, per_element, n * per_element), part)
        return _bits.hash_stream(self.h, self.final_tweak, n, jnp.uint64, offset=first,
                                 stride=per_element, halves=True)


def _elements_of(offset: w.Word, per_element: int, n: int) -> w.Word:
    """The stream offset of a draw at ``offset`` reading ``per_element`` elements each."""
    if w.is_static(offset):
        if (offset * per_element + n) > 1 << 64:
            raise ValueError(f"offset {offset} reads stream elements up to "
                             f"{offset * per_element + n}, past the stream's 2**64")
        return offset * per_element
    scaled = offset
    for _ in range(per_element - 1):
        scaled = w.add(scaled, offset)
    return scaled


@jax.tree_util.register_pytree_node_class
class HashedFamily:
    """The states ``base.split(t)``, ``t`` a uint32 scalar (possibly traced)."""

    def __init__(self, h0, final_tweak: int, position: int, offset: w.Word = 0):
        self.h0 = tuple(h0)
        self.final_tweak = final_tweak
        self.position = position
        self.offset = offset

    def tree_flatten(self):
        if w.is_static(self.offset):
            return self.h0, (self.final_tweak, self.position, self.offset)
        return (*self.h0, self.offset), (self.final_tweak, self.position, None)

    @classmethod
    def tree_unflatten(cls, aux, children):
        final_tweak, position, static_offset = aux
        if static_offset is None:
            return cls(children[:-1], final_tweak, position, children[-1])
        return cls(children, final_tweak, position, static_offset)

    def member(self, t) -> HashedState:
        h = list(self.h0)
        t = jnp.asarray(t, jnp.uint32)
        h[self.position] = w.xor(h[self.position], w.Pair(jnp.zeros_like(t), t))
        return HashedState(h, self.final_tweak, self.offset)


def hashed(state: RNGState, offset: w.Word = 0) -> HashedState:
    """The hash of ``state`` for a draw whose first element is element ``offset``."""
    final_tweak, h = state.message_hash()
    return HashedState(_pairs(h), final_tweak, _pair_if_dynamic(offset))


def family(state: RNGState, offset: w.Word = 0) -> HashedFamily:
    """The family ``state.split(t)``."""
    first = state.split(0)
    final_tweak, h = first.message_hash()
    position = _state.words_in_last_block(first) - 1
    return HashedFamily(_pairs(h), final_tweak, position, _pair_if_dynamic(offset))


def _pair_if_dynamic(offset: w.Word) -> w.Word:
    return offset if w.is_static(offset) else w.to_pair(offset)


def hashed_static(state: RNGState, label: str, offset: w.Word = 0) -> HashedState:
    return hashed(state.split_static(label), offset)


def family_static(state: RNGState, label: str, offset: w.Word = 0) -> HashedFamily:
    return family(state.split_static(label), offset)



