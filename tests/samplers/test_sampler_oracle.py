"""Property tests of the integer-exact samplers against the pure-Python reference oracle.

``uniform`` (fast mode), ``bernoulli`` and ``randint`` are exact functions of the stream, so for
random messages they must equal formulas evaluated on the oracle's stream in plain Python ints
(the formulas are the algorithms their docstrings state).
"""

from __future__ import annotations

import struct

import jax.numpy as jnp
import numpy as np
import pytest
from conftest import label_lists, oracle_label_words, property_settings, word_values
from hypothesis import given
from hypothesis import strategies as st

import jaxpmac as jp
import reference_oracle as ro

pytestmark = pytest.mark.usefixtures("each_lowering")

messages = st.lists(word_values, max_size=9)
sizes = st.integers(min_value=1, max_value=20)


def _state(nonce, label_list, message):
    return jp.key(nonce).split_static(*label_list).split(*message)


def _oracle_words32(nonce, label_list, message, n):
    return ro.stream32(nonce & ro.MASK64, oracle_label_words(label_list),
                       [m & ro.MASK64 for m in message], n)


@property_settings()
@given(word_values, label_lists, messages, sizes)
def test_uniform_float32_is_the_mantissa_fill_of_stream_word_i(nonce, label_list, message, n):
    words = _oracle_words32(nonce, label_list, message, n)
    expected = [struct.unpack("<f", struct.pack("<I", (k >> 9) | 0x3F800000))[0] - 1.0
                for k in words]
    got = jp.uniform(_state(nonce, label_list, message), (n,), jnp.float32)
    np.testing.assert_array_equal(np.asarray(got, np.float64), expected)


@property_settings()
@given(word_values, label_lists, messages, sizes,
       st.floats(min_value=0.0, max_value=1.0, width=32))
def test_bernoulli_is_stream_word_i_below_p(nonce, label_list, message, n, p):
    words = _oracle_words32(nonce, label_list, message, n)
    threshold = float(np.float32(p)) * 2.0**32  # exact in a double: u = k * 2**-32 < p
    expected = [k < threshold for k in words]
    got = jp.bernoulli(_state(nonce, label_list, message), np.float32(p), (n,))
    assert np.asarray(got).tolist() == expected


@property_settings()
@given(word_values, label_lists, messages, sizes,
       st.integers(min_value=-(2**31), max_value=2**31 - 1),
       st.integers(min_value=1, max_value=2**32))
def test_randint_int32_is_the_wide_multiply_of_64_bit_word_i(nonce, label_list, message, n,
                                                              minval, span):
    maxval = min(minval + span, 2**31)
    words = ro.stream64(nonce & ro.MASK64, oracle_label_words(label_list),
                        [m & ro.MASK64 for m in message], n)
    expected = [minval + (x * (maxval - minval) >> 64) for x in words]
    got = jp.randint(_state(nonce, label_list, message), (n,), minval, maxval, jnp.int32)
    assert np.asarray(got).tolist() == expected
