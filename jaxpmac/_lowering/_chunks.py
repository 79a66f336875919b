"""The CPU lowering of a stream window: the rolled cipher over cache-sized chunks, in place.

A window of ``n`` elements is made in chunks of :func:`chunk_blocks` blocks, each encrypted by
the rolled cipher (a loop over rounds) and written in place into one buffer of the draw's
values (one device) or into rows of a 2-D buffer (several devices: see :func:`flat_buffer`). A
sampler's map of the words runs chunk by chunk, or after the loop in one pass on every core
(:func:`map_after_loop`).
"""

from __future__ import annotations

import dataclasses
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _words as w
from jaxpmac._cipher._stream import elements_per_block
from jaxpmac._lowering import _lanes
from jaxpmac._lowering._rolled import cut, stream_blocks
from jaxpmac._lowering._word_maps import map_words, mapped_dtype

# Blocks per step of the CPU lowering: the cipher's four uint64 words of state for 4096 blocks
# (128 KiB) stay in the L2 cache across the five injection groups, where whole-array passes
# would stream every group through memory; larger chunks leave the cache (benchmarks/README.md,
# "Constants of the CPU lowering").
CPU_CHUNK_BLOCKS = 4096
# Smaller draws take smaller chunks (chunk_blocks), down to this: from 512 blocks down the
# cipher runs two rounds a step instead of four (_rolled.rounds_per_step), more steps.
MIN_CPU_CHUNK_BLOCKS = 1024


