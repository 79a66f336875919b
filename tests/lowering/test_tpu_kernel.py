"""The TPU's kernel for uint32 windows (``_lowering._tpu_kernel``): run here in Pallas'
interpret mode under ``force_lowering("elementwise_pairs")``, it gives the CPU's values, for
windows that are its output and for windows cut from it; lowered for ``tpu`` from this CPU, a
draw is one Mosaic call with no loop and no barrier, and a traced seed's message hash a second,
small one."""

from __future__ import annotations

import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from jaxpmac._lowering import _tpu_kernel

from conftest import param, slow_except

STATE = jp.key(20261126).split_static("tpu kernel")
# Shapes that are the kernel's output (lines of 128 lanes in whole steps of lines), shapes cut
# from a longer output (lines not in whole steps, a last axis that is not whole lanes, small
# draws), and shapes left to the elementwise lowering (fewer than MIN_ELEMENTS elements).
KERNEL_SHAPES = [(512, 128), (128, 1024), (2, 128, 256), (65536,)]
CUT_SHAPES = [(65536 + 128,), (1024, 100), (64, 1024), (64, 64), (16, 32), (1000,), (8, 8)]
ELEMENTWISE_SHAPES = [(7, 9), (_tpu_kernel.MIN_ELEMENTS - 1,)]
SAMPLERS = {"bits": jp.bits, "uniform": jp.uniform, "normal": jp.normal,
            "bernoulli": lambda s, shape: jp.bernoulli(s, 0.3, shape)}


def _case(*values, slow: bool):
    """A parameter set whose id names its shape as 512x128, in the slow run if ``slow``."""
    ids = ["x".join(map(str, v)) if isinstance(v, tuple) else str(v) for v in values]
    return param(*values, id="-".join(ids), slow=slow)


@pytest.mark.parametrize("shape", KERNEL_SHAPES + CUT_SHAPES + ELEMENTWISE_SHAPES)
def test_which_windows_the_kernel_computes(shape):
    assert _tpu_kernel.applies(shape, jnp.uint32, 0) == (shape not in ELEMENTWISE_SHAPES)


def test_only_uint32_windows_with_a_static_skip():
    assert not _tpu_kernel.applies((512, 128), jnp.uint16, 0)
    assert _tpu_kernel.applies((512, 128), jnp.uint32, 3)
    assert not _tpu_kernel.applies((512, 128), jnp.uint32, jnp.int32(0))


# By default one case: several grid steps into a 1-D caller's shape with x64 on (the same uint32
# kernel, other types around it). Every shape both ways in the slow run: the kernel's code is
# the same, only its grid differs; cuts from its output stay by default in
# test_small_and_cut_kernel_draws_equal_the_cpu_draws and at a later block in
# test_kernel_draws_at_later_blocks_and_across_a_32_bit_carry. One sampler a test (each
# interpret-mode kernel is a compile of seconds): bits by default, the kernel's words
# themselves; the other samplers map those words after the kernel (with x64 on, uniform's and
# normal's float64 draws do not use it): normal's map of them stays by default in
# test_small_and_cut_kernel_draws_equal_the_cpu_draws.
DEFAULT_KERNEL_CASES = {(KERNEL_SHAPES[3], True, "bits")}


@pytest.mark.parametrize("shape, x64, name", [
    _case(shape, x64, name, slow=(shape, x64, name) not in DEFAULT_KERNEL_CASES)
    for x64 in (False, True) for shape in KERNEL_SHAPES + CUT_SHAPES[:2] for name in SAMPLERS])
def test_kernel_draws_equal_the_cpu_draws(shape, x64, name):
    draw = SAMPLERS[name]
    with jax.enable_x64(x64):
        expected = np.asarray(draw(STATE, shape))
        with jp.force_lowering("elementwise_pairs"):
            got = jax.jit(lambda seed: draw(jp.key(seed).split_static("tpu kernel"),
                                            shape))(jnp.uint32(20261126))
            np.testing.assert_array_equal(got, expected, err_msg=name)


