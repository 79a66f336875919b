"""Invariance: the same message gives the same bits under jit, vmap, scan, cond, checkpoint, and
whatever form (int, scalar, vector, traced) its words arrive in. Each test runs with and without
an outer ``jit`` (chex variants)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxpmac as jp
from conftest import assert_equal_arrays, for_each_lowering, oracle_bits


SEED, LABELS = 2024, ["invariance"]
ROOT = jp.key(SEED).split_static(*LABELS)
N = 8


def _loop(make_state, indices):
    """The reference: one concrete draw per index, in a Python loop."""
    return np.stack([np.asarray(jp.bits(make_state(int(i)), (N,))) for i in indices])


# The TPU's lowering stands for the accelerators' by default (every lowering in the slow run).
@for_each_lowering(keep=("elementwise_pairs",))
class InvarianceTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    def test_vmap_over_uids_and_states(self):
        uids = jnp.arange(5, dtype=jnp.int32)
        expected = _loop(lambda i: ROOT.split(i, 7), range(5))
        assert_equal_arrays(expected[3], oracle_bits(SEED, LABELS, [3, 7], N, jnp.uint32))

        over_uids = self.variant(jax.vmap(lambda i: jp.bits(ROOT.split(i, 7), (N,))))
        assert_equal_arrays(over_uids(uids), expected)

        # A batched state (traced leaves with a batch axis) vmapped with in_axes=0.
        states = jax.vmap(lambda i: ROOT.split(i))(uids)
        over_states = self.variant(jax.vmap(lambda s: jp.bits(s.split(7), (N,)), in_axes=0))
        assert_equal_arrays(over_states(states), expected)

    @chex.variants(with_jit=True, without_jit=True)
    def test_scan_cond_checkpoint(self):
        indices = jnp.arange(4, dtype=jnp.uint32)
        expected = _loop(lambda i: ROOT.split(i), range(4))

        def body(carry, i):
            return carry, jp.bits(ROOT.split(i), (N,))
        scanned = self.variant(lambda xs: lax.scan(body, 0, xs)[1])
        assert_equal_arrays(scanned(indices), expected)

        # A state with traced leaves as the scan carry (a traced seed), split inside the body.
        def carry_body(state, i):
            return state, jp.bits(state.split_static(*LABELS).split(i), (N,))
        carried = self.variant(lambda seed, xs: lax.scan(carry_body, jp.key(seed), xs)[1])
        assert_equal_arrays(carried(jnp.uint32(SEED), indices), expected)

        def chosen(pred, i):
            state = lax.cond(pred, lambda j: ROOT.split(j), lambda j: ROOT.split(j + 1), i)
            return jp.bits(state, (N,))
        chosen = self.variant(chosen)
        assert_equal_arrays(chosen(True, jnp.uint32(2)), expected[2])
        assert_equal_arrays(chosen(False, jnp.uint32(2)), expected[3])

        remat = self.variant(jax.checkpoint(lambda i: jp.bits(ROOT.split(i), (N,))))
        assert_equal_arrays(remat(jnp.uint32(1)), expected[1])
        remat_state = self.variant(jax.checkpoint(lambda s: jp.bits(s, (N,))))
        assert_equal_arrays(remat_state(ROOT.split(1)), expected[1])

    @chex.variants(with_jit=True, without_jit=True)
    def test_word_forms_agree(self):
        draw = self.variant(lambda *uids: jp.bits(ROOT.split(*uids), (N,)))
        minus_one = np.asarray(jp.bits(ROOT.split(-1), (N,)))
        assert_equal_arrays(minus_one, oracle_bits(SEED, LABELS, [2**64 - 1], N, jnp.uint32))
        for same in (jnp.int32(-1), np.int64(-1), jnp.int8(-1)):
            assert_equal_arrays(draw(same), minus_one)
        # Concrete only: with x64 off, JAX itself truncates a uint64 jit argument to uint32.
        for same in (2**64 - 1, np.uint64(2**64 - 1), np.int64(-1)):
            assert_equal_arrays(jp.bits(ROOT.split(same), (N,)), minus_one)

        three = np.asarray(jp.bits(ROOT.split(3), (N,)))
        assert_equal_arrays(draw(jnp.int32(3)), three)
        assert_equal_arrays(draw(jnp.uint32(3)), three)

        # split(a, b) == split(a).split(b); a 1-D uid array == its elements as separate uids.
        a, b = jnp.int32(5), jnp.uint32(6)
        two_step = self.variant(lambda a, b: jp.bits(ROOT.split(a).split(b), (N,)))
        expected = np.asarray(jp.bits(ROOT.split(5, 6), (N,)))
        assert_equal_arrays(draw(a, b), expected)
        assert_equal_arrays(two_step(a, b), expected)
        vector = jnp.array([5, 6, -1, 0, 9, 2**31 - 1], jnp.int32)
        elements = np.asarray(jp.bits(ROOT.split(5, 6, -1, 0, 9, 2**31 - 1), (N,)))
        assert_equal_arrays(draw(vector), elements)
        assert_equal_arrays(draw(vector[:2], vector[2:]), elements)

        split_with_traced_three = self.variant(lambda: jp.bits(ROOT.split(jnp.int32(3)), (N,)))
        assert_equal_arrays(split_with_traced_three(), three)

    @chex.variants(with_jit=True, without_jit=True)
    def test_state_through_jit_boundaries(self):
        expected = np.asarray(jp.bits(ROOT.split(1, 2, 3, 4, 5), (N,)))
        draw = self.variant(lambda state: jp.bits(state, (N,)))
        assert_equal_arrays(draw(ROOT.split(1, 2, 3, 4, 5)), expected)
        # A state built from traced words, returned from jit, then used as a jit argument.
        made = jax.jit(lambda i: ROOT.split(1, 2, i, 4).split(5))(jnp.uint32(3))
        assert jax.tree_util.tree_leaves(made)
        assert_equal_arrays(draw(made), expected)
        assert_equal_arrays(jp.bits(made, (N,)), expected)
        # A traced nonce gives the bits of the concrete one.
        from_seed = self.variant(lambda seed: jp.bits(
            jp.key(seed).split_static(*LABELS).split(1, 2, 3, 4, 5), (N,)))
        assert_equal_arrays(from_seed(jnp.uint32(SEED)), expected)


def test_a_state_crossing_jit_compiles_once_for_every_seed_and_uid():
    traces = []

    @jax.jit
    def draw(state):
        traces.append(state)
        return jp.normal(state, (3,))

    for seed in range(10):
        assert_equal_arrays(draw(jp.key(seed)), jp.normal(jp.key(seed), (3,)))
    for uid in range(10):
        # jnp.int32 and Python ints, past a full block of four words (its encrypted sum).
        state = ROOT.split(jnp.int32(uid), 1, 2, 3, uid)
        assert_equal_arrays(draw(state), jp.normal(state, (3,)))
    # One trace for the seeds, one for the longer messages: structure, never a value, is
    # what a state's pytree keeps out of its leaves.
    assert len(traces) == 2


def test_a_concrete_state_is_folded_where_it_is_concrete():
    state = jp.key(-7).split_static("a", 3).split(1, 2, 3, 4, 5, 6, 7, 8, 9, np.arange(4))
    assert state.is_static
    # Its leaves are its words, and concrete leaves give back the static state.
    rebuilt = jax.tree_util.tree_map(np.asarray, state)
    assert rebuilt.is_static
    assert_equal_arrays(jp.bits(rebuilt, (8,)), jp.bits(state, (8,)))
    # Closed over by a traced function, the hash is a compile-time constant: no inputs and no
    # cipher before the stream's own.
    closed = jax.make_jaxpr(lambda: jp.bits(state, (4,)))()
    passed = jax.make_jaxpr(lambda s: jp.bits(s, (4,)))(state)
    assert closed.in_avals == []
    assert len(passed.in_avals) == len(jax.tree_util.tree_leaves(state))
    assert len(str(closed)) < len(str(passed))


# Slow run: test_disable_jit draws every public function op by op (bits over several chunks and
# vmapped draws among them); these are the integer draws' loops once more.
@pytest.mark.slow
def test_integer_draws_under_disable_jit_equal_the_jitted_ones():
    # Under jax.disable_jit, fori_loop runs in Python with an int index: the CPU chunk loop
    # (more than one chunk of bits) and the vmapped lane loop must take it.
    state = jp.key(9).split_static("eager")
    draws = {
        "bits, several chunks": lambda: jp.bits(state, (9000,)),
        "vmapped bits": lambda: jax.vmap(lambda i: jp.bits(state.split(i), (5,)))(jnp.arange(4)),
        "vmapped randint": lambda: jax.vmap(
            lambda i: jp.randint(state.split(i), (3,), 0, 100))(jnp.arange(4)),
        "permutation": lambda: jp.permutation(state, 50),
        "poisson": lambda: jp.poisson(state, 30.0, (64,)),
        "rademacher, several words": lambda: jp.rademacher(state, (100,)),
        "geometric": lambda: jp.geometric(state, jnp.array([0.3, 1e-3, 0.9, 1.0]), (16, 4)),
        "multinomial": lambda: jp.multinomial(state, jnp.array([10.0, 500.0]),
                                              jnp.array([0.1, 0.2, 0.3, 0.4]), shape=(8, 2)),
    }
    for name, draw in draws.items():
        jitted = jax.jit(draw)()
        with jax.disable_jit():
            eager = draw()
        np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted), err_msg=name)


def test_concrete_states_compare_by_message():
    a = jp.key(0).split(1, 2, 3, 4, 5)
    assert a == jp.key(0).split(1).split(2, 3).split(4, 5)
    assert a == jp.key(0).split(1, 2, 3, 4, jnp.int32(5))
    assert jp.key(0).split(-1) == jp.key(0).split(2**64 - 1)
    assert a != jp.key(0).split(1, 2, 3, 4, 6)
    assert jp.key(0).split_static("a") != jp.key(0).split_static("b")
    assert len({a, jp.key(0).split(1, 2, 3, 4, 5), jp.key(1)}) == 2

    @jax.jit
    def compare(i):
        traced = jp.key(0).split(i)
        assert traced == traced and traced != jp.key(0).split(i)
        return jp.bits(traced, (1,))

    compare(3)
