"""A window of a stream, lowered per platform: the one entry point to the stream's lowerings.

On a CPU the rolled cipher over cache-sized chunks (:mod:`._chunks`), where a ``vmap`` of a
window (nested or not) runs over all the examples as lanes (:mod:`._stream_lanes`);
elsewhere the elementwise lowering (:mod:`._elementwise`). Chosen when the program is lowered
(:func:`._platform.by_platform`); the bits are the same either way.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

import jax
import jax.numpy as jnp

from jaxpmac._cipher import _words as w
from jaxpmac._cipher._stream import elements_per_block
from jaxpmac._lowering import _chunks, _elementwise, _lanes, _stream_lanes, _tpu_kernel
from jaxpmac._lowering._platform import (KERNEL_LOWERING, by_platform, dynamic_part, in_kernel,
                                         with_dynamic)
from jaxpmac._lowering._word_maps import map_words, mapped_dtype

def stream_window(h: Sequence[w.Word], final_tweak: w.Word, first_block: w.Word, skip,
                  n: int, n_blocks: int, dtype, *, native: bool, word_map=None,
                  shape: tuple[int, ...] | None = None, stride: int = 1,
                  halves: bool = False) -> jax.Array:
    """Stream elements ``skip .. skip + n - 1`` of blocks ``first_block ..``, flat ``[n]``;
    ``shape`` is the shape the caller gives them (default ``[n]``), in which the elementwise
    lowering computes them (a TPU would copy a flat array into a 2-D layout). ``stride``: every
    ``stride``-th element from ``skip`` instead, in the kernel lowering only (a kernel cannot
    slice a contiguous window with a stride; elsewhere that slice is the cheaper form).
    ``halves`` (kernel lowering only, ``dtype`` uint64): the ``(low, high)`` uint32 halves of
    each word, a pair of flat arrays (a kernel has no 64-bit type).

    Arguments as for :func:`counter_stream`; ``skip`` is a static int or an int32 scalar, and
    the ``n_blocks`` blocks from ``first_block`` must hold the elements.

    The lowering is chosen per platform when the program is lowered (``_lowering``): on a CPU
    the rolled cipher over cache-sized chunks, where a ``vmap`` of this function (nested or
    not) runs over all the examples as lanes (``_stream_lanes.lanes_window``), a tile of
    blocks at a time (``vmap`` of the one-stream loop would hold the loop's words for every
    block of every example at once, next to the output); elsewhere the elementwise lowering
    (``_lowering._elementwise``), whose ``vmap`` is elementwise too. The bits are the same
    either way.

    ``word_map`` (a ``_unit.WordMap``, or None) maps the elements where they are made, chunk by
    chunk or tile by tile on a CPU, so that a sampler's output is the only long array.
    """
    x64 = w.x64_enabled()
    shape = (n,) if shape is None else tuple(shape)
    out_dtype = mapped_dtype(word_map, dtype, x64=x64)
    if n == 0:
        return jnp.zeros((0,), out_dtype)
    values = (*h, final_tweak, first_block, skip)
    window = dict(n=n, n_blocks=n_blocks, dtype=dtype, word_map=word_map, x64=x64)

    def one(dynamic):
        *h, final_tweak, first_block, skip = with_dynamic(values, dynamic)
        return _chunks.one_window(tuple(h), final_tweak, first_block, skip, native=native, **window)

    def lanes(dynamic, *, folded):
        *h, final_tweak, first_block, skip = with_dynamic(values, dynamic)
        return _stream_lanes.lanes_window(tuple(h), final_tweak, first_block, skip,
                                          folded=folded, **window)

    def rolled(dynamic):
        return _lanes.batched_by_lanes(one, lanes)(dynamic) if dynamic else one(dynamic)

    def elementwise(lowering: str):
        # On uint64 words for GPUs; on uint32 pairs for TPUs and inside kernels.
        wide = lowering == "elementwise"

        def elementwise_window(dynamic):
            *h, final_tweak, first_block, skip = with_dynamic(values, dynamic)
            if (wide and word_map is not None
                    and _elementwise.maps_words(word_map, dtype, out_dtype, n)):
                # A GPU's mapped window: one cipher per block, its words mapped where they are.
                return _elementwise.mapped_window(h, final_tweak, first_block, skip, n=n,
                                                  dtype=dtype, word_map=word_map,
                                                  out_dtype=out_dtype)
            if lowering == "elementwise_pairs" and _tpu_kernel.applies(shape, dtype, skip):
                # A TPU's uint32 window: one cipher per block, in a kernel, a small window's
                # map too; under vmap, a small window stays elementwise (the kernel would
                # compute whole steps for every example).
                kernel_map = (word_map if _tpu_kernel.maps_in_kernel(word_map, n, x64=x64)
                              else None)
                kernel = partial(kernel_words, kernel_map=kernel_map)
                words = (kernel if n >= _tpu_kernel.MIN_VMAPPED_ELEMENTS or not dynamic
                         else _lanes.vmapped_as(kernel, partial(mapped_stream_words,
                                                                kernel_map=kernel_map)))(dynamic)
                after = None if kernel_map else word_map
            else:
                words, after = stream_words(dynamic), word_map
            # Flat like the rolled lowering's; XLA folds this reshape into the caller's.
            return map_words(after, words, x64=x64).reshape(n)

        def kernel_words(dynamic, *, kernel_map):
            # The kernel's words, or its values of kernel_map (None: the words).
            *h, final_tweak, first_block, skip = with_dynamic(values, dynamic)
            return _tpu_kernel.stream_window(h, final_tweak, first_block, shape=shape, skip=skip,
                                             word_map=kernel_map)

        def mapped_stream_words(dynamic, *, kernel_map):
            # What kernel_words gives, elementwise.
            return map_words(kernel_map, stream_words(dynamic), x64=x64)

        def stream_words(dynamic):
            # The stream itself (no word_map: the bits): one cipher per block, see there.
            *h, final_tweak, first_block, skip = with_dynamic(values, dynamic)
            return _elementwise.stream_window(h, final_tweak, first_block, skip, shape=shape,
                                              dtype=dtype, wide=wide,
                                              whole_blocks=word_map is None, stride=stride,
                                              halves=halves)
        return elementwise_window if not halves else stream_words

    if stride != 1 or halves:
        if not in_kernel():
            raise ValueError("a strided stream window or one of halves is the kernel "
                             "lowering's only, but was asked for outside "
                             "force_lowering('kernel')")
        if halves:
            return tuple(half.reshape(n) for half in
                         elementwise(KERNEL_LOWERING)(dynamic_part(values)))
        return elementwise(KERNEL_LOWERING)(dynamic_part(values))
    return by_platform(dynamic_part(values), rolled=rolled,
                       elementwise=elementwise("elementwise"),
                       elementwise_pairs=elementwise("elementwise_pairs"),
                       kernel=elementwise(KERNEL_LOWERING),
                       result=jax.ShapeDtypeStruct((n,), out_dtype))


def counter_stream(h: Sequence[w.Word], final_tweak: int, first_block: w.Word, n_blocks: int,
                   dtype, *, native: bool) -> jax.Array:
    """Stream elements of blocks ``first_block .. first_block + n_blocks - 1``, flat.

    ``h`` is the message hash (static ints or dynamic scalar words), ``final_tweak`` the tweak
    word ``f`` (static, or a dynamic scalar word for ``jaxpmac.prng_impl`` keys, whose final
    tweak depends on a traced word count), ``first_block`` a static int or dynamic 64-bit word.
    Batched by lanes under ``vmap`` (see :func:`stream_window`).
    """
    return stream_window(h, final_tweak, first_block, 0, n_blocks * elements_per_block(dtype),
                         n_blocks, dtype, native=native)
