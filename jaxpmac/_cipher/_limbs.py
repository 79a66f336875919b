"""Multi-word unsigned integers as little-endian lists of ``uint32`` arrays ("limbs").

Used by ``randint`` for the wide multiply ``floor(x * R / 2**K)`` with 64- and 128-bit ``x``
and up to 65-bit ``R``, with 64-bit types on or off, and by Hail's engine for its 32x32->64
products and trailing-zero counts: the one implementation of each.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

_MASK16 = np.uint32(0xFFFF)
_SIXTEEN = np.uint32(16)


def mul32(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(hi, lo)`` of the 64-bit product of two ``uint32`` arrays, via 16-bit halves."""
    a0, a1 = a & _MASK16, a >> _SIXTEEN
    b0, b1 = b & _MASK16, b >> _SIXTEEN
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = p01 + p10
    mid_carry = (mid < p01).astype(jnp.uint32)
    lo = p00 + (mid << _SIXTEEN)
    lo_carry = (lo < p00).astype(jnp.uint32)
    hi = p11 + (mid >> _SIXTEEN) + (mid_carry << _SIXTEEN) + lo_carry
    return hi, lo


def trailing_zeros(limbs) -> jax.Array:
    """Trailing zeros of the number with these limbs (least significant first, all of one
    unsigned dtype, usually ``uint32``), as int32; all of its bits when it is zero.

    ``~x & (x - 1)`` has ones exactly at ``x``'s trailing zeros (all bits when ``x == 0``): here
    ``x - 1`` is taken limb by limb with its borrow, and the ones are counted per limb. No
    ``select`` is emitted: a vmapped draw can compile to one loop over the batch, and under
    jax 0.12 LLVM's loop vectorizer took time exponential in the cipher's depth to plan a
    chain of selects fed by the cipher's words (see benchmarks/README.md, "Compile time of
    vmapped Hail draws").
    """
    total, borrow = None, np.uint32(1)
    for x in limbs:
        # With no borrow in, ~x & x is 0: the limb adds nothing, as it should.
        count = lax.population_count(~x & (x - borrow)).astype(jnp.int32)
        total = count if total is None else total + count
        borrow = borrow & (x == 0).astype(jnp.uint32)
    return total


def _add_at(acc: list, position: int, value) -> None:
    """``acc += value * 2**(32*position)``, carrying up to the top limb (dropped beyond)."""
    for k in range(position, len(acc)):
        total = acc[k] + value
        value = (total < value).astype(jnp.uint32)
        acc[k] = total


def add(a: list, b: list) -> list:
    """``(a + b) mod 2**(32*len(a))``; ``b`` has at most as many limbs as ``a``."""
    acc = [jnp.asarray(x, jnp.uint32) for x in a]
    for k, limb in enumerate(b):
        _add_at(acc, k, jnp.asarray(limb, jnp.uint32))
    return acc


def subtract(a: list, b: list) -> list:
    """``(a - b) mod 2**(32*len(a))`` for equally long limb lists."""
    negated = [~jnp.asarray(x, jnp.uint32) for x in b]
    return add(add(a, negated), [np.uint32(1)])


def scaled_high(x: list, r: list, n_out: int) -> list:
    """``floor(x * r / 2**(32*len(x)))`` as ``n_out`` limbs (the caller knows it fits)."""
    shape = jnp.broadcast_shapes(*[jnp.shape(v) for v in x + r])
    acc = [jnp.zeros(shape, jnp.uint32) for _ in range(len(x) + len(r))]
    for i, xi in enumerate(x):
        for j, rj in enumerate(r):
            hi, lo = mul32(xi, rj)
            _add_at(acc, i + j, lo)
            _add_at(acc, i + j + 1, hi)
    return acc[len(x):len(x) + n_out]
