"""The CPU plan (``_cpu_plan.plan``) as a pure function: its decisions at each constant's
threshold, on either side, under forced layouts, and the geometry it hands the emitters (boxes
and tiles that cover the output, chunks whose blocks hold their values). Nothing is traced here;
that the emitters give the same values in every layout is checked in test_chunk_layout.py and
test_vmap_lanes.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from jaxpmac._lowering import _cpu_plan as cp
from jaxpmac._lowering._cpu_plan import Host, Layout, Window

ONE_DEVICE = Host(devices=1, cores=2)
ONE_CORE = Host(devices=1, cores=1)
EIGHT_DEVICES = Host(devices=8, cores=2)
U32, U8 = 8, 32                                     # stream elements per block
CHUNK = cp.CPU_CHUNK_BLOCKS * U32                   # uint32 values in a full chunk


def stream(n: int, per_block: int = U32, *, skip: int | None = 0, **kw) -> Window:
    """A window of ``n`` values from element ``skip`` (None: traced) of one stream."""
    return Window(n=n, n_blocks=-(-(n + (skip or 0)) // per_block) + (skip is None),
                  per_block=per_block, skip=skip, **kw)


def lanes(n_lanes: int, n: int, per_block: int = U32, *, skip: int | None = 0,
          **kw) -> Window:
    """The same window in each of ``n_lanes`` vmapped lanes."""
    return stream(n, per_block, skip=skip, lanes=n_lanes, **kw)


def mapped(shape=None) -> dict:
    """A one-word sampler's map (values as wide as its words), of values of ``shape``."""
    return dict(map_keeps_width=True, map_shape=shape)


# -- the buffer ------------------------------------------------------------------------------
@pytest.mark.parametrize("window", (stream(3 * CHUNK), lanes(4096, 1024)), ids=("one", "lanes"))
def test_the_buffer_is_flat_on_one_device_rows_on_several_unless_forced(window):
    assert cp.plan(window, ONE_DEVICE).buffer == "flat"
    assert cp.plan(window, EIGHT_DEVICES).buffer == "rows"
    assert cp.plan(window, ONE_DEVICE, Layout(buffer="rows")).buffer == "rows"
    assert cp.plan(window, EIGHT_DEVICES, Layout(buffer="flat")).buffer == "flat"


def test_the_plan_of_this_process_follows_force_cpu_layout():
    window = stream(3 * CHUNK, **mapped())
    with cp.force_cpu_layout(buffer="rows"):
        assert cp.current(window).buffer == "rows"
    with cp.force_cpu_layout(buffer="flat", map_placement="in_loop"):
        assert (cp.current(window).buffer, cp.current(window).map_placement) == (
            "flat", "in_loop")
    assert cp.forced_layout() == Layout()


# -- one stream: the loop and the chunk size --------------------------------------------------
@pytest.mark.parametrize("n_blocks, chunk", [(1024, 1024), (6143, 1024), (6144, 1024),
                                             (12 * cp.MIN_CPU_CHUNK_BLOCKS - 1, 1024),
                                             (12 * cp.MIN_CPU_CHUNK_BLOCKS, 2048),
                                             (6 * cp.CPU_CHUNK_BLOCKS - 1, 2048),
                                             (6 * cp.CPU_CHUNK_BLOCKS, 4096), (1 << 20, 4096)])
def test_a_chunk_is_a_sixth_of_a_small_draw_between_the_smallest_and_the_usual(n_blocks, chunk):
    assert cp.chunk_blocks(n_blocks) == chunk


@pytest.mark.parametrize("host", (ONE_DEVICE, EIGHT_DEVICES), ids=("flat", "rows"))
def test_a_window_that_one_chunk_holds_runs_no_loop(host):
    smallest = cp.MIN_CPU_CHUNK_BLOCKS * U32
    assert cp.plan(stream(smallest), host).loop == "none"
    assert cp.plan(stream(smallest + 1), host).loop == "chunks"


def test_rows_hold_every_block_of_the_window_a_chunk_a_row():
    window = stream(3 * CHUNK + 13, skip=3)
    plan = cp.plan(window, EIGHT_DEVICES, Layout(map_placement="after"))
    assert (plan.loop, plan.buffer, plan.map_placement) == ("chunks", "rows", "in_loop")
    rows, row = plan.buffer_shape
    assert row == plan.chunks.blocks * U32
    assert (rows - 1) * plan.chunks.blocks < window.n_blocks <= rows * plan.chunks.blocks


