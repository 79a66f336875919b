"""Hashed states: what a jitted sampler needs of an :class:`RNGState`, as array arguments.

A sampler's jitted implementation takes the *hash* of each state it reads (SPEC section 2:
``(f, H)``) rather than the state: the concrete words of a state are static pytree data, so a
state argument would compile a new program for every seed, and hashing inside the program would
encrypt there. :class:`HashedState` carries ``H`` as ``uint32`` pairs (static ``f``), so one
compiled program serves every seed, and draws are bit-identical to :func:`jaxpmac.bits`.

:class:`HashedFamily` is the family ``state.split(t)`` for a traced ``t`` (retries of rejection
samplers): appending a word changes only one word of the padded final block, and the hash is
XOR-linear in that block, so ``H(t) = H(0) ^ (t at that word)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxpmac._cipher import _words as w
from jaxpmac._message._state import RNGState
from jaxpmac._samplers import _bits


def _pairs(h) -> tuple:
    return tuple(w.to_pair(x) for x in h)


@jax.tree_util.register_pytree_node_class
class HashedState:
    """The hash of one state: ``stream(n, dtype)`` gives its first ``n`` stream elements."""

    def __init__(self, h, final_tweak: int):
        self.h = tuple(h)
        self.final_tweak = final_tweak

    def tree_flatten(self):
        return self.h, self.final_tweak

    @classmethod
    def tree_unflatten(cls, final_tweak, h):
        return cls(h, final_tweak)

    def stream(self, n: int, dtype, *, word_map=None, shape=None) -> jax.Array:
        return _bits.hash_stream(self.h, self.final_tweak, n, dtype, word_map=word_map,
                                 shape=shape)


@jax.tree_util.register_pytree_node_class
class HashedFamily:
    """The states ``base.split(t)``, ``t`` a uint32 scalar (possibly traced)."""

    def __init__(self, h0, final_tweak: int, position: int):
        self.h0 = tuple(h0)
        self.final_tweak = final_tweak
        self.position = position

    def tree_flatten(self):
        return self.h0, (self.final_tweak, self.position)

    @classmethod
    def tree_unflatten(cls, aux, h0):
        return cls(h0, *aux)

    def member(self, t) -> HashedState:
        h = list(self.h0)
        t = jnp.asarray(t, jnp.uint32)
        h[self.position] = w.xor(h[self.position], w.Pair(jnp.zeros_like(t), t))
        return HashedState(h, self.final_tweak)


def hashed(state: RNGState) -> HashedState:
    final_tweak, h = state.message_hash()
    return HashedState(_pairs(h), final_tweak)


def family(state: RNGState) -> HashedFamily:
    """The family ``state.split(t)``."""
    first = state.split(0)
    final_tweak, h = first.message_hash()
    position = (len(first._pending) - 1)
    return HashedFamily(_pairs(h), final_tweak, position)


def hashed_static(state: RNGState, label: str) -> HashedState:
    return hashed(state.split_static(label))


def family_static(state: RNGState, label: str) -> HashedFamily:
    return family(state.split_static(label))



