"""jaxpmac keys inside ``jax.random``: ``prng_impl``, ``as_jax_key``, ``fold_in_uids``.

The contracts: a key draws its state's stream, ``fold_in`` appends a dynamic word, ``split(k,
n)[i]`` is ``fold_in(k, i)``, ``jax.random.key(seed, impl=prng_impl)`` is ``as_jax_key(key(
seed))`` -- under jit, vmap, scan and grad of the surrounding code.
"""

import pathlib
import subprocess
import sys
import tempfile

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized

import jaxpmac as jp

SHAPE = (9,)  # 36 bytes: more than one 256-bit output block, not a whole number of them

# Uid sequences crossing the block boundaries of SPEC section 2 (4 words a block): the empty
# message, a partly filled block, a full last block (final tweak -2), and the fifth and ninth
# words, which encrypt a full block.
UID_CASES = [(n, tuple(range(11, 11 + 7 * n, 7))) for n in (0, 3, 4, 5, 9)]


def native_bits(state, shape=SHAPE, dtype=jnp.uint32):
    return np.asarray(jp.bits(state, shape, dtype))


def key_bits(key, shape=SHAPE, dtype=jnp.uint32):
    return jax.random.bits(key, shape, dtype)


class InteropContractTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(*UID_CASES)
    def test_keys_draw_the_state_stream(self, n, uids):
        del n
        state = jp.key(42).split_static("interop").split(1, 2)  # words before the key is made

        def draw(uid_array):
            by_state = key_bits(jp.as_jax_key(state.split(uid_array)))
            k = jp.as_jax_key(state)
            for i in range(len(uids)):
                k = jax.random.fold_in(k, uid_array[i])
            return by_state, key_bits(k)

        by_state, by_fold_in = self.variant(draw)(jnp.asarray(uids, jnp.uint32))
        expected = native_bits(state.split(*uids))
        np.testing.assert_array_equal(by_state, expected)
        np.testing.assert_array_equal(by_fold_in, expected)

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(0, 4)
    def test_split_child_i_is_fold_in_i(self, n_words):
        state = jp.key(5).split(*range(n_words))

        def children(s):
            k = jp.as_jax_key(s)
            return jax.vmap(key_bits)(jax.random.split(k, (2, 3)).reshape(-1))

        expected = np.stack([native_bits(state.split(i)) for i in range(6)])
        # Row-major flat index, so split(k, (2, 3)).reshape(-1) is split(k, 6).
        np.testing.assert_array_equal(self.variant(children)(state), expected)
        np.testing.assert_array_equal(key_bits(jax.random.split(jp.as_jax_key(state), 3)[2]),
                                      expected[2])

    @chex.variants(with_jit=True, without_jit=True)
    def test_jax_random_key_is_as_jax_key_of_key(self):
        draw = self.variant(lambda seed: key_bits(jax.random.key(seed, impl=jp.prng_impl)))
        for seed in (0, 42, -1, 2**31 - 1):  # int32 seeds sign-extend, as in jaxpmac.key
            np.testing.assert_array_equal(draw(jnp.int32(seed)), native_bits(jp.key(seed)))
        np.testing.assert_array_equal(key_bits(jax.random.key(7, impl=jp.prng_impl)),
                                      native_bits(jp.key(7)))

    @chex.variants(with_jit=True, without_jit=True)
    def test_narrow_widths_are_the_narrow_streams(self):
        state = jp.key(9).split(4)
        draw = self.variant(lambda s: (key_bits(jp.as_jax_key(s), (40,), jnp.uint8),
                                       key_bits(jp.as_jax_key(s), (20,), jnp.uint16)))
        u8, u16 = draw(state)
        np.testing.assert_array_equal(u8, native_bits(state, (40,), jnp.uint8))
        np.testing.assert_array_equal(u16, native_bits(state, (20,), jnp.uint16))

    @chex.variants(with_jit=True, without_jit=True)
    def test_fold_in_uids_carries_64_bit_and_negative_uids(self):
        state = jp.key(1).split_static("wide")
        uids = (2**40 + 3, 2**64 - 5, 17, 2**32, 6)  # six words with the -1: crosses a block

        def draw(k):
            k = jp.fold_in_uids(k, jnp.int32(-1))  # sign-extends, as split does
            return key_bits(jp.fold_in_uids(k, *uids))

        np.testing.assert_array_equal(self.variant(draw)(jp.as_jax_key(state)),
                                      native_bits(state.split(-1, *uids)))