# -- one stream: where a one-word map runs -----------------------------------------------------
def test_a_map_runs_after_the_chunk_loop_from_its_threshold():
    at = cp.MAP_AFTER_LOOP_MIN_ELEMENTS
    assert cp.plan(stream(at, **mapped()), ONE_DEVICE).map_placement == "after"
    assert cp.plan(stream(at - U32, **mapped()), ONE_DEVICE).map_placement == "in_loop"


@pytest.mark.parametrize("host, forced, keeps_width", [
    (ONE_CORE, Layout(), True),                      # no second core to gain
    (EIGHT_DEVICES, Layout(), True),                 # rows: no pass in place
    (ONE_DEVICE, Layout(), False),                   # narrower values (bernoulli's bytes)
    (ONE_DEVICE, Layout(map_placement="in_loop"), True),
    (ONE_DEVICE, Layout(buffer="rows", map_placement="after"), True),
    (ONE_DEVICE, Layout(map_placement="after"), False),
])
def test_a_map_stays_in_the_loop_where_after_it_is_not_in_place_or_not_faster(host, forced,
                                                                             keeps_width):
    window = stream(4 * cp.MAP_AFTER_LOOP_MIN_ELEMENTS, map_keeps_width=keeps_width)
    assert cp.plan(window, host, forced).map_placement == "in_loop"


@pytest.mark.parametrize("host", (ONE_DEVICE, ONE_CORE))
def test_a_forced_map_after_the_loop_holds_below_the_threshold_and_on_one_core(host):
    window = stream(3 * CHUNK, **mapped())
    assert cp.plan(window, host, Layout(map_placement="after")).map_placement == "after"


def test_a_map_after_the_loop_has_a_buffer_of_its_values_shape():
    window = stream(999 * 999, **mapped((999, 999)))
    assert cp.plan(window, ONE_DEVICE).buffer_shape == (999, 999)
    assert cp.plan(window, ONE_DEVICE, Layout(map_placement="in_loop")).buffer_shape == (
        999 * 999,)


# -- chunk geometry ----------------------------------------------------------------------------
def _chunk_starts(plan: cp.CpuPlan):
    """Each chunk's box (its start indices) and its first value's position in its stream."""
    chunks = plan.chunks
    for i in range(chunks.boxes.count):
        outer, start, index = chunks.boxes.at(np.int64(i))
        first = (int(outer) % chunks.stream_outers * chunks.axis_values
                 + int(start) * chunks.inner)
        yield [int(x) for x in index], first


WINDOWS = {
    "uneven": stream(3 * CHUNK + 13),
    "offset": stream(3 * CHUNK, skip=5),
    "traced_offset": stream(3 * CHUNK, skip=None),
    "uint8_uneven": stream(5 * CHUNK + 7, U8, skip=3),
    "rows_whole": stream(999 * 999, **mapped((999, 999))),
    "rows_cut": stream(99 * 999, **mapped((99, 999)), skip=2),
    "long_prime_rows": stream(5 * 32771, **mapped((5, 32771))),
    "lanes_long": lanes(3, 70001, **mapped()),
    "lanes_long_offset": lanes(2, 5 * CHUNK, skip=None),
    "lanes_nested": lanes(6, 70007, **mapped((7, 10001)), folded=(2, 3)),
}


@pytest.mark.parametrize("window", WINDOWS.values(), ids=WINDOWS.keys())
def test_chunk_boxes_cover_the_buffer_and_their_blocks_hold_their_values(window):
    plan = cp.plan(window, ONE_DEVICE)
    chunks = plan.chunks
    assert (plan.loop, plan.buffer) == ("chunks", "flat")
    assert math.prod(plan.buffer_shape) == window.n * (window.lanes or 1)
    assert plan.buffer_shape[:chunks.lane_axes] == plan.lanes
    assert chunks.values <= cp.CPU_CHUNK_BLOCKS * window.per_block
    written = np.zeros(plan.buffer_shape, np.int8)
    offsets = set()
    for index, first in _chunk_starts(plan):
        box = tuple(slice(start, start + size) for start, size in zip(index, chunks.boxes.box))
        written[box] = 1
        assert first + chunks.values <= window.n
        if window.skip is not None:
            offset = (first + window.skip) % window.per_block
            offsets.add(offset)
            assert offset + chunks.values <= chunks.blocks * window.per_block
    assert written.min() == 1
    if chunks.cut == "none":
        assert offsets == {0} and chunks.values == chunks.blocks * window.per_block
    else:   # any chunk's offset in its first block: one block more than its values need
        assert chunks.blocks * window.per_block >= chunks.values + window.per_block - 1
    if chunks.cut in ("static", "select"):
        assert set(chunks.skips) == offsets


