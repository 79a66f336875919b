"""Kernel draws compiled for accelerators this machine does not have: XLA's TPU compiler
(libtpu, for a TPU v5e: Mosaic) and its GPU compiler (the CUDA plugin, for an H100 described by
``benchmarks/deviceless_h100.pbtxt``: Pallas' Triton lowering, traced for an abstract device of
that kind). Each is skipped, with the reason, where its compiler package is not installed
(``pip install "jax[tpu]"`` or ``"jax[cuda12]"`` gives it; without a GPU the CUDA plugin gives
its compiler only with ``JAX_PLATFORMS=cpu`` set before jax starts):

    JAX_PLATFORMS=cpu python -m pytest tests/lowering/test_kernel_draws_deviceless.py
"""

from __future__ import annotations

import pathlib

import jax
import pytest

from test_kernel_draws import SAMPLERS, STATE, TILE, _kernel_call

H100_CONFIG = pathlib.Path(__file__).parents[2] / "benchmarks" / "deviceless_h100.pbtxt"


def _topology_device(**description):
    try:
        from jax.experimental import topologies
        return topologies.get_topology_desc(**description).devices[0]
    except Exception as error:  # noqa: BLE001 -- any failure means: no such compiler here
        pytest.skip(f"no {description['platform']} compiler in this environment "
                    f"({type(error).__name__}: {str(error)[:120]})")


@pytest.fixture(scope="module")
def tpu_v5e():
    return _topology_device(topology_name="v5e:1x1", platform="tpu")


@pytest.fixture(scope="module")
def h100():
    if not hasattr(jax.sharding, "AbstractDevice"):
        pytest.skip(f"jax {jax.__version__} has no jax.sharding.AbstractDevice")
    return _topology_device(platform="cuda", target_config=H100_CONFIG.read_text(),
                            topology="1x1x1")


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


@pytest.mark.parametrize("form", ["split", "offset"])
@pytest.mark.parametrize("name", SAMPLERS)
def test_a_kernel_draw_compiles_for_an_h100_with_triton(h100, name, form):
    abstract = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=jax.sharding.AbstractDevice(
        device_kind=h100.device_kind, num_cores=None, platform="gpu"))
    kernel = jax.jit(_kernel_call(_draws(name)[form], interpret=False),
                     out_shardings=jax.sharding.SingleDeviceSharding(h100))
    with jax.sharding.use_abstract_mesh(abstract):
        traced = kernel.trace()
    compiled = traced.lower(lowering_platforms=("cuda",)).compile()
    assert "__gpu$xla.gpu.triton" in compiled.as_text() or "triton" in compiled.as_text()
