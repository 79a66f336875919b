"""The CPU lowering of a stream window: the rolled cipher over cache-sized chunks, in place.

Executes a :class:`._cpu_plan.CpuPlan` (which decides everything here: the buffer, the map's
placement, the chunks' boxes and cuts): a window of ``n`` elements is made in chunks, each
encrypted by the rolled cipher (a loop over rounds) and written in place into one buffer of the
draw's values (one device) or into rows of a 2-D buffer (several devices). A sampler's map of
the words runs chunk by chunk, or after the loop in one pass on every core.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxpmac._cipher import _words as w
from jaxpmac._cipher._stream import elements_per_block
from jaxpmac._lowering import _cpu_plan, _lanes
from jaxpmac._lowering._rolled import cut, stream_blocks
from jaxpmac._lowering._word_maps import map_words, mapped_dtype


def window_of(n: int, n_blocks: int, dtype, skip, word_map, out_dtype, *,
              lanes: int | None = None,
              folded: tuple[int, ...] | None = None) -> _cpu_plan.Window:
    """The plain values a plan is made of (:class:`._cpu_plan.Window`) for a window of the
    stream: ``skip`` a static int or traced, ``word_map`` a ``_unit.WordMap`` or None mapping
    words of ``dtype`` to values of ``out_dtype``."""
    return _cpu_plan.Window(
        n=n, n_blocks=n_blocks, per_block=elements_per_block(dtype),
        skip=skip if isinstance(skip, int) else None,
        map_keeps_width=(word_map is not None
                         and jnp.dtype(out_dtype).itemsize == jnp.dtype(dtype).itemsize),
        map_shape=None if word_map is None else word_map.shape, lanes=lanes, folded=folded)


@dataclasses.dataclass(frozen=True)
class LoopWrites:
    """What a loop that makes words of ``dtype`` writes into its in-place buffer, and how the
    buffer becomes the result (the chunk loop here, the tile loops of ``_stream_lanes``).

    With the map after the loop (``after``: the plan's ``map_placement``), the raw words,
    bitcast to the values' type ``out_dtype`` so that the map runs in place; else the mapped
    values, in the buffer's type (``_lanes.buffer_dtype``: bfloat16 is kept as its uint16 bits).
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
    """The CPU lowering of stream elements ``skip .. skip + n - 1`` of ``n_blocks`` blocks, as
    :func:`._cpu_plan.plan` lays it out: the blocks at once where one chunk holds them, else a
    loop over chunks, each written in place into one buffer of exactly ``n`` values (flat, or
    in the output's shape: :func:`chunked_in_place`), or rows of a 2-D one. Computes on
    ``uint64`` words, with x64 on (a native draw, or :func:`chunked_via_uint64`)."""
    out_dtype = mapped_dtype(word_map, dtype, x64=x64)
    plan = _cpu_plan.current(window_of(n, n_blocks, dtype, skip, word_map, out_dtype))
    if plan.loop == "none":
        return map_words(word_map, cut(stream_blocks(h, final_tweak, first_block, n_blocks,
                                                     dtype), skip, n), x64=x64)
    if plan.buffer == "rows":
        chunk = plan.chunks.blocks
        writes = LoopWrites(word_map, dtype, out_dtype, after=False, x64=x64)

        def chunk_of_blocks(start):
            return writes.values(stream_blocks(
                h, final_tweak, w.add(first_block, start), chunk, dtype))

        starts = lax.iota(jnp.uint64, plan.chunks.boxes.count) * np.uint64(chunk)
        return writes.result(cut(lax.map(chunk_of_blocks, starts).reshape(-1), skip, n))
    return chunked_in_place(plan, h, final_tweak, first_block, skip, n, dtype,
                            word_map=word_map, x64=x64)


def chunked_in_place(plan: _cpu_plan.CpuPlan, h, final_tweak, first_block, skip, n: int,
                     dtype, *, word_map, x64: bool) -> jax.Array:
    """The one-device chunk loop of ``plan`` (``plan.loop == "chunks"`` into a flat buffer), of
    one stream or of many at once.

    With lanes (``plan.lanes``, ``L`` lanes in all: see ``_lanes.batched_by_lanes``), each
    dynamic word (``uint64``, x64 on) and ``skip`` has a leading lane axis of ``L`` or 1
    (shared), the buffer is ``[*lanes, ...]``, the result ``[L, n]``, and a chunk is a piece
    of one lane, its words picked by index (``_stream_lanes`` runs long lanes this way on one
    device).
    """
    per_block = elements_per_block(dtype)
    out_dtype = mapped_dtype(word_map, dtype, x64=x64)
    lead = plan.lanes
    n_lanes = math.prod(lead)
    chunks = plan.chunks
    boxes = chunks.boxes
    writes = LoopWrites(word_map, dtype, out_dtype, after=plan.map_placement == "after",
                        x64=x64)
    stream_outers, inner, axis_values = chunks.stream_outers, chunks.inner, chunks.axis_values

    def chunk_values(first, lane):
        """The values of elements ``first .. first + chunks.values - 1`` of the window (of
        lane ``lane``)."""
        *h_, final_tweak_, first_block_, skip_ = (
            x if lane is None or w.is_static(x) else x[0] if x.shape[0] == 1 else x[lane]
            for x in (*h, final_tweak, first_block, skip))
        position = first + np.uint64(skip_) if isinstance(skip_, int) else (
            first + skip_.astype(jnp.uint64))
        start = position // np.uint64(per_block)
        words = stream_blocks(tuple(h_), final_tweak_, w.add(first_block_, start),
                              chunks.blocks, dtype)
        if chunks.cut != "none":
            words = _cut_chunk(words, position % np.uint64(per_block), chunks)
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
        (*h, final_tweak, first_block), plan.buffer_shape, writes.buffer_dtype)))
    return out.reshape(n_lanes, n) if lead else out.reshape(n)


def _cut_chunk(stream: jax.Array, skip: jax.Array, chunks: _cpu_plan.Chunks) -> jax.Array:
    """The chunk's values out of the blocks ``stream`` that hold them, from element ``skip``
    (traced), as ``chunks.cut`` says: a slice at the one possible start, a pick of the slices
    at the two possible ones, or a slice at ``skip``."""
    n, skips = chunks.values, chunks.skips
    if chunks.cut == "static":
        return stream[skips[0]:skips[0] + n]
    if chunks.cut == "dynamic":
        return lax.dynamic_slice_in_dim(stream, skip.astype(jnp.int32), n)
    first, other = (stream[start:start + n] for start in skips)
    return lax.select(skip == np.uint64(skips[1]), other, first)


def chunked_via_uint64(h, final_tweak, first_block, skip, n, n_blocks, dtype, *, word_map,
                        x64):
    # Pair words cost ~3x the native ones on a CPU (a 64-bit add is five 32-bit ops and a
    # rotation six, against one or two), so with x64 off
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