# A cut of a short line by default; the others (whole rows, a few rows) in the slow run. One
# sampler a test: normal by default (a float map of the kernel's words); bits, uniform and
# bernoulli in the slow run: test_lowering.py's elementwise_pairs cases draw bits of (5, 37)
# through the same kernel, jitted and op by op, on CI's newest-jax leg too, and uniform's map
# (one word, as normal's) and bernoulli's comparison are the same code under every lowering.
@pytest.mark.parametrize("shape, name", [
    _case(shape, name, slow=(shape, name) != ((1000,), "normal"))
    for shape in CUT_SHAPES[2:] for name in SAMPLERS])
def test_small_and_cut_kernel_draws_equal_the_cpu_draws(shape, name):
    draw = SAMPLERS[name]
    expected = np.asarray(draw(STATE, shape))
    with jp.force_lowering("elementwise_pairs"):
        got = jax.jit(lambda state: draw(state, shape))(STATE)
        np.testing.assert_array_equal(got, expected, err_msg=name)


# A window of at most MAX_MAPPED_ELEMENTS values keeps only its own lines of the kernel's step,
# and on a TPU maps its words inside the kernel (here, in interpret mode, XLA maps them after
# it: the kernel lowering's map has the same values, tests/lowering/test_kernel_draws.py). The
# CPU's values for maps of one word to a 32-bit float, a window within a tile, one of a few
# tiles, one from inside a block (offset 3), and under vmap (the elementwise map).
MAPPED_IN_KERNEL = {
    "uniform": lambda s, shape, offset: jp.uniform(s, shape, offset=offset),
    "normal": lambda s, shape, offset: jp.normal(s, shape, offset=offset),
    "exponential": lambda s, shape, offset: jp.exponential(s, shape, offset=offset),
}


# normal by default (the largest map); the others, the same kernel code, in the slow run.
@pytest.mark.parametrize("name", slow_except(sorted(MAPPED_IN_KERNEL), keep=("normal",)))
def test_small_mapped_draws_of_the_kernel_have_the_cpus_values(name):
    draw = MAPPED_IN_KERNEL[name]
    for shape, offset in (((64, 64), 0), ((1000,), 3), ((16, 32), 0)):
        expected = np.asarray(draw(STATE, shape, offset))
        with jp.force_lowering("elementwise_pairs"):
            got = jax.jit(lambda state: draw(state, shape, offset))(STATE)
        np.testing.assert_array_equal(got, expected, err_msg=f"{name} {shape} {offset}")
    states = jax.vmap(STATE.split)(jnp.arange(3, dtype=jnp.uint32))
    expected = np.stack([np.asarray(draw(STATE.split(i), (8, 128), 0)) for i in range(3)])
    with jp.force_lowering("elementwise_pairs"):
        got = jax.jit(jax.vmap(lambda state: draw(state, (8, 128), 0)))(states)
    np.testing.assert_array_equal(got, expected, err_msg=f"{name} vmapped")


def test_lowered_for_tpu_a_small_draws_map_is_in_the_kernel():
    # A small normal's float arithmetic is all inside the Mosaic call: no division, product or
    # square root left to XLA. A larger one maps the kernel's words with XLA.
    def ops(n):
        lowered = (jax.jit(lambda seed: jp.normal(jp.key(seed).split_static("s"), (n,)))
                   .trace(jnp.uint32(1)).lower(lowering_platforms=("tpu",)).as_text())
        return set(re.findall(r"stablehlo\.(divide|multiply|sqrt)", lowered))
    assert ops(_tpu_kernel.MAX_MAPPED_ELEMENTS) == set()
    assert ops(2 * _tpu_kernel.MAX_MAPPED_ELEMENTS) == {"divide", "multiply", "sqrt"}


# A window inside a later block and the carry by default; inside the first block (the same cut
# from the kernel's output, at block 0) in the slow run. One offset a test: each is a kernel of
# its own to compile.
@pytest.mark.parametrize("offset", slow_except((3, 8 * 65536 + 5, 8 * ((1 << 32) - 8)),
                                               keep=(8 * 65536 + 5, 8 * ((1 << 32) - 8))))
def test_kernel_draws_at_later_blocks_and_across_a_32_bit_carry(offset):
    # A state's second window starts where the first ended, also inside a block (3, 5: the
    # window is cut from the kernel's output); 2**32 - 8 blocks in, the block counter's low
    # half wraps inside the window.
    shape = (128, 512)
    expected = np.asarray(jp.bits(STATE, shape, offset=offset))
    with jp.force_lowering("elementwise_pairs"):
        got = jax.jit(lambda s: jp.bits(s, shape, offset=offset))(STATE)
    np.testing.assert_array_equal(got, expected)


