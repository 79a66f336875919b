"""Vmapped draws: every lane equals its unbatched draw, and peak memory stays near the output's.

On a CPU, ``vmap`` of a draw does not batch the one-stream lowering: a ``custom_vmap`` rule hands
the examples, as lanes, to ``_stream_lanes``, which runs a tile of cells (whole lanes, or parts
of long lanes) at a time. The references here are the same draws made one example at a time
(``lax.map`` traces the draw unbatched) and, for a few lanes, the oracle. Lane counts and shapes
are chosen to cover one tile, many tiles, lane counts no tile size divides, lanes split into
parts exactly, and long lanes (the one-stream chunk loop over lanes, on one device).
"""

from __future__ import annotations

import math
import re

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized
from jax import lax

import jaxpmac as jp
from conftest import assert_equal_arrays, oracle_bits, param, slow_except, slow_where
from jaxpmac._lowering._cpu_plan import force_cpu_layout

SEED, LABELS = 77, ["lanes"]
ROOT = jp.key(SEED).split_static(*LABELS)
PER_LANE = (256,)   # 32 blocks of uint32: at most 128 lanes to a tile


def one_at_a_time(draw, *xs):
    """``draw`` of each example along the leading axis of ``xs``, unbatched, stacked."""
    return np.asarray(jax.jit(lambda xs: lax.map(lambda x: draw(*x), xs))(xs))


def uids(n: int) -> jax.Array:
    return jnp.arange(n, dtype=jnp.uint32) * np.uint32(7919) + np.uint32(3)


# Without jit (vmap op by op: the same rule and lowering as under jit) by default in one test of
# each class that has parameters (here one lane, OneBlockLanesTest one whole block); the other
# variants without jit in the slow run. Under jit by default: one lane, lanes in tiles of a
# divisor (1000) and of a power of two (4001, a prime); 3 (one tile, as one lane is), 300 and
# 301 (tiles of other divisors) in the slow run.
@slow_where(lambda name: name.endswith("__without_jit") and "_(1)__" not in name
             or any(f"_({n})__with_jit" in name for n in (3, 300, 301)))
class LaneCountTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(
        1,      # one lane
        3,      # one tile
        300,    # tiles of 100 lanes (4 x 25: all the twos, and the largest divisor that fits)
        301,    # 7 x 43: tiles of 43 lanes
        1000,   # tiles of 40 lanes
        4001)   # a prime: tiles of a power of two, the last overlapping (several devices: padded)
    def test_each_lane_is_its_unbatched_draw(self, n_lanes):
        def draw(i):
            return jp.bits(ROOT.split(i), PER_LANE)

        got = self.variant(jax.vmap(draw))(uids(n_lanes))
        assert_equal_arrays(got, one_at_a_time(draw, uids(n_lanes)))
        for lane in sorted({0, n_lanes - 1}):
            assert_equal_arrays(got[lane], oracle_bits(SEED, LABELS, [int(uids(n_lanes)[lane])],
                                                       PER_LANE[0], jnp.uint32))


# Under jit by default: the 8- and 16-bit cut last blocks, parts that split the lanes, whole
# lanes one a tile. In the slow run: the 32-bit cut last block ((1001,); uint32 stays with
# (8192,)), the long lanes' chunk loop ((4, 40001); BatchingTest.test_traced_offsets and
# test_vmapped_draws_inside_a_one_device_shard_map run that loop, test_chunk_layout's windows
# its 8-bit cuts) and every variant without jit (LaneCountTest keeps one). uint64 with x64:
# (33,) by default, the longer lanes (the same consecutive tiles) in the slow run.
@slow_where(lambda name: name.endswith("__without_jit")
             or name.endswith("(1001,), 40)__with_jit")
             or name.endswith("(4, 40001), 2)__with_jit")
             or name in ("test_uint64_with_x641", "test_uint64_with_x642"))
class ShapeTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(
        (jnp.uint8, (37,), 2500),          # 2 blocks, the last cut; tiles of 500 lanes
        (jnp.uint16, (3, 5), 5000),        # 15 of 16 elements of a block; tiles of 1000 lanes
        (jnp.uint32, (1001,), 40),         # 126 blocks, the last cut; tiles of 8 lanes
        (jnp.uint32, (8192,), 16),         # 1024 blocks: parts that split the lanes exactly
        (jnp.uint16, (33001,), 3),         # 2063 blocks: whole lanes, one a tile
        (jnp.uint8, (4, 40001), 2))        # 5001 blocks: long lanes, the chunk loop
    def test_dtypes_and_shapes(self, dtype, shape, n_lanes):
        def draw(i):
            return jp.bits(ROOT.split(i), shape, dtype)

        got = self.variant(jax.vmap(draw))(uids(n_lanes))
        assert got.shape == (n_lanes, *shape) and got.dtype == dtype
        assert_equal_arrays(got, one_at_a_time(draw, uids(n_lanes)))
        last = int(uids(n_lanes)[-1])
        assert_equal_arrays(got[-1].ravel()[:300],
                            oracle_bits(SEED, LABELS, [last], 300, dtype)[:got[-1].size])

    @parameterized.parameters(((33,), 300), ((2051,), 12), ((4100,), 3))
    def test_uint64_with_x64(self, shape, n_lanes):
        with jax.enable_x64(True):
            def draw(i):
                return jp.bits(ROOT.split(i), shape, jnp.uint64)

            got = jax.jit(jax.vmap(draw))(uids(n_lanes))
            assert_equal_arrays(got, one_at_a_time(draw, uids(n_lanes)))
            # The same lanes with x64 off draw the same 32-bit halves.
            got32 = np.asarray(got).view(np.uint32)
        with jax.enable_x64(False):
            narrow = jax.jit(jax.vmap(lambda i: jp.bits(ROOT.split(i), (2 * shape[0],))))(
                uids(n_lanes))
        assert_equal_arrays(got32, np.asarray(narrow))