@pytest.mark.parametrize("window, cut", [
    (stream(3 * CHUNK), "none"),
    (stream(3 * CHUNK, skip=5), "static"),            # every chunk whole blocks from skip
    (stream(3 * CHUNK + 13), "dynamic"),              # the last chunk starts inside a block
    (stream(3 * CHUNK + 13, U8), "select"),           # 8-bit: two static slices
    (stream(5 * CHUNK, U8, skip=None), "dynamic"),
])
def test_chunks_are_cut_from_their_blocks_at_static_starts_where_they_are_known(window, cut):
    assert cp.plan(window, ONE_DEVICE).chunks.cut == cut


# -- lanes: tiles or the chunk loop ------------------------------------------------------------
@pytest.mark.parametrize("n_lanes", [1, 2, 3, 8, 12, 300, 301, 4001, 4096, 65536])
@pytest.mark.parametrize("n_blocks", [1, 2, 5, 32, 128, 129, 512, 513, 1024, 1025, 4096, 4097,
                                      16384, 125000])
def test_tiling_covers_every_block_once_per_cell(n_lanes, n_blocks):
    t = cp.tiling(n_lanes, n_blocks)
    tile = t.lanes_per_tile * t.parts_per_tile * t.part_blocks
    assert tile <= cp.TILE_BLOCKS
    assert t.padded_lanes % t.lanes_per_tile == 0
    assert 0 <= t.padded_lanes - n_lanes < t.lanes_per_tile
    assert t.parts % t.parts_per_tile == 0
    assert t.parts * t.part_blocks >= n_blocks
    if t.parts == 1:
        assert t.part_blocks == n_blocks
    else:
        assert t.padded_lanes == n_lanes   # lanes split into parts are never padded
        assert t.parts * t.part_blocks - n_blocks < t.part_blocks * t.parts_per_tile
    if n_lanes * n_blocks >= cp.MIN_TILE_BLOCKS:
        assert tile >= min(cp.MIN_TILE_BLOCKS, n_lanes * n_blocks)


def test_lanes_are_whole_while_a_tile_holds_sharding_width_of_them():
    most = cp.TILE_BLOCKS // cp.SHARDING_WIDTH
    assert cp.tiling(64, most).parts == 1
    exact = cp.tiling(64, 2 * most)                                # parts split it exactly
    assert exact.parts % cp.SHARDING_WIDTH == 0 and exact.parts * exact.part_blocks == 2 * most
    assert cp.tiling(64, most + 1).parts == 1                      # no parts split it exactly
    assert cp.tiling(64, cp.TILE_BLOCKS + 1).parts > 1             # longer than a tile


def test_tiles_under_the_smallest_size_pad_the_lanes_instead():
    # 512 * 11 lanes of one block: tiles of 512 lanes divide them.
    assert cp.tiling(512 * 11, 1) == cp.Tiling(512, 512 * 11, 1, 1, 1)
    # 256 * 17 lanes: the largest such tile is 256 lanes, under MIN_TILE_BLOCKS blocks.
    t = cp.tiling(256 * 17, 1)
    assert t.lanes_per_tile * t.part_blocks >= cp.MIN_TILE_BLOCKS
    assert t.padded_lanes > 256 * 17


@pytest.mark.parametrize("host, order", [(ONE_DEVICE, "consecutive"),
                                         (EIGHT_DEVICES, "strided")])
