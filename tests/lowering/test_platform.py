"""The platform choice (``_lowering._platform.by_platform``): one equation of the jaxpr whose
lowering jax picks per platform, tracing only that platform's branch, when it is lowered."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxpmac as jp
from jaxpmac._lowering import _platform

RESULT = jax.ShapeDtypeStruct((3,), jnp.uint32)
# What each branch of _counted_choice adds to its input.
BRANCH_OFFSETS = {"rolled": 1, "elementwise": 2, "elementwise_pairs": 3}


def _default_backends_offset() -> int:
    """What the branch of the backend these tests run on adds (the CPU's rolled one here; the
    suite also runs on a lent GPU)."""
    branch = _platform.PLATFORM_LOWERINGS.get(jax.default_backend(), _platform.DEFAULT_LOWERING)
    return BRANCH_OFFSETS[branch]


def _counted_choice(traced: collections.Counter):
    """A function of a uint32 word through ``by_platform`` whose branches count their traces
    and give different values (``+ 1``, ``+ 2``, ``+ 3``): which branch ran shows in the
    result."""
    def branch(name, offset):
        def run(x):
            traced[name] += 1
            return jnp.broadcast_to(x + jnp.uint32(offset), (3,))
        return run

    def choice(x):
        return _platform.by_platform(
            x, **{name: branch(name, offset) for name, offset in BRANCH_OFFSETS.items()},
            result=RESULT)
    return choice


def test_tracing_runs_no_branch_and_lowering_runs_the_platforms_own():
    traced = collections.Counter()
    program = jax.jit(_counted_choice(traced)).trace(jnp.uint32(7))
    assert not traced
    expected = {"cpu": "rolled", "cuda": "elementwise", "rocm": "elementwise",
                "tpu": "elementwise_pairs"}
    for platform, branch in expected.items():
        traced.clear()
        program.lower(lowering_platforms=(platform,))
        assert traced == {branch: 1}, platform


def test_a_multi_platform_export_lowers_each_platforms_branch_and_runs_the_cpus():
    traced = collections.Counter()
    exported = jax.export.export(jax.jit(_counted_choice(traced)),
                                 platforms=["cpu", "tpu", "cuda"])(jnp.uint32(7))
    assert traced == {"rolled": 1, "elementwise_pairs": 1, "elementwise": 1}
    np.testing.assert_array_equal(exported.call(jnp.uint32(7)),
                                  [7 + _default_backends_offset()] * 3)


@pytest.mark.parametrize("lowering, value", [("rolled", 8), ("elementwise", 9),
                                             ("elementwise_pairs", 10)])
def test_a_forced_lowering_runs_its_branch_at_trace_time(lowering, value):
    traced = collections.Counter()
    with jp.force_lowering(lowering):
        program = jax.jit(_counted_choice(traced)).trace(jnp.uint32(7))
    assert traced == {lowering: 1}
    np.testing.assert_array_equal(program.lower().compile()(jnp.uint32(7)), [value] * 3)


def test_eager_and_under_disable_jit_the_default_backends_branch_runs():
    choice = _counted_choice(collections.Counter())
    with jax.disable_jit():
        np.testing.assert_array_equal(choice(jnp.uint32(7)), [7 + _default_backends_offset()] * 3)


def test_vmap_batches_every_branch():
    choice = jax.vmap(_counted_choice(collections.Counter()))
    want = np.broadcast_to(np.arange(4)[:, None] + _default_backends_offset(), (4, 3))
    np.testing.assert_array_equal(jax.jit(choice)(jnp.arange(4, dtype=jnp.uint32)), want)
    nested = jax.jit(jax.vmap(jax.vmap(_counted_choice(collections.Counter()))))
    assert nested(jnp.zeros((2, 5), jnp.uint32)).shape == (2, 5, 3)


def test_a_branch_of_another_type_is_an_error_when_lowered():
    def choice(x):
        return _platform.by_platform(x, rolled=lambda x: x, elementwise=lambda x: x,
                                     result=RESULT)
    program = jax.jit(choice).trace(jnp.uint32(1))
    with pytest.raises(TypeError, match="'rolled' branch returned uint32\\[\\]"):
        program.lower(lowering_platforms=("cpu",))


def test_the_x64_flag_of_the_trace_is_the_branches_flag_when_lowered():
    def choice(x):
        return _platform.by_platform(
            x, rolled=lambda x: jnp.broadcast_to(jnp.asarray(x, float), (3,)),
            elementwise=lambda x: jnp.broadcast_to(jnp.asarray(x, float), (3,)),
            result=jax.ShapeDtypeStruct((3,), jnp.float64))
    with jax.enable_x64(True):
        program = jax.jit(choice).trace(jnp.uint32(2))
    np.testing.assert_array_equal(program.lower().compile()(np.uint32(2)), [2.0] * 3)


def test_a_draw_traces_no_cipher():
    # The stream's cipher (hundreds of equations a lowering) is traced only when lowered.
    jaxpr = jax.make_jaxpr(lambda seed: jp.normal(jp.key(seed), (1024,)))(jnp.uint32(1))
    names = [eqn.primitive.name for eqn in jaxpr.jaxpr.eqns]
    assert "jaxpmac_by_platform" in str(jaxpr)
    assert len(str(jaxpr).splitlines()) < 100, len(str(jaxpr).splitlines())
    assert "scan" not in names and "while" not in names


def test_a_draw_traced_before_is_traced_again_under_a_forced_lowering():
    # jax's caches are keyed by the forced lowering: a sampler's jitted helper traced outside
    # the block does not hand the block its trace.
    state = jp.key(7)
    jp.normal(state, (4,))
    with jp.force_lowering("elementwise"):
        jaxpr = jax.make_jaxpr(lambda: jp.normal(state, (4,)))()
    assert "jaxpmac_by_platform" not in str(jaxpr)
    assert "jaxpmac_by_platform" in str(jax.make_jaxpr(lambda: jp.normal(state, (4,)))())
