"""Draws inside Pallas kernels (``force_lowering("kernel")``): the values of the same draw
outside any kernel, here in Pallas' interpret mode; lowered for a TPU (Mosaic) from this CPU,
no equation that Mosaic cannot lower."""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.extend import core as jax_core

import jaxpmac as jp
from conftest import param, slow_except

TILE = (8, 128)
TILES = 4
STATE = jp.key(20261126).split_static("kernel draws")
# The samplers a kernel can draw from: a tile's own stream (``split(program_id)``) or its slice
# of one stream (``offset=``). ``shape`` is the tile's, or the whole draw's outside.
SAMPLERS = {
    "bits": lambda s, shape=TILE, offset=0: jp.bits(s, shape, offset=offset),
    "uniform": lambda s, shape=TILE, offset=0: jp.uniform(s, shape, offset=offset),
    "normal": lambda s, shape=TILE, offset=0: jp.normal(s, shape, offset=offset),
    "bernoulli": lambda s, shape=TILE, offset=0: jp.bernoulli(
        s, 0.3, shape, offset=offset).astype(jnp.int32),
    "exponential": lambda s, shape=TILE, offset=0: jp.exponential(s, shape, offset=offset),
    "gumbel": lambda s, shape=TILE, offset=0: jp.gumbel(s, shape, offset=offset),
    "truncated_normal": lambda s, shape=TILE, offset=0: jp.truncated_normal(
        s, -1.0, 2.0, shape, offset=offset),
    "randint": lambda s, shape=TILE, offset=0: jp.randint(s, shape, -3, 1000, offset=offset),
}


def _kernel_call(draw, *, interpret: bool):
    """A kernel whose tile ``i`` writes ``draw(i)``, traced with the kernel lowering."""
    out_dtype = jax.eval_shape(lambda: draw(0)).dtype

    def body(out_ref):
        with jp.force_lowering("kernel"):
            out_ref[...] = draw(pl.program_id(0))

    return pl.pallas_call(
        body, grid=(TILES,),
        out_shape=jax.ShapeDtypeStruct((TILES * TILE[0], TILE[1]), out_dtype),
        out_specs=pl.BlockSpec(TILE, lambda i: (i, 0)), interpret=interpret)


def _outside(draw) -> np.ndarray:
    return np.concatenate([np.asarray(draw(i)) for i in range(TILES)])


# One sampler of each kind of program by default. In the slow run: gumbel (a log of
# exponential's log: exponential's kind), normal (in a kernel by default with x64 on, in
# test_with_x64_on_a_32_bit_kernel_draw_equals_the_draw_outside[normal], and its inverse CDF
# with x64 off in the truncated normal's) and the truncated normal of bounds -1 and 2 (the same
# draw as test_truncated_normal_of_known_bounds_in_a_kernel_equals_the_draw_outside's, of other
# bounds).
@pytest.mark.parametrize("name", [
    param(name, slow=name in ("gumbel", "normal", "truncated_normal"))
    for name in SAMPLERS])
def test_a_tiles_own_stream_in_a_kernel_equals_the_draw_outside(name):
    def draw(i):
        return SAMPLERS[name](STATE.split(i))
    got = jax.jit(_kernel_call(draw, interpret=True))()
    np.testing.assert_array_equal(got, _outside(draw))


# A slice of 32-bit words (bits) and of 64-bit ones (randint's limbs) by default; the others,
# normal among them (one word a value, as bits), in the slow run.
@pytest.mark.parametrize("name", [
    param(name, slow=name not in ("bits", "randint"))
    for name in SAMPLERS])
def test_a_tiles_slice_of_one_stream_in_a_kernel_equals_the_draw_outside(name):
    values = TILE[0] * TILE[1]

    def draw(i):
        return SAMPLERS[name](STATE, offset=i * values)
    got = jax.jit(_kernel_call(draw, interpret=True))()
    whole = SAMPLERS[name](STATE, (TILES * TILE[0], TILE[1]))
    np.testing.assert_array_equal(got, whole)


