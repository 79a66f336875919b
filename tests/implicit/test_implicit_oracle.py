"""Property tests of ``jp.randomized`` against the pure-Python reference oracle.

For a family of programs (some top-level keyless draws, one inside ``lax.scan``, one under
``vmap``), every drawn value must be the oracle's stream of the message the documented mapping
gives (docs/implicit.md): the root's words, then the site's static word (Hail's halving split of
the random children, recomputed here independently of the package), then the vmap lane and the
loop iteration as dynamic words.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from conftest import label_lists, oracle_bits, property_settings, word_values
from hypothesis import given
from hypothesis import strategies as st

import jaxpmac as jp

N = 8  # uint32 words per draw


def halving_split(n: int) -> list[str]:
    """Hail's split of ``n`` random children: first ``n // 2`` get "0", the rest "1"."""
    if n == 1:
        return [""]
    first = n // 2
    return (["0" + b for b in halving_split(first)] +
            ["1" + b for b in halving_split(n - first)])


def _program(n_top: int, steps: int, lanes: int):
    def model():
        tops = [jp.rand.bits((N,)) for _ in range(n_top)]

        def step(carry, _):
            return carry, jp.rand.bits((N,))
        _, scanned = jax.lax.scan(step, 0, None, length=steps)
        laned = jax.vmap(lambda _: jp.rand.bits((N,)))(jnp.arange(lanes))
        return tops, scanned, laned
    return jp.randomized(model)


@property_settings(max_examples=12)
@given(word_values, label_lists, st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.booleans())
def test_every_draw_is_the_oracle_stream_of_its_documented_message(
        nonce, label_list, n_top, steps, lanes, use_jit):
    model = _program(n_top, steps, lanes)
    run = jax.jit(model) if use_jit else model
    tops, scanned, laned = run(jp.key(nonce).split_static(*label_list))

    bits = halving_split(n_top + 2)  # children in equation order: tops, the scan, the vmap draw
    static_word = [int("1" + b, 2) for b in bits]

    def expected(child: int, dynamic):
        return oracle_bits(nonce, [*label_list, static_word[child]], dynamic, N, jnp.uint32)

    for j in range(n_top):
        np.testing.assert_array_equal(np.asarray(tops[j]), expected(j, []))
    for t in range(steps):
        np.testing.assert_array_equal(np.asarray(scanned[t]), expected(n_top, [t]))
    for lane in range(lanes):
        np.testing.assert_array_equal(np.asarray(laned[lane]), expected(n_top + 1, [lane]))