class InteropTransformTest(chex.TestCase):

    def test_vmap_over_uids_and_over_keys(self):
        state = jp.key(11)
        uids = jnp.arange(6, dtype=jnp.uint32)
        expected = np.stack([native_bits(state.split(i)) for i in range(6)])
        by_fold_in = jax.jit(jax.vmap(
            lambda i: key_bits(jax.random.fold_in(jp.as_jax_key(state), i))))(uids)
        by_state = jax.vmap(lambda i: key_bits(jp.as_jax_key(state.split(i))))(uids)
        keys = jax.vmap(lambda i: jp.as_jax_key(state.split(i)))(uids)
        by_key_array = jax.vmap(key_bits)(keys)
        for got in (by_fold_in, by_state, by_key_array):
            np.testing.assert_array_equal(got, expected)

    def test_fold_in_chain_under_scan(self):
        state = jp.key(2).split_static("scan")

        def step(k, i):
            k = jax.random.fold_in(k, i)
            return k, key_bits(k)

        _, draws = jax.jit(lambda k: jax.lax.scan(step, k, jnp.arange(6, dtype=jnp.uint32)))(
            jp.as_jax_key(state))
        expected = [native_bits(state.split(*range(t + 1))) for t in range(6)]
        np.testing.assert_array_equal(draws, np.stack(expected))

    def test_grad_through_code_that_draws(self):
        state = jp.key(0).split_static("grad")
        noise = jax.random.normal(jp.as_jax_key(state), (16,))

        def loss(scale, k):
            return jnp.sum((scale * jax.random.normal(k, (16,))) ** 2)

        grad = jax.jit(jax.grad(loss))(2.0, jp.as_jax_key(state))
        np.testing.assert_allclose(grad, 2 * 2.0 * jnp.sum(noise**2), rtol=1e-5)

    def test_samplers_accept_the_keys(self):
        k = jp.as_jax_key(jp.key(123))
        u, n, ints = jax.jit(lambda k: (jax.random.uniform(k, (4096,)),
                                        jax.random.normal(jax.random.fold_in(k, 1), (4096,)),
                                        jax.random.randint(jax.random.fold_in(k, 2), (4096,),
                                                           0, 10)))(k)
        self.assertTrue(0.48 < float(u.mean()) < 0.52)
        self.assertTrue(abs(float(n.mean())) < 0.05 and 0.95 < float(n.std()) < 1.05)
        self.assertEqual(set(np.unique(ints).tolist()), set(range(10)))

    def test_key_data_round_trips(self):
        k = jp.as_jax_key(jp.key(4).split(1, 2, 3, 4, 5))
        again = jax.random.wrap_key_data(jax.random.key_data(k), impl=jp.prng_impl)
        np.testing.assert_array_equal(key_bits(again), key_bits(k))
        self.assertEqual(jax.random.key_data(k).shape, (19,))


class Uint32FoldInCaveatTest(chex.TestCase):
    """``jax.random.fold_in`` casts its data to uint32 before the impl sees it."""

    def test_jax_fold_in_wraps_concrete_int64_and_negative_values(self):
        k = jp.as_jax_key(jp.key(0))
        wrapped = key_bits(jax.random.fold_in(k, np.int64(2**40 + 5)))
        np.testing.assert_array_equal(wrapped, native_bits(jp.key(0).split(5)))
        negative = key_bits(jax.random.fold_in(k, np.int32(-1)))
        np.testing.assert_array_equal(negative, native_bits(jp.key(0).split(2**32 - 1)))
        self.assertFalse(np.array_equal(negative, native_bits(jp.key(0).split(-1))))

    def test_jax_fold_in_rejects_python_ints_outside_uint32(self):
        with pytest.raises(OverflowError):
            jax.random.fold_in(jp.as_jax_key(jp.key(0)), 2**40)

    def test_fold_in_uids_keeps_the_high_bits(self):
        k = jp.as_jax_key(jp.key(0))
        got = key_bits(jp.fold_in_uids(k, np.int64(2**40 + 5)))
        np.testing.assert_array_equal(got, native_bits(jp.key(0).split(2**40 + 5)))

    def test_fold_in_uids_with_x64_traced_int64(self):
        with jax.enable_x64(True):
            k = jp.as_jax_key(jp.key(0))
            uid = jnp.asarray(2**40 + 5, jnp.int64)
            got = jax.jit(lambda k, u: key_bits(jp.fold_in_uids(k, u)))(k, uid)
            np.testing.assert_array_equal(got, native_bits(jp.key(0).split(2**40 + 5)))
            # The native uint64 stream agrees with the key path too.
            u64 = jax.random.bits(k, (4,), jnp.uint64)
            np.testing.assert_array_equal(u64, np.asarray(jp.bits(jp.key(0), (4,), jnp.uint64)))


