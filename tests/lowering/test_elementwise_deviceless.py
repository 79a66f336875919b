"""A draw from a traced seed compiled for an H100 (XLA's CUDA compiler, no GPU): the message
hash's kernel and the stream's, no third kernel of the stream's first operations on the hash
(issue 30: "the nonce hash inside the draw's kernel or at most one small kernel"), no loop and
no barrier. Skipped, with the reason, where the CUDA plugin is not installed
(``pip install "jax[cuda12]"``):

    JAX_PLATFORMS=cpu python -m pytest tests/lowering/test_elementwise_deviceless.py
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest

from deviceless_targets import H100, topology_device

import jaxpmac as jp

N = 1 << 20


@pytest.fixture(scope="module")
def h100():
    return topology_device(**H100)


def _optimized_entry(draw, h100) -> str:
    """The entry computation of ``draw``'s optimized HLO for the H100, from a traced seed."""
    compiled = jax.jit(draw, out_shardings=jax.sharding.SingleDeviceSharding(h100)).trace(
        jax.ShapeDtypeStruct((), jnp.uint32)).lower(lowering_platforms=("cuda",)).compile()
    text = compiled.as_text()
    return text[text.index("\nENTRY"):]


@pytest.mark.parametrize("draw", [
    lambda seed: jp.bits(jp.key(seed), (N,), jnp.uint32),
    lambda seed: jp.uniform(jp.key(seed).split_static("site"), (N,)),
    lambda seed: jp.bits(jp.key(seed).split(seed), (N,), jnp.uint8),
], ids=["bits", "uniform_of_a_label", "bits_uint8_of_a_dynamic_word"])
def test_a_draw_is_the_hash_kernel_and_the_stream_kernel(h100, draw):
    entry = _optimized_entry(draw, h100)
    kernels = re.findall(r"= \S+ fusion\(", entry)
    assert len(kernels) == 2, entry
    assert " while(" not in entry and "barrier" not in entry