# Without jit in the slow run (LaneCountTest and OneBlockLanesTest keep a variant without jit).
@slow_where(lambda name: name.endswith("__without_jit"))
class BatchingTest(chex.TestCase):
    """The rule under the ways a vmap reaches it: nested, other axes, batched states, offsets."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_nested_vmaps_and_axes(self):
        def draw(i):
            return jp.bits(ROOT.split(i), PER_LANE)

        grid = uids(300).reshape(4, 75)
        expected = one_at_a_time(draw, grid.reshape(-1)).reshape(4, 75, *PER_LANE)
        assert_equal_arrays(self.variant(jax.vmap(jax.vmap(draw)))(grid), expected)
        # Outer vmap over axis 1 (non-leading), results placed on axis 1.
        columns = self.variant(jax.vmap(jax.vmap(draw), in_axes=1, out_axes=1))(grid)
        assert_equal_arrays(columns, expected)
        # Three levels, the middle one mapping an unbatched word (a label of the outer lane).
        three = self.variant(jax.vmap(lambda row: jax.vmap(lambda i: jax.vmap(
            lambda j: jp.bits(ROOT.split(i, j), (8,)))(jnp.arange(3)))(row)))(grid[:, :5])
        for r, c, j in [(0, 0, 0), (3, 4, 2), (2, 1, 1)]:
            assert_equal_arrays(three[r, c, j], jp.bits(ROOT.split(int(grid[r, c]), j), (8,)))

    @chex.variants(with_jit=True, without_jit=True)
    def test_batched_states(self):
        states = jax.vmap(lambda i: ROOT.split(i))(uids(300))
        got = self.variant(jax.vmap(lambda s: jp.bits(s.split(5), PER_LANE)))(states)
        assert_equal_arrays(got, one_at_a_time(lambda i: jp.bits(ROOT.split(i, 5), PER_LANE),
                                               uids(300)))

    @chex.variants(with_jit=True, without_jit=True)
    def test_traced_offsets(self):
        offsets = jnp.arange(300, dtype=jnp.uint32) * np.uint32(37) + np.uint32(2**32 - 20000)
        state = ROOT.split(9)

        def at_offset(o):  # only the offset is batched
            return jp.bits(state, (99,), jnp.uint8, offset=o)

        assert_equal_arrays(self.variant(jax.vmap(at_offset))(offsets),
                            one_at_a_time(at_offset, offsets))
        assert_equal_arrays(self.variant(jax.vmap(at_offset))(offsets)[-1],
                            oracle_bits(SEED, LABELS, [9], 99, jnp.uint8,
                                        start=int(offsets[-1])))

        def both(i, o):
            return jp.bits(ROOT.split(i), (1001,), offset=o)

        assert_equal_arrays(self.variant(jax.vmap(both))(uids(300), offsets),
                            one_at_a_time(both, uids(300), offsets))

        def long_lanes(i, o):
            return jp.bits(ROOT.split(i), (40000,), offset=o)

        assert_equal_arrays(self.variant(jax.vmap(long_lanes))(uids(3), offsets[:3]),
                            one_at_a_time(long_lanes, uids(3), offsets[:3]))

    def test_static_offsets_and_block_counter_carries(self):
        def draw(i):
            return jp.bits(ROOT.split(i), (40001,), jnp.uint16, offset=5)

        assert_equal_arrays(jax.jit(jax.vmap(draw))(uids(3)), one_at_a_time(draw, uids(3)))
        with jax.enable_x64(True):
            # Offsets across block 2**32 and near the end of the stream.
            offsets = np.array([(2**32 - 3) * 8 + 5, 2**40 + 3, 2**64 - 8 * 600], np.uint64)
            offsets = np.repeat(offsets, 100)

            def at(o):
                return jp.bits(ROOT, (300,), offset=o)

            got = jax.jit(jax.vmap(at))(offsets)
            assert_equal_arrays(got, one_at_a_time(at, offsets))
        for row in (0, 150, 299):
            assert_equal_arrays(got[row], oracle_bits(SEED, LABELS, [], 300, jnp.uint32,
                                                      start=int(offsets[row])))


# Without jit by default for one whole block only. Under jit one value of the block ((): a cut
# of one block, as (5, 6) and (3,) at offset 9 are; test_uint64_with_x64_and_samplers' scalar
# normal is one word of it too) in the slow run.
@slow_where(lambda name: name.endswith("__without_jit") and "(8,), 0)__" not in name
             or name.endswith("(), 0)__with_jit"))
class OneBlockLanesTest(chex.TestCase):
    """Lanes of one block at a static counter (up to 256 bits an example, no offset past the
    first block) run the cipher under a static tweak: the same bits as any other lowering."""

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(
        (jnp.uint32, (8,), 0),     # the nesting workload's draw: one whole block
        (jnp.uint32, (), 0),       # one value of the block
        (jnp.uint8, (5, 6), 0),    # 30 of 32 elements
        (jnp.uint16, (4,), 11),    # a static offset inside block 0
        (jnp.uint32, (3,), 9))     # a static offset in block 1 (the block index is an argument)
    def test_each_lane_is_its_unbatched_draw(self, dtype, shape, offset):
        def draw(i):
            return jp.bits(ROOT.split(i), shape, dtype, offset=offset)

        got = self.variant(jax.vmap(draw))(uids(300))
        assert_equal_arrays(got, one_at_a_time(draw, uids(300)))
        for lane in (0, 299):
            assert_equal_arrays(np.asarray(got[lane]).ravel(),
                                oracle_bits(SEED, LABELS, [int(uids(300)[lane])],
                                            math.prod(shape), dtype, start=offset))

    def test_uint64_with_x64_and_samplers(self):
        with jax.enable_x64(True):
            def draw(i):
                return jp.bits(ROOT.split(i), (4,), jnp.uint64)

            got = jax.jit(jax.vmap(draw))(uids(300))
            assert_equal_arrays(got, one_at_a_time(draw, uids(300)))
        # A per-example scalar sampler (one word of the lane's block) equals the same draw
        # one example at a time.
        def normal(i):
            return jp.normal(ROOT.split(i))

        assert_equal_arrays(jax.jit(jax.vmap(normal))(uids(300)), one_at_a_time(normal, uids(300)))

    def test_the_round_loop_carries_only_the_block_words(self):
        if jax.default_backend() != "cpu":
            pytest.skip("the tiled lowering is the CPU's")
        n_lanes = 4096

        def draw(seed):
            return jax.vmap(lambda i: jp.bits(jp.key(seed).split(i), (8,)))(
                jnp.arange(n_lanes, dtype=jnp.uint32))

        text = jax.jit(draw).lower(jnp.uint32(SEED)).compile().as_text()
        loops = [line for line in text.splitlines() if " while(" in line]
        lane_arrays = [line.split(" while(")[0].count(f"u64[{n_lanes},") for line in loops]
        # Four words of the block; the tweak (counter 0, the final tweak word) is static.
        assert max(lane_arrays) == 4, loops


# A scalar and a 2-D draw by default, (3,) in the slow run.
@pytest.mark.parametrize("shape", slow_except([(), (3,), (2, 5)], keep=[(), (2, 5)]))
def test_a_lanes_map_runs_on_its_drawn_words_only(shape):
    """A sampler's map in the tile loop runs on the words a lane draws, not on the whole blocks
    that hold them (cut first: a per-example scalar normal mapped all eight words of its
    block)."""
    if jax.default_backend() != "cpu":
        pytest.skip("the tiled lowering is the CPU's")
    n_lanes = 4096

    def draw(seed):
        return jax.vmap(lambda i: jp.normal(jp.key(seed).split(i), shape))(
            jnp.arange(n_lanes, dtype=jnp.uint32))

    with force_cpu_layout(map_placement="in_loop"):
        text = jax.jit(draw).lower(jnp.uint32(SEED)).compile().as_text()
    # The tail's sqrt(-2 log p): one per value the map computes.
    roots = re.findall(r"= f32\[([\d,]*)\][^ ]* sqrt\(", text)
    assert roots, "expected the normal's square roots in the program"
    # [lanes of a tile, ..., the values a lane draws]: no word of a block beyond those.
    per_lane = {math.prod(int(d) for d in dims.split(",")[1:]) for dims in roots}
    assert per_lane == {math.prod(shape)}, roots


# Without jit in the slow run (the same transforms; LaneCountTest keeps a variant without jit).
@slow_where(lambda name: name.endswith("__without_jit"))
class TransformTest(chex.TestCase):
    """Vmapped draws inside the transforms a model applies around them."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_grad_checkpoint_and_scan(self):
        ids = uids(300)
        noise = one_at_a_time(lambda i: jp.bits(ROOT.split(i), PER_LANE), ids)
        noise = noise.astype(np.float32) / np.float32(2**32)
        x = np.linspace(-1.0, 1.0, PER_LANE[0], dtype=np.float32)

        def loss(w, ids):
            def one(i):
                u = jp.bits(ROOT.split(i), PER_LANE).astype(jnp.float32) / np.float32(2**32)
                return jnp.sum((w * x + u) ** 2)
            return jnp.sum(jax.vmap(jax.checkpoint(one))(ids))

        expected = np.sum(2 * (2.0 * x + noise) * x, dtype=np.float64)
        np.testing.assert_allclose(self.variant(jax.grad(loss))(2.0, ids), expected, rtol=1e-4)
        # Per-example gradients: vmap of grad.
        per_example = self.variant(jax.vmap(jax.grad(loss), in_axes=(None, 0)))(
            2.0, ids.reshape(300, 1))
        np.testing.assert_allclose(per_example, np.sum(2 * (2.0 * x + noise) * x, axis=1),
                                   rtol=1e-4)

        def scanned(ids):   # a scan over vmapped draws, and a vmap over scanned ones
            return (lax.scan(lambda c, row: (c, jax.vmap(lambda i: jp.bits(
                        ROOT.split(i), PER_LANE))(row)), 0, ids.reshape(4, 75))[1],
                    jax.vmap(lambda row: lax.scan(lambda c, i: (c, jp.bits(
                        ROOT.split(i), PER_LANE)), 0, row)[1])(ids.reshape(4, 75)))

        bits = one_at_a_time(lambda i: jp.bits(ROOT.split(i), PER_LANE), ids)
        for got in self.variant(scanned)(ids):
            assert_equal_arrays(got.reshape(300, *PER_LANE), bits)

    def test_jvp_with_float0_tangents(self):
        ids = uids(300)

        def draw(ids):
            return jax.vmap(lambda i: jp.bits(ROOT.split(i), PER_LANE))(ids)

        primal, tangent = jax.jvp(draw, (ids,), (np.zeros(ids.shape, jax.dtypes.float0),))
        assert_equal_arrays(primal, one_at_a_time(lambda i: jp.bits(ROOT.split(i), PER_LANE),
                                                  ids))
        assert tangent.dtype == jax.dtypes.float0