# With x64 on, the 32-bit draws a kernel can hold (default dtypes would be 64-bit).
SAMPLERS_32 = {
    "bits": lambda s: jp.bits(s, TILE, jnp.uint32),
    "uniform": lambda s: jp.uniform(s, TILE, jnp.float32),
    "normal": lambda s: jp.normal(s, TILE, jnp.float32),
    "bernoulli": lambda s: jp.bernoulli(s, 0.3, TILE).astype(jnp.int32),
    "exponential": lambda s: jp.exponential(s, TILE, jnp.float32),
    "gumbel": lambda s: jp.gumbel(s, TILE, jnp.float32),
    "truncated_normal": lambda s: jp.truncated_normal(s, -1.0, 2.0, TILE, jnp.float32),
    "randint": lambda s: jp.randint(s, TILE, -3, 1000, jnp.int32),
}


# normal (a float map) and randint (halves of the uint64 words) by default: both read the
# uint32 pairs that stand in a kernel for the uint64 words used outside, as bits does (in the
# slow run, with the others).
@pytest.mark.parametrize("name", [
    param(name, slow=name not in ("normal", "randint"))
    for name in SAMPLERS_32])
def test_with_x64_on_a_32_bit_kernel_draw_equals_the_draw_outside(name):
    # Inside a kernel the words stay uint32 pairs (Mosaic has no 64-bit type), with the bits
    # of the uint64 words the same draw uses outside.
    def draw(i):
        return SAMPLERS_32[name](STATE.split(i))
    with jax.enable_x64(True):
        got = jax.jit(_kernel_call(draw, interpret=True))()
        np.testing.assert_array_equal(got, _outside(draw))
        lowered = jax.jit(_kernel_call(draw, interpret=False)).trace().lower(
            lowering_platforms=("tpu",)).as_text()
    assert lowered.count("tpu_custom_call") == 1


@pytest.mark.parametrize("name", SAMPLERS)
def test_lowered_for_a_tpu_a_kernel_draw_is_one_mosaic_call(name):
    # Mosaic lowers every equation here (its compile, libtpu's, is checked deviceless:
    # docs/kernels.md).
    def draw(i):
        return SAMPLERS[name](STATE.split(i))
    lowered = jax.jit(_kernel_call(draw, interpret=False)).trace().lower(
        lowering_platforms=("tpu",)).as_text()
    assert lowered.count("tpu_custom_call") == 1


def _equations(jaxpr) -> list:
    """Every equation of ``jaxpr`` and the jaxprs inside it, in order: its primitive and the
    types of its results."""
    out = []
    for eqn in jaxpr.eqns:
        out.append((eqn.primitive.name, tuple(str(v.aval) for v in eqn.outvars)))
        for sub in jax_core.jaxprs_in_params(eqn.params):
            out += _equations(getattr(sub, "jaxpr", sub))
    return out


# gumbel (exponential's kind) and the truncated normal (normal's inverse CDF, between bounds)
# in the slow run: the stream's iotas, where the casts go, come from one function for every
# sampler (_platform.kernel_iota).
@pytest.mark.parametrize("name", [
    param(name, slow=name in ("gumbel", "truncated_normal"))
    for name in SAMPLERS])
def test_the_mosaic_gpu_lane_lowering_is_the_kernel_lowering_with_layout_casts(name):
    # Mosaic GPU's layout cast has no rule outside Mosaic GPU (interpret mode cannot run it),
    # so the values are checked by construction: the same equations as the kernel lowering,
    # whose values interpret mode checks, and one layout cast after each iota.
    def jaxpr_of(lowering):
        with jp.force_lowering(lowering):
            return jax.make_jaxpr(lambda: SAMPLERS[name](STATE.split(3)))().jaxpr
    lane, kernel = _equations(jaxpr_of("mosaic_gpu_lane")), _equations(jaxpr_of("kernel"))
    casts = [i for i, (primitive, _) in enumerate(lane) if primitive == "layout_cast"]
    assert casts and all(lane[i - 1][0] == "iota" for i in casts)
    assert [eqn for eqn in lane if eqn[0] != "layout_cast"] == kernel


# int32's full range in the slow run: uint32's is the same span of 2**32, signed.
@pytest.mark.parametrize("dtype, low, high", [
    (jnp.uint32, 0, 2**32 - 1), pytest.param(jnp.int32, -2**31, 2**31 - 1, marks=pytest.mark.slow),
    (jnp.int8, -5, 7), (jnp.uint16, 3, 60000)])