def chunk_blocks(n_blocks: int) -> int:
    """Blocks per chunk of the CPU chunk loop for a draw of ``n_blocks`` blocks in all.

    ``CPU_CHUNK_BLOCKS``, or for small draws the largest power of two at most a sixth of the
    draw (not under ``MIN_CPU_CHUNK_BLOCKS``). Why: a chunk's working set, its four words and
    their next values, is several times the 32 bytes of output a block, so a full-size chunk
    would dominate the peak memory of a small draw; a chunk of at most a sixth of the draw
    keeps it a small part of the peak, at no cost in time (benchmarks/README.md, "Constants of
    the CPU lowering").
    """
    sixth = max(n_blocks // 6, MIN_CPU_CHUNK_BLOCKS)
    return min(CPU_CHUNK_BLOCKS, 1 << (sixth.bit_length() - 1))



# One-word maps (a sampler's function of each stream word) on draws of at least this many
# elements run as their own pass after the chunk loop instead of inside it (see
# map_after_loop). Below it the pass's own overhead outweighs a second core
# (benchmarks/README.md, "Constants of the CPU lowering").
MAP_AFTER_LOOP_MIN_ELEMENTS = 1 << 17


# What force_cpu_layout forces, as (buffer, map_placement). A JAX user context, so it is part
# of JAX's trace and compilation cache keys: a function traced under one layout is retraced
# under another.
_FORCED_LAYOUT = jax.make_user_context(default_value=(None, None))
BUFFERS = ("flat", "rows")
MAP_PLACEMENTS = ("after", "in_loop")


def force_cpu_layout(*, buffer: str | None = None, map_placement: str | None = None):
    """A context in which the CPU lowering's chunk and tile loops use the given layout.

    Only speed and memory change, never a value; this is how the tests check that every
    layout gives the same values on any machine (the layouts are otherwise chosen from the
    device count, the host's cores and the draw's size).

    Args:
        buffer: ``"flat"`` (one buffer of the draw's values: one device) or ``"rows"`` (rows
            of a 2-D buffer, as with several devices), or None (by device count).
        map_placement: ``"after"`` (a sampler's map runs after the loop, where it can: a map
            whose values are as wide as its words, on a flat buffer) or ``"in_loop"``, or None
            (by draw size and cores).

    Example:
        >>> import numpy as np, jaxpmac as jp
        >>> from jaxpmac._lowering._chunks import force_cpu_layout
        >>> with force_cpu_layout(buffer="rows", map_placement="in_loop"):
        ...     rows = jp.normal(jp.key(0), (70000,))
        >>> bool(np.array_equal(rows, jp.normal(jp.key(0), (70000,))))
        True
    """
    if buffer not in (*BUFFERS, None):
        raise ValueError(f"force_cpu_layout buffer accepts one of {BUFFERS} or None, but was "
                         f"given {buffer!r}")
    if map_placement not in (*MAP_PLACEMENTS, None):
        raise ValueError(f"force_cpu_layout map_placement accepts one of {MAP_PLACEMENTS} or "
                         f"None, but was given {map_placement!r}")
    return _FORCED_LAYOUT((buffer, map_placement))


def _host_cores() -> int:
    """CPUs this process may run on: the size of XLA's CPU thread pool."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def flat_buffer() -> bool:
    """Whether the chunk loop writes into one buffer of the draw's values (flat, or the
    output's shape: :func:`chunked_in_place`), else into rows of a 2-D one.

    Why: a buffer of the draw's own shape is what lets a map after the loop run in place, and
    lets the last chunk end where the draw ends (no padding, no copy to cut it); XLA reuses a
    buffer only for an elementwise result of the same shape and element type, and fuses the
    reshape of a 2-D buffer of rows into the map. But XLA's SPMD partitioner all-gathers a
    write at a dynamic offset of a sharded buffer, while it splits rows of a 2-D one without
    collectives; a program is only partitioned when there are several devices.
    """
    forced, _ = _FORCED_LAYOUT.value
    if forced is not None:
        return forced == "flat"
    return jax.device_count() == 1


def map_after_loop(word_map, dtype, out_dtype, n: int, *,
                   min_elements: int | None = None) -> bool:
    """Whether a loop that makes ``n`` words of ``dtype`` writes them raw and ``word_map`` runs
    after it, in one pass (the chunk loop here, the tile loop of ``_stream_lanes``).

    Why: XLA's CPU backend spreads a large elementwise pass over its threads, but never a
    kernel that writes into a buffer in place (a ``dynamic-update-slice``), which is where a
    map applied chunk by chunk ends up, so it runs on one core. After the loop it runs on all
    of them, in place when the map's values are as wide as its words (the loop writes the
    words bitcast to the values' type) and the loop's buffer has the shape of the pass's
    result (one device: see :func:`flat_buffer`; the callers see to the shape).
    ``out_dtype`` is the map's value type (:func:`mapped_dtype`); ``min_elements`` the
    smallest draw that gains (default :data:`MAP_AFTER_LOOP_MIN_ELEMENTS`).
    """
    in_place = (word_map is not None and flat_buffer()
                and jnp.dtype(out_dtype).itemsize == jnp.dtype(dtype).itemsize)
    _, forced = _FORCED_LAYOUT.value
    if forced is not None:
        return in_place and forced == "after"
    if min_elements is None:
        min_elements = MAP_AFTER_LOOP_MIN_ELEMENTS
    return in_place and n >= min_elements and _host_cores() > 1


@dataclasses.dataclass(frozen=True)
class LoopWrites:
    """What a loop that makes words of ``dtype`` writes into its in-place buffer, and how the
    buffer becomes the result (the chunk loop here, the tile loops of ``_stream_lanes``).

    With the map after the loop (``after``: :func:`map_after_loop`), the raw words, bitcast to
    the values' type ``out_dtype`` so that the map runs in place; else the mapped values, in
    the buffer's type (``_lanes.buffer_dtype``: bfloat16 is kept as its uint16 bits).
    """

    word_map: object
    dtype: np.dtype
    out_dtype: np.dtype
    after: bool
    x64: bool

    @property
    def buffer_dtype(self) -> np.dtype:
        return self.out_dtype if self.after else _lanes.buffer_dtype(self.out_dtype)

    def values(self, words: jax.Array) -> jax.Array:
        """The buffer's elements for ``words``."""
        if self.after:
            return lax.bitcast_convert_type(words, self.out_dtype)
        return _lanes.to_buffer(map_words(self.word_map, words, x64=self.x64))

    def result(self, buffer: jax.Array) -> jax.Array:
        """The values held in a final buffer (after any cut of it)."""
        if self.after:
            return map_words(self.word_map, lax.bitcast_convert_type(buffer, self.dtype),
                             x64=self.x64)
        return _lanes.from_buffer(buffer, self.out_dtype)


def chunked(h, final_tweak, first_block, skip, n, n_blocks, dtype, *, word_map, x64):
    """The CPU lowering of stream elements ``skip .. skip + n - 1`` of ``n_blocks`` blocks: a
    loop over chunks of :func:`chunk_blocks` blocks' worth of elements, each written in place
    into one buffer of exactly ``n`` values (flat, or in the output's shape: see
    :func:`flat_buffer`), or rows of a 2-D one. Computes on ``uint64`` words, with x64 on
    (a native draw, or :func:`chunked_via_uint64`)."""
    per_block = elements_per_block(dtype)
    chunk = chunk_blocks(n_blocks)
    if n <= chunk * per_block:
        words = stream_blocks(h, final_tweak, first_block, n_blocks, dtype)
        return map_words(word_map, cut(words, skip, n), x64=x64)
    if not flat_buffer():
        n_chunks = -(-n_blocks // chunk)
        writes = LoopWrites(word_map, dtype, mapped_dtype(word_map, dtype, x64=x64),
                            after=False, x64=x64)

        def chunk_of_blocks(start):
            return writes.values(stream_blocks(
                h, final_tweak, w.add(first_block, start), chunk, dtype))

        starts = lax.iota(jnp.uint64, n_chunks) * np.uint64(chunk)
        return writes.result(cut(lax.map(chunk_of_blocks, starts).reshape(-1), skip, n))

    return chunked_in_place(h, final_tweak, first_block, skip, n, dtype, word_map=word_map,
                            x64=x64)


def chunked_in_place(h, final_tweak, first_block, skip, n: int, dtype, *, word_map, x64: bool,
                     lanes: tuple[int, ...] = ()) -> jax.Array:
    """The one-device chunk loop of :func:`chunked`, or of many streams at once.

    With ``lanes`` (the lanes' axes, ``L`` lanes in all: see ``_lanes.batched_by_lanes``),
    each dynamic word (``uint64``, x64 on) and ``skip`` has a leading lane axis of ``L`` or 1
    (shared), the buffer is ``[*lanes, ...]``, the result ``[L, n]``, and a chunk is a piece
    of one lane, its words picked by index (``_stream_lanes`` runs long lanes this way on one
    device).
    """
    per_block = elements_per_block(dtype)
    out_dtype = mapped_dtype(word_map, dtype, x64=x64)
    lead = tuple(lanes)
    n_lanes = math.prod(lead)
    chunk_elements = chunk_blocks(-(-n * n_lanes // per_block)) * per_block

    # A map after the loop runs in place only on a buffer of the shape its caller gives the
    # values (see _unit.WordMap), so there the loop keeps its buffer in that shape, and writes
    # each chunk as a box of it (see _lanes.chunk_box). (A chunk written into a flat view of
    # such a buffer made XLA copy the whole buffer on every step.)
    after = map_after_loop(word_map, dtype, out_dtype, n * n_lanes)
    shape = (*lead, n)
    if after and word_map.shape is not None and math.prod(word_map.shape) == n:
        shape = (*lead, *word_map.shape)
    writes = LoopWrites(word_map, dtype, out_dtype, after=after, x64=x64)
    # A box never spans lanes: it is a box of one lane's shape.
    axis, box_length = _lanes.chunk_box(shape[len(lead):], chunk_elements, per_block,
                                        runs=n_lanes)
    boxes = _lanes.Boxes(shape, axis + len(lead), box_length)
    # Runs of boxes within one stream: the axes before the box's, but for the lanes'.
    stream_outers = math.prod(shape[len(lead):boxes.axis])
    values_per_chunk = math.prod(boxes.box)
    inner = math.prod(shape[boxes.axis + 1:])       # values per index of the box's axis
    axis_values = shape[boxes.axis] * inner         # values per index of the axes before it

    # Chunks whose values start and end on block boundaries are whole blocks. Any other chunk
    # is cut out of the blocks that hold it (a slice fused into the chunk's write): cutting the
    # whole stream after the loop was a copy of the output for every size that is not a
    # multiple of a block (benchmarks/README.md, "Constants of the CPU lowering").
    offsets = (values_per_chunk, boxes.last_start * inner,
               axis_values if stream_outers > 1 else 0)
    whole = (isinstance(skip, int) and skip == 0
             and all(offset % per_block == 0 for offset in offsets))
    blocks_per_chunk = (values_per_chunk // per_block if whole
                        else -(-(values_per_chunk + per_block - 1) // per_block))
    # The elements a chunk skips in its first block, where they can be known at trace time:
    # chunks at the same offset from a block boundary cut their blocks alike.
    skips = None
    if isinstance(skip, int):
        outers = range(min(stream_outers, per_block))
        starts = [*range(0, min(boxes.per_run - 1, per_block) * box_length, box_length),
                  boxes.last_start]
        skips = sorted({(outer * axis_values + start * inner + skip) % per_block
                        for outer in outers for start in starts})

    def chunk_values(first, lane):
        """The values of elements ``first .. first + values_per_chunk - 1`` of the window (of
        lane ``lane``)."""
        *h_, final_tweak_, first_block_, skip_ = (
            x if lane is None or w.is_static(x) else x[0] if x.shape[0] == 1 else x[lane]
            for x in (*h, final_tweak, first_block, skip))
        position = first + np.uint64(skip_) if isinstance(skip_, int) else (
            first + skip_.astype(jnp.uint64))
        start = position // np.uint64(per_block)
        words = stream_blocks(tuple(h_), final_tweak_, w.add(first_block_, start),
                              blocks_per_chunk, dtype)
        if not whole:
            words = _cut_chunk(words, position % np.uint64(per_block), skips, values_per_chunk)
        return writes.values(words)

    def one_chunk(i, out):
        # Along the box's axis, the last box ends where the axis ends, overlapping the one
        # before it with the same values.
        outer, start, index = boxes.at(jnp.asarray(i).astype(jnp.uint64))  # int: disable_jit
        lane = outer // np.uint64(stream_outers) if lead else None
        first = (outer % np.uint64(stream_outers) * np.uint64(axis_values)
                 + start * np.uint64(inner))
        return lax.dynamic_update_slice(out, chunk_values(first, lane).reshape(boxes.box),
                                        index)

    # Under shard_map the buffer must vary over the mesh axes like the words written into it.
    out = writes.result(lax.fori_loop(0, boxes.count, one_chunk, w.zeros_varying_with(
        (*h, final_tweak, first_block), shape, writes.buffer_dtype)))
    return out.reshape(n_lanes, n) if lead else out.reshape(n)


def _cut_chunk(stream: jax.Array, skip: jax.Array, skips, n: int) -> jax.Array:
    """Elements ``skip .. skip + n - 1`` of a chunk's stream; ``skip`` is traced, ``skips``
    all the values it can take (known at trace time), or None.

    Why not always a slice at ``skip``: of 8-bit elements, XLA emits that slice element by
    element, while slices at static starts are vectorised. With one possible start, or two (a
    draw of whole rows: the chunks' and the last chunk's), the cut is such slices. (Two slices
    of wider elements made XLA write the stream out first, which was slower, so they keep the
    one slice at ``skip``: benchmarks/README.md, "Constants of the CPU lowering".)
    """
    if skips is not None and len(skips) == 1:
        return stream[skips[0]:skips[0] + n]
    if skips is None or len(skips) > 2 or stream.dtype.itemsize > 1:
        return lax.dynamic_slice_in_dim(stream, skip.astype(jnp.int32), n)
    first, other = (stream[start:start + n] for start in skips)
    return lax.select(skip == np.uint64(skips[1]), other, first)


def chunked_via_uint64(h, final_tweak, first_block, skip, n, n_blocks, dtype, *, word_map,
                        x64):
    # Pair words cost several times the native ones on a CPU (a 64-bit add is five 32-bit ops,
    # a rotation six; benchmarks/README.md, "Constants of the CPU lowering"), so with x64 off
    # the CPU lowering still runs the cipher on uint64 words: enabling x64 for this trace only
    # changes the element type inside the compiled program.
    # Inputs and outputs stay uint32 and the bits are those of the pair path (the cipher is one
    # function over both representations), so nothing outside can tell.
    with jax.enable_x64(True):
        h = tuple(x if w.is_static(x) else w.to_u64(x) for x in h)
        if not w.is_static(first_block):
            first_block = w.to_u64(first_block)
        if not w.is_static(final_tweak):
            final_tweak = w.to_u64(final_tweak)
        return chunked(h, final_tweak, first_block, skip, n, n_blocks, dtype,
                        word_map=word_map, x64=x64)


def one_window(h, final_tweak, first_block, skip, *, n, n_blocks, dtype, native, word_map,
                x64):
    """The rolled lowering of :func:`stream_window` of one stream (no lane axis): the
    lowering outside any ``vmap``."""
    mapping = dict(word_map=word_map, x64=x64)
    if native:
        return chunked(h, final_tweak, first_block, skip, n, n_blocks, dtype, **mapping)
    return chunked_via_uint64(h, final_tweak, first_block, skip, n, n_blocks, dtype, **mapping)
