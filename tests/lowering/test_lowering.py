"""The lowering is chosen per platform when a program is lowered (``jaxpmac._lowering``): what a
program lowered for a GPU or TPU from this CPU holds, a multi-platform export, and the switch
that forces a lowering. (Bits on every lowering: the oracle tests run once per lowering through
the ``each_lowering`` fixture.)"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_equal_arrays, oracle_bits, slow_except

import jaxpmac as jp
from jaxpmac._lowering import LOWERINGS, force_lowering

LABELS = ["lowering"]
SHAPE = (5, 37)  # not a whole number of blocks
# name -> a draw of a traced seed (uint32)
DRAWS = {
    "bits": lambda seed: jp.bits(jp.key(seed).split_static(*LABELS), SHAPE),
    "bits_uint8_offset": lambda seed: jp.bits(jp.key(seed).split_static(*LABELS), SHAPE,
                                              jnp.uint8, offset=seed % 97),
    "bits_uint16_offset_13": lambda seed: jp.bits(jp.key(seed).split_static(*LABELS), SHAPE,
                                                  jnp.uint16, offset=13),
    "uniform": lambda seed: jp.uniform(jp.key(seed).split_static(*LABELS), SHAPE),
    "normal": lambda seed: jp.normal(jp.key(seed).split_static(*LABELS), SHAPE),
    "vmapped_normal": lambda seed: jax.vmap(
        lambda i: jp.normal(jp.key(seed).split(i), (7,)))(jnp.arange(6)),
    "jax_random_bits": lambda seed: jax.random.bits(jp.as_jax_key(jp.key(seed)), SHAPE),
}
ACCELERATORS = ("cuda", "rocm", "tpu")


def _exported(draw, platforms):
    return jax.export.export(jax.jit(draw), platforms=list(platforms))(
        jax.ShapeDtypeStruct((), jnp.uint32))


# rocm in the slow run: it gets cuda's lowering (every platform but the CPU's and the TPU's
# gets the default one, _lowering._platform.PLATFORM_LOWERINGS).
@pytest.mark.parametrize("platform", slow_except(ACCELERATORS, keep=("cuda", "tpu")))
@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_draw_lowered_for_an_accelerator_from_this_cpu_has_no_loop_and_no_barrier(name,
                                                                                  platform):
    text = _exported(DRAWS[name], [platform]).mlir_module()
    assert "stablehlo.while" not in text
    assert "optimization_barrier" not in text


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_draw_lowered_for_a_cpu_runs_the_rolled_loop(name):
    assert "stablehlo.while" in _exported(DRAWS[name], ["cpu"]).mlir_module()


@pytest.mark.parametrize("accelerator", ["cuda", "tpu"])
def test_a_multi_platform_export_runs_here_with_the_oracle_bits(accelerator):
    """An export for this backend's platform ("here": 'cpu', 'cuda', 'rocm' or 'tpu'), the CPU
    and ``accelerator`` (each once: on a CUDA GPU the ``cuda`` case exports for two platforms,
    the ``tpu`` case for three) carries the CPU's rolled lowering and the choice between
    lowerings, and run here gives the oracle bits."""
    here = jax.export.default_export_platform()
    platforms = tuple(dict.fromkeys([here, "cpu", accelerator]))
    exported = _exported(DRAWS["bits"], platforms)
    assert exported.platforms == platforms and len(platforms) > 1
    text = exported.mlir_module()
    assert "stablehlo.while" in text  # the CPU's rolled lowering, carried wherever this runs
    # the lowering is chosen among the platforms' branches when the program runs: more
    # ``case`` operations than in the export for this platform alone
    here_only = _exported(DRAWS["bits"], [here]).mlir_module()
    assert text.count("stablehlo.case") > here_only.count("stablehlo.case")
    restored = jax.export.deserialize(exported.serialize())
    for seed in (0, 7, 2**32 - 1):
        expected = oracle_bits(seed, LABELS, (), int(np.prod(SHAPE)), jnp.uint32)
        assert_equal_arrays(restored.call(jnp.uint32(seed)), expected.reshape(SHAPE))


# Under the TPU's lowering in the slow run: uniform, a one-word map of the kernel's words as
# normal's is (normal stays: test_sampler_oracle_float.py checks its map under the CPU's lowering
# only, relying on this test), and vmapped_normal: small windows under vmap stay elementwise,
# and test_tpu_kernel.py's test_hash_kernel_under_vmap_and_eagerly_equals_the_cpu[shape1] draws
# them jitted and op by op. Each is an interpret-mode kernel or an unrolled cipher to compile,
# twice.
SLOW_UNDER_THE_TPUS_LOWERING = ("uniform", "vmapped_normal")


@pytest.mark.parametrize("name, lowering", [
    pytest.param(name, lowering, marks=pytest.mark.slow)
    if lowering == "elementwise_pairs" and name in SLOW_UNDER_THE_TPUS_LOWERING
    else (name, lowering)
    for name in sorted(DRAWS) for lowering in LOWERINGS])
def test_every_lowering_gives_the_same_values_with_and_without_jit(name, lowering):
    seed = jnp.uint32(2024)
    reference = jax.jit(DRAWS[name])(seed)
    with force_lowering(lowering):
        assert_equal_arrays(jax.jit(DRAWS[name])(seed), reference)
        eager = DRAWS[name](seed)
    if reference.dtype.kind == "f":  # outside jit XLA may round a fused map differently
        np.testing.assert_allclose(eager, reference, rtol=2e-6, atol=1e-6)
    else:
        assert_equal_arrays(eager, reference)


def test_force_lowering_restores_the_previous_choice():
    from jaxpmac._lowering import forced_lowering
    with force_lowering("elementwise"):
        with force_lowering("rolled"):
            assert forced_lowering() == "rolled"
        assert forced_lowering() == "elementwise"
    assert forced_lowering() is None


def test_force_lowering_rejects_an_unknown_name():
    with pytest.raises(ValueError, match=r"force_lowering name accepts one of .*'gpu'"):
        force_lowering("gpu")


# A GPU's window of at least MIN_MAPPED_WINDOW_ELEMENTS values maps each stream word's 32- or
# 16-bit parts where the word is made and packs the results back (``_elementwise
# .mapped_window``); a smaller window maps each value on its own. Either way the CPU's values,
# on both sides of that size, with a window cut from inside a word (odd offset and length).
MAPPED_WINDOW_DRAWS = {
    "uniform_bfloat16": lambda s, n, offset: jp.uniform(s, (n,), jnp.bfloat16, offset=offset),
    "normal": lambda s, n, offset: jp.normal(s, (n,), jnp.float32, offset=offset),
    "exponential": lambda s, n, offset: jp.exponential(s, (n,), jnp.float32, offset=offset),
}


@pytest.mark.parametrize("name", sorted(MAPPED_WINDOW_DRAWS))
def test_a_gpus_window_gives_the_cpus_values_above_and_below_the_packed_size(name):
    from jaxpmac._lowering._elementwise import MIN_MAPPED_WINDOW_ELEMENTS
    state = jp.key(5).split_static("mapped window")
    draw = MAPPED_WINDOW_DRAWS[name]
    for n in (MIN_MAPPED_WINDOW_ELEMENTS + 3, MIN_MAPPED_WINDOW_ELEMENTS - 3):
        offset = jnp.int32(7)
        reference = jax.jit(draw, static_argnums=1)(state, n, offset)
        with force_lowering("elementwise"):
            assert_equal_arrays(jax.jit(draw, static_argnums=1)(state, n, offset), reference)
