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


def test_lowered_for_tpu_a_draw_is_one_mosaic_call_with_no_loop_or_barrier():
    lowered = jax.jit(lambda seed: jp.uniform(jp.key(seed), (512, 128))).trace(
        jnp.uint32(1)).lower(lowering_platforms=("tpu",)).as_text()
    assert lowered.count("tpu_custom_call") == 1
    assert "stablehlo.while" not in lowered
    assert "optimization_barrier" not in lowered