# Without jit in the slow run (LaneCountTest keeps a variant without jit).
@slow_where(lambda name: name.endswith("__without_jit"))
class InteropTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True)
    def test_vmapped_jax_random_keys(self):
        keys = jax.vmap(lambda i: jp.as_jax_key(ROOT.split(i)))(uids(300))
        got = self.variant(jax.vmap(lambda k: jax.random.bits(k, PER_LANE, jnp.uint32)))(keys)
        expected = one_at_a_time(lambda i: jp.bits(ROOT.split(i), PER_LANE), uids(300))
        assert_equal_arrays(got, expected)
        folded = self.variant(jax.vmap(lambda i: jax.random.bits(
            jax.random.fold_in(jp.as_jax_key(ROOT), i), PER_LANE, jnp.uint32)))(uids(300))
        assert_equal_arrays(folded, expected)

    def test_explicit_draws_inside_randomized(self):
        model = jp.randomized(lambda ids: jax.vmap(
            lambda i: jp.bits(ROOT.split(i), PER_LANE))(ids) + jp.rand.bits(PER_LANE))
        got = model(jp.key(1), uids(300))
        implicit = model(jp.key(1), jnp.zeros(300, jnp.uint32)) - jax.vmap(
            lambda i: jp.bits(ROOT.split(i), PER_LANE))(jnp.zeros(300, jnp.uint32))
        expected = one_at_a_time(lambda i: jp.bits(ROOT.split(i), PER_LANE), uids(300))
        assert_equal_arrays(got - implicit, expected)