def test_vmapped_kernel_draws_equal_each_example():
    draw = jax.vmap(lambda i: jp.bits(STATE.split(i), (256, 256)))
    expected = np.stack([np.asarray(jp.bits(STATE.split(i), (256, 256))) for i in range(3)])
    with jp.force_lowering("elementwise_pairs"):
        got = jax.jit(draw)(jnp.arange(3))
    np.testing.assert_array_equal(got, expected)


def test_vmapped_small_draws_equal_each_example_and_stay_elementwise():
    # Batched, the kernel would compute a whole step (16384 values) for every example.
    draw = jax.vmap(jax.vmap(lambda i, j: jp.uniform(STATE.split(i, j), (64, 64))))
    index = jnp.arange(6).reshape(2, 3)
    expected = np.asarray(draw(index, index))
    with jp.force_lowering("elementwise_pairs"):
        got = jax.jit(draw)(index, index)
    np.testing.assert_array_equal(got, expected)
    lowered = {shape: jax.jit(jax.vmap(lambda i: jp.uniform(STATE.split(i), shape))).trace(
        jnp.arange(4)).lower(lowering_platforms=("tpu",)).as_text()
        for shape in [(64, 64), (128, 128)]}
    assert "tpu_custom_call" not in lowered[(64, 64)]
    assert lowered[(128, 128)].count("tpu_custom_call") == 1


def _shard_mapped_uniform(check_vma):
    mesh = jax.make_mesh((1,), ("x",))
    return jax.shard_map(
        lambda: jp.uniform(STATE.split(jax.lax.axis_index("x")), (1, 64, 64)), mesh=mesh,
        in_specs=(), out_specs=jax.sharding.PartitionSpec("x"), check_vma=check_vma)


@pytest.mark.parametrize("check_vma", [False, True])
def test_kernel_draws_inside_a_shard_map(check_vma):
    with jp.force_lowering("elementwise_pairs"):
        got = jax.jit(_shard_mapped_uniform(check_vma=check_vma))()
    np.testing.assert_array_equal(got[0], jp.uniform(STATE.split(0), (64, 64)))


@pytest.mark.parametrize("platforms", [("tpu",), ("cpu",), ("cpu", "tpu")])
def test_inside_a_checked_shard_map_a_draw_lowers(platforms):
    # The kernel's output varies over the mesh axes as the words do: check_vma accepts it.
    lowered = jax.jit(_shard_mapped_uniform(check_vma=True)).trace().lower(
        lowering_platforms=platforms).as_text()
    assert lowered.count("tpu_custom_call") == (1 if "tpu" in platforms else 0)


@pytest.mark.parametrize("shape", [(512, 128), (64, 64)])
def test_a_draw_exported_for_a_cpu_and_a_tpu_at_once_runs_here_with_the_cpu_values(shape):
    # Each platform lowers its own form: the Mosaic call only in the TPU's.
    exported = jax.export.export(jax.jit(lambda seed: jp.bits(jp.key(seed), shape)),
                                 platforms=["cpu", "tpu"])(jnp.uint32(1))
    assert exported.mlir_module().count("tpu_custom_call") == 2      # the hash's, the window's
    np.testing.assert_array_equal(exported.call(jnp.uint32(1)), jp.bits(jp.key(1), shape))


@pytest.mark.parametrize("shape", [(512, 128), (64, 64)])
@pytest.mark.parametrize("seed_traced", [False, True])
def test_lowered_for_tpu_a_draw_is_mosaic_calls_with_no_loop_or_barrier(shape, seed_traced):
    # A traced seed's message hash (one block beside the static label) is a small kernel of
    # its own; a static one's is folded at trace time.
    def draw(seed):
        return jp.uniform(jp.key(seed if seed_traced else 1).split_static("site"), shape)
    lowered = jax.jit(draw).trace(jnp.uint32(1)).lower(lowering_platforms=("tpu",)).as_text()
    assert lowered.count("tpu_custom_call") == (2 if seed_traced else 1)
    assert "stablehlo.while" not in lowered
    assert "optimization_barrier" not in lowered


