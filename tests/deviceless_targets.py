"""Accelerators this machine does not have, as XLA's compilers describe them: a TPU v5e (libtpu)
and an H100 (the CUDA plugin, from ``benchmarks/deviceless_h100.pbtxt``), for the deviceless
tests. A test asks for one with :func:`topology_device`, which skips it, with the reason, where
the compiler is not installed."""

from __future__ import annotations

import pathlib

import pytest

H100_CONFIG = pathlib.Path(__file__).parents[1] / "benchmarks" / "deviceless_h100.pbtxt"
H100 = dict(platform="cuda", target_config=H100_CONFIG.read_text(), topology="1x1x1")
TPU_V5E = dict(topology_name="v5e:1x1", platform="tpu")


def topology_device(**description):
    """The first device of ``jax.experimental.topologies.get_topology_desc(**description)``, or
    the calling test skipped: any failure means no such compiler here."""
    try:
        from jax.experimental import topologies
        return topologies.get_topology_desc(**description).devices[0]
    except Exception as error:  # noqa: BLE001 -- any failure means: no such compiler here
        pytest.skip(f"no {description['platform']} compiler in this environment "
                    f"({type(error).__name__}: {str(error)[:120]})")
