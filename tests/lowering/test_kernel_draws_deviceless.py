"""Kernel draws compiled for accelerators this machine does not have: XLA's TPU compiler
(libtpu, for a TPU v5e: Mosaic) and its GPU compiler (the CUDA plugin, for an H100 described by
``benchmarks/deviceless_h100.pbtxt``: Pallas' Triton lowering and Mosaic GPU's, traced for an
abstract device of that kind). Each is skipped, with the reason, where its compiler package is
not installed (``pip install "jax[tpu]"`` or ``"jax[cuda12]"`` gives it; without a GPU the CUDA
plugin gives its compiler only with ``JAX_PLATFORMS=cpu`` set before jax starts):

    JAX_PLATFORMS=cpu python -m pytest tests/lowering/test_kernel_draws_deviceless.py
"""

from __future__ import annotations

import jax
import pytest

from deviceless_targets import H100, TPU_V5E, topology_device
from jax.experimental import pallas as pl
from test_kernel_draws import SAMPLERS, STATE, TILE, TILES, _kernel_call

import jaxpmac as jp


@pytest.fixture(scope="module")
def tpu_v5e():
    return topology_device(**TPU_V5E)


@pytest.fixture(scope="module")
def h100():
    if not hasattr(jax.sharding, "AbstractDevice"):
        pytest.skip(f"jax {jax.__version__} has no jax.sharding.AbstractDevice")
    return topology_device(**H100)


def _draws(name):
    """A tile's own stream, and its slice of one draw."""
    values = TILE[0] * TILE[1]
    return {"split": lambda i: SAMPLERS[name](STATE.split(i)),
            "offset": lambda i: SAMPLERS[name](STATE, offset=i * values)}


@pytest.mark.parametrize("form", ["split", "offset"])
@pytest.mark.parametrize("name", SAMPLERS)
def test_a_kernel_draw_compiles_for_a_tpu_v5e(tpu_v5e, name, form):
    kernel = jax.jit(_kernel_call(_draws(name)[form], interpret=False),
                     out_shardings=jax.sharding.SingleDeviceSharding(tpu_v5e))
    compiled = kernel.trace().lower(lowering_platforms=("tpu",)).compile()
    assert "tpu_custom_call" in compiled.as_text() or "custom-call" in compiled.as_text()


# A small draw of every sampler whose map of one word the TPU's window kernel applies itself
# (``_tpu_kernel.maps_in_kernel``): the map compiles in Mosaic, from a traced seed.
SMALL_MAPPED_DRAWS = {
    "uniform_bounds": lambda s: jp.uniform(s, (64, 64), minval=-2.0, maxval=3.0),
    "normal": lambda s: jp.normal(s, (64, 64)),
    "exponential": lambda s: jp.exponential(s, (64, 64)),
    "gumbel": lambda s: jp.gumbel(s, (64, 64)),
    "laplace": lambda s: jp.laplace(s, (64, 64)),
    "logistic": lambda s: jp.logistic(s, (64, 64)),
    "cauchy": lambda s: jp.cauchy(s, (64, 64)),
    "categorical": lambda s: jp.categorical(s, jax.numpy.zeros((5,)), shape=(4096,)),
    "ball": lambda s: jp.ball(s, 3, shape=(512,)),
}


@pytest.mark.parametrize("name", SMALL_MAPPED_DRAWS)
def test_a_small_draws_map_compiles_in_the_tpus_window_kernel(tpu_v5e, name):
    draw = jax.jit(lambda seed: SMALL_MAPPED_DRAWS[name](jp.key(seed).split_static("small")),
                   out_shardings=jax.sharding.SingleDeviceSharding(tpu_v5e))
    seed = jax.ShapeDtypeStruct((), jax.numpy.uint32,
                                sharding=jax.sharding.SingleDeviceSharding(tpu_v5e))
    assert "custom-call" in draw.trace(seed).lower(lowering_platforms=("tpu",)).compile().as_text()


