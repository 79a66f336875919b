"""jaxpmac keys in neural-network frameworks: Flax NNX, Equinox, and a plain training step.

The frameworks only ever call ``jax.random``; with a key from ``jaxpmac.as_jax_key`` their masks
and noise are drawn from jaxpmac messages, so ``fold_in(key, i)`` inside a framework is
``state.split(i)`` outside it.
"""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp

RATE = 0.5
X = jnp.arange(1.0, 65.0).reshape(8, 8)


def dropout_reference(state, x, rate=RATE):
    """Inverted dropout with ``jax.random.bernoulli`` on ``state``'s key: what both frameworks
    compute."""
    keep = jax.random.bernoulli(jp.as_jax_key(state), 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


class FlaxNNXTest(chex.TestCase):

    def setUp(self):
        super().setUp()
        self.nnx = pytest.importorskip("flax.nnx")

    def test_rngs_stream_of_a_jaxpmac_key_is_the_state_split_by_count(self):
        nnx = self.nnx
        state = jp.key(0).split_static("flax", "dropout")
        rngs = nnx.Rngs(dropout=jp.as_jax_key(state), noise=jp.as_jax_key(state.split(99)))
        self.assertEqual(jax.random.key_impl(rngs.dropout.key[...]), "pmac")
        dropout = nnx.Dropout(RATE)
        first = dropout(X, deterministic=False, rngs=rngs)
        second = dropout(X, deterministic=False, rngs=rngs)
        # NNX draws call c with fold_in(key, c): jaxpmac's state.split(c).
        np.testing.assert_array_equal(first, dropout_reference(state.split(0), X))
        np.testing.assert_array_equal(second, dropout_reference(state.split(1), X))
        noise = jax.random.normal(rngs.noise(), (4,))
        np.testing.assert_array_equal(
            noise, jax.random.normal(jp.as_jax_key(state.split(99).split(0)), (4,)))

    def test_model_with_dropout_under_nnx_jit(self):
        nnx = self.nnx
        state = jp.key(1).split_static("flax-model")

        class Model(nnx.Module):
            def __init__(self, rngs):
                self.linear = nnx.Linear(8, 4, rngs=rngs)
                self.dropout = nnx.Dropout(RATE, rngs=rngs)

            def __call__(self, x):
                return self.dropout(self.linear(x))

        def build():
            return Model(nnx.Rngs(params=jp.as_jax_key(state.split(0)),
                                  dropout=jp.as_jax_key(state.split(1))))

        @nnx.jit
        def forward(model, x):
            return model(x)

        a, b = build(), build()
        out_a, out_b = forward(a, X), forward(b, X)
        np.testing.assert_array_equal(out_a, out_b)  # same message, same params and masks
        zero_fraction = float(jnp.mean(out_a == 0.0))
        self.assertTrue(0.2 < zero_fraction < 0.8, zero_fraction)
        self.assertFalse(np.array_equal(forward(a, X), out_a))  # the stream advanced


class EquinoxTest(chex.TestCase):

    def setUp(self):
        super().setUp()
        self.eqx = pytest.importorskip("equinox")

    def test_dropout_with_a_jaxpmac_key(self):
        eqx = self.eqx
        state = jp.key(2).split_static("equinox")
        dropout = eqx.nn.Dropout(RATE)
        out = eqx.filter_jit(lambda x, k: dropout(x, key=k))(X, jp.as_jax_key(state))
        np.testing.assert_array_equal(out, dropout_reference(state, X))

    def test_per_example_dropout_under_vmap(self):
        eqx = self.eqx
        state = jp.key(3).split_static("equinox-batch")
        dropout = eqx.nn.Dropout(RATE)
        keys = jax.vmap(lambda i: jp.as_jax_key(state.split(i)))(jnp.arange(X.shape[0]))
        out = jax.jit(jax.vmap(lambda x, k: dropout(x, key=k)))(X, keys)
        expected = jnp.stack([dropout_reference(state.split(i), X[i]) for i in range(X.shape[0])])
        np.testing.assert_array_equal(out, expected)


class TrainingStepTest(chex.TestCase):

    def test_per_example_noise_under_vmap_and_grad(self):
        state = jp.key(4).split_static("train")
        w_true = jnp.array([1.0, -2.0, 0.5])
        xs = jnp.asarray(np.random.default_rng(0).normal(size=(16, 3)), jnp.float32)
        ys = xs @ w_true

        def loss(params, key, xs, ys, example_ids):
            def one(x, y, i):
                # Per-example input noise keyed by the example's uid: the same example gets the
                # same noise however the batch is cut, ordered or sharded.
                noise = 0.01 * jax.random.normal(jax.random.fold_in(key, i), x.shape)
                return (jnp.dot(x + noise, params) - y) ** 2
            return jnp.mean(jax.vmap(one)(xs, ys, example_ids))

        @jax.jit
        def step(params, key, xs, ys, example_ids):
            return params - 0.3 * jax.grad(loss)(params, key, xs, ys, example_ids)

        ids = jnp.arange(16, dtype=jnp.uint32)
        params = jnp.zeros(3)
        for epoch in range(60):
            params = step(params, jp.as_jax_key(state.split(epoch)), xs, ys, ids)
        np.testing.assert_allclose(params, w_true, atol=0.05)

        # Noise of one example does not depend on the batch it sits in.
        key = jp.as_jax_key(state.split(0))
        grad_full = jax.grad(loss)(params, key, xs, ys, ids)
        halves = [jax.grad(loss)(params, key, xs[s], ys[s], ids[s])
                  for s in (slice(0, 8), slice(8, 16))]
        np.testing.assert_allclose(grad_full, (halves[0] + halves[1]) / 2, rtol=1e-5, atol=1e-6)

        # The noise is jaxpmac's: example i of epoch e draws from state.split(e, i).
        noise_3 = jax.random.normal(jax.random.fold_in(key, 3), (3,))
        np.testing.assert_array_equal(noise_3,
                                      jax.random.normal(jp.as_jax_key(state.split(0, 3)), (3,)))
