"""orbax checkpoints of pytrees that hold ``RNGState``s, with and without a restore target.

A state's leaves are its words as ``uint32`` pairs; static words are 0-d arrays (orbax takes
arrays, not numpy scalars, as the leaves of a target). Restoring with a target (the tree itself
or ``jax.eval_shape`` of it) gives the states back; without one, orbax gives every custom pytree
node back as dicts and lists of its leaves, and the tree's structure rebuilds the states. Either
way a restored state draws what the original draws.
"""

import pathlib
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp

ocp = pytest.importorskip(
    "orbax.checkpoint", reason="orbax-checkpoint is not installed (it is in the [test] extras)")


def is_state(x):
    return isinstance(x, jp.RNGState)


def states_of(tree):
    return [x for x in jax.tree.leaves(tree, is_leaf=is_state) if is_state(x)]


def draws(tree):
    """What every state of ``tree`` draws, and every ``key<pmac>``'s bits."""
    out = [np.asarray(jp.normal(s, (5,))) for s in states_of(tree)]
    out += [np.asarray(jax.random.bits(k, (5,))) for k in jax.tree.leaves(tree)
            if jax.dtypes.issubdtype(getattr(k, "dtype", np.float32), jax.dtypes.prng_key)]
    return out


def make_tree():
    root = jp.key(3)
    batched = jax.vmap(lambda i: root.split(i, 9))(jnp.arange(4))      # words with a batch axis
    from_jit = jax.jit(lambda seed: jp.key(seed).split(7, 8, 9, 10, 11))(jnp.uint32(5))
    return {
        "rng": [root, root.split(1, 2), root.split_static("dropout", 3).split(4)],
        "step": (from_jit, batched),
        "key": jp.as_jax_key(root.split(6)),
        "params": {"w": jnp.arange(6.0).reshape(2, 3)},
    }


def checkpointers():
    yield ocp.StandardCheckpointer()
    yield ocp.PyTreeCheckpointer()


def round_trip(checkpointer, tree, target=None):
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "checkpoint"
        checkpointer.save(path, tree)
        if hasattr(checkpointer, "wait_until_finished"):
            checkpointer.wait_until_finished()
        return checkpointer.restore(path) if target is None else checkpointer.restore(path, target)


def assert_same_draws(restored, original):
    expected = draws(original)
    got = draws(restored)
    assert len(got) == len(expected) == 6
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("checkpointer", list(checkpointers()), ids=lambda c: type(c).__name__)
@pytest.mark.parametrize("target", ["tree", "abstract"])
def test_restore_with_a_target_gives_states_that_draw_the_same(checkpointer, target):
    tree = make_tree()
    like = tree if target == "tree" else jax.eval_shape(lambda: tree)
    restored = round_trip(checkpointer, tree, like)
    assert jax.tree.structure(restored) == jax.tree.structure(tree)
    assert all(is_state(s) for s in restored["rng"])
    assert restored["rng"][1] == tree["rng"][1]             # the same message, static again
    assert_same_draws(restored, tree)


@pytest.mark.parametrize("checkpointer", list(checkpointers()), ids=lambda c: type(c).__name__)
def test_restore_without_a_target_gives_the_words_and_the_structure_rebuilds_states(checkpointer):
    tree = make_tree()
    restored = round_trip(checkpointer, tree)
    # Like every custom pytree node, a state comes back as its leaves (one {hi, lo} per word);
    # a key<pmac> comes back a key<pmac>.
    assert restored["rng"][1] == [{"hi": 0, "lo": 3}, {"hi": 0, "lo": 1}, {"hi": 0, "lo": 2}]
    assert jax.random.key_impl(restored["key"]) == "pmac"
    rebuilt = jax.tree.unflatten(jax.tree.structure(tree), jax.tree.leaves(restored))
    assert rebuilt["rng"][2] == tree["rng"][2]
    assert_same_draws(rebuilt, tree)


def test_a_state_rebuilds_from_the_python_ints_older_checkpoints_hold():
    # Before static words were 0-d arrays they were numpy scalars, which orbax reads back as
    # Python ints: those leaves give the same state.
    state = jp.key(2**40 + 7).split(2**63, 5)
    leaves, structure = jax.tree.flatten(state)
    assert all(isinstance(x, np.ndarray) and x.shape == () and x.dtype == np.uint32
               for x in leaves)
    assert jax.tree.unflatten(structure, [int(x) for x in leaves]) == state