def _compiled_for_an_h100(kernel, h100) -> str:
    """The optimized HLO of ``kernel`` compiled for the H100 ``h100``: traced for an abstract
    device of its kind (Pallas asks which GPU it lowers for), lowered for ``cuda``."""
    abstract = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=jax.sharding.AbstractDevice(
        device_kind=h100.device_kind, num_cores=None, platform="gpu"))
    kernel = jax.jit(kernel, out_shardings=jax.sharding.SingleDeviceSharding(h100))
    with jax.sharding.use_abstract_mesh(abstract):
        traced = kernel.trace()
    return traced.lower(lowering_platforms=("cuda",)).compile().as_text()


@pytest.mark.parametrize("form", ["split", "offset"])
@pytest.mark.parametrize("name", SAMPLERS)
def test_a_kernel_draw_compiles_for_an_h100_with_triton(h100, name, form):
    compiled = _compiled_for_an_h100(_kernel_call(_draws(name)[form], interpret=False), h100)
    assert "__gpu$xla.gpu.triton" in compiled or "triton" in compiled


def _mosaic_gpu_kernel(draw, *, lanes: bool = False):
    """A Mosaic GPU kernel (``plgpu.kernel``: jax's entry for it, where ``pallas_call`` has no
    Mosaic GPU lowering) whose block ``i`` of a grid of tiles writes ``draw(i)``; ``lanes``:
    with lane semantics and ``force_lowering("mosaic_gpu_lane")``."""
    from jax.experimental.pallas import mosaic_gpu as plgpu

    out_dtype = jax.eval_shape(lambda: draw(0)).dtype

    def body(out_ref):
        i = jax.lax.axis_index("tile")
        with jp.force_lowering("mosaic_gpu_lane" if lanes else "kernel"):
            out_ref[pl.ds(i * TILE[0], TILE[0]), :] = draw(i)

    params = (plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane) if lanes
              else None)
    return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((TILES * TILE[0], TILE[1]), out_dtype),
                        grid=(TILES,), grid_names=("tile",), compiler_params=params)


# With warpgroup semantics (Mosaic GPU's default), not truncated_normal (its layout inference
# exceeds Python's recursion limit) and randint (its compile did not finish in minutes): they
# compile with lane semantics (below; docs/kernels.md).
MOSAIC_GPU_SAMPLERS = [name for name in SAMPLERS if name not in ("truncated_normal", "randint")]


def _has_a_custom_derivative(draw) -> bool:
    """Whether ``draw``'s kernel program holds a ``custom_jvp_call``: ``_fixed_math.rounded``,
    the identity with a derivative that keeps a product out of the addition after it."""
    with jp.force_lowering("kernel"):
        return "custom_jvp_call" in str(jax.make_jaxpr(draw)(0))


@pytest.mark.parametrize("form", ["split", "offset"])
@pytest.mark.parametrize("name, lanes", [(name, False) for name in MOSAIC_GPU_SAMPLERS]
                         + [(name, True) for name in SAMPLERS])
def test_a_kernel_draw_compiles_for_an_h100_with_mosaic_gpu(h100, name, lanes, form):
    # Lane semantics (``lanes``) has no layout inference: every sampler, 1-10 s each here.
    try:
        from jax.experimental.pallas import mosaic_gpu  # noqa: F401
    except ImportError as error:
        pytest.skip(f"no Mosaic GPU in jax {jax.__version__} ({error})")
    draw = _draws(name)[form]
    kernel = _mosaic_gpu_kernel(draw, lanes=lanes)
    if jax.__version_info__ < (0, 12) and _has_a_custom_derivative(draw):
        # Before jax 0.12, Mosaic GPU's resource estimation refuses a custom_jvp_call (an
        # H200 with jax 0.11.2, 2026-11-28): normal, exponential, gumbel and truncated_normal
        # need jax 0.12 in a Mosaic GPU kernel (docs/kernels.md). Pinned, so that a jax that
        # lifts it is noticed.
        with pytest.raises(NotImplementedError, match="custom_jvp_call"):
            _compiled_for_an_h100(kernel, h100)
        return
    compiled = _compiled_for_an_h100(kernel, h100)
    assert "mosaic" in compiled.lower()
