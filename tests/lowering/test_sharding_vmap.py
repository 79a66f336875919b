"""Sharded vmapped draws: equal to the one-device draw, with no collectives in the program.

A vmapped draw on a CPU runs in tiles over lanes (``_stream_lanes``); the tiles are strided so
that an output sharded by examples, by elements or both has every tile span the devices. Runs in
a child process with 8 host CPU devices (``--xla_force_host_platform_device_count`` must be set
before JAX starts).
"""

from __future__ import annotations

import textwrap

import pytest
from conftest import run_child_with_host_devices


CHILD = textwrap.dedent(r"""
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import jaxpmac as jp

    COLLECTIVES = ("all-gather", "all-to-all", "collective-permute", "all-reduce",
                   "reduce-scatter")
    mesh_1d = jax.make_mesh((8,), ("x",))
    mesh_2d = jax.make_mesh((4, 2), ("x", "y"))
    layouts = {"examples": NamedSharding(mesh_1d, P("x")),
               "elements": NamedSharding(mesh_1d, P(None, "x")),
               "both": NamedSharding(mesh_2d, P("x", "y"))}
    # Whole lanes, 64 to a tile; and long lanes split into parts, 8 lanes by 8 parts a tile.
    workloads = {"short_lanes": (512, 512), "long_lanes": (16, 32768)}
    report = {}
    for workload, (n_lanes, per_lane) in workloads.items():
        def draw(seed):
            k = jp.key(seed).split_static("sharded-vmap")
            return jax.vmap(lambda i: jp.bits(k.split(i), (per_lane,)))(
                jnp.arange(n_lanes, dtype=jnp.uint32))
        seed = jnp.uint32(5)
        single = np.asarray(jax.jit(draw)(seed))
        for name, sharding in layouts.items():
            compiled = jax.jit(draw, out_shardings=sharding).lower(seed).compile()
            out = compiled(seed)
            hlo = compiled.as_text()
            report[workload + "/" + name] = dict(
                equal=bool(np.array_equal(np.asarray(out), single)),
                sharded=out.sharding == sharding,
                collectives=[c for c in COLLECTIVES if c in hlo])

    # shard_map: each device vmaps over its own examples (the tile loop's carry must vary
    # over the mesh axis like the words written into it, or check_vma rejects the loop).
    k = jp.key(5).split_static("shard_map-vmap")
    ids = jax.device_put(jnp.arange(8 * 300, dtype=jnp.uint32), layouts["examples"])
    def by_state(ids):
        return jax.vmap(lambda i: jp.bits(k.split(i), (256,)))(ids)
    def by_key(ids):
        keys = jax.vmap(lambda i: jp.as_jax_key(k.split(i)))(ids)
        return jax.vmap(lambda key: jax.random.bits(key, (256,), jnp.uint32))(keys)
    single = np.asarray(jax.jit(by_state)(jnp.arange(8 * 300, dtype=jnp.uint32)))
    for name, fn in (("bits", by_state), ("key", by_key)):
        for check_vma in (True, False):
            try:
                out = jax.jit(jax.shard_map(fn, mesh=mesh_1d, in_specs=P("x"),
                                            out_specs=P("x"), check_vma=check_vma))(ids)
                result = bool(np.array_equal(np.asarray(out), single))
            except Exception as error:  # reported, then asserted on by the test
                result = f"{type(error).__name__}: {str(error)[:300]}"
            report[f"shard_map_{name}_check_vma_{check_vma}"] = result
    print("REPORT " + json.dumps(report))
""")


@pytest.fixture(scope="module")
def report():
    return run_child_with_host_devices(CHILD, timeout=600)


@pytest.mark.parametrize("workload", ["short_lanes", "long_lanes"])
@pytest.mark.parametrize("layout", ["examples", "elements", "both"])
def test_sharded_vmapped_draw_equals_one_device_without_collectives(report, workload, layout):
    assert report[f"{workload}/{layout}"] == dict(equal=True, sharded=True, collectives=[])


@pytest.mark.parametrize("name", ["bits", "key"])
@pytest.mark.parametrize("check_vma", [True, False])
def test_vmap_inside_shard_map_equals_one_device(report, name, check_vma):
    assert report[f"shard_map_{name}_check_vma_{check_vma}"] is True
