"""Stream windows of many messages at once on a CPU: the lowering of a vmapped draw.

``vmap`` of the one-stream CPU lowering (``_chunks``) runs its cipher loop on every block of
every example at once, the loop's words for all of them live next to the output
(benchmarks/README.md, "Constants of the CPU lowering"). :func:`lanes_window` computes the same
windows over an explicit axis of *lanes*, one per example, a tile of about
:data:`TILE_BLOCKS` blocks at a time, each tile written into the output in place.

The cells of the tiles are whole lanes, or *parts* of lanes (equal ranges of consecutive
blocks) where lanes are long, and tiles are strided over lanes and parts
(``_lanes.in_strided_tiles``), so that an output sharded by lanes, by elements or both has
every tile span the devices: each device computes its own cells, with no collectives. With one
device nothing is sharded, and the lowering builds its result in the final shape instead, so
that the passes after it (a one-word sampler's map, run after the loop on all cores: see
:func:`_maps_after_loop`; a scaling) run in place: whole lanes go in tiles of consecutive lanes
(``_lanes.in_consecutive_tiles``), boxes of the nested vmaps' axes, and long lanes (longer than
a chunk, or in parts that would be cut in a copy) run the one-stream chunk loop over lanes
(``_chunks.chunked_in_place``), a piece of one lane a step.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _stream
from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering import _chunks
from jaxpmac._lowering import _lanes
from jaxpmac._lowering._encrypt import encrypt_as
from jaxpmac._lowering._word_maps import mapped_dtype

# Blocks per tile, chosen on its own (not tied to _chunks.CPU_CHUNK_BLOCKS): a tile step also
# gathers its cells' words and writes a strided piece of the output, so larger steps pay off
# until the working words leave the L2 cache; 4096 keeps a margin below that edge
# (benchmarks/README.md, "Constants of the CPU lowering").
TILE_BLOCKS = 4096

# Tiles of fewer blocks run slower than the old batched lowering, whose large fusions use all
# cores where a tile uses one (benchmarks/README.md, "Constants of the CPU lowering"). Where
# no divisor of the lane count makes tiles this large, the lanes are padded to whole tiles,
# at the price of a copy of the output.
MIN_TILE_BLOCKS = 512

# A one-word map of the tiles runs after the tile loop (see _maps_after_loop) from this many
# values, a smaller draw than the chunk loop's _chunks.MAP_AFTER_LOOP_MIN_ELEMENTS: in a tile a
# lane's few values are gathered from its blocks, which costs the map in the loop more
# (benchmarks/README.md, "Constants of the CPU lowering").
LANES_MAP_AFTER_LOOP_MIN_ELEMENTS = 1 << 15

# Tiles span this many lanes, and parts of a lane, where the shapes allow: a sharded output's
# lane and element axes then split over up to this many devices with every tile spanning them.
SHARDING_WIDTH = 8


@dataclasses.dataclass(frozen=True)
class Tiling:
    """How :func:`lanes_window` cuts its lanes into tiles of cells."""

    lanes_per_tile: int
    padded_lanes: int      # lanes rounded up to whole tiles (copies of the last lane)
    parts: int             # parts per lane (1: whole lanes)
    part_blocks: int       # blocks per part (parts * part_blocks >= the lane's blocks)
    parts_per_tile: int


def _power_of_two_at_most(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def _largest_power_of_two_dividing(n: int, at_most: int) -> int:
    p = 1
    while p * 2 <= at_most and n % (p * 2) == 0:
        p *= 2
    return p


def _largest_divisor_keeping_twos(n: int, at_most: int) -> int:
    """The largest divisor of ``n`` up to ``at_most`` that is a multiple of the largest power of
    two dividing ``n`` (up to ``at_most``): as large as it gets while a sharded lane axis, split
    in two, four, eight..., still splits the tiles evenly."""
    twos = _largest_power_of_two_dividing(n, at_most)
    rest = n // twos
    return twos * next(d for d in range(at_most // twos, 0, -1) if rest % d == 0)


def _whole_lanes(n_lanes: int, n_blocks: int) -> Tiling:
    """Whole lanes as cells: as many per tile as divide the lanes (see
    :func:`_largest_divisor_keeping_twos`), unless such tiles are under
    :data:`MIN_TILE_BLOCKS` blocks; then the lanes are padded to whole tiles."""
    most = TILE_BLOCKS // n_blocks
    if n_lanes <= most:
        return Tiling(n_lanes, n_lanes, 1, n_blocks, 1)
    per_tile = _largest_divisor_keeping_twos(n_lanes, most)
    if per_tile * n_blocks < MIN_TILE_BLOCKS:
        per_tile = _power_of_two_at_most(most)
    return Tiling(per_tile, -(-n_lanes // per_tile) * per_tile, 1, n_blocks, 1)


def _lane_parts(n_lanes: int, n_blocks: int, *, exact_only: bool) -> Tiling | None:
    """Parts of lanes as cells: tiles of up to :data:`SHARDING_WIDTH` lanes (a power of two
    dividing the lanes: never padded) by :data:`SHARDING_WIDTH` parts.

    The largest parts that split a lane exactly, in tiles of down to an eighth of
    :data:`TILE_BLOCKS`; if there are none, the smallest such parts (padding a lane with the
    fewest blocks), or None if ``exact_only``.
    """
    per_tile = _largest_power_of_two_dividing(n_lanes, SHARDING_WIDTH)
    largest = max(1, TILE_BLOCKS // (per_tile * SHARDING_WIDTH))   # blocks per part
    smallest = max(1, largest // 8)
    exact = [size for size in range(largest, smallest - 1, -1)
             if n_blocks % (size * SHARDING_WIDTH) == 0]
    if not exact and exact_only:
        return None
    part_blocks = exact[0] if exact else smallest
    parts = -(-n_blocks // part_blocks)
    parts = -(-parts // SHARDING_WIDTH) * SHARDING_WIDTH
    return Tiling(per_tile, n_lanes, parts, part_blocks, SHARDING_WIDTH)


def tiling(n_lanes: int, n_blocks: int) -> Tiling:
    """The tiles of ``n_lanes`` lanes of ``n_blocks`` blocks each.

    Whole lanes where a tile holds :data:`SHARDING_WIDTH` of them. Longer lanes are split into
    parts, so that tiles still span lanes and elements: always where a lane is longer than a
    tile, else only where parts split the lanes exactly. Why only then: tiles of whole lanes
    cut their lanes' windows themselves, while lanes padded with blocks (and windows at a
    traced offset, in parts) are cut to the output at the end, in a copy of it (with several
    devices; one device runs such lanes in the chunk loop, see :func:`lanes_window`).
    """
    if n_blocks * SHARDING_WIDTH <= TILE_BLOCKS:
        return _whole_lanes(n_lanes, n_blocks)
    if n_blocks <= TILE_BLOCKS:
        return (_lane_parts(n_lanes, n_blocks, exact_only=True)
                or _whole_lanes(n_lanes, n_blocks))
    return _lane_parts(n_lanes, n_blocks, exact_only=False)


def _cell_blocks(cell_shape: tuple[int, ...], h, final_tweak, first_block, n_blocks: int,
                 dtype) -> jax.Array:
    """The first ``n_blocks`` blocks from each cell's ``first_block``, ``[*cell_shape,
    n_blocks * per block]``: dynamic words are ``uint64`` arrays broadcasting against
    ``cell_shape`` (x64 on)."""

    def column(x):  # a cell's word, against its blocks along the last axis
        return x if w.is_static(x) else x[..., None]

    block = [column(x) for x in h]
    dynamic = [i for i, x in enumerate(block) if not w.is_static(x)]
    if n_blocks == 1 and w.is_static(first_block) and w.is_static(final_tweak) and dynamic:
        # One block a cell at a static counter (a vmapped draw of up to 256 bits per example
        # without an offset): the tweak is static, so it is folded into the cipher's subkey
        # table instead of being two more arrays the size of the cell carried through the
        # round loop, which cost memory and time (benchmarks/README.md, "Constants of the CPU
        # lowering").
        counters = first_block
        block[dynamic[0]] = jnp.broadcast_to(block[dynamic[0]], (*cell_shape, 1))
    else:
        offsets = lax.iota(jnp.uint32, n_blocks).astype(jnp.uint64)
        counters = jnp.broadcast_to(w.add(column(first_block), offsets),
                                    (*cell_shape, n_blocks))
    words = encrypt_as("rolled", _threefish.GENERATOR_KEY, (column(final_tweak), counters),
                       block, native=True)
    return _stream.blocks_to_stream(words, dtype).reshape(*cell_shape, -1)


def _cut_rows(rows: jax.Array, skip, n: int) -> jax.Array:
    """Elements ``skip .. skip + n - 1`` along the last axis (``skip`` a static int or an int32
    array broadcasting against the other axes)."""
    if isinstance(skip, int):
        return rows if (skip, n) == (0, rows.shape[-1]) else rows[..., skip:skip + n]
    def cut(row, start):
        return lax.dynamic_slice_in_dim(row, start, n)

    for _ in range(rows.ndim - 1):
        cut = jax.vmap(cut)
    return cut(rows, jnp.broadcast_to(skip, rows.shape[:-1]))


def _maps_after_loop(t: Tiling, n_lanes: int, n: int, dtype, word_map, out_dtype) -> bool:
    """Whether the tiles hold raw words and ``word_map`` runs after the tile loop, in place,
    on all cores (``_chunks.map_after_loop``), the tiles then being consecutive lanes in a
    buffer of the values' final shape ``[*lane axes, *word_map.shape]``
    (``_lanes.in_consecutive_tiles``).

    Only where that is the final shape: whole lanes (consecutive tiles pad none) on one device.
    Elsewhere the pass would not be in place (a copy of the output: benchmarks/README.md,
    "Constants of the CPU lowering"), so the map stays in the loop.
    """
    return (t.parts == 1
            and word_map is not None and word_map.shape is not None
            and math.prod(word_map.shape) == n
            and _chunks.map_after_loop(word_map, dtype, out_dtype, n_lanes * n,
                                       min_elements=LANES_MAP_AFTER_LOOP_MIN_ELEMENTS))


def lanes_window(h, final_tweak, first_block, skip, *, n: int, n_blocks: int, dtype,
                 word_map=None, x64: bool = False,
                 folded: tuple[int, ...] | None = None) -> jax.Array:
    """``_window.stream_window`` of every lane, ``[L, n]``, on a CPU.

    Args:
        h, final_tweak, first_block: the words of :func:`_window.stream_window`, each a static
            int or a dynamic word (``Pair`` or ``uint64``) of shape ``[L]``, or ``[1]`` (shared
            by every lane).
        skip: a static int or an int32 array ``[L]`` or ``[1]``.
        n, n_blocks, dtype, word_map: as for :func:`_window.stream_window`; ``x64``: whether
            the caller has x64 on (``word_map`` runs with it, not with this function's x64).
        folded: None, or the axis sizes of the nested vmaps whose examples the lanes are
            (``_lanes.batched_by_lanes``): on one device the result is built in their shape,
            so that passes after it (a sampler's map, a scaling) run in place.

    Returns:
        Row ``l`` is ``_window.stream_window`` of lane ``l``'s words, bit for bit.
    """
    # uint64 words whether or not x64 is on, as in _chunks.chunked_via_uint64.
    with jax.enable_x64(True):
        words = tuple(x if w.is_static(x) else w.to_u64(x)
                      for x in (*h, final_tweak, first_block))
        n_lanes = max(jnp.shape(x)[0] for x in (*words, skip) if not isinstance(x, int))
        out_dtype = mapped_dtype(word_map, dtype, x64=x64)
        if n_lanes == 0:   # a vmap over no examples
            return jnp.zeros((0, n), out_dtype)
        t = tiling(n_lanes, n_blocks)
        per_block = _stream.elements_per_block(dtype)
        # The nested vmaps' axes are the buffer's leading axes on one device (see below).
        grid = tuple(folded) if folded and math.prod(folded) == n_lanes else (n_lanes,)
        parts_cut = (t.parts * t.part_blocks * per_block != n
                     or not isinstance(skip, int) or skip != 0)
        long_lanes = t.parts > 1 and (n > _chunks.CPU_CHUNK_BLOCKS * per_block or parts_cut)
        if long_lanes and _chunks.flat_buffer():
            # Long lanes on one device: the one-stream chunk loop, a piece of one lane a step,
            # writes exactly the windows in place (tiles of parts are cut to the windows in a
            # copy where parts do not split a lane, or at a traced offset), and a one-word
            # sampler's map can run after it on all cores.
            return _chunks.chunked_in_place(words[:4], words[4], words[5], skip, n, dtype,
                                            word_map=word_map, x64=x64, lanes=grid)
        after = _maps_after_loop(t, n_lanes, n, dtype, word_map, out_dtype)
        writes = _chunks.LoopWrites(word_map, dtype, out_dtype, after=after, x64=x64)
        # Whole lanes on one device go in consecutive tiles, the last of a run overlapping the
        # one before it: no lane is padded, so no copy of the output cuts the padding off, and
        # the buffer can have the final shape, the nested vmaps' axes included.
        consecutive = t.parts == 1 and _chunks.flat_buffer()

        def per_lane(x):  # grid column: one value per lane (or shared), shared by its parts
            if x.shape[0] == 1 or consecutive:
                return x[:, None]
            return _lanes.pad_lanes(x, t.padded_lanes)[:, None]

        cells = {"words": {i: per_lane(x) for i, x in enumerate(words) if not w.is_static(x)}}
        if t.parts == 1:
            # Whole lanes: each tile cuts its lanes' windows, so the output needs no cut.
            if not isinstance(skip, int):
                cells["skip"] = per_lane(skip)
            out_cell = n
        else:
            cells["part_first"] = jnp.asarray(np.arange(t.parts, dtype=np.uint64)
                                              * np.uint64(t.part_blocks))[None, :]
            out_cell = t.part_blocks * per_block

        def cell(tile):
            # Consecutive tiles are boxes of the lane grid, of up to lanes_per_tile lanes.
            lanes_here = (max(x.shape[0] for x in jax.tree_util.tree_leaves(tile))
                          if consecutive else t.lanes_per_tile)
            cell_shape = (lanes_here, t.parts_per_tile)
            *h, final_tweak, first_block = (tile["words"].get(i, x) for i, x in enumerate(words))
            if "part_first" in tile:
                first_block = w.add(first_block, tile["part_first"])
            blocks = _cell_blocks(cell_shape, h, final_tweak, first_block, t.part_blocks,
                                  dtype)
            # Cut before the map: a sampler's map costs per element, and a lane's blocks can
            # hold many more words than it draws (a per-example scalar normal mapped all 8
            # words of its block: benchmarks/README.md, "Constants of the CPU lowering").
            if t.parts == 1:
                blocks = _cut_rows(blocks, tile.get("skip", skip), n)
            return writes.values(blocks)

        if consecutive:
            out = _lanes.in_consecutive_tiles(
                cell, cells, lanes_per_tile=t.lanes_per_tile,
                out_shape=(*grid, *(word_map.shape if after else (n,))), lane_axes=len(grid),
                dtype=writes.buffer_dtype)
            return writes.result(out).reshape(n_lanes, n)
        out = _lanes.in_strided_tiles(cell, cells,
                                      tile_shape=(t.lanes_per_tile, t.parts_per_tile),
                                      out_cell=jax.ShapeDtypeStruct((out_cell,),
                                                                    writes.buffer_dtype))
        if t.parts == 1:
            rows = out.reshape(t.padded_lanes, n)
            rows = rows if t.padded_lanes == n_lanes else rows[:n_lanes]
        else:
            rows = _cut_rows(out.reshape(n_lanes, -1), skip, n)
        return writes.result(rows)
