"""``jp.rand.keyed_by(uid)`` (issue 32, point 5): implicit per-example noise keyed by the
user's ids, the same however the batch is cut, ordered or mapped."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp

ROOT = jp.key(20261126).split_static("keyed by")
IDS = jnp.arange(10, 18)
XS = jnp.linspace(0.0, 1.0, 8)


def _noisy(example_id, x):
    with jp.rand.keyed_by(example_id):
        return x + jp.rand.normal((2,), name="noise")


def _vmapped(ids, xs):
    return jax.vmap(_noisy)(ids, xs[:, None] * jnp.ones(2))


def _assert_same(got, want):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_an_examples_noise_is_its_ids_whatever_the_batch(jit):
    model = jp.randomized(_vmapped)
    run = jax.jit(model) if jit else model
    full = run(ROOT, IDS, XS)
    perm = jnp.array([5, 2, 7])
    _assert_same(run(ROOT, IDS[perm], XS[perm]), full[perm])
    _assert_same(run(ROOT, IDS[::-1], XS[::-1]), full[::-1])
    # Each example is the explicit draw of its id.
    (site,) = jp.draw_sites(_vmapped, IDS, XS)
    assert site.uid_names == ("keyed_by uid",)
    for k in range(8):
        _assert_same(full[k], XS[k] + jp.normal(site.state(ROOT).split(IDS[k]), (2,)))


@pytest.mark.parametrize("mapping", ["map_batch_3", "map", "scan"])
def test_mapped_or_looped_over_examples_the_same_noise(mapping):
    def mapped(ids, xs):
        pairs = (ids, xs[:, None] * jnp.ones(2))
        if mapping == "map_batch_3":        # batches of 3 under a scan, and a remainder of 2
            return jax.lax.map(lambda p: _noisy(*p), pairs, batch_size=3)
        if mapping == "map":
            return jax.lax.map(lambda p: _noisy(*p), pairs)
        return jax.lax.scan(lambda c, p: (c, _noisy(*p)), None, pairs)[1]
    _assert_same(jp.randomized(mapped)(ROOT, IDS, XS), jp.randomized(_vmapped)(ROOT, IDS, XS))


def test_lanes_and_loops_the_uid_does_not_vary_over_are_kept():
    def replicas_and_steps(ids):
        def example(i):
            with jp.rand.keyed_by(i):
                # Steps inside the block: the uid does not vary with them, so each step differs.
                return jax.lax.scan(lambda c, t: (c, jp.rand.uniform(())), None,
                                    jnp.arange(3))[1]
        # Replicas outside: the uid does not vary over them either, so each replica differs.
        return jax.vmap(lambda r: jax.vmap(example)(ids))(jnp.arange(2))
    out = np.asarray(jp.randomized(replicas_and_steps)(ROOT, IDS))
    assert out.shape == (2, 8, 3)
    assert len(np.unique(out)) == out.size
    (site,) = jp.draw_sites(replicas_and_steps, IDS)
    assert site.uid_names[0] == "keyed_by uid" and site.uid_names[1] == "vmap lane 0"
    assert site.uid_names[2].startswith("scan iteration")
    _assert_same(out[1, 4, 2], jp.uniform(site.state(ROOT).split(IDS[4], 1, 2), ()))


def test_outside_randomized_or_with_a_float_uid_is_an_error():
    with pytest.raises(RuntimeError, match="keyed_by works only inside a function transformed"):
        with jp.rand.keyed_by(3):
            pass
    with pytest.raises(TypeError, match="keyed_by uid accepts an int or an integer scalar"):
        jp.randomized(lambda: _noisy(1.5, 0.0))(ROOT)