# -- peak memory (memory_analysis: a property of the compiled program, not a timing) -----------
def _peak_over_output(draw) -> float:
    memory = jax.jit(draw).lower(jnp.uint32(SEED)).compile().memory_analysis()
    if memory is None:
        pytest.skip("this backend reports no memory analysis")
    peak = (memory.temp_size_in_bytes + memory.output_size_in_bytes
            + memory.argument_size_in_bytes)
    return peak / memory.output_size_in_bytes


# In the slow run: the prime lane count (test_mapped_lanes_peak_memory_is_near_the_output
# keeps 4001 lanes), the long lanes at static offsets (the same loop as at traced ones) and the
# 2-D long lanes (test_mapped_lanes_peak_memory_is_near_the_output keeps (999, 999)).
@pytest.mark.parametrize("shape, n_lanes, offset", [
    ((1024,), 4096, None),      # the benchmark's vmap workload: 16 MiB of output
    ((1024,), 4096, "traced"),  # a traced offset per lane
    # a prime lane count: the last tile overlaps (padded: 2.03x)
    pytest.param((1024,), 4001, None, marks=pytest.mark.slow),
    # long lanes: the chunk loop, a piece of a lane a step
    pytest.param((131072,), 8, None, marks=pytest.mark.slow),
    ((131072,), 8, "traced"),   # the same at traced offsets (tiles of parts: 2.0x)
    ((70001,), 5, None),        # long lanes that parts do not split (tiles of parts: 2.08x)
    pytest.param((999, 999), 4, None, marks=pytest.mark.slow),   # (tiles of parts: 2.0x)
])
def test_vmap_peak_memory_is_near_the_output(shape, n_lanes, offset):
    if jax.default_backend() != "cpu":
        pytest.skip("the tiled lowering is the CPU's")

    def draw(seed):
        k = jp.key(seed)
        ids = jnp.arange(n_lanes, dtype=jnp.uint32)
        if offset is None:
            return jax.vmap(lambda i: jp.bits(k.split(i), shape))(ids)
        return jax.vmap(lambda i: jp.bits(k.split(i), shape, offset=i * np.uint32(3)))(ids)

    assert _peak_over_output(draw) <= 1.5