def test_whole_lanes_go_in_consecutive_tiles_on_one_device_strided_on_several(host, order):
    plan = cp.plan(lanes(4001, 1024), host)
    assert (plan.loop, plan.tile_order) == ("tiles", order)
    if order == "consecutive":
        assert plan.buffer_shape == (4001, 1024)          # no lane padded
    else:
        assert plan.buffer_shape[0] == plan.tiling.padded_lanes >= 4001


# Lanes of 2048 blocks are split into parts exactly; a window of them that is not whole parts
# (its length or its offset) would be cut from the parts in a copy.
@pytest.mark.parametrize("window", [lanes(4, 2 * CHUNK), lanes(8, CHUNK // 2 - 3),
                                    lanes(8, CHUNK // 2 - 3, skip=3),
                                    lanes(8, CHUNK // 2 - 8, skip=None)],
                         ids=("longer_than_a_chunk", "not_whole_blocks", "offset",
                              "traced_offset"))
def test_long_lanes_run_the_chunk_loop_on_one_device_and_strided_parts_on_several(window):
    one = cp.plan(window, ONE_DEVICE)
    assert (one.loop, one.lanes) == ("chunks", (window.lanes,))
    several = cp.plan(window, EIGHT_DEVICES)
    assert (several.loop, several.tile_order) == ("tiles", "strided")
    assert several.tiling.parts > 1
    assert several.buffer_shape[1] >= window.n + (window.skip or 0)


def test_lanes_that_parts_split_exactly_stay_in_tiles_on_one_device():
    plan = cp.plan(lanes(8, CHUNK // 2), ONE_DEVICE)
    assert (plan.loop, plan.tile_order, plan.buffer) == ("tiles", "strided", "flat")
    assert plan.buffer_shape == (8, CHUNK // 2)


def test_nested_vmaps_lay_out_their_axes():
    plan = cp.plan(lanes(8 * 37, 1000, folded=(8, 37)), ONE_DEVICE)
    assert plan.lanes == (8, 37) and plan.buffer_shape == (8, 37, 1000)
    # Folded axes that are not these lanes' (a vmap inside the nested ones): one lane axis.
    assert cp.plan(lanes(8 * 37, 1000, folded=(8, 36)), ONE_DEVICE).lanes == (8 * 37,)


# -- lanes: where a one-word map runs ----------------------------------------------------------
def test_a_map_runs_after_the_tile_loop_from_its_lower_threshold():
    at = cp.LANES_MAP_AFTER_LOOP_MIN_ELEMENTS
    assert at < cp.MAP_AFTER_LOOP_MIN_ELEMENTS
    after = cp.plan(lanes(at // 8, 8, **mapped((8,))), ONE_DEVICE)
    assert (after.map_placement, after.buffer_shape) == ("after", (at // 8, 8))
    assert cp.plan(lanes(at // 8 - 1, 8, **mapped((8,))), ONE_DEVICE).map_placement == "in_loop"
    scalars = cp.plan(lanes(at, 1, **mapped(())), ONE_DEVICE)
    assert (scalars.map_placement, scalars.buffer_shape) == ("after", (at,))


def test_a_map_after_the_tile_loop_takes_the_values_shape():
    plan = cp.plan(lanes(256, 1024, **mapped((16, 64)), folded=(8, 32)), ONE_DEVICE)
    assert (plan.map_placement, plan.buffer_shape) == ("after", (8, 32, 16, 64))
    flat = cp.plan(lanes(256, 1024, map_keeps_width=True), ONE_DEVICE)
    assert flat.map_placement == "in_loop"      # no shape given: the pass would not be in place


def test_a_map_stays_in_strided_tiles():
    window = lanes(4096, 1024, **mapped((1024,)))
    assert cp.plan(window, EIGHT_DEVICES).map_placement == "in_loop"
    assert cp.plan(window, ONE_DEVICE, Layout(buffer="rows",
                                             map_placement="after")).map_placement == "in_loop"


def test_long_lanes_map_after_the_loop_from_the_chunk_loops_threshold():
    below = lanes(2, 40000, **mapped((40000,)))     # above the tile loop's threshold
    assert cp.plan(below, ONE_DEVICE).loop == "chunks"
    assert cp.plan(below, ONE_DEVICE).map_placement == "in_loop"
    above = lanes(4, 40000, **mapped((40000,)))
    assert cp.plan(above, ONE_DEVICE).map_placement == "after"
