"""Rejection sampling with fixed stream positions: try ``t`` of element ``i`` reads fixed words.

Try 0 of element ``i`` reads words ``k*i .. k*i+k-1`` of the state's own stream (``k`` words per
try); try ``t >= 1`` reads the same positions of ``state.split_static(label).split(t)`` (a
:class:`~jaxpmac._samplers._hashed.HashedFamily`). Every
try is computed for all elements at once, and a ``lax.while_loop`` runs further tries while any
element is still rejected -- correct for any number of rejections, and an element's value
depends only on the state and its index, never on the shape of the draw or on other elements.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from jaxpmac._samplers import _unit


def until_accepted(state, retries, propose, *, n: int, words_per_try: int, dtype):
    """Runs ``propose(words, first) -> (values, accepted)`` (``words``: ``[n, words_per_try]``
    stream words for float ``dtype``; ``first``: static, True for try 0) until every element
    is accepted; returns the first accepted value of each element."""
    values, accepted = propose(_unit.words(state, n, words_per_try, dtype), True)

    def any_rejected(carry):
        return ~jnp.all(carry[2])

    def next_try(carry):
        t, values, accepted = carry
        proposal, ok = propose(_unit.words(retries.member(t), n, words_per_try, dtype), False)
        take = ok & ~accepted
        return t + 1, jnp.where(take, proposal, values), accepted | ok

    _, values, _ = lax.while_loop(any_rejected, next_try, (jnp.uint32(1), values, accepted))
    return values
