"""Tests of Hail's sequential engine (``jaxpmac._hail._engine.Engine`` and ``next_*``) against the
pure-Python oracle's ``HailEngine`` (verified against Hail's published values).

A call sequence is an array of operation codes run by ``lax.scan`` with ``lax.switch``, so one
compiled program serves every sequence and state (hypothesis varies values, never shapes), and
the engine is exercised inside a loop as the samplers use it.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax

import jaxpmac as jp
from jaxpmac._cipher import _words as w
from jaxpmac._hail import _engine as engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/: the oracle
import reference_oracle as ro  # noqa: E402
from conftest import property_settings  # noqa: E402

LONG, INT, DOUBLE, GAUSSIAN = range(4)
SEQUENCE_LENGTH = 24
GAUSSIAN_RTOL = 1e-15       # the project's fdlibm log against the oracle's math.log

words = st.integers(min_value=-2**63, max_value=2**64 - 1)
seeds = st.integers(min_value=-2**62, max_value=2**62)
operations = st.lists(st.sampled_from((LONG, INT, DOUBLE, GAUSSIAN)),
                      min_size=SEQUENCE_LENGTH, max_size=SEQUENCE_LENGTH)


def hail_state(global_seed, seed, message):
    return jp.key(global_seed).split(*message).split_static(-seed - 1)


def run_sequence(eng: engine.Engine, ops):
    """Runs the operations on the engine; per draw ``(hi, lo, float)`` (unused parts zero)."""
    zero_u32 = jnp.zeros((), jnp.uint32)
    zero_float = jnp.zeros((), engine.float_dtype())

    def long_(eng):
        eng, word = engine.next_long(eng)
        return eng, (word.hi, word.lo, zero_float)

    def int_(eng):
        eng, half = engine.next_int(eng)
        return eng, (zero_u32, half, zero_float)

    def double_(eng):
        eng, d = engine.next_double(eng)
        return eng, (zero_u32, zero_u32, d)

    def gaussian_(eng):
        eng, z = engine.next_gaussian(eng)
        return eng, (zero_u32, zero_u32, z)

    def step(eng, op):
        return lax.switch(op, (long_, int_, double_, gaussian_), eng)

    return lax.scan(step, eng, ops)[1]


run_jitted = jax.jit(run_sequence)


def run_on_state(state, ops, *, use_jit=True):
    eng = engine.engine_from_state(state)
    ops = jnp.asarray(ops, jnp.int32)
    return run_jitted(eng, ops) if use_jit else run_sequence(eng, ops)


def oracle_sequence(oracle_engine: ro.HailEngine, ops):
    draws = []
    for op in ops:
        draws.append({LONG: oracle_engine.next_long, INT: oracle_engine.next_int,
                      DOUBLE: oracle_engine.next_double,
                      GAUSSIAN: oracle_engine.next_gaussian}[op]())
    return draws


def assert_matches_oracle(ops, draws, expected, *, x64: bool):
    hi, lo, floats = (np.asarray(part) for part in draws)
    for i, (op, want) in enumerate(zip(ops, expected)):
        where = (i, op, list(ops))
        if op == LONG:
            assert (int(hi[i]) << 32 | int(lo[i])) == want, where
        elif op == INT:
            assert int(lo[i]) == want, where
        elif op == DOUBLE:
            assert float(floats[i]) == (want if x64 else float(np.float32(want))), where
        elif x64:
            assert math.isclose(float(floats[i]), want, rel_tol=GAUSSIAN_RTOL,
                                abs_tol=1e-300), where
        else:   # float32 polar method: about float32 precision
            assert math.isclose(float(floats[i]), want, rel_tol=1e-5, abs_tol=1e-6), where


def check_against_oracle(global_seed, seed, message, ops, *, x64=True, use_jit=True):
    with jax.enable_x64(x64):
        draws = run_on_state(hail_state(global_seed, seed, message), ops, use_jit=use_jit)
        expected = oracle_sequence(ro.HailEngine(*ro.hail_state(global_seed, seed, message)),
                                   ops)
        assert_matches_oracle(ops, draws, expected, x64=x64)


@property_settings(10)
@given(global_seed=words, seed=seeds, message=st.lists(words, min_size=2, max_size=2),
       ops=operations)
def test_call_sequences_match_oracle_x64(global_seed, seed, message, ops):
    check_against_oracle(global_seed, seed, message, ops)


# Slow run: with x64 off only the engine's floats change (float32 doubles and normals), and
# those are Hail's by default in tests/hail's x64-off known answers (test_hail_functions'
# size= sequences, test_hail's cases); the mixed call sequences stay with x64 on.
@pytest.mark.slow
@property_settings(4)
@given(global_seed=words, seed=seeds, message=st.lists(words, min_size=4, max_size=4),
       ops=operations)
def test_call_sequences_match_oracle_x64_off(global_seed, seed, message, ops):
    check_against_oracle(global_seed, seed, message, ops, x64=False)


def test_call_sequence_under_disable_jit():
    """Op by op (the loops run in Python): a short sequence through every kind of draw."""
    ops = [DOUBLE, INT, LONG, GAUSSIAN, INT, INT, INT, DOUBLE]
    with jax.disable_jit():
        check_against_oracle(-4, 2, [1], ops, use_jit=False)


def test_vmap_over_states_and_sequences():
    """Lanes with different states and different call sequences (a batched ``used_ints``)."""
    rng = np.random.default_rng(0)
    messages = [[int(i), int(j)] for i, j in rng.integers(-2**31, 2**31, (6, 2))]
    ops = rng.integers(0, 4, (6, SEQUENCE_LENGTH)).astype(np.int32)
    with jax.enable_x64(True):
        states = jax.vmap(lambda m: jp.key(9).split(m[0], m[1]).split_static(-4))(
            jnp.asarray(messages))
        draws = jax.jit(jax.vmap(run_sequence))(jax.vmap(engine.engine_from_state)(states), ops)
        for lane, message in enumerate(messages):
            expected = oracle_sequence(ro.HailEngine(*ro.hail_state(9, 3, message)), ops[lane])
            assert_matches_oracle(list(ops[lane]), [part[lane] for part in draws], expected,
                                  x64=True)


def test_vmap_with_one_sequence_keeps_the_refill_a_branch():
    """Every lane draws the same pattern: ``used_ints`` stays unbatched, so the refill's
    ``cond`` is a real conditional, not a select of both branches."""
    with jax.enable_x64(True):
        states = jax.vmap(lambda i: jp.key(1).split(i).split_static(-1))(jnp.arange(3))
        final_tweak, h = engine.state_hash(states)

        def longs(h):
            eng = engine.engine_from_hash(h, final_tweak)
            return lax.scan(lambda eng, _: engine.next_long(eng), eng, None, length=9)[1]

        jaxpr = jax.make_jaxpr(jax.vmap(longs))(h)
        assert "cond[" in str(jaxpr)
        draws = jax.jit(jax.vmap(longs))(h)
        for lane in range(3):
            oracle_engine = ro.HailEngine(*ro.hail_state(1, 0, [lane]))
            got = [int(draws.hi[lane, i]) << 32 | int(draws.lo[lane, i]) for i in range(9)]
            assert got == [oracle_engine.next_long() for _ in range(9)]


def crafted_engine(block_words, *, block_index=1):
    """An engine whose current block is ``block_words`` (nothing consumed), and the oracle
    engine in the same condition: for the rare paths (all-zero words, >= 12 trailing zeros)."""
    global_seed, seed, message = 5, 6, [7]
    oracle_engine = ro.HailEngine(*ro.hail_state(global_seed, seed, message))
    oracle_engine._buffer = list(block_words)
    oracle_engine._block_index = block_index
    eng = engine.engine_from_state(hail_state(global_seed, seed, message))
    eng = eng.replace(block=tuple(w.Pair(jnp.uint32(x >> 32), jnp.uint32(x & ro.MASK32))
                                  for x in block_words),
                      block_index=jnp.uint32(block_index), used_ints=jnp.int32(0))
    return eng, oracle_engine


@pytest.mark.parametrize("block_words", [
    (0, 0, 0x8000_0000_0000_0000, 0x1234_5678_9ABC_DEF0),   # two zero words, then 63 zeros
    (1 << 12, 0xFFFF_FFFF_FFFF_FFFF, 3, 0),                 # 12 trailing zeros: next word
    (1 << 11, 0, 0, 0),                                     # 11: this word; zeros after it
    (0, 0, 0, 0),                                           # a whole zero block, then T_1
])
def test_next_double_rare_paths(block_words):
    ops = [DOUBLE, DOUBLE, INT, DOUBLE] + [LONG] * (SEQUENCE_LENGTH - 4)
    with jax.enable_x64(True):
        eng, oracle_engine = crafted_engine(block_words)
        draws = run_jitted(eng, jnp.asarray(ops, jnp.int32))
        assert_matches_oracle(ops, draws, oracle_sequence(oracle_engine, ops), x64=True)


# Slow run: the jdistlib samplers run the engine in fori_loops and while_loops, against Hail's
# values by default (tests/hail/test_hail_distributions.py, test_jax_matches_hail_records).
@pytest.mark.slow
def test_engine_in_fori_loop_and_while_loop():
    """A fori_loop summing nextDouble and a while_loop drawing until nextInt is odd."""
    with jax.enable_x64(True):
        state = hail_state(2, 3, [4])

        @jax.jit
        def sum_and_count(state):
            eng = engine.engine_from_state(state)
            eng, total = lax.fori_loop(
                0, 10, lambda _, carry: (lambda eng, d: (eng, carry[1] + d))(
                    *engine.next_double(carry[0])), (eng, jnp.float64(0)))

            def draw(carry):
                eng, _, count = carry
                eng, x = engine.next_int(eng)
                return eng, x, count + 1

            _, x, count = lax.while_loop(lambda c: c[1] % 2 == 0, draw,
                                         (eng, jnp.uint32(0), jnp.int32(0)))
            return total, x, count

        total, x, count = sum_and_count(state)
        oracle_engine = ro.HailEngine(*ro.hail_state(2, 3, [4]))
        expected_total = 0.0
        for _ in range(10):
            expected_total += oracle_engine.next_double()
        expected_count, expected_x = 0, 0
        while expected_x % 2 == 0:
            expected_x, expected_count = oracle_engine.next_int(), expected_count + 1
        assert (float(total), int(x), int(count)) == (expected_total, expected_x,
                                                       expected_count)


def test_engine_is_a_pytree_of_arrays():
    eng = engine.engine_from_state(hail_state(0, 0, []))
    leaves, tree = jax.tree_util.tree_flatten(eng)
    assert all(isinstance(leaf, jax.Array) for leaf in leaves)
    rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
    final_tweak, _ = engine.state_hash(hail_state(0, 0, []))
    assert (int(rebuilt.final_tweak.hi) << 32 | int(rebuilt.final_tweak.lo)) == final_tweak
    assert int(eng.used_ints) == engine.INTS_PER_BLOCK   # empty: the first draw computes T_0
