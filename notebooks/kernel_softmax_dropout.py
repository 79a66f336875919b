"""A Pallas kernel for ``05_kernels.ipynb``: row softmax with inverted dropout, its mask drawn
inside the kernel with jaxpmac, and its reference outside any kernel.

Importable by the notebook (its working directory is ``notebooks/``) and by the processes that
compile it for a TPU and an H100 without either (``compile_for``)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

import jaxpmac as jp

TILE = (8, 128)
KEEP = 0.9
STATE = jp.key(2026).split_static("attention dropout")


def _tile_mask(tile: int, *, per_tile_stream: bool):
    """Tile ``tile``'s keep mask: its own stream, or its slice of one draw over the matrix."""
    if per_tile_stream:
        return jp.bernoulli(STATE.split(tile), KEEP, TILE)
    return jp.bernoulli(STATE, KEEP, TILE, offset=tile * TILE[0] * TILE[1])


def _softmax(scores):
    shifted = scores - scores.max(axis=-1, keepdims=True)
    weights = jnp.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


def _body(scores_ref, out_ref, *, per_tile_stream: bool):
    with jp.force_lowering("kernel"):
        keep = _tile_mask(pl.program_id(0), per_tile_stream=per_tile_stream)
    out_ref[...] = jnp.where(keep, _softmax(scores_ref[...]) / KEEP, 0.0)


def softmax_dropout(scores, *, per_tile_stream: bool = True, interpret: bool = True):
    """Row softmax of ``scores`` (float32, rows a multiple of 8, 128 columns) with dropout, one
    ``(8, 128)`` tile per program."""
    body = functools.partial(_body, per_tile_stream=per_tile_stream)
    return pl.pallas_call(
        body, grid=(scores.shape[0] // TILE[0],),
        out_shape=jax.ShapeDtypeStruct(scores.shape, scores.dtype),
        in_specs=[pl.BlockSpec(TILE, lambda i: (i, 0))],
        out_specs=pl.BlockSpec(TILE, lambda i: (i, 0)), interpret=interpret)(scores)


def reference_mask(rows: int, *, per_tile_stream: bool = True):
    """The kernel's mask, drawn outside any kernel."""
    if per_tile_stream:
        return jnp.concatenate([jp.bernoulli(STATE.split(i), KEEP, TILE)
                                for i in range(rows // TILE[0])])
    return jp.bernoulli(STATE, KEEP, (rows, TILE[1]))


def reference(scores, *, per_tile_stream: bool = True):
    """``softmax_dropout`` without a kernel."""
    keep = reference_mask(scores.shape[0], per_tile_stream=per_tile_stream)
    return jnp.where(keep, _softmax(scores) / KEEP, 0.0)


def compile_for(target: str, rows: int = 64) -> str:
    """Compiles the kernel for a TPU v5e (``"tpu"``, libtpu) or an H100 (``"cuda"``, the CUDA
    plugin with ``JAX_PLATFORMS=cpu``) on a machine with neither; a line saying what XLA made.
    """
    import pathlib

    from jax.experimental import topologies

    if target == "tpu":
        device = topologies.get_topology_desc(topology_name="v5e:1x1", platform="tpu").devices[0]
    else:
        config = pathlib.Path(__file__).parents[1] / "benchmarks" / "deviceless_h100.pbtxt"
        device = topologies.get_topology_desc(platform="cuda", target_config=config.read_text(),
                                              topology="1x1x1").devices[0]
    scores = jax.ShapeDtypeStruct((rows, TILE[1]), jnp.float32,
                                  sharding=jax.sharding.SingleDeviceSharding(device))
    kernel = jax.jit(functools.partial(softmax_dropout, interpret=False))
    if target == "tpu":
        traced = kernel.trace(scores)
    else:
        # Pallas' Triton lowering asks the abstract device what it compiles for.
        mesh = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=jax.sharding.AbstractDevice(
            device_kind=device.device_kind, num_cores=None, platform="gpu"))
        with jax.sharding.use_abstract_mesh(mesh):
            traced = kernel.trace(scores)
    hlo = traced.lower(lowering_platforms=(target,)).compile().as_text()
    calls = hlo.count("custom-call(")
    return (f"{device.device_kind}: compiled (jax {jax.__version__}), {calls} kernel call"
            f"{'s' if calls != 1 else ''} in the program")
