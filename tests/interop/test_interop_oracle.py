"""Property tests of the ``jax.random`` interop against the pure-Python reference oracle.

A key made by ``jp.as_jax_key`` (or ``jax.random.key(seed, impl=jp.prng_impl)``) must draw,
through ``jax.random``'s own functions, exactly the oracle's stream of the message it stands for:
``fold_in`` and ``split`` append a 32-bit dynamic word, ``fold_in_uids`` a 64-bit one
(docs/interop.md, "The contracts").
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import label_lists, oracle_bits, property_settings, word_values
from hypothesis import given
from hypothesis import strategies as st

import jaxpmac as jp

# Every lowering; the TPU's (``elementwise_pairs``: the unrolled cipher on uint32 pairs, a long
# compile per message length) only in the slow run: test_small_draws.py checks a key's fold_in,
# split and draws under every lowering in the default run.
pytestmark = [pytest.mark.usefixtures("each_lowering"),
              pytest.mark.other_lowerings_slow(keep=("elementwise",))]

uids32 = st.integers(min_value=0, max_value=(1 << 32) - 1)
N = 12  # fixed output size: hypothesis varies values, not shapes (one compile per uid count)


@functools.lru_cache(maxsize=None)
def _fold_in_bits(n_uids: int):
    """Jitted (per forced lowering): bits of a key after ``fold_in`` of each uid in turn (uids
    traced)."""
    def draw(key, uids):
        for i in range(n_uids):
            key = jax.random.fold_in(key, uids[i])
        return jax.random.bits(key, (N,), jnp.uint32)
    return jax.jit(draw)


@property_settings()
@given(word_values, label_lists, st.lists(uids32, max_size=6))
def test_fold_in_chain_draws_the_oracle_stream_of_the_appended_words(nonce, label_list, uids):
    key = jp.as_jax_key(jp.key(nonce).split_static(*label_list))
    got = _fold_in_bits(len(uids))(key, jnp.asarray(np.array(uids, np.uint32)))
    np.testing.assert_array_equal(np.asarray(got), oracle_bits(nonce, label_list, uids, N,
                                                               jnp.uint32))


@property_settings()
@given(word_values, st.lists(word_values, min_size=1, max_size=6))
def test_fold_in_uids_appends_full_64_bit_words(nonce, uids):
    key = jp.fold_in_uids(jp.as_jax_key(jp.key(nonce)), *uids)
    got = jax.random.bits(key, (N,), jnp.uint32)
    np.testing.assert_array_equal(np.asarray(got), oracle_bits(nonce, [], uids, N, jnp.uint32))


@property_settings()
@given(word_values, uids32, st.integers(min_value=1, max_value=9), st.data())
def test_split_row_i_is_the_message_with_word_i_appended(nonce, uid, count, data):
    index = data.draw(st.integers(min_value=0, max_value=count - 1))
    parent = jax.random.fold_in(jp.as_jax_key(jp.key(nonce)), uid)
    child = jax.random.split(parent, count)[index]
    got = jax.random.bits(child, (N,), jnp.uint32)
    np.testing.assert_array_equal(np.asarray(got),
                                  oracle_bits(nonce, [], [uid, index], N, jnp.uint32))


@property_settings()
@given(st.integers(min_value=-(1 << 31), max_value=(1 << 31) - 1))
def test_jax_random_key_with_prng_impl_is_the_seed_as_nonce(seed):
    got = jax.random.bits(jax.random.key(seed, impl=jp.prng_impl), (N,), jnp.uint32)
    np.testing.assert_array_equal(np.asarray(got), oracle_bits(seed, [], [], N, jnp.uint32))
