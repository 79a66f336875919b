"""The TPU's kernel for large uint32 windows (``_lowering._tpu_kernel``): run here in Pallas'
interpret mode under ``force_lowering("elementwise_pairs")``, it gives the CPU's values; lowered
for ``tpu`` from this CPU, a draw is one Mosaic call with no loop and no barrier."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from jaxpmac._lowering import _tpu_kernel

STATE = jp.key(20261126).split_static("tpu kernel")
# Shapes the kernel computes (lines of 128 lanes, at least MIN_ELEMENTS), and ones it leaves
# to the elementwise lowering (lines not in whole steps; a last axis that is not whole lanes;
# too few elements).
KERNEL_SHAPES = [(512, 128), (128, 1024), (2, 128, 256), (65536,)]
ELEMENTWISE_SHAPES = [(65536 + 128,), (1024, 100), (64, 1024), (256, 128)]
SAMPLERS = {"bits": jp.bits, "uniform": jp.uniform, "normal": jp.normal,
            "bernoulli": lambda s, shape: jp.bernoulli(s, 0.3, shape)}


@pytest.mark.parametrize("shape", KERNEL_SHAPES + ELEMENTWISE_SHAPES)
def test_which_windows_the_kernel_computes(shape):
    assert _tpu_kernel.applies(shape, jnp.uint32, 0) == (shape in KERNEL_SHAPES)


def test_only_uint32_windows_from_a_block_start():
    assert not _tpu_kernel.applies((512, 128), jnp.uint16, 0)
    assert not _tpu_kernel.applies((512, 128), jnp.uint32, 3)
    assert not _tpu_kernel.applies((512, 128), jnp.uint32, jnp.int32(0))


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("shape", KERNEL_SHAPES)
def test_kernel_draws_equal_the_cpu_draws(shape, x64):
    with jax.enable_x64(x64):
        expected = {name: np.asarray(draw(STATE, shape)) for name, draw in SAMPLERS.items()}
        with jp.force_lowering("elementwise_pairs"):
            for name, draw in SAMPLERS.items():
                got = jax.jit(lambda seed: draw(jp.key(seed).split_static("tpu kernel"),
                                                shape))(jnp.uint32(20261126))
                np.testing.assert_array_equal(got, expected[name], err_msg=name)


def test_kernel_draws_at_later_blocks_and_across_a_32_bit_carry():
    # A state's second window starts where the first ended; 2**32 - 8 blocks in, the block
    # counter's low half wraps inside the window.
    shape = (128, 512)
    for offset in (8 * 65536, 8 * ((1 << 32) - 8)):
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


def _shard_mapped_uniform(check_vma):
    mesh = jax.make_mesh((1,), ("x",))
    return jax.shard_map(
        lambda: jp.uniform(STATE.split(jax.lax.axis_index("x")), (1, 512, 128)), mesh=mesh,
        in_specs=(), out_specs=jax.sharding.PartitionSpec("x"), check_vma=check_vma)


def test_kernel_draws_inside_a_shard_map():
    # Pallas' interpret mode mixes the kernel's varying and device-invariant values, which
    # check_vma rejects (a limit of the interpreter only: see the next test).
    with jp.force_lowering("elementwise_pairs"):
        got = jax.jit(_shard_mapped_uniform(check_vma=False))()
    np.testing.assert_array_equal(got[0], jp.uniform(STATE.split(0), (512, 128)))


@pytest.mark.parametrize("platforms", [("tpu",), ("cpu",)])
def test_inside_a_checked_shard_map_a_kernel_sized_draw_lowers(platforms):
    # The kernel's output varies over the mesh axes as the words do: check_vma accepts it (the
    # TPU's branch is traced whatever the platform, so a CPU program needs it too).
    lowered = jax.jit(_shard_mapped_uniform(check_vma=True)).trace().lower(
        lowering_platforms=platforms).as_text()
    assert lowered.count("tpu_custom_call") == (1 if platforms == ("tpu",) else 0)


@pytest.mark.xfail(strict=True, raises=ValueError,
                   reason="jax lowers every branch of a platform choice for every platform of "
                          "the module, and Pallas refuses to lower a Mosaic call for a CPU")
def test_a_kernel_sized_draw_exports_for_a_cpu_and_a_tpu_at_once():
    jax.export.export(jax.jit(lambda seed: jp.bits(jp.key(seed), (512, 128))),
                      platforms=["cpu", "tpu"])(jnp.uint32(1))


def test_lowered_for_tpu_a_draw_is_one_mosaic_call_with_no_loop_or_barrier():
    lowered = jax.jit(lambda seed: jp.uniform(jp.key(seed), (512, 128))).trace(
        jnp.uint32(1)).lower(lowering_platforms=("tpu",)).as_text()
    assert lowered.count("tpu_custom_call") == 1
    assert "stablehlo.while" not in lowered
    assert "optimization_barrier" not in lowered
