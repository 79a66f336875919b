"""Sharded draws: the values depend on the message only, never on device count or layout.

Runs in a subprocess with 8 host CPU devices (``--xla_force_host_platform_device_count`` must be
set before jax starts, and the rest of the suite runs on one device).
"""

import textwrap

import pytest
from conftest import run_child_with_host_devices


SCRIPT = textwrap.dedent(r"""
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import jaxpmac as jp

    COLLECTIVES = ("all-gather", "all-to-all", "collective-permute", "all-reduce")
    assert jax.device_count() == 8, jax.devices()
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    sharding = NamedSharding(mesh, P("x", "y"))
    state = jp.key(7).split_static("sharded")
    shape = (64, 48)
    report = {}

    def check(name, draw):
        single = np.asarray(jax.jit(draw)())  # unsharded: one device
        compiled = jax.jit(draw, out_shardings=sharding).lower().compile()
        sharded = compiled()
        hlo = compiled.as_text()
        report[name] = dict(
            equal=bool(np.array_equal(np.asarray(sharded), single)),
            sharded=sharded.sharding == sharding,
            shards=len(sharded.addressable_shards),
            collectives=[c for c in COLLECTIVES if c in hlo])

    check("bits", lambda: jp.bits(state, shape))
    check("jax_random_bits", lambda: jax.random.bits(jp.as_jax_key(state), shape, jnp.uint32))
    check("normal", lambda: jp.normal(state, shape))

    # shard_map: each device draws its own noise from state.split(device index).
    def device_index():
        return jax.lax.axis_index("x") * 2 + jax.lax.axis_index("y")

    def per_device_bits():
        return jp.bits(state.split(device_index()), (1, 16))

    def per_device_key():
        key = jax.random.fold_in(jp.as_jax_key(state), device_index())
        return jax.random.bits(key, (1, 16), jnp.uint32)

    expected = np.stack([np.asarray(jp.bits(state.split(i), (16,))) for i in range(8)])
    for name, fn in (("shard_map_bits", per_device_bits), ("shard_map_key", per_device_key)):
        for check_vma in (True, False):
            try:
                noise = jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=(), out_specs=P(("x", "y")),
                                              check_vma=check_vma))()
                result = bool(np.array_equal(np.asarray(noise), expected))
            except Exception as error:  # reported, then asserted on by the test
                result = f"{type(error).__name__}: {str(error)[:300]}"
            report[f"{name}_check_vma_{check_vma}"] = result
    print("REPORT " + json.dumps(report))
""")


@pytest.fixture(scope="module")
def report():
    return run_child_with_host_devices(SCRIPT, timeout=300)


@pytest.mark.parametrize("name", ["bits", "jax_random_bits"])
def test_sharded_draw_equals_one_device_without_collectives(report, name):
    assert report[name] == dict(equal=True, sharded=True, shards=8, collectives=[])


def test_sharded_normal_equals_one_device_without_collectives(report):
    assert report["normal"] == dict(equal=True, sharded=True, shards=8, collectives=[])


def test_shard_map_per_device_noise_is_state_split_by_device(report):
    assert report["shard_map_bits_check_vma_False"] is True
    assert report["shard_map_key_check_vma_True"] is True  # jax.random path, default checks
    assert report["shard_map_key_check_vma_False"] is True


def test_shard_map_bits_with_default_check_vma(report):
    assert report["shard_map_bits_check_vma_True"] is True, report["shard_map_bits_check_vma_True"]
