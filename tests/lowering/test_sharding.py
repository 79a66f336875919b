"""Sharding: a draw sharded over devices equals the unsharded draw, and each device computes its
own piece of the stream -- the compiled program moves no random bits between devices.

The devices are 8 fake CPU devices (``--xla_force_host_platform_device_count=8``), which must be
set before JAX starts, so the checks run in a child process that prints one JSON line.
"""

from __future__ import annotations

import textwrap

import pytest
from conftest import run_child_with_host_devices

COLLECTIVES = ("all-gather", "all-to-all", "collective-permute", "all-reduce",
               "reduce-scatter")

CHILD = textwrap.dedent("""
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import jaxpmac as jp

    COLLECTIVES = %r
    report = {"devices": jax.device_count()}
    state = jp.key(11).split_static("shard").split(1, 2)
    shape = (64, 16)
    reference = np.asarray(jp.bits(state, shape))
    mesh_1d = jax.make_mesh((8,), ("x",))
    mesh_2d = jax.make_mesh((4, 2), ("x", "y"))
    layouts = {"1d": NamedSharding(mesh_1d, P("x")),
               "2d": NamedSharding(mesh_2d, P("x", "y")),
               "2d_cols": NamedSharding(mesh_2d, P(None, ("x", "y")))}
    for name, sharding in layouts.items():
        # Concrete state (the hash is a constant) and traced seed (the hash is computed).
        programs = {
            "concrete": (jax.jit(lambda: jp.bits(state, shape), out_shardings=sharding), ()),
            "traced_seed": (jax.jit(lambda seed: jp.bits(
                jp.key(seed).split_static("shard").split(1, 2), shape),
                out_shardings=sharding), (jnp.uint32(11),)),
        }
        for kind, (program, args) in programs.items():
            compiled = program.lower(*args).compile()  # compile once: run it and read its HLO
            out = compiled(*args)
            hlo = compiled.as_text()
            report[name + "/" + kind] = {
                "equal": bool(np.array_equal(np.asarray(out), reference)),
                "sharded_as_asked": out.sharding.is_equivalent_to(sharding, len(shape)),
                "shards": len(out.addressable_shards),
                "collectives": [c for c in COLLECTIVES if c in hlo],
            }

    # shard_map: each device draws its own noise from state.split(axis_index).
    def per_device():
        index = jax.lax.axis_index("x")
        return jp.bits(state.split(index), (1, 16))
    try:
        mapped = jax.jit(jax.shard_map(per_device, mesh=mesh_1d, in_specs=(),
                                       out_specs=P("x")))
        mapped = mapped.lower().compile()
        loop = np.stack([np.asarray(jp.bits(state.split(i), (16,))) for i in range(8)])
        report["shard_map"] = {"equal": bool(np.array_equal(np.asarray(mapped()), loop)),
                               "collectives": [c for c in COLLECTIVES if c in mapped.as_text()]}
    except Exception as error:  # reported by its own test, after the checks above
        report["shard_map"] = {"error": type(error).__name__ + ": " + str(error)[:3000]}
    print("REPORT " + json.dumps(report))
""") % (COLLECTIVES,)


@pytest.fixture(scope="module")
def report():
    """Runs the child once (it compiles a dozen programs) for all tests of this file."""
    return run_child_with_host_devices(CHILD, timeout=600)


def test_sharded_draws_match_and_need_no_collectives(report):
    assert report["devices"] == 8
    sharded = {k: v for k, v in report.items() if "/" in k}
    assert len(sharded) == 6
    for name, result in sharded.items():
        assert result["equal"], name
        assert result["sharded_as_asked"], name
        assert result["shards"] == 8, name
        assert result["collectives"] == [], (name, result["collectives"])


def test_shard_map_per_device_noise_equals_loop(report):
    result = report["shard_map"]
    assert "error" not in result, result.get("error")
    assert result["equal"]
    assert result["collectives"] == []