def test_randint_of_each_dtype_in_a_kernel_equals_the_draw_outside(dtype, low, high):
    # A value's two limbs are the halves of one word of the 64-bit stream (one cipher each).
    def draw(i):
        return jp.randint(STATE.split(i), TILE, low, high, dtype)
    got = jax.jit(_kernel_call(draw, interpret=True))()
    np.testing.assert_array_equal(got, _outside(draw))


# A half-infinite interval by default; the others in the slow run (the kernel's code is one
# program whatever the bounds; their branches are checked outside kernels; a finite interval
# is test_a_tiles_own_stream_in_a_kernel_equals_the_draw_outside[truncated_normal], also slow).
@pytest.mark.parametrize("lower, upper", [
    pytest.param(0.5, 3.0, marks=pytest.mark.slow),
    pytest.param(-2.0, -0.5, marks=pytest.mark.slow),
    pytest.param(1.0, 1.0, marks=pytest.mark.slow), (-np.inf, 0.3),
    pytest.param(0.0, 1e-3, marks=pytest.mark.slow)])
def test_truncated_normal_of_known_bounds_in_a_kernel_equals_the_draw_outside(lower, upper):
    # Inside a kernel, concrete scalar bounds are prepared on the host and ndtri traces only the
    # branches of [Phi(a), Phi(b)]: a mirrored interval, one below 0 (no complement), a point,
    # an infinite bound (p can be 0) and one next to 0.
    def draw(i):
        return jp.truncated_normal(STATE.split(i), lower, upper, TILE)
    got = jax.jit(_kernel_call(draw, interpret=True))()
    np.testing.assert_array_equal(got, _outside(draw))


# bits by default, normal (a map of the same words; its kernel lowering's values are checked in
# kernels) in the slow run.
@pytest.mark.parametrize("name", ["bits", pytest.param("normal", marks=pytest.mark.slow)])
def test_outside_a_kernel_the_kernel_lowering_gives_the_same_values(name):
    # XLA's CPU compiler takes ~10 s a sampler for this unrolled form; two show it.
    draw = SAMPLERS[name]
    with jp.force_lowering("kernel"):
        got = np.asarray(jax.jit(draw)(STATE))
    np.testing.assert_array_equal(got, draw(STATE))


def _docs_example(*, interpret: bool) -> dict:
    """The dropout kernel of docs/kernels.md, run as its text stands (``interpret=True`` added
    to run it on this CPU)."""
    text = (pathlib.Path(__file__).parents[2] / "docs" / "kernels.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    call = "out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))(x)"
    assert call in code
    namespace = {}
    exec(code.replace(call, call[:-4] + f", interpret={interpret})(x)"), namespace)
    return namespace


def test_the_docs_example_masks_each_tile_as_bernoulli_outside():
    example = _docs_example(interpret=True)
    x = jnp.ones((32, 128), jnp.float32)
    got = jax.jit(example["dropout"])(x)
    keep = np.concatenate([np.asarray(jp.bernoulli(example["state"].split(i), 0.9, (8, 128)))
                           for i in range(4)])
    np.testing.assert_array_equal(got, np.where(keep, np.float32(1) / np.float32(0.9), 0))
    lowered = jax.jit(_docs_example(interpret=False)["dropout"]).trace(x).lower(
        lowering_platforms=("tpu",)).as_text()
    assert lowered.count("tpu_custom_call") == 1


# The edges by default (0 and 1, 2**-32, the float32 below 1, a subnormal p); 2**-30, 0.3 and
# 0.5 (thresholds inside the range, one comparison as at the edges) in the slow run.
@pytest.mark.parametrize("p", slow_except(
    [0.0, 2.0 ** -32, 2.0 ** -30, 0.3, 0.5, 1 - 2.0 ** -24, 1.0, 1e-40],
    keep=[0.0, 2.0 ** -32, 1 - 2.0 ** -24, 1.0, 1e-40]))
def test_bernoulli_of_a_concrete_p_in_a_kernel_is_the_draw_outside(p):
    # In a kernel a concrete scalar p is one comparison with ceil(p * 2**32) (Mosaic GPU's
    # layout inference did not finish on the thresholds' form); the same decision.
    with jp.force_lowering("kernel"):
        got = jax.jit(lambda: jp.bernoulli(STATE, p, (1 << 16,)))()
    np.testing.assert_array_equal(got, jp.bernoulli(STATE, p, (1 << 16,)))
