"""Threefish-256 of a message's traced blocks, in the form each platform compiles best."""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering._platform import by_platform, dynamic_part, with_dynamic


def encrypt_words(key: Sequence[int], tweak: Sequence[w.Word], block: Sequence[w.Word], *,
                  native: bool, rounds: int = _threefish.ROUNDS) -> tuple[w.Word, ...]:
    """:func:`jaxpmac._cipher._threefish.encrypt_words`, rolled on a CPU and unrolled elsewhere
    (``by_platform``); all-static input is encrypted in Python, with no platform choice.

    Only the dynamic words cross the platform choice; static ones stay Python ints, folded
    into each branch.
    """
    words = (*tweak, *block)
    if all(w.is_static(x) for x in words):
        return _threefish.encrypt(key, tweak, block, rounds=rounds)

    def lowered(**how):
        def encrypt_dynamic(dynamic):
            here = with_dynamic(words, dynamic)
            return _threefish.encrypt_words(key, here[:len(tweak)], here[len(tweak):],
                                            native=native, rounds=rounds, **how)
        return encrypt_dynamic

    shape = jnp.broadcast_shapes(*[w.shape_of(x) for x in words])
    word = (jax.ShapeDtypeStruct(shape, jnp.uint64) if native
            else w.Pair(*[jax.ShapeDtypeStruct(shape, jnp.uint32)] * 2))
    return by_platform(dynamic_part(words), rolled=lowered(rolled=True),
                       elementwise=lowered(rolled=False, wide=True),
                       elementwise_pairs=lowered(rolled=False), result=(word,) * len(block))