# check_vma on for both lowerings by default, off for the tiles; off for the long lanes in the
# slow run.
@pytest.mark.parametrize("check_vma, shape, n_lanes", [
    param(check_vma, shape, n_lanes, id=f"{check_vma}-{lowering}",
          slow=(check_vma, lowering) == (False, "long_lanes"))
    for check_vma in (True, False)
    for lowering, shape, n_lanes in (("consecutive_tiles", (1024,), 7),
                                     ("long_lanes", (70001,), 3))])
def test_vmapped_draws_inside_a_one_device_shard_map(check_vma, shape, n_lanes):
    """The one-device lowerings (tiles of consecutive lanes, the chunk loop over long lanes)
    start their buffers varying over the mesh axes like the words written into them."""
    mesh = jax.make_mesh((1,), ("x",))
    lanes = jnp.arange(n_lanes, dtype=jnp.uint32)
    per_device = jax.shard_map(
        lambda: jax.vmap(lambda i: jp.normal(ROOT.split(lax.axis_index("x"), i), shape))(
            lanes)[None],
        mesh=mesh, in_specs=(), out_specs=jax.sharding.PartitionSpec("x"), check_vma=check_vma)
    assert_equal_arrays(jax.jit(per_device)()[0],
                        one_at_a_time(lambda i: jp.normal(ROOT.split(0, i), shape), lanes))


# -- one-word samplers: the map after the tile loop or in it ----------------------------------
# With one device, a vmapped one-word sampler (normal, exponential, uniform's unit) of at least
# _cpu_plan.LANES_MAP_AFTER_LOOP_MIN_ELEMENTS values in all (long lanes: the chunk loop's
# _cpu_plan.MAP_AFTER_LOOP_MIN_ELEMENTS) writes raw words in tiles of consecutive
# lanes (or, for long lanes, in the one-stream chunk loop) into a buffer of its final shape and
# maps them after the loop, in place, on all cores; so do the folded lanes of nested vmaps,
# in a buffer of the nested axes' shape.
MAPPED = {
    "normal": lambda k, shape: jp.normal(k, shape),
    "exponential": lambda k, shape: jp.exponential(k, shape),
    "uniform_traced_bounds": lambda k, shape: jp.uniform(
        k, shape, minval=-(jp.bits(k.split(1), ()) >> 28).astype(jnp.float32), maxval=3.0),
}
# normal in the default run; exponential (the same one-word map) and uniform with traced bounds
# (a pass of its own) in the slow run.


def _vmapped(name, shape, n_lanes, *, nested=False):
    def draw(seed):
        k = jp.key(seed).split_static("mapped")
        if nested:
            inner = n_lanes // 8
            return jax.vmap(lambda i: jax.vmap(lambda j: MAPPED[name](k.split(i, j), shape))(
                jnp.arange(inner, dtype=jnp.uint32)))(jnp.arange(8, dtype=jnp.uint32))
        return jax.vmap(lambda i: MAPPED[name](k.split(i, 0), shape))(
            jnp.arange(n_lanes, dtype=jnp.uint32))
    return draw


# By default whole lanes of two axes (the tile loop) and the folded long lanes of nested vmaps
# (the chunk loop); in the slow run the same loops in other shapes, the nested vmaps' tiles
# (test_three_nested_vmaps_build_their_lanes_in_place keeps them) and the prime lane count
# (LaneCountTest keeps 4001 lanes).
SLOW = pytest.mark.slow


