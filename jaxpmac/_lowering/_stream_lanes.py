"""Stream windows of many messages at once on a CPU: the lowering of a vmapped draw.

``vmap`` of the one-stream CPU lowering (``_chunks.chunked``) would run its cipher loop on every
block of every example at once, the loop's words for all of them live next to the output.
:func:`lanes_window` computes the same windows over an explicit axis of *lanes*, one per
example, as its :class:`._cpu_plan.CpuPlan` says (the plan decides; this module emits):

* tiles of about ``_cpu_plan.TILE_BLOCKS`` blocks at a time, each written into the output in
  place; their cells are whole lanes, or *parts* of lanes (equal ranges of consecutive blocks)
  where lanes are long. Strided tiles (``_lanes.in_strided_tiles``) span the devices of an
  output sharded by lanes, by elements or both: each device computes its own cells, with no
  collectives. Consecutive tiles (``_lanes.in_consecutive_tiles``, one device) build the result
  in its final shape, boxes of the nested vmaps' axes, so that the passes after it (a one-word
  sampler's map after the loop, on all cores; a scaling) run in place;
* or, for long lanes on one device, the one-stream chunk loop over lanes
  (``_chunks.chunked_in_place``), a piece of one lane a step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _stream
from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering import _chunks, _cpu_plan, _lanes
from jaxpmac._lowering._encrypt import encrypt_as
from jaxpmac._lowering._word_maps import mapped_dtype


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
        # round loop (the nesting workload of benchmarks.run: 2.75x its output's memory
        # instead of 3.25x, 5-15% faster).
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
        plan = _cpu_plan.current(_chunks.window_of(n, n_blocks, dtype, skip, word_map,
                                                   out_dtype, lanes=n_lanes, folded=folded))
        if plan.loop == "chunks":
            return _chunks.chunked_in_place(plan, words[:4], words[4], words[5], skip, n,
                                            dtype, word_map=word_map, x64=x64)
        return _tiles(plan, words, skip, n=n, n_lanes=n_lanes, dtype=dtype,
                      word_map=word_map, out_dtype=out_dtype, x64=x64)


def _tiles(plan: _cpu_plan.CpuPlan, words, skip, *, n: int, n_lanes: int, dtype, word_map,
           out_dtype, x64: bool) -> jax.Array:
    """The tile loop of ``plan`` (``plan.loop == "tiles"``) over the lanes' ``words`` (static
    ints, or ``uint64`` arrays ``[L]`` or ``[1]``): ``[L, n]``."""
    t = plan.tiling
    per_block = _stream.elements_per_block(dtype)
    writes = _chunks.LoopWrites(word_map, dtype, out_dtype,
                                after=plan.map_placement == "after", x64=x64)
    consecutive = plan.tile_order == "consecutive"

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
        blocks = _cell_blocks(cell_shape, h, final_tweak, first_block, t.part_blocks, dtype)
        # Cut before the map: a sampler's map costs per element, and a lane's blocks can
        # hold many more words than it draws (a per-example scalar normal would map all 8
        # words of its block).
        if t.parts == 1:
            blocks = _cut_rows(blocks, tile.get("skip", skip), n)
        return writes.values(blocks)

    if consecutive:
        out = _lanes.in_consecutive_tiles(
            cell, cells, lanes_per_tile=t.lanes_per_tile, out_shape=plan.buffer_shape,
            lane_axes=len(plan.lanes), dtype=writes.buffer_dtype)
        return writes.result(out).reshape(n_lanes, n)
    out = _lanes.in_strided_tiles(cell, cells,
                                  tile_shape=(t.lanes_per_tile, t.parts_per_tile),
                                  out_cell=jax.ShapeDtypeStruct((out_cell,),
                                                                writes.buffer_dtype))
    rows = out.reshape(plan.buffer_shape)
    if t.parts == 1:   # whole lanes' windows, and any padded lanes
        rows = rows if t.padded_lanes == n_lanes else rows[:n_lanes]
    else:              # the lanes' parts, cut to the windows
        rows = _cut_rows(rows, skip, n)
    return writes.result(rows)
