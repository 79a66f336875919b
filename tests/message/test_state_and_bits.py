"""Messages and streams (SPEC section 2): ``jp.bits`` equals the oracle's streams.

Every form of a word -- Python int, numpy or JAX scalar, 1-D array, traced jit argument -- must
give the same bits, for any seed, static labels and dynamic message, in every stream dtype, at
any offset. Traced programs have fixed shapes, so hypothesis varies values without recompiling.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jaxpmac as jp
from conftest import (assert_equal_arrays, label_lists, oracle_bits, param, property_settings,
                      ro, word_values)
from jaxpmac._lowering import _cpu_plan
from jaxpmac._samplers import _bits

pytestmark = pytest.mark.usefixtures("each_lowering")

N_DRAWN = 40  # elements per draw: 5 blocks of uint32, 3 of uint16, 2 of uint8
SMALL_DTYPES = (jnp.uint8, jnp.uint16, jnp.uint32)
messages = st.lists(word_values, max_size=20)


def _fits(dtype, values) -> bool:
    info = np.iinfo(dtype)
    return all(info.min <= v <= info.max for v in values)


def _as_scalar_arrays(values):
    """Each word as a concrete scalar array of a dtype that holds it (numpy or JAX)."""
    out = []
    for i, v in enumerate(values):
        if _fits(np.int32, [v]) and i % 2:
            out.append(jnp.int32(v))
        elif _fits(np.uint32, [v]):
            out.append(jnp.asarray(v, jnp.uint32))
        elif v < 0:
            out.append(np.int64(v))
        else:
            out.append(np.uint64(v))
    return out


def _as_vectors(values):
    """The words as 1-D arrays: a uint64 vector, an int64 vector, or split into pieces."""
    if not values:
        return [np.zeros((0,), np.uint32)]
    if _fits(np.int64, values):
        middle = len(values) // 2
        return [np.array(values[:middle], np.int64), np.array(values[middle:], np.int64)]
    return [np.array([v % (1 << 64) for v in values], np.uint64)]


def _state(seed, label_list, uids):
    return jp.key(seed).split_static(*label_list).split(*uids)


# -- concrete messages -----------------------------------------------------------------------------
# A concrete message is hashed in Python, the same under every lowering; the lowerings' own
# part, the stream of a state, is drawn in every small dtype under each lowering by default in
# tests/lowering/test_lowering.py (test_every_lowering_gives_the_same_values_with_and_without_jit)
# and here by the traced tests. So the other lowerings run these in the slow run.
@pytest.mark.other_lowerings_slow
@property_settings(25)
@given(seed=word_values, label_list=label_lists, message=messages,
       dtype=st.sampled_from(SMALL_DTYPES),
       form=st.sampled_from(["ints", "scalar_arrays", "vectors"]))
def test_concrete_message_matches_oracle(seed, label_list, message, dtype, form):
    uids = {"ints": list(message), "scalar_arrays": _as_scalar_arrays(message),
            "vectors": _as_vectors(message)}[form]
    state = _state(seed, label_list, uids)
    assert state.is_static
    expected = oracle_bits(seed, label_list, message, N_DRAWN, dtype)
    assert_equal_arrays(jp.bits(state, (N_DRAWN,), dtype), expected)


# uint64 and pair streams under each lowering: test_traced_64bit_words_with_x64, by default.
@pytest.mark.other_lowerings_slow
@property_settings(10)
@given(seed=word_values, label_list=label_lists, message=messages)
def test_concrete_uint64_with_x64(seed, label_list, message):
    with jax.enable_x64(True):
        state = _state(seed, label_list, message)
        got = jp.bits(state, (12,), jnp.uint64)
        pair32 = _bits.stream(state, 24, jnp.uint32, native=False)
    assert_equal_arrays(got, oracle_bits(seed, label_list, message, 12, jnp.uint64))
    # The x64-off path gives the same 64-bit words as (lo, hi) halves.
    halves = np.asarray(pair32).astype(np.uint64)
    assert_equal_arrays(halves[0::2] | (halves[1::2] << np.uint64(32)), np.asarray(got))


# -- traced messages (x64 off: 32-bit traced words) ------------------------------------------------
TRACED_LABELS = ("layer", 7, "ünïcode ✓ label over eight bytes")
# Each traced length compiles its own cipher calls (seconds each on a small CPU), so a few
# lengths cover the cases: empty, padded final block, one and two full blocks before it. Every
# length 0..20 is covered with concrete words, whose bits the traced path must equal.
TRACED_LENGTHS = (0, 5, 9)
TRACED_BATCH = 3
# A message mixing concrete words ("c", value) with traced ones ("t", index into 7 words).
MIXED_PATTERN = (("c", 7), ("t", 0), ("c", -1), ("t", 1), ("t", 2), ("t", 3), ("c", 1 << 63),
                 ("t", 4), ("c", 5), ("t", 5), ("t", 6))


def _mixed(traced):
    """The mixed message with ``traced[i]`` (a traced array or a Python int) in its slots."""
    return [traced[v] if kind == "t" else v for kind, v in MIXED_PATTERN]


@jax.jit
def _traced_program(seeds, signed_seeds, messages_by_length, mixed):
    """Draws for a batch of traced seeds and messages (vmapped), one compilation for all."""
    def one(seed, signed_seed, by_length, mixed_words):
        out = {}
        for length, message in by_length.items():
            out[f"length{length}"] = jp.bits(_state(seed, TRACED_LABELS, [message]), (N_DRAWN,))
        # int32 seeds and words sign-extend; a traced offset and narrow dtypes on one state.
        signed_state = _state(signed_seed, TRACED_LABELS, [by_length[9].astype(jnp.int32)])
        out["signed"] = jp.bits(signed_state, (N_DRAWN,))
        out["uint8"] = jp.bits(signed_state, (N_DRAWN,), jnp.uint8)
        out["mixed"] = jp.bits(_state(seed, TRACED_LABELS, _mixed(mixed_words)),
                               (N_DRAWN,))
        return out
    return jax.vmap(one)(seeds, signed_seeds, messages_by_length, mixed)


u32 = st.integers(0, (1 << 32) - 1)
i32 = st.integers(-(1 << 31), (1 << 31) - 1)


@property_settings(8)
@given(data=st.data())
def test_traced_messages_match_oracle_and_concrete(data):
    seeds = data.draw(st.lists(u32, min_size=TRACED_BATCH, max_size=TRACED_BATCH))
    signed_seeds = data.draw(st.lists(i32, min_size=TRACED_BATCH, max_size=TRACED_BATCH))
    by_length = {n: [data.draw(st.lists(u32, min_size=n, max_size=n))
                     for _ in range(TRACED_BATCH)] for n in TRACED_LENGTHS}
    mixed = [data.draw(st.lists(u32, min_size=7, max_size=7)) for _ in range(TRACED_BATCH)]
    got = jax.device_get(_traced_program(np.array(seeds, np.uint32),
                                         np.array(signed_seeds, np.int32),
                                         {n: np.array(m, np.uint32).reshape(TRACED_BATCH, n)
                                          for n, m in by_length.items()},
                                         np.array(mixed, np.uint32)))
    for b in range(TRACED_BATCH):
        for n in TRACED_LENGTHS:
            expected = oracle_bits(seeds[b], TRACED_LABELS, by_length[n][b], N_DRAWN, jnp.uint32)
            assert_equal_arrays(got[f"length{n}"][b], expected)
            # The same values as concrete uids give the same bits.
            concrete = _state(seeds[b], TRACED_LABELS, [np.array(by_length[n][b], np.uint32)])
            assert_equal_arrays(jp.bits(concrete, (N_DRAWN,)), expected)
        signed_message = [ro.to_word(int(np.int32(np.uint32(v)))) for v in by_length[9][b]]
        for name, dtype in (("signed", jnp.uint32), ("uint8", jnp.uint8)):
            expected = oracle_bits(signed_seeds[b], TRACED_LABELS, signed_message, N_DRAWN,
                                   dtype)
            assert_equal_arrays(got[name][b], expected)
        expected = oracle_bits(seeds[b], TRACED_LABELS, _mixed(mixed[b]), N_DRAWN,
                               jnp.uint32)
        assert_equal_arrays(got["mixed"][b], expected)


# A traced nonce under each lowering: tests/lowering/test_lowering.py's draws of a traced seed,
# by default; the other lowerings run this in the slow run.
@pytest.mark.other_lowerings_slow
def test_traced_nonce_alone():
    draw = jax.jit(lambda seed: jp.bits(jp.key(seed), (N_DRAWN,)))
    for seed in (0, 1, 2**31 - 1, 2**32 - 1):
        expected = oracle_bits(seed, (), (), N_DRAWN, jnp.uint32)
        assert_equal_arrays(draw(jnp.uint32(seed)), expected)
        assert_equal_arrays(jp.bits(jp.key(seed), (N_DRAWN,)), expected)


# -- traced 64-bit words (x64 on: the native uint64 cipher) ----------------------------------------
@jax.jit
def _traced_program_x64(seeds, messages):
    def one(seed, message):
        state = _state(seed, TRACED_LABELS, [message])
        return (jp.bits(state, (12,), jnp.uint64), jp.bits(state, (N_DRAWN,), jnp.uint32),
                _bits.stream(state, N_DRAWN, jnp.uint32, native=False))
    return jax.vmap(one)(seeds, messages)


@property_settings(8)
@given(seeds=st.lists(word_values, min_size=2, max_size=2),
       messages=st.lists(st.lists(word_values, min_size=9, max_size=9), min_size=2, max_size=2))
def test_traced_64bit_words_with_x64(seeds, messages):
    with jax.enable_x64(True):
        signed = [ro.to_signed64(ro.to_word(s)) for s in seeds]
        words = np.array([[ro.to_word(v) for v in m] for m in messages], np.uint64)
        got64, got32, pair32 = jax.device_get(
            _traced_program_x64(np.array(signed, np.int64), words))
    for b in range(2):
        assert_equal_arrays(got64[b], oracle_bits(seeds[b], TRACED_LABELS, messages[b], 12,
                                                  jnp.uint64))
        expected32 = oracle_bits(seeds[b], TRACED_LABELS, messages[b], N_DRAWN, jnp.uint32)
        assert_equal_arrays(got32[b], expected32)
        assert_equal_arrays(pair32[b], expected32)


def test_x64_on_equals_x64_off():
    state = jp.key(-5).split_static("x64").split(1, 2, 3, 4, 5, 2**64 - 1)
    off = jp.bits(state, (N_DRAWN,))
    with jax.enable_x64(True):
        on = jp.bits(state, (N_DRAWN,))
        native = _bits.stream(state, N_DRAWN, jnp.uint32, native=True)
        pair = _bits.stream(state, N_DRAWN, jnp.uint32, native=False)
    assert not jax.config.jax_enable_x64
    for x in (on, native, pair):
        assert_equal_arrays(x, off)
    assert_equal_arrays(off, oracle_bits(-5, ["x64"], [1, 2, 3, 4, 5, 2**64 - 1], N_DRAWN,
                                         jnp.uint32))


# -- offsets ---------------------------------------------------------------------------------------
STATE_ARGS = (2**64 - 1, ["offsets", -3], [9, 8, 7, 6, 5])
BIG_OFFSETS = {  # dtype -> offsets; the first crosses from block 2**32 - 1 into block 2**32
    jnp.uint32: ((2**32 - 1) * 8 + 3, 2**64 - 9),
    jnp.uint8: ((2**32 - 1) * 32 + 30, 11),
}


# uint8 under the CPU's lowering by default, under the others in the slow run: the carry into
# block 2**32 and the wrap at 2**64 stay under every lowering with uint32, and uint8 at an
# offset under every lowering in tests/lowering/test_lowering.py.
@pytest.mark.parametrize("dtype", [
    pytest.param(dtype, marks=pytest.mark.other_lowerings_slow) if dtype == jnp.uint8 else dtype
    for dtype in BIG_OFFSETS])
def test_static_offsets(dtype):
    seed, label_list, message = STATE_ARGS
    state = _state(seed, label_list, message)
    for offset in BIG_OFFSETS[dtype]:
        expected = oracle_bits(seed, label_list, message, 8, dtype, start=offset)
        assert_equal_arrays(jp.bits(state, (8,), dtype, offset=offset), expected)
    # Pieces of a draw agree with the whole.
    whole = jp.bits(state, (8,), dtype)
    assert_equal_arrays(jnp.concatenate([jp.bits(state, (3,), dtype),
                                         jp.bits(state, (5,), dtype, offset=3)]), whole)


def test_traced_offsets():
    seed, label_list, message = STATE_ARGS
    state = _state(seed, label_list, message)
    offsets = np.array([0, 1, 7, 8, 13, 2**32 - 9], np.uint32)
    draw = jax.jit(jax.vmap(lambda o: jp.bits(state, (8,), offset=o)))
    got = jax.device_get(draw(offsets))
    for row, offset in zip(got, offsets):
        assert_equal_arrays(row, oracle_bits(seed, label_list, message, 8, jnp.uint32,
                                             start=int(offset)))
    with jax.enable_x64(True):
        big = [(2**32 - 1) * 8 + 3, 2**40 + 5, 2**64 - 9]
        got = jax.device_get(jax.jit(jax.vmap(lambda o: jp.bits(state, (8,), offset=o)))(
            np.array(big, np.uint64)))
    for row, offset in zip(got, big):
        assert_equal_arrays(row, oracle_bits(seed, label_list, message, 8, jnp.uint32,
                                             start=offset))


# -- shapes ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(12,), (3, 4), (2, 3, 2), (1, 12, 1), 12])
def test_element_i_is_stream_element_i(shape):
    seed, label_list, message = STATE_ARGS
    got = jp.bits(_state(seed, label_list, message), shape)
    expected = oracle_bits(seed, label_list, message, 12, jnp.uint32)
    assert got.shape == (shape if isinstance(shape, tuple) else (shape,))
    assert_equal_arrays(got.ravel(), expected)


def test_scalar_and_zero_size_shapes():
    state = _state(*STATE_ARGS)
    scalar = jp.bits(state)
    assert scalar.shape == () and scalar.dtype == jnp.uint32
    assert int(scalar) == int(oracle_bits(*STATE_ARGS, 1, jnp.uint32)[0])
    for shape in [(0,), (4, 0), (0, 3, 2)]:
        for dtype in SMALL_DTYPES:
            empty = jp.bits(state, shape, dtype)
            assert empty.shape == shape and empty.dtype == dtype
    empty = jax.jit(lambda s: jp.bits(s, (2, 0), offset=5))(state)
    assert empty.shape == (2, 0)


def test_state_is_immutable_and_repr():
    root = jp.key(42)
    child = root.split(1).split_static("a")
    assert repr(root) == "RNGState(nonce=0x2a, static_words=0, dynamic_words=0)"
    assert "dynamic_words=1" in repr(child)
    assert_equal_arrays(jp.bits(root, (4,)), oracle_bits(42, [], [], 4, jnp.uint32))


# The CPU cipher loop takes one, two or four rounds a step depending on how many blocks it
# encrypts at once (``_cpu_plan.rounds_per_step``), and long streams run in chunks of
# ``_cpu_plan.chunk_blocks`` (smaller chunks for smaller draws, from a loop of two smallest
# chunks up): draws at and around every boundary equal the oracle.
STEP_AND_CHUNK_BLOCKS = tuple(
    n + extra for n in (_cpu_plan.ONE_ROUND_STEP_MAX_BLOCKS, _cpu_plan.TWO_ROUND_STEP_MAX_BLOCKS,
                        _cpu_plan.MIN_CPU_CHUNK_BLOCKS, 12 * _cpu_plan.MIN_CPU_CHUNK_BLOCKS,
                        _cpu_plan.CPU_CHUNK_BLOCKS, 6 * _cpu_plan.CPU_CHUNK_BLOCKS)
    for extra in (0, 1))


@pytest.mark.parametrize("n_blocks, chunk", [(1024, 1024), (6143, 1024), (6144, 1024),
                                             (12288, 2048), (24575, 2048), (24576, 4096),
                                             (1 << 20, 4096)])
def test_chunks_are_at_most_a_sixth_of_a_small_draw(n_blocks, chunk):
    """So that the chunk's working set (~86 bytes a block) stays under half the output (32
    bytes a block); never under the smallest chunk, never over the usual one."""
    assert _cpu_plan.chunk_blocks(n_blocks) == chunk


# The boundaries are the CPU lowering's; the other lowerings draw these sizes in the slow run.
# The CPU's loop runs on uint64 words with x64 on or off (_chunks.chunked_via_uint64): every
# boundary with x64 off by default, and with x64 on a loop of two smallest chunks (1025 blocks:
# its native words into the same loop); the other sizes with x64 on in the slow run.
X64_STEP_AND_CHUNK_BLOCKS_BY_DEFAULT = (_cpu_plan.MIN_CPU_CHUNK_BLOCKS + 1,)


@pytest.mark.other_lowerings_slow
@pytest.mark.parametrize("x64, n_blocks", [
    param(x64, n_blocks, id=f"{x64}-{n_blocks}",
          slow=x64 and n_blocks not in X64_STEP_AND_CHUNK_BLOCKS_BY_DEFAULT)
    for x64 in (False, True) for n_blocks in STEP_AND_CHUNK_BLOCKS])
def test_every_step_size_and_chunking_draws_the_oracle_stream(n_blocks, x64):
    n = 8 * n_blocks
    seed = 2**40 + 3 if x64 else 3          # a traced seed: the hash is encrypted in the loop too
    with jax.enable_x64(x64):
        seed_array = jnp.asarray(seed, jnp.uint64 if x64 else jnp.uint32)
        got = jax.jit(lambda s: jp.bits(jp.key(s).split_static("steps").split(7), (n,)))(
            seed_array)
    assert_equal_arrays(got, oracle_bits(seed, ["steps"], [7], n, jnp.uint32))