@pytest.mark.parametrize("name", slow_except(MAPPED, ("normal",)))
@pytest.mark.parametrize("shape, n_lanes, nested", [
    # whole lanes: the map after the loop
    pytest.param((1024,), 256, False, marks=SLOW),
    ((16, 64), 256, False),    # lanes of two axes
    # lanes of 125 blocks
    pytest.param((1000,), 250, False, marks=SLOW),
    # folded lanes of nested vmaps: a buffer of the nested axes
    pytest.param((1024,), 256, True, marks=SLOW),
    # a prime lane count: the last tile overlaps the one before
    pytest.param((1024,), 4001, False, marks=SLOW),
    # long lanes: the one-stream chunk loop over lanes
    pytest.param((1 << 17,), 2, False, marks=SLOW),
    ((70001,), 16, True),      # the same, the folded lanes of nested vmaps
])
def test_mapped_lanes_equal_their_unbatched_draws_wherever_the_map_runs(name, shape, n_lanes,
                                                                       nested):
    draw = _vmapped(name, shape, n_lanes, nested=nested)
    got = {}
    for after in (True, False):
        with force_cpu_layout(map_placement="after" if after else "in_loop"):
            got[after] = np.asarray(jax.jit(draw)(jnp.uint32(SEED)))
    np.testing.assert_array_equal(got[True], got[False])
    lanes = got[True].reshape(n_lanes, *shape)
    k = jp.key(SEED).split_static("mapped")
    for lane in sorted({0, n_lanes // 2, n_lanes - 1}):
        i, j = divmod(lane, n_lanes // 8) if nested else (lane, 0)
        np.testing.assert_array_equal(lanes[lane], np.asarray(MAPPED[name](k.split(i, j), shape)))


@pytest.mark.parametrize("name", slow_except(MAPPED, ("normal",)))
def test_three_nested_vmaps_build_their_lanes_in_place(name):
    """Lanes folded from three vmaps (3 x 5 x 37: tiles are boxes of that grid, the last of
    each run overlapping) equal their unbatched draws, and the passes after them are in
    place."""
    k = jp.key(SEED).split_static("three")
    axes = [jnp.arange(size, dtype=jnp.uint32) for size in (3, 5, 37)]

    def draw(seed):
        state = k.split(seed)
        return jax.vmap(lambda a: jax.vmap(lambda b: jax.vmap(
            lambda c: MAPPED[name](state.split(a, b, c), (1024,)))(axes[2]))(axes[1]))(axes[0])

    got = np.asarray(jax.jit(draw)(jnp.uint32(SEED)))
    for a, b, c in [(0, 0, 0), (2, 4, 36), (1, 3, 17)]:
        np.testing.assert_array_equal(
            got[a, b, c], np.asarray(MAPPED[name](k.split(SEED, a, b, c), (1024,))))
    if jax.default_backend() == "cpu":
        assert _peak_over_output(draw) <= 1.5


# By default whole lanes of two axes, 2-D long lanes, a prime lane count and nested long lanes;
# in the slow run the 1-D whole lanes (the same tiles), the nested tiles
# (test_three_nested_vmaps_build_their_lanes_in_place bounds them) and the 1-D long lanes (the
# same chunk loop).
@pytest.mark.parametrize("name", slow_except(MAPPED, ("normal",)))
@pytest.mark.parametrize("shape, n_lanes, nested", [
    pytest.param((1024,), 1024, False, marks=SLOW), ((32, 32), 1024, False),
    pytest.param((1000,), 1000, False, marks=SLOW), pytest.param((1024,), 1024, True, marks=SLOW),
    ((999, 999), 4, False), pytest.param((70001,), 16, False, marks=SLOW),
    ((1024,), 4001, False), ((70001,), 16, True)])
def test_mapped_lanes_peak_memory_is_near_the_output(name, shape, n_lanes, nested):
    """Nested vmaps too: their folded lanes are built in the nested axes' shape, so the passes
    after them run in place (``uniform`` with traced bounds scales in a pass of its own: 2.09x
    while the lanes were built flat and reshaped afterwards)."""
    if jax.default_backend() != "cpu":
        pytest.skip("the tiled lowering is the CPU's")
    assert _peak_over_output(_vmapped(name, shape, n_lanes, nested=nested)) <= 1.5
