"""Batching by an explicit lane axis: ``vmap`` hands its examples to one function over lanes.

``jax.vmap`` batches a function primitive by primitive, so every working array of the function
is live for all examples at once: a loop inside it (the CPU cipher is a ``lax.scan``) carries
its state for the whole batch next to the output. :func:`batched_by_lanes` gives a function a
``vmap`` rule (``jax.custom_batching.custom_vmap``) that instead calls a version written over an
explicit leading *lane* axis, one lane per example, and :func:`in_strided_tiles` lets that
version work through its lanes a tile at a time, so that only one tile's working arrays are
live.

Nothing here knows about ciphers: the stream code (``_window``, ``_stream_lanes``) supplies
both versions.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_batching import custom_vmap

from jaxpmac._cipher import _words as w


def _with_lane_axis(args, in_batched):
    """Every leaf of ``args`` with a leading lane axis: the vmapped axis where it is batched
    (``custom_vmap`` has already moved it to the front, whatever the ``in_axes``), else an
    axis of size 1, a value shared by every lane.

    Why not broadcast shared values: the lane function would then slice every lane's copy of
    them in every step (a state's words are often shared: only one word of ``k.split(i)``
    depends on ``i``, and a ``Pair``'s high half is often a constant).
    """
    return jax.tree_util.tree_map(lambda x, batched: x if batched else x[None], args,
                                  in_batched)


def _closing_over_nothing(fun: Callable) -> Callable:
    """``fun`` as one jitted call, jitted even under ``jax.disable_jit``: the constants its
    trace closes over (the cipher's tables) stay inside that call's program.

    Why: ``custom_vmap`` requires that the values its function closes over are not batched,
    and a ``lax.cond`` whose predicate ``vmap`` batches batches every operand of its branches.
    Under ``jax.disable_jit`` the draw's own ``jit`` is off, so without this the tables would
    be such operands.
    """
    jitted = jax.jit(fun)

    def call(args):
        with jax.disable_jit(False):
            return jitted(args)

    return call


def _folding_vmap(lanes: Callable, *, grid: tuple[int, ...] | None = None):
    """``lanes`` with a vmap rule that folds the vmapped axis into the lane axis: a batch of
    ``B`` sets of ``L`` lanes is one call over ``B * L`` lanes, so nested vmaps end in one call
    over all their examples. That call gets ``folded=(B, L)``, the nested vmaps' axis sizes
    (see :func:`batched_by_lanes`); ``grid``: those of the lanes this function is called with,
    or None for the lanes of one vmap."""
    folded = custom_vmap(_closing_over_nothing(lambda args: lanes(args, folded=grid)))

    @folded.def_vmap
    def rule(axis_size, in_batched, args):
        (in_batched,) = in_batched
        args = _with_lane_axis(args, in_batched)          # leaves [B or 1, L or 1, ...]
        n_lanes = max(x.shape[1] for x in jax.tree_util.tree_leaves(args))

        def fold(x):
            if x.shape[:2] == (1, 1):                      # shared by every lane
                return x[0]
            x = jnp.broadcast_to(x, (axis_size, n_lanes, *x.shape[2:]))
            return x.reshape(axis_size * n_lanes, *x.shape[2:])

        # A function with this rule again: under a further enclosing vmap it folds once more.
        inner = grid if grid is not None and math.prod(grid) == n_lanes else (n_lanes,)
        out = _folding_vmap(lanes, grid=(axis_size, *inner))(
            jax.tree_util.tree_map(fold, args))
        return out.reshape(axis_size, n_lanes, *out.shape[1:]), True

    return folded


def batched_by_lanes(single: Callable, lanes: Callable) -> Callable:
    """``single``, whose ``vmap`` (nested or not, any ``in_axes``) is one call of ``lanes``.

    Args:
        single: the unbatched computation: a function of one pytree of arrays returning an
            array. It is what runs outside any ``vmap``, unchanged.
        lanes: the same computation over an explicit lane axis: every leaf of its argument has
            a leading axis of ``L`` lanes, or of size 1 (a value shared by every lane), and row
            ``l`` of its ``[L, ...]`` result equals ``single`` of the leaves' rows ``l``. Its
            keyword ``folded`` is None for the lanes of one vmap, else the axis sizes of the
            nested vmaps whose examples the lanes are, outermost first (their product is
            ``L``): its result is reshaped to those axes afterwards (``[B, L', ...]``). XLA
            fuses such a reshape into whatever pass follows, and runs a pass in place only on
            a buffer of its result's shape, so ``lanes`` may build its result in that shape
            (reshaped to ``[L, ...]``, the reshapes cancel).

    Returns:
        A function of one pytree of arrays, equal to ``single``. Under ``vmap`` it calls
        ``lanes`` once with the examples of all the enclosing vmaps as lanes, outermost vmap
        axis first.
    """
    lanes = _folding_vmap(lanes)
    batched = custom_vmap(_closing_over_nothing(single))

    @batched.def_vmap
    def rule(axis_size, in_batched, args):
        (in_batched,) = in_batched
        return lanes(_with_lane_axis(args, in_batched)), True

    return batched


def vmapped_as(single: Callable, batched: Callable) -> Callable:
    """``single``, whose ``vmap`` (nested or not, any ``in_axes``) is the ``vmap`` of
    ``batched``: the same values, computed another way once there are examples.

    Args:
        single: the unbatched computation: a function of one pytree of arrays.
        batched: a function equal to ``single``, which is what ``vmap`` batches.
    """
    call = custom_vmap(_closing_over_nothing(single))

    @call.def_vmap
    def rule(axis_size, in_batched, args):
        (in_batched,) = in_batched
        in_axes = jax.tree.map(lambda is_batched: 0 if is_batched else None, in_batched)
        return jax.vmap(batched, in_axes=(in_axes,))(args), True

    return call


def buffer_dtype(dtype) -> np.dtype:
    """The element type in which a loop keeps its in-place buffer of ``dtype`` values:
    uint16 for bfloat16, else ``dtype``.

    Why: XLA's CPU backend computes on bfloat16 in float32, and its float normalization turns
    every bfloat16 write into a buffer, and every slice of one, into a conversion of the whole
    buffer to float32 and back: on every step of a loop, 10-20x slower than float16 or
    float32 draws (measure: ``python -m benchmarks.run --workloads uniform_bf16``). The callers
    bitcast values into the buffer (:func:`to_buffer`) and out of it once the buffer is final,
    after any cut (:func:`from_buffer`), so no bit changes. The cost: that last bitcast is a
    copy of the output, which float16 and float32 draws do not make.
    """
    dtype = jnp.dtype(dtype)
    return jnp.dtype(jnp.uint16) if dtype == jnp.bfloat16 else dtype


def to_buffer(values: jax.Array) -> jax.Array:
    """``values`` as the elements of a loop's buffer (:func:`buffer_dtype`)."""
    stored = buffer_dtype(values.dtype)
    return values if stored == values.dtype else lax.bitcast_convert_type(values, stored)


def from_buffer(buffer: jax.Array, dtype) -> jax.Array:
    """The ``dtype`` values held in a loop's buffer (:func:`buffer_dtype`)."""
    dtype = jnp.dtype(dtype)
    return buffer if buffer.dtype == dtype else lax.bitcast_convert_type(buffer, dtype)


def pad_lanes(x: jax.Array, n_lanes: int) -> jax.Array:
    """``x`` with copies of its last lane appended up to ``n_lanes`` lanes."""
    extra = n_lanes - x.shape[0]
    if extra == 0:
        return x
    return jnp.concatenate([x, jnp.broadcast_to(x[-1:], (extra, *x.shape[1:]))])


def in_consecutive_tiles(cell: Callable, cells, *, lanes_per_tile: int,
                         out_shape: tuple[int, ...], lane_axes: int = 1, dtype) -> jax.Array:
    """``cell`` over lanes, up to ``lanes_per_tile`` consecutive lanes per step, written as they
    come into a buffer of ``out_shape`` (``[*grid, ...]``: ``lane_axes`` axes of lanes, ``L``
    in all, in the order of the cells' lane axis), in place.

    A step's lanes are a box of the lane grid (:func:`chunk_box`): along the box's axis, the
    last box ends at the axis' end, overlapping the one before it with the same rows, so no
    lane is padded and no copy cuts the padding off.

    For one device only: a sharded output needs :func:`in_strided_tiles` (why: there). What it
    gives over those is the buffer's shape, any shape of ``L`` rows: an elementwise pass over
    the result then runs in place (and, outside the loop, on all cores).

    Args:
        cell: a lane-wise function of a pytree whose leaves have a leading axis of the step's
            lanes (or 1: shared), returning those lanes' rows of ``prod(out_shape[lane_axes:])``
            values in any shape.
        cells: a pytree of arrays with a leading axis of ``L`` lanes, or of size 1.
        lanes_per_tile: the most lanes per step.
        out_shape: the result's shape, ``[*grid, ...]``.
        lane_axes: how many leading axes of ``out_shape`` are lanes.
        dtype: the result's element type.
    """
    grid = out_shape[:lane_axes]
    boxes = Boxes(out_shape, *chunk_box(grid, lanes_per_tile))   # rows whole
    box_lanes = math.prod(boxes.box[:lane_axes])
    lanes_per_index = math.prod(grid[boxes.axis + 1:])          # of the box's axis
    leaves = jax.tree_util.tree_leaves(cells)

    def tile_of(x, first):
        if x.shape[0] == 1:
            return x
        return lax.dynamic_slice_in_dim(x, first, box_lanes)

    def step(s, out):
        outer, start, index = boxes.at(s)
        first = (outer * grid[boxes.axis] + start) * lanes_per_index
        rows = cell(jax.tree_util.tree_map(lambda x: tile_of(x, first), cells))
        return lax.dynamic_update_slice(out, rows.reshape(boxes.box), index)

    out = w.zeros_varying_with(leaves, out_shape, dtype)
    return lax.fori_loop(0, boxes.count, step, out)


def chunk_box(shape: tuple[int, ...], most: int, per_block: int = 1, *,
              runs: int = 1) -> tuple[int, int]:
    """``(k, m)``: the chunks of a loop that writes a buffer of ``shape`` in place are boxes
    ``(1, ..., 1, m, *shape[k + 1:])`` of at most ``most`` values (or the whole buffer, if it
    is smaller), the axes after ``k`` whole and ``shape[k]`` cut into runs of boxes, the last
    of a run overlapping the one before it. Where there is one run (``runs`` buffers of
    ``shape``, lanes, times the axes before ``k``), its boxes are as long as fits; else as even
    as they can be (less work overlapped in every run), rounded up to whole blocks of
    ``per_block`` values where that still fits. Boxes are more than a quarter of ``most``
    values.

    Example: ``(999, 999)``, 32768 and 8 give ``(0, 32)``: boxes ``(32, 999)``;
    ``(3, 40000)`` gives ``(1, 20000)``: two boxes a row.
    """
    k = len(shape) - 1
    while k > 0 and math.prod(shape[k:]) <= most:
        k -= 1
    inner = math.prod(shape[k + 1:])
    fits = most // inner
    if runs * math.prod(shape[:k]) == 1:   # one run: the largest boxes, the last overlapping
        return k, min(fits, shape[k])
    m = -(-shape[k] // -(-shape[k] // fits))
    align = per_block // math.gcd(inner, per_block)
    aligned = -(-m // align) * align
    return k, (aligned if aligned <= min(fits, shape[k]) else m)


@dataclasses.dataclass(frozen=True)
class Boxes:
    """The boxes ``(1, ..., 1, length, *shape[axis + 1:])`` that cover a buffer of ``shape``
    in row-major order (see :func:`chunk_box`), the last of each run along ``axis`` ending at
    the axis' end, overlapping the one before it."""

    shape: tuple[int, ...]
    axis: int
    length: int

    @property
    def box(self) -> tuple[int, ...]:
        return (1,) * self.axis + (self.length, *self.shape[self.axis + 1:])

    @property
    def per_run(self) -> int:
        """Boxes along ``axis`` for each index of the axes before it."""
        return -(-self.shape[self.axis] // self.length)

    @property
    def last_start(self) -> int:
        return self.shape[self.axis] - self.length

    @property
    def count(self) -> int:
        return math.prod(self.shape[:self.axis]) * self.per_run

    def at(self, i: jax.Array):
        """Box ``i`` (a traced integer): ``(outer, start, index)``, the flat index of its run
        (over the axes before ``axis``), its start along ``axis``, and the start indices of
        the box in the buffer, all of ``i``'s type."""
        i = jnp.asarray(i)   # a Python int under jax.disable_jit, where fori_loop is a loop
        def const(x):
            return np.asarray(x, i.dtype)

        outer = i // const(self.per_run)
        start = jnp.minimum(i % const(self.per_run) * const(self.length),
                            const(self.last_start))
        index = [start] + [jnp.zeros_like(start)] * (len(self.shape) - self.axis - 1)
        rest = outer
        for size in reversed(self.shape[:self.axis]):
            index.insert(0, rest % const(size))
            rest = rest // const(size)
        return outer, start, index


def _interleave(first, second) -> tuple:
    return tuple(x for pair in zip(first, second) for x in pair)


def in_strided_tiles(cell: Callable, cells, *, tile_shape: tuple[int, ...],
                     out_cell: jax.ShapeDtypeStruct) -> jax.Array:
    """``cell`` over a grid of cells, a strided tile of ``tile_shape`` cells per step.

    Args:
        cell: a cell-wise function (cell ``c`` of its result depends on cells ``c`` of the
            leaves only) of a pytree whose leaves have leading axes ``tile_shape`` (or 1),
            returning ``[*tile_shape, *out_cell.shape]``.
        cells: a pytree of arrays whose leading ``len(tile_shape)`` axes are the grid; an axis
            of size 1 holds a value shared along that grid axis, and stays of size 1 in the
            tiles ``cell`` gets (broadcasting is ``cell``'s to do).
        tile_shape: cells per step along each grid axis, dividing the grid's size there.
        out_cell: shape and dtype of one cell of ``cell``'s result.

    Returns:
        ``[*grid, *out_cell.shape]``: ``cell`` of every cell, in one call if the tile is the
        whole grid, else in a loop that holds one tile's working arrays at a time and writes
        each tile's cells into the output in place.

    A tile is strided: along an axis of ``n`` cells, ``t`` per tile, step ``s`` takes the cells
    ``g * (n // t) + s`` for ``g < t``. Why: a sharded output splits grid axes into
    consecutive blocks, and a strided tile spans them all, so that each device computes its
    own cells and no step writes another device's cells. Tiles of consecutive cells at a
    traced position make XLA's SPMD partitioner gather the whole output on every step (~500x
    slower with 8 CPU devices). The tile keeps the grid's
    axes (no flattening) for the same reason: a partitioner can split a tile axis only while it
    is an axis of its own.
    """
    rank = len(tile_shape)
    leaves = jax.tree_util.tree_leaves(cells)
    grid = tuple(max(x.shape[axis] for x in leaves) for axis in range(rank))
    steps = tuple(n // t for n, t in zip(grid, tile_shape))

    def tile_of(x, index):
        """The tile at step ``index`` of leaf ``x``: ``[*tile_shape (or 1), ...]``."""
        for axis, (t, n_steps, i) in enumerate(zip(tile_shape, steps, index)):
            if x.shape[axis] == 1:
                continue
            x = x.reshape(*x.shape[:axis], t, n_steps, *x.shape[axis + 1:])
            x = lax.dynamic_index_in_dim(x, i, axis=axis + 1, keepdims=False)
        return x

    if math.prod(steps) == 1:
        return cell(jax.tree_util.tree_map(lambda x: tile_of(x, (0,) * rank), cells))

    def step(t, out):
        t = jnp.asarray(t)   # a Python int under jax.disable_jit
        index = []
        for n_steps in reversed(steps):
            t, i = divmod(t, n_steps)
            index.insert(0, i)
        piece = cell(jax.tree_util.tree_map(lambda x: tile_of(x, index), cells))
        piece = piece.reshape(*_interleave(tile_shape, (1,) * rank), *out_cell.shape)
        zero = jnp.zeros_like(index[0])
        starts = (*_interleave((zero,) * rank, index), *(zero,) * len(out_cell.shape))
        return lax.dynamic_update_slice(out, piece, starts)

    out = w.zeros_varying_with(leaves, (*_interleave(tile_shape, steps), *out_cell.shape),
                              out_cell.dtype)
    out = lax.fori_loop(0, math.prod(steps), step, out)
    return out.reshape(*grid, *out_cell.shape)