class InteropErrorsTest(chex.TestCase):

    def test_as_jax_key_rejects_non_states(self):
        with pytest.raises(TypeError, match="as_jax_key accepts a jaxpmac RNGState"):
            jp.as_jax_key(jax.random.key(0))

    def test_fold_in_uids_rejects_other_keys(self):
        with pytest.raises(TypeError,
                           match="fold_in_uids key accepts .* but was given a jax.random key of impl"):
            jp.fold_in_uids(jax.random.key(0), 1)
        with pytest.raises(TypeError, match="fold_in_uids key accepts .* but was given array"):
            jp.fold_in_uids(np.zeros((19,), np.uint32), 1)

    def test_fold_in_uids_rejects_bad_uids(self):
        k = jp.as_jax_key(jp.key(0))
        with pytest.raises(TypeError, match="fold_in_uids argument 0 accepts"):
            jp.fold_in_uids(k, 1.5)
        with pytest.raises(ValueError, match="fold_in_uids argument 1 must be"):
            jp.fold_in_uids(k, 0, 2**64)


class SerializationTest(chex.TestCase):
    """Keys and states leave the process and come back drawing the same values."""

    def test_pickle_round_trips_keys_and_states(self):
        import pickle

        key = jax.random.key(3, impl=jp.prng_impl)
        keys = jax.random.split(key, 4)
        state = jp.key(3).split_static("a").split(1, 2, 3, 4, 5)
        for original in (key, keys):
            back = pickle.loads(pickle.dumps(original))
            self.assertEqual(jax.random.key_impl(back), "pmac")
            draw = jax.vmap(lambda k: jax.random.bits(k, (5,)))
            np.testing.assert_array_equal(draw(back.reshape(-1)), draw(original.reshape(-1)))
        back = pickle.loads(pickle.dumps(state))
        np.testing.assert_array_equal(jp.bits(back, (5,)), jp.bits(state, (5,)))

    def test_nnx_rngs_pickle_and_flax_serialization_round_trip(self):
        import pickle

        import flax.serialization
        from flax import nnx

        rngs = nnx.Rngs(jax.random.key(0, impl=jp.prng_impl))
        rngs.normal((2,))
        copy = pickle.loads(pickle.dumps(rngs))
        np.testing.assert_array_equal(copy.normal((3,)), rngs.normal((3,)))
        # flax.serialization stores plain arrays (typed keys of any impl are refused), so the
        # key goes through key_data and comes back with wrap_key_data(..., impl=prng_impl).
        pure = nnx.state(rngs).to_pure_dict()
        data = flax.serialization.msgpack_serialize(
            jax.tree.map(lambda x: jax.random.key_data(x)
                         if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x, pure))
        restored = jax.tree.map(jnp.asarray, flax.serialization.msgpack_restore(data))
        restored["default"]["key"] = jax.random.wrap_key_data(
            restored["default"]["key"], impl=jp.prng_impl)
        fresh = nnx.Rngs(0)
        nnx.update(fresh, restored)
        np.testing.assert_array_equal(fresh.normal((3,)), rngs.normal((3,)))

    def test_orbax_round_trip_of_a_models_rngs(self):
        # Orbax stores a typed key's data with its implementation's name and restores it by
        # that name, so the restored model's dropout draws exactly what the original's would.
        import orbax.checkpoint as ocp
        from flax import nnx

        class Model(nnx.Module):
            def __init__(self, rngs):
                self.linear = nnx.Linear(3, 4, rngs=rngs)
                self.dropout = nnx.Dropout(0.5, rngs=rngs)

            def __call__(self, x):
                return self.dropout(self.linear(x))

        model = Model(nnx.Rngs(jax.random.key(0, impl=jp.prng_impl)))
        x = jnp.ones((2, 3))
        model(x)                                   # advance the dropout stream before saving
        checkpointer = ocp.StandardCheckpointer()
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "checkpoint"
            checkpointer.save(path, nnx.state(model))
            checkpointer.wait_until_finished()
            abstract = nnx.eval_shape(
                lambda: Model(nnx.Rngs(jax.random.key(1, impl=jp.prng_impl))))
            restored_state = checkpointer.restore(path, nnx.state(abstract))
        restored = nnx.merge(nnx.graphdef(abstract), restored_state)
        np.testing.assert_array_equal(restored(x), model(x))
        np.testing.assert_array_equal(restored(x), model(x))

    def test_the_impl_is_found_by_its_name(self):
        # As for JAX's own implementations, key_impl gives the registered name.
        by_name = jax.random.key(7, impl="pmac")
        self.assertEqual(jax.random.key_impl(by_name), "pmac")
        self.assertEqual(jax.random.key_impl(jax.random.key(7, impl=jp.prng_impl)), "pmac")
        self.assertEqual(by_name.dtype, jax.random.key(7, impl=jp.prng_impl).dtype)
        data = jax.random.key_data(jp.as_jax_key(jp.key(7).split(3)))
        np.testing.assert_array_equal(
            jax.random.bits(jax.random.wrap_key_data(data, impl="pmac"), (4,)),
            jp.bits(jp.key(7).split(3), (4,)))

    def test_export_serializes_state_arguments(self):
        from jax import export

        draw = jax.jit(lambda s: jp.normal(s, (3,)))
        state = jp.key(5).split_static("x").split(1, 2, 3, 4, 5)
        other = jp.key(6).split_static("x").split(1, 2, 3, 4, 9)
        exported = export.deserialize(export.export(draw)(state).serialize())
        for s in (state, other):
            np.testing.assert_array_equal(exported.call(s), draw(s))

    def test_export_serializes_typed_key_arguments_and_results(self):
        from jax import export

        def draw(key):
            return jax.random.normal(key, (3,)), jax.random.split(key)

        key = jax.random.key(5, impl=jp.prng_impl)
        exported = export.deserialize(export.export(jax.jit(draw))(key).serialize())
        assert str(exported.in_avals[0].dtype) == "key<pmac>"
        for seed in (5, 6):
            k = jax.random.key(seed, impl="pmac")
            normal, children = exported.call(k)
            expected_normal, expected_children = draw(k)
            np.testing.assert_array_equal(normal, expected_normal)
            assert children.dtype == k.dtype
            np.testing.assert_array_equal(jax.random.key_data(children),
                                          jax.random.key_data(expected_children))

    def test_exported_key_function_deserializes_in_another_process(self):
        # The dtype's number in the serialized form is what a fresh process (one that imports
        # jaxpmac) reads back as a jaxpmac key.
        from jax import export

        key = jax.random.key(5, impl=jp.prng_impl)
        draw = jax.jit(jax.vmap(lambda k: jax.random.bits(k, (4,))))
        keys = jax.random.split(key, 3)
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        tmp_path = pathlib.Path(folder.name)
        (tmp_path / "draw.bin").write_bytes(export.export(draw)(keys).serialize())
        script = (
            "import sys, jax, numpy as np, jaxpmac\n"
            "from jax import export\n"
            f"exported = export.deserialize(open({str(tmp_path / 'draw.bin')!r}, 'rb').read())\n"
            "keys = jax.random.split(jax.random.key(5, impl='pmac'), 3)\n"
            "np.save(sys.argv[1], np.asarray(exported.call(keys)))\n")
        subprocess.run([sys.executable, "-c", script, str(tmp_path / "bits.npy")], check=True)
        np.testing.assert_array_equal(np.load(tmp_path / "bits.npy"), draw(keys))

    def test_export_registration_never_takes_a_number_jax_uses(self):
        from jax import export
        from jaxpmac._interop import _jax_internals

        fry = jax.random.key(0, impl="threefry2x32")
        pmac = jax.random.key(0, impl=jp.prng_impl)
        fry_kind = 27    # key<fry> in jax.export's format
        self.assertFalse(_jax_internals.register_export_dtype(pmac.dtype, kind=fry_kind))
        self.assertTrue(_jax_internals.register_export_dtype(pmac.dtype))   # again: no change
        for key in (fry, pmac):
            f = jax.jit(lambda k: jax.random.bits(k, (2,)))
            exported = export.deserialize(export.export(f)(key).serialize())
            self.assertEqual(exported.in_avals[0].dtype, key.dtype)

    def test_a_typed_key_also_crosses_as_key_data(self):
        # For formats that store plain arrays only (flax.serialization's msgpack).
        from jax import export

        draw = jax.jit(lambda data: jax.random.normal(
            jax.random.wrap_key_data(data, impl=jp.prng_impl), (3,)))
        key = jax.random.key(5, impl=jp.prng_impl)
        exported = export.deserialize(
            export.export(draw)(jax.random.key_data(key)).serialize())
        np.testing.assert_array_equal(exported.call(jax.random.key_data(key)),
                                      jax.random.normal(key, (3,)))