def test_draw_sites_of_a_traced_seed_share_one_hash_kernel():
    # Each site's hash is a call of one function, the kernel's input rows and the kernel (its
    # labels are inputs, not constants), traced and lowered once for the program.
    def sites(seed):
        key = jp.key(seed)
        return sum(jp.bits(key.split_static(label), (8, 128)) for label in range(3))
    lowered = jax.jit(sites).trace(jnp.uint32(1)).lower(lowering_platforms=("tpu",)).as_text()
    assert (re.findall(r"func.func private @(_encrypt[\w.]*)", lowered)
            == ["_encrypt_block", "_encrypt"])
    assert re.findall(r"call @(_encrypt[\w.]*)", lowered) == ["_encrypt_block"] * 3 + ["_encrypt"]


def test_lowered_for_tpu_a_keys_operations_encrypt_in_the_hash_kernel():
    # A pmac key's flushes (split, fold_in) and small draws: each block a call of the one
    # hash kernel, not XLA's unrolled cipher of scalars, which the TPU compiler took seconds
    # over (benchmarks/README.md, "A framework's key operations on accelerators").
    def key_operations(data):
        key = jax.random.wrap_key_data(data, impl="pmac")
        _, sub = jax.random.split(key)
        return jax.random.uniform(jax.random.fold_in(sub, 5), ())
    data = jax.random.key_data(jp.as_jax_key(jp.key(3)))
    lowered = jax.jit(key_operations).trace(data).lower(lowering_platforms=("tpu",)).as_text()
    assert (re.findall(r"func.func private @(_encrypt[\w.]*)", lowered)
            == ["_encrypt_block", "_encrypt"])
    assert re.findall(r"call @(_encrypt_block)", lowered) == ["_encrypt_block"] * 3
    assert lowered.count("tpu_custom_call") == 1
    assert "stablehlo.while" not in lowered
    assert lowered.count("stablehlo.xor") < 20        # the cipher has ~600 operations


@pytest.mark.parametrize("shape", [(), (5,)])
def test_hash_kernel_under_vmap_and_eagerly_equals_the_cpu(shape):
    seeds = jnp.arange(math.prod(shape) or 1, dtype=jnp.uint32).reshape(shape)
    def draw(seed):
        return jp.bits(jp.key(seed).split_static("site"), (64, 64))
    want = jnp.stack([draw(s) for s in seeds.reshape(-1)]).reshape(*shape, 64, 64)
    mapped = draw
    for _ in shape:
        mapped = jax.vmap(mapped)
    with jp.force_lowering("elementwise_pairs"):
        np.testing.assert_array_equal(jax.jit(mapped)(seeds), want)
        with jax.disable_jit():
            np.testing.assert_array_equal(mapped(seeds), want)


# One random block by default, two more in the slow run (the same program).
@pytest.mark.parametrize("seed", slow_except([0, 1, 2], keep=[0]))
def test_the_hash_kernel_in_interpret_mode_is_the_cipher(seed):
    # Elsewhere than a TPU the hash's primitive computes the kernel's rows with XLA; the
    # kernel itself, in Pallas' interpret mode, gives the same rows, the cipher's words.
    from jaxpmac._cipher import _threefish
    from jaxpmac._cipher import _words as w
    rng = np.random.default_rng(seed)
    tweak, block = (rng.integers(0, 2 ** 64, size=n, dtype=np.uint64).tolist() for n in (2, 4))
    traced = [w.pair_const(x) for x in (*tweak, *block)]
    halves = _tpu_kernel._word_halves(traced)
    params = dict(key=_threefish.GENERATOR_KEY, n_tweak=2, rounds=_threefish.ROUNDS)
    rows = jax.jit(lambda h: _tpu_kernel._encrypt(h, interpret=True, **params))(halves)
    np.testing.assert_array_equal(rows, _tpu_kernel._encrypt_rows(halves, **params))
    want = _threefish.encrypt(_threefish.GENERATOR_KEY, tweak, block)
    got = [(int(rows[2 * k, 0]) << 32) | int(rows[2 * k + 1, 0]) for k in range(4)]
    assert got == list(want)
    assert (rows == rows[:, :1]).all()
