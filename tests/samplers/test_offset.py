"""``offset=`` on the elementwise samplers: element ``i`` of a draw at ``offset`` is element
``offset + i`` of the same draw made larger, for static, traced and vmapped offsets, with x64
off and on."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp

STATE = jp.key(20261126).split_static("offsets")
N, OFFSET = 700, 1234
# Each sampler as ``draw(state, n, offset, x64)``: float64 and 64-bit integers where x64 is on,
# so that samplers reading two stream elements per value (float64 words, randint's 128-bit
# integers, the precise uniform) are covered.
SAMPLERS = {
    "bits": lambda s, n, x64, **k: jp.bits(s, (n,), jnp.uint64 if x64 else jnp.uint32, **k),
    "uniform": lambda s, n, x64, **k: jp.uniform(s, (n,), _float(x64), **k),
    "uniform_traced_bounds": lambda s, n, x64, **k: jp.uniform(
        s, (n,), _float(x64), jnp.asarray(-2.0, _float(x64)), jnp.asarray(3.0, _float(x64)),
        **k),
    "uniform_precise": lambda s, n, x64, **k: jp.uniform(s, (n,), _float(x64), precise=True,
                                                         **k),
    "normal": lambda s, n, x64, **k: jp.normal(s, (n,), _float(x64), **k),
    "bernoulli": lambda s, n, x64, **k: jp.bernoulli(s, 0.3, (n,), **k),
    "randint": lambda s, n, x64, **k: jp.randint(s, (n,), -5, 1 << 20,
                                                 jnp.int64 if x64 else jnp.int32, **k),
    "truncated_normal": lambda s, n, x64, **k: jp.truncated_normal(s, -1.0, 2.0, (n,),
                                                                   _float(x64), **k),
    "exponential": lambda s, n, x64, **k: jp.exponential(s, (n,), _float(x64), **k),
    "gumbel": lambda s, n, x64, **k: jp.gumbel(s, (n,), _float(x64), **k),
    "laplace": lambda s, n, x64, **k: jp.laplace(s, (n,), _float(x64), **k),
    "logistic": lambda s, n, x64, **k: jp.logistic(s, (n,), _float(x64), **k),
    "cauchy": lambda s, n, x64, **k: jp.cauchy(s, (n,), _float(x64), **k),
}


def _float(x64: bool):
    return jnp.float64 if x64 else jnp.float32


def _assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# In the default run: a sampler of each way of reading the stream (raw bits; one word a value,
# mapped; two a value: randint's limbs, the precise uniform with its continuation; traced
# bounds) with x64 off, and with x64 on those that read otherwise then (bits: 64-bit words;
# randint: 128-bit integers). The others, which read as ``normal`` does, are in the slow run,
# and so are the truncated normal (an inverse CDF with parameters: normal's words, its bounds
# passed as uniform_traced_bounds's are; 7 s) and, with x64 on, normal, the precise uniform
# and the traced bounds (64-bit words, as bits reads them; 12 s).
IN_DEFAULT_RUN = {"bits", "normal", "randint", "uniform_precise", "uniform_traced_bounds"}
X64_ON_IN_DEFAULT_RUN = {"bits", "randint"}


@pytest.mark.parametrize("name, x64", [
    pytest.param(name, x64, id=f"{name}-x64_{'on' if x64 else 'off'}",
                 marks=() if name in IN_DEFAULT_RUN and (
                     not x64 or name in X64_ON_IN_DEFAULT_RUN) else pytest.mark.slow)
    for name in SAMPLERS for x64 in (False, True)])
def test_a_draw_at_an_offset_is_a_slice_of_the_larger_draw(name, x64):
    with jax.enable_x64(x64):
        _check_slices(name, x64)


def _check_slices(name, x64):
    draw = SAMPLERS[name]
    whole = draw(STATE, OFFSET + N, x64)
    _assert_same(draw(STATE, N, x64, offset=OFFSET), whole[OFFSET:])
    traced = jax.jit(lambda offset: draw(STATE, N, x64, offset=offset))
    _assert_same(traced(jnp.uint32(OFFSET)), whole[OFFSET:])
    # Tiles of 10 at offsets 0, 10, .. under vmap are the draw's first values in order.
    tiles = jax.vmap(lambda offset: draw(STATE, 10, x64, offset=offset))(
        jnp.arange(0, 100, 10, dtype=jnp.uint32))
    _assert_same(tiles.reshape(-1), whole[:100])


@pytest.mark.parametrize("name", ["normal", "randint", "uniform_precise"])
def test_an_offset_past_two_to_the_32_reaches_the_same_elements_traced_and_static(name):
    draw = SAMPLERS[name]
    offset = (1 << 33) + 5
    with jax.enable_x64(True):
        traced = jax.jit(lambda o: draw(STATE, 16, False, offset=o))(jnp.uint64(offset))
    _assert_same(draw(STATE, 16, False, offset=offset), traced)


@pytest.mark.parametrize("offset, error, match", [
    (-1, ValueError, "normal offset accepts"),
    (1.5, TypeError, "normal offset accepts"),
    (np.array([1, 2]), ValueError, "normal offset accepts"),
    ((1 << 64) - 2, ValueError, "past the stream's 2\\*\\*64"),
])
def test_a_bad_offset_is_an_error_naming_it(offset, error, match):
    with pytest.raises(error, match=match):
        jp.normal(STATE, (4,), offset=offset)
